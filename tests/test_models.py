"""ecnsim.models: the M[X]/M/1 model against closed forms, hand-worked bursts and Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecnsim import (
    Distribution,
    Scenario,
    Simulation,
    SpecError,
    load_toml,
    models,
    workload_defaults,
)
from ecnsim.models import (
    MXM1,
    BurstSizes,
    FlowSizes,
    ModelError,
    burst_sizes,
    from_spec,
    simulate_mx_m1,
    slow_start_bursts,
    window_packets,
)
from ecnsim.scenario import workloads as wl

from .conftest import ROOT

#: 1500-byte packets at 100 Mb/s: T = 0.12 ms.
T_100M = 8 * 1500 / 100e6

#: The web sessions' defaults, from the core (the ecnplus study's workload).
WEB = workload_defaults("websessions")
WEB_OBJECT_SIZES = WEB["object_size"]
WEB_RECEIVE_WINDOWS = WEB["rcv_window"]


def _d(spec: dict[str, object]) -> Distribution:
    return Distribution(spec)


@pytest.fixture(scope="module")
def web_bursts() -> BurstSizes:
    """The study's bursts: web object sizes, 8/16/64 KB windows, IW 2, MSS 1460."""
    return burst_sizes(WEB_OBJECT_SIZES, rcv_window=WEB_RECEIVE_WINDOWS, iw=2, mss=1460)


# ---------------------------------------------------------------------------
# Distributions: the core's laws, as the model reads them
# ---------------------------------------------------------------------------

ALL_DISTRIBUTIONS = [
    wl.constant(4000.0),
    wl.uniform(1000.0, 5000.0),
    wl.exponential(3000.0),
    wl.pareto(1.5, 2000.0),
    wl.bounded_pareto(1.2, 1000.0, 1e5),
    wl.lognormal(8.0, 1.5),
    wl.lognormal_pareto(8.0, 1.5, 20000.0, 1.3),
    wl.empirical(points=[(100.0, 0.2), (200.0, 0.5), (200.0, 0.6), (1000.0, 1.0)]),
    wl.discrete([1000.0, 2000.0, 3000.0], [1.0, 1.0, 2.0]),
]


@pytest.mark.parametrize("spec", ALL_DISTRIBUTIONS, ids=lambda d: str(d["type"]))
def test_the_model_reads_the_cores_law(spec: dict[str, object]) -> None:
    # One implementation: the model's distribution is the core's, for tables and objects alike.
    dist = from_spec(spec)
    assert isinstance(dist, Distribution)
    assert dist == Distribution(spec)
    assert from_spec(dist) is dist
    assert models.Distribution is Distribution


@pytest.mark.parametrize("spec", ALL_DISTRIBUTIONS, ids=lambda d: str(d["type"]))
def test_partial_mean_is_the_integral_of_the_survival_function(spec: dict[str, object]) -> None:
    # E[X; X > t] = t P(X > t) + int_t^inf P(X > x) dx, by quadrature on a log grid.
    dist = _d(spec)
    mean = dist.mean
    assert mean is not None
    for t in (0.5 * mean, mean, 3.0 * mean):
        top = dist.upper if math.isfinite(dist.upper) else 1e13
        x = np.unique(np.concatenate([np.geomspace(t, max(top, 2 * t), 400_001), [t]]))
        integral = float(np.trapezoid(dist.sf(x), x))
        # The Pareto tails beyond 1e13 in closed form; the others are negligible there.
        if spec["type"] in ("pareto", "lognormal_pareto"):
            integral += float(dist.partial_mean(1e13)) - 1e13 * float(dist.sf(1e13))
        expected = t * float(dist.sf(t)) + integral
        assert float(dist.partial_mean(t)) == pytest.approx(expected, rel=2e-5, abs=1e-9)
    assert float(dist.partial_mean(-1.0)) == pytest.approx(mean, rel=1e-12)


@pytest.mark.parametrize("spec", ALL_DISTRIBUTIONS, ids=lambda d: str(d["type"]))
def test_isf_inverts_sf(spec: dict[str, object]) -> None:
    dist = _d(spec)
    # The lognormal laws use the core's normal approximations: the distribution function is
    # Numerical Recipes' erfcc (1.2e-7 relative), the quantile Acklam's (1.2e-9 relative).
    tol = 2e-7 if "lognormal" in str(spec["type"]) else 1e-12
    for p in (0.9, 0.5, 0.1, 1e-3):
        x = float(dist.isf(p))
        assert float(dist.sf(x)) <= p + tol
        # Any smaller value leaves more than p above it.
        assert float(dist.sf(x * (1 - 1e-9) - 1e-9)) >= p - tol or x == 0.0


