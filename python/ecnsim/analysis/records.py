"""Distributions, network power and the workload records (response times, transactions)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ecnsim.analysis._common import (
    _frame,
    _require,
)

# ---------------------------------------------------------------------------
# Distributions, network power, confidence intervals
# ---------------------------------------------------------------------------


def ecdf(values: Iterable[float] | np.ndarray | pd.Series) -> pd.DataFrame:
    """Empirical CDF: ``x`` (distinct values, ascending) and ``cdf = P(X <= x)``.

    NaNs are dropped. For a ``records`` table with unfinished records use
    :func:`response_time_cdf`, which counts them as censored.
    """
    x = np.asarray(
        values if isinstance(values, (np.ndarray, pd.Series)) else list(values), dtype=float
    )
    x = x[~np.isnan(x)]
    if x.size == 0:
        return _frame({"x": np.array([], dtype=float), "cdf": np.array([], dtype=float)})
    xs, counts = np.unique(x, return_counts=True)
    return _frame({"x": xs, "cdf": np.cumsum(counts) / x.size})


def ccdf(values: Iterable[float] | np.ndarray | pd.Series) -> pd.DataFrame:
    """Empirical complementary CDF: ``x`` and ``ccdf = P(X > x)`` (NaNs dropped).

    The largest value has ``ccdf = 0``; a log-scale plot leaves it out.
    """
    e = ecdf(values)
    return _frame({"x": e["x"].to_numpy(), "ccdf": 1.0 - e["cdf"].to_numpy()})


def network_power(goodput_bps: float, delay_s: float) -> float:
    """Network power = goodput / delay (bit/s per second).

    Kleinrock, "Power and deterministic rules of thumb for probabilistic
    problems in computer communications", ICC 1979 (power = throughput /
    delay); RFC 2415 §3 uses goodput over the median page delay. NaN for a
    delay that is not positive.
    """
    if not delay_s > 0:
        return math.nan
    return goodput_bps / delay_s


def _states(df: pd.DataFrame) -> np.ndarray:
    """Each record's state; tables written before states existed hold completed records only."""
    if "state" in df.columns:
        return df["state"].to_numpy(dtype=object)
    return np.full(len(df), "completed", dtype=object)


def kaplan_meier(
    times: np.ndarray, completed: np.ndarray, *, never: np.ndarray | None = None
) -> pd.DataFrame:
    """The Kaplan-Meier estimate of ``P(T <= x)`` from right-censored times.

    ``times[i]`` is a completion time where ``completed[i]``, otherwise the
    time the record was last seen unfinished (it would have taken at least
    that long). Records flagged in ``never`` never complete: they stay at
    risk for ever, so the CDF stays below 1 by their share (Kaplan & Meier,
    JASA 1958: ``S(t) = prod over completion times t_j <= t of (1 - d_j / n_j)``,
    ``n_j`` the records not finished or censored before ``t_j``). Returns
    ``x`` (distinct completion times), ``cdf``, ``ccdf`` and ``at_risk``.
    """
    t = np.asarray(times, dtype=float)
    done = np.asarray(completed, dtype=bool)
    if never is not None:
        t = np.where(np.asarray(never, dtype=bool), np.inf, t)
        done = done & ~np.asarray(never, dtype=bool)
    keep = ~np.isnan(t)
    t, done = t[keep], done[keep]
    if not done.any():
        empty = np.array([], dtype=float)
        return _frame(
            {"x": empty, "cdf": empty, "ccdf": empty, "at_risk": np.array([], dtype=np.int64)}
        )
    order = np.sort(t)
    xs, d = np.unique(t[done], return_counts=True)
    # At risk at x: records whose time (completion or censoring) is >= x.
    at_risk = t.size - np.searchsorted(order, xs, side="left")
    surv = np.cumprod(1.0 - d / at_risk)
    return _frame({"x": xs, "cdf": 1.0 - surv, "ccdf": surv, "at_risk": at_risk.astype(np.int64)})


def _km_quantile(km: pd.DataFrame, q: float) -> float:
    """The first completion time at which the estimated CDF reaches ``q`` (NaN if never)."""
    cdf = km["cdf"].to_numpy()
    i = int(np.searchsorted(cdf, q - 1e-12, side="left"))
    return float(km["x"].to_numpy()[i]) if i < len(cdf) else math.nan


