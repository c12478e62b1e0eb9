"""From TCP flow sizes to the burst (batch) sizes of an M[X]/M/1 queue.

A TCP flow of ``s`` packets in slow start without losses sends its window
once per round trip: ``IW``, ``2 IW``, ``4 IW``, ... packets, each window
capped by the receiver's ``W_max`` (after which every burst is ``W_max``),
and the last burst is whatever remains. Each burst reaches the bottleneck
as one batch. This is the mapping of Kuzmanovic 2005's M[X]/M/1 model
(STUDIES.md §5); ``docs/models/mx_m1.md`` gives the derivation and every
assumption.

Read first: RFC 5681 §3.1 (slow start: cwnd grows by one segment per ACK,
doubling per round trip without delayed ACKs); RFC 3390 / RFC 6928 (the
initial window); RFC 1122 §4.2.3.4 (a sender sends full segments inside
the offered window).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ecnsim.models._common import ModelError, finite, whole
from ecnsim.models.distributions import Distribution, from_spec

__all__ = [
    "BurstSizes",
    "FlowSizes",
    "burst_sizes",
    "slow_start_bursts",
    "window_packets",
]

#: Default maximum segment size (bytes): the ``rfc`` and ``linux`` profiles' (``profile.rs``;
#: a 1500-byte Ethernet MTU less 40 bytes of headers). ``ns2-2001`` uses 1000 (ns-2's
#: 1000-byte packets, all counted as payload).
DEFAULT_MSS = 1460


def slow_start_bursts(packets: int, *, iw: int = 2, w_max: int | None = None) -> tuple[int, ...]:
    """The bursts a flow of ``packets`` packets sends: ``IW, 2 IW, 4 IW, ...``, capped at ``w_max``.

    ``slow_start_bursts(10)`` is ``(2, 4, 4)``; ``slow_start_bursts(20, w_max=8)``
    is ``(2, 4, 8, 6)``; ``slow_start_bursts(30, w_max=8)`` is ``(2, 4, 8, 8, 8)``.
    ``w_max=None`` leaves the window uncapped. This is the definition;
    :func:`burst_sizes` computes the same mapping for a whole distribution.
    """
    s = whole("packets", packets, low=1)
    iw = whole("iw", iw, low=1)
    cap = None if w_max is None else whole("w_max", w_max, low=1)
    out: list[int] = []
    window = iw
    while s > 0:
        # Kuzmanovic05: burst = min(window, W_max), the last one the remainder.
        burst = min(window if cap is None else min(window, cap), s)
        out.append(burst)
        s -= burst
        # RFC 5681 §3.1: without delayed ACKs slow start doubles cwnd every round trip.
        window *= 2
    return tuple(out)


def window_packets(rcv_window_bytes: float, mss: int = DEFAULT_MSS) -> int:
    """A receive window in bytes as whole segments: ``max(1, floor(bytes / mss))``.

    RFC 1122 §4.2.3.4: the sender sends full-sized segments inside the
    offered window, so 8000 B at MSS 1460 is 5 segments (ecnsim's sender
    does the same: a full segment must fit in the window).
    """
    w = finite("rcv_window", rcv_window_bytes, low=0.0)
    m = whole("mss", mss)
    return max(1, math.floor(round(w) / m))


def _normalised_pmf(
    field: str, pmf: Mapping[int, float] | Sequence[float] | npt.ArrayLike
) -> np.ndarray:
    """A probability mass function indexed by size, from ``{size: p}`` or an array; sums to 1.

    ``field`` names the argument in errors.
    """
    if isinstance(pmf, Mapping):
        sizes = [whole(f"{field}[{k!r}]", k, low=1) for k in pmf]
        arr = np.zeros(max(sizes) + 1)
        for s, k in zip(sizes, pmf, strict=True):
            arr[s] += finite(f"{field}[{k!r}]", pmf[k], low=0.0, strict=False)
    else:
        arr = np.array(pmf, dtype=float)
    total = float(arr.sum()) if arr.size else 0.0
    if not total > 0 or not math.isfinite(total):
        raise ModelError(field, "probabilities must be finite, >= 0 and not all 0")
    return arr / total


@dataclass(frozen=True)
class FlowSizes:
    """The distribution of a flow's size in packets, ``S``.

    ``pmf[s] = P(S = s)`` for ``s = 0..len(pmf) - 1`` (``pmf[0] = 0``).
    For an unbounded size distribution the table stops at ``s_max`` and
    ``tail_mass = P(S > s_max)`` and ``tail_mean = E[S; S > s_max]`` carry
    the rest exactly enough for the burst mapping (``docs/models/mx_m1.md``).
    """

    pmf: np.ndarray
    tail_mass: float = 0.0
    tail_mean: float = 0.0
    #: What the sizes came from, for the record.
    source: str = field(default="pmf", compare=False)

    def __post_init__(self) -> None:
        p = np.asarray(self.pmf, dtype=float)
        if p.ndim != 1 or p.size < 2:
            raise ModelError("flow_sizes", "needs P(S = s) for s = 0, 1, ... (at least 2 entries)")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ModelError("flow_sizes", "probabilities must be finite and >= 0")
        if p[0] > 0:
            raise ModelError("flow_sizes", f"a flow has at least 1 packet, but P(S = 0) = {p[0]:g}")
        total = float(p.sum()) + self.tail_mass
        if abs(total - 1.0) > 1e-9:
            raise ModelError("flow_sizes", f"probabilities must sum to 1, got {total:.12g}")
        p.setflags(write=False)
        object.__setattr__(self, "pmf", p)

    @property
    def s_max(self) -> int:
        """The largest size the table holds."""
        return len(self.pmf) - 1

    def mean(self) -> float:
        """``E[S]``, packets per flow."""
        return float(np.dot(np.arange(len(self.pmf)), self.pmf)) + self.tail_mean

    @classmethod
    def from_pmf(cls, pmf: Mapping[int, float] | Sequence[float] | npt.ArrayLike) -> FlowSizes:
        """From ``{packets: probability}`` or an array indexed by packets (normalised to sum 1)."""
        return cls(_normalised_pmf("flow_sizes", pmf))

    @classmethod
    def from_samples(cls, sizes_bytes: npt.ArrayLike, mss: int = DEFAULT_MSS) -> FlowSizes:
        """The empirical distribution of sizes the caller drew (bytes; rounded as the core does)."""
        x = np.asarray(sizes_bytes, dtype=float).ravel()
        if x.size == 0 or not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ModelError("flow_sizes", "samples must be a non-empty array of finite sizes >= 0")
        s = _packets(x, whole("mss", mss))
        counts = np.bincount(s)
        return cls(counts / x.size, source=f"{x.size} samples")

    @classmethod
    def from_quantile(
        cls,
        quantile: Callable[[np.ndarray], npt.ArrayLike],
        mss: int = DEFAULT_MSS,
        *,
        cells: int = 1 << 16,
        tail_decades: int = 10,
    ) -> FlowSizes:
        """From a quantile function ``u -> size in bytes`` (called once, on a numpy array).

        Midpoint discretisation: ``(0, 1 - 1/cells)`` is cut into equal cells
        of width ``1/cells``; the last cell is cut into decades
        (``[1 - 10^-d / cells, 1 - 10^-(d+1) / cells)``, ``d < tail_decades``,
        1000 cells each) so that the tail is resolved; each cell is an atom
        at the quantile of its midpoint, and the last ``10^-tail_decades /
        cells`` of probability is one atom. Each probability is off by at
        most one cell's width.
        """
        n = whole("cells", cells, low=2)
        k = whole("tail_decades", tail_decades, low=1)
        body = np.arange(n, dtype=float) / n  # edges 0, 1/n, ..., 1 - 1/n
        decades = [
            np.linspace(1.0 - 10.0**-d / n, 1.0 - 10.0 ** -(d + 1) / n, 1000, endpoint=False)
            for d in range(k)
        ]
        edges = np.unique(np.concatenate([body, *decades, [1.0 - 10.0**-k / n, 1.0]]))
        widths = np.diff(edges)
        mids = 0.5 * (edges[:-1] + edges[1:])
        x = np.asarray(quantile(mids), dtype=float)
        if x.shape != mids.shape or not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ModelError("quantile", "must map an array of u in (0, 1) to finite sizes >= 0")
        pmf = np.bincount(_packets(x, whole("mss", mss)), weights=widths)
        return cls(pmf / pmf.sum(), source="quantile function")

    @classmethod
    def from_distribution(
        cls,
        sizes: Distribution | Mapping[str, object],
        mss: int = DEFAULT_MSS,
        *,
        tail_tol: float = 1e-12,
        max_packets: int = 1 << 22,
    ) -> FlowSizes:
        """Packets per flow for sizes (bytes) drawn from ``sizes``, rounded as the core rounds them.

        The core sends ``max(1, round(x))`` bytes for a draw ``x``
        (``app/mod.rs``), i.e. ``ceil(bytes / mss)`` packets, so
        ``P(S > s) = P(X >= s mss + 1/2)``. The table runs to the size
        where ``P(S > s) <= tail_tol`` (or ``max_packets``); beyond it,
        ``tail_mass`` and ``tail_mean`` come from the distribution's closed
        forms (``tail_mean`` to within ``tail_mass / 2`` packets).
        """
        dist = from_spec(sizes, "flow_sizes")
        m = whole("mss", mss)
        tol = finite("tail_tol", tail_tol, low=0.0)
        cap = whole("max_packets", max_packets, low=16)
        atoms = dist.atoms
        if atoms is not None:
            # A constant or discrete law (a shipped table included): its atoms, exactly.
            s = _packets(atoms["value"].to_numpy(dtype=float), m)
            probs = atoms["probability"].to_numpy(dtype=float)
            return cls(np.bincount(s, weights=probs) / probs.sum(), source=repr(dist))
        mean = dist.mean
        if mean is None or not math.isfinite(mean):
            raise ModelError(
                "flow_sizes",
                f"the mean flow size of {dist!r} is infinite; bursts need a finite mean",
            )
        upper = dist.upper
        if math.isfinite(upper):
            s_max = int(_packets(np.asarray([upper]), m)[0])
        else:
            x_tol = float(dist.isf(tol))
            s_max = max(int(_packets(np.asarray([x_tol]), m)[0]), 16)
        s_max = min(s_max, cap)
        # P(S > s) = P(X >= s mss + 1/2): the core rounds to whole bytes, then fills segments.
        # P(X >= b) is P(X > b') for b' the double just below b (an atom at b counts).
        bounds = np.arange(s_max + 1, dtype=float) * m + 0.5
        sf = np.asarray(dist.sf(np.nextafter(bounds, -np.inf)), dtype=float)
        sf[0] = 1.0
        pmf = np.concatenate([[0.0], sf[:-1] - sf[1:]])
        tail_mass = float(sf[-1])
        tail_mean = 0.0
        if tail_mass > 0:
            # E[S; S > s_max] = E[(X - 1/2) / mss; X > b] + E[1 - frac]: the fractional part
            # is taken as uniform (error < tail_mass / 2 packets).
            pm = float(dist.partial_mean(bounds[-1]))
            tail_mean = (pm - 0.5 * tail_mass) / m + 0.5 * tail_mass
        return cls(pmf, tail_mass, tail_mean, source=repr(dist))


def _packets(bytes_: np.ndarray, mss: int) -> np.ndarray:
    """``ceil(max(1, round(x)) / mss)``: packets for sizes ``x`` (bytes), as the core sends them."""
    b = np.maximum(np.floor(np.asarray(bytes_, dtype=float) + 0.5), 1.0)
    return np.ceil(b / mss).astype(np.int64)


@dataclass(frozen=True)
class BurstSizes:
    """The distribution of a burst's (batch's) size in packets, ``X >= 1``.

    ``pmf[k] = P(X = k)`` for ``k = 0..len(pmf) - 1`` (``pmf[0] = 0``): the
    batch-size distribution of the M[X]/M/1 queue. Built by
    :func:`burst_sizes` from flows, or directly (:meth:`constant`,
    :meth:`geometric`, :meth:`from_pmf`).
    """

    pmf: np.ndarray
    #: ``E[bursts per flow]`` when built from flows (NaN otherwise).
    bursts_per_flow: float = math.nan
    #: ``E[packets per flow]`` when built from flows (NaN otherwise).
    packets_per_flow: float = math.nan
    #: Probability mass dropped when an infinite support was cut (geometric).
    truncated_mass: float = 0.0

    def __post_init__(self) -> None:
        p = np.asarray(self.pmf, dtype=float)
        if p.ndim != 1 or p.size < 2:
            raise ModelError("bursts", "needs P(X = k) for k = 0, 1, ... (at least 2 entries)")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ModelError("bursts", "probabilities must be finite and >= 0")
        if p[0] > 0:
            raise ModelError("bursts", f"a burst has at least 1 packet, but P(X = 0) = {p[0]:g}")
        if abs(float(p.sum()) - 1.0) > 1e-9:
            raise ModelError("bursts", f"probabilities must sum to 1, got {float(p.sum()):.12g}")
        last = int(np.flatnonzero(p)[-1])
        p = p[: last + 1].copy()
        p.setflags(write=False)
        object.__setattr__(self, "pmf", p)

    @property
    def max(self) -> int:
        """The largest burst."""
        return len(self.pmf) - 1

    def mean(self) -> float:
        """``E[X]``."""
        return float(np.dot(np.arange(len(self.pmf)), self.pmf))

    def second_moment(self) -> float:
        """``E[X^2]``."""
        k = np.arange(len(self.pmf), dtype=float)
        return float(np.dot(k * k, self.pmf))

    def sf(self) -> np.ndarray:
        """``P(X > j)`` for ``j = 0..max - 1``."""
        return np.cumsum(self.pmf[::-1])[::-1][1:]

    @classmethod
    def constant(cls, k: int = 1) -> BurstSizes:
        """Every burst is ``k`` packets (``k = 1``: the M/M/1 queue)."""
        n = whole("k", k)
        pmf = np.zeros(n + 1)
        pmf[n] = 1.0
        return cls(pmf)

    @classmethod
    def geometric(cls, q: float, *, tol: float = 1e-18) -> BurstSizes:
        """``P(X = k) = (1 - q) q^(k-1)``, ``k >= 1`` (mean ``1 / (1 - q)``).

        The support is cut where ``P(X > k) = q^k < tol`` and the rest is
        renormalised (``truncated_mass`` records it).
        """
        q = finite("q", q, low=0.0, strict=False)
        if not q < 1.0:
            raise ModelError("q", f"must be in [0, 1), got {q:g}")
        if q == 0.0:
            return cls.constant(1)
        kmax = max(1, math.ceil(math.log(tol) / math.log(q)))
        if kmax > 1_000_000:
            raise ModelError(
                "q",
                f"too close to 1: cutting P(X > k) at {tol:g} needs {kmax} sizes (at most 10^6)",
            )
        k = np.arange(1, kmax + 1, dtype=float)
        pmf = np.concatenate([[0.0], (1.0 - q) * q ** (k - 1.0)])
        cut = float(q**kmax)
        return cls(pmf / pmf.sum(), truncated_mass=cut)

    @classmethod
    def from_pmf(cls, pmf: Mapping[int, float] | Sequence[float] | npt.ArrayLike) -> BurstSizes:
        """From ``{size: probability}`` or an array indexed by size (normalised to sum 1)."""
        return cls(_normalised_pmf("bursts", pmf))


def _burst_counts(flows: FlowSizes, w: int | None, iw: int) -> tuple[np.ndarray, float]:
    """``E[number of bursts of size k per flow]`` for each ``k``, and ``E[bursts per flow]``.

    The vectorised form of :func:`slow_start_bursts` over ``flows``
    (``docs/models/mx_m1.md``, "Burst sizes").
    """
    p = flows.pmf
    s_max = flows.s_max
    # ge[s] = P(S >= s), s = 0..s_max + 1, the tail included.
    ge = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]]) + flows.tail_mass
    if w is None and flows.tail_mass > 0:
        raise ModelError(
            "w_max", "an uncapped window (None) needs flow sizes with a bounded support"
        )
    size = (w if w is not None else s_max) + 1
    counts = np.zeros(max(size, iw + 1))
    done = 0  # packets sent by the bursts so far (c_{j-1})
    window = iw
    while w is None or window < w:
        end = done + window  # c_j
        # Flows ending inside this window: a last burst of s - c_{j-1} packets.
        lo, hi = done + 1, min(end - 1, s_max)
        if lo <= hi:
            counts[1 : hi - done + 1] += p[lo : hi + 1]
        # Flows of at least c_j packets send the whole window.
        if end <= s_max + 1:
            if window >= len(counts):
                counts = np.pad(counts, (0, window + 1 - len(counts)))
            counts[window] += ge[end]
        done = end
        window *= 2
        if done >= s_max and flows.tail_mass == 0.0:
            break
    if w is not None:
        # After slow start reaches W_max: (s - P) // W bursts of W, and the remainder.
        if flows.tail_mass > 0 and s_max < done + w:
            raise ModelError(
                "flow_sizes.max_packets",
                f"the size table ({s_max} packets) must reach past slow start ({done + w} packets)",
            )
        s = np.arange(done + 1, s_max + 1)
        if s.size:
            off = s - done
            counts[w] += float(np.dot(p[done + 1 :], off // w))
            remainders = np.bincount(off % w, weights=p[done + 1 :], minlength=w)
            counts[1:w] += remainders[1:w]
        if flows.tail_mass > 0:
            # Flows beyond the table: whole W bursts for their mean size; remainders uniform
            # on 0..W-1 (exact as s_max / W grows; error of order tail_mass).
            t = flows.tail_mass
            counts[w] += (flows.tail_mean - t * done - t * (w - 1) / 2.0) / w
            counts[1:w] += t / w
    return counts, float(counts.sum())


def burst_sizes(
    flow_sizes: FlowSizes | Distribution | Mapping[str, object],
    *,
    rcv_window: Distribution | Mapping[str, object] | float | None = None,
    w_max: int | Mapping[int, float] | None = None,
    iw: int = 2,
    mss: int = DEFAULT_MSS,
) -> BurstSizes:
    """The size distribution of a randomly chosen burst, over flows and receive windows.

    ``flow_sizes``: a :class:`FlowSizes` (packets), or a size distribution
    in bytes (an :class:`ecnsim.Distribution` or a scenario table, converted
    with ``mss`` as the core sends it). The receiver window cap is given
    either in bytes as the scenario gives it (``rcv_window``: a number, or a
    ``constant`` or ``discrete`` distribution such as the web sessions'
    default ``ecnsim.workload_defaults("websessions")["rcv_window"]``;
    converted by :func:`window_packets`), or in
    packets (``w_max``: a number or ``{packets: weight}``); neither means
    uncapped. Windows are independent of flow sizes.

    ``P(X = k) = E[bursts of size k per flow] / E[bursts per flow]``: a
    burst is drawn uniformly among all bursts, as the queue sees them.
    """
    if rcv_window is not None and w_max is not None:
        raise ModelError("w_max", "give rcv_window (bytes) or w_max (packets), not both")
    m = whole("mss", mss)
    iw = whole("iw", iw)
    if rcv_window is None and w_max is None:
        unbounded = (
            flow_sizes.tail_mass > 0
            if isinstance(flow_sizes, FlowSizes)
            else not math.isfinite(from_spec(flow_sizes, "flow_sizes").upper)
        )
        if unbounded:
            raise ModelError(
                "w_max", "an uncapped window (None) needs flow sizes with a bounded support"
            )
    flows = (
        flow_sizes
        if isinstance(flow_sizes, FlowSizes)
        else FlowSizes.from_distribution(flow_sizes, m)
    )
    windows: dict[int | None, float]
    if rcv_window is not None:
        windows = {}
        if isinstance(rcv_window, (int, float)):
            windows[window_packets(rcv_window, m)] = 1.0
        else:
            d = from_spec(rcv_window, "rcv_window")
            atoms = d.atoms
            if atoms is None:
                raise ModelError(
                    "rcv_window.type",
                    f"must be constant or discrete for the model, got {d.spec.get('type')!r}",
                )
            for v, pr in zip(atoms["value"], atoms["probability"], strict=True):
                if pr > 0:
                    wp = window_packets(float(v), m)
                    windows[wp] = windows.get(wp, 0.0) + float(pr)
    elif w_max is None:
        windows = {None: 1.0}
    elif isinstance(w_max, Mapping):
        total = sum(finite(f"w_max[{k!r}]", v, low=0.0, strict=False) for k, v in w_max.items())
        if not total > 0:
            raise ModelError("w_max", "weights must be >= 0 and not all 0")
        windows = {whole(f"w_max[{k!r}]", k): float(v) / total for k, v in w_max.items()}
    else:
        windows = {whole("w_max", w_max): 1.0}

    # Mix over windows: bursts of each size per flow, weighted by the window's probability.
    per_flow: np.ndarray = np.zeros(1)
    bursts_per_flow = 0.0
    for w, prob in windows.items():
        if prob == 0.0:
            continue
        counts, n = _burst_counts(flows, w, iw)
        if len(counts) > len(per_flow):
            per_flow = np.pad(per_flow, (0, len(counts) - len(per_flow)))
        per_flow[: len(counts)] += prob * counts
        bursts_per_flow += prob * n
    return BurstSizes(
        per_flow / bursts_per_flow,
        bursts_per_flow=bursts_per_flow,
        packets_per_flow=flows.mean(),
    )
