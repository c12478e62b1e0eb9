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

    NaNs are dropped (e.g. response times of transfers that never
    completed: count those separately).
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

    - ``count``; ``response_time_s`` quantiles (``p50`` = the median page or
      transaction delay of RFC 2415 §3) and ``mean_response_time_s``;
    - ``per_second``: completions per second of the interval (netperf's
      transactions per second, RFC 2884 §4.3);
    - ``goodput_bps``: response payload delivered per second of the interval;
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
        rt = g["response_time_s"].to_numpy(dtype=float)
        row["count"] = len(g)
        for q in quantiles:
            row[f"p{round(q * 100):d}_response_time_s"] = (
                float(np.quantile(rt, q)) if len(rt) else math.nan
            )
        row["mean_response_time_s"] = float(rt.mean()) if len(rt) else math.nan
        row["per_second"] = len(g) / span if span > 0 else math.nan
        goodput = float(g["response_bytes"].sum()) * 8 / span if span > 0 else math.nan
        row["goodput_bps"] = goodput
        if capacity_bps is not None:
            row["normalized_throughput"] = goodput / capacity_bps
        median = float(np.median(rt)) if len(rt) else math.nan
        row["network_power"] = network_power(goodput, median)
        rows.append(row)
    return _frame(rows)
