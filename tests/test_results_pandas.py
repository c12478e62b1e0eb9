"""Issue 15 item 6: results as pandas users expect them.

int64 counters, exact ``time_s``, typed metadata, flow and queue names on
the series, every table as a DataFrame the same way, a Jupyter view, and one
confidence-interval computation for ``summarize`` and ``aggregate``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ecnsim import Results, Simulation, Table, analysis
from ecnsim.analysis.aggregate import aggregate

from .conftest import small_scenario


@pytest.fixture(scope="module")
def results() -> Results:
    return Simulation(small_scenario()).run()


def test_counters_are_int64_so_differences_can_be_negative(results: Results) -> None:
    for name, table in results.tables.items():
        for col, values in table.columns.items():
            if isinstance(values, np.ndarray):
                assert values.dtype in (np.int64, np.float64), (name, col, values.dtype)
    q = results.queues
    assert q["arrivals"].dtype == np.int64
    # Packets still queued (or dropped) at the end: departures - arrivals is a
    # small number <= 0, never 2**64 - k.
    diff = (q["departures"] - q["arrivals"]).to_numpy()
    assert diff.dtype == np.int64
    assert (diff <= 0).all()
    assert (diff < 0).any()


def test_unsigned_columns_become_int64_and_overflow_is_refused() -> None:
    t = Table("t", {"x": np.array([1, 2], dtype=np.uint64)})
    assert t["x"].dtype == np.int64
    with pytest.raises(OverflowError, match="'x'"):
        Table("t", {"x": np.array([2**63], dtype=np.uint64)})
    # A table from the core keeps its bytes until read: refused when read or written.
    core = Table._from_core("t", {"c": ("<u8", np.array([2**64 - 1], dtype="<u8").tobytes())})
    with pytest.raises(OverflowError, match="'c'"):
        core.to_arrow()
    with pytest.raises(OverflowError, match="'c'"):
        core["c"]


def test_time_s_is_the_exact_decimal_so_loc_finds_it(results: Results) -> None:
    qs = results.queue_series
    times = sorted(set(qs["time_s"].tolist()))
    # Samples every 100 ms: each is the float nearest k/10 (k * 1e-9 * 1e8 would not be).
    for k, t in enumerate(times[:21]):
        assert t == k / 10, (k, t)
    assert 0.3 in set(qs["time_s"])
    assert len(qs.set_index("time_s").loc[0.3]) == len(results.queues)
    assert results.flows["start_s"].tolist()[1] == 0.2


def test_meta_has_real_types(results: Results, tmp_path: Path) -> None:
    meta = results.meta
    assert meta["seed"] == 1
    assert isinstance(meta["seed"], int)
    assert meta["finished"] is True
    for key in ("duration_s", "end_time_s", "warmup_s"):
        assert isinstance(meta[key], float), key
    assert meta["duration_s"] == 2.0
    assert isinstance(meta["profile"], str)
    assert isinstance(meta["resolved_spec"], str)
    results.write_parquet(tmp_path)
    written = json.loads((tmp_path / "meta.json").read_text())
    assert written["seed"] == 1
    assert written["duration_s"] == 2.0
    assert written["finished"] is True
    # Strings (an older meta.json, or the core's own) are typed on the way in.
    r = Results({}, {"seed": "7", "finished": "false", "warmup_s": "0.5"}, 0)
    assert (r.meta["seed"], r.meta["finished"], r.meta["warmup_s"]) == (7, False, 0.5)
    assert not r.finished


def test_series_carry_flow_and_queue_names(results: Results) -> None:
    fs, qs = results.flow_series, results.queue_series
    assert list(fs.columns[:3]) == ["time_s", "flow_id", "flow"]
    assert list(qs.columns[:3]) == ["time_s", "queue_id", "queue"]
    names = dict(zip(results.flows["flow_id"], results.flows["flow"], strict=True))
    assert fs["flow"].tolist() == [names[i] for i in fs["flow_id"]]
    qnames = dict(zip(results.queues["queue_id"], results.queues["queue"], strict=True))
    assert qs["queue"].tolist() == [qnames[i] for i in qs["queue_id"]]
    # A groupby by name works without a join.
    assert set(fs.groupby("flow")["cwnd_bytes"].max().index) == set(names.values())


def test_every_table_is_a_dataframe_the_same_way(results: Results) -> None:
    for name in results.tables:
        df = getattr(results, name)
        assert isinstance(df, pd.DataFrame)
        pd.testing.assert_frame_equal(df, results.table(name).to_pandas())
        pd.testing.assert_frame_equal(df, results.to_pandas(name))
    assert isinstance(results.records, pd.DataFrame)
    assert "flow_series" in dir(results)
    with pytest.raises(AttributeError, match="tables: flows, apps, queues"):
        _ = results.no_such_table


def test_repr_html_shows_identity_tables_and_flows(results: Results) -> None:
    html = results._repr_html_()
    assert "<table" in html
    for text in ("seed", "digest", "results.flow_series", "goodput_bps", "utilization"):
        assert text in html, text
    assert f"{results.digest:#018x}" in html


# ---------------------------------------------------------------------------
# One confidence interval
# ---------------------------------------------------------------------------


def _per_run() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for max_p in (0.1, 0.2, math.nan):
        for seed in range(1, 6):
            rows.append({"max_p": max_p, "key": f"{max_p}-{seed}", "j": float(rng.random())})
    df = pd.DataFrame(rows)
    # A run listed twice (the same key) is one replication, not two.
    return pd.concat([df, df.iloc[[0]]], ignore_index=True)


def test_summarize_and_aggregate_agree() -> None:
    df = _per_run()
    s = analysis.summarize(df, "max_p", "j")
    a = aggregate(df, ["max_p"], ["j"])
    assert len(s) == len(a) == 3  # the NaN point is kept by both
    np.testing.assert_array_equal(s["n"].to_numpy(), a["n"].to_numpy())
    np.testing.assert_allclose(s["mean"], a["mean"], rtol=0, atol=0)
    np.testing.assert_allclose(s["ci"], a["ci"], rtol=0, atol=0)
    np.testing.assert_allclose(a["ci_high"] - a["ci_low"], 2 * a["ci"], rtol=1e-12)
    # And both are the one function's numbers.
    part = df.drop_duplicates("key")
    r = analysis.interval(part.loc[part["max_p"] == 0.1, "j"])
    assert (r["n"], r["mean"], r["ci"]) == (5, s["mean"].iloc[0], s["ci"].iloc[0])
    assert r["ci"] == pytest.approx(
        analysis.student_t_ppf(0.975, 4) * r["std"] / math.sqrt(5), rel=1e-12
    )


def test_aggregate_output_draws_error_bars() -> None:
    pytest.importorskip("matplotlib")
    from ecnsim.output import plot

    a = aggregate(_per_run().dropna(subset=["max_p"]), ["max_p"], ["j"])
    fig = plot.plot_sweep(a, "max_p")
    ax = fig.axes[0]
    # errorbar() adds one LineCollection of error bars when yerr is given.
    assert any(type(c).__name__ == "LineCollection" for c in ax.collections)