def response_time_cdf(
    records: pd.DataFrame, *, kind: str | None = "object", failed: str = "never"
) -> pd.DataFrame:
    """Response-time CDF (and CCDF) of a ``records`` table, unfinished records counted.

    Completed records contribute their response time. Records still in
    progress when the results were taken are right-censored at the time they
    had been waiting (``response_time_s``): they would have taken at least
    that long, so dropping them would bias the CDF towards short times.
    ``failed`` says what an abandoned record (its connection gave up) is:
    ``"never"`` (default: it never completes, so the CDF tops out at one
    minus the failed share) or ``"censored"`` (at the time it was given up).
    Kaplan-Meier estimate: :func:`kaplan_meier`. Returns ``x``, ``cdf``,
    ``ccdf``, ``at_risk``.
    """
    if failed not in ("never", "censored"):
        raise ValueError(f"response_time_cdf: failed must be 'never' or 'censored', got {failed!r}")
    _require(records, "records", ["kind", "response_time_s"], "response-time CDF")
    df = records if kind is None else records[records["kind"] == kind]
    st = _states(df)
    return kaplan_meier(
        df["response_time_s"].to_numpy(dtype=float),
        st == "completed",
        never=(st == "failed") if failed == "never" else None,
    )


def record_metrics(
    records: pd.DataFrame,
    *,
    kind: str | None = None,
    by: str | Sequence[str] | None = "group",
    interval_s: tuple[float, float] | None = None,
    capacity_bps: float | None = None,
    quantiles: Sequence[float] = (0.5, 0.9, 0.99),
) -> pd.DataFrame:
    """Summaries of a workload's ``records`` table, per group (or ``by``).

    Over the records of ``kind`` (``"transaction"``, ``"page"``, ``"object"``;
    all if None) that *started* inside ``interval_s = (t0, t1)`` (default:
    from the first start to the last end):

    - ``count`` (completed), ``in_progress`` and ``failed`` records, and
      ``unfinished_share`` (the last two over all three);
    - ``response_time_s`` quantiles (``p50`` = the median page or
      transaction delay of RFC 2415 §3): the sample quantiles when every
      record completed; otherwise read off the censored estimate of
      :func:`response_time_cdf` (unfinished records count, failed ones
      never complete; NaN where the estimate never reaches the level);
    - ``mean_response_time_s``: over completed records (a lower bound when
      records are unfinished);
    - ``per_second``: completions per second of the interval (netperf's
      transactions per second, RFC 2884 §4.3);
    - ``goodput_bps``: response payload of completed records per second;
    - ``normalized_throughput``: ``goodput_bps / capacity_bps`` (delivered /
      capacity, as in Kuzmanovic 2005) when ``capacity_bps`` is given;
    - ``network_power``: ``goodput_bps`` / median delay (RFC 2415 §3;
      :func:`network_power`).
    """
    _require(
        records,
        "records",
        ["kind", "start_s", "end_s", "response_time_s", "response_bytes"],
        "record metrics",
    )
    df = records if kind is None else records[records["kind"] == kind]
    if interval_s is None:
        t0 = float(df["start_s"].min()) if len(df) else 0.0
        t1 = float(df["end_s"].max()) if len(df) else 0.0
    else:
        t0, t1 = interval_s
    df = df[(df["start_s"] >= t0) & (df["start_s"] < t1)]
    span = t1 - t0
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    groups = [((), df)] if not keys else list(df.groupby(keys, sort=True))
    rows = []
    for key, g in groups:
        row: dict[str, Any] = dict(
            zip(keys, key if isinstance(key, tuple) else (key,), strict=True)
        )
        st = _states(g)
        done = st == "completed"
        rt_all = g["response_time_s"].to_numpy(dtype=float)
        rt = rt_all[done]
        n_open, n_failed = int((st == "in_progress").sum()), int((st == "failed").sum())
        row["count"] = int(done.sum())
        row["in_progress"] = n_open
        row["failed"] = n_failed
        total = row["count"] + n_open + n_failed
        row["unfinished_share"] = (n_open + n_failed) / total if total else math.nan
        km = (
            kaplan_meier(rt_all, done, never=st == "failed")
            if n_open + n_failed and done.any()
            else None
        )
        for q in quantiles:
            if km is not None:
                v = _km_quantile(km, q)
            else:
                v = float(np.quantile(rt, q)) if len(rt) else math.nan
            row[f"p{round(q * 100):d}_response_time_s"] = v
        row["mean_response_time_s"] = float(rt.mean()) if len(rt) else math.nan
        row["per_second"] = row["count"] / span if span > 0 else math.nan
        goodput = (
            float(g["response_bytes"].to_numpy()[done].sum()) * 8 / span if span > 0 else math.nan
        )
        row["goodput_bps"] = goodput
        if capacity_bps is not None:
            row["normalized_throughput"] = goodput / capacity_bps
        median = row.get("p50_response_time_s", math.nan)
        if "p50_response_time_s" not in row:
            median = float(np.median(rt)) if len(rt) else math.nan
        row["network_power"] = network_power(goodput, median)
        rows.append(row)
    return _frame(rows)


