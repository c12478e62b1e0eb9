"""ecnsim.output.plot: every standard figure renders to a valid, non-trivial PNG (Agg backend)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecnsim import Results, Simulation, analysis

from .conftest import small_scenario

matplotlib = pytest.importorskip("matplotlib", reason="plots need matplotlib (the plot extra)")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from ecnsim.output import plot  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run() -> Results:
    return Simulation(small_scenario()).run()


def _check_png(fig: Any, path: Path, *, min_bytes: int = 8000) -> tuple[int, int]:
    """Save ``fig`` to ``path``; check it is a PNG of some size; return (width, height)."""
    assert isinstance(fig, Figure)
    fig.savefig(path, dpi=80)
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 200
    assert height >= 150
    assert len(data) >= min_bytes, f"{path.name}: {len(data)} bytes, suspiciously small"
    # The image is not blank: Pillow (a matplotlib dependency) decodes it.
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        pixels = np.asarray(im.convert("L"))
    assert pixels.std() > 5, "blank image"
    return int(width), int(height)


def _synthetic_series() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    rows = []
    names = []
    for fid, (group, rate) in enumerate(
        [("fragile", 1e5), ("fragile", 1.2e5), ("average", 3e5), ("robust", 8e5)]
    ):
        names.append(f"{group}{fid}")
        total = 0.0
        drops = marks = 0
        for k in range(101):
            t = 0.1 * k
            if k and not (group == "fragile" and 30 <= k < 55):  # a lockout for fragile flows
                total += rate * 0.1 * rng.uniform(0.5, 1.5)
            drops += int(rng.random() < 0.05)
            marks += int(rng.random() < 0.1)
            rows.append((t, fid, total, drops, marks))
    series = pd.DataFrame(rows, columns=["time_s", "flow_id", "bytes_delivered", "drops", "marks"])
    flows = pd.DataFrame(
        {
            "flow_id": range(4),
            "flow": names,
            "start_s": 0.0,
            "drops": series.groupby("flow_id")["drops"].max().to_numpy(),
            "marks": series.groupby("flow_id")["marks"].max().to_numpy(),
        }
    )
    return series, flows


def test_cwnd_queue(run: Results, tmp_path: Path) -> None:
    fig = plot.plot_cwnd_queue(
        run.table("flow_series").to_pandas(),
        run.table("queue_series").to_pandas(),
        queue_id=0,
        flows=run.flows,
        mss=1460,
    )
    assert len(fig.axes) == 2
    _check_png(fig, tmp_path / "cwnd_queue.png")


def test_group_goodput(tmp_path: Path) -> None:
    series, flows = _synthetic_series()
    g = analysis.group_goodput_series(series, flows, bin_s=0.5)
    fig = plot.plot_group_goodput(g)
    assert {t.get_text() for t in fig.axes[0].get_legend().get_texts()} == {
        "fragile",
        "average",
        "robust",
    }
    _check_png(fig, tmp_path / "group_goodput.png")


def test_drops_marks_over_time(tmp_path: Path) -> None:
    series, flows = _synthetic_series()
    fig = plot.plot_drops_marks(flows, series)
    assert len(fig.axes[0].lines) == 4
    _check_png(fig, tmp_path / "drops_marks_series.png")


def test_drops_marks_totals_without_series(run: Results, tmp_path: Path) -> None:
    # Without per-flow drop and mark series: per-flow totals, saying so.
    series = run.table("flow_series").to_pandas().drop(columns=["drops", "marks"])
    fig = plot.plot_drops_marks(run.flows, series)
    assert "totals" in fig.get_suptitle()
    _check_png(fig, tmp_path / "drops_marks_totals.png", min_bytes=5000)


def test_drops_marks_over_time_from_the_core_series(run: Results, tmp_path: Path) -> None:
    fig = plot.plot_drops_marks(run.flows, run.table("flow_series").to_pandas())
    assert "totals" not in fig.get_suptitle()
    _check_png(fig, tmp_path / "drops_marks_series.png", min_bytes=5000)


def test_lockout(tmp_path: Path) -> None:
    series, flows = _synthetic_series()
    intervals = analysis.lockout_intervals(series, 1.0)
    assert set(intervals["flow_id"]) == {0, 1}
    fig = plot.plot_lockout(intervals, flows, end_s=10.0)
    _check_png(fig, tmp_path / "lockout.png", min_bytes=5000)
    empty = plot.plot_lockout(intervals.iloc[0:0], flows, end_s=10.0)
    _check_png(empty, tmp_path / "lockout_empty.png", min_bytes=5000)


def test_sweep(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    raw = pd.DataFrame(
        [
            {
                "max_p": p,
                "queue": q,
                "seed": s,
                "jain": 1 - p / 2 - (0.1 if q == "red" else 0) + rng.normal(0, 0.02),
            }
            for p in (0.02, 0.05, 0.1, 0.2)
            for q in ("red", "ecn")
            for s in range(5)
        ]
    )
    tidy = analysis.summarize(raw, ["max_p", "queue"], "jain")
    fig = plot.plot_sweep(tidy, "max_p", hue="queue", ylabel="Jain's index", logx=True)
    assert len(fig.axes[0].get_legend().get_texts()) == 2
    _check_png(fig, tmp_path / "sweep.png")
    single = plot.plot_sweep(tidy.loc[tidy["queue"] == "ecn"], "max_p", ci=None)
    _check_png(single, tmp_path / "sweep_single.png")


def test_cdf_ccdf(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    data = {
        "ECN": rng.pareto(1.5, 500) * 0.1 + 0.05,
        "non-ECN": np.append(rng.pareto(1.2, 500) * 0.1 + 0.05, [np.nan, np.nan]),
    }
    fig = plot.plot_cdf(data)
    assert fig.axes[1].get_xscale() == "log"
    assert any("2 incomplete" in t.get_text() for t in fig.axes[0].get_legend().get_texts())
    _check_png(fig, tmp_path / "cdf.png")
    one = plot.plot_cdf(data["ECN"], log_ccdf=False)
    _check_png(one, tmp_path / "cdf_one.png")


def test_queue_delay_ccdf(run: Results, tmp_path: Path) -> None:
    fig = plot.plot_queue_delay_ccdf(run.table("queue_series").to_pandas(), run.queues, 0)
    _check_png(fig, tmp_path / "queue_delay.png", min_bytes=5000)


@pytest.mark.parametrize(
    "make",
    [
        lambda: plot.plot_cdf({}),
        lambda: plot.plot_sweep(pd.DataFrame({"x": [1.0], "mean": [0.5], "ci": [np.nan]}), "x"),
    ],
)
def test_degenerate_inputs_still_render(make: Callable[[], Figure], tmp_path: Path) -> None:
    fig = make()
    fig.savefig(tmp_path / "x.png")
    assert (tmp_path / "x.png").read_bytes()[:8] == PNG_SIGNATURE


def test_plot_sweep_warns_of_a_second_swept_parameter_without_hue() -> None:
    """Two swept parameters and no ``hue=``: a warning naming the other one, not a line
    joining points of different settings without a word (issue 35 item 1)."""
    import warnings

    import pandas as pd

    from ecnsim.output.plot import plot_sweep

    df = pd.DataFrame(
        {"n": [1, 2, 1, 2], "cc": ["reno", "reno", "cubic", "cubic"], "mean": [1, 2, 3, 4],
         "ci": [0.1] * 4}
    )  # fmt: skip
    with pytest.warns(UserWarning, match=r"plot_sweep: 2 rows repeat an x value \(n\); cc varies"):
        plot_sweep(df, "n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_sweep(df, "n", hue="cc")
        plot_sweep(df[df["cc"] == "reno"], "n")
