"""Links and queues: utilization, drop and mark rates, occupancy and queueing delay."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd

from ecnsim.analysis._common import (
    DROP_REASONS,
    MARK_REASONS,
    _frame,
    _require,
)
from ecnsim.analysis.flows import trim_warmup
from ecnsim.analysis.records import ccdf

# ---------------------------------------------------------------------------
# Links and queues
# ---------------------------------------------------------------------------


def link_utilization(queues: pd.DataFrame, *, interval_s: float | None = None) -> pd.DataFrame:
    """Utilization of each link direction over [warm-up, end].

    Utilization = bits serialised / (rate x interval): the share of the
    interval the transmitter was busy (at most 1). Without ``interval_s``,
    the core's ``utilization`` column; with it, recomputed as
    ``departure_bytes * 8 / (rate_bps * interval_s)`` (the two agree when
    ``interval_s = end - warmup``). Returns ``queue_id, queue, utilization``.
    """
    out = queues[["queue_id", "queue"]].copy() if "queue" in queues else queues[["queue_id"]].copy()
    if interval_s is None:
        _require(queues, "queues", ["utilization"], "utilization")
        out["utilization"] = queues["utilization"].to_numpy(dtype=float)
    else:
        _require(queues, "queues", ["departure_bytes", "rate_bps"], "utilization")
        bits = queues["departure_bytes"].to_numpy(dtype=float) * 8.0
        out["utilization"] = bits / (queues["rate_bps"].to_numpy(dtype=float) * interval_s)
    return cast(pd.DataFrame, out)


def queue_drop_mark_rates(queues: pd.DataFrame) -> pd.DataFrame:
    """Drops and marks per queue and per reason, as a tidy table.

    One row per queue and reason column present (:data:`DROP_REASONS`,
    :data:`MARK_REASONS`): ``queue_id, queue, kind ("drop"|"mark"),
    reason (the column name without its prefix), count, rate`` with
    ``rate = count / arrivals`` (per packet offered to the queue; NaN for a
    queue with no arrivals). Reasons follow ns-3's RED statistics
    (``UNFORCED_DROP`` = early, ``FORCED_DROP`` = forced, ...).
    """
    _require(queues, "queues", ["queue_id", "arrivals"], "per-reason rates")
    arrivals = queues["arrivals"].to_numpy(dtype=float)
    names = queues["queue"].to_numpy() if "queue" in queues else queues["queue_id"].to_numpy()
    rows = []
    for kind, reasons in (("drop", DROP_REASONS), ("mark", MARK_REASONS)):
        for col in reasons:
            if col not in queues.columns:
                continue
            counts = queues[col].to_numpy(dtype=float)
            for qid, name, count, arr in zip(
                queues["queue_id"].to_numpy(), names, counts, arrivals, strict=True
            ):
                rows.append(
                    {
                        "queue_id": qid,
                        "queue": name,
                        "kind": kind,
                        "reason": col.split("_", 1)[1],
                        "count": count,
                        "rate": count / arr if arr > 0 else math.nan,
                    }
                )
    return _frame(rows, columns=["queue_id", "queue", "kind", "reason", "count", "rate"])


def queue_occupancy_distribution(
    queue_series: pd.DataFrame,
    queue_id: int,
    *,
    column: str = "packets",
    warmup_s: float = 0.0,
) -> pd.DataFrame:
    """Empirical distribution of a queue's occupancy over the samples.

    Samples are taken at fixed intervals, so the fraction of samples at a
    value estimates the fraction of *time* the queue held it (the
    time-average distribution; by PASTA it is also what Poisson arrivals
    see). Returns ``value, pmf, cdf (P(X <= value)), ccdf (P(X > value))``.
    """
    _require(queue_series, "queue_series", ["time_s", "queue_id", column], "occupancy")
    s = trim_warmup(queue_series, warmup_s)
    x = s.loc[s["queue_id"] == queue_id, column].to_numpy(dtype=float)
    if x.size == 0:
        return _frame(columns=["value", "pmf", "cdf", "ccdf"])
    values, counts = np.unique(x, return_counts=True)
    pmf = counts / x.size
    cdf = np.cumsum(counts) / x.size
    return _frame({"value": values, "pmf": pmf, "cdf": cdf, "ccdf": 1.0 - cdf})


def _queue_delays(
    queue_series: pd.DataFrame, queues: pd.DataFrame, queue_id: int, warmup_s: float
) -> np.ndarray:
    _require(queue_series, "queue_series", ["time_s", "queue_id", "bytes"], "queueing delay")
    _require(queues, "queues", ["queue_id", "rate_bps"], "queueing delay")
    rate = queues.loc[queues["queue_id"] == queue_id, "rate_bps"]
    if rate.empty:
        raise KeyError(f"no queue with queue_id {queue_id}")
    s = trim_warmup(queue_series, warmup_s)
    backlog = s.loc[s["queue_id"] == queue_id, "bytes"].to_numpy(dtype=float)
    delays: np.ndarray = backlog * 8.0 / float(rate.iloc[0])
    return delays


def queueing_delay_exceeds(
    queue_series: pd.DataFrame,
    queues: pd.DataFrame,
    queue_id: int,
    d_s: float | Sequence[float] | np.ndarray,
    *,
    warmup_s: float = 0.0,
) -> float | np.ndarray:
    """P(queueing delay > d): the ``ecnplus`` study's P(queueing delay > 5 ms).

    The queueing delay at a sample is the time the link needs to send the
    backlog: ``bytes * 8 / rate_bps``. The probability is the fraction of
    samples (``>= warmup_s``) above ``d``, i.e. the fraction of time; for
    Poisson arrivals it equals what an arriving packet sees (PASTA), as in
    the study's M[X]/M/1 model. Returns a float for a scalar ``d``, an
    array otherwise. NaN if the queue has no samples.
    """
    delays = _queue_delays(queue_series, queues, queue_id, warmup_s)
    ds = np.atleast_1d(np.asarray(d_s, dtype=float))
    if delays.size == 0:
        probs = np.full(ds.shape, np.nan)
    else:
        probs = (delays[None, :] > ds[:, None]).mean(axis=1)
    if np.ndim(d_s) == 0:
        return float(probs[0])
    return probs


def queue_delay_ccdf(
    queue_series: pd.DataFrame, queues: pd.DataFrame, queue_id: int, *, warmup_s: float = 0.0
) -> pd.DataFrame:
    """:func:`ccdf` of the queueing delay (``bytes * 8 / rate``) over the samples."""
    return ccdf(_queue_delays(queue_series, queues, queue_id, warmup_s))


def red_region_share(
    queue_series: pd.DataFrame,
    queue_id: int,
    *,
    min_th: float,
    max_th: float,
    warmup_s: float = 0.0,
    column: str = "aqm_avg",
) -> dict[str, float]:
    """Share of the sampled time a queue's average spent below, inside and above the RED region.

    The RED region is ``[min_th, max_th)``: where RED's early drop or mark
    probability applies (Floyd & Jacobson 1993 §4; RFC 2884 tunes RED so
    that the average stays in it). From the samples of ``column`` (RED's
    and AECN's average, ``aqm_avg``, in the queue's measure, so the
    thresholds must be in the same unit) at or after ``warmup_s``, each
    sample weighing the same. Returns ``{"below": .., "inside": ..,
    "above": .., "samples": n}`` (shares NaN without samples).
    """
    _require(queue_series, "queue_series", ["time_s", "queue_id", column], "the RED region")
    if not min_th < max_th:
        raise ValueError(f"min_th ({min_th}) must be < max_th ({max_th})")
    s = trim_warmup(queue_series, warmup_s)
    avg = s.loc[s["queue_id"] == queue_id, column].to_numpy(dtype=float)
    avg = avg[~np.isnan(avg)]
    n = avg.size
    if n == 0:
        return {"below": math.nan, "inside": math.nan, "above": math.nan, "samples": 0.0}
    below = float(np.count_nonzero(avg < min_th)) / n
    above = float(np.count_nonzero(avg >= max_th)) / n
    return {"below": below, "inside": 1.0 - below - above, "above": above, "samples": float(n)}
