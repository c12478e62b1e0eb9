"""Lockout: flows that get nothing through the bottleneck for long intervals.

Lockout (Braden et al., RFC 2309 §2: "a single connection or a few flows
monopolize queue space, preventing other connections from getting room in
the queue"). Zheng's thesis (the ``hetero`` study) finds it in per-flow
packet plots: flows that get no packet through the router for long periods,
some for the whole run. Two views:

- from a run's sampled cumulative delivery counters (``flow_series``):
  :func:`lockout_intervals` (every silent interval of at least a length),
  :func:`silence_by_flow` (per flow: the longest silent interval and the
  total silent time) and :func:`lockout_count`;
- from packet records at the bottleneck (a trace of its egress link):
  :func:`packet_raster`, the thesis' raster (flow against time, one dot per
  packet that got through, was marked or was dropped), and
  :func:`raster_silence`, the same per-flow silences measured packet by packet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ecnsim.analysis._common import _frame, _require
from ecnsim.analysis.flows import trim_warmup

__all__ = [
    "lockout_count",
    "lockout_intervals",
    "lockout_summary",
    "packet_raster",
    "raster_silence",
    "silence_by_flow",
]


def _runs_of_equal(
    flow_series: pd.DataFrame, column: str, warmup_s: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Maximal runs of equal consecutive samples per flow.

    Returns ``(flow_id, start_s, end_s, is_last_sample, n_samples)`` of every
    run of two or more samples with equal ``column`` values (nothing
    delivered between the run's first and last sample).
    """
    s = trim_warmup(flow_series, warmup_s).sort_values(["flow_id", "time_s"], kind="stable")
    fid = s["flow_id"].to_numpy()
    t = s["time_s"].to_numpy(dtype=float)
    c = s[column].to_numpy(dtype=float)
    n = t.size
    if n == 0:
        empty = np.array([], dtype=float)
        return fid[:0], empty, empty, np.array([], dtype=bool), np.array([], dtype=int)
    # A run starts at i when i is a flow's first sample or its value changed.
    new_flow = np.ones(n, dtype=bool)
    new_flow[1:] = fid[1:] != fid[:-1]
    starts = new_flow.copy()
    starts[1:] |= c[1:] != c[:-1]
    start_idx = np.flatnonzero(starts)
    end_idx = np.append(start_idx[1:] - 1, n - 1)
    long = end_idx > start_idx
    start_idx, end_idx = start_idx[long], end_idx[long]
    last_of_flow = np.ones(n, dtype=bool)
    last_of_flow[:-1] = new_flow[1:]
    return (
        fid[start_idx],
        t[start_idx],
        t[end_idx],
        last_of_flow[end_idx],
        end_idx - start_idx + 1,
    )


def lockout_intervals(
    flow_series: pd.DataFrame,
    min_duration_s: float,
    *,
    column: str = "bytes_delivered",
    warmup_s: float = 0.0,
) -> pd.DataFrame:
    """Intervals of at least ``min_duration_s`` in which a flow delivered nothing.

    From the cumulative ``column`` (default ``bytes_delivered``) sampled at
    ``t_0 < t_1 < ...`` (``>= warmup_s``): a maximal run of samples ``i..j``
    with equal values means nothing was delivered in ``(t_i, t_j]``; runs
    with ``t_j - t_i >= min_duration_s`` are reported. The true silent
    interval is at least that long and shorter than ``t_{j+1} - t_{i-1}``:
    the resolution is the sample interval. ``ongoing`` is true for a run
    that lasts to the flow's last sample.

    Returns ``flow_id, start_s, end_s, duration_s, ongoing``.
    """
    _require(
        flow_series,
        "flow_series",
        ["time_s", "flow_id", column],
        "lockout needs a cumulative delivery counter",
    )
    fid, start, end, last, _ = _runs_of_equal(flow_series, column, warmup_s)
    keep = end - start >= min_duration_s - 1e-12
    return _frame(
        {
            "flow_id": fid[keep],
            "start_s": start[keep],
            "end_s": end[keep],
            "duration_s": (end - start)[keep],
            "ongoing": last[keep],
        },
        columns=["flow_id", "start_s", "end_s", "duration_s", "ongoing"],
    )


