"""Issue 15 items 4, 7, 5: workload summaries, goodput over a transfer's life, reports."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ecnsim import Scenario, Simulation, analysis, bulk, droptail
from ecnsim.cli._common import bulk_flows, print_summary, workload_summaries
from ecnsim.sweep import Sweep, run_sweep

from .conftest import EXAMPLES, small_scenario

Cli = Callable[..., subprocess.CompletedProcess[str]]
EXAMPLE = {p.name: p for p in EXAMPLES}


def _summary(results: object) -> str:
    import io

    buf = io.StringIO()
    print_summary(results, buf)  # type: ignore[arg-type]
    return buf.getvalue()


# ---------------------------------------------------------------------------
# Item 7: goodput of a finite transfer over its own life
# ---------------------------------------------------------------------------


def _finite(warmup: str | None = None) -> Scenario:
    return (
        Scenario(duration="4s", seed=1, warmup=warmup)
        .host("a", "b")
        .router("r")
        .link("a", "r", rate="100Mbps", delay="1ms")
        .link("r", "b", rate="10Mbps", delay="10ms", queue=droptail(limit_packets=100))
        .flow("a", "b", app=bulk(bytes="1MB"))
        .flow("a", "b", app=bulk())
    )


def test_transfer_goodput_is_over_the_transfer_life() -> None:
    results = Simulation(_finite()).run()
    flows = results.flows
    rates = analysis.flow_rates(flows, end_s=4.0)
    done = flows["completion_time_s"].to_numpy()
    assert np.isfinite(done[0])
    assert done[0] < 4.0
    expected = flows["bytes_delivered"].to_numpy()[0] * 8 / done[0]
    assert rates["transfer_goodput_bps"][0] == pytest.approx(expected, rel=1e-12)
    assert rates["transfer_goodput_bps"][0] > rates["goodput_bps"][0] * 4.0 / done[0] * 0.999
    # Unlimited transfers have no life of their own.
    assert np.isnan(rates["transfer_goodput_bps"][1])
    text = _summary(results)
    assert "transfer_goodput_Mbps" in text
    assert f"{expected / 1e6:.4g}" in text


def test_transfer_goodput_starts_at_the_warmup() -> None:
    flows = pd.DataFrame(
        {
            "start_s": [0.0, 0.0, 2.0],
            "completion_time_s": [5.0, 0.5, np.nan],
            "bytes_delivered": [4e6, 0, 1e6],
        }
    )
    life, rate = analysis.transfer_goodput(flows, warmup_s=1.0)
    assert life[0] == 4.0
    assert rate[0] == 8e6
    assert np.isnan(life[1])
    assert np.isnan(rate[1])
    assert np.isnan(rate[2])


# ---------------------------------------------------------------------------
# Item 4: workload runs print per-app summaries from `records`
# ---------------------------------------------------------------------------


def test_ftp_summary_is_per_app_from_records() -> None:
    results = Simulation.from_toml(EXAMPLE["ftp.toml"]).run()
    text = _summary(results)
    # No per-connection rows with the reverse-direction 0 Mb/s goodput.
    assert "ftp#" not in text
    assert "\nflows (" not in text
    tx, udp = workload_summaries(results)
    assert udp is None
    row = tx.set_index("app").loc["ftp"]
    rec = results.table("records").to_pandas()
    done = rec[(rec["state"] == "completed") & (rec["kind"] == "object")]
    assert row["completed"] == len(done) > 0
    assert row["in_progress"] == int((rec["state"] == "in_progress").sum())
    assert row["bytes"] == done["response_bytes"].sum()
    assert row["per_s"] == pytest.approx(len(done) / 30.0)
    assert row["goodput_bps"] == pytest.approx(done["response_bytes"].sum() * 8 / 30.0)
    assert row["normalized"] == pytest.approx(row["goodput_bps"] / 1.5e6)
    # Censored quantiles, as record_metrics computes them.
    metrics = analysis.record_metrics(rec, kind="object", by="app", interval_s=(0.0, 30.0))
    assert row["median_s"] == metrics["p50_response_time_s"][0]
    assert "workloads (records, per app)" in text


def test_udp_summary_counts_packets_and_loss() -> None:
    results = Simulation.from_toml(EXAMPLE["udp.toml"]).run()
    _, udp = workload_summaries(results)
    rec = results.table("records").to_pandas()
    rec = rec[rec["kind"] == "udp"]
    for app, row in udp.set_index("app").iterrows():
        mine = rec[rec["app"] == app]
        assert row["packets_sent"] == mine["packets_sent"].sum()
        assert row["loss"] == pytest.approx(
            1 - mine["packets_received"].sum() / mine["packets_sent"].sum()
        )
    assert "udp (per app)" in _summary(results)


def test_udp_summary_keeps_flows_that_started_before_the_warm_up() -> None:
    """A UDP record is its flow's whole life: a source started at 0 stays in the summary when a
    warm-up is set, and its goodput is over that life, as its counters are."""
    text = EXAMPLE["udp.toml"].read_text().replace("seed = 1", 'seed = 1\nwarmup = "5s"', 1)
    results = Simulation.from_toml_str(text).run()
    _, udp = workload_summaries(results)
    rec = results.table("records").to_pandas()
    rec = rec[rec["kind"] == "udp"]
    assert (rec["start_s"] < 5.0).all()
    assert set(udp["app"]) == set(rec["app"].astype(str)) == {"cbr", "onoff"}
    for app, row in udp.set_index("app").iterrows():
        mine = rec[rec["app"] == app]
        life = mine["end_s"] - mine["start_s"]
        assert row["goodput_bps"] == pytest.approx((mine["response_bytes"] * 8 / life).sum())
    # The 500 kb/s CBR source cannot deliver more than it sends.
    assert 0 < udp.set_index("app").loc["cbr", "goodput_bps"] <= 500e3 * 1.001
    assert "udp (per app)" in _summary(results)
    assert "its counters include any warm-up" in _summary(results)


def test_bulk_flows_keep_the_flow_table() -> None:
    results = Simulation(small_scenario()).run()
    flows = bulk_flows(results)
    assert list(flows["flow"]) == list(results.flows["flow"])
    assert "\nflows (2 rows)" in _summary(results)


# ---------------------------------------------------------------------------
# Item 5: reports
# ---------------------------------------------------------------------------

plt = pytest.importorskip("matplotlib")


def test_a_run_without_series_says_how_to_get_them(tmp_path: Path) -> None:
    from ecnsim.output.report import build_report

    data = small_scenario().to_dict()
    del data["simulation"]["sample_interval"]
    text = build_report(Simulation(data).run(), figure_dir=tmp_path, base_dir=tmp_path)
    assert "sample_interval" in text
    assert "cwnd and queue" not in text.split("<h2>Figures</h2>")[1].split("</figure>")[0]
    # Every figure drawn has data; the per-flow goodput view is there.
    assert "Goodput of every flow" in text
    for png in tmp_path.glob("*.png"):
        assert png.stat().st_size > 5000


def test_empty_figures_become_notes() -> None:
    from matplotlib.figure import Figure

    from ecnsim.output.report import _is_empty, _Page

    fig = Figure()
    fig.subplots(2, 2)
    assert _is_empty(fig)
    page = _Page()
    page.figure(lambda: fig, "four blank axes", empty="Set x.")
    assert page.figures == 0
    assert "nothing to draw" in page.sections[0]
    assert "Set x." in page.sections[0]


def test_lockout_axis_is_readable_at_800_flows() -> None:
    from ecnsim.output.plot import plot_lockout

    flows = pd.DataFrame({"flow_id": np.arange(800), "flow": [f"f{i}" for i in range(800)]})
    intervals = pd.DataFrame(
        {"flow_id": [3, 500], "start_s": [1.0, 2.0], "duration_s": [1.0, 2.0], "end_s": [2.0, 4.0]}
    )
    fig = plot_lockout(intervals, flows, end_s=5.0)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert 2 <= len(labels) <= 12
    assert labels[0] == "f0"
    assert labels[-1] == "f799"


def test_flow_goodput_view_bars_then_cdf() -> None:
    from ecnsim.output.plot import plot_flow_goodput

    few = pd.DataFrame(
        {"flow": ["a0", "a1", "b0"], "group": ["a", "a", "b"], "goodput_bps": [1e6, 3e6, 2e6]}
    )
    ax = plot_flow_goodput(few).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == sorted(heights, reverse=True) == [3.0, 2.0, 1.0]
    rng = np.random.default_rng(1)
    many = pd.DataFrame(
        {
            "flow": [f"g{i}" for i in range(800)],
            "group": ["x", "y"] * 400,
            "goodput_bps": rng.uniform(0, 1e7, 800),
        }
    )
    ax = plot_flow_goodput(many).axes[0]
    assert len(ax.lines) == 2
    assert not ax.patches
    assert len(ax.get_xticklabels()) < 20


def test_no_marks_panel_without_ecn() -> None:
    from ecnsim.output.plot import plot_drops_marks

    results = Simulation(small_scenario()).run()
    assert len(plot_drops_marks(results.flows, None, marks=False).axes) == 1
    assert len(plot_drops_marks(results.flows, None).axes) == 2


def test_cli_report_writes_svg_and_pdf_and_nothing_on_stderr(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    Simulation(small_scenario()).run().write_parquet(out)
    r = cli("report", out)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    text = (out / "report.html").read_text()
    assert "ECN is off: no marks" in text
    figures = out / "report-figures"
    for fmt in ("png", "svg", "pdf"):
        files = sorted(figures.glob(f"*.{fmt}"))
        assert files, fmt
        assert f'href="report-figures/{files[0].name}"' in text
    assert (figures / "figure01.pdf").read_bytes().startswith(b"%PDF")
    assert b"<svg" in (figures / "figure01.svg").read_bytes()[:2000]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    base = small_scenario(duration="1s", start_jitter="50ms").to_dict()
    sweep = Sweep(
        base,
        name="buf",
        grid={"links[name=bottleneck].queue.limit_packets": [10, 40]},
        seeds=[1, 2],
        series=True,  # the run report draws the stored time series
    )
    run_sweep(sweep, root, executor="serial")
    return root


def test_report_opens_a_run_inside_a_store(cli: Cli, store: Path, tmp_path: Path) -> None:
    run_dir = next((store / "runs").glob("*/*"))
    r = cli("report", run_dir, "-o", tmp_path / "a.html")
    assert r.returncode == 0, r.stderr
    r = cli("report", store, "--run", run_dir.name[:10], "-o", tmp_path / "b.html")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a.html").read_text().count("<figure>") >= 3
    r = cli("report", store)
    assert r.returncode == 2
    assert "results store: give a run (--run KEY) or a sweep (--sweep NAME)" in r.stderr


def test_sweep_report_plots_each_metric_against_each_parameter(
    cli: Cli, store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep.html"
    r = cli("report", store, "--sweep", "buf", "-o", out, "--metrics", "goodput_bps,drops")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    text = out.read_text()
    assert text.count("<figure>") == 2
    assert "goodput_bps (Mb/s) against links[name=bottleneck].queue.limit_packets" in text
    assert "±" in text  # two seeds per point: confidence intervals
    r = cli("report", store, "--sweep", "nope")
    assert r.returncode == 2
    assert "no sweep 'nope'" in r.stderr
    assert "buf" in r.stderr