def test_survival_keeps_its_precision_in_a_heavy_tail() -> None:
    d = _d(wl.pareto(2.0, 1.0))
    assert float(d.sf(1e9)) == pytest.approx(1e-18, rel=1e-12)
    assert float(d.cdf(1e9)) == 1.0  # 1 - cdf would have lost it


def test_web_object_sizes_match_their_description() -> None:
    # Smith et al. 2001 as the study states it: mean about 7.2 KB, about 80 % of the
    # bytes in the largest 15 % (ecnsim's fit gives 78 %; the core's doc says so).
    assert WEB_OBJECT_SIZES.mean == pytest.approx(7200, abs=100)
    assert WEB_OBJECT_SIZES.top_share(0.15) == pytest.approx(0.78, abs=0.01)
    assert WEB_OBJECT_SIZES.spec == {
        "type": "bounded_pareto",
        "shape": 0.9,
        "min": 760.0,
        "max": 1_000_000.0,
    }


def test_scenario_builders_and_models_share_distributions() -> None:
    # ecnsim.scenario.workloads builds the scenario's tables; the model reads the same
    # tables through the core, and the core's defaults are the study's workload.
    assert from_spec(wl.bounded_pareto(0.9, 760, 1_000_000)) == WEB_OBJECT_SIZES
    assert from_spec(wl.discrete([8000, 16000, 64000], [0.35, 0.20, 0.45])) == WEB_RECEIVE_WINDOWS
    sc = load_toml(ROOT / "examples" / "websessions.toml").to_dict()
    sc["apps"][0]["model"] = wl.websessions(
        session_rate=1.0, object_size=WEB_OBJECT_SIZES.spec, rcv_window=WEB_RECEIVE_WINDOWS.spec
    )
    Simulation(Scenario.from_dict(sc))  # the core validates the tables
    # The core's shipped measured tables are readable by the model too.
    mah = from_spec({"type": "empirical", "table": "mah97_reply"})
    assert FlowSizes.from_distribution(mah).mean() > 1.0


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"type": "gamma"}, "object_size", "unknown variant `gamma`"),
        ({"type": "pareto", "shape": 1.2}, "object_size", "missing field `scale`"),
        ({"type": "pareto", "shape": -1, "scale": 1}, "object_size.shape", "must be > 0, got -1"),
        ({"type": "pareto", "shape": 1, "scale": 1, "x": 2}, "object_size", "unknown field `x`"),
        ({"type": "bounded_pareto", "shape": 1, "min": 5, "max": 2}, "object_size.max", "> min"),
        ({"type": "empirical", "points": [[1, 0.5], [2, 0.9]]}, "object_size.points", "last cdf"),
        (
            {"type": "discrete", "values": [1, 2], "weights": [1]},
            "object_size.weights",
            "one weight",
        ),
        ({"type": "uniform", "min": 1, "max": float("nan")}, "object_size.max", "finite"),
        ([1, 2], "object_size", "distribution table"),
    ],
)
def test_bad_distribution_names_the_field(spec: object, path: str, message: str) -> None:
    with pytest.raises(ModelError, match=message) as err:
        from_spec(spec, "object_size")  # type: ignore[arg-type]
    assert err.value.path == path
    assert str(err.value).startswith(f"{path}: ")
    assert isinstance(err.value, SpecError)
    assert isinstance(err.value, ValueError)


# ---------------------------------------------------------------------------
# Flow sizes in packets
# ---------------------------------------------------------------------------


def test_flow_packets_round_as_the_core_does() -> None:
    # max(1, round(x)) bytes, then ceil(bytes / mss): 0.2 B -> 1 B -> 1 packet;
    # 1460.4 B -> 1460 B -> 1 packet; 1460.5 B -> 1461 B -> 2 packets.
    d = wl.discrete([0.2, 1460.4, 1460.5, 2920.0, 2921.0], [1, 1, 1, 1, 1])
    fs = FlowSizes.from_distribution(d, mss=1460)
    assert fs.pmf.tolist() == pytest.approx([0.0, 0.4, 0.4, 0.2])
    # A continuous size: P(S > s) = P(X >= s * mss + 1/2).
    u = wl.uniform(0.0, 4380.0)
    fs = FlowSizes.from_distribution(u, mss=1460)
    assert fs.pmf[1:].tolist() == pytest.approx([1460.5 / 4380, 1460 / 4380, 1459.5 / 4380])


