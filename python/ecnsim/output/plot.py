"""The studies' standard figures, one function each (matplotlib).

Every function builds and returns a :class:`matplotlib.figure.Figure`
without touching pyplot's global state: nothing is shown, no backend is
chosen, and figures are freed when dropped. Save with
``fig.savefig("x.png")``, or show in a notebook by evaluating ``fig``.
matplotlib is a dependency of ecnsim; an environment without it (an install with
``--no-deps``) gets it with ``pip install 'ecnsim[plot]'``, or from a checkout
``pip install '.[plot]'``.

Inputs are the run's tables as DataFrames (``docs/results.md``) or the
tidy outputs of :mod:`ecnsim.analysis`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ecnsim import analysis

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "plot_cdf",
    "plot_cwnd_queue",
    "plot_delay_exceedance",
    "plot_drops_marks",
    "plot_flow_goodput",
    "plot_group_goodput",
    "plot_lockout",
    "plot_queue_delay_ccdf",
    "plot_raster",
    "plot_sweep",
    "plot_sweep_panels",
]


#: Above this many flows, per-flow axes label a dozen evenly spaced flows, not every one.
MAX_LABELLED_FLOWS = 40


def _figure(width: float = 8.0, height: float = 4.5, **kwargs: Any) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "ecnsim.output.plot needs matplotlib: pip install 'ecnsim[plot]' "
            "(from a checkout of ecnsim: pip install '.[plot]')"
        ) from e
    return Figure(figsize=(width, height), layout="constrained", **kwargs)


def _note(ax: Axes, text: str) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        wrap=True,
        color="0.4",
    )


def _flow_label(flows: pd.DataFrame | None, fid: Any) -> str:
    if flows is not None and "flow" in flows:
        match = flows.loc[flows["flow_id"] == fid, "flow"]
        if not match.empty:
            return str(match.iloc[0])
    return f"flow {fid}"


def plot_cwnd_queue(
    flow_series: pd.DataFrame,
    queue_series: pd.DataFrame,
    *,
    queue_id: int,
    flows: pd.DataFrame | None = None,
    flow_ids: Sequence[int] | None = None,
    mss: float | None = None,
    queue_column: str = "packets",
    title: str | None = None,
    max_flows: int = 12,
) -> Figure:
    """Congestion windows (top) and one queue's occupancy (bottom) over time.

    cwnd is drawn per flow (at most ``max_flows``, or the ``flow_ids``
    given), in packets if ``mss`` is given, else in kB. The queue panel
    shows the instantaneous occupancy (``queue_column`` of
    ``queue_series``) and, where the discipline has one, its averaged
    queue ``aqm_avg`` (RED's ``avg``), in the same unit. ``flows`` names
    the flows in the legend.
    """
    fig = _figure(8.0, 6.0)
    ax_cwnd, ax_q = fig.subplots(2, 1, sharex=True)
    ids = list(flow_ids) if flow_ids is not None else sorted(flow_series["flow_id"].unique())
    shown = ids[:max_flows]
    scale, unit = (mss, "packets") if mss else (1000.0, "kB")
    for fid in shown:
        part = flow_series.loc[flow_series["flow_id"] == fid]
        ax_cwnd.plot(
            part["time_s"],
            part["cwnd_bytes"] / scale,
            drawstyle="steps-post",
            lw=1.0,
            label=_flow_label(flows, fid),
        )
    ax_cwnd.set_ylabel(f"cwnd ({unit})")
    if shown:
        ax_cwnd.legend(fontsize="small", ncols=min(4, len(shown)), loc="upper right")
    if len(ids) > len(shown):
        ax_cwnd.set_title(f"cwnd of {len(shown)} of {len(ids)} flows", fontsize="medium")
    q = queue_series.loc[queue_series["queue_id"] == queue_id]
    ax_q.plot(q["time_s"], q[queue_column], drawstyle="steps-post", lw=1.0, label="instantaneous")
    if "aqm_avg" in q and q["aqm_avg"].notna().any():
        ax_q.plot(q["time_s"], q["aqm_avg"], lw=1.2, label="average (AQM)")
    ax_q.set_ylabel(f"queue ({queue_column})")
    ax_q.set_xlabel("time (s)")
    ax_q.legend(fontsize="small", loc="upper right")
    fig.suptitle(title or f"cwnd and queue {queue_id} over time")
    return fig


def plot_group_goodput(
    group_series: pd.DataFrame,
    *,
    column: str = "goodput_bps_mean",
    title: str | None = None,
) -> Figure:
    """Goodput per group over time (the ``hetero`` study's "visual max-min" figure).

    ``group_series`` is :func:`ecnsim.analysis.group_goodput_series`' output;
    ``column`` picks the mean per flow (default) or the group's aggregate
    (``goodput_bps``). Drawn in Mb/s, one line per group, at bin midpoints.
    """
    fig = _figure()
    ax = fig.subplots()
    for group, part in group_series.groupby("group", sort=True):
        mid = (part["time_s"].to_numpy(dtype=float) + part["end_s"].to_numpy(dtype=float)) / 2
        ax.plot(mid, part[column].to_numpy(dtype=float) / 1e6, marker=".", lw=1.2, label=str(group))
    ax.set_xlabel("time (s)")
    what = "mean goodput per flow" if column.endswith("_mean") else "aggregate goodput"
    ax.set_ylabel(f"{what} (Mb/s)")
    ax.set_ylim(bottom=0)
    if len(group_series):
        ax.legend(title="group")
    fig.suptitle(title or "goodput per group over time")
    return fig


def plot_drops_marks(
    flows: pd.DataFrame,
    flow_series: pd.DataFrame | None = None,
    *,
    title: str | None = None,
    max_flows: int = 40,
    marks: bool = True,
) -> Figure:
    """Per-flow drops and marks: the lockout view.

    If ``flow_series`` has cumulative per-flow ``drops`` and ``marks``
    columns, each flow's counts are drawn over time (left: drops, right:
    marks). Otherwise, a bar chart of each flow's totals over [warm-up,
    end], sorted by flow, which shows which flows took the congestion
    signals but not when. ``marks=False`` (a run without ECN) draws the
    drops only.
    """
    has_series = flow_series is not None and {"drops", "marks"} <= set(flow_series.columns)
    fig = _figure(9.0 if marks else 7.0, 4.5)
    axes = fig.subplots(1, 2, sharey=not has_series) if marks else [fig.subplots()]
    panels = list(zip(axes, ("drops", "marks")[: len(axes)], strict=True))
    if has_series:
        assert flow_series is not None
        ids = sorted(flow_series["flow_id"].unique())[:max_flows]
        for fid in ids:
            part = flow_series.loc[flow_series["flow_id"] == fid]
            label = _flow_label(flows, fid)
            for ax, what in panels:
                ax.plot(part["time_s"], part[what], drawstyle="steps-post", lw=1.0, label=label)
        for ax, what in panels:
            ax.set_xlabel("time (s)")
            ax.set_ylabel(f"cumulative {what}")
        if 0 < len(ids) <= 12:
            panels[-1][0].legend(fontsize="small")
        more = f" (first {len(ids)} flows)" if flow_series["flow_id"].nunique() > len(ids) else ""
        what = "drops and marks" if marks else "drops"
        fig.suptitle(title or f"per-flow {what} over time{more}")
        return fig
    shown = flows.sort_values("flow_id").head(max_flows)
    labels = [str(n) for n in (shown["flow"] if "flow" in shown else shown["flow_id"])]
    x = np.arange(len(shown))
    for ax, what in panels:
        ax.bar(x, shown[what].to_numpy(dtype=float), color="C3" if what == "drops" else "C0")
        ax.set_xticks(x, labels, rotation=90 if len(x) > 8 else 0, fontsize="small")
        ax.set_ylabel(f"{what} per flow")
        ax.set_title("drops" if what == "drops" else "CE marks", fontsize="medium")
    more = f", first {len(shown)} of {len(flows)} flows" if len(flows) > len(shown) else ""
    what = "drops and marks" if marks else "drops"
    fig.suptitle(
        title or f"per-flow {what}, totals over [warm-up, end]{more}",
        fontsize="medium",
    )
    return fig


def plot_flow_goodput(
    rates: pd.DataFrame,
    *,
    column: str = "goodput_bps",
    max_bars: int = 60,
    title: str | None = None,
) -> Figure:
    """Every flow's goodput, so that unfairness shows (not only group means).

    ``rates`` is :func:`ecnsim.analysis.flow_rates`' output (or the flows
    table). Up to ``max_bars`` flows: one bar per flow, sorted from the
    highest goodput to the lowest, coloured by group. More flows: the CDF
    of per-flow goodput, one curve per group, which stays readable at
    thousands of flows. Jain's index is in the title.
    """
    df = rates[np.isfinite(rates[column].to_numpy(dtype=float))]
    values = df[column].to_numpy(dtype=float) / 1e6
    groups = (
        df["group"].astype(str).to_numpy() if "group" in df else np.full(len(df), "", dtype=object)
    )
    names = (
        df["flow"].astype(str).to_numpy() if "flow" in df else df["flow_id"].astype(str).to_numpy()
    )
    order = sorted(set(groups.tolist()))
    colour = {g: f"C{i % 10}" for i, g in enumerate(order)}
    fig = _figure()
    ax = fig.subplots()
    if len(df) <= max_bars:
        idx = np.argsort(-values, kind="stable")
        x = np.arange(len(idx))
        ax.bar(x, values[idx], color=[colour[groups[i]] for i in idx])
        ax.set_xticks(x, names[idx], rotation=90 if len(x) > 8 else 0, fontsize="small")
        ax.set_xlabel("flow (sorted by goodput)")
        ax.set_ylabel("goodput (Mb/s)")
        if len(order) > 1:
            from matplotlib.patches import Patch

            ax.legend(handles=[Patch(color=colour[g], label=g) for g in order], title="group")
    else:
        for g in order:
            e = analysis.ecdf(values[groups == g])
            n = int((groups == g).sum())
            ax.plot(e["x"], e["cdf"], drawstyle="steps-post", color=colour[g], label=f"{g} ({n})")
        ax.set_xlabel("goodput per flow (Mb/s)")
        ax.set_ylabel("share of flows with goodput <= x")
        ax.set_ylim(0, 1.02)
        if len(order) > 1 or order != [""]:
            ax.legend(title="group (flows)", fontsize="small")
    jain = analysis.jain_index(values) if len(values) else math.nan
    fig.suptitle(title or f"goodput per flow ({len(values)} flows; Jain's index {jain:.3f})")
    return fig


def plot_lockout(
    intervals: pd.DataFrame,
    flows: pd.DataFrame,
    *,
    start_s: float = 0.0,
    end_s: float | None = None,
    title: str | None = None,
) -> Figure:
    """Lockout intervals per flow as horizontal bars (one row per flow).

    ``intervals`` is :func:`ecnsim.analysis.lockout_intervals`' output.
    """
    ids = sorted(flows["flow_id"].tolist())
    fig = _figure(8.0, max(2.5, min(10.0, 0.25 * len(ids) + 1.5)))
    ax = fig.subplots()
    row = {fid: i for i, fid in enumerate(ids)}
    for fid, part in intervals.groupby("flow_id"):
        spans = list(zip(part["start_s"], part["duration_s"], strict=True))
        ax.broken_barh(spans, (row[fid] - 0.4, 0.8), color="C3")
    if len(ids) <= MAX_LABELLED_FLOWS:
        ax.set_yticks(range(len(ids)), [_flow_label(flows, f) for f in ids], fontsize="small")
    else:
        # Too many flows to name each: label about a dozen rows, evenly spaced.
        ticks = np.unique(np.linspace(0, len(ids) - 1, 12).round().astype(int))
        ax.set_yticks(ticks, [_flow_label(flows, ids[t]) for t in ticks], fontsize="small")
        ax.set_ylabel(f"flow ({len(ids)}, by id)")
    ax.set_ylim(-0.5, len(ids) - 0.5)
    ax.set_xlim(
        start_s, end_s if end_s is not None else max(1.0, float(intervals["end_s"].max() or 1.0))
    )
    ax.set_xlabel("time (s)")
    if intervals.empty:
        _note(ax, "no lockout interval")
    fig.suptitle(title or "lockout: intervals in which a flow delivered nothing")
    return fig


def plot_sweep(
    df: pd.DataFrame,
    x: str,
    *,
    y: str = "mean",
    ci: str | None = "ci",
    hue: str | None = None,
    ylabel: str | None = None,
    xlabel: str | None = None,
    logx: bool = False,
    title: str | None = None,
) -> Figure:
    """A metric (Jain's index, goodput, ...) against a swept parameter, with CIs.

    ``df`` is tidy: one row per parameter value (and ``hue`` value), with
    the mean in ``y`` and the confidence-interval half-width in ``ci``
    (:func:`ecnsim.analysis.summarize` makes it). One line per ``hue``
    value, error bars of ``+- ci``.
    """
    if hue is None and df[x].duplicated().any():
        # Several rows per x value: another swept parameter varies, and one line through
        # all of them would join points of different settings.
        stats = {x, y, ci, "metric", "n", "mean", "std", "sem", "ci", "ci_low", "ci_high",
                 "confidence"}  # fmt: skip
        varying = [c for c in df.columns if c not in stats and df[c].nunique(dropna=False) > 1]
        warnings.warn(
            f"plot_sweep: {int(df[x].duplicated().sum())} rows repeat an x value ({x}); "
            f"{', '.join(map(str, varying)) or 'another column'} varies as well: give hue= "
            "(one line per value) or filter df, or they are joined into one line",
            UserWarning,
            stacklevel=2,
        )
    fig = _figure()
    ax = fig.subplots()
    groups = [(None, df)] if hue is None else df.groupby(hue, sort=True)
    parts: list[tuple[str | None, pd.DataFrame]] = [
        (None if k is None else str(k), p) for k, p in groups
    ]
    for label, part in parts:
        part = part.sort_values(x)
        err = part[ci].to_numpy(dtype=float) if ci is not None and ci in part else None
        ax.errorbar(
            part[x].to_numpy(),
            part[y].to_numpy(dtype=float),
            yerr=err,
            marker="o",
            capsize=3,
            lw=1.2,
            label=f"{hue} = {label}" if label is not None else None,
        )
    if logx:
        ax.set_xscale("log")
        values = np.unique(df[x].to_numpy(dtype=float))
        if 0 < values.size <= 12:
            from matplotlib.ticker import NullFormatter

            ax.set_xticks(values, [f"{v:g}" for v in values])
            ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if hue is not None:
        ax.legend()
    fig.suptitle(title or f"{ylabel or y} against {xlabel or x}")
    return fig


def plot_sweep_panels(
    df: pd.DataFrame,
    x: str,
    *,
    panel: str,
    hue: str | None = None,
    y: str = "mean",
    ci: str | None = "ci",
    ylabel: str | None = None,
    xlabel: str | None = None,
    logx: bool = False,
    ylim: tuple[float | None, float | None] | None = None,
    title: str | None = None,
    panel_label: str | None = None,
    hue_order: Sequence[Any] | None = None,
) -> Figure:
    """:func:`plot_sweep` once per value of ``panel``, side by side with a shared y axis.

    ``df`` is tidy (``x``, ``panel``, ``hue``, ``y`` and ``ci`` columns):
    e.g. goodput against N, one line per queue mode, one panel per max_p.
    ``hue_order`` fixes the order (and so the colours) of the lines.
    """
    panels = sorted(df[panel].unique().tolist()) if not df.empty else []
    ncols = max(1, min(4, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig = _figure(3.4 * ncols + 1.0, 3.0 * nrows + 0.8)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
    for ax, value in zip(axes, panels, strict=False):
        part = df[df[panel] == value]
        if hue is None:
            hues: list[tuple[Any, pd.DataFrame]] = [(None, part)]
        else:
            order = list(hue_order) if hue_order is not None else sorted(part[hue].unique())
            hues = [(h, part[part[hue] == h]) for h in order if (part[hue] == h).any()]
        for label, sub in hues:
            sub = sub.sort_values(x)
            err = sub[ci].to_numpy(dtype=float) if ci is not None and ci in sub else None
            ax.errorbar(
                sub[x].to_numpy(dtype=float),
                sub[y].to_numpy(dtype=float),
                yerr=err,
                marker="o",
                ms=3.5,
                capsize=3,
                lw=1.2,
                label=None if label is None else str(label),
            )
        if logx:
            ax.set_xscale("log")
            values = np.unique(part[x].to_numpy(dtype=float))
            if 0 < values.size <= 12:
                from matplotlib.ticker import NullFormatter

                ax.set_xticks(values, [f"{v:g}" for v in values], fontsize="small")
                ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(
            f"{panel_label or panel} = {value:g}"
            if isinstance(value, float)
            else f"{panel_label or panel} = {value}",
            fontsize="medium",
        )
        ax.set_xlabel(xlabel or x)
        ax.grid(True, alpha=0.3)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    axes[0].set_ylabel(ylabel or y)
    if ylim is not None:
        axes[0].set_ylim(*ylim)
    if hue is not None and panels:
        axes[0].legend(fontsize="small")
    if not panels:
        _note(axes[0], "no data")
    fig.suptitle(title or f"{ylabel or y} against {xlabel or x}")
    return fig


def plot_raster(
    raster: pd.DataFrame,
    *,
    flows: pd.DataFrame | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
    max_points: int = 400_000,
    title: str | None = None,
) -> Figure:
    """The lockout raster: flow against time, one dot per packet through, marked or dropped.

    ``raster`` is :func:`ecnsim.analysis.packet_raster`'s output. Flows are
    rows in ``flow_id`` order (labelled with their names when ``flows`` is
    given and there are few enough to read); a flow locked out shows as a
    gap in its row. Above ``max_points`` dots, the "sent" dots are thinned
    evenly (marks and drops are always drawn).
    """
    fig = _figure(9.0, 5.5)
    ax = fig.subplots()
    if raster.empty:
        _note(ax, "no packet events (was the bottleneck traced?)")
        return fig
    ids = (
        sorted(flows["flow_id"].tolist())
        if flows is not None
        else sorted(raster["flow_id"].unique().tolist())
    )
    row = {fid: i for i, fid in enumerate(ids)}
    rows = raster["flow_id"].map(row).to_numpy(dtype=float)
    t = raster["time_s"].to_numpy(dtype=float)
    kind = raster["kind"].to_numpy()
    sent = np.flatnonzero(kind == "sent")
    if sent.size > max_points:
        sent = sent[:: math.ceil(sent.size / max_points)]
    dense = len(ids) > 100
    # Rasterized: an SVG of 10^5 dots stays small (the axes and text stay vector).
    ax.scatter(
        t[sent],
        rows[sent],
        s=0.4 if dense else 1.5,
        marker=".",
        color="0.55",
        lw=0,
        label="through",
        rasterized=True,
    )
    for k, color, m in (("marked", "C0", "|"), ("dropped", "C3", "x")):
        sel = kind == k
        if sel.any():
            ax.scatter(
                t[sel],
                rows[sel],
                s=2 if dense else 5,
                marker=m,
                color=color,
                lw=0.6,
                label=k,
                rasterized=True,
            )
    if flows is not None and "group" in flows:
        # Group bands: a line between groups and the group's name at its middle.
        by_id = dict(zip(flows["flow_id"], flows["group"], strict=True))
        labels = [str(by_id.get(f, "")) for f in ids]
        start = 0
        for i in range(1, len(labels) + 1):
            if i == len(labels) or labels[i] != labels[start]:
                if i < len(labels):
                    ax.axhline(i - 0.5, color="0.3", lw=0.6)
                ax.annotate(
                    labels[start],
                    xy=(1.0, (start + i - 1) / 2),
                    xycoords=("axes fraction", "data"),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize="small",
                )
                start = i
    ax.set_ylim(-1, len(ids))
    if start_s is not None or end_s is not None:
        ax.set_xlim(start_s, end_s)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("flow")
    if flows is not None and len(ids) <= 40:
        ax.set_yticks(range(len(ids)), [_flow_label(flows, f) for f in ids], fontsize="x-small")
    ax.legend(
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=3,
        fontsize="small",
        markerscale=4,
        frameon=False,
    )
    fig.suptitle(title or "packets at the bottleneck: through, marked, dropped")
    return fig


def _as_samples(
    data: Mapping[str, Any] | pd.Series | np.ndarray | Sequence[float],
) -> dict[str, np.ndarray]:
    if isinstance(data, Mapping):
        return {str(k): np.asarray(v, dtype=float) for k, v in data.items()}
    return {"": np.asarray(data, dtype=float)}


def plot_response_time_cdf(
    records: pd.DataFrame,
    *,
    kind: str | None = None,
    by: str | None = "group",
    failed: str = "never",
    title: str | None = None,
    log_ccdf: bool = True,
) -> Figure:
    """Response-time CDF (left) and CCDF (right) of a ``records`` table, per ``by``.

    Unfinished records count: those in progress are censored, failed ones
    never complete (or are censored, ``failed="censored"``); see
    :func:`ecnsim.analysis.response_time_cdf`. The legend gives each
    group's unfinished records. ``kind`` defaults to objects if any, else
    pages, else every record.
    """
    if kind is None:
        kinds = set(records["kind"]) if len(records) else set()
        kind = next((k for k in ("object", "page", "transaction") if k in kinds), None)
    df = records if kind is None else records[records["kind"] == kind]
    groups = [("", df)] if by is None or by not in df else list(df.groupby(by, sort=True))
    fig = _figure(10.0, 4.5)
    ax_cdf, ax_ccdf = fig.subplots(1, 2)
    for label, g in groups:
        km = analysis.response_time_cdf(g, kind=None, failed=failed)
        unfinished = int((g["state"] != "completed").sum()) if "state" in g else 0
        text = str(label) + (f" ({unfinished} unfinished)" if unfinished else "")
        ax_cdf.plot(km["x"], km["cdf"], drawstyle="steps-post", label=text or None)
        c = km[(km["ccdf"] > 0) & (km["x"] > 0)] if log_ccdf else km
        ax_ccdf.plot(c["x"], c["ccdf"], drawstyle="steps-post", label=text or None)
    ax_cdf.set_xlabel("response time (s)")
    ax_cdf.set_ylabel("P(X <= x)")
    ax_cdf.set_ylim(0, 1.02)
    ax_ccdf.set_xlabel("response time (s)")
    ax_ccdf.set_ylabel("P(X > x)")
    if log_ccdf:
        ax_ccdf.set_xscale("log")
        ax_ccdf.set_yscale("log")
    if any(label for label, _ in groups) or len(groups) > 1:
        ax_cdf.legend(fontsize="small")
    fig.suptitle(title or f"{kind or 'record'} response times (unfinished counted, Kaplan-Meier)")
    return fig


def plot_cdf(
    data: Mapping[str, Any] | pd.Series | np.ndarray | Sequence[float],
    *,
    xlabel: str = "response time (s)",
    title: str | None = None,
    log_ccdf: bool = True,
) -> Figure:
    """CDF (left) and CCDF (right, log-log by default) of one or more samples.

    ``data`` is one sample or a mapping of label to sample (e.g. response
    times of ECN and non-ECN clients, the ``ecnplus`` study's figures).
    NaNs (transfers that never completed) are left out, and their number
    is given in the legend.
    """
    fig = _figure(10.0, 4.5)
    ax_cdf, ax_ccdf = fig.subplots(1, 2)
    samples = _as_samples(data)
    for label, x in samples.items():
        nan = int(np.isnan(x).sum())
        text = label + (f" ({nan} incomplete)" if nan else "")
        e = analysis.ecdf(x)
        c = analysis.ccdf(x)
        ax_cdf.plot(e["x"], e["cdf"], drawstyle="steps-post", label=text or None)
        if log_ccdf:
            keep = (c["ccdf"] > 0) & (c["x"] > 0)
            c = c.loc[keep]
        ax_ccdf.plot(c["x"], c["ccdf"], drawstyle="steps-post", label=text or None)
    ax_cdf.set_xlabel(xlabel)
    ax_cdf.set_ylabel("P(X <= x)")
    ax_cdf.set_ylim(0, 1.02)
    ax_ccdf.set_xlabel(xlabel)
    ax_ccdf.set_ylabel("P(X > x)")
    if log_ccdf:
        ax_ccdf.set_xscale("log")
        ax_ccdf.set_yscale("log")
    if any(samples):
        ax_cdf.legend(fontsize="small")
    fig.suptitle(title or "CDF and CCDF")
    return fig


def plot_queue_delay_ccdf(
    queue_series: pd.DataFrame,
    queues: pd.DataFrame,
    queue_id: int,
    *,
    warmup_s: float = 0.0,
    title: str | None = None,
) -> Figure:
    """P(queueing delay > d) against d for one queue (the ``ecnplus`` study's measure).

    The delay at a sample is ``bytes * 8 / rate_bps``; see
    :func:`ecnsim.analysis.queueing_delay_exceeds`.
    """
    fig = _figure()
    ax = fig.subplots()
    c = analysis.queue_delay_ccdf(queue_series, queues, queue_id, warmup_s=warmup_s)
    c = c.loc[c["ccdf"] > 0]
    if c.empty:
        _note(ax, "the queue was never backlogged")
    else:
        ax.plot(c["x"] * 1e3, c["ccdf"], drawstyle="steps-post")
        ax.set_yscale("log")
        ymin = float(c["ccdf"].min())
        ax.set_ylim(10 ** math.floor(math.log10(ymin)), 1.05)
    ax.set_xlabel("queueing delay d (ms)")
    ax.set_ylabel("P(queueing delay > d)")
    fig.suptitle(title or f"queueing delay of queue {queue_id}")
    return fig


def _rate_label(bps: float) -> str:
    return f"{bps / 1e6:g} Mb/s"


def plot_delay_exceedance(
    model: pd.DataFrame,
    simulated: pd.DataFrame | None = None,
    *,
    ymin: float = 1e-4,
    log_y: bool = True,
    title: str | None = None,
) -> Figure:
    """P(queueing delay > d) against utilization: the model's curves beside simulated points.

    The ``ecnplus`` study's figure. ``model`` is
    :func:`ecnsim.models.delay_exceedance_curve`'s table (``link_rate_bps,
    utilization, delay_s, measure, p_exceed``): one line per link rate.
    ``simulated`` (optional) has one row per run or sweep point with
    ``link_rate_bps, utilization, p_exceed`` and, if present, ``ci`` (a
    confidence half-width, drawn as an error bar); the simulated
    utilization is the link's measured one (``analysis.link_utilization``)
    and ``p_exceed`` comes from ``analysis.queueing_delay_exceeds``. Each
    link rate keeps one colour for its line and its points. Probabilities
    below ``ymin`` are off the (log) scale.
    """
    fig = _figure()
    ax = fig.subplots()
    delays = sorted(set(model["delay_s"].to_numpy(dtype=float))) if not model.empty else []
    measures = sorted(set(model["measure"].astype(str))) if "measure" in model else []
    rates = sorted(set(model["link_rate_bps"].to_numpy(dtype=float)))
    if simulated is not None:
        rates = sorted(set(rates) | set(simulated["link_rate_bps"].to_numpy(dtype=float)))
    colors = {r: f"C{i % 10}" for i, r in enumerate(rates)}
    for rate, part in model.groupby("link_rate_bps", sort=True):
        part = part.sort_values("utilization")
        r = float(rate)  # type: ignore[arg-type]
        ax.plot(
            part["utilization"],
            part["p_exceed"],
            color=colors[r],
            lw=1.5,
            label=f"M[X]/M/1, {_rate_label(r)}",
        )
    if simulated is not None and not simulated.empty:
        for rate, part in simulated.groupby("link_rate_bps", sort=True):
            part = part.sort_values("utilization")
            r = float(rate)  # type: ignore[arg-type]
            ax.errorbar(
                part["utilization"],
                part["p_exceed"],
                yerr=part["ci"].to_numpy(dtype=float) if "ci" in part else None,
                color=colors[r],
                marker="o",
                ls="none",
                capsize=3,
                label=f"simulation, {_rate_label(r)}",
            )
    if log_y:
        ax.set_yscale("log")
        ax.set_ylim(ymin, 1.5)
    else:
        ax.set_ylim(0.0, 1.02)
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("utilization")
    d = f"{delays[0] * 1e3:g} ms" if len(delays) == 1 else "d"
    ax.set_ylabel(f"P(queueing delay > {d})")
    if rates:
        ax.legend(fontsize="small")
    readings = {
        "queue": "waiting backlog / link rate",
        "system": "packets in the system x packet time",
        "packet": "a packet's own wait",
    }
    reading = f"; delay = {', '.join(readings.get(m, m) for m in measures)}" if measures else ""
    fig.suptitle(title or f"P(queueing delay > {d}) against utilization{reading}")
    return fig
