"""ecnsim.output.report, `ecnsim report`: one self-contained HTML page that renders in Chromium."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ecnsim import Results, Simulation, Table
from ecnsim.output.report import build_report, load_results

from .browser import browser
from .conftest import small_scenario

pytest.importorskip("matplotlib", reason="the report's figures need matplotlib (the plot extra)")

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    Simulation(small_scenario()).run().write_parquet(out)
    return out


# ---------------------------------------------------------------------------
# Reading a results directory
# ---------------------------------------------------------------------------


def test_load_results_round_trip(results_dir: Path) -> None:
    expected = Simulation(small_scenario()).run()
    loaded = load_results(results_dir)
    assert loaded.digest == expected.digest
    assert loaded.spec == expected.spec
    assert loaded.finished
    assert set(loaded.tables) == set(expected.tables)
    for name, table in expected.tables.items():
        got = loaded.table(name)
        assert got.column_names == table.column_names
        for col in table.column_names:
            a, b = table[col], got[col]
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)
            else:
                assert list(a) == list(b)
    assert loaded.meta["seed"] == expected.meta["seed"]


def test_load_results_rejects_other_directories(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"meta\.json"):
        load_results(tmp_path)


def test_a_study_folder_is_named_with_how_to_render_it_again(tmp_path: Path) -> None:
    """``ecnsim report`` on a ``study run --out`` folder names the study, its report and the
    command that renders it again (it once said only "not a results directory")."""
    (tmp_path / "study.json").write_text(json.dumps({"study": "hetero"}), encoding="utf-8")
    (tmp_path / "store" / "runs").mkdir(parents=True)
    with pytest.raises(FileNotFoundError) as e:
        load_results(tmp_path)
    text = str(e.value)
    assert "ecnsim study run hetero" in text
    assert str(tmp_path / "report.html") in text
    assert f"--out {tmp_path}" in text
    # The listing command it names is one the CLI takes.
    assert f"ecnsim runs --out {tmp_path / 'store'}" in text
    with pytest.raises(FileNotFoundError, match=r"`ecnsim runs --out "):
        load_results(tmp_path / "store", run="nope")


# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

_ATTR_URL = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)


def _check_self_contained(text: str) -> None:
    """Everything the page shows is inside it; links to the figure files beside it
    (``<report>-figures/figureNN.svg``: downloads, not resources) are allowed."""
    for url in _ATTR_URL.findall(text):
        if re.fullmatch(r"[\w.-]+-figures/figure\d+\.(png|svg|pdf)", url):
            continue
        assert url.startswith("data:"), f"external resource {url[:60]!r}"
    assert "@import" not in text
    assert "url(" not in text


def test_cli_report(cli: Cli, results_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = cli("report", results_dir, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert str(out) in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    _check_self_contained(text)
    spec = json.loads((results_dir / "meta.json").read_text())["resolved_spec"]
    # The scenario, its resolved parameters, the summary tables and the figures.
    assert f"<h1>{spec['name']}</h1>" in text
    assert "Resolved scenario" in text
    assert '"initial_rto": "1s"' in text.replace("&quot;", '"')
    assert "flow0" in text
    assert "flow1" in text
    assert "r1-&gt;r2" in text
    assert "Jain" in text
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]+)"', text)
    assert len(images) >= 3
    for data in images:
        png = base64.b64decode(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(png) > 5000


def test_cli_report_default_output_and_errors(cli: Cli, results_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(results_dir, copy)
    proc = cli("report", copy)
    assert proc.returncode == 0, proc.stderr
    assert (copy / "report.html").is_file()
    bad = cli("report", tmp_path / "missing")
    assert bad.returncode == 2
    assert "meta.json" in bad.stderr


def _with_column(results: Results, table: str, column: str, values: np.ndarray) -> Results:
    tables = dict(results.tables)
    cols = dict(tables[table].columns)
    cols[column] = values
    tables[table] = Table(table, cols)
    return Results(tables, results.meta, results.digest)


def _without_column(results: Results, table: str, column: str) -> Results:
    tables = dict(results.tables)
    cols = {k: v for k, v in tables[table].columns.items() if k != column}
    tables[table] = Table(table, cols)
    return Results(tables, results.meta, results.digest)


def test_report_uses_delivery_series_when_present(results_dir: Path) -> None:
    # The core exports per-flow cumulative bytes delivered in flow_series: the
    # report adds goodput per group over time and the lockout figure; without
    # that column it says why they are missing.
    results = load_results(results_dir)
    assert "bytes_delivered" in results.table("flow_series")
    text = build_report(results)
    assert "goodput per flow of each group over time" in text
    assert "Lockout" in text
    assert "does not export" not in text
    poorer = _without_column(results, "flow_series", "bytes_delivered")
    assert "which this run's core does not export" in build_report(poorer)


def test_report_of_an_interrupted_run_says_so(results_dir: Path) -> None:
    results = load_results(results_dir)
    results.meta["finished"] = "false"
    assert "interrupted" in build_report(results)


def test_report_renders_in_headless_chromium(cli: Cli, results_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert cli("report", results_dir, "-o", out).returncode == 0
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!DOCTYPE html><html><head><title>x</title></head><body>"
        '<img src="data:image/png;base64,AAAA"><script>console.error("boom")</script>'
        "</body></html>",
        encoding="utf-8",
    )
    with browser() as load:
        # The checker itself sees a broken image and a console error...
        bad = load(broken)
        assert any("boom" in e for e in bad["errors"])
        assert bad["images"] == [{"complete": True, "width": 0, "height": 0}]
        # ...and the report has neither.
        page = load(out)
    assert page["errors"] == []
    assert page["resources"] == []
    assert "ecnsim report" in page["title"]
    assert len(page["images"]) >= 3
    for img in page["images"]:
        assert img["complete"]
        assert img["width"] > 0
        assert img["height"] > 0


def test_report_of_a_workload_counts_unfinished_records_and_judges_the_backlog() -> None:
    root = Path(__file__).resolve().parent.parent
    results = Simulation.from_toml(root / "examples" / "http.toml", seed=1).run()
    html = build_report(results)
    assert "<h2>Workload</h2>" in html
    assert "open backlog steady" in html
    assert "in_progress" in html
    assert "Kaplan-Meier" in html


def test_report_of_a_seeds_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ecnsim report DIR`` on a ``run --seeds --out DIR`` folder: the mean ± 95 % CI
    across the seeds, and each seed's own report (issue 35 item 1)."""
    from ecnsim.analysis.stats import interval
    from ecnsim.cli import main
    from ecnsim.cli.run import _run_one_seed
    from ecnsim.scenario.paths import parse_assignment

    path = Path(__file__).parent.parent / "examples" / "single_flow.toml"
    sets = [parse_assignment(a) for a in ("simulation.duration=1s", "flows[*].start_jitter=100ms")]
    runs = [  # what each worker of `run --seeds 1,2 --out DIR` writes
        _run_one_seed(path, path.read_text(), s, None, str(tmp_path / f"seed-{s}"), sets)
        for s in (1, 2)
    ]
    assert main(["report", str(tmp_path)]) == 0, capsys.readouterr().err
    page = (tmp_path / "report.html").read_text()
    for s, r in zip((1, 2), runs, strict=True):
        assert f"{r['digest']:016x}" in page
        assert f'href="seed-{s}/report.html"' in page
        assert (tmp_path / f"seed-{s}" / "report.html").is_file()
    goodput = interval(np.array([r["metrics"]["goodput_bps"] for r in runs]), 0.95)
    assert f"{goodput['mean'] / 1e6:.4g} ± {goodput['ci'] / 1e6:.4g}" in page