def test_flow_sizes_from_a_quantile_function_and_samples_match_the_exact_table() -> None:
    exact = FlowSizes.from_distribution(WEB_OBJECT_SIZES)
    by_quantile = FlowSizes.from_quantile(WEB_OBJECT_SIZES.quantile)
    n = len(exact.pmf)
    assert np.max(np.abs(by_quantile.pmf[:n] - exact.pmf)) < 2e-5
    rng = np.random.default_rng(7)
    draws = WEB_OBJECT_SIZES.quantile(rng.uniform(size=200_000))
    sampled = FlowSizes.from_samples(draws)
    k = min(len(sampled.pmf), 20)
    se = np.sqrt(exact.pmf[:k] * (1 - exact.pmf[:k]) / 200_000)
    assert np.all(np.abs(sampled.pmf[:k] - exact.pmf[:k]) <= 5 * se + 1e-12)


def test_unbounded_sizes_keep_their_tail_in_closed_form() -> None:
    # Pareto 1.2: 23 % of the bytes lie beyond 1024 packets; the tail terms carry them.
    d = wl.pareto(1.2, 1000.0)
    small = FlowSizes.from_distribution(d, max_packets=1 << 10)
    large = FlowSizes.from_distribution(d, max_packets=1 << 19)
    assert small.tail_mass > 1e-4
    assert small.mean() == pytest.approx(large.mean(), rel=1e-6)
    a = burst_sizes(small, rcv_window=WEB_RECEIVE_WINDOWS)
    b = burst_sizes(large, rcv_window=WEB_RECEIVE_WINDOWS)
    assert np.max(np.abs(a.pmf - b.pmf)) < 1e-6
    assert a.bursts_per_flow == pytest.approx(b.bursts_per_flow, rel=1e-6)


def test_core_draws_the_sizes_the_model_assumes() -> None:
    # The core's web sessions with their default object sizes (WEB_OBJECT_SIZES is
    # app/websessions.rs's default) over a fast, uncongested link: the packets per object, as the
    # core rounds sizes, against the model's table. Objects requested in the last 5 s are
    # left out so that no size is favoured by finishing sooner.
    sc = load_toml(ROOT / "examples" / "websessions.toml").to_dict()
    sc["simulation"]["duration"] = "40s"
    sc["links"][0]["rate"] = "1Gbps"
    sc["links"][0]["queue"] = {"type": "droptail", "limit_packets": 2000}
    for link in sc["links"][1:]:
        link["rate"] = "10Gbps"
    sc["apps"][0]["model"] = {"type": "websessions", "session_rate": 20.0}
    records = Simulation(Scenario.from_dict(sc)).run().table("records").to_pandas()
    objects = records[(records["kind"] == "object") & (records["start_s"] < 35.0)]
    n = len(objects)
    assert n > 10_000
    sizes = objects["response_bytes"].to_numpy(dtype=float)
    assert sizes.min() >= 760
    assert sizes.max() <= 1_000_000
    got = np.bincount(np.ceil(sizes / 1460).astype(int))
    exact = FlowSizes.from_distribution(WEB_OBJECT_SIZES, mss=1460).pmf
    for k in range(1, 12):
        se = math.sqrt(exact[k] * (1 - exact[k]) / n)
        assert abs(got[k] / n - exact[k]) <= 5 * se, (k, got[k] / n, exact[k])
    tail = float(exact[12:].sum())
    assert abs(got[12:].sum() / n - tail) <= 5 * math.sqrt(tail * (1 - tail) / n)


def test_infinite_mean_sizes_are_refused() -> None:
    with pytest.raises(ModelError, match="infinite") as err:
        FlowSizes.from_distribution(wl.pareto(1.0, 1000.0))
    assert err.value.path == "flow_sizes"


