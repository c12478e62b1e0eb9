"""A Monte-Carlo M[X]/M/1 queue (numpy, seeded): the analytic model's independent check.

Bursts arrive as a Poisson process; each packet's transmission time is
exponential with mean 1 (times are in units of the mean packet time
``T``); FIFO, infinite buffer, starting empty. Waiting times come from
Lindley's recursion, solved in closed form over the whole run
(``V_b = Y_b - min_{i <= b} Y_i`` with ``Y`` the random walk of work
brought minus time elapsed), so the run is a handful of vectorised passes.
Estimates come with batch-means standard errors: the measured span is cut
into ``blocks`` consecutive blocks, long enough to be nearly independent.

Read first: Lindley 1952 (the waiting-time recursion); Asmussen & Glynn,
*Stochastic Simulation* (2007) (batch means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ecnsim.models._common import ModelError, finite, whole
from ecnsim.models.bursts import BurstSizes
from ecnsim.models.mx_m1 import _check_utilization

__all__ = ["MonteCarloRun", "simulate_mx_m1"]


@dataclass(frozen=True)
class MonteCarloRun:
    """One simulated path, after warm-up; times in units of the mean packet time.

    ``waiting[i]``: packet ``i``'s wait from its arrival to the start of its
    transmission, in arrival order. ``segment_start``, ``segment_length``,
    ``in_system``: the number in the system is ``in_system[j]`` for
    ``segment_length[j]`` from ``segment_start[j]`` (segments tile the
    measured span).
    """

    waiting: np.ndarray
    segment_start: np.ndarray
    segment_length: np.ndarray
    in_system: np.ndarray
    blocks: int

    def _time_blocks(self, values: np.ndarray) -> np.ndarray:
        """The time average of ``values`` (one per segment) over each block."""
        t0 = float(self.segment_start[0])
        span = float(self.segment_start[-1] + self.segment_length[-1]) - t0
        which = np.minimum(
            ((self.segment_start - t0) / span * self.blocks).astype(int), self.blocks - 1
        )
        num = np.bincount(which, weights=values * self.segment_length, minlength=self.blocks)
        den = np.bincount(which, weights=self.segment_length, minlength=self.blocks)
        return num / den

    def _packet_blocks(self, values: np.ndarray) -> np.ndarray:
        return np.array([b.mean() for b in np.array_split(values, self.blocks)])

    @staticmethod
    def _estimate(per_block: np.ndarray) -> tuple[float, float]:
        return float(per_block.mean()), float(per_block.std(ddof=1) / math.sqrt(len(per_block)))

    def mean_in_system(self) -> tuple[float, float]:
        """Time-average ``E[N]`` and its standard error."""
        return self._estimate(self._time_blocks(self.in_system.astype(float)))

    def in_system_exceeds(self, n: int) -> tuple[float, float]:
        """Time-average ``P(N > n)`` and its standard error."""
        return self._estimate(self._time_blocks((self.in_system > n).astype(float)))

    def mean_waiting(self) -> tuple[float, float]:
        """Packet-average waiting time (units of ``T``) and its standard error."""
        return self._estimate(self._packet_blocks(self.waiting))

    def waiting_exceeds(self, x: float) -> tuple[float, float]:
        """Packet-average ``P(W > x)`` (``x`` in units of ``T``) and its standard error."""
        return self._estimate(self._packet_blocks((self.waiting > x).astype(float)))


def simulate_mx_m1(
    bursts: BurstSizes,
    utilization: float,
    *,
    packets: int = 1_000_000,
    seed: int = 1,
    warmup: float = 0.05,
    blocks: int = 20,
) -> MonteCarloRun:
    """Simulate about ``packets`` packets of an M[X]/M/1 queue; drop the first ``warmup`` of them.

    Deterministic for a given ``seed`` and numpy version (PCG64 through
    ``numpy.random.default_rng``).
    """
    if not isinstance(bursts, BurstSizes):
        raise ModelError("bursts", f"must be a BurstSizes, got {type(bursts).__name__}")
    rho = _check_utilization(utilization)
    n_target = whole("packets", packets, low=1000)
    w = finite("warmup", warmup, low=0.0, strict=False)
    if not w < 0.5:
        raise ModelError("warmup", f"must be in [0, 0.5), got {w:g}")
    b = whole("blocks", blocks, low=2)
    rng = np.random.default_rng(whole("seed", seed, low=0))

    m1 = bursts.mean()
    n_bursts = max(2, round(n_target / m1))
    lam = rho / m1  # bursts per unit time (T = 1)
    sizes = rng.choice(len(bursts.pmf), size=n_bursts, p=bursts.pmf)
    gaps = rng.exponential(1.0 / lam, size=n_bursts)
    arrivals = np.cumsum(gaps)
    service = rng.exponential(1.0, size=int(sizes.sum()))

    # Work each burst brings, and Lindley's recursion for the wait of its first packet.
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    work = np.add.reduceat(service, first)
    # Y_0 = 0, Y_b = sum_{i<b} (work_i - gap_{i+1}); V_b = Y_b - min_{i<=b} Y_i (Lindley52).
    steps = work[:-1] - np.diff(arrivals)
    y = np.concatenate([[0.0], np.cumsum(steps)])
    v = y - np.minimum.accumulate(y)

    # A packet waits for its burst's first packet, plus the packets before it in the burst.
    burst_of = np.repeat(np.arange(n_bursts), sizes)
    within = (
        np.cumsum(service) - service - np.repeat(np.cumsum(service)[first] - service[first], sizes)
    )
    waiting = v[burst_of] + within
    departures = arrivals[burst_of] + waiting + service

    # The number in the system as a step function: +X at an arrival, -1 at a departure.
    times = np.concatenate([arrivals, departures])
    steps_n = np.concatenate([sizes, -np.ones(len(departures), dtype=sizes.dtype)])
    order = np.argsort(times, kind="stable")
    times, steps_n = times[order], steps_n[order]
    level = np.cumsum(steps_n)

    # Measure from the arrival of the first packet after warm-up to the last arrival.
    cut = int(w * len(service))
    t0 = arrivals[burst_of[cut]]
    t1 = arrivals[-1]
    keep = (times >= t0) & (times < t1)
    starts = times[keep]
    lengths = np.diff(np.concatenate([starts, [t1]]))
    return MonteCarloRun(
        waiting=waiting[cut : np.searchsorted(burst_of, n_bursts - 1)],
        segment_start=starts,
        segment_length=lengths,
        in_system=level[keep],
        blocks=b,
    )
