"""Lockout: flows that get nothing through the bottleneck for long intervals."""

from __future__ import annotations

import pandas as pd

from ecnsim.analysis._common import _frame, _require
from ecnsim.analysis.flows import trim_warmup


def lockout_intervals(
    flow_series: pd.DataFrame,
    min_duration_s: float,
    *,
    column: str = "bytes_delivered",
    warmup_s: float = 0.0,
) -> pd.DataFrame:
    """Intervals of at least ``min_duration_s`` in which a flow delivered nothing.

    Lockout (Braden et al., RFC 2309 §2: "a single connection or a few flows
    monopolize queue space, preventing other connections from getting room
    in the queue"; the ``hetero`` study counts "flows that get no packet
    through for long intervals"). From the cumulative ``column`` (default
    ``bytes_delivered``) sampled at ``t_0 < t_1 < ...`` (``>= warmup_s``):
    a maximal run of samples ``i..j`` with equal values means nothing was
    delivered in ``(t_i, t_j]``; runs with ``t_j - t_i >= min_duration_s``
    are reported. The true silent interval is at least that long and
    shorter than ``t_{j+1} - t_{i-1}``: the resolution is the sample
    interval. ``ongoing`` is true for a run that lasts to the last sample.

    Returns ``flow_id, start_s, end_s, duration_s, ongoing``.
    """
    _require(
        flow_series,
        "flow_series",
        ["time_s", "flow_id", column],
        "lockout needs a cumulative delivery counter",
    )
    s = trim_warmup(flow_series, warmup_s).sort_values(["flow_id", "time_s"], kind="stable")
    rows = []
    for fid, part in s.groupby("flow_id", sort=True):
        t = part["time_s"].to_numpy(dtype=float)
        c = part[column].to_numpy(dtype=float)
        n = t.size
        i = 0
        while i < n:
            j = i
            while j + 1 < n and c[j + 1] == c[i]:
                j += 1
            if j > i and t[j] - t[i] >= min_duration_s - 1e-12:
                rows.append(
                    {
                        "flow_id": fid,
                        "start_s": t[i],
                        "end_s": t[j],
                        "duration_s": t[j] - t[i],
                        "ongoing": j == n - 1,
                    }
                )
            i = j + 1
    return _frame(rows, columns=["flow_id", "start_s", "end_s", "duration_s", "ongoing"])


def lockout_summary(intervals: pd.DataFrame, flows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per flow: number of lockout intervals, total and longest locked-out time.

    With ``flows``, every flow appears (0 for flows never locked out).
    """
    agg = (
        intervals.groupby("flow_id")["duration_s"]
        .agg(intervals="count", locked_s="sum", longest_s="max")
        .reset_index()
    )
    if flows is not None:
        agg = (
            _frame({"flow_id": flows["flow_id"].to_numpy()})
            .merge(agg, on="flow_id", how="left")
            .fillna({"intervals": 0, "locked_s": 0.0, "longest_s": 0.0})
        )
        agg["intervals"] = agg["intervals"].astype(int)
    return agg