# ---------------------------------------------------------------------------
# The flow-to-burst mapping
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("packets", "iw", "w_max", "bursts"),
    [
        (1, 2, None, (1,)),
        (2, 2, None, (2,)),
        (3, 2, None, (2, 1)),
        (6, 2, None, (2, 4)),
        (7, 2, None, (2, 4, 1)),
        (10, 2, None, (2, 4, 4)),
        (14, 2, None, (2, 4, 8)),
        (100, 2, None, (2, 4, 8, 16, 32, 38)),
        (20, 2, 8, (2, 4, 8, 6)),
        (30, 2, 8, (2, 4, 8, 8, 8)),
        (10, 2, 3, (2, 3, 3, 2)),
        (7, 1, None, (1, 2, 4)),
        (5, 2, 1, (1, 1, 1, 1, 1)),
        # The study's windows at MSS 1460: 8 KB = 5, 16 KB = 10, 64 KB = 43 packets.
        (20, 2, 5, (2, 4, 5, 5, 4)),
        (40, 2, 10, (2, 4, 8, 10, 10, 6)),
        (100, 2, 43, (2, 4, 8, 16, 32, 38)),
        (120, 2, 43, (2, 4, 8, 16, 32, 43, 15)),
    ],
)
def test_slow_start_bursts_hand_worked(
    packets: int, iw: int, w_max: int | None, bursts: tuple[int, ...]
) -> None:
    assert slow_start_bursts(packets, iw=iw, w_max=w_max) == bursts
    assert sum(bursts) == packets


def test_receive_windows_in_whole_segments() -> None:
    assert [window_packets(w, 1460) for w in (8000, 16000, 64000)] == [5, 10, 43]
    assert window_packets(1460, 1460) == 1
    assert window_packets(100, 1460) == 1  # at least one segment


def test_burst_distribution_hand_worked() -> None:
    # Flows of 1 or 10 packets, equally likely, no window cap: (1) and (2, 4, 4).
    # Bursts per flow 2; sizes 1, 2, 4 with weights 0.5, 0.5, 1.
    b = burst_sizes(FlowSizes.from_pmf({1: 0.5, 10: 0.5}), iw=2)
    assert b.pmf.tolist() == pytest.approx([0, 0.25, 0.25, 0, 0.5])
    assert b.bursts_per_flow == pytest.approx(2.0)
    # One 20-packet flow, W_max 8 or 4 equally likely: (2, 4, 8, 6) and (2, 4, 4, 4, 4, 2).
    b = burst_sizes(FlowSizes.from_pmf({20: 1.0}), w_max={8: 0.5, 4: 0.5})
    expected = np.zeros(9)
    expected[[2, 4, 6, 8]] = [1.5, 2.5, 0.5, 0.5]
    assert b.pmf.tolist() == pytest.approx((expected / 5.0).tolist())
    assert b.bursts_per_flow == pytest.approx(5.0)


def test_receive_windows_in_bytes_equal_windows_in_packets(web_bursts: BurstSizes) -> None:
    in_packets = burst_sizes(WEB_OBJECT_SIZES, w_max={5: 0.35, 10: 0.20, 43: 0.45})
    # (the core's window probabilities are differences of its cumulative table: equal to 1e-15)
    assert np.allclose(in_packets.pmf, web_bursts.pmf, rtol=1e-12, atol=1e-15)
    assert web_bursts.max == 43
    # Every packet of every flow is in exactly one burst.
    assert web_bursts.mean() * web_bursts.bursts_per_flow == pytest.approx(
        web_bursts.packets_per_flow, rel=1e-12
    )


@given(
    pmf=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=60).filter(lambda p: sum(p[1:]) > 0),
    iw=st.integers(1, 4),
    w_max=st.one_of(st.none(), st.integers(1, 30)),
)
def test_burst_distribution_is_the_mapping_applied_to_every_flow(
    pmf: list[float], iw: int, w_max: int | None
) -> None:
    p = np.array([0.0, *pmf[1:]])
    p /= p.sum()
    b = burst_sizes(FlowSizes(p), iw=iw, w_max=w_max)
    counts: dict[int, float] = {}
    for s in range(1, len(p)):
        for x in slow_start_bursts(s, iw=iw, w_max=w_max):
            counts[x] = counts.get(x, 0.0) + p[s]
    total = sum(counts.values())
    expected = np.zeros(max(max(counts), b.max) + 1)
    for k, c in counts.items():
        expected[k] = c / total
    got = np.pad(b.pmf, (0, len(expected) - len(b.pmf)))
    assert got.tolist() == pytest.approx(expected.tolist(), abs=1e-12)
    assert b.bursts_per_flow == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"rcv_window": wl.pareto(1.5, 8000.0)}, "rcv_window.type"),
        ({"rcv_window": 8000.0, "w_max": 5}, "w_max"),
        ({"w_max": 0}, "w_max"),
        ({"iw": 0}, "iw"),
        ({"mss": 1.5}, "mss"),
    ],
)
def test_bad_burst_inputs_name_the_argument(kwargs: dict[str, object], path: str) -> None:
    with pytest.raises(ModelError) as err:
        burst_sizes(WEB_OBJECT_SIZES, **kwargs)  # type: ignore[arg-type]
    assert err.value.path == path


