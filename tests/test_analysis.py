"""ecnsim.analysis: every metric against values computed by hand on small inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ecnsim import Simulation, analysis

from .conftest import small_scenario

# ---------------------------------------------------------------------------
# Synthetic tables
# ---------------------------------------------------------------------------


def _flows() -> pd.DataFrame:
    # Run: warm-up 1 s, end 10 s. Intervals: 9, 8, 1 and none (starts at the end).
    return pd.DataFrame(
        {
            "flow_id": [0, 1, 2, 3],
            "flow": ["fragile0", "fragile1", "robust0", "robust1"],
            "start_s": [0.0, 2.0, 9.0, 10.0],
            "bytes_delivered": [9000, 4000, 250, 0],
            "bytes_sent": [18000, 5000, 250, 0],
            "packets_sent": [90, 0, 10, 0],
            "acks_sent": [10, 0, 0, 0],
            "drops": [5, 0, 1, 0],
            "marks": [20, 0, 0, 0],
        }
    )


def _series() -> pd.DataFrame:
    # Cumulative bytes delivered, sampled every second; flow 1 starts at t = 2.
    rows = [
        (0.0, 0, 0),
        (1.0, 0, 100),
        (2.0, 0, 300),
        (3.0, 0, 300),
        (4.0, 0, 600),
        (2.0, 1, 0),
        (3.0, 1, 50),
        (4.0, 1, 150),
    ]
    return pd.DataFrame(rows, columns=["time_s", "flow_id", "bytes_delivered"])


# ---------------------------------------------------------------------------
# Jain's index, groups, gap
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.0, 1.0, 1.0, 1.0], 1.0),
        ([1.0, 0.0, 0.0, 0.0], 0.25),  # k/n: one of four gets everything
        ([5.0, 5.0, 0.0, 0.0], 0.5),
        ([1.0, 2.0, 3.0], 36.0 / 42.0),  # (1+2+3)^2 / (3 * (1+4+9))
        ([2.0, math.nan, 2.0], 1.0),  # NaNs ignored
        ([7.0], 1.0),
    ],
)
def test_jain_index_by_hand(values: list[float], expected: float) -> None:
    assert analysis.jain_index(values) == pytest.approx(expected, rel=1e-12)
    assert analysis.jain_index(np.array(values)) == pytest.approx(expected, rel=1e-12)


def test_jain_index_undefined_and_invalid() -> None:
    assert math.isnan(analysis.jain_index([]))
    assert math.isnan(analysis.jain_index([0.0, 0.0]))
    with pytest.raises(ValueError, match="non-negative"):
        analysis.jain_index([1.0, -1.0])


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("fragile12", "fragile"),
        ("fragile-12", "fragile"),
        ("ecn_on_3", "ecn_on"),
        ("flow0", "flow"),
        ("web", "web"),
        ("42", "42"),
    ],
)
def test_default_group(name: str, group: str) -> None:
    assert analysis.default_group(name) == group


def test_flow_groups_sources() -> None:
    flows = _flows()
    assert analysis.flow_groups(flows).to_list() == ["fragile", "fragile", "robust", "robust"]
    assert analysis.flow_groups(flows).index.to_list() == [0, 1, 2, 3]
    by_map = analysis.flow_groups(flows, {"fragile0": "a", 1: "b", "robust0": "c", 3: "c"})
    assert by_map.to_list() == ["a", "b", "c", "c"]
    by_fn = analysis.flow_groups(flows, lambda n: n[0])
    assert by_fn.to_list() == ["f", "f", "r", "r"]
    with_col = flows.assign(group=["x", "y", "x", "y"])
    assert analysis.flow_groups(with_col).to_list() == ["x", "y", "x", "y"]
    assert analysis.flow_groups(with_col, "flow").to_list() == with_col["flow"].to_list()
    with pytest.raises(KeyError, match="robust1"):
        analysis.flow_groups(flows, {"fragile0": "a", "fragile1": "a", "robust0": "b"})


def test_flow_rates_by_hand() -> None:
    rates = analysis.flow_rates(_flows(), end_s=10.0, warmup_s=1.0)
    # interval = end - max(warmup, start) = 9, 8, 1, 0 (-> NaN)
    np.testing.assert_allclose(rates["interval_s"][:3], [9.0, 8.0, 1.0])
    np.testing.assert_allclose(rates["goodput_bps"][:3], [9000 * 8 / 9, 4000 * 8 / 8, 250 * 8 / 1])
    np.testing.assert_allclose(
        rates["throughput_bps"][:3], [18000 * 8 / 9, 5000 * 8 / 8, 250 * 8 / 1]
    )
    assert math.isnan(rates["goodput_bps"][3])
    assert rates["group"].to_list() == ["fragile", "fragile", "robust", "robust"]


def test_group_rates_by_hand() -> None:
    rates = analysis.flow_rates(_flows(), end_s=10.0, warmup_s=1.0)
    g = analysis.group_rates(rates).set_index("group")
    # fragile: 8000 and 4000 bit/s; robust: 2000 bit/s (flow 3 never ran: left out).
    assert g.loc["fragile", "goodput_bps"] == pytest.approx(12000.0)
    assert g.loc["fragile", "goodput_bps_mean"] == pytest.approx(6000.0)
    assert g.loc["fragile", "goodput_bps_min"] == pytest.approx(4000.0)
    assert g.loc["fragile", "goodput_bps_max"] == pytest.approx(8000.0)
    # (8000 + 4000)^2 / (2 * (8000^2 + 4000^2)) = 144e6 / 160e6
    assert g.loc["fragile", "jain_goodput_bps"] == pytest.approx(0.9)
    assert g.loc["robust", "goodput_bps"] == pytest.approx(2000.0)
    assert g.loc["robust", "flows"] == 2
    assert g.loc["robust", "throughput_bps"] == pytest.approx(2000.0)


def test_group_gap_by_hand() -> None:
    gap = analysis.group_gap({"fragile": 2000.0, "average": 4000.0, "robust": 6000.0})
    assert gap["gap"] == pytest.approx(4000.0)
    assert gap["relative_gap"] == pytest.approx(4000.0 / 6000.0)
    assert gap["min_max_ratio"] == pytest.approx(2000.0 / 6000.0)
    same = analysis.group_gap(pd.Series({"a": 3.0, "b": 3.0}))
    assert same == {"gap": 0.0, "relative_gap": 0.0, "min_max_ratio": 1.0}
    assert math.isnan(analysis.group_gap({})["gap"])


# ---------------------------------------------------------------------------
# Time bins
# ---------------------------------------------------------------------------


def test_goodput_series_per_sample_interval() -> None:
    g = analysis.goodput_series(_series())
    flow0 = g.loc[g["flow_id"] == 0]
    flow1 = g.loc[g["flow_id"] == 1]
    assert flow0["time_s"].to_list() == [0.0, 1.0, 2.0, 3.0]
    assert flow0["end_s"].to_list() == [1.0, 2.0, 3.0, 4.0]
    # Increments 100, 200, 0, 300 bytes over 1 s bins.
    assert flow0["goodput_bps"].to_list() == [800.0, 1600.0, 0.0, 2400.0]
    # Not started before t = 2: counts as 0; then 50 and 100 bytes.
    assert flow1["goodput_bps"].to_list() == [0.0, 0.0, 400.0, 800.0]
    assert "throughput_bps" not in g


def test_goodput_series_wider_bins_and_warmup() -> None:
    g = analysis.goodput_series(_series(), bin_s=2.0)
    assert g.loc[g["flow_id"] == 0, "goodput_bps"].to_list() == [300 * 8 / 2, 300 * 8 / 2]
    assert g.loc[g["flow_id"] == 1, "goodput_bps"].to_list() == [0.0, 150 * 8 / 2]
    w = analysis.goodput_series(_series(), warmup_s=1.0)
    assert sorted(set(w["time_s"])) == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="multiple of the sample interval"):
        analysis.goodput_series(_series(), bin_s=1.5)


def test_goodput_series_throughput_from_bytes_sent() -> None:
    s = _series().assign(bytes_sent=lambda d: d["bytes_delivered"] * 2)
    g = analysis.goodput_series(s)
    np.testing.assert_allclose(g["throughput_bps"], 2 * g["goodput_bps"])


def test_group_goodput_series_counts_started_flows_only() -> None:
    flows = pd.DataFrame({"flow_id": [0, 1], "flow": ["x0", "y0"], "start_s": [0.0, 2.0]})
    g = analysis.group_goodput_series(_series(), flows)
    x = g.loc[g["group"] == "x"]
    y = g.loc[g["group"] == "y"]
    assert x["goodput_bps"].to_list() == [800.0, 1600.0, 0.0, 2400.0]
    assert x["goodput_bps_mean"].to_list() == [800.0, 1600.0, 0.0, 2400.0]
    # Flow y0 starts at 2 s: no y rows for the bins ending at 1 s and 2 s.
    assert y["time_s"].to_list() == [2.0, 3.0]
    assert y["goodput_bps"].to_list() == [400.0, 800.0]
    gaps = analysis.group_gap_series(g)
    assert gaps["gap"].to_list() == [0.0, 0.0, 400.0, 1600.0]
    assert gaps["min_max_ratio"].to_list()[2:] == [0.0, pytest.approx(800.0 / 2400.0)]


def test_jain_index_series_by_hand() -> None:
    g = analysis.goodput_series(_series())
    j = analysis.jain_index_series(g)
    # Bin 2: 0 and 400 -> 0.5; bin 3: 2400 and 800 -> 3200^2 / (2 * (2400^2 + 800^2)) = 0.8.
    assert j["jain_index"].to_list()[2:] == [pytest.approx(0.5), pytest.approx(0.8)]
    assert j["jain_index"].to_list()[0] == pytest.approx(0.5)


def test_missing_series_column_names_it() -> None:
    s = _series().drop(columns=["bytes_delivered"])
    with pytest.raises(analysis.MissingColumnError, match="bytes_delivered") as info:
        analysis.goodput_series(s)
    assert info.value.column == "bytes_delivered"
    assert info.value.table == "flow_series"
    with pytest.raises(analysis.MissingColumnError, match="bytes_delivered"):
        analysis.lockout_intervals(s, 1.0)


# ---------------------------------------------------------------------------
# Lockout
# ---------------------------------------------------------------------------


def test_lockout_intervals_by_hand() -> None:
    t = np.arange(11.0)
    c = [0, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4]
    s = pd.DataFrame({"time_s": t, "flow_id": 7, "bytes_delivered": c})
    lo = analysis.lockout_intervals(s, 2.0)
    # Runs of equal values: t 2..5 (3 s), 6..7 (1 s, too short), 8..10 (2 s, to the end).
    assert lo["start_s"].to_list() == [2.0, 8.0]
    assert lo["end_s"].to_list() == [5.0, 10.0]
    assert lo["duration_s"].to_list() == [3.0, 2.0]
    assert lo["ongoing"].to_list() == [False, True]
    assert lo["flow_id"].to_list() == [7, 7]
    assert len(analysis.lockout_intervals(s, 3.5)) == 0
    # After a 3 s warm-up the first run is seen from t = 3 only: 2 s.
    w = analysis.lockout_intervals(s, 2.0, warmup_s=3.0)
    assert w["start_s"].to_list() == [3.0, 8.0]
    assert w["duration_s"].to_list() == [2.0, 2.0]


def test_silence_by_flow_a_flow_silent_for_exactly_the_lockout_interval() -> None:
    t = np.arange(0.0, 10.01, 0.5)
    # Flow 1 delivers every sample except in [2, 7]: silent for exactly 5 s.
    c1 = np.where(t <= 2.0, t, np.where(t < 7.0, 2.0, t - 5.0))
    # Flow 2 delivers all the time; flow 3 nothing at all.
    s = pd.concat(
        [
            pd.DataFrame({"time_s": t, "flow_id": 1, "bytes_delivered": c1}),
            pd.DataFrame({"time_s": t, "flow_id": 2, "bytes_delivered": t * 3}),
            pd.DataFrame({"time_s": t, "flow_id": 3, "bytes_delivered": 0.0}),
        ]
    )
    flows = pd.DataFrame({"flow_id": [1, 2, 3, 4]})
    sil = analysis.silence_by_flow(s, flows=flows).set_index("flow_id")
    assert sil.loc[1, "longest_silence_s"] == pytest.approx(5.0)
    assert sil.loc[1, "silent_s"] == pytest.approx(5.0)
    assert sil.loc[1, "silent_share"] == pytest.approx(0.5)
    assert sil.loc[2, "longest_silence_s"] == 0.0
    assert sil.loc[3, "longest_silence_s"] == pytest.approx(10.0)
    assert sil.loc[3, "silent_share"] == pytest.approx(1.0)
    assert math.isnan(sil.loc[4, "observed_s"])  # no sample: not observed
    # Locked out at a threshold of exactly the silence, not above it.
    assert analysis.lockout_count(sil.reset_index(), 5.0) == 2
    assert analysis.lockout_count(sil.reset_index(), 5.5) == 1
    # After a warm-up at 4 s, flow 1's silence is seen from 4 to 7 only.
    late = analysis.silence_by_flow(s, warmup_s=4.0).set_index("flow_id")
    assert late.loc[1, "longest_silence_s"] == pytest.approx(3.0)
    assert late.loc[3, "longest_silence_s"] == pytest.approx(6.0)


def _trace() -> dict[str, np.ndarray]:
    """Packet records at a link direction 5 -> 6 (and one on another link, and one ACK)."""
    rows = [
        # time_ns, event, from, to, flow, ecn, payload
        (1_000_000_000, "+", 5, 6, 0, 2, 960),
        (1_100_000_000, "-", 5, 6, 0, 2, 960),
        (1_200_000_000, "-", 5, 6, 1, 3, 960),  # marked
        (1_300_000_000, "d", 5, 6, 1, 2, 960),  # dropped
        (1_400_000_000, "-", 6, 5, 0, 0, 0),  # an ACK the other way
        (1_500_000_000, "-", 7, 6, 2, 2, 960),  # another link
        (4_000_000_000, "-", 5, 6, 0, 2, 960),
        (4_100_000_000, "r", 5, 6, 0, 2, 960),
    ]
    cols = list(zip(*rows, strict=True))
    names = ["time_ns", "event", "from_node", "to_node", "flow_id", "ecn", "payload"]
    return {n: np.asarray(c) for n, c in zip(names, cols, strict=True)}


def test_packet_raster_and_its_silences_by_hand() -> None:
    raster = analysis.packet_raster(_trace(), from_node=5, to_node=6)
    assert raster["time_s"].to_list() == [1.1, 1.2, 1.3, 4.0]
    assert raster["flow_id"].to_list() == [0, 1, 1, 0]
    assert raster["kind"].to_list() == ["sent", "marked", "dropped", "sent"]
    with_acks = analysis.packet_raster(_trace(), from_node=6, to_node=5, data_only=False)
    assert with_acks["kind"].to_list() == ["sent"]
    sil = analysis.raster_silence(
        raster, start_s=0.0, end_s=10.0, flows=pd.DataFrame({"flow_id": [0, 1, 2]})
    ).set_index("flow_id")
    # Flow 0 left the queue at 1.1 and 4.0: longest gap 4.0 -> 10.0.
    assert sil.loc[0, "longest_silence_s"] == pytest.approx(6.0)
    assert sil.loc[0, "packets_out"] == 2
    # Flow 1: a marked packet got through at 1.2 (the drop does not count).
    assert sil.loc[1, "longest_silence_s"] == pytest.approx(8.8)
    # Flow 2 never got a packet through this queue: the whole interval.
    assert sil.loc[2, "longest_silence_s"] == pytest.approx(10.0)
    assert sil.loc[2, "packets_out"] == 0


def test_red_region_share_by_hand() -> None:
    qs = pd.DataFrame(
        {
            "time_s": np.arange(10.0),
            "queue_id": 0,
            "aqm_avg": [1, 5, 9.99, 10, 15, 29.9, 30, 31, np.nan, 12],
        }
    )
    other = qs.assign(queue_id=1, aqm_avg=100.0)
    share = analysis.red_region_share(pd.concat([qs, other]), 0, min_th=10, max_th=30, warmup_s=1.0)
    # Samples from t = 1 with a value: 5, 9.99 below; 10, 15, 29.9, 12 inside; 30, 31 above.
    assert share["samples"] == 8
    assert share["below"] == pytest.approx(2 / 8)
    assert share["inside"] == pytest.approx(4 / 8)
    assert share["above"] == pytest.approx(2 / 8)
    with pytest.raises(ValueError, match="min_th"):
        analysis.red_region_share(qs, 0, min_th=30, max_th=10)


def test_lockout_summary_by_hand() -> None:
    s = pd.DataFrame(
        {
            "time_s": [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0],
            "flow_id": [0, 0, 0, 0, 1, 1, 1, 1],
            "bytes_delivered": [0, 0, 0, 5, 1, 2, 3, 4],
        }
    )
    lo = analysis.lockout_intervals(s, 1.0)
    assert lo[["flow_id", "start_s", "end_s"]].values.tolist() == [[0, 0.0, 2.0]]
    summary = analysis.lockout_summary(lo, pd.DataFrame({"flow_id": [0, 1]}))
    assert summary["intervals"].to_list() == [1, 0]
    assert summary["locked_s"].to_list() == [2.0, 0.0]
    assert summary["longest_s"].to_list() == [2.0, 0.0]


# ---------------------------------------------------------------------------
# Links, queues, drops and marks
# ---------------------------------------------------------------------------


def _queues() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "queue_id": [0, 1],
            "queue": ["r1->r2", "r2->r1"],
            "rate_bps": [1_000_000, 8_000_000],
            "arrivals": [1000, 0],
            "departure_bytes": [1_250_000, 0],
            "utilization": [0.5, 0.0],
            "drops_overflow": [10, 0],
            "drops_early": [20, 0],
            "drops_forced": [5, 0],
            "marks_early": [30, 0],
            "marks_forced": [0, 0],
            "marks_ce_threshold": [0, 0],
        }
    )


def test_link_utilization_by_hand() -> None:
    q = _queues()
    # 1.25 MB = 10 Mbit in 20 s on a 1 Mb/s link: half the time busy.
    u = analysis.link_utilization(q, interval_s=20.0)
    assert u["utilization"].to_list() == [0.5, 0.0]
    assert analysis.link_utilization(q)["utilization"].to_list() == [0.5, 0.0]


def test_drop_mark_rates_by_hand() -> None:
    r = analysis.drop_mark_rates(_flows())
    # Flow 0: 90 data + 10 ACKs = 100 packets, 5 drops, 20 marks.
    assert r.loc[0, "packets"] == 100
    assert r.loc[0, "drop_rate"] == pytest.approx(0.05)
    assert r.loc[0, "mark_rate"] == pytest.approx(0.20)
    assert r.loc[0, "signal_rate"] == pytest.approx(0.25)
    assert r.loc[2, "drop_rate"] == pytest.approx(0.1)
    assert math.isnan(r.loc[1, "drop_rate"])  # sent nothing


def test_queue_drop_mark_rates_by_hand() -> None:
    r = analysis.queue_drop_mark_rates(_queues())
    q0 = r.loc[r["queue_id"] == 0].set_index(["kind", "reason"])
    assert q0.loc[("drop", "overflow"), "rate"] == pytest.approx(0.010)
    assert q0.loc[("drop", "early"), "rate"] == pytest.approx(0.020)
    assert q0.loc[("drop", "forced"), "rate"] == pytest.approx(0.005)
    assert q0.loc[("mark", "early"), "rate"] == pytest.approx(0.030)
    assert q0.loc[("mark", "ce_threshold"), "count"] == 0
    assert len(r) == 2 * 6
    assert r.loc[r["queue_id"] == 1, "rate"].isna().all()  # no arrivals


def test_queue_occupancy_distribution_by_hand() -> None:
    qs = pd.DataFrame({"time_s": np.arange(7.0), "queue_id": 0, "packets": [0, 0, 1, 2, 2, 2, 5]})
    d = analysis.queue_occupancy_distribution(qs, 0)
    assert d["value"].to_list() == [0.0, 1.0, 2.0, 5.0]
    np.testing.assert_allclose(d["pmf"], [2 / 7, 1 / 7, 3 / 7, 1 / 7])
    np.testing.assert_allclose(d["cdf"], [2 / 7, 3 / 7, 6 / 7, 1.0])
    np.testing.assert_allclose(d["ccdf"], [5 / 7, 4 / 7, 1 / 7, 0.0], atol=1e-15)
    w = analysis.queue_occupancy_distribution(qs, 0, warmup_s=2.0)
    np.testing.assert_allclose(w["pmf"], [1 / 5, 3 / 5, 1 / 5])


def test_queueing_delay_exceeds_by_hand() -> None:
    # 8 Mb/s: one byte takes 1 us; backlogs of 0, 1000, 5000, 10000 bytes = 0, 1, 5, 10 ms.
    qs = pd.DataFrame(
        {"time_s": [0.0, 1.0, 2.0, 3.0], "queue_id": 1, "bytes": [0, 1000, 5000, 10000]}
    )
    q = _queues()
    assert analysis.queueing_delay_exceeds(qs, q, 1, 0.005) == pytest.approx(0.25)
    assert analysis.queueing_delay_exceeds(qs, q, 1, 0.0005) == pytest.approx(0.75)
    probs = analysis.queueing_delay_exceeds(qs, q, 1, [0.0, 0.001, 0.02])
    np.testing.assert_allclose(probs, [0.75, 0.5, 0.0])
    c = analysis.queue_delay_ccdf(qs, q, 1)
    np.testing.assert_allclose(c["x"], [0.0, 0.001, 0.005, 0.010])
    np.testing.assert_allclose(c["ccdf"], [0.75, 0.5, 0.25, 0.0])
    with pytest.raises(KeyError, match="queue_id 9"):
        analysis.queueing_delay_exceeds(qs, q, 9, 0.005)


# ---------------------------------------------------------------------------
# Distributions, power, confidence intervals
# ---------------------------------------------------------------------------


def test_ecdf_and_ccdf_by_hand() -> None:
    e = analysis.ecdf([3.0, 1.0, 2.0, 2.0, math.nan])
    assert e["x"].to_list() == [1.0, 2.0, 3.0]
    assert e["cdf"].to_list() == [0.25, 0.75, 1.0]
    c = analysis.ccdf(pd.Series([3.0, 1.0, 2.0, 2.0]))
    assert c["ccdf"].to_list() == [0.75, 0.25, 0.0]
    assert len(analysis.ecdf([])) == 0


def test_network_power_by_hand() -> None:
    assert analysis.network_power(1e6, 0.5) == pytest.approx(2e6)
    assert math.isnan(analysis.network_power(1e6, 0.0))
    assert math.isnan(analysis.network_power(1e6, math.nan))


@pytest.mark.parametrize(
    ("q", "df", "table_value"),
    [
        # Student's t table (two-sided 95 %, one-sided 95 %, two-sided 99 %).
        (0.975, 1, 12.7062),
        (0.975, 4, 2.7764),
        (0.975, 10, 2.2281),
        (0.95, 30, 1.6973),
        (0.995, 5, 4.0321),
        (0.975, 1e9, 1.9600),
        (0.025, 4, -2.7764),
    ],
)
def test_student_t_ppf_matches_tables(q: float, df: float, table_value: float) -> None:
    assert analysis.student_t_ppf(q, df) == pytest.approx(table_value, abs=1e-4)


def test_mean_ci_by_hand() -> None:
    mean, half, n = analysis.mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    # s = sqrt(2.5); t_{0.975, 4} = 2.776445
    assert (mean, n) == (3.0, 5)
    assert half == pytest.approx(2.776445 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    m1, h1, n1 = analysis.mean_ci([4.0, math.nan])
    assert (m1, n1) == (4.0, 1)
    assert math.isnan(h1)


def test_summarize_is_tidy() -> None:
    df = pd.DataFrame(
        {
            "max_p": [0.1, 0.1, 0.1, 0.2, 0.2],
            "seed": [1, 2, 3, 1, 2],
            "j": [0.9, 1.0, 0.8, 0.5, 0.7],
        }
    )
    s = analysis.summarize(df, "max_p", "j")
    assert s.columns.to_list() == ["max_p", "mean", "ci", "n"]
    assert s["mean"].to_list() == [pytest.approx(0.9), pytest.approx(0.6)]
    assert s["n"].to_list() == [3, 2]
    # 0.2: s = sqrt(0.02), t_{0.975,1} = 12.7062
    assert s["ci"].iloc[1] == pytest.approx(12.7062 * math.sqrt(0.02) / math.sqrt(2), rel=1e-4)


# ---------------------------------------------------------------------------
# Against a real run: the definitions agree with the core's own columns
# ---------------------------------------------------------------------------


def test_metrics_agree_with_core_columns() -> None:
    results = Simulation(small_scenario()).run()
    flows, queues = results.flows, results.queues
    end = float(results.meta["end_time_s"])
    warmup = float(results.meta["warmup_s"])
    rates = analysis.flow_rates(flows, end_s=end, warmup_s=warmup)
    np.testing.assert_allclose(rates["goodput_bps"], flows["goodput_bps"], rtol=1e-9)
    np.testing.assert_allclose(rates["throughput_bps"], flows["throughput_bps"], rtol=1e-9)
    util = analysis.link_utilization(queues, interval_s=end - warmup)["utilization"]
    np.testing.assert_allclose(util, queues["utilization"], atol=2e-3)
    qs = results.table("queue_series").to_pandas()
    d = analysis.queue_occupancy_distribution(qs, 0)
    assert d["pmf"].sum() == pytest.approx(1.0)
    assert d["value"].max() == queues.loc[0, "max_packets"]
    j = analysis.jain_index(flows["goodput_bps"])
    assert 0.5 <= j <= 1.0


# ---------------------------------------------------------------------------
# Workload records
# ---------------------------------------------------------------------------


def _records() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": ["page", "page", "page", "page", "object"],
            "group": ["iw1", "iw1", "iw3", "iw3", "iw1"],
            "start_s": [0.0, 2.0, 1.0, 3.0, 0.5],
            "end_s": [1.0, 4.0, 1.5, 3.5, 0.6],
            "response_time_s": [1.0, 2.0, 0.5, 0.5, 0.1],
            "response_bytes": [1000, 3000, 2000, 2000, 500],
        }
    )


def test_record_metrics_by_hand() -> None:
    m = analysis.record_metrics(
        _records(), kind="page", interval_s=(0.0, 4.0), capacity_bps=16_000
    ).set_index("group")
    # iw1: delays 1 and 2 -> median 1.5; 4000 B over 4 s = 8000 bit/s.
    assert m.loc["iw1", "count"] == 2
    assert m.loc["iw1", "p50_response_time_s"] == pytest.approx(1.5)
    assert m.loc["iw1", "per_second"] == pytest.approx(0.5)
    assert m.loc["iw1", "goodput_bps"] == pytest.approx(8000)
    assert m.loc["iw1", "normalized_throughput"] == pytest.approx(0.5)
    assert m.loc["iw1", "network_power"] == pytest.approx(8000 / 1.5)
    assert m.loc["iw3", "p50_response_time_s"] == pytest.approx(0.5)
    assert m.loc["iw3", "goodput_bps"] == pytest.approx(8000)
    # Records starting outside the interval are left out.
    late = analysis.record_metrics(_records(), kind="page", by=None, interval_s=(1.5, 4.0))
    assert late.loc[0, "count"] == 2


def test_record_metrics_on_a_real_workload() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    results = Simulation.from_toml(root / "examples" / "http.toml").run()
    records = results.table("records").to_pandas()
    m = analysis.record_metrics(records, kind="page", by=None)
    pages = records[records["kind"] == "page"]
    assert m.loc[0, "count"] == (pages["state"] == "completed").sum() > 0
    assert m.loc[0, "count"] + m.loc[0, "in_progress"] + m.loc[0, "failed"] == len(pages)
    assert m.loc[0, "p50_response_time_s"] > 0


# ---------------------------------------------------------------------------
# Censored response times and the steady-state check
# ---------------------------------------------------------------------------


def test_kaplan_meier_by_hand() -> None:
    # Times 1, 2 (censored), 3, 4: S(1) = 3/4; at 3, 2 at risk, one completes: S = 3/4 * 1/2.
    km = analysis.kaplan_meier(np.array([1.0, 2.0, 3.0, 4.0]), np.array([True, False, True, True]))
    assert km["x"].tolist() == [1.0, 3.0, 4.0]
    assert km["at_risk"].tolist() == [4, 2, 1]
    assert km["cdf"].tolist() == pytest.approx([0.25, 0.625, 1.0])
    # Without censoring it is the empirical CDF.
    e = analysis.kaplan_meier(np.array([3.0, 1.0, 2.0, 2.0]), np.ones(4, bool))
    assert e["cdf"].tolist() == pytest.approx(analysis.ecdf([3.0, 1.0, 2.0, 2.0])["cdf"].tolist())


def _censored_records() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": ["object"] * 5,
            "state": ["completed", "completed", "in_progress", "failed", "completed"],
            "group": ["g"] * 5,
            "start_s": [0.0, 0.0, 0.0, 0.0, 0.0],
            "end_s": [1.0, 2.0, 5.0, 3.0, 4.0],
            "response_time_s": [1.0, 2.0, 5.0, 3.0, 4.0],
            "response_bytes": [100, 100, 100, 100, 100],
        }
    )


def test_response_time_cdf_counts_unfinished_records() -> None:
    r = _censored_records()
    # failed never completes: it stays at risk; in progress is censored at 5 s (after all else).
    cdf = analysis.response_time_cdf(r)
    assert cdf["x"].tolist() == [1.0, 2.0, 4.0]
    assert cdf["cdf"].tolist() == pytest.approx([0.2, 0.4, 0.6])
    # Dropping the unfinished records would claim every object completes by 4 s.
    assert analysis.ecdf(r[r["state"] == "completed"]["response_time_s"])["cdf"].iloc[-1] == 1.0
    # failed censored at 3 s: at 4 s one of two at risk completes.
    c = analysis.response_time_cdf(r, failed="censored")
    assert c["cdf"].tolist() == pytest.approx([0.2, 0.4, 0.7])
    assert c["ccdf"].tolist() == pytest.approx([0.8, 0.6, 0.3])
    with pytest.raises(ValueError, match="failed must be"):
        analysis.response_time_cdf(r, failed="drop")


def test_record_metrics_censored_quantiles_and_counts() -> None:
    m = analysis.record_metrics(_censored_records(), kind="object", by=None, interval_s=(0.0, 5.0))
    row = m.loc[0]
    assert (row["count"], row["in_progress"], row["failed"]) == (3, 1, 1)
    assert row["unfinished_share"] == pytest.approx(0.4)
    # Median of the censored estimate: the CDF reaches 0.5 at 4 s (completed median: 2 s).
    assert row["p50_response_time_s"] == pytest.approx(4.0)
    # 0.9 is never reached (the failed object never completes).
    assert np.isnan(row["p90_response_time_s"])
    assert row["mean_response_time_s"] == pytest.approx(7.0 / 3.0)
    assert row["goodput_bps"] == pytest.approx(3 * 100 * 8 / 5.0)


def _backlog_records(growing: bool) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    starts = np.sort(rng.uniform(0, 100, 4000))
    # Steady: every object takes about 1 s. Growing: each takes longer the later it starts.
    dur = rng.exponential(1.0, starts.size) * (1 + (starts / 5 if growing else 0))
    ends = starts + dur
    state = np.where(ends > 100, "in_progress", "completed")
    ends = np.minimum(ends, 100.0)
    return pd.DataFrame(
        {
            "kind": "object",
            "state": state,
            "start_s": starts,
            "end_s": ends,
            "response_time_s": ends - starts,
        }
    )


def test_steady_state_tells_a_growing_backlog_from_a_steady_one() -> None:
    steady = analysis.steady_state(_backlog_records(False), warmup_s=10)
    assert steady["steady"], steady
    grow = analysis.steady_state(_backlog_records(True), warmup_s=10)
    assert not grow["steady"], grow
    assert "NO STEADY STATE" in grow["message"]
    assert grow["growth"] > 2
    assert grow["p_value"] < 0.01
    b = analysis.open_backlog(_backlog_records(False), points=11)
    assert b["open"].iloc[0] >= 1
    assert len(b) == 11


def test_one_way_delay_per_group_by_hand() -> None:
    flows = pd.DataFrame(
        {
            "flow_id": [0, 1, 2],
            "flow": ["a1", "a2", "b1"],
            "mean_owd_s": [0.010, 0.030, float("nan")],
        }
    )
    d = analysis.one_way_delay(flows).set_index("group")
    assert d.loc["a", "mean_owd_s"] == pytest.approx(0.020)
    assert "b" not in d.index


def test_name_columns_share_one_str_object_per_distinct_value() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    results = Simulation.from_toml(root / "examples" / "http.toml").run()
    kind = results.table("records")["kind"]
    assert len(kind) > 10
    # No Python object per row: equal names are one object.
    assert len({id(k) for k in kind}) == len(set(kind))
