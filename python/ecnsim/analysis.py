"""Metrics the reference studies report, computed from a run's exported tables.

Every function takes the tables as pandas DataFrames (``results.flows``,
``results.queues``, ``results.table("flow_series").to_pandas()``, ...; see
``docs/results.md`` for the columns) and plain numbers for the run's
metadata (``warmup_s``, ``end_s``). Nothing here runs a simulation; the
per-packet work happens in the core and this module only summarises.
``docs/measurement.md`` gives each definition with its source.

Conventions:

- Rates are in bit/s (``_bps``), times in seconds (``_s``), sizes in bytes.
- "Over [warm-up, end]" means what the core's counters already cover (they
  are diffed at ``simulation.warmup``); series are trimmed to
  ``time_s >= warmup_s`` by the functions that take ``warmup_s``.
- Groups: many metrics are reported per *group* of flows (the studies'
  fragile / average / robust, ECN-ON / ECN-OFF, ...). :func:`flow_groups`
  assigns them: a ``group`` column of ``flows`` if the core exports one, an
  explicit mapping or function of the flow's name, or by default the flow's
  name without its trailing index (``"fragile12"`` -> ``"fragile"``).
- Time-binned goodput and lockout need per-flow *cumulative* counters in
  ``flow_series`` (``bytes_delivered``; ``bytes_sent``, ``drops`` and
  ``marks`` where available). Functions that need a missing column raise
  :class:`MissingColumnError` saying which one.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

__all__ = [
    "DROP_REASONS",
    "MARK_REASONS",
    "MissingColumnError",
    "binned_increments",
    "ccdf",
    "default_group",
    "drop_mark_rates",
    "ecdf",
    "flow_groups",
    "flow_rates",
    "goodput_series",
    "group_gap",
    "group_gap_series",
    "group_goodput_series",
    "group_rates",
    "jain_index",
    "jain_index_series",
    "link_utilization",
    "lockout_intervals",
    "lockout_summary",
    "mean_ci",
    "network_power",
    "one_way_delay",
    "queue_delay_ccdf",
    "queue_drop_mark_rates",
    "queue_occupancy_distribution",
    "queueing_delay_exceeds",
    "record_metrics",
    "student_t_ppf",
    "summarize",
    "trim_warmup",
]

#: Drop-reason columns of the ``queues`` table (ns-3's names in ``docs/results.md``).
DROP_REASONS = ("drops_overflow", "drops_early", "drops_forced")
#: Mark-reason columns of the ``queues`` table.
MARK_REASONS = ("marks_early", "marks_forced", "marks_ce_threshold")

#: Relative tolerance when matching bin edges to sample times.
_TIME_RTOL = 1e-9

GroupSpec = str | Mapping[Any, str] | Callable[[str], str] | None


class MissingColumnError(KeyError):
    """A metric needs a column that the table (as the core exports it today) lacks."""

    def __init__(self, table: str, column: str, why: str) -> None:
        self.table = table
        self.column = column
        super().__init__(f"{table} has no column {column!r} ({why})")

    def __str__(self) -> str:
        return str(self.args[0])


def _frame(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return cast(pd.DataFrame, pd.DataFrame(*args, **kwargs))


def _require(df: pd.DataFrame, table: str, columns: Iterable[str], why: str) -> None:
    for column in columns:
        if column not in df.columns:
            raise MissingColumnError(table, column, why)


# ---------------------------------------------------------------------------
# Helpers: warm-up trimming, groups
# ---------------------------------------------------------------------------


def trim_warmup(series: pd.DataFrame, warmup_s: float, *, time_col: str = "time_s") -> pd.DataFrame:
    """Rows of a time series with ``time_s >= warmup_s`` (a copy, index reset)."""
    out = series.loc[series[time_col] >= warmup_s - _TIME_RTOL * max(1.0, abs(warmup_s))]
    return cast(pd.DataFrame, out.reset_index(drop=True))


_TRAILING_INDEX = re.compile(r"[\s_\-.:#]*\d+$")


def default_group(name: str) -> str:
    """The group of a flow called ``name``: the name without a trailing index.

    ``"fragile12"`` and ``"fragile-12"`` give ``"fragile"``, ``"flow0"``
    gives ``"flow"``; a name without a trailing number is its own group.
    """
    stripped = _TRAILING_INDEX.sub("", name)
    return stripped or name


def flow_groups(flows: pd.DataFrame, groups: GroupSpec = None) -> pd.Series:
    """Each flow's group, indexed by ``flow_id``.

    ``groups`` is one of:

    - ``None``: the ``group`` column if ``flows`` has one, else
      :func:`default_group` of the flow's name (``flow`` column);
    - a column name of ``flows``;
    - a mapping from flow name or ``flow_id`` to group (flows it does not
      name are an error);
    - a function of the flow's name.
    """
    names = flows["flow"].astype(str) if "flow" in flows.columns else flows["flow_id"].astype(str)
    ids = flows["flow_id"].to_numpy()
    if groups is None:
        if "group" in flows.columns:
            values = flows["group"].astype(str).to_list()
        else:
            values = [default_group(n) for n in names]
    elif isinstance(groups, str):
        _require(flows, "flows", [groups], "asked for as the group column")
        values = flows[groups].astype(str).to_list()
    elif isinstance(groups, Mapping):
        values = []
        for fid, name in zip(ids.tolist(), names, strict=True):
            if name in groups:
                values.append(str(groups[name]))
            elif fid in groups:
                values.append(str(groups[fid]))
            else:
                raise KeyError(f"no group given for flow {name!r} (flow_id {fid})")
    else:
        values = [str(groups(n)) for n in names]
    return pd.Series(values, index=pd.Index(ids, name="flow_id"), name="group")


# ---------------------------------------------------------------------------
# Goodput and throughput over [warm-up, end]
# ---------------------------------------------------------------------------


def flow_rates(
    flows: pd.DataFrame,
    *,
    end_s: float,
    warmup_s: float = 0.0,
    groups: GroupSpec = None,
) -> pd.DataFrame:
    """Per-flow goodput and throughput over ``[max(warmup, start), end]``.

    - goodput = ``bytes_delivered * 8 / interval``: payload bytes the
      receiver delivered in order, retransmissions not counted (RFC 2884
      §5.2's "goodput"; the studies' per-flow goodput);
    - throughput = ``bytes_sent * 8 / interval``: payload bytes the sender
      put on the wire, retransmissions included (the ``hetero`` study's
      "throughput");

    where ``interval = end_s - max(warmup_s, start_s)``; NaN for a flow
    that started at or after the end. These are the core's ``goodput_bps``
    and ``throughput_bps`` columns, recomputed from the byte counters so
    that another interval or a check is possible.

    Returns ``flow_id, flow, group, interval_s, bytes_delivered,
    bytes_sent, goodput_bps, throughput_bps``.
    """
    _require(flows, "flows", ["flow_id", "start_s", "bytes_delivered", "bytes_sent"], "rates")
    start = np.maximum(flows["start_s"].to_numpy(dtype=float), warmup_s)
    interval = end_s - start
    with np.errstate(divide="ignore", invalid="ignore"):
        valid = interval > 0
        safe = np.where(valid, interval, 1.0)
        delivered = flows["bytes_delivered"].to_numpy(dtype=float)
        sent = flows["bytes_sent"].to_numpy(dtype=float)
        goodput = np.where(valid, delivered * 8.0 / safe, np.nan)
        throughput = np.where(valid, sent * 8.0 / safe, np.nan)
    group = flow_groups(flows, groups)
    return _frame(
        {
            "flow_id": flows["flow_id"].to_numpy(),
            "flow": flows["flow"].to_numpy() if "flow" in flows else flows["flow_id"].to_numpy(),
            "group": group.to_numpy(),
            "interval_s": np.where(valid, interval, np.nan),
            "bytes_delivered": delivered,
            "bytes_sent": sent,
            "goodput_bps": goodput,
            "throughput_bps": throughput,
        }
    )


def group_rates(
    rates: pd.DataFrame, *, columns: Sequence[str] = ("goodput_bps", "throughput_bps")
) -> pd.DataFrame:
    """Per-group totals and per-flow statistics of :func:`flow_rates`' output.

    For each group and each rate column ``c``: ``c`` (the sum over the
    group's flows: the group's aggregate), ``c_mean`` (mean per flow: the
    number a group's curve shows in the studies), ``c_min``, ``c_max``,
    and ``jain_<c>`` (Jain's index within the group); plus ``flows``.
    NaN rates (flows that never ran in the interval) are left out.
    """
    rows = []
    for group, part in rates.groupby("group", sort=True):
        row: dict[str, Any] = {"group": group, "flows": len(part)}
        for c in columns:
            values = part[c].dropna().to_numpy(dtype=float)
            row[c] = float(values.sum())
            row[f"{c}_mean"] = float(values.mean()) if len(values) else math.nan
            row[f"{c}_min"] = float(values.min()) if len(values) else math.nan
            row[f"{c}_max"] = float(values.max()) if len(values) else math.nan
            row[f"jain_{c}"] = jain_index(values)
        rows.append(row)
    return _frame(rows)


# ---------------------------------------------------------------------------
# Fairness
# ---------------------------------------------------------------------------


def jain_index(values: Iterable[float] | np.ndarray) -> float:
    """Jain's fairness index of ``values``: ``(sum x)^2 / (n * sum x^2)``.

    Jain, Chiu & Hawe, "A Quantitative Measure of Fairness and
    Discrimination for Resource Allocation in Shared Computer Systems",
    DEC-TR-301, 1984. It is 1 when all ``n`` values are equal and ``k/n``
    when ``k`` of them share equally and the rest get nothing. NaNs are
    ignored; NaN for no values or all zeros (0/0). Negative values are an
    error (the index is defined for allocations >= 0).
    """
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan
    if (x < 0).any():
        raise ValueError("Jain's index is defined for non-negative values")
    sq = float(np.square(x).sum())
    if sq == 0.0:
        return math.nan
    return float(x.sum()) ** 2 / (int(x.size) * sq)


def group_gap(per_group: Mapping[str, float] | pd.Series) -> dict[str, float]:
    """The "visual max-min" gap between groups (the ``hetero`` study).

    Given one value per group (normally each group's mean per-flow
    goodput), returns ``gap = max - min`` (in the values' unit),
    ``relative_gap = (max - min) / max`` and ``min_max_ratio = min / max``
    (1 when the groups get the same). Zheng's thesis plots per-group goodput
    over time and reads fairness from how far apart the groups' curves are
    ("visual max-min fairness"); these numbers are that distance.
    NaN values are ignored; all NaN or no groups give NaN.
    """
    if isinstance(per_group, pd.Series):
        values = per_group.to_numpy(dtype=float)
    else:
        values = np.asarray(list(per_group.values()), dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return {"gap": math.nan, "relative_gap": math.nan, "min_max_ratio": math.nan}
    hi, lo = float(values.max()), float(values.min())
    return {
        "gap": hi - lo,
        "relative_gap": (hi - lo) / hi if hi > 0 else math.nan,
        "min_max_ratio": lo / hi if hi > 0 else math.nan,
    }


# ---------------------------------------------------------------------------
# Time series: binned counters, goodput over time, lockout
# ---------------------------------------------------------------------------


def binned_increments(
    series: pd.DataFrame,
    column: str,
    *,
    bin_s: float | None = None,
    warmup_s: float = 0.0,
    key: str = "flow_id",
    table: str = "flow_series",
) -> pd.DataFrame:
    """Per-``key`` increments of a cumulative counter ``column`` in time bins.

    The bins are ``[e_i, e_{i+1})`` with edges at sample times ``>=
    warmup_s``, ``bin_s`` apart (default: the sample interval; ``bin_s``
    must be a multiple of it). A key with no row at a time (a flow not
    started yet) counts as 0 there; a key's last value carries forward.
    Returns ``time_s`` (bin start), ``end_s``, ``<key>``, ``increment``,
    ``rate`` (increment per second).
    """
    _require(series, table, ["time_s", key, column], f"cumulative counter for binned {column}")
    wide = series.pivot_table(index="time_s", columns=key, values=column, aggfunc="last")
    wide = wide.sort_index().ffill().fillna(0.0)
    times = wide.index.to_numpy(dtype=float)
    keep = times >= warmup_s - _TIME_RTOL * max(1.0, abs(warmup_s))
    times = times[keep]
    values = wide.to_numpy(dtype=float)[keep]
    if times.size < 2:
        return _frame(columns=["time_s", "end_s", key, "increment", "rate"])
    dt = float(np.median(np.diff(times)))
    step = 1
    if bin_s is not None:
        ratio = bin_s / dt
        step = round(ratio)
        if step < 1 or abs(ratio - step) > 1e-6 * max(1.0, ratio):
            raise ValueError(f"bin_s={bin_s} is not a multiple of the sample interval {dt}")
    idx = np.arange(0, times.size, step)
    edges = times[idx]
    inc = np.diff(values[idx], axis=0)
    width = np.diff(edges)
    keys = wide.columns.to_numpy()
    n_bins = edges.size - 1
    return _frame(
        {
            "time_s": np.repeat(edges[:-1], keys.size),
            "end_s": np.repeat(edges[1:], keys.size),
            key: np.tile(keys, n_bins),
            "increment": inc.reshape(-1),
            "rate": (inc / width[:, None]).reshape(-1),
        }
    )


def goodput_series(
    flow_series: pd.DataFrame,
    *,
    bin_s: float | None = None,
    warmup_s: float = 0.0,
    flows: pd.DataFrame | None = None,
    groups: GroupSpec = None,
) -> pd.DataFrame:
    """Per-flow goodput (and throughput, if available) in time bins.

    goodput in a bin = 8 x (payload bytes delivered in order during the bin)
    / bin width, from ``flow_series.bytes_delivered`` (cumulative);
    throughput likewise from ``bytes_sent`` if the series has it. With
    ``flows``, a ``group`` column is added (see :func:`flow_groups`).
    Returns ``time_s, end_s, flow_id, goodput_bps[, throughput_bps][, group]``.
    """
    g = binned_increments(flow_series, "bytes_delivered", bin_s=bin_s, warmup_s=warmup_s)
    out = g[["time_s", "end_s", "flow_id"]].copy()
    out["goodput_bps"] = g["rate"].to_numpy(dtype=float) * 8.0
    if "bytes_sent" in flow_series.columns:
        t = binned_increments(flow_series, "bytes_sent", bin_s=bin_s, warmup_s=warmup_s)
        out["throughput_bps"] = t["rate"].to_numpy(dtype=float) * 8.0
    if flows is not None:
        out["group"] = out["flow_id"].map(flow_groups(flows, groups))
    return cast(pd.DataFrame, out)


def group_goodput_series(
    flow_series: pd.DataFrame,
    flows: pd.DataFrame,
    *,
    groups: GroupSpec = None,
    bin_s: float | None = None,
    warmup_s: float = 0.0,
) -> pd.DataFrame:
    """Goodput per group over time: the ``hetero`` study's "visual max-min" figure.

    For each bin and group: ``goodput_bps`` (the group's aggregate),
    ``goodput_bps_mean`` (mean per flow of the group, counting every flow
    of the group that has started by the bin's end) and ``flows``.
    """
    per_flow = goodput_series(
        flow_series, bin_s=bin_s, warmup_s=warmup_s, flows=flows, groups=groups
    )
    starts = flows.set_index("flow_id")["start_s"] if "start_s" in flows else None
    if starts is not None:
        started = per_flow["flow_id"].map(starts).to_numpy(dtype=float) < per_flow[
            "end_s"
        ].to_numpy(dtype=float)
        per_flow = per_flow.loc[started]
    agg = (
        per_flow.groupby(["time_s", "end_s", "group"], sort=True)["goodput_bps"]
        .agg(goodput_bps="sum", goodput_bps_mean="mean", flows="count")
        .reset_index()
    )
    return agg


def jain_index_series(per_flow: pd.DataFrame, *, column: str = "goodput_bps") -> pd.DataFrame:
    """Jain's index over flows in each time bin of :func:`goodput_series`' output."""
    rows = [
        {"time_s": t, "jain_index": jain_index(part[column].to_numpy(dtype=float))}
        for t, part in per_flow.groupby("time_s", sort=True)
    ]
    return _frame(rows, columns=["time_s", "jain_index"])


def group_gap_series(
    group_series: pd.DataFrame, *, column: str = "goodput_bps_mean"
) -> pd.DataFrame:
    """:func:`group_gap` in each time bin of :func:`group_goodput_series`' output."""
    rows = []
    for t, part in group_series.groupby("time_s", sort=True):
        gap = group_gap(dict(zip(part["group"], part[column], strict=True)))
        rows.append({"time_s": t, **gap})
    return _frame(rows, columns=["time_s", "gap", "relative_gap", "min_max_ratio"])


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


def drop_mark_rates(flows: pd.DataFrame) -> pd.DataFrame:
    """Per-flow drop and mark rates.

    The ``flows`` table counts ``drops`` and ``marks`` of the flow's
    packets in either direction (data and ACKs) at any queue, so the rates
    divide by every packet the flow offered: ``packets = packets_sent +
    acks_sent``. ``drop_rate = drops / packets``, ``mark_rate = marks /
    packets``, ``signal_rate = (drops + marks) / packets`` (congestion
    signals per packet; RFC 2884 §5.1 compares drops of non-ECN flows with
    marks of ECN flows). NaN for a flow that sent nothing.
    """
    _require(flows, "flows", ["flow_id", "packets_sent", "drops", "marks"], "drop/mark rates")
    packets = flows["packets_sent"].to_numpy(dtype=float)
    if "acks_sent" in flows:
        packets = packets + flows["acks_sent"].to_numpy(dtype=float)
    drops = flows["drops"].to_numpy(dtype=float)
    marks = flows["marks"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.where(packets > 0, packets, np.nan)
        out = _frame(
            {
                "flow_id": flows["flow_id"].to_numpy(),
                "flow": flows["flow"].to_numpy()
                if "flow" in flows
                else flows["flow_id"].to_numpy(),
                "packets": packets,
                "drops": drops,
                "marks": marks,
                "drop_rate": drops / denom,
                "mark_rate": marks / denom,
                "signal_rate": (drops + marks) / denom,
            }
        )
    return out


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
    d_s: float | Sequence[float],
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


def one_way_delay(flows: pd.DataFrame, groups: GroupSpec = None) -> pd.DataFrame:
    """Mean one-way delay of delivered data segments, per flow and per group.

    Uses the core's ``mean_owd_s`` (host to host, sending to delivery,
    either direction, over [warm-up, end]). A group's value is the mean of
    its flows' means, so every flow weighs the same; flows that delivered
    nothing (NaN) are left out.
    """
    _require(flows, "flows", ["flow", "mean_owd_s"], "one-way delay")
    df = flows[["flow", "mean_owd_s"]].copy()
    df["group"] = flow_groups(flows, groups).to_numpy()
    per_group = df.dropna(subset=["mean_owd_s"]).groupby("group", sort=True)["mean_owd_s"].mean()
    return _frame({"group": per_group.index.to_numpy(), "mean_owd_s": per_group.to_numpy()})


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


def student_t_ppf(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` > 0 degrees of freedom.

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


def mean_ci(
    values: Iterable[float] | np.ndarray, confidence: float = 0.95
) -> tuple[float, float, int]:
    """Mean, confidence-interval half-width and count of ``values`` (NaNs dropped).

    ``half-width = t_{(1+confidence)/2, n-1} * s / sqrt(n)`` with ``s`` the
    sample standard deviation (Student's t interval for the mean of
    independent replications, e.g. seeds). The half-width is NaN for fewer
    than two values.
    """
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, n
    s = float(x.std(ddof=1))
    half = student_t_ppf(0.5 + confidence / 2.0, n - 1) * s / math.sqrt(n)
    return mean, half, n


def summarize(
    df: pd.DataFrame, by: str | Sequence[str], value: str, *, confidence: float = 0.95
) -> pd.DataFrame:
    """Tidy mean and CI of ``value`` per ``by`` group (e.g. per swept parameter, over seeds).

    Returns the ``by`` columns and ``mean, ci, n`` (``ci`` is the half-width
    from :func:`mean_ci`): what :func:`ecnsim.plot.plot_sweep` draws.
    """
    keys = [by] if isinstance(by, str) else list(by)
    rows = []
    for key, part in df.groupby(keys, sort=True):
        key_values = key if isinstance(key, tuple) else (key,)
        mean, ci, n = mean_ci(part[value].to_numpy(dtype=float), confidence)
        rows.append({**dict(zip(keys, key_values, strict=True)), "mean": mean, "ci": ci, "n": n})
    return _frame(rows, columns=[*keys, "mean", "ci", "n"])
