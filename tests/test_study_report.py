"""A study's report as a researcher opens and shares it: small, its warnings once, no clipped
titles, one file per figure, the CPU its runs took, and tables without matplotlib."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ecnsim import studies
from ecnsim.studies.ecnplus import EcnplusStudy
from ecnsim.studies.render import (
    MATPLOTLIB_HINT,
    _warnings_html,
    file_stems,
    fit_titles,
    render_study,
)
from ecnsim.studies.rfc2884 import Rfc2884Study

from .conftest import ROOT

#: The report of the largest full study must stay under this (issue 31, item 5).
MAX_REPORT_BYTES = 5_000_000


def test_file_stems_never_give_two_names_one_file() -> None:
    names = ["deployment_cdf_RED", "deployment_cdf_RED*", "a b", "a_b", "Runs", "x"]
    stems = file_stems(names, reserved=("runs",))
    assert len({s.lower() for s in stems.values()}) == len(names)
    assert stems["deployment_cdf_RED"] == "deployment_cdf_RED"
    assert stems["deployment_cdf_RED*"] == "deployment_cdf_RED-2"
    assert stems["a_b"] == "a_b-2"
    # A reserved stem (tables/runs.csv) is never taken, whatever the case.
    assert stems["Runs"] == "Runs-2"
    # The same names give the same stems (a re-render overwrites the same files).
    assert file_stems(names, reserved=("runs",)) == stems


def test_fit_titles_wraps_what_would_be_clipped() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ecnsim.output.plot import _figure

    fig = _figure(3.0, 2.5)
    axes = fig.subplots(1, 2)
    long = "Bulk transfers: % decrease in retransmissions, 100 (nonECN - ECN) / nonECN " * 2
    axes[0].set_title("a panel title far wider than its half of the figure")
    suptitle = fig.suptitle(long)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    box = fig.bbox
    before = suptitle.get_window_extent(renderer)
    assert before.x0 < box.x0 or before.x1 > box.x1  # the case the test is about
    fit_titles(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    for text in (suptitle, axes[0].title):
        ext = text.get_window_extent(renderer)
        assert box.x0 <= ext.x0, text.get_text()
        assert ext.x1 <= box.x1, text.get_text()
        assert box.y0 <= ext.y0, text.get_text()
        assert ext.y1 <= box.y1, text.get_text()
    assert "\n" in suptitle.get_text()
    # Every word is still there, in order.
    assert suptitle.get_text().split() == long.split()
    # A title that fits is left alone.
    axes[1].set_title("ok")
    fit_titles(fig)
    assert axes[1].get_title() == "ok"


def test_many_warnings_are_one_box() -> None:
    assert _warnings_html([]) == []
    one = "".join(_warnings_html(["only this"]))
    assert one.count('class="warn"') == 1
    assert "only this" in one
    many = "".join(_warnings_html([f"point {i}" for i in range(77)]))
    assert many.count('class="warn"') == 1
    assert "77 warnings" in many
    assert "74 more" in many
    assert all(f"point {i}<" in many for i in range(77))


class _Frames:
    """What EcnplusStudy.warnings reads of a StudyData."""

    def __init__(self, metrics: pd.DataFrame, axes: list[str]) -> None:
        self._metrics = metrics
        self.axes = axes

    def frame(self, name: str) -> pd.DataFrame:
        assert name == "metrics"
        return self._metrics


def test_ecnplus_summarises_unsteady_points_in_one_warning() -> None:
    rows = []
    for aqm in ("RED", "RED*", "PI"):
        for seed in (1, 2):
            steady = 0.0 if aqm != "PI" and seed == 1 else 1.0
            rows.append(
                {
                    "experiment": "main",
                    "aqm": aqm,
                    "endpoint": "ECN",
                    "load": 105.0,
                    "seed": seed,
                    "steady": steady,
                    "backlog_first": 10.0,
                    "backlog_last": 90.0,
                }
            )
    # A model run: no backlog, never counted.
    rows.append({"experiment": "model", "seed": 1, "steady": float("nan")})
    data = _Frames(pd.DataFrame(rows), ["experiment", "aqm", "endpoint", "load"])
    study = EcnplusStudy()
    warnings = study.warnings(study.Params(), data)  # type: ignore[arg-type]
    assert len(warnings) == 1
    text = warnings[0]
    assert text.startswith("No steady state at 2 of 3 web points (2 of 6 runs)")
    assert "main RED ECN 105 % (1/2 seeds, 10 -> 90)" in text
    assert "RED* ECN" in text
    assert "PI ECN" not in text
    steady = pd.DataFrame(rows).assign(steady=1.0)
    assert study.warnings(study.Params(), _Frames(steady, data.axes)) == []  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def bulk_only(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """rfc2884 --quick with --only experiment=bulk at one congestion level (a few seconds)."""
    study = Rfc2884Study()
    params = studies.resolve_params(study, ["congestion_levels=2"], quick=True)
    out = tmp_path_factory.mktemp("bulk_only")
    return studies.run_study(study, params, out, workers=1, only={"experiment": ["bulk"]})


def test_only_bulk_renders_a_small_report_with_side_files(bulk_only: Any) -> None:
    run = bulk_only
    out: Path = run.out
    text = run.report.read_text(encoding="utf-8")
    assert "bulk_advantage" in {p.stem for p in (out / "tables").glob("*.csv")}
    assert "fairness_jain" not in {p.stem for p in (out / "tables").glob("*.csv")}
    # The resolved scenarios are side files, linked from the report, not in it.
    files = sorted((out / "scenarios").glob("point-*.json"))
    assert len(files) == len(run.plan.points) >= 1
    resolved = json.loads(files[0].read_text(encoding="utf-8"))
    assert resolved["links"][0]["queue_ab"]["type"] == "red"
    assert f'href="scenarios/{files[0].name}"' in text
    assert '"queue_ab"' not in text
    assert "&quot;queue_ab&quot;" not in text
    info = json.loads((out / "study.json").read_text(encoding="utf-8"))
    assert info["scenarios"] == [f"scenarios/{f.name}" for f in files]
    assert run.report.stat().st_size < MAX_REPORT_BYTES
    # One seed: the figures say they have no confidence intervals.
    assert "One seed per point: the figures have no confidence intervals" in text
    # CPU, measured in the worker, for every run; not the wall time.
    assert info["runs_without_cpu_s"] == 0
    assert 0 < info["simulation_cpu_s_all_runs"] <= info["simulation_wall_s_all_runs"] * 1.5
    assert "simulation CPU of all runs" in text
    # Each figure its own file, and each file linked.
    pngs = [p for v in run.figures.values() for p in v if p.suffix == ".png"]
    assert len(set(pngs)) == len(pngs) == len(run.figures) >= 1
    for p in pngs:
        assert f'href="figures/{p.name}"' in text


def test_a_study_without_matplotlib_writes_tables_and_says_how_to_get_figures(
    bulk_only: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    from ecnsim.output.plot import _figure

    with pytest.raises(ImportError, match=r"pip install '\.\[plot\]'"):
        _figure()
    render_study(bulk_only)
    text = bulk_only.report.read_text(encoding="utf-8")
    assert "No figures:" in text
    assert "pip install &#x27;ecnsim[plot]&#x27;" in text
    assert "pip install &#x27;.[plot]&#x27;" in text
    assert "<figure>" not in text
    assert bulk_only.figures == {}
    assert (bulk_only.out / "tables" / "bulk_advantage.csv").is_file()
    info = json.loads((bulk_only.out / "study.json").read_text(encoding="utf-8"))
    assert info["figures_drawn"] is False
    assert "ecnsim[plot]" in MATPLOTLIB_HINT


def test_pip_install_dot_brings_matplotlib_and_the_plot_extra_still_works() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 only
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(d.startswith("matplotlib") for d in project["dependencies"])
    assert any(d.startswith("matplotlib") for d in project["optional-dependencies"]["plot"])


def test_long_log_axes_get_fewer_minor_ticks_and_short_ones_keep_theirs() -> None:
    import numpy as np
    from matplotlib.ticker import LogLocator, NullFormatter

    from ecnsim.output.plot import _figure
    from ecnsim.studies.render import thin_log_ticks

    fig = _figure(6.0, 3.0)
    wide, short = fig.subplots(1, 2)
    wide.plot(np.geomspace(1e-2, 1e3, 50), np.geomspace(1e-5, 1, 50))
    wide.set_xscale("log")
    wide.set_yscale("log")
    short.plot([1.0, 5.0], [1.0, 2.0])
    short.set_xscale("log")
    default = short.xaxis.get_minor_locator()
    thin_log_ticks(fig)
    for axis in (wide.xaxis, wide.yaxis):
        loc = axis.get_minor_locator()
        assert isinstance(loc, LogLocator)
        assert isinstance(axis.get_minor_formatter(), NullFormatter)
        # Two minor ticks a decade: 2 and 5 x 10^k.
        lo, hi = sorted(axis.get_view_interval())
        ticks = [t for t in loc.tick_values(lo, hi) if lo <= t <= hi]
        mantissas = {round(t / 10 ** np.floor(np.log10(t)), 6) for t in ticks}
        assert mantissas <= {2.0, 5.0}
    assert short.xaxis.get_minor_locator() is default
    assert wide.get_xlim()[0] < 1e-1  # the data limits are unchanged


def test_the_report_embeds_a_smaller_png_of_the_same_picture() -> None:
    import io

    import numpy as np
    from PIL import Image

    from ecnsim.output.plot import _figure
    from ecnsim.studies.render import _figure_png, embedded_png

    fig = _figure(6.0, 3.0)
    ax = fig.subplots()
    x = np.linspace(0, 10, 400)
    for k in range(4):
        ax.plot(x, np.sin(x + k), label=f"curve {k}")
    ax.legend()
    png = _figure_png(fig)
    small = embedded_png(png)
    assert len(small) < len(png)
    a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)
    b = np.asarray(Image.open(io.BytesIO(small)).convert("RGB"), dtype=float)
    assert a.shape == b.shape
    # The same picture: on average within a few levels of 255 per channel.
    assert np.abs(a - b).mean() < 3.0


def test_svg_only_on_request_and_a_stale_svg_is_removed(bulk_only: Any) -> None:
    figures = bulk_only.out / "figures"
    render_study(bulk_only)
    text = bulk_only.report.read_text(encoding="utf-8")
    assert bulk_only.figures
    assert not list(figures.glob("*.svg"))
    assert all([p.suffix for p in v] == [".png"] for v in bulk_only.figures.values())
    assert "--out DIR --svg</code>" in text
    assert ".svg" not in text
    info = json.loads((bulk_only.out / "study.json").read_text(encoding="utf-8"))
    assert info["figure_formats"] == ["png"]
    # One worker (--jobs 1): every figure drawn in this process, its CPU in render_cpu_s.
    assert info["render_cpu_s_figure_workers"] == 0.0 < info["render_cpu_s"]

    render_study(bulk_only, svg=True)
    text = bulk_only.report.read_text(encoding="utf-8")
    svgs = [p for v in bulk_only.figures.values() for p in v if p.suffix == ".svg"]
    assert len(svgs) == len(bulk_only.figures) >= 1
    for p in svgs:
        assert b"<svg" in p.read_bytes()[:2000]
        assert f'href="figures/{p.name}"' in text
    assert "--out DIR --svg</code>" not in text
    info = json.loads((bulk_only.out / "study.json").read_text(encoding="utf-8"))
    assert info["figure_formats"] == ["png", "svg"]

    # PNG only again: the SVGs of the earlier render would show older data; they go.
    render_study(bulk_only)
    assert not list(figures.glob("*.svg"))


def test_figures_drawn_in_worker_processes_are_the_same_bytes() -> None:
    import numpy as np

    from ecnsim.output.plot import _figure
    from ecnsim.studies.render import _draw_figures

    figures = {}
    for k in range(3):
        fig = _figure(5.0, 3.0)
        ax = fig.subplots()
        x = np.geomspace(1e-3, 1e2, 200)
        ax.plot(x, np.sqrt(x) * (k + 1), label=f"curve {k}")
        ax.set_xscale("log")
        ax.set_title(f"figure {k}")
        ax.legend()
        figures[f"f{k}"] = fig
    # A figure that cannot be pickled (a local function as formatter) is drawn here.
    from matplotlib.ticker import FuncFormatter

    figures["f1"].axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.1f}"))
    here, here_cpu = _draw_figures(figures, False, 1)
    pool, pool_cpu = _draw_figures(figures, False, 2)
    assert list(here) == list(pool) == list(figures)
    for name in figures:
        png, embedded, svg = here[name]
        assert png.startswith(b"\x89PNG")
        assert svg is None
        assert pool[name] == (png, embedded, None)
    assert here_cpu == 0.0 < pool_cpu