def test_report_of_a_seeds_folder_of_a_mix_has_the_table_by_algorithm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mix's ``--seeds`` report groups the flows by ``tcp.cc`` across the seeds, as
    ``run --seeds`` prints it; one algorithm's has no such table."""
    from ecnsim.analysis.stats import interval
    from ecnsim.cli import main
    from ecnsim.cli.run import _run_one_seed
    from ecnsim.scenario.paths import parse_assignment

    path = Path(__file__).parent.parent / "examples" / "bbr_cubic.toml"
    sets = [
        parse_assignment(a)
        for a in ("simulation.duration=2s", "simulation.warmup=0s", "flows[*].start_jitter=200ms")
    ]
    runs = [
        _run_one_seed(path, path.read_text(), s, None, str(tmp_path / f"seed-{s}"), sets)
        for s in (1, 2)
    ]
    assert main(["report", str(tmp_path)]) == 0, capsys.readouterr().err
    page = (tmp_path / "report.html").read_text()
    assert "<h2>By congestion control (tcp.cc)</h2>" in page
    share = interval(np.array([r["by_cc"]["cubic"]["share"] for r in runs]), 0.95)
    row = page[page.index("<td>cubic</td>") :]
    row = row[: row.index("</tr>")]
    assert f"{share['mean']:.4g} ± {share['ci']:.4g}" in row
    single = tmp_path / "single"
    one = Path(__file__).parent.parent / "examples" / "single_flow.toml"
    _run_one_seed(one, one.read_text(), 1, None, str(single / "seed-1"), [])
    assert main(["report", str(single)]) == 0, capsys.readouterr().err
    assert "By congestion control" not in (single / "report.html").read_text()


def test_report_of_an_emulated_run_says_so() -> None:
    """A report of ``ecnsim emulate --out DIR`` says the run was emulated (issue 35 item 1)."""
    results = Simulation(small_scenario()).run()
    plain = build_report(results)
    assert "Emulated, not simulated" not in plain
    results.meta["mode"] = "emulation"
    results.meta["kernel"] = "6.1.0-test"
    page = build_report(results)
    assert "Emulated, not simulated" in page
    assert "6.1.0-test" in page
    assert "<dt>mode</dt><dd>emulation</dd>" in page
