"""The DualQ Coupled AQM's fluid rate balance (RFC 9332 §2.1, Appendix C): ecnsim.models.dualq.

Band (docs/validation.md, DualPI2): the closed form to 1e-9.
"""

from __future__ import annotations

import math

import pytest

from ecnsim.models import (
    RENO_LAW,
    ModelError,
    coupling_for_equal_rates,
    dualq_equilibrium,
    rate_ratio,
)


def test_k2_at_equal_rtts_gives_the_closed_form_ratio() -> None:
    # RFC 9332 §2.1: W_C = c_C / p', W_L = c_L / (k p'): ratio = c_L / (k c_C) = 2 / (2 sqrt(3/2)).
    assert rate_ratio(k=2.0, rtt_classic=0.03, rtt_l4s=0.03) == pytest.approx(
        1 / math.sqrt(1.5), rel=1e-12
    )
    assert pytest.approx(1.224744871, rel=1e-9) == RENO_LAW


def test_equal_rates_at_k_star_and_rtt_dependence() -> None:
    k_star = coupling_for_equal_rates(rtt_classic=0.03, rtt_l4s=0.03)
    assert k_star == pytest.approx(2 / math.sqrt(1.5), rel=1e-12)  # 1.63
    assert rate_ratio(k=k_star, rtt_classic=0.03, rtt_l4s=0.03) == pytest.approx(1.0, rel=1e-12)
    # Rates go as 1/RTT on both sides: a Classic flow with twice the RTT gets half relative rate.
    assert rate_ratio(rtt_classic=0.06, rtt_l4s=0.03) == pytest.approx(
        2 * rate_ratio(rtt_classic=0.03, rtt_l4s=0.03)
    )


def test_equilibrium_fills_the_link_and_keeps_the_ratio() -> None:
    eq = dualq_equilibrium(
        capacity_bps=100e6, n_classic=2, n_l4s=3, rtt_classic=0.035, rtt_l4s=0.021, k=2.0
    )
    assert 2 * eq.rate_classic_bps + 3 * eq.rate_l4s_bps == pytest.approx(100e6, rel=1e-9)
    assert eq.ratio == pytest.approx(rate_ratio(k=2.0, rtt_classic=0.035, rtt_l4s=0.021), rel=1e-9)
    assert eq.p_classic == pytest.approx(eq.p_base**2, rel=1e-12)
    assert eq.p_l4s == pytest.approx(2 * eq.p_base, rel=1e-12)
    # Reno's law at the Classic flows' own probability: W = c_C / sqrt(p_C) packets per RTT.
    window = eq.rate_classic_bps * 0.035 / (8 * 1500)
    assert window == pytest.approx(RENO_LAW / math.sqrt(eq.p_classic), rel=1e-9)
    # Twice the capacity, half the base probability; the ratio stays.
    eq2 = dualq_equilibrium(
        capacity_bps=200e6, n_classic=2, n_l4s=3, rtt_classic=0.035, rtt_l4s=0.021
    )
    assert eq2.p_base == pytest.approx(eq.p_base / 2, rel=1e-12)
    assert eq2.ratio == pytest.approx(eq.ratio, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"capacity_bps": 0}, "capacity_bps"),
        ({"n_classic": -1}, "n_classic"),
        ({"n_classic": 0, "n_l4s": 0}, "n_classic"),
        ({"rtt_l4s": float("nan")}, "rtt_l4s"),
        ({"k": 0}, "k"),
        ({"mss_bytes": 0}, "mss_bytes"),
        # 100 Reno flows at 10 ms on 1 Mb/s need k p' far above 1: overload.
        ({"capacity_bps": 1e6, "n_classic": 100, "rtt_classic": 0.01}, "capacity_bps"),
    ],
)
def test_bad_inputs_name_their_argument(kwargs: dict[str, float], path: str) -> None:
    args = {
        "capacity_bps": 100e6,
        "n_classic": 1,
        "n_l4s": 1,
        "rtt_classic": 0.035,
        "rtt_l4s": 0.021,
    }
    args.update(kwargs)
    with pytest.raises(ModelError) as e:
        dualq_equilibrium(**args)  # type: ignore[arg-type]
    assert e.value.path == path