def test_an_uncapped_window_needs_bounded_sizes() -> None:
    with pytest.raises(ModelError, match="bounded") as err:
        burst_sizes(wl.pareto(1.5, 1000.0))
    assert err.value.path == "w_max"


# ---------------------------------------------------------------------------
# The queue against closed forms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9, 0.99])
def test_single_packet_bursts_are_the_mm1_queue(rho: float) -> None:
    q = MXM1(BurstSizes.constant(1), rho)
    dist = q.queue_length_distribution()
    n = np.arange(len(dist.pmf))
    # M/M/1: P(N = n) = (1 - rho) rho^n, E[N] = rho / (1 - rho), P(W > d) = rho e^{-mu (1 - rho) d}.
    assert dist.pmf == pytest.approx((1 - rho) * rho**n, rel=1e-12)
    assert dist.decay == pytest.approx(rho, rel=1e-12)
    assert q.mean_in_system() == pytest.approx(rho / (1 - rho), rel=1e-14)
    assert dist.mean() == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert dist.sf([0, 5, 40]) == pytest.approx(rho ** np.array([1, 6, 41]), rel=1e-9)
    for d in (0.0, 1e-3, 5e-3):
        expected = rho * math.exp(-(1 - rho) * d / T_100M)
        got = q.delay_exceedance(d, link_rate_bps=100e6, measure="packet")
        assert got == pytest.approx(expected, rel=1e-9)
    # (N - 1)^+ T > 5 ms: 41.67 packet times, so more than 42 in the system.
    assert q.delay_exceedance(5e-3, link_rate_bps=100e6) == pytest.approx(rho**43, rel=1e-9)
    assert q.delay_exceedance(5e-3, link_rate_bps=100e6, measure="system") == pytest.approx(
        rho**42, rel=1e-9
    )


@pytest.mark.parametrize(("q", "rho"), [(0.3, 0.3), (0.3, 0.9), (0.8, 0.3), (0.8, 0.9)])
def test_geometric_bursts_match_their_closed_form(q: float, rho: float) -> None:
    # G(z) = (1-q) z / (1 - q z) gives P(z) = (1 - rho)(1 - q z) / (1 - r z), r = q + rho (1 - q):
    # P(N = n) = (1 - rho) rho (1 - q) r^(n-1), n >= 1; E[N] = rho / ((1 - rho)(1 - q));
    # the packets ahead of a packet are geometric(r), so P(W > d) = r e^{-mu (1 - r) d}.
    model = MXM1(BurstSizes.geometric(q), rho)
    r = q + rho * (1 - q)
    dist = model.queue_length_distribution()
    n = np.arange(1, len(dist.pmf))
    assert dist.pmf[0] == pytest.approx(1 - rho, rel=1e-14)
    assert dist.pmf[1:] == pytest.approx((1 - rho) * rho * (1 - q) * r ** (n - 1), rel=1e-9)
    # The support is cut where q^k < 1e-18; near G's radius of convergence (1/q) the cut
    # polynomial's pole moves by about (q / r)^k: 1e-7 here, so the decay is checked to 1e-6.
    assert dist.decay == pytest.approx(r, rel=1e-6)
    assert model.mean_in_system() == pytest.approx(rho / ((1 - rho) * (1 - q)), rel=1e-12)
    assert dist.mean() == pytest.approx(model.mean_in_system(), rel=1e-10)
    for d in (0.0, 1e-3, 5e-3):
        expected = r * math.exp(-(1 - r) * d / T_100M)
        got = model.delay_exceedance(d, link_rate_bps=100e6, measure="packet")
        assert got == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.7, 0.9, 0.98])
