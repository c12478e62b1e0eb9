"""ecnsim.models.dctcp: the DCTCP paper's §3.3-3.4 analysis on cases worked by hand.

Each case writes its arithmetic out, so a reader can redo it on paper.
Equation numbers are those of Alizadeh et al., SIGCOMM 2010.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ecnsim.models import (
    DctcpAnalysis,
    ModelError,
    alpha_approx,
    g_guideline,
    k_guideline,
    k_min_exact,
    solve_alpha,
)

#: C = 800,000 packets/s and RTT = 100 µs: C RTT = 80 packets; with K = 20, C RTT + K = 100.
C_800K = 800_000.0
RTT = 100e-6


def model(n: int, *, k: float = 20.0) -> DctcpAnalysis:
    return DctcpAnalysis(C_800K, RTT, k, n)


def _eq6(alpha: float) -> float:
    return alpha * alpha * (1.0 - alpha / 4.0)


# ---------------------------------------------------------------------------
# eq. 6: alpha solved exactly
# ---------------------------------------------------------------------------


def test_alpha_is_one_at_one_packet_per_flow() -> None:
    # W* = 1: right side (2 + 1) / 2^2 = 3/4; left side at alpha = 1: 1 (1 - 1/4) = 3/4.
    assert solve_alpha(1.0) == 1.0


@pytest.mark.parametrize("w_star", [1.0, 1.5, 2.0, 3.0, 10.0, 50.0, 100.0, 1e3, 1e6, 1e12])
def test_alpha_satisfies_eq6_to_rounding(w_star: float) -> None:
    a = solve_alpha(w_star)
    rhs = (2.0 * w_star + 1.0) / (w_star + 1.0) ** 2
    assert 0.0 < a <= 1.0
    assert _eq6(a) == pytest.approx(rhs, rel=4e-16, abs=0.0)


@pytest.mark.parametrize("w_star", np.geomspace(1.0, 1e9, 37).tolist())
def test_alpha_is_the_cubics_one_root_in_unit_interval(w_star: float) -> None:
    # eq. 6 times -4: alpha^3 - 4 alpha^2 + 4 r = 0; numpy's companion-matrix roots, independently.
    r = (2.0 * w_star + 1.0) / (w_star + 1.0) ** 2
    roots = np.roots([1.0, -4.0, 0.0, 4.0 * r])
    inside = [z.real for z in roots if abs(z.imag) < 1e-9 and 0.0 < z.real <= 1.0 + 1e-12]
    assert len(inside) == 1
    assert solve_alpha(w_star) == pytest.approx(inside[0], rel=1e-9)


def test_alpha_worked_case_w50() -> None:
    # W* = 50: r = 101 / 51^2 = 101 / 2601 = 0.038831...; sqrt(2/50) = 0.2 is the approximation.
    # Substituting alpha = 0.2022350685: 0.2022350685^2 = 0.04089902...; times (1 - 0.0505588) =
    # 0.0388311..., which is 101/2601.
    a = solve_alpha(50.0)
    assert a == pytest.approx(0.2022350685, abs=1e-10)
    assert alpha_approx(50.0) == pytest.approx(0.2)


def test_small_alpha_approximation_error() -> None:
    # Where sqrt(2/W*) departs from the exact root: +41 % at W* = 1 (sqrt 2 against 1),
    # +19 % at W* = 2 (1 against 0.838), +1.2 % at W* = 10, sign change between 10 and 20,
    # at most about -1.1 % beyond, and -> 0 like -sqrt(2) / (8 sqrt(W*)).
    def err(w: float) -> float:
        return alpha_approx(w) / solve_alpha(w) - 1.0

    assert err(1.0) == pytest.approx(math.sqrt(2.0) - 1.0)
    assert err(2.0) == pytest.approx(1.0 / 0.8383755458 - 1.0, rel=1e-9)
    assert 0.0 < err(10.0) < 0.013
    assert err(20.0) < 0.0
    grid = np.geomspace(20.0, 1e8, 400)
    assert max(abs(err(w)) for w in grid) < 0.0115
    assert all(err(w) > 0.05 for w in (1.0, 2.0, 3.0, 5.0))
    # eq. 6 for large W*: r = 2/W* - 3/W*^2 + ..., alpha = sqrt(r) (1 + alpha/8 + ...), so
    # sqrt(2/W*) / alpha - 1 = -sqrt(2/W*) / 8 + O(1/W*).
    for w in (1e8, 1e10, 1e12):
        assert err(w) * math.sqrt(w) == pytest.approx(-math.sqrt(2.0) / 8.0, rel=1e-3)


# ---------------------------------------------------------------------------
# eqs. 3, 8-11: the sawtooth's sizes
# ---------------------------------------------------------------------------


def test_one_packet_per_flow_case_by_hand() -> None:
    # N = 100 = C RTT + K: W* = 100/100 = 1, alpha = 1, D = (1 + 1) 1 / 2 = 1 packet,
    # A = 100 D = 100, Q_max = K + N = 120, Q_min = 120 - 100 = 20 = K, T_C = D = 1 round trip.
    m = model(100)
    assert m.bdp_packets == pytest.approx(80.0)
    assert m.w_star == pytest.approx(1.0)
    assert m.alpha == 1.0
    assert m.window_amplitude == pytest.approx(1.0)
    assert m.queue_amplitude == pytest.approx(100.0)
    assert m.q_max == 120.0
    assert m.q_min == pytest.approx(20.0)
    assert m.period_rtts == pytest.approx(1.0)
    assert m.period_s() == pytest.approx(100e-6)
    # The approximation: 1/2 sqrt(2 100 100) = 1/2 141.42 = 70.71, 29 % short of 100.
    assert m.queue_amplitude_approx == pytest.approx(50.0 * math.sqrt(2.0))
    # Queued clock: N (W_max^2 - W_min^2) / (2C) = 100 (4 - 1) / 1.6e6 = 187.5 µs, the 150
    # packets per flow-cycle... i.e. 100 flows x (1 + 2) packets / 2 sent at 800,000 packets/s.
    assert m.period_s("queued") == pytest.approx(187.5e-6)


def test_two_flows_case_by_hand() -> None:
    # N = 2: W* = 100/2 = 50, alpha = 0.2022350685 (above), D = 51 alpha / 2 = 5.156994,
    # A = 2 D = 51 alpha = 10.313988; approx 1/2 sqrt(2 2 100) = 1/2 20 = 10. Q_max = 22,
    # Q_min = 22 - 10.313988 = 11.686012; T_C = 5.157 round trips = 515.7 µs.
    m = model(2)
    assert m.w_star == pytest.approx(50.0)
    assert m.window_amplitude == pytest.approx(51 * 0.2022350685 / 2, abs=1e-8)
    assert m.queue_amplitude == pytest.approx(51 * 0.2022350685, abs=1e-8)
    assert m.queue_amplitude_approx == pytest.approx(10.0)
    assert m.q_max == 22.0
    assert m.q_min == pytest.approx(22.0 - 51 * 0.2022350685, abs=1e-8)
    assert m.period_s() == pytest.approx(51 * 0.2022350685 / 2 * 100e-6, rel=1e-9)
    assert not m.empties


def test_from_link_counts_packets_on_the_wire() -> None:
    # 10 Gb/s / (8 x 1500 B) = 833,333.3 packets/s; x 100 µs = 83.33 packets (D13's setup).
    m = DctcpAnalysis.from_link(10e9, 100e-6, 40, 10)
    assert m.capacity_pps == pytest.approx(1e10 / 12_000)
    assert m.bdp_packets == pytest.approx(250.0 / 3.0)
    assert m.w_star == pytest.approx((250.0 / 3.0 + 40.0) / 10.0)
    assert m.q_max == 50.0
    jumbo = DctcpAnalysis.from_link(10e9, 100e-6, 40, 10, packet_bytes=9000)
    assert jumbo.bdp_packets == pytest.approx(m.bdp_packets / 6.0)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 40, 99, 100])
def test_amplitude_identities(n: int) -> None:
    m = model(n)
    # eq. 8: D is the drop from W* + 1 to (W* + 1)(1 - alpha/2).
    assert m.window_amplitude == pytest.approx(m.w_max - m.w_min)
    # eq. 11: the queue at W* + 1 is N (W* + 1) - C RTT = K + N.
    assert m.n_flows * m.w_max - m.bdp_packets == pytest.approx(m.q_max)
    assert m.q_max - m.q_min == pytest.approx(m.queue_amplitude)
    # alpha <= 1 bounds D by half the peak window: A <= (C RTT + K + N) / 2.
    assert m.queue_amplitude <= (m.bdp_packets + m.k_packets + n) / 2.0 + 1e-9


def test_k_zero_limit_the_queue_empties() -> None:
    # K = 0, N = 1: W* = 80, Q_max = 0 + 1 = 1 packet, A = 81 alpha / 2 = 6.4: the queue
    # empties every cycle, which the model flags, and the sawtooth is clipped at 0.
    m = model(1, k=0.0)
    assert m.q_max == 1.0
    assert m.queue_amplitude == pytest.approx(81 * solve_alpha(80.0) / 2)
    assert m.empties
    q = m.sawtooth(np.linspace(0.0, 3 * m.period_s(), 301))
    assert q.min() == 0.0
    assert q.max() <= m.q_max + 1e-9


def test_n_large_limit() -> None:
    # N -> C RTT + K: alpha -> 1 and A -> N, so the sawtooth swings from K up to K + N.
    m = model(100)
    assert m.alpha == 1.0
    assert m.q_min == pytest.approx(20.0)
    # Past it W* < 1: the model has no root; the error names n_flows and the bound.
    with pytest.raises(ModelError, match=r"n_flows: must be at most C RTT \+ K = 100 packets"):
        model(101)


# ---------------------------------------------------------------------------
# §3.4: the guidelines
# ---------------------------------------------------------------------------


def test_k_guideline_by_hand() -> None:
    # eq. 13: K > C RTT / 7; 80 / 7 = 11.43 packets.
    assert k_guideline(80.0) == pytest.approx(80.0 / 7.0)
    assert model(1).k_guideline == pytest.approx(80.0 / 7.0)


def test_k_guideline_is_where_the_approximate_minimum_touches_zero() -> None:
    # eq. 12 with the approximate A: Q_min(N) = K + N - sqrt(N (C RTT + K) / 2). Over real N
    # its minimum is at N = (C RTT + K) / 8, equal to K - (C RTT + K) / 8: zero at K = C RTT / 7.
    c_rtt = 70.0
    k = k_guideline(c_rtt)  # 10 packets: C RTT + K = 80, minimum at N = 10: 10 + 10 - sqrt(400)
    n = np.linspace(0.5, c_rtt + k, 200_001)
    q_min = k + n - np.sqrt(n * (c_rtt + k) / 2.0)
    assert q_min.min() == pytest.approx(0.0, abs=1e-8)
    assert n[np.argmin(q_min)] == pytest.approx(10.0, abs=1e-3)
    assert DctcpAnalysis(700_000.0, 100e-6, 10.0, 10).q_min_approx == pytest.approx(0.0, abs=1e-12)


def test_k_min_exact_exceeds_the_guideline() -> None:
    # With alpha solved exactly the amplitude is larger where W* is small, so the K that keeps
    # Q_min > 0 for every N is above C RTT / 7 (about C RTT / 5.2).
    for c_rtt in (83.333, 100.0, 1000.0):
        k = k_min_exact(c_rtt)
        assert c_rtt / 7.0 < k < c_rtt / 5.0
        # Just above it no N empties the queue; just below it one does.
        hi, lo = k * 1.001, k * 0.999
        above = [DctcpAnalysis(c_rtt / RTT, RTT, hi, n) for n in range(1, int(c_rtt + hi) + 1)]
        below = [DctcpAnalysis(c_rtt / RTT, RTT, lo, n) for n in range(1, int(c_rtt + lo) + 1)]
        assert not any(m.empties for m in above)
        assert any(m.empties for m in below)


def test_g_guideline_by_hand() -> None:
    # eq. 15: C RTT = 180, K = 20: 2 (200) = 400, sqrt = 20, g < 1.386 / 20 = 0.0693.
    assert g_guideline(180.0, 20.0) == pytest.approx(2.0 * math.log(2.0) / 20.0)
    assert g_guideline(180.0, 20.0) == pytest.approx(1.386 / 20.0, rel=1e-3)
    # eq. 14 -> 15: with N = 1 the approximate period is T_C = 1/2 sqrt(2 (C RTT + K)) = 10
    # round trips, and g T_C = ln 2 (the small-g form of (1 - g)^T_C = 1/2).
    assert g_guideline(180.0, 20.0) * 0.5 * math.sqrt(400.0) == pytest.approx(math.log(2.0))


# ---------------------------------------------------------------------------
# The sawtooth Q(t)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 10, 40])
def test_sawtooth_base_clock(n: int) -> None:
    m = model(n)
    p = m.period_s()
    t = np.array([0.0, 0.25 * p, 0.5 * p, p * (1.0 - 1e-12), p, 2.5 * p, -0.5 * p])
    q = m.sawtooth(t)
    # A cut at t0 = 0 (Q_min), rising one packet per flow per RTT: N / RTT packets/s.
    assert q[0] == pytest.approx(m.q_min)
    assert q[1] - q[0] == pytest.approx(n * 0.25 * p / RTT)
    assert q[3] == pytest.approx(m.q_max, abs=1e-6)
    assert q[4] == pytest.approx(m.q_min)  # the next cut
    assert q[5] == pytest.approx(q[2])  # periodic, forwards and backwards
    assert q[6] == pytest.approx(q[2])
    # A linear ramp: its time average is the midpoint.
    dense = m.sawtooth(np.linspace(0.0, p, 100_001)[:-1])
    assert dense.mean() == pytest.approx((m.q_max + m.q_min) / 2.0, rel=1e-4)


def test_sawtooth_queued_clock_and_phase() -> None:
    m = model(10)
    p = m.period_s("queued")
    t = np.linspace(0.0, p, 10_001)
    q = m.sawtooth(t, t0_s=0.0, round_trip="queued")
    assert q[0] == pytest.approx(m.q_min)
    assert q[-2] == pytest.approx(m.q_max, rel=1e-3)
    # dW/dt = C / (N W): the queue rises ever more slowly (concave), unlike the base clock.
    assert np.all(np.diff(q[:-1], 2) < 0.0)
    # The queued cycle is longer: each round trip also waits behind Q >= Q_min > 0.
    assert p > m.period_s("base")
    # t0 shifts the phase.
    shifted = m.sawtooth(t + 1e-3, t0_s=1e-3, round_trip="queued")
    np.testing.assert_allclose(shifted, q)


# ---------------------------------------------------------------------------
# Bad input names its argument
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"capacity_pps": 0.0}, "capacity_pps: must be > 0"),
        ({"capacity_pps": math.inf}, "capacity_pps: must be finite"),
        ({"rtt_s": -1e-6}, "rtt_s: must be > 0"),
        ({"rtt_s": "100us"}, "rtt_s: must be a number"),
        ({"k_packets": -1.0}, "k_packets: must be >= 0"),
        ({"n_flows": 0}, "n_flows: must be a whole number >= 1"),
        ({"n_flows": 2.5}, "n_flows: must be a whole number >= 1"),
        ({"n_flows": True}, "n_flows: must be a whole number >= 1"),
    ],
)
def test_bad_input(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "capacity_pps": C_800K,
        "rtt_s": RTT,
        "k_packets": 20.0,
        "n_flows": 2,
    }
    args.update(kwargs)
    with pytest.raises(ModelError, match=message):
        DctcpAnalysis(**args)  # type: ignore[arg-type]


def test_bad_input_elsewhere() -> None:
    with pytest.raises(ModelError, match="w_star: must be >= 1 packet"):
        solve_alpha(0.5)
    with pytest.raises(ModelError, match="packet_bytes: must be > 0"):
        DctcpAnalysis.from_link(1e9, 1e-4, 20, 2, packet_bytes=0)
    with pytest.raises(ModelError, match="rate_bps: must be > 0"):
        DctcpAnalysis.from_link(-1e9, 1e-4, 20, 2)
    with pytest.raises(ModelError, match="round_trip: must be one of base, queued"):
        model(2).period_s("wall")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="t_s: must be finite"):
        model(2).sawtooth([0.0, math.nan])
    with pytest.raises(ModelError, match="k_packets: must be >= 0"):
        g_guideline(80.0, -1.0)


def test_summary_names_every_quantity() -> None:
    s = model(2).summary()
    assert s["q_max"] == 22.0
    assert s["period_s_queued"] == pytest.approx(model(2).period_s("queued"))
    assert set(s) >= {"alpha", "alpha_approx", "queue_amplitude", "k_guideline", "g_guideline"}
