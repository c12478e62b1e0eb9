"""The DCTCP paper's steady-state analysis: N synchronised flows, one step-marking bottleneck.

Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.3 (the
sawtooth) and §3.4 (guidelines for K and g). N long-lived flows with equal
round trips share one bottleneck of ``C`` packets/s that marks CE on
arrival when more than ``K`` packets are queued; every flow sees the same
marks, so their windows rise and fall together. With ``RTT`` the round
trip without queueing, the queue is ``Q(t) = N W(t) - C RTT``, and this
module computes

- ``W* = (C RTT + K) / N``, the window at which the queue reaches ``K``;
- ``alpha``, the steady-state fraction of marked packets, from
  ``alpha^2 (1 - alpha/4) = (2 W* + 1) / (W* + 1)^2`` solved exactly
  (:func:`solve_alpha`), beside the paper's small-alpha approximation
  ``sqrt(2 / W*)``;
- the window oscillation ``D = (W* + 1) alpha / 2``, the queue amplitude
  ``A = N D`` (and its approximation ``1/2 sqrt(2 N (C RTT + K))``), the
  period ``T_C = D`` round trips, ``Q_max = K + N`` and ``Q_min = Q_max - A``;
- the guidelines ``K > C RTT / 7`` and ``g < 1.386 / sqrt(2 (C RTT + K))``;
- the sawtooth ``Q(t)`` itself, to draw on a simulated queue series
  (:meth:`DctcpAnalysis.sawtooth`).

Units: packets (windows, queues, ``K``, ``C RTT``), packets/s (``C``),
seconds (``RTT``, times). ``docs/models/dctcp_analysis.md`` derives each
equation and states the assumptions. Pure Python and numpy; nothing here
runs the simulator.

Read first: Alizadeh et al. 2010 §3.1 (the algorithm), §3.3 (eqs. 3-11),
§3.4 (eqs. 12-15); RFC 8257 §3.3-3.4 (the sender's alpha and window rules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ecnsim.models._common import ModelError, finite, whole

__all__ = [
    "ROUND_TRIPS",
    "DctcpAnalysis",
    "RoundTrip",
    "alpha_approx",
    "g_guideline",
    "k_guideline",
    "k_min_exact",
    "solve_alpha",
]

RoundTrip = Literal["base", "queued"]

#: How long a round trip lasts in :meth:`DctcpAnalysis.period_s` and
#: :meth:`DctcpAnalysis.sawtooth`:
#:
#: - ``"base"``: ``RTT``, the round trip without queueing, as the paper's
#:   analysis counts time (windows grow one packet per ``RTT``);
#: - ``"queued"``: ``RTT + Q(t) / C``, the round trip a packet sees behind the
#:   queue. While the link is busy this is ``N W(t) / C``.
ROUND_TRIPS: tuple[str, ...] = ("base", "queued")

#: Alizadeh10 §3.4 eq. 14-15: ``(1 - g)^T_C > 1/2`` with ``g`` small gives
#: ``g T_C < ln 2``; the paper prints ``2 ln 2`` rounded to 1.386.
_TWO_LN2 = 2.0 * math.log(2.0)


def _marked_fraction_rhs(w_star: float) -> float:
    """``(2 W* + 1) / (W* + 1)^2``, the right side of eq. 6."""
    return (2.0 * w_star + 1.0) / (w_star + 1.0) ** 2


def solve_alpha(w_star: float) -> float:
    """``alpha`` in ``(0, 1]`` with ``alpha^2 (1 - alpha/4) = (2 W* + 1) / (W* + 1)^2`` (eq. 6).

    ``f(a) = a^2 (1 - a/4)`` is increasing and convex on ``[0, 1]``
    (``f' = a (2 - 3a/4) > 0``, ``f'' = 2 - 3a/2 > 0``) with ``f(1) = 3/4``,
    and the right side ``r`` is at most ``3/4`` exactly when ``W* >= 1``: so
    there is one root in ``(0, 1]``. Newton's method started to the right of
    the root of an increasing convex function decreases monotonically to it
    (never overshoots); the start ``min(1, sqrt(4r/3))`` is to the right,
    since ``1 - a/4 >= 3/4`` on ``[0, 1]``. It stops when a step no longer
    decreases the iterate: the root to machine precision, a few steps.
    Raises :class:`ModelError` (``w_star``) for ``W* < 1``, where the model
    would need ``alpha > 1``.
    """
    w = finite("w_star", w_star, low=0.0)
    if w < 1.0:
        raise ModelError(
            "w_star",
            f"must be >= 1 packet: alpha^2 (1 - alpha/4) = (2W* + 1)/(W* + 1)^2 has no root in "
            f"(0, 1] below it (N flows cannot each keep less than one packet in flight), got {w:g}",
        )
    r = _marked_fraction_rhs(w)
    a = min(1.0, math.sqrt(4.0 * r / 3.0))
    for _ in range(100):
        f = a * a * (1.0 - a / 4.0) - r
        df = a * (2.0 - 0.75 * a)
        nxt = a - f / df
        if not nxt < a:
            break
        a = nxt
    return a


def alpha_approx(w_star: float) -> float:
    """The paper's small-alpha approximation ``alpha ~ sqrt(2 / W*)`` (eq. 7)."""
    w = finite("w_star", w_star, low=0.0)
    return math.sqrt(2.0 / w)


def k_guideline(bdp_packets: float) -> float:
    """``C RTT / 7`` packets: ``K`` above this keeps the queue from emptying for any ``N`` (eq. 13).

    Derived from ``Q_min = K + N - 1/2 sqrt(2 N (C RTT + K)) > 0`` (eq. 12,
    with the approximate amplitude), whose minimum over ``N`` is at ``N =
    (C RTT + K) / 8`` and equals ``K - (C RTT + K) / 8``.
    """
    return finite("bdp_packets", bdp_packets, low=0.0) / 7.0


def g_guideline(bdp_packets: float, k_packets: float) -> float:
    """``2 ln 2 / sqrt(2 (C RTT + K))`` (the paper's ``1.386 / ...``, eq. 15).

    ``alpha`` must average over at least one congestion cycle, ``(1 - g)^T_C >
    1/2`` (eq. 14), with ``T_C`` at its longest, ``N = 1``: ``T_C =
    1/2 sqrt(2 (C RTT + K))`` round trips (eq. 10). ``g`` below this bound.
    """
    c_rtt = finite("bdp_packets", bdp_packets, low=0.0)
    k = finite("k_packets", k_packets, low=0.0, strict=False)
    return _TWO_LN2 / math.sqrt(2.0 * (c_rtt + k))


def _alpha_array(w_star: np.ndarray) -> np.ndarray:
    """:func:`solve_alpha` over an array of ``W* >= 1`` (the same monotone Newton iteration)."""
    r = (2.0 * w_star + 1.0) / (w_star + 1.0) ** 2
    a = np.minimum(1.0, np.sqrt(4.0 * r / 3.0))
    for _ in range(100):
        nxt = a - (a * a * (1.0 - a / 4.0) - r) / (a * (2.0 - 0.75 * a))
        moving = nxt < a
        if not np.any(moving):
            break
        a = np.where(moving, nxt, a)
    return a


def k_min_exact(bdp_packets: float) -> float:
    """The smallest ``K`` (packets) with ``Q_min > 0`` for every whole ``N``, exact ``alpha``.

    Eq. 13 (:func:`k_guideline`) comes from the approximate amplitude
    ``1/2 sqrt(2 N (C RTT + K))``, which is below the exact ``N (W* + 1)
    alpha / 2`` when ``W*`` is small; so with eq. 6 solved exactly the queue
    empties for some ``N`` even a little above ``C RTT / 7``. This bisects on
    ``K`` in ``[0, C RTT]`` (at ``K = C RTT`` no ``N`` empties the queue) to
    1e-9 relative, with ``Q_min`` minimised over ``N = 1 .. floor(C RTT + K)``
    (every ``N`` the model allows). ``docs/models/dctcp_analysis.md`` tabulates it.
    """
    c_rtt = finite("bdp_packets", bdp_packets, low=0.0)
    if c_rtt > 1e6:
        raise ModelError(
            "bdp_packets", f"must be <= 1e6 packets (the search is O(C RTT)), got {c_rtt:g}"
        )

    def worst_q_min(k: float) -> float:
        n = np.arange(1, math.floor(c_rtt + k) + 1, dtype=float)
        w = (c_rtt + k) / n
        return float(np.min(k + n - n * (w + 1.0) * _alpha_array(w) / 2.0))

    lo, hi = 0.0, c_rtt
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if worst_q_min(mid) > 0.0:
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class DctcpAnalysis:
    """The §3.3 steady state of ``n_flows`` DCTCP flows on one bottleneck.

    ``capacity_pps`` is ``C`` in packets/s, ``rtt_s`` the round trip without
    queueing in seconds, ``k_packets`` the marking threshold ``K`` (a packet
    is marked when it arrives to more than ``K`` queued), ``n_flows`` the
    number ``N`` of synchronised long-lived flows. :meth:`from_link` takes
    a link rate in bits/s and a packet size instead. Every derived quantity
    is in packets, round trips or seconds, as its name says.
    """

    capacity_pps: float
    rtt_s: float
    k_packets: float
    n_flows: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "capacity_pps", finite("capacity_pps", self.capacity_pps, low=0.0))
        object.__setattr__(self, "rtt_s", finite("rtt_s", self.rtt_s, low=0.0))
        object.__setattr__(
            self, "k_packets", finite("k_packets", self.k_packets, low=0.0, strict=False)
        )
        object.__setattr__(self, "n_flows", whole("n_flows", self.n_flows, low=1))
        if self.w_star < 1.0:
            raise ModelError(
                "n_flows",
                f"must be at most C RTT + K = {self.bdp_packets + self.k_packets:g} packets: "
                f"each flow needs W* = (C RTT + K) / N >= 1 packet, got N = {self.n_flows} "
                f"(W* = {self.w_star:g})",
            )

    @classmethod
    def from_link(
        cls,
        rate_bps: float,
        rtt_s: float,
        k_packets: float,
        n_flows: int,
        *,
        packet_bytes: float = 1500.0,
    ) -> DctcpAnalysis:
        """The analysis for a ``rate_bps`` link carrying ``packet_bytes`` packets (on the wire).

        ``C = rate_bps / (8 packet_bytes)`` packets/s: 10 Gb/s of 1500-byte
        packets is 833,333 packets/s, so ``C RTT`` at 100 µs is 83.3 packets.
        """
        rate = finite("rate_bps", rate_bps, low=0.0)
        size = finite("packet_bytes", packet_bytes, low=0.0)
        return cls(rate / (8.0 * size), rtt_s, k_packets, n_flows)

    # -- eqs. 3-11 -------------------------------------------------------------

    @property
    def bdp_packets(self) -> float:
        """``C RTT``, the packets in flight that fill the pipe with an empty queue."""
        return self.capacity_pps * self.rtt_s

    @property
    def w_star(self) -> float:
        """``W* = (C RTT + K) / N`` packets: the window at which the queue reaches ``K`` (eq. 3)."""
        return (self.bdp_packets + self.k_packets) / self.n_flows

    @property
    def alpha(self) -> float:
        """The fraction of marked packets, eq. 6 solved exactly (:func:`solve_alpha`)."""
        return solve_alpha(self.w_star)

    @property
    def alpha_approx(self) -> float:
        """``sqrt(2 / W*)``, the paper's approximation of :attr:`alpha` (eq. 7)."""
        return alpha_approx(self.w_star)

    @property
    def w_max(self) -> float:
        """``W* + 1``: the window of the round trip whose packets are marked (packets)."""
        return self.w_star + 1.0

    @property
    def w_min(self) -> float:
        """``(W* + 1)(1 - alpha/2)``: the window after the cut (packets)."""
        return self.w_max * (1.0 - self.alpha / 2.0)

    @property
    def window_amplitude(self) -> float:
        """``D = (W* + 1) alpha / 2`` packets, each flow's window oscillation (eq. 8)."""
        return self.w_max * self.alpha / 2.0

    @property
    def queue_amplitude(self) -> float:
        """``A = N D`` packets, the queue's oscillation (eq. 9, exact alpha)."""
        return self.n_flows * self.window_amplitude

    @property
    def queue_amplitude_approx(self) -> float:
        """``1/2 sqrt(2 N (C RTT + K))`` packets, the paper's approximation of ``A`` (eq. 9)."""
        return 0.5 * math.sqrt(2.0 * self.n_flows * (self.bdp_packets + self.k_packets))

    @property
    def period_rtts(self) -> float:
        """``T_C = D`` round trips (eq. 10): the window grows one packet per round trip."""
        return self.window_amplitude

    @property
    def q_max(self) -> float:
        """``Q_max = N (W* + 1) - C RTT = K + N`` packets (eq. 11)."""
        return self.k_packets + self.n_flows

    @property
    def q_min(self) -> float:
        """``Q_max - A`` packets (eq. 12 with the exact amplitude); below 0 the queue empties."""
        return self.q_max - self.queue_amplitude

    @property
    def q_min_approx(self) -> float:
        """``K + N - 1/2 sqrt(2 N (C RTT + K))`` packets (eq. 12 as the paper writes it)."""
        return self.q_max - self.queue_amplitude_approx

    @property
    def empties(self) -> bool:
        """True if the sawtooth's minimum is below zero: the link idles, outside the model."""
        return self.q_min < 0.0

    # -- §3.4 ------------------------------------------------------------------

    @property
    def k_guideline(self) -> float:
        """``C RTT / 7`` packets (eq. 13; :func:`k_guideline`)."""
        return k_guideline(self.bdp_packets)

    @property
    def g_guideline(self) -> float:
        """``1.386 / sqrt(2 (C RTT + K))`` (eq. 15; :func:`g_guideline`)."""
        return g_guideline(self.bdp_packets, self.k_packets)

    # -- time --------------------------------------------------------------------

    def period_s(self, round_trip: RoundTrip = "base") -> float:
        """The sawtooth's period in seconds.

        ``"base"``: ``T_C RTT``, each of the ``D`` round trips lasting ``RTT``
        (the paper's clock). ``"queued"``: each round trip lasts ``RTT + Q/C
        = N W / C`` (the link stays busy), so a window step from ``W`` to
        ``W + dW`` takes ``N W dW / C`` and the cycle ``N (W_max^2 - W_min^2)
        / (2 C)``: the packets all flows send in a cycle at the link's rate.
        """
        _check_round_trip(round_trip)
        if round_trip == "base":
            return self.period_rtts * self.rtt_s
        return self.n_flows * (self.w_max**2 - self.w_min**2) / (2.0 * self.capacity_pps)

    def sawtooth(
        self,
        t_s: npt.ArrayLike,
        *,
        t0_s: float = 0.0,
        round_trip: RoundTrip = "base",
    ) -> np.ndarray:
        """The model's queue ``Q(t) = N W(t) - C RTT`` in packets at times ``t_s`` (seconds).

        A cut happens at ``t0_s`` (the queue drops from ``Q_max`` to
        ``Q_min``) and every :meth:`period_s` after and before it; in between
        each window grows from ``W_min`` to ``W_max``: linearly at one packet
        per ``RTT`` (``round_trip="base"``), or by ``dW/dt = C / (N W)``
        (``"queued"``: ``W(t) = sqrt(W_min^2 + 2 C t / N)``). Values are
        clipped at 0 (an empty queue; when :attr:`empties` the model's
        timing no longer holds there). Draw it on a simulated queue series
        with ``t0_s`` set to a simulated cut.
        """
        _check_round_trip(round_trip)
        t0 = finite("t0_s", t0_s)
        t = np.asarray(t_s, dtype=float)
        if not np.all(np.isfinite(t)):
            raise ModelError("t_s", "must be finite")
        period = self.period_s(round_trip)
        phase = np.mod(t - t0, period)  # seconds since the last cut, in [0, period)
        if round_trip == "base":
            w = self.w_min + phase / self.rtt_s
        else:
            w = np.sqrt(self.w_min**2 + 2.0 * self.capacity_pps * phase / self.n_flows)
        q = self.n_flows * w - self.bdp_packets
        return np.asarray(np.maximum(q, 0.0), dtype=float)

    def summary(self) -> dict[str, float | int | bool]:
        """Every input and derived quantity by name (packets, round trips, seconds)."""
        return {
            "capacity_pps": self.capacity_pps,
            "rtt_s": self.rtt_s,
            "k_packets": self.k_packets,
            "n_flows": self.n_flows,
            "bdp_packets": self.bdp_packets,
            "w_star": self.w_star,
            "alpha": self.alpha,
            "alpha_approx": self.alpha_approx,
            "window_amplitude": self.window_amplitude,
            "queue_amplitude": self.queue_amplitude,
            "queue_amplitude_approx": self.queue_amplitude_approx,
            "period_rtts": self.period_rtts,
            "period_s": self.period_s("base"),
            "period_s_queued": self.period_s("queued"),
            "q_max": self.q_max,
            "q_min": self.q_min,
            "q_min_approx": self.q_min_approx,
            "empties": self.empties,
            "k_guideline": self.k_guideline,
            "g_guideline": self.g_guideline,
        }


def _check_round_trip(round_trip: object) -> None:
    if round_trip not in ROUND_TRIPS:
        raise ModelError(
            "round_trip", f"must be one of {', '.join(ROUND_TRIPS)}, got {round_trip!r}"
        )
