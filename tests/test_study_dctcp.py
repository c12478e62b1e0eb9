"""The dctcp study (STUDIES.md §6): its points, its measurement of the sawtooth, and the
analysis it draws beside the simulated queue (``ecnsim.models.dctcp``)."""

from __future__ import annotations

import collections
import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from ecnsim import Simulation, studies
from ecnsim.models.dctcp import DctcpAnalysis
from ecnsim.studies.dctcp import (
    DCTCP,
    TCP,
    DctcpParams,
    DctcpStudy,
    analysis_rtt_s,
    background_pairs,
    d4_phases,
    derive,
    pt,
    sawtooth_stats,
)


def test_every_point_of_the_full_grid_is_a_valid_scenario() -> None:
    study = DctcpStudy()
    p = DctcpParams()
    points = study.grid(p)
    # D13 3, D1 1 + 6, D2 1 + 7, D6 2 x 9 x 2, D7 8 x 2, D8 2, D9 2, D3 3, D4 2, D4m 3 x 2,
    # D10 4.
    assert len(points) == 3 + 7 + 8 + 36 + 16 + 2 + 2 + 3 + 2 + 6 + 4
    assert len({tuple(sorted(x.items())) for x in points}) == len(points)
    for point in points:
        study.scenario(p, point).check()


