"""Per-flow and per-group goodput, fairness, time-binned series and one-way delay."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from ecnsim.analysis._common import (
    _TIME_RTOL,
    GroupSpec,
    _frame,
    _require,
)
from ecnsim.scenario.paths import default_group

# ---------------------------------------------------------------------------
# Helpers: warm-up trimming, groups
# ---------------------------------------------------------------------------


def trim_warmup(series: pd.DataFrame, warmup_s: float, *, time_col: str = "time_s") -> pd.DataFrame:
    """Rows of a time series with ``time_s >= warmup_s`` (a copy, index reset)."""
    out = series.loc[series[time_col] >= warmup_s - _TIME_RTOL * max(1.0, abs(warmup_s))]
    return cast(pd.DataFrame, out.reset_index(drop=True))


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

    With a ``completion_time_s`` column, a finite transfer also gets its
    goodput over its own lifetime:

    - ``transfer_s = start_s + completion_time_s - max(warmup_s, start_s)``:
      from its start (or the warm-up) until the receiver had every byte;
    - ``transfer_goodput_bps = bytes_delivered * 8 / transfer_s``.

    A 5 MB transfer that completed in 4.29 s of a 10 s run
    (``examples/single_flow.toml``) has ``goodput_bps`` 4 Mb/s (over the
    run) and ``transfer_goodput_bps`` 9.32 Mb/s (over its life). NaN for
    unlimited or unfinished transfers and for those that completed before
    the warm-up ended.

    Returns ``flow_id, flow, group, interval_s, bytes_delivered,
    bytes_sent, goodput_bps, throughput_bps`` and, with completion times,
    ``transfer_s, transfer_goodput_bps``.
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
    out: dict[str, Any] = {
        "flow_id": flows["flow_id"].to_numpy(),
        "flow": flows["flow"].to_numpy() if "flow" in flows else flows["flow_id"].to_numpy(),
        "group": group.to_numpy(),
        "interval_s": np.where(valid, interval, np.nan),
        "bytes_delivered": delivered,
        "bytes_sent": sent,
        "goodput_bps": goodput,
        "throughput_bps": throughput,
    }
    if "completion_time_s" in flows:
        life, life_goodput = transfer_goodput(flows, warmup_s=warmup_s)
        out["transfer_s"] = life
        out["transfer_goodput_bps"] = life_goodput
    return _frame(out)


def transfer_goodput(
    flows: pd.DataFrame, *, warmup_s: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Each finite transfer's lifetime after the warm-up and its goodput over it.

    ``(transfer_s, transfer_goodput_bps)``, as in :func:`flow_rates`: the
    lifetime runs from ``max(warmup_s, start_s)`` to ``start_s +
    completion_time_s``; NaN where the flow has no completion time or
    completed before the warm-up ended.
    """
    _require(
        flows, "flows", ["start_s", "completion_time_s", "bytes_delivered"], "transfer goodput"
    )
    start = flows["start_s"].to_numpy(dtype=float)
    done = start + flows["completion_time_s"].to_numpy(dtype=float)
    life = done - np.maximum(start, warmup_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = life > 0  # False for NaN
        life = np.where(ok, life, np.nan)
        delivered = flows["bytes_delivered"].to_numpy(dtype=float)
        rate = np.where(ok, delivered * 8.0 / np.where(ok, life, 1.0), np.nan)
    return life, rate


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
