"""Student-t quantiles and confidence intervals: the one CI function every table and plot uses."""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ecnsim.analysis._common import _frame


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz).

    Numerical Recipes, 3rd ed., §6.4 (``betacf``); converges quickly for
    ``x < (a + 1) / (a + b + 2)``.
    """
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _t_sf(t: float, df: float) -> float:
    """``P(T > t)`` for ``t >= 0`` and Student's t with ``df`` degrees of freedom."""
    return 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))


@functools.lru_cache(maxsize=256)
def student_t_ppf(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` > 0 degrees of freedom.

    Cached: a report asks for the same few (confidence, seeds - 1) pairs thousands of times,
    and each answer is a bisection of ~50 incomplete beta evaluations.

    Exact forms for ``df`` 1 and 2; otherwise the CDF (through the
    regularized incomplete beta function) is inverted by bisection to about
    1e-12 relative. ``df = inf`` gives the normal quantile.
    ``student_t_ppf(0.975, 9)`` is 2.2621571627...
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if not df > 0:
        raise ValueError(f"df must be > 0, got {df}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -student_t_ppf(1.0 - p, df)
    if math.isinf(df):
        return statistics.NormalDist().inv_cdf(p)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    tail = 1.0 - p
    lo, hi = 0.0, max(2.0, statistics.NormalDist().inv_cdf(p))
    while _t_sf(hi, df) > tail:
        lo, hi = hi, hi * 2
        if hi > 1e300:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _t_sf(mid, df) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def interval(values: Iterable[float] | np.ndarray, confidence: float = 0.95) -> dict[str, float]:
    """The one confidence-interval computation: ``n, mean, std, sem, ci`` of ``values``.

    NaNs are dropped. ``std`` is the sample standard deviation (``ddof=1``),
    ``sem = std / sqrt(n)``, and ``ci`` the half-width
    ``t_{(1+confidence)/2, n-1} * sem`` (Student's t interval for the mean of
    independent replications, e.g. seeds). ``std``, ``sem`` and ``ci`` are
    NaN for fewer than two values. :func:`mean_ci`, :func:`summarize` and
    :func:`ecnsim.analysis.aggregate` all use it, so their intervals agree.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    mean = float(x.mean()) if n else math.nan
    if n < 2:
        return {"n": n, "mean": mean, "std": math.nan, "sem": math.nan, "ci": math.nan}
    std = float(x.std(ddof=1))
    sem = std / math.sqrt(n)
    half = student_t_ppf(0.5 + confidence / 2.0, n - 1) * sem
    return {"n": n, "mean": mean, "std": std, "sem": sem, "ci": half}


def mean_ci(
    values: Iterable[float] | np.ndarray, confidence: float = 0.95
) -> tuple[float, float, int]:
    """Mean, confidence-interval half-width and count of ``values`` (NaNs dropped).

    The numbers of :func:`interval`: the half-width is NaN for fewer than
    two values.
    """
    r = interval(values, confidence)
    return r["mean"], r["ci"], int(r["n"])


def summarize(
    df: pd.DataFrame, by: str | Sequence[str], value: str, *, confidence: float = 0.95
) -> pd.DataFrame:
    """Tidy mean and CI of ``value`` per ``by`` group (e.g. per swept parameter, over seeds).

    Returns the ``by`` columns and ``mean, ci, n`` (``ci`` is the half-width
    from :func:`interval`): what :func:`ecnsim.output.plot.plot_sweep` draws.
    It is :func:`ecnsim.analysis.aggregate` for one value column, so the
    two agree: groups whose key is NaN are kept, and a run (``key``
    column) listed twice in a group counts once.
    """
    from ecnsim.analysis.aggregate import aggregate

    keys = [by] if isinstance(by, str) else list(by)
    agg = aggregate(df, keys, [value], confidence=confidence)
    out = agg[[*keys, "mean", "ci", "n"]].reset_index(drop=True)
    return _frame(out.to_dict("records"), columns=[*keys, "mean", "ci", "n"])
