"""Size distributions described exactly as a scenario describes them, with their exact maths.

A :class:`Distribution` is the Python face of the scenario's distribution
table (``docs/scenario.md``, "Distribution-valued keys"): the same ``type``
and the same keys, in the field's base unit (bytes for sizes). One
description drives both the simulator and the analytic model::

    sizes = BoundedPareto(shape=0.9, min=760, max=1_000_000)
    model = {"type": "websessions", "object_size": sizes.to_spec(), ...}  # the simulation
    bursts = burst_sizes(sizes, rcv_window=WEB_RECEIVE_WINDOWS)          # the model

and :func:`from_spec` reads a scenario's table back
(``from_spec({"type": "pareto", "shape": 1.2, "scale": 1000})``).

Each class gives, in closed form where one exists: the survival function
``sf(x) = P(X > x)`` (computed directly, not as ``1 - cdf``, so that heavy
tails keep their precision), the mean, the partial mean ``E[X; X > x]``
and the inverse survival function ``isf(p)``. The meaning of each type is
the core's (``crates/ecnsim-core/src/app/dist.rs``): for example
``lognormal_pareto`` replaces a body draw above ``cutoff`` by a Pareto
draw, and an ``empirical`` table's first cdf is an atom at its first value.

Read first: Harchol-Balter 1998 (bounded Pareto); Crovella & Bestavros
1997 and Barford & Crovella 1998 (lognormal body, Pareto tail); Smith,
Campos, Jeffay & Ott 2001 (the web object sizes of the ``ecnplus`` study).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ecnsim.models._common import ModelError, finite

__all__ = [
    "WEB_OBJECT_SIZES",
    "WEB_RECEIVE_WINDOWS",
    "BoundedPareto",
    "Constant",
    "Discrete",
    "Distribution",
    "Empirical",
    "Exponential",
    "Lognormal",
    "LognormalPareto",
    "Pareto",
    "Uniform",
    "from_spec",
]

ArrayLike = npt.ArrayLike

_erfc = np.frompyfunc(math.erfc, 1, 1)


def _normal_sf(z: npt.ArrayLike) -> np.ndarray:
    """``P(Z > z)`` for a standard normal ``Z``, through ``erfc`` (accurate in the far tail)."""
    return np.asarray(0.5 * _erfc(np.asarray(z, dtype=float) / math.sqrt(2.0)), dtype=float)


def _arr(x: object) -> np.ndarray:
    """``x`` as a float array (typed, so that the maths below type-checks)."""
    return np.asarray(x, dtype=float)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return _arr(np.log(np.maximum(x, 0.0)))


class Distribution(ABC):
    """A non-negative random variable (a size in bytes, a window in bytes, ...).

    One subclass per scenario ``type``; its constructor takes that type's
    keys. Invalid parameters raise :class:`~ecnsim.models.ModelError` naming
    the key and the allowed values, by the scenario's rules.
    """

    #: The scenario's ``type`` string.
    type: ClassVar[str]
    #: The scenario's keys, in order.
    keys: ClassVar[tuple[str, ...]]

    def to_spec(self) -> dict[str, Any]:
        """The scenario's table for this distribution (``{"type": ..., <keys>}``)."""
        out: dict[str, Any] = {"type": self.type}
        for k in self.keys:
            v = getattr(self, k)
            if k == "points":
                out[k] = [list(p) for p in v]
            else:
                out[k] = list(v) if isinstance(v, tuple) else v
        return out

    @abstractmethod
    def sf(self, x: ArrayLike) -> np.ndarray:
        """``P(X > x)``."""

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``P(X <= x)``."""
        return 1.0 - self.sf(x)

    @abstractmethod
    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        """``E[X; X > x]``: the mean restricted to values above ``x`` (``inf`` if it diverges)."""

    def mean(self) -> float:
        """``E[X]`` (``inf`` if it diverges)."""
        return float(self.partial_mean(-1.0))

    @property
    @abstractmethod
    def upper(self) -> float:
        """The least upper bound of the values (``inf`` if unbounded)."""

    def isf(self, p: ArrayLike) -> np.ndarray:
        """The smallest ``x`` with ``P(X > x) <= p``, for ``p`` in ``(0, 1]``.

        The default bisects on ``log x`` (all ``p`` at once, 64 halvings of
        a range of 1454 in ``log x``: about 1e-16 relative); subclasses with
        a closed form override it.
        """
        ps = np.asarray(p, dtype=float)
        lo = np.full(ps.shape, -745.0)  # about the log of the smallest positive double
        hi = np.full(ps.shape, min(math.log(self.upper), 709.0) if self.upper > 0 else -745.0)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            above = self.sf(np.exp(mid)) > ps
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        return _arr(np.where(self.sf(0.0) <= ps, 0.0, np.exp(hi)))

    def top_share(self, fraction: float) -> float:
        """The share of the total (bytes, for sizes) carried by the largest ``fraction`` of draws.

        ``(E[X; X > x_q] + x_q (fraction - P(X > x_q))) / E[X]`` with
        ``x_q`` the ``1 - fraction`` quantile: an atom at ``x_q`` counts for
        the draws the fraction still needs. Smith et al. 2001 report about
        0.8 for ``fraction = 0.15`` on web objects.
        """
        q = finite("fraction", fraction, low=0.0)
        if q > 1.0:
            raise ModelError("fraction", f"must be in (0, 1], got {q:g}")
        x = float(self.isf(q))
        above = float(self.sf(x))
        return (float(self.partial_mean(x)) + x * max(q - above, 0.0)) / self.mean()


@dataclass(frozen=True)
class Constant(Distribution):
    """Always ``value``."""

    type: ClassVar[str] = "constant"
    keys: ClassVar[tuple[str, ...]] = ("value",)
    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", finite("value", self.value, low=0.0, strict=False))

    def sf(self, x: ArrayLike) -> np.ndarray:
        return np.where(np.asarray(x, dtype=float) < self.value, 1.0, 0.0)

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        return np.where(np.asarray(x, dtype=float) < self.value, self.value, 0.0)

    @property
    def upper(self) -> float:
        return self.value

    def isf(self, p: ArrayLike) -> np.ndarray:
        return np.full(np.shape(p), self.value)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on ``[min, max)``."""

    type: ClassVar[str] = "uniform"
    keys: ClassVar[tuple[str, ...]] = ("min", "max")
    min: float
    max: float

    def __post_init__(self) -> None:
        lo = finite("min", self.min, low=0.0, strict=False)
        hi = finite("max", self.max)
        if hi < lo:
            raise ModelError("max", f"must be finite and >= min ({lo:g}), got {hi:g}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    def sf(self, x: ArrayLike) -> np.ndarray:
        x = _arr(x)
        if self.max == self.min:
            return np.where(x < self.min, 1.0, 0.0)
        return np.clip((self.max - x) / (self.max - self.min), 0.0, 1.0)

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        x = _arr(x)
        if self.max == self.min:
            return np.where(x < self.min, self.min, 0.0)
        x = _arr(np.clip(x, self.min, self.max))
        return _arr((self.max**2 - x**2) / (2.0 * (self.max - self.min)))

    @property
    def upper(self) -> float:
        return self.max

    def isf(self, p: ArrayLike) -> np.ndarray:
        return self.max - np.asarray(p, dtype=float) * (self.max - self.min)


class Exponential(Distribution):
    """Exponential with mean ``mean``."""

    type: ClassVar[str] = "exponential"
    keys: ClassVar[tuple[str, ...]] = ("mean",)

    def __init__(self, mean: float) -> None:
        self._mean = finite("mean", mean, low=0.0)

    def __repr__(self) -> str:
        return f"Exponential(mean={self._mean!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Exponential) and other._mean == self._mean

    def __hash__(self) -> int:
        return hash((self.type, self._mean))

    def to_spec(self) -> dict[str, Any]:
        return {"type": self.type, "mean": self._mean}

    def sf(self, x: ArrayLike) -> np.ndarray:
        return _arr(np.exp(-np.maximum(np.asarray(x, dtype=float), 0.0) / self._mean))

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        x = _arr(np.maximum(np.asarray(x, dtype=float), 0.0))
        return _arr((x + self._mean) * np.exp(-x / self._mean))

    @property
    def upper(self) -> float:
        return math.inf

    def isf(self, p: ArrayLike) -> np.ndarray:
        return _arr(-self._mean * np.log(np.asarray(p, dtype=float)))


@dataclass(frozen=True)
class Pareto(Distribution):
    """Pareto: ``P(X > x) = (scale / x)^shape`` for ``x >= scale``."""

    type: ClassVar[str] = "pareto"
    keys: ClassVar[tuple[str, ...]] = ("shape", "scale")
    shape: float
    scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", finite("shape", self.shape, low=0.0))
        object.__setattr__(self, "scale", finite("scale", self.scale, low=0.0))

    def sf(self, x: ArrayLike) -> np.ndarray:
        x = _arr(x)
        return _arr(
            np.where(x < self.scale, 1.0, (self.scale / np.maximum(x, self.scale)) ** self.shape)
        )

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        x = _arr(np.maximum(np.asarray(x, dtype=float), self.scale))
        a = self.shape
        if a <= 1.0:
            return np.full(x.shape, math.inf)
        # E[X; X > x] = a scale^a x^(1 - a) / (a - 1), x >= scale.
        return _arr(a * self.scale * (self.scale / x) ** (a - 1.0) / (a - 1.0))

    @property
    def upper(self) -> float:
        return math.inf

    def isf(self, p: ArrayLike) -> np.ndarray:
        return _arr(self.scale * np.asarray(p, dtype=float) ** (-1.0 / self.shape))


@dataclass(frozen=True)
class BoundedPareto(Distribution):
    """Pareto truncated to ``[min, max]`` (Harchol-Balter 1998)."""

    type: ClassVar[str] = "bounded_pareto"
    keys: ClassVar[tuple[str, ...]] = ("shape", "min", "max")
    shape: float
    min: float
    max: float

    def __post_init__(self) -> None:
        a = finite("shape", self.shape, low=0.0)
        lo = finite("min", self.min, low=0.0)
        hi = finite("max", self.max)
        if not hi > lo:
            raise ModelError("max", f"must be > min ({lo:g}), got {hi:g}")
        object.__setattr__(self, "shape", a)
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    @property
    def _norm(self) -> float:
        """``1 - (L/H)^a``."""
        return -math.expm1(self.shape * math.log(self.min / self.max))

    def sf(self, x: ArrayLike) -> np.ndarray:
        x = _arr(np.clip(np.asarray(x, dtype=float), self.min, self.max))
        # HarcholBalter98: P(X > x) = ((L/x)^a - (L/H)^a) / (1 - (L/H)^a) on [L, H].
        return _arr(
            ((self.min / x) ** self.shape - (self.min / self.max) ** self.shape) / self._norm
        )

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        x = _arr(np.clip(np.asarray(x, dtype=float), self.min, self.max))
        a, lo, hi = self.shape, self.min, self.max
        if abs(a - 1.0) < 1e-12:
            return _arr(lo * np.log(hi / x) / self._norm)
        # E[X; X > x] = a L^a (x^(1-a) - H^(1-a)) / ((a - 1)(1 - (L/H)^a)) on [L, H].
        return _arr(a * lo**a * (x ** (1.0 - a) - hi ** (1.0 - a)) / ((a - 1.0) * self._norm))

    @property
    def upper(self) -> float:
        return self.max

    def isf(self, p: ArrayLike) -> np.ndarray:
        p = _arr(p)
        lh = (self.min / self.max) ** self.shape
        return _arr(self.min * (p * self._norm + lh) ** (-1.0 / self.shape))


@dataclass(frozen=True)
class Lognormal(Distribution):
    """``exp(N(mu, sigma^2))``."""

    type: ClassVar[str] = "lognormal"
    keys: ClassVar[tuple[str, ...]] = ("mu", "sigma")
    mu: float
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", finite("mu", self.mu))
        object.__setattr__(self, "sigma", finite("sigma", self.sigma, low=0.0))

    def sf(self, x: ArrayLike) -> np.ndarray:
        return _arr(_normal_sf((_log(np.asarray(x, dtype=float)) - self.mu) / self.sigma))

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        m, s = self.mu, self.sigma
        # E[X; X > x] = exp(mu + s^2/2) P(Z > (ln x - mu - s^2) / s).
        z = (_log(np.asarray(x, dtype=float)) - m - s * s) / s
        return math.exp(m + 0.5 * s * s) * _normal_sf(z)

    @property
    def upper(self) -> float:
        return math.inf


@dataclass(frozen=True)
class LognormalPareto(Distribution):
    """Lognormal body; draws above ``cutoff`` are replaced by Pareto(``shape``, ``cutoff``) ones."""

    type: ClassVar[str] = "lognormal_pareto"
    keys: ClassVar[tuple[str, ...]] = ("mu", "sigma", "cutoff", "shape")
    mu: float
    sigma: float
    cutoff: float
    shape: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", finite("mu", self.mu))
        object.__setattr__(self, "sigma", finite("sigma", self.sigma, low=0.0))
        object.__setattr__(self, "cutoff", finite("cutoff", self.cutoff, low=0.0))
        object.__setattr__(self, "shape", finite("shape", self.shape, low=0.0))

    @property
    def _body(self) -> Lognormal:
        return Lognormal(self.mu, self.sigma)

    @property
    def _p_tail(self) -> float:
        """``P(body > cutoff)``: the probability of a tail draw."""
        return float(self._body.sf(self.cutoff))

    def sf(self, x: ArrayLike) -> np.ndarray:
        x = _arr(x)
        c = self.cutoff
        # Below the cutoff: P(x < body <= c) + P(tail draw) = P(body > x).
        tail = self._p_tail * (c / np.maximum(x, c)) ** self.shape
        return np.where(x < c, self._body.sf(x), tail)

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        x = _arr(x)
        c = self.cutoff
        body = self._body.partial_mean(np.minimum(x, c)) - self._body.partial_mean(c)
        tail = self._p_tail * Pareto(self.shape, c).partial_mean(np.maximum(x, c))
        return np.where(x < c, body, 0.0) + tail

    @property
    def upper(self) -> float:
        return math.inf


@dataclass(frozen=True)
class Empirical(Distribution):
    """A piecewise-linear CDF through ``points = ((value, cdf), ...)``, the scenario's ``points``.

    A first cdf above 0 is an atom at the first value (a draw below it
    gives that value, as the core's inversion does); a vertical step is an
    atom too. The core's shipped ``table`` names cannot be read here: give
    a table's values and counts as a :class:`Discrete`.
    """

    type: ClassVar[str] = "empirical"
    keys: ClassVar[tuple[str, ...]] = ("points",)
    points: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        try:
            pts = tuple((float(v), float(c)) for v, c in self.points)
        except (TypeError, ValueError):
            raise ModelError("points", "must be [[value, cdf], ...]") from None
        if len(pts) < 2:
            raise ModelError("points", f"need at least 2 points, got {len(pts)}")
        for i in range(len(pts) - 1):
            if not (pts[i + 1][0] >= pts[i][0] and pts[i + 1][1] >= pts[i][1]):
                raise ModelError(
                    "points", f"values and cdf must be non-decreasing (points {i} and {i + 1})"
                )
        if any(not (math.isfinite(v) and v >= 0.0 and 0.0 <= c <= 1.0) for v, c in pts):
            raise ModelError(
                "points", "every value must be finite and >= 0 and every cdf in [0, 1]"
            )
        if abs(pts[-1][1] - 1.0) > 1e-9:
            raise ModelError("points", f"the last cdf must be 1, got {pts[-1][1]:g}")
        object.__setattr__(self, "points", pts)

    @property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        a = np.asarray(self.points, dtype=float)
        return a[:, 0], a[:, 1]

    def sf(self, x: ArrayLike) -> np.ndarray:
        v, c = self._arrays
        x = _arr(x)
        # Right-continuous: the last point at or below x sets the level.
        i = np.searchsorted(v, x, side="right") - 1
        j = np.clip(i, 0, len(v) - 2)
        dv = v[j + 1] - v[j]
        frac = np.where(dv > 0, (x - v[j]) / np.where(dv > 0, dv, 1.0), 0.0)
        f = c[j] + np.clip(frac, 0.0, 1.0) * (c[j + 1] - c[j])
        f = np.where(i < 0, 0.0, np.where(i >= len(v) - 1, 1.0, f))
        return np.clip(1.0 - f, 0.0, 1.0)

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        v, c = self._arrays
        xs = np.asarray(x, dtype=float)
        # The atom at the first value, then each piece: linear pieces have density
        # dc / dv, vertical ones are atoms.
        total = np.where(v[0] > xs, v[0] * c[0], 0.0)
        for i in range(len(v) - 1):
            dc = c[i + 1] - c[i]
            if dc <= 0.0:
                continue
            if v[i + 1] == v[i]:
                total = total + np.where(v[i] > xs, v[i] * dc, 0.0)
                continue
            lo = np.clip(xs, v[i], v[i + 1])
            total = total + dc / (v[i + 1] - v[i]) * 0.5 * (v[i + 1] ** 2 - lo**2)
        return np.asarray(total, dtype=float)

    @property
    def upper(self) -> float:
        return self.points[-1][0]

    def isf(self, p: ArrayLike) -> np.ndarray:
        v, c = self._arrays
        u = 1.0 - np.asarray(p, dtype=float)
        # The core's inversion: the first point whose cdf exceeds u, interpolated from the previous.
        i = np.searchsorted(c, u, side="right")
        j = np.clip(i, 1, len(v) - 1)
        dc = c[j] - c[j - 1]
        step = np.where(dc > 0, (u - c[j - 1]) / np.where(dc > 0, dc, 1.0), 1.0)
        x = v[j - 1] + (v[j] - v[j - 1]) * step
        return _arr(np.where(i == 0, v[0], np.where(i >= len(v), v[-1], x)))


@dataclass(frozen=True)
class Discrete(Distribution):
    """``values[i]`` with probability ``weights[i] / sum(weights)``."""

    type: ClassVar[str] = "discrete"
    keys: ClassVar[tuple[str, ...]] = ("values", "weights")
    values: tuple[float, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        try:
            values = tuple(float(v) for v in self.values)
            weights = tuple(float(w) for w in self.weights)
        except (TypeError, ValueError):
            raise ModelError("values", "values and weights must be lists of numbers") from None
        if not values or len(values) != len(weights):
            raise ModelError(
                "weights",
                f"need one weight per value and at least one value, got {len(values)} values "
                f"and {len(weights)} weights",
            )
        for v in values:
            if not (math.isfinite(v) and v >= 0.0):
                raise ModelError("values", f"must be finite and >= 0, got {v:g}")
        if any(not (math.isfinite(w) and w >= 0.0) for w in weights) or sum(weights) <= 0.0:
            raise ModelError("weights", "must be finite, >= 0 and not all 0")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "weights", weights)

    @property
    def probabilities(self) -> np.ndarray:
        """The weights normalised to sum 1."""
        w = np.asarray(self.weights, dtype=float)
        return _arr(w / w.sum())

    def sf(self, x: ArrayLike) -> np.ndarray:
        v = np.asarray(self.values)
        x = _arr(x)
        return np.asarray(np.sum(self.probabilities * (v > x[..., None]), axis=-1), dtype=float)

    def partial_mean(self, x: ArrayLike) -> np.ndarray:
        v = np.asarray(self.values)
        x = _arr(x)
        return np.asarray(np.sum(self.probabilities * v * (v > x[..., None]), axis=-1), dtype=float)

    @property
    def upper(self) -> float:
        return max(v for v, w in zip(self.values, self.weights, strict=True) if w > 0)

    def isf(self, p: ArrayLike) -> np.ndarray:
        order = np.argsort(self.values)
        v = np.asarray(self.values)[order]
        # P(X > v_i) for the sorted values; the first v_i with P(X > v_i) <= p.
        above = 1.0 - np.cumsum(self.probabilities[order])
        p = _arr(p)
        i = np.sum(above[..., :] > p[..., None] + 1e-15, axis=-1)
        return np.asarray(v[np.clip(i, 0, len(v) - 1)], dtype=float)


_TYPES: dict[str, type[Distribution]] = {
    cls.type: cls
    for cls in (
        Constant,
        Uniform,
        Exponential,
        Pareto,
        BoundedPareto,
        Lognormal,
        LognormalPareto,
        Empirical,
        Discrete,
    )
}


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def from_spec(spec: Mapping[str, Any] | Distribution, path: str = "") -> Distribution:
    """Read a scenario's distribution table (``{"type": "pareto", "shape": 1.2, "scale": 1000}``).

    ``path`` prefixes error paths: ``from_spec({...}, "object_size")``
    raises ``object_size.shape: must be > 0, got -1``. A
    :class:`Distribution` is returned as it is.
    """
    if isinstance(spec, Distribution):
        return spec
    if not isinstance(spec, Mapping):
        raise ModelError(path or "distribution", f"must be a distribution table, got {spec!r}")
    kind = spec.get("type")
    if kind not in _TYPES:
        raise ModelError(
            _join(path, "type"), f"must be one of {', '.join(sorted(_TYPES))}, got {kind!r}"
        )
    cls = _TYPES[kind]
    if cls is Empirical and "table" in spec:
        raise ModelError(
            _join(path, "table"),
            "the core's shipped tables are not readable by the analytic model; give `points`, "
            "or the table's values and counts as a discrete distribution",
        )
    unknown = sorted(set(spec) - set(cls.keys) - {"type"})
    if unknown:
        raise ModelError(
            _join(path, unknown[0]), f"unknown key for type {kind!r} (keys: {', '.join(cls.keys)})"
        )
    missing = [k for k in cls.keys if k not in spec]
    if missing:
        raise ModelError(_join(path, missing[0]), "is required")
    try:
        return cls(**{k: spec[k] for k in cls.keys})
    except ModelError as e:
        raise ModelError(_join(path, e.path), str(e).split(": ", 1)[1]) from None


#: The ``ecnplus`` study's object sizes (bytes), the core's default for web
#: sessions (``app/websessions.rs``): bounded Pareto, shape 0.9, on
#: [760 B, 1 MB]; mean about 7.2 KB, about 78 % of the bytes in the largest
#: 15 % of objects (ecnsim's fit to Smith, Campos, Jeffay & Ott 2001).
WEB_OBJECT_SIZES = BoundedPareto(shape=0.9, min=760.0, max=1_000_000.0)

#: The ``ecnplus`` study's client receive windows (bytes): 8 / 16 / 64 KB
#: with probability 35 / 20 / 45 % (Kuzmanovic 2005; the core's default).
WEB_RECEIVE_WINDOWS = Discrete(values=(8000.0, 16000.0, 64000.0), weights=(0.35, 0.20, 0.45))