def test_numerical_distribution_has_the_closed_form_mean(
    rho: float, web_bursts: BurstSizes
) -> None:
    model = MXM1(web_bursts, rho)
    dist = model.queue_length_distribution()
    assert abs(dist.mass_error) < 1e-12
    assert dist.pmf[0] == pytest.approx(1 - rho, rel=1e-15)
    assert dist.mean() == pytest.approx(model.mean_in_system(), rel=1e-10)
    ahead = model.packets_ahead_distribution()
    assert ahead.mean() == pytest.approx(model.mean_packets_ahead(), rel=1e-10)
    assert model.mean_queue_length() == pytest.approx(model.mean_in_system() - rho)


def test_tail_asymptotics_predict_the_table_length(web_bursts: BurstSizes) -> None:
    # pi_n ~ C r^n, C the residue of P(z) at 1/r: the table should stop where C r^n r / (1 - r)
    # reaches tol. A wrong decay rate or residue would miss by far more than a state or two.
    from ecnsim.models.mx_m1 import _decay, _states_needed

    for rho in (0.3, 0.9, 0.99):
        r = _decay(web_bursts, rho)
        table = MXM1(web_bursts, rho).queue_length_distribution(tol=1e-13)
        assert _states_needed(web_bursts, rho, r, 1e-13) == pytest.approx(len(table.pmf) - 1, abs=2)


def test_too_many_states_fails_at_once(web_bursts: BurstSizes) -> None:
    import time

    start = time.perf_counter()
    with pytest.raises(ModelError, match=r"about 1\.6e\+06 states") as err:
        MXM1(web_bursts, 0.9999).queue_length_distribution()
    assert err.value.path == "max_states"
    assert time.perf_counter() - start < 1.0


def test_delay_exceedance_orders_and_units(web_bursts: BurstSizes) -> None:
    # Faster links drain 5 ms of backlog from more packets; more load queues more.
    for measure in models.MEASURES:
        at = [
            MXM1(web_bursts, 0.8).delay_exceedance(5e-3, link_rate_bps=r, measure=measure)  # type: ignore[arg-type]
            for r in (100e6, 155e6, 622e6)
        ]
        assert at[0] > at[1] > at[2] > 0
        by_load = [
            MXM1(web_bursts, rho).delay_exceedance(5e-3, link_rate_bps=100e6, measure=measure)  # type: ignore[arg-type]
            for rho in (0.3, 0.6, 0.9)
        ]
        assert by_load[0] < by_load[1] < by_load[2]
    # An exact ratio: 1250-byte packets at 100 Mb/s take 0.1 ms; 5 ms is 50 of them.
    model = MXM1(web_bursts, 0.8)
    dist = model.queue_length_distribution()
    got = model.delay_exceedance(5e-3, link_rate_bps=100e6, packet_bytes=1250, measure="system")
    assert got == pytest.approx(float(dist.sf(50)), rel=1e-12)
    assert model.delay_exceedance([0.0, 5e-3], link_rate_bps=100e6).shape == (2,)
    assert model.delay_exceedance(0.0, link_rate_bps=100e6) == pytest.approx(float(dist.sf(1)))
    assert model.mean_delay(link_rate_bps=100e6, measure="system") == pytest.approx(
        model.mean_in_system() * T_100M
    )


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda b: MXM1(b, 1.0), "utilization"),
        (lambda b: MXM1(b, 0.0), "utilization"),
        (lambda b: MXM1(b, float("nan")), "utilization"),
        (lambda b: MXM1(b, 0.5).delay_exceedance(1e-3, link_rate_bps=0), "link_rate_bps"),
        (lambda b: MXM1(b, 0.5).delay_exceedance(-1.0, link_rate_bps=1e8), "delay_s"),
        (lambda b: MXM1(b, 0.5).delay_exceedance(1e-3, link_rate_bps=1e8, measure="x"), "measure"),
        (lambda b: MXM1(b, 0.99).queue_length_distribution(max_states=100), "max_states"),
        (lambda b: models.delay_exceedance_curve(b, [0.5], measure="sojourn"), "measure"),
        (lambda b: models.delay_exceedance_curve(b, [0.5], delay_s=-1), "delay_s"),
        (lambda b: models.delay_exceedance_curve(b, [0.5], [0]), "link_rates_bps[0]"),
        (lambda b: models.delay_exceedance_curve(b, [1.2]), "utilization"),
    ],
)
def test_bad_queue_inputs_name_the_argument(
    call: object, path: str, web_bursts: BurstSizes
) -> None:
    with pytest.raises(ModelError) as err:
        call(web_bursts)  # type: ignore[operator]
    assert err.value.path == path


