"""The M[X]/M/1 queue: Poisson arrivals of bursts, exponential service of each packet.

Bursts (batches) of ``X`` packets arrive as a Poisson process of rate
``lambda``; one server sends packets one at a time, each taking an
exponential time of mean ``T`` (rate ``mu = 1/T``); the buffer is
infinite; the utilization is ``rho = lambda E[X] T < 1``. Given ``rho`` and
the burst-size distribution, this module computes

- the mean number of packets in the system in closed form (the
  Pollaczek-Khinchine mean value formula applied to a burst as one
  customer): ``E[N] = rho (E[X] + E[X^2]) / (2 E[X] (1 - rho))``;
- the distribution of the number in the system, numerically, by the
  level-crossing recursion (only additions of positive terms, so no
  cancellation), with the exact geometric decay of its tail;
- ``P(queueing delay > d)`` for a link rate and packet size, under three
  named readings of "queueing delay" (:data:`MEASURES`).

``docs/models/mx_m1.md`` derives every formula and states the assumptions.

Read first: Kleinrock 1975, *Queueing Systems* vol. I, ch. 4 (bulk
arrivals) and ch. 5 (M/G/1, the Pollaczek-Khinchine formula); Wolff 1982
(PASTA); Kuzmanovic 2005 (the model's use in the ``ecnplus`` study).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
import numpy.typing as npt
import pandas as pd

from ecnsim.models._common import ModelError, finite, poisson_pmf, tail_sums, whole
from ecnsim.models.bursts import BurstSizes

__all__ = [
    "MEASURES",
    "MXM1",
    "Measure",
    "QueueLengthDistribution",
    "delay_exceedance_curve",
]

Measure = Literal["queue", "system", "packet"]

#: The readings of "queueing delay" that :meth:`MXM1.delay_exceedance` computes.
#:
#: - ``"queue"``: the time needed to send the packets *waiting* in the queue,
#:   ``(N - 1)^+ T``, as a time average. This is what ecnsim measures in a
#:   simulation (``analysis.queueing_delay_exceeds``: queue bytes sampled at
#:   fixed intervals, times 8 over the rate), so it is the default.
#: - ``"system"``: ``N T``, the packet being sent counted whole (the queue
#:   length in packets, converted to time at the link rate).
#: - ``"packet"``: a packet's own waiting time, from its arrival until its
#:   transmission starts, averaged over packets (exponential service).
MEASURES: tuple[str, ...] = ("queue", "system", "packet")


def _check_utilization(rho: object) -> float:
    r = finite("utilization", rho, low=0.0)
    if not r < 1.0:
        raise ModelError(
            "utilization", f"must be in (0, 1): the queue is unstable at 1 and above, got {r:g}"
        )
    return r


def _decay(bursts: BurstSizes, rho: float) -> float:
    """``r = 1 / z0``: ``P(N = n) ~ C r^n``, ``z0 > 1`` the root of the generating function's pole.

    ``P(z) = (1 - rho)(1 - z) / ((1 - z) - a z (1 - G(z)))`` with ``a = rho / E[X]``
    (Kleinrock75 ch. 4). With ``z = 1 + e`` the pole solves
    ``phi(e) = a (1 + e) sum_k g_k ((1 + e)^k - 1) / e = 1``; ``phi`` rises
    from ``rho < 1`` at ``e = 0``, so bisection finds the one root.
    """
    g = bursts.pmf
    k = np.arange(len(g), dtype=float)
    a = rho / bursts.mean()

    def phi(e: float) -> float:
        with np.errstate(over="ignore"):
            growth = np.expm1(k * math.log1p(e))
        return float(a * (1.0 + e) * np.dot(g, growth) / e)

    lo, hi = 0.0, max(1e-12, 1e-3 * (1.0 - rho))
    while phi(hi) < 1.0:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if phi(mid) < 1.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 4e-16 * hi:
            break
    return 1.0 / (1.0 + 0.5 * (lo + hi))


def _states_needed(bursts: BurstSizes, rho: float, r: float, tol: float) -> float:
    """About how many states the table needs before its tail is below ``tol`` (``inf`` if unknown).

    ``pi_n ~ C r^n`` with ``C = -N(z0) / (z0 D'(z0))`` the residue of ``P(z) = N(z) / D(z)``
    at its pole ``z0 = 1/r``; the table stops where ``C r^n r / (1 - r) <= tol``.
    """
    g = bursts.pmf
    k = np.arange(len(g), dtype=float)
    z0 = 1.0 / r
    a = rho / bursts.mean()
    with np.errstate(over="ignore", invalid="ignore"):
        gz = float(np.dot(g, z0**k))
        dgz = float(np.dot(g * k, z0 ** np.maximum(k - 1.0, 0.0)))
        d_prime = -1.0 - a * (1.0 - gz) + a * z0 * dgz
        c = -(1.0 - rho) * (1.0 - z0) / (z0 * d_prime)
        n = math.log(tol * (1.0 - r) / (c * r)) / math.log(r) if c > 0 else math.inf
    return n if math.isfinite(n) else math.inf


@dataclass(frozen=True)
class QueueLengthDistribution:
    """The stationary distribution of ``N``, the number of packets in the system.

    ``pmf[n] = P(N = n)`` for ``n <= len(pmf) - 1``; beyond, the tail is
    the geometric continuation ``pmf[-1] r^j`` with ``r`` = :attr:`decay`,
    the exact asymptotic rate. :attr:`tail_mass` is the probability beyond
    the table; :attr:`mass_error` is ``sum(pmf) + tail_mass - 1``, the
    numerical error of the whole computation (the recursion never
    normalises, so this is an independent check).
    """

    pmf: np.ndarray
    decay: float
    utilization: float

    @property
    def tail_mass(self) -> float:
        """``P(N > len(pmf) - 1)`` from the geometric continuation."""
        r = self.decay
        return float(self.pmf[-1] * r / (1.0 - r))

    @property
    def mass_error(self) -> float:
        """``sum(pmf) + tail_mass - 1``."""
        return math.fsum(self.pmf.tolist()) + self.tail_mass - 1.0

    def sf(self, n: npt.ArrayLike) -> np.ndarray:
        """``P(N > n)``, summed from the tail (accurate down to the smallest probabilities)."""
        return _sf(self.pmf, self.decay, n)

    def cdf(self, n: npt.ArrayLike) -> np.ndarray:
        """``P(N <= n)``."""
        return 1.0 - self.sf(n)

    def mean(self) -> float:
        """``E[N]`` from the table and its geometric tail."""
        n = np.arange(len(self.pmf), dtype=float)
        r, last = self.decay, len(self.pmf) - 1
        # sum_{j>=1} (last + j) pmf[last] r^j
        tail = self.pmf[-1] * (last * r / (1.0 - r) + r / (1.0 - r) ** 2)
        return float(np.dot(n, self.pmf) + tail)


def _sf(pmf: np.ndarray, r: float, n: npt.ArrayLike) -> np.ndarray:
    """``P(Y > n)`` for a pmf table with a geometric tail of ratio ``r`` beyond it."""
    beyond = pmf[-1] * r / (1.0 - r)
    table = tail_sums(pmf) + beyond  # P(Y > i) for i in the table
    ns = np.asarray(n)
    idx = np.floor(ns).astype(np.int64)
    last = len(pmf) - 1
    inside = np.clip(idx, 0, last)
    out = np.where(idx < 0, 1.0, table[inside])
    with np.errstate(under="ignore"):
        far = beyond * r ** np.maximum(idx - last, 0).astype(float)
    return np.asarray(np.where(idx > last, far, out), dtype=float)


@dataclass(frozen=True)
class MXM1:
    """An M[X]/M/1 queue with the burst sizes ``bursts`` at utilization ``utilization``.

    ``utilization`` is ``rho = lambda E[X] T`` in ``(0, 1)``: the fraction
    of time the link is busy. Everything but the delays is dimensionless
    (packets); the delays take the link rate and the packet size.
    """

    bursts: BurstSizes
    utilization: float

    def __post_init__(self) -> None:
        if not isinstance(self.bursts, BurstSizes):
            raise ModelError("bursts", f"must be a BurstSizes, got {type(self.bursts).__name__}")
        object.__setattr__(self, "utilization", _check_utilization(self.utilization))

    # -- closed forms ---------------------------------------------------------

    def mean_in_system(self) -> float:
        """``E[N] = rho (E[X] + E[X^2]) / (2 E[X] (1 - rho))`` packets (closed form)."""
        rho, m1, m2 = self.utilization, self.bursts.mean(), self.bursts.second_moment()
        # Kleinrock75 ch. 5 (P-K mean value) with a burst as the customer, plus the
        # packets ahead in its own burst: docs/models/mx_m1.md, "Mean".
        return rho * (m1 + m2) / (2.0 * m1 * (1.0 - rho))

    def mean_queue_length(self) -> float:
        """``E[(N - 1)^+] = E[N] - rho``: packets waiting, not counting the one being sent."""
        return self.mean_in_system() - self.utilization

    def mean_packets_ahead(self) -> float:
        """``E[A] = E[N] + (E[X^2] - E[X]) / (2 E[X])``: packets an arriving packet finds ahead.

        ``A`` = the packets in the system when its burst arrives (PASTA) plus
        those ahead of it in its own burst.
        """
        m1, m2 = self.bursts.mean(), self.bursts.second_moment()
        return self.mean_in_system() + (m2 - m1) / (2.0 * m1)

    # -- the distribution -----------------------------------------------------

    def queue_length_distribution(
        self, *, tol: float = 1e-13, max_states: int = 1_000_000
    ) -> QueueLengthDistribution:
        """``P(N = n)`` by the level-crossing recursion, until the tail beyond is below ``tol``.

        Balance of the probability flow across the cut between ``n`` and
        ``n + 1`` (up by a burst arrival, down by a departure):
        ``mu pi[n+1] = lambda sum_{i<=n} pi[i] P(X > n - i)``, from
        ``pi[0] = 1 - rho``. Every term is positive, so the relative error
        grows at most linearly with ``n`` (no cancellation, unlike the
        forward solution of the balance equations). The table stops when
        ``n`` is past the largest burst and the geometric tail beyond,
        ``pi[n] r / (1 - r)``, is below ``tol``. Raises
        :class:`~ecnsim.models.ModelError` if that takes more than
        ``max_states`` states, or if the mass is off by more than 1e-9.
        """
        tol = finite("tol", tol, low=0.0)
        if tol > 1e-3:
            raise ModelError("tol", f"must be <= 1e-3, got {tol:g}")
        cap = whole("max_states", max_states, low=2)
        rho = self.utilization
        g = self.bursts.pmf
        big_k = len(g) - 1
        r = _decay(self.bursts, rho)
        needed = _states_needed(self.bursts, rho, r, tol)
        if math.isfinite(needed) and needed > cap:
            raise ModelError(
                "max_states",
                f"the queue-length distribution needs about {needed:.3g} states at utilization "
                f"{rho:g} (tail decay {r:.9f}), more than max_states = {cap}; raise max_states "
                "or tol",
            )
        # a P(X > j) for j = 0..K-1, reversed to line up with pi[n-K+1..n].
        weights = (rho / self.bursts.mean() * self.bursts.sf())[::-1].copy()
        pad = big_k - 1  # zeros standing for pi[-K+1..-1]
        size = pad + min(cap, max(1024, 8 * big_k))
        buf = np.zeros(size)
        buf[pad] = 1.0 - rho  # pi[0] = 1 - rho (the server is busy a fraction rho of the time)
        coef = r / (1.0 - r)
        n = 0
        while True:
            if pad + n + 1 >= size:
                if size - pad >= cap:
                    raise ModelError(
                        "max_states",
                        f"the queue-length distribution needs more than {cap} states at "
                        f"utilization {rho:g} (tail decay {r:.9f}); raise max_states or tol",
                    )
                grow = min(size - pad, cap - (size - pad))
                buf = np.concatenate([buf, np.zeros(grow)])
                size = len(buf)
            # Level crossing n -> n + 1: pi[n+1] = (lambda/mu) sum_i pi[i] P(X > n - i).
            buf[pad + n + 1] = np.dot(buf[n : n + big_k], weights)
            n += 1
            if n >= big_k and buf[pad + n] * coef <= tol:
                break
        dist = QueueLengthDistribution(buf[pad : pad + n + 1].copy(), r, rho)
        if abs(dist.mass_error) > 1e-9:
            raise ModelError(
                "tol",
                f"the computed distribution's mass is off by {dist.mass_error:.3g} at utilization "
                f"{rho:g}: the table stopped before its tail was geometric; try a smaller tol",
            )
        return dist

    def packets_ahead_distribution(self, *, tol: float = 1e-13) -> QueueLengthDistribution:
        """The distribution of ``A``, the packets a randomly chosen packet finds ahead of it.

        ``A = N + J`` with ``N`` as a burst finds it (PASTA: the stationary
        distribution) and ``J`` its position in its own burst,
        ``P(J = j) = P(X > j) / E[X]`` (a packet lands in a burst of size
        ``k`` with probability ``k g_k / E[X]`` and is equally likely at any
        of its ``k`` places); the two are independent.
        """
        qd = self.queue_length_distribution(tol=tol)
        r, big_k = qd.decay, self.bursts.max
        # N's table continued geometrically for K more states, so A is exact to the end.
        ext = qd.pmf[-1] * r ** np.arange(1, big_k + 1, dtype=float)
        n_ext = np.concatenate([qd.pmf, ext])
        j_pmf = self.bursts.sf() / self.bursts.mean()
        a = np.convolve(n_ext, j_pmf)[: len(n_ext)]
        return QueueLengthDistribution(a, r, self.utilization)

    # -- delays ---------------------------------------------------------------

    @overload
    def delay_exceedance(
        self,
        delay_s: float,
        *,
        link_rate_bps: float,
        packet_bytes: float = ...,
        measure: Measure = ...,
        tol: float = ...,
    ) -> float: ...
    @overload
    def delay_exceedance(
        self,
        delay_s: Sequence[float] | np.ndarray,
        *,
        link_rate_bps: float,
        packet_bytes: float = ...,
        measure: Measure = ...,
        tol: float = ...,
    ) -> np.ndarray: ...
    def delay_exceedance(
        self,
        delay_s: float | Sequence[float] | np.ndarray,
        *,
        link_rate_bps: float,
        packet_bytes: float = 1500.0,
        measure: Measure = "queue",
        tol: float = 1e-13,
    ) -> float | np.ndarray:
        """``P(queueing delay > d)`` on a ``link_rate_bps`` link with ``packet_bytes`` packets.

        ``packet_bytes`` is the packet on the wire (1500 = a 1460-byte
        segment and 40 bytes of TCP/IP headers): ``T = 8 packet_bytes /
        link_rate_bps``. ``measure`` picks the reading (:data:`MEASURES`):
        ``"queue"`` is ``P((N - 1)^+ > d / T)``, ``"system"`` is
        ``P(N > d / T)``, ``"packet"`` is ``P(W > d) = sum_j P(Poisson(d /
        T) = j) P(A > j)`` (the sum of ``A`` exponential transmissions
        exceeds ``d`` iff fewer than ``A`` of them end within ``d``).
        Returns a float for a scalar ``delay_s``, an array otherwise.
        """
        t = _packet_time(link_rate_bps, packet_bytes)
        ds = np.atleast_1d(np.asarray(delay_s, dtype=float))
        if not np.all(np.isfinite(ds)) or np.any(ds < 0):
            raise ModelError("delay_s", "must be finite and >= 0")
        if measure not in MEASURES:
            raise ModelError("measure", f"must be one of {', '.join(MEASURES)}, got {measure!r}")
        x = ds / t
        if measure in ("queue", "system"):
            qd = self.queue_length_distribution(tol=tol)
            # N T > d iff N > floor(d / T) (a relative 1e-12 absorbs rounding of exact ratios).
            k = np.floor(x * (1.0 + 1e-12))
            out = qd.sf(k + 1.0) if measure == "queue" else qd.sf(k)
        else:
            ad = self.packets_ahead_distribution(tol=tol)
            out = np.array([_erlang_mixture_sf(ad, float(xi)) for xi in x])
        if np.ndim(delay_s) == 0:
            return float(out[0])
        return np.asarray(out, dtype=float)

    def mean_delay(
        self, *, link_rate_bps: float, packet_bytes: float = 1500.0, measure: Measure = "queue"
    ) -> float:
        """The mean queueing delay (seconds) under ``measure``, in closed form."""
        t = _packet_time(link_rate_bps, packet_bytes)
        if measure == "queue":
            return self.mean_queue_length() * t
        if measure == "system":
            return self.mean_in_system() * t
        if measure == "packet":
            return self.mean_packets_ahead() * t
        raise ModelError("measure", f"must be one of {', '.join(MEASURES)}, got {measure!r}")


def _packet_time(link_rate_bps: float, packet_bytes: float) -> float:
    rate = finite("link_rate_bps", link_rate_bps, low=0.0)
    size = finite("packet_bytes", packet_bytes, low=0.0)
    return 8.0 * size / rate


def _erlang_mixture_sf(ahead: QueueLengthDistribution, x: float) -> float:
    """``P(sum of A unit-mean exponentials > x) = sum_j P(Poisson(x) = j) P(A > j)``."""
    # The Poisson weights beyond x + 40 sqrt(x) + 40 are below 1e-300.
    jmax = max(len(ahead.pmf), int(x + 40.0 * math.sqrt(x) + 40.0))
    weights = poisson_pmf(x, jmax)
    return float(np.dot(weights, ahead.sf(np.arange(jmax + 1))))


def delay_exceedance_curve(
    bursts: BurstSizes,
    utilizations: Sequence[float] | np.ndarray,
    link_rates_bps: Sequence[float] | np.ndarray = (100e6, 155e6, 622e6),
    *,
    delay_s: float = 0.005,
    packet_bytes: float = 1500.0,
    measure: Measure = "queue",
) -> pd.DataFrame:
    """The ``ecnplus`` study's model curve: ``P(queueing delay > delay_s)`` against utilization.

    One row per link rate and utilization: ``link_rate_bps, utilization,
    delay_s, measure, p_exceed, mean_delay_s, mean_in_system`` (the model
    at 100, 155 and 622 Mb/s by default, the study's links, with 5 ms).
    The queue-length distribution depends only on the utilization, so it
    is computed once per utilization.
    """
    if measure not in MEASURES:
        raise ModelError("measure", f"must be one of {', '.join(MEASURES)}, got {measure!r}")
    delay_s = finite("delay_s", delay_s, low=0.0, strict=False)
    rows = []
    rates = [finite(f"link_rates_bps[{i}]", r, low=0.0) for i, r in enumerate(link_rates_bps)]
    for rho in np.asarray(utilizations, dtype=float):
        model = MXM1(bursts, float(rho))
        if measure == "packet":
            per_rate = [
                model.delay_exceedance(
                    delay_s, link_rate_bps=r, packet_bytes=packet_bytes, measure=measure
                )
                for r in rates
            ]
        else:
            qd = model.queue_length_distribution()
            per_rate = []
            for r in rates:
                k = math.floor(delay_s / _packet_time(r, packet_bytes) * (1.0 + 1e-12))
                per_rate.append(float(qd.sf(k + 1 if measure == "queue" else k)))
        for r, p in zip(rates, per_rate, strict=True):
            rows.append(
                {
                    "link_rate_bps": r,
                    "utilization": float(rho),
                    "delay_s": delay_s,
                    "measure": measure,
                    "p_exceed": p,
                    "mean_delay_s": model.mean_delay(
                        link_rate_bps=r, packet_bytes=packet_bytes, measure=measure
                    ),
                    "mean_in_system": model.mean_in_system(),
                }
            )
    frame: pd.DataFrame = pd.DataFrame(rows)
    return frame