def silence_by_flow(
    flow_series: pd.DataFrame,
    *,
    column: str = "bytes_delivered",
    warmup_s: float = 0.0,
    flows: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per flow: the longest interval and the total time in which it delivered nothing.

    Measured on the samples of ``flow_series`` at or after ``warmup_s``
    (see :func:`lockout_intervals`; the resolution is the sample interval):
    ``longest_silence_s`` is the longest run of equal samples, ``silent_s``
    the total length of such runs, ``observed_s`` the span from the flow's
    first to its last sample, ``silent_share = silent_s / observed_s``.
    With ``flows``, every flow of the run appears (a flow with no sample
    after the warm-up gets NaN).

    Returns ``flow_id, longest_silence_s, silent_s, observed_s, silent_share``.
    """
    _require(
        flow_series,
        "flow_series",
        ["time_s", "flow_id", column],
        "silences need a cumulative delivery counter",
    )
    fid, start, end, _, _ = _runs_of_equal(flow_series, column, warmup_s)
    runs = pd.DataFrame({"flow_id": fid, "d": end - start})
    agg = runs.groupby("flow_id")["d"].agg(longest_silence_s="max", silent_s="sum")
    s = trim_warmup(flow_series, warmup_s)
    span = s.groupby("flow_id")["time_s"].agg(lambda x: float(x.max() - x.min()))
    out = pd.DataFrame({"observed_s": span})
    out = out.join(agg, how="left").fillna({"longest_silence_s": 0.0, "silent_s": 0.0})
    out.index.name = "flow_id"
    out = out.reset_index()
    if flows is not None:
        out = _frame({"flow_id": flows["flow_id"].to_numpy()}).merge(out, on="flow_id", how="left")
    with np.errstate(divide="ignore", invalid="ignore"):
        out["silent_share"] = np.where(
            out["observed_s"] > 0, out["silent_s"] / out["observed_s"], np.nan
        )
    return _frame(out[["flow_id", "longest_silence_s", "silent_s", "observed_s", "silent_share"]])


def lockout_count(silences: pd.DataFrame, threshold_s: float) -> int:
    """Number of flows whose longest silence lasted at least ``threshold_s`` (locked out)."""
    longest = silences["longest_silence_s"].to_numpy(dtype=float)
    return int(np.count_nonzero(longest >= threshold_s - 1e-12))


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


# ---------------------------------------------------------------------------
# Packet raster at the bottleneck
# ---------------------------------------------------------------------------

#: IP ECN field value of a CE-marked packet.
_CE = 3


def packet_raster(
    trace: Mapping[str, Any] | pd.DataFrame,
    *,
    from_node: int,
    to_node: int,
    data_only: bool = True,
) -> pd.DataFrame:
    """One row per packet event at a queue: ``time_s, flow_id, kind``.

    ``trace`` holds packet records (:mod:`ecnsim.output.trace`'s columns:
    ``time_ns`` or ``time_s``, ``event``, ``from_node``, ``to_node``,
    ``flow_id``, ``ecn``, ``payload``) of the link direction ``from_node ->
    to_node`` (node indices, as in the records). ``kind`` is ``"sent"`` for
    a packet that left the queue (got through the router), ``"marked"`` for
    one that left it carrying CE, ``"dropped"`` for a drop at the queue.
    With ``data_only``, packets without payload (ACKs, SYNs) are left out.
    """
    cols = trace if isinstance(trace, Mapping) else {c: trace[c] for c in trace.columns}
    events = np.asarray(cols["event"]).astype(str)
    if "time_ns" in cols:
        t = np.asarray(cols["time_ns"], dtype=np.float64) / 1e9
    else:
        t = np.asarray(cols["time_s"], dtype=np.float64)
    here = (np.asarray(cols["from_node"]) == from_node) & (np.asarray(cols["to_node"]) == to_node)
    if data_only:
        here &= np.asarray(cols["payload"]) > 0
    dequeued = here & (events == "-")
    dropped = here & (events == "d")
    marked = dequeued & (np.asarray(cols["ecn"]) == _CE)
    keep = dequeued | dropped
    kind = np.where(dropped, "dropped", np.where(marked, "marked", "sent"))
    df = _frame(
        {
            "time_s": t[keep],
            "flow_id": np.asarray(cols["flow_id"])[keep].astype(np.int64),
            "kind": kind[keep],
        }
    )
    return df


def raster_silence(
    raster: pd.DataFrame, *, start_s: float, end_s: float, flows: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per flow, from a :func:`packet_raster`: the longest interval in ``[start_s, end_s]`` with
    no packet of the flow leaving the queue, and the number of packets that left.

    Exact to the packet (no sampling). A flow with no packet out in the
    interval has ``longest_silence_s = end_s - start_s``. Returns
    ``flow_id, longest_silence_s, packets_out``.
    """
    out = raster[(raster["kind"] != "dropped") & raster["time_s"].between(start_s, end_s)]
    ids = (
        flows["flow_id"].to_numpy()
        if flows is not None
        else np.unique(raster["flow_id"].to_numpy())
    )
    rows = []
    by_flow = {int(k): g["time_s"].to_numpy() for k, g in out.groupby("flow_id")}
    for fid in ids:
        times = np.sort(by_flow.get(int(fid), np.array([], dtype=float)))
        edges = np.concatenate([[start_s], times, [end_s]])
        rows.append(
            {
                "flow_id": int(fid),
                "longest_silence_s": float(np.max(np.diff(edges))),
                "packets_out": int(times.size),
            }
        )
    return _frame(rows, columns=["flow_id", "longest_silence_s", "packets_out"])