# ---------------------------------------------------------------------------
# The queue against a Monte-Carlo M[X]/M/1 simulation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("rho", "packets"), [(0.5, 2_000_000), (0.8, 1_000_000)])
def test_monte_carlo_agrees_within_sampling_error(
    rho: float, packets: int, web_bursts: BurstSizes
) -> None:
    # One seeded run per load; each estimate within 4 batch-means standard errors
    # (20 blocks) of the model. At 50 % load the run resolves E[N] to about 1 %, which
    # separates the model from the common slip of leaving out E[X] in the P-K numerator
    # (7 standard errors); at 80 % it checks the tails the figure uses.
    model = MXM1(web_bursts, rho)
    dist = model.queue_length_distribution()
    run = simulate_mx_m1(web_bursts, rho, packets=packets, seed=11)
    checks = [(run.mean_in_system(), model.mean_in_system())]
    checks += [(run.in_system_exceeds(k), float(dist.sf(k))) for k in (0, 10, 40, 100)]
    checks.append((run.mean_waiting(), model.mean_packets_ahead()))
    for x in (5.0, 30.0, 100.0):
        p = model.delay_exceedance(x * T_100M, link_rate_bps=100e6, measure="packet")
        checks.append((run.waiting_exceeds(x), p))
    for (estimate, se), exact in checks:
        assert se > 0
        assert abs(estimate - exact) <= 4 * se, (estimate, se, exact)


def test_monte_carlo_is_deterministic(web_bursts: BurstSizes) -> None:
    a = simulate_mx_m1(web_bursts, 0.5, packets=20_000, seed=3)
    b = simulate_mx_m1(web_bursts, 0.5, packets=20_000, seed=3)
    c = simulate_mx_m1(web_bursts, 0.5, packets=20_000, seed=4)
    assert np.array_equal(a.waiting, b.waiting)
    assert np.array_equal(a.in_system, b.in_system)
    assert not np.array_equal(a.waiting, c.waiting)


# ---------------------------------------------------------------------------
# The study's figure
# ---------------------------------------------------------------------------


def test_delay_exceedance_curve_table(web_bursts: BurstSizes) -> None:
    curve = models.delay_exceedance_curve(web_bursts, [0.3, 0.6, 0.9])
    assert list(curve.columns) == [
        "link_rate_bps",
        "utilization",
        "delay_s",
        "measure",
        "p_exceed",
        "mean_delay_s",
        "mean_in_system",
    ]
    assert len(curve) == 9
    assert sorted(set(curve["link_rate_bps"])) == [100e6, 155e6, 622e6]
    row = curve[(curve["link_rate_bps"] == 155e6) & (curve["utilization"] == 0.6)].iloc[0]
    direct = MXM1(web_bursts, 0.6).delay_exceedance(5e-3, link_rate_bps=155e6)
    assert row["p_exceed"] == pytest.approx(direct, rel=1e-12)


def test_delay_exceedance_figure_renders(tmp_path: object, web_bursts: BurstSizes) -> None:
    matplotlib = pytest.importorskip("matplotlib", reason="plots need matplotlib")
    matplotlib.use("Agg")
    from ecnsim.output import plot

    curve = models.delay_exceedance_curve(web_bursts, np.linspace(0.05, 0.95, 19))
    simulated = pd.DataFrame(
        {
            "link_rate_bps": [100e6, 100e6, 622e6],
            "utilization": [0.5, 0.9, 0.9],
            "p_exceed": [0.03, 0.4, 0.01],
            "ci": [0.01, 0.05, 0.005],
        }
    )
    fig = plot.plot_delay_exceedance(curve, simulated)
    ax = fig.axes[0]
    assert len(ax.get_lines()) >= 3  # one model line per link rate
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "M[X]/M/1, 622 Mb/s" in labels
    assert "simulation, 100 Mb/s" in labels
    assert ax.get_ylabel() == "P(queueing delay > 5 ms)"
    path = tmp_path / "fig.png"  # type: ignore[operator]
    fig.savefig(path, dpi=60)
    assert path.stat().st_size > 5000