def test_a_scenario_set_of_a_per_point_field_is_refused(cli: Any) -> None:
    """--set tcp.min_rto would run D6's rto_ms = 10 and 300 points alike under both labels:
    refused, naming the study parameters that give the axis (with --only too)."""
    study = DctcpStudy()
    with pytest.raises(studies.StudyError) as e:
        studies.resolve_params(study, ["tcp.min_rto=1s"], quick=True)
    assert "--set tcp.min_rto: study 'dctcp' sets tcp.min_rto per point" in str(e.value)
    assert "min_rto_long_ms, min_rto_short_ms or incast_rto_ms (its rto_ms axis)" in str(e.value)
    # A path the study sets alike in every point stays a plain override.
    p = studies.resolve_params(study, ["tcp.syn_retries=3"], quick=True)
    assert p.scenario_set == (("tcp.syn_retries", 3),)
    proc = cli(
        "study", "run", "dctcp", "--quick", "--only", "experiment=D6", "--set", "tcp.min_rto=1s"
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: --set tcp.min_rto: study 'dctcp' sets"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_analysis_rtt_is_four_propagation_delays_plus_serialisation() -> None:
    p = DctcpParams()
    # 100 µs of propagation, a 1500-byte packet and a 40-byte ACK at both hops of 10 Gb/s.
    assert analysis_rtt_s(p, 10e9) == pytest.approx(100e-6 + 2 * 1540 * 8 / 10e9)


def test_the_overlay_is_the_model_of_ecnsim_models_dctcp() -> None:
    """The table's and figure's model is DctcpAnalysis at the study's link, RTT and K."""
    study = DctcpStudy()
    p = DctcpParams()
    for n in p.d13_n:
        m = study._model(p, n)
        ref = DctcpAnalysis.from_link(10e9, analysis_rtt_s(p, 10e9), 40, n)
        assert m == ref
        # Q_max = K + N (eq. 11), whatever the RTT.
        assert m.q_max == 40 + n
    # The job hands derive the model's numbers, for d7's errors.
    ctx = study.job(p, pt("D13", DCTCP, n=10, k=40, rto_ms=300)).context
    ref = DctcpAnalysis.from_link(10e9, analysis_rtt_s(p, 10e9), 40, 10)
    assert ctx["model_q_max"] == 50
    assert ctx["model_amplitude"] == pytest.approx(ref.queue_amplitude)
    assert ctx["model_period_s"] == pytest.approx(ref.period_s("base"))


def test_sawtooth_stats_reads_the_model_sawtooth_back() -> None:
    """Measured on the model's own sawtooth, the period, maximum and amplitude are the model's
    (to a sample): the measurement the study applies to the simulated queue."""
    m = DctcpAnalysis.from_link(10e9, 100e-6, 40, 10)
    dt = 1e-6
    t = np.arange(0, 40 * m.period_s(), dt)
    q = m.sawtooth(t)
    s = sawtooth_stats(q, dt)
    assert s["period_s"] == pytest.approx(m.period_s(), abs=2 * dt)
    assert s["q_max"] == pytest.approx(m.q_max, abs=0.1)
    assert s["amplitude"] == pytest.approx(m.queue_amplitude, rel=0.02)
    # A flat queue has no cycle.
    assert math.isnan(sawtooth_stats(np.full(1000, 5.0), dt)["period_s"])


def test_d13_queue_peaks_at_k_plus_n() -> None:
    """A short D13 run: DCTCP fills the 10 Gb/s port without a drop and its per-cycle maximum
    sits at K + N (eq. 11) within a few packets."""
    study = DctcpStudy()
    p = dataclasses.replace(DctcpParams(), d13_duration_s=0.03, d13_warmup_s=0.01)
    point = pt("D13", DCTCP, n=2, k=40, rto_ms=300)
    results = Simulation(study.scenario(p, point)).run()
    out = derive(results, None, study.job(p, point).context)
    m = out["metrics"].iloc[0]
    assert m["drops"] == 0
    assert m["utilization"] > 0.99
    assert abs(m["sim_q_max"] - 42) <= 3
    assert len(out["trace"]) >= 200


def test_background_pairs_are_fixed_and_two_per_host() -> None:
    p = DctcpParams()
    pairs = background_pairs(p)
    assert pairs == background_pairs(p)  # no dependence on anything but the parameters
    assert len(pairs) == 2 * p.d10_background_hosts
    senders = collections.Counter(s for s, _ in pairs)
    assert set(senders.values()) == {2}
    assert all(s != d for s, d in pairs)
    ring = background_pairs(dataclasses.replace(p, d10_pattern="ring"))
    assert collections.Counter(d for _, d in ring) == collections.Counter(
        {i: 2 for i in range(p.d10_background_hosts)}
    )


def test_the_schemes_queues_and_tcp() -> None:
    study = DctcpStudy()
    p = DctcpParams()
    dctcp = study.scenario(p, pt("D1", DCTCP, n=2, k=20, rto_ms=300)).to_dict()
    tcp = study.scenario(p, pt("D6", TCP, n=10, rto_ms=10)).to_dict()
    port = dctcp["links"][0]["queue_ba"]
    assert port["type"] == "threshold"
    assert port["k"] == 20
    assert port["mark_at"] == "arrival"
    assert dctcp["nodes"][0]["shared_buffer"]["alpha"] == pytest.approx(7 / 33)
    assert dctcp["tcp"]["cc"] == "dctcp"
    assert dctcp["tcp"]["dctcp_shift_g"] == 4
    assert tcp["links"][0]["queue_ba"] == {"type": "droptail", "limit_packets": 100}
    assert tcp["tcp"]["cc"] == "sack"
    assert tcp["tcp"]["ecn"] == "off"
    assert tcp["tcp"]["min_rto"] == "10ms"
    assert tcp["apps"][0]["model"]["response"] == 100_000


def test_bad_parameters_name_the_field() -> None:
    study = studies.get("dctcp")
    with pytest.raises(studies.StudyError, match="g_shift"):
        studies.resolve_params(study, ["g_shift=0"])
    with pytest.raises(studies.StudyError, match="mark_at"):
        studies.resolve_params(study, ["mark_at=middle"])
    with pytest.raises(studies.StudyError, match="host_burstiness"):
        studies.resolve_params(study, ["host_burstiness=gro"])
    with pytest.raises(studies.StudyError, match="tso_segments"):
        studies.resolve_params(study, ["tso_segments=0"])


def test_host_burstiness_puts_offload_on_the_k_experiments_only() -> None:
    study = DctcpStudy()
    none = DctcpParams()
    tso = dataclasses.replace(none, host_burstiness="tso")
    assert none.tso_segments == 44  # 64 KB large-send frames of 1460-B segments
    for point in (
        pt("D1", DCTCP, n=2, k=20, rto_ms=300),
        pt("D2", TCP, n=2, rto_ms=300),
        pt("D13", DCTCP, n=10, k=40, rto_ms=300),
    ):
        assert "tso_segments" not in study.scenario(none, point).to_dict()["tcp"]
        assert study.scenario(tso, point).to_dict()["tcp"]["tso_segments"] == 44
    for point in (pt("D6", TCP, n=10, rto_ms=10), pt("D4m", DCTCP, n=90, k=20, rto_ms=300)):
        assert "tso_segments" not in study.scenario(tso, point).to_dict()["tcp"]
    reading = next(r for r in study.readings(none) if r.id == "host_burstiness")
    assert [a.settings for a in reading.alternatives] == [
        {"host_burstiness": "none"},
        {"host_burstiness": "tso"},
    ]


def test_d4m_cell_orders_dctcp_against_tcp_on_the_worst_interval() -> None:
    p = DctcpParams()
    d4 = next(f for f in DctcpStudy().findings(p) if f.id == "d4")
    (cell,) = [c for c in d4.cells(p) if c.point["experiment"] == "D4m"]
    assert cell.metric == "jain_min"
    assert isinstance(cell.ref, dict)
    assert (cell.point["scheme"], cell.ref["scheme"]) == (DCTCP, TCP)
    assert cell.point["n"] == cell.ref["n"] == max(p.d4m_flows)


def test_readings_and_findings_use_existing_fields() -> None:
    study = DctcpStudy()
    p = DctcpParams()
    fields = {f.name for f in dataclasses.fields(p)}
    for r in study.readings(p):
        for a in r.alternatives:
            assert set(a.settings) <= fields
    axes = set(pt("D1", DCTCP))
    for f in study.findings(p):
        cells = f.cells(p)
        assert cells, f.id
        for c in cells:
            assert set(c.point) == axes


def test_d4_starts_then_stops_the_flows_one_by_one_step_apart() -> None:
    # STUDIES.md §6 D4: one long flow, four more started and then stopped one by one, 30 s apart.
    assert d4_phases(5) == [
        [1],
        [1, 2],
        [1, 2, 3],
        [1, 2, 3, 4],
        [1, 2, 3, 4, 5],
        [1, 3, 4, 5],
        [1, 4, 5],
        [1, 5],
        [1],
    ]
    p = DctcpParams()
    sc = DctcpStudy().scenario(p, pt("D4", DCTCP, n=5, k=20, rto_ms=300)).to_dict()
    assert sc["simulation"]["duration"] == "270s"
    flows = {f["name"]: f for f in sc["flows"]}
    assert [flows[f"long{i}"]["start"] for i in range(1, 6)] == ["0s", "30s", "60s", "90s", "120s"]
    assert "stop" not in flows["long1"]
    assert [flows[f"long{i}"]["stop"] for i in range(2, 6)] == ["150s", "180s", "210s", "240s"]


class _Series:
    """What the D4 metrics read of a run: each flow's cumulative bytes over time."""

    def __init__(self, rates_mbps: dict[str, list[float]], dt: float) -> None:
        rows = []
        for flow, rates in rates_mbps.items():
            total = 0.0
            rows.append((flow, 0.0, 0.0))
            for i, r in enumerate(rates):
                total += r * 1e6 / 8 * dt
                rows.append((flow, (i + 1) * dt, total))
        import pandas as pd

        self.flow_series = pd.DataFrame(rows, columns=["flow", "time_s", "bytes_delivered"])


def test_d4_jain_counts_only_the_flows_active_in_each_phase() -> None:
    # Two flows, three phases of 1 s (sampled every 0.25 s): flow 2 runs in phase 2 only,
    # and gets a third of the link there.
    phases = d4_phases(2)
    assert phases == [[1], [1, 2], [1]]
    r1 = [900.0] * 4 + [600.0] * 4 + [900.0] * 4
    r2 = [0.0] * 4 + [300.0] * 4 + [0.0] * 4
    out = derive(
        _Series({"long1": r1, "long2": r2}, 0.25),
        None,
        {"kind": "d4", "step_s": 1.0, "flows": ["long1", "long2"]},
    )
    m = out["metrics"].iloc[0]
    # Jain's index of (600, 300): 900^2 / (2 (600^2 + 300^2)) = 0.9; the one-flow phases are 1.
    assert m["jain_2"] == pytest.approx(0.9)
    assert m["jain_1"] == m["jain_3"] == 1.0
    assert m["jain_min"] == pytest.approx(0.9)
    assert m["jain_all"] == pytest.approx(0.9)


def test_d4m_jain_per_interval_after_the_warm_up() -> None:
    # Two flows sampled every 0.5 s for 4 s: equal after 1 s, unequal in the last second.
    r1 = [1000.0, 1000.0, 500.0, 500.0, 500.0, 500.0, 900.0, 900.0]
    r2 = [0.0, 0.0, 500.0, 500.0, 500.0, 500.0, 100.0, 100.0]
    ctx = {
        "kind": "d4m",
        "flows": ["a", "b"],
        "warmup_s": 1.0,
        "interval_s": 1.0,
        "duration_s": 4.0,
    }
    m = derive(_Series({"a": r1, "b": r2}, 0.5), None, ctx)["metrics"].iloc[0]
    last = 1000.0**2 / (2 * (900.0**2 + 100.0**2))
    assert m["jain_min"] == pytest.approx(last)
    assert m["jain_mean"] == pytest.approx((1 + 1 + last) / 3)
    # Over 1-4 s: a = 633.3, b = 366.7.
    a, b = 1900 / 3, 1100 / 3
    assert m["jain_whole"] == pytest.approx((a + b) ** 2 / (2 * (a * a + b * b)))
