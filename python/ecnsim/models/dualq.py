"""The rate balance of the DualQ Coupled AQM, as a fluid model (RFC 9332 §2.1, Appendix C).

DualPI2 couples one base probability p' into the two queues: Classic packets see
p_C = p'^2, L4S packets p_CL = k p' (``docs/models/dualpi2.md``). In steady state a
Classic (Reno-friendly) flow's window is ``W_C = c_C / sqrt(p_C)`` packets, with
``c_C = sqrt(3/2)`` for Reno (Mathis et al. 1997), and a scalable flow's is
``W_L = c_L / p_L``, with ``c_L = 2`` for DCTCP and TCP Prague (RFC 9332 §2.1). The
square root cancels the square: ``W_C = c_C / p'`` and ``W_L = c_L / (k p')``, so the
per-flow rate ratio does not depend on the load::

    r_L / r_C = (c_L / (k c_C)) * (RTT_C / RTT_L)

which is 0.82 at k = 2 and equal RTTs, and 1 at ``k = c_L / c_C`` (1.63). With
``n_C`` and ``n_L`` flows filling a link of ``capacity`` packets per second, p' is
what makes the rates add up to the capacity::

    p' = (n_C c_C / RTT_C + n_L c_L / (k RTT_L)) / capacity

The RTTs are the flows' effective ones: base RTT plus the queuing delay of their
queue (the Classic target, about 15 ms; under 1 ms in the L queue). The model holds
while the coupling, not the L queue's native AQM, sets the L4S marks, and below
overload (``k p' <= 1``). Nothing here runs the simulator: it is what a simulation
with scalable senders (TCP Prague, not yet modelled) is to be compared with.

    from ecnsim.models import dualq_equilibrium
    eq = dualq_equilibrium(
        capacity_bps=100e6, n_classic=1, n_l4s=1, rtt_classic=0.035, rtt_l4s=0.021
    )
    eq.ratio          # per-flow L4S / Classic rate
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ecnsim.models._common import ModelError, finite, whole

#: Reno's steady-state window constant, packets: W = sqrt(3/2) / sqrt(p) (Mathis et al. 1997).
RENO_LAW = math.sqrt(1.5)
#: A scalable control's steady-state window constant, packets: W = 2 / p (RFC 9332 §2.1:
#: DCTCP and TCP Prague).
SCALABLE_LAW = 2.0


@dataclass(frozen=True)
class DualQEquilibrium:
    """The fluid equilibrium of a DualQ Coupled AQM's two classes of flows.

    Probabilities are fractions; rates are per flow, in bit/s; ``ratio`` is the
    per-flow rate of an L4S flow over that of a Classic flow.
    """

    p_base: float
    p_classic: float
    p_l4s: float
    rate_classic_bps: float
    rate_l4s_bps: float
    ratio: float


def rate_ratio(
    *,
    k: float = 2.0,
    rtt_classic: float,
    rtt_l4s: float,
    classic_law: float = RENO_LAW,
    scalable_law: float = SCALABLE_LAW,
) -> float:
    """Per-flow rate of an L4S flow over a Classic one: ``(c_L / (k c_C)) (RTT_C / RTT_L)``.

    RFC 9332 §2.1: with p_C = p'^2 and p_CL = k p' the ratio is independent of the load.
    """
    k = finite("k", k, low=0.0)
    rtt_c = finite("rtt_classic", rtt_classic, low=0.0)
    rtt_l = finite("rtt_l4s", rtt_l4s, low=0.0)
    c_c = finite("classic_law", classic_law, low=0.0)
    c_l = finite("scalable_law", scalable_law, low=0.0)
    return (c_l / (k * c_c)) * (rtt_c / rtt_l)


def coupling_for_equal_rates(
    *,
    rtt_classic: float,
    rtt_l4s: float,
    classic_law: float = RENO_LAW,
    scalable_law: float = SCALABLE_LAW,
) -> float:
    """The k at which an L4S flow and a Classic flow get equal rates.

    ``k = (c_L / c_C) (RTT_C / RTT_L)``.

    RFC 9332 Appendix C.2: k = 2 is near this for Reno-friendly Classic flows at equal RTTs (1.63).
    """
    return rate_ratio(
        k=1.0,
        rtt_classic=rtt_classic,
        rtt_l4s=rtt_l4s,
        classic_law=classic_law,
        scalable_law=scalable_law,
    )


def dualq_equilibrium(
    *,
    capacity_bps: float,
    n_classic: int,
    n_l4s: int,
    rtt_classic: float,
    rtt_l4s: float,
    k: float = 2.0,
    mss_bytes: int = 1500,
    classic_law: float = RENO_LAW,
    scalable_law: float = SCALABLE_LAW,
) -> DualQEquilibrium:
    """The base probability and per-flow rates at which the flows fill the link.

    Raises :class:`~ecnsim.models.ModelError` for bad inputs, and when the load needs
    ``k p' > 1`` (overload: RFC 9332 §2.5.1.1 switches to drop, outside this model).
    """
    cap = finite("capacity_bps", capacity_bps, low=0.0)
    n_classic = whole("n_classic", n_classic, low=0)
    n_l4s = whole("n_l4s", n_l4s, low=0)
    if n_classic + n_l4s == 0:
        raise ModelError("n_classic", "no flows: give n_classic or n_l4s >= 1")
    mss_bytes = whole("mss_bytes", mss_bytes, low=1)
    k = finite("k", k, low=0.0)
    rtt_c = finite("rtt_classic", rtt_classic, low=0.0)
    rtt_l = finite("rtt_l4s", rtt_l4s, low=0.0)
    c_c = finite("classic_law", classic_law, low=0.0)
    c_l = finite("scalable_law", scalable_law, low=0.0)
    packets_per_s = cap / (8.0 * mss_bytes)
    # RFC 9332 §2.1: W_C = c_C / sqrt(p'^2) = c_C / p', W_L = c_L / (k p'); the rates fill the link.
    p = (n_classic * c_c / rtt_c + n_l4s * c_l / (k * rtt_l)) / packets_per_s
    if k * p > 1.0:
        raise ModelError(
            "capacity_bps", f"overload: the flows need k p' = {k * p:.3g} > 1 (RFC 9332 §2.5.1.1)"
        )
    per_packet = 8.0 * mss_bytes
    rate_c = c_c / (rtt_c * p) * per_packet
    rate_l = c_l / (rtt_l * k * p) * per_packet
    return DualQEquilibrium(
        p_base=p,
        p_classic=p * p,
        p_l4s=k * p,
        rate_classic_bps=rate_c,
        rate_l4s_bps=rate_l,
        ratio=rate_l / rate_c,
    )