def open_backlog(
    records: pd.DataFrame, *, kind: str | None = "object", points: int = 1000
) -> pd.DataFrame:
    """How many records were open (started, not yet finished) over time.

    For web objects under HTTP/1.0 this is the number of open connections.
    ``points`` evenly spaced times from the first start to the last end.
    """
    _require(records, "records", ["kind", "start_s", "end_s"], "open backlog")
    df = records if kind is None else records[records["kind"] == kind]
    if not len(df):
        return _frame({"time_s": np.array([], float), "open": np.array([], np.int64)})
    starts = np.sort(df["start_s"].to_numpy(dtype=float))
    st = _states(df)
    # A record in progress is open until the end (its end_s is when the results were taken).
    ends = np.sort(df["end_s"].to_numpy(dtype=float)[st != "in_progress"])
    t = np.linspace(starts[0], float(df["end_s"].max()), points)
    n_open = np.searchsorted(starts, t, side="right") - np.searchsorted(ends, t, side="right")
    return _frame({"time_s": t, "open": n_open.astype(np.int64)})


def steady_state(
    records: pd.DataFrame,
    *,
    kind: str | None = "object",
    warmup_s: float = 0.0,
    windows: int = 10,
    alpha: float = 0.01,
    growth: float = 1.25,
) -> dict[str, Any]:
    """Did the backlog of open records (connections) grow steadily (no steady state)?

    The open backlog (:func:`open_backlog`) after ``warmup_s`` is averaged
    over ``windows`` equal windows. The run is judged to have **no steady
    state** when the window means trend upward by the Mann-Kendall test
    (Mann 1945, Kendall 1975; one-sided, level ``alpha``) *and* the last
    window's mean exceeds the first's by the factor ``growth``: an open-loop
    workload offered more than the network carries accumulates unfinished
    transfers, and its response times then depend on the run length.
    ``alpha``, ``growth`` and ``windows`` are ecnsim's choices.

    Returns ``steady`` (bool), ``window_means``, ``mk_z``, ``p_value``,
    ``growth`` (last / first window mean) and ``message``.
    """
    b = open_backlog(records, kind=kind, points=windows * 100)
    b = b[b["time_s"] >= warmup_s]
    if len(b) < windows * 2:
        return {
            "steady": True,
            "window_means": [],
            "mk_z": math.nan,
            "p_value": math.nan,
            "growth": math.nan,
            "message": "too few records to judge the backlog",
        }
    means = np.array([w.mean() for w in np.array_split(b["open"].to_numpy(dtype=float), windows)])
    n = len(means)
    s = sum(np.sign(means[j] - means[i]) for i in range(n - 1) for j in range(i + 1, n))
    var = n * (n - 1) * (2 * n + 5) / 18.0
    z = (s - np.sign(s)) / math.sqrt(var) if s != 0 else 0.0
    p = 0.5 * math.erfc(z / math.sqrt(2.0))
    ratio = means[-1] / means[0] if means[0] > 0 else (math.inf if means[-1] > 0 else 1.0)
    steady = not (p < alpha and ratio > growth)
    if steady:
        msg = f"open backlog steady (mean {means.mean():.0f}; last/first window {ratio:.2f})"
    else:
        msg = (
            f"NO STEADY STATE: open backlog grew from {means[0]:.0f} to {means[-1]:.0f} "
            f"(Mann-Kendall p = {p:.1g}); response times depend on the run length"
        )
    return {
        "steady": bool(steady),
        "window_means": means.tolist(),
        "mk_z": float(z),
        "p_value": float(p),
        "growth": float(ratio),
        "message": msg,
    }
