"""``hetero``: RED vs ECN vs ECNM with heterogeneous round-trip times (STUDIES.md §3).

Source: Z. Zheng, "Evaluation of ECN and RED with heterogeneous round-trip
times" (WPI MS thesis, chapter 4), and R. Kinicki, Z. Zheng, ICN 2001
(the ``icn2001`` variant). ns-2, TCP Reno, FTP.

N sources in three equal groups (fragile / average / robust: access one-way
delays 145 / 45 / 5 ms, minimum RTTs 300 / 100 / 20 ms) share a 10 Mb/s,
5 ms bottleneck behind a RED queue in one of three modes: RED (drops), ECN
(marks between the thresholds, drops above max_th) and ECNM (marks above
max_th too; drops only when the buffer overflows). ``docs/studies/hetero.md``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from ecnsim import analysis
from ecnsim.scenario.spec import red, tcp
from ecnsim.scenario.topology import hetero_rtt
from ecnsim.studies._base import (
    Choice,
    Figures,
    JobSpec,
    Study,
    StudyData,
    StudyParams,
    StudyTable,
    pivot,
    select_rows,
)
from ecnsim.studies.findings import ALMOST_ALL, Alternative, Cell, Finding, Reading

__all__ = ["GROUPS", "MODES", "HeteroParams", "HeteroStudy", "StarParams", "derive_star"]

#: The RTT groups, in the order of their access delays.
GROUPS = ("fragile", "average", "robust")

Mode = Literal["RED", "ECN", "ECNM"]
#: Queue modes: the RED ``ecn`` policy each stands for (``docs/models/red.md``).
MODES: dict[str, str] = {"RED": "none", "ECN": "rfc3168", "ECNM": "mark_above_max"}


@dataclass(frozen=True)
class StarParams(StudyParams):
    """The star of chapters 4 and 5 of the thesis, shared by ``hetero`` and ``aecn``.

    Three groups of sources (fragile, average, robust: long, medium and short
    RTTs) share one RED bottleneck; the defaults are chapter 4's, and a
    study's ``Params`` overrides those its source sets differently.
    """

    #: Numbers of sources (split equally into the three groups).
    n_values: tuple[int, ...] = (15, 30, 60, 120, 240, 480, 600)
    #: One-way access delays of the fragile, average and robust groups.
    access_delays_ms: tuple[float, ...] = (145.0, 45.0, 5.0)
    #: Sum of the access links' capacities (each gets this / N).
    aggregate_access_mbps: float = 300.0
    bottleneck_mbps: float = 10.0
    bottleneck_delay_ms: float = 5.0
    buffer_packets: int = 120
    min_th: float = 10.0
    max_th: float = 30.0
    w_q: float = 0.002
    gentle: bool = False
    #: Access links' DropTail buffers (packets).
    access_buffer_packets: int = 50
    cc: Literal["reno", "newreno", "sack", "tahoe"] = "reno"
    #: Largest send window (ns-2 ``window_``), packets.
    window_packets: int = 64
    #: Data packet size on the wire.
    packet_bytes: int = 1000
    #: ns-2's accounting (``useHeaders_ false``): the whole data packet counts as payload.
    ns2_accounting: bool = True
    #: Each group's flows start in equal waves at these times.
    starts_s: tuple[float, ...] = (0.0, 2.0)
    start_jitter_s: float = 0.0
    duration_s: float = 100.0
    warmup_s: float = 20.0
    profile: str = "ns2-2001"
    #: Sampling interval of the per-flow counters: the resolution of lockout and series.
    sample_interval_s: float = 0.1
    #: A flow is locked out "in some particular periods" (ch. 5) when it delivers nothing for
    #: at least this long; ``lockout_window_flows`` counts ch. 4's lockout (nothing delivered
    #: over the whole measured window).
    lockout_s: float = 5.0
    #: The interval of the per-interval Jain's index (``jain_interval``: the mean over
    #: [warm-up, end] of the index over per-flow delivered bytes in each interval; the thesis'
    #: post-processing works in one-second intervals, §3.2.2, Fig. 3.4).
    jain_interval_s: float = 1.0
    #: Bin width of goodput over time.
    bin_s: float = 1.0
    #: Points whose series and packet raster are kept for figures.
    figure_n: tuple[int, ...] = (30, 120, 600)
    #: The seed whose packet raster is kept at figure points.
    raster_seed: int = 1

    def check(self) -> None:
        if not self.n_values or any(n < len(GROUPS) for n in self.n_values):
            raise ValueError(f"n_values: each N must be >= {len(GROUPS)}, got {self.n_values}")
        if len(self.access_delays_ms) != len(GROUPS):
            raise ValueError(
                f"access_delays_ms needs {len(GROUPS)} values (fragile, average, "
                f"robust), got {self.access_delays_ms}"
            )
        if not 0 <= self.min_th < self.max_th <= self.buffer_packets:
            raise ValueError(
                f"need 0 <= min_th < max_th <= buffer_packets, got {self.min_th}, "
                f"{self.max_th}, {self.buffer_packets}"
            )
        if not 0 <= self.warmup_s < self.duration_s:
            raise ValueError(
                f"need 0 <= warmup_s < duration_s, got {self.warmup_s}, {self.duration_s}"
            )
        if self.packet_bytes <= 40:
            raise ValueError(
                f"packet_bytes must exceed the 40 header bytes, got {self.packet_bytes}"
            )
        if self.seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {self.seeds}")


@dataclass(frozen=True)
class HeteroParams(StarParams):
    """The thesis' setup (chapter 4) as defaults; ``variant="icn2001"`` gives the ICN paper's."""

    variant: Literal["thesis", "icn2001"] = "thesis"
    max_p_values: tuple[float, ...] = (0.1, 0.2, 0.5, 0.8)
    modes: tuple[Mode, ...] = ("RED", "ECN", "ECNM")
    #: (N, max_p) of the figures over time, where the thesis draws them: per-group goodput at
    #: 30 flows with max_p 0.2 and 0.5 and at 60 with 0.5, packet (mark / drop) plots at 120
    #: flows with max_p 0.8. Without one of them in the grid: every N of ``figure_n`` (or the
    #: largest N) at the first max_p.
    figure_points: tuple[tuple[float, float], ...] = ((30, 0.2), (30, 0.5), (60, 0.5), (120, 0.8))
    #: Of those, the points whose packets are traced for the raster (the packet plots).
    raster_points: tuple[tuple[float, float], ...] = ((120, 0.8),)

    def check(self) -> None:
        super().check()
        if any(not 0 < p <= 1 for p in self.max_p_values):
            raise ValueError(f"max_p_values must be in (0, 1], got {self.max_p_values}")


def _packet_fields(packet_bytes: int, ns2_accounting: bool) -> dict[str, Any]:
    """TCP fields for data packets of ``packet_bytes`` on the wire (40 B of headers)."""
    if ns2_accounting:
        # ns-2 Agent/TCP packetSize_ with useHeaders_ false: the packet is all payload.
        return {"mss": packet_bytes, "header_bytes": 40, "headers_on_data": False}
    return {"mss": packet_bytes - 40, "header_bytes": 40, "headers_on_data": True}


def _figure_points(p: HeteroParams) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """``(series points, raster points)``: the (N, max_p) of the figures over time and of the
    packet rasters, those of ``figure_points`` and ``raster_points`` that are in the grid."""

    def in_grid(n: float, mp: float) -> bool:
        return int(n) in p.n_values and any(math.isclose(mp, m) for m in p.max_p_values)

    series = [(int(n), float(mp)) for n, mp in p.figure_points if in_grid(n, mp)]
    raster = [(int(n), float(mp)) for n, mp in p.raster_points if in_grid(n, mp)]
    if not series:
        ns = [n for n in p.figure_n if n in p.n_values] or [max(p.n_values)]
        series = raster = [(n, p.max_p_values[0]) for n in ns]
    return series, raster


# ---------------------------------------------------------------------------
# Per-run metrics of a star of RTT groups (shared with the aecn study)
# ---------------------------------------------------------------------------


def derive_star(
    results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
) -> dict[str, pd.DataFrame]:
    """Reduce one run of a heterogeneous-RTT star to the tables the studies report.

    ``metrics`` (one row), ``groups`` (one row per group), ``flows`` (one row
    per flow: goodput, drops, marks, silences); at figure points also
    ``group_series`` (goodput per group over time), ``queue_series`` (the
    bottleneck's queue and RED average over time) and, for the raster seed,
    ``raster`` (every data packet through, marked or dropped at the bottleneck).
    """
    warmup = float(context["warmup_s"])
    end = float(context["end_s"])
    interval = end - warmup
    groups = list(context["groups"])
    flows = results.flows
    queues = results.queues
    fseries = results.table("flow_series").to_pandas()
    qseries = results.table("queue_series").to_pandas()

    rates = analysis.flow_rates(flows, end_s=end, warmup_s=warmup)
    # Thesis §3.1.1: throughput is the rate at which a source's packets, retransmissions
    # included, reach the sink. DEVIATION(ns-2): a duplicate (a spurious retransmission of data
    # the sink already had) is not counted, as the core counts first arrivals only.
    sink_bps = (
        flows["bytes_received"].to_numpy(dtype=float)
        * 8.0
        / rates["interval_s"].to_numpy(dtype=float)
    )
    group_of = analysis.flow_groups(flows)
    silences = analysis.silence_by_flow(fseries, warmup_s=warmup, flows=flows)
    owd = flows["mean_owd_s"].to_numpy(dtype=float)

    per_flow = pd.DataFrame(
        {
            "flow_id": flows["flow_id"].to_numpy(dtype=np.int64),
            "flow": flows["flow"].astype(str).to_numpy(),
            "group": group_of.to_numpy(),
            "goodput_bps": rates["goodput_bps"].to_numpy(dtype=float),
            "throughput_bps": sink_bps,
            "throughput_sent_bps": rates["throughput_bps"].to_numpy(dtype=float),
            "delivered_bytes": flows["bytes_delivered"].to_numpy(dtype=float),
            "drops": flows["drops"].to_numpy(dtype=np.int64),
            "marks": flows["marks"].to_numpy(dtype=np.int64),
            "rto_count": flows["rto_count"].to_numpy(dtype=np.int64),
            "retransmits": flows["packets_retransmitted"].to_numpy(dtype=np.int64),
            "owd_s": owd,
            "longest_silence_s": silences["longest_silence_s"].to_numpy(dtype=float),
            "silent_s": silences["silent_s"].to_numpy(dtype=float),
        }
    )
    lockout_s = float(context["lockout_s"])
    per_flow["locked_out"] = per_flow["longest_silence_s"] >= lockout_s - 1e-12
    # Ch. 4: flows "unable to get any data through the congested router for the duration of
    # the simulation": nothing delivered over the measured window.
    per_flow["locked_out_window"] = per_flow["delivered_bytes"] <= 0

    bq = queues.loc[queues["queue_id"] == 0].iloc[0]
    region = analysis.red_region_share(
        qseries,
        0,
        min_th=float(context["min_th"]),
        max_th=float(context["max_th"]),
        warmup_s=warmup,
    )
    goodputs = per_flow["goodput_bps"].to_numpy(dtype=float)
    metrics: dict[str, float] = {
        "goodput_mbps": float(np.nansum(goodputs)) / 1e6,
        "throughput_mbps": float(np.nansum(per_flow["throughput_bps"])) / 1e6,
        "throughput_sent_mbps": float(np.nansum(per_flow["throughput_sent_bps"])) / 1e6,
        "jain": analysis.jain_index(goodputs),
        "jain_interval": interval_jain(
            fseries, bin_s=float(context.get("jain_interval_s", 1.0)), warmup_s=warmup
        ),
        "utilization": float(bq["utilization"]),
        "drops_per_s": float(bq["drops"]) / interval,
        "marks_per_s": float(bq["marks"]) / interval,
        "drops_overflow_per_s": float(bq["drops_overflow"]) / interval,
        "timeouts_per_s": float(per_flow["rto_count"].sum()) / interval,
        "retransmits_per_s": float(per_flow["retransmits"].sum()) / interval,
        "lockout_flows": float(per_flow["locked_out"].sum()),
        "lockout_share": float(per_flow["locked_out"].mean()),
        "lockout_window_flows": float(per_flow["locked_out_window"].sum()),
        "longest_silence_s_max": float(per_flow["longest_silence_s"].max()),
        "queue_avg_packets": float(bq["avg_packets"]),
        # Every flow weighs the same, as in the per-group delays.
        "owd_ms": float(np.nanmean(owd)) * 1e3 if np.isfinite(owd).any() else math.nan,
        "red_below": region["below"],
        "red_inside": region["inside"],
        "red_above": region["above"],
    }
    group_rows = []
    means: list[float] = []
    for g in groups:
        part = per_flow[per_flow["group"] == g]
        gp = part["goodput_bps"].to_numpy(dtype=float)
        mean_gp = float(np.nanmean(gp)) if gp.size else math.nan
        means.append(mean_gp)
        owd_g = part["owd_s"].to_numpy(dtype=float)
        owd_g = owd_g[~np.isnan(owd_g)]
        row = {
            "group": g,
            "flows": float(len(part)),
            "goodput_mbps": float(np.nansum(gp)) / 1e6,
            "goodput_per_flow_kbps": mean_gp / 1e3,
            "throughput_mbps": float(np.nansum(part["throughput_bps"])) / 1e6,
            "throughput_sent_mbps": float(np.nansum(part["throughput_sent_bps"])) / 1e6,
            "owd_ms": float(owd_g.mean()) * 1e3 if owd_g.size else math.nan,
            "drops_per_flow": float(part["drops"].mean()) if len(part) else math.nan,
            "marks_per_flow": float(part["marks"].mean()) if len(part) else math.nan,
            "timeouts_per_flow": float(part["rto_count"].mean()) if len(part) else math.nan,
            "lockout_flows": float(part["locked_out"].sum()),
            "lockout_window_flows": float(part["locked_out_window"].sum()),
            "jain_within": analysis.jain_index(gp) if gp.size else math.nan,
        }
        group_rows.append(row)
        metrics[f"goodput_{g}_kbps"] = row["goodput_per_flow_kbps"]
        metrics[f"owd_{g}_ms"] = row["owd_ms"]
    if "robust" in groups and "fragile" in groups:
        # The robust (short-RTT) group's goodput per flow over the fragile group's.
        robust, fragile = means[groups.index("robust")], means[groups.index("fragile")]
        metrics["robust_fragile_ratio"] = robust / fragile if fragile > 0 else math.nan
    finite = [m for m in means if not math.isnan(m)]
    metrics["group_min_max_ratio"] = (
        min(finite) / max(finite) if finite and max(finite) > 0 else math.nan
    )
    out: dict[str, pd.DataFrame] = {
        "metrics": pd.DataFrame([metrics]),
        "groups": pd.DataFrame(group_rows),
        "flows": per_flow,
    }
    if context.get("series"):
        # The whole run, start-up included: the thesis' plots show it.
        gs = analysis.group_goodput_series(fseries, flows, bin_s=float(context["bin_s"]))
        out["group_series"] = gs[["time_s", "group", "goodput_bps", "goodput_bps_mean"]]
        out["signal_series"] = _group_signal_series(fseries, per_flow, float(context["bin_s"]))
        q = qseries.loc[qseries["queue_id"] == 0, ["time_s", "packets", "aqm_avg"]]
        out["queue_series"] = q.reset_index(drop=True)
        raster_seed = context.get("raster_seed")
        if (
            trace is not None
            and raster_seed is not None
            and int(results.meta["seed"]) == int(raster_seed)
        ):
            router, sink = _bottleneck_nodes(results)
            out["raster"] = analysis.packet_raster(trace, from_node=router, to_node=sink)
    return out


def interval_jain(fseries: pd.DataFrame, *, bin_s: float, warmup_s: float) -> float:
    """The mean over ``bin_s`` intervals of [warm-up, end] of Jain's index over the flows'
    delivered bytes in each interval (intervals in which no flow delivered anything, where the
    index is 0/0, left out); NaN with no whole interval."""
    inc = analysis.binned_increments(fseries, "bytes_delivered", bin_s=bin_s, warmup_s=warmup_s)
    if inc.empty:
        return math.nan
    t = inc["time_s"].to_numpy(dtype=float)
    x = inc["increment"].to_numpy(dtype=float)
    _, where = np.unique(t, return_inverse=True)
    total = np.bincount(where, weights=x)
    squares = np.bincount(where, weights=x * x)
    count = np.bincount(where)
    ok = squares > 0
    if not ok.any():
        return math.nan
    # Jain, Chiu & Hawe 1984: (sum x)^2 / (n * sum x^2), per interval.
    return float(np.mean(total[ok] ** 2 / (count[ok] * squares[ok])))


def _group_signal_series(
    fseries: pd.DataFrame, per_flow: pd.DataFrame, bin_s: float
) -> pd.DataFrame:
    """Drops and marks per flow and second, per group and time bin (the whole run)."""
    group = per_flow.set_index("flow_id")["group"]
    parts = []
    for column in ("drops", "marks"):
        inc = analysis.binned_increments(fseries, column, bin_s=bin_s)
        inc["group"] = inc["flow_id"].map(group)
        agg = (
            inc.groupby(["time_s", "group"], sort=True)["rate"]
            .mean()
            .rename(f"{column}_per_flow_per_s")
        )
        parts.append(agg)
    table: pd.DataFrame = pd.concat(parts, axis=1).reset_index()
    return table


def _bottleneck_nodes(results: Any) -> tuple[int, int]:
    """Node indices of the bottleneck direction (``links[0]``, a -> b) in the trace's numbering."""
    import json

    spec = json.loads(results.meta["resolved_spec"])
    names = [n["name"] for n in spec["nodes"]]
    link = spec["links"][0]
    return names.index(link["a"]), names.index(link["b"])


# ---------------------------------------------------------------------------
# Tables and figures of a star study (shared with the aecn study)
# ---------------------------------------------------------------------------

#: (table name, metric, title, unit, scale, digits)
_RUN_TABLES = (
    (
        "throughput",
        "throughput_mbps",
        "Aggregate throughput: payload reaching the sink, retransmissions included (thesis §3.1.1)",
        "Mb/s",
        1.0,
        4,
    ),
    (
        "throughput_sent",
        "throughput_sent_mbps",
        # Sent, not carried: packets the bottleneck later drops count, so with drops it
        # exceeds the bottleneck's rate (hetero's N = 60, RED: 10.95 Mb/s of 10).
        "Aggregate payload sent (retransmissions and packets dropped later included)",
        "Mb/s",
        1.0,
        4,
    ),
    ("goodput", "goodput_mbps", "Aggregate goodput", "Mb/s", 1.0, 4),
    (
        "jain",
        "jain_interval",
        "Mean Jain's fairness index: the mean over the intervals (jain_interval_s) of the index "
        "over per-flow delivered bytes",
        "",
        1.0,
        3,
    ),
    (
        "jain_window",
        "jain",
        "Jain's fairness index over per-flow goodputs of the whole window",
        "",
        1.0,
        3,
    ),
    (
        "lockout",
        "lockout_window_flows",
        "Flows locked out: nothing delivered over the measured window (ch. 4)",
        "flows",
        1.0,
        3,
    ),
    (
        "lockout_silent",
        "lockout_flows",
        "Flows locked out in some period: silent for >= lockout_s (ch. 5)",
        "flows",
        1.0,
        3,
    ),
    ("drops", "drops_per_s", "Drops at the bottleneck", "packets/s", 1.0, 4),
    ("marks", "marks_per_s", "Marks at the bottleneck", "packets/s", 1.0, 4),
    ("timeouts", "timeouts_per_s", "Retransmission timeouts", "per s", 1.0, 4),
    (
        "red_region",
        "red_inside",
        "Time the average queue spent in [min_th, max_th)",
        "share of samples",
        1.0,
        3,
    ),
)
_GROUP_TABLES = (
    ("owd", "owd_ms", "Mean one-way delay per group", "ms", 1.0, 4),
    ("group_goodput", "goodput_per_flow_kbps", "Goodput per flow, by group", "kb/s", 1.0, 4),
    (
        "group_drops_marks_drops",
        "drops_per_flow",
        "Drops per flow, by group",
        "packets over [warm-up, end]",
        1.0,
        4,
    ),
    (
        "group_drops_marks_marks",
        "marks_per_flow",
        "Marks per flow, by group",
        "packets over [warm-up, end]",
        1.0,
        4,
    ),
)


def star_run_seconds(duration_s: float, n: int, trace_links: tuple[int, ...] | None) -> float:
    """Estimated wall seconds of one run of the hetero star (hetero's and aecn's points).

    Measured with bench/study_timings.py and a whole study on an idle machine
    (docs/performance.md, "Study run times"): 0.05 s per run (plan, derive, store), per
    simulated second 0.65 ms plus 11 us per flow, and 3.8 ms more when the bottleneck's
    packets are traced for the figures.
    """
    per_s = 6.5e-4 + 1.1e-5 * n + (3.8e-3 if trace_links else 0.0)
    return 0.05 + duration_s * per_s


def _where(df: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    return df if not where else select_rows(df, where)


def star_tables(
    data: StudyData,
    *,
    groups: tuple[str, ...],
    columns: tuple[str, ...],
    where: Mapping[str, Any] | None = None,
    prefix: str = "",
    title: str = "",
) -> dict[str, StudyTable]:
    """The run-level and per-group tables: rows N (and group), columns ``columns`` axes.

    ``where`` keeps only the points with these axis values (one experiment
    of a study); ``prefix`` and ``title`` name the tables of that subset.
    """
    out: dict[str, StudyTable] = {}
    order = {**data.order(), "group": list(groups)}
    agg = _where(data.aggregate("metrics", [m for _, m, *_ in _RUN_TABLES]), where)
    note = "Rows: N (number of sources); columns: " + ", ".join(columns) + "."
    for name, metric, ttl, unit, scale, digits in _RUN_TABLES:
        mean, ci = pivot(agg, metric, index="n", columns=columns, scale=scale, order=order)
        out[prefix + name] = StudyTable(title + ttl, mean, ci, unit=unit, note=note, digits=digits)
    gagg = _where(
        data.aggregate("groups", [m for _, m, *_ in _GROUP_TABLES], by=[*data.axes, "group"]),
        where,
    )
    gnote = "Rows: group, N; columns: " + ", ".join(columns) + "."
    for name, metric, ttl, unit, scale, digits in _GROUP_TABLES:
        if gagg.empty:
            mean = ci = pd.DataFrame()
        else:
            mean, ci = pivot(
                gagg, metric, index=["group", "n"], columns=columns, scale=scale, order=order
            )
        out[prefix + name] = StudyTable(title + ttl, mean, ci, unit=unit, note=gnote, digits=digits)
    return out


def star_figures(
    data: StudyData,
    *,
    groups: tuple[str, ...],
    curve: str,
    panel: str,
    panel_label: str,
    figure_points: list[dict[str, Any]],
    warmup_s: float,
    end_s: float,
    min_th: float,
    max_th: float,
    where: Mapping[str, Any] | None = None,
    prefix: str = "",
    title: str = "",
) -> Figures:
    """Goodput, Jain's index, lockout and timeouts against N; per-group goodput, drops and
    marks, the queue and the raster at the figure points."""
    from ecnsim.output import plot

    figs: Figures = {}
    agg = _where(
        data.aggregate(
            "metrics",
            [
                "goodput_mbps",
                "jain_interval",
                "lockout_window_flows",
                "lockout_flows",
                "timeouts_per_s",
            ],
        ),
        where,
    )
    curves = (
        [c for c in data.order().get(curve, []) if c in set(agg[curve])] if not agg.empty else []
    )
    for metric, ylabel, fname, ylim in (
        ("goodput_mbps", "aggregate goodput (Mb/s)", "goodput_vs_n", None),
        ("jain_interval", "mean Jain's index (per interval)", "jain_vs_n", (0.0, 1.02)),
        ("lockout_window_flows", "flows locked out (window)", "lockout_vs_n", None),
        ("lockout_flows", "flows silent >= lockout_s", "lockout_silent_vs_n", None),
        ("timeouts_per_s", "timeouts per second", "timeouts_vs_n", None),
    ):
        part = agg[agg["metric"] == metric]
        fig = plot.plot_sweep_panels(
            part,
            "n",
            panel=panel,
            hue=curve,
            ylabel=ylabel,
            xlabel="N (sources)",
            logx=True,
            ylim=ylim,
            panel_label=panel_label,
            hue_order=curves,
            title=f"{title}{ylabel} against N (mean and 95% CI over seeds)",
        )
        figs[prefix + fname] = (
            fig,
            f"{title}{ylabel} against the number of sources N, one line per {curve}.",
        )

    frames = {
        name: _where(data.frame(name), where)
        for name in ("group_series", "signal_series", "queue_series", "raster", "flows")
    }
    for fp in figure_points:
        label = ", ".join(
            f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}" for k, v in fp.items()
        )
        slug_fp = prefix + _fp_slug(fp)
        sel = {name: select_rows(df, fp) for name, df in frames.items()}
        if not sel["group_series"].empty:
            figs[f"group_goodput_{slug_fp}"] = (
                _group_panels(
                    sel["group_series"],
                    curve,
                    groups,
                    "goodput_bps_mean",
                    1e-3,
                    "goodput per flow (kb/s)",
                    f"goodput per flow by group, {label}",
                ),
                f"{title}Goodput per flow of each group over time ({label}; mean over seeds): "
                "the thesis' visual max-min fairness is the gap between the curves.",
            )
        if not sel["signal_series"].empty:
            for column, what in (
                ("drops_per_flow_per_s", "drops"),
                ("marks_per_flow_per_s", "marks"),
            ):
                figs[f"group_{what}_{slug_fp}"] = (
                    _group_panels(
                        sel["signal_series"],
                        curve,
                        groups,
                        column,
                        1.0,
                        f"{what} per flow and second",
                        f"{what} per flow by group, {label}",
                    ),
                    f"{title}{what.capitalize()} per flow and second in each group over time "
                    f"({label}; mean over seeds).",
                )
        if not sel["queue_series"].empty:
            figs[f"queue_{slug_fp}"] = (
                _queue_panels(sel["queue_series"], curve, min_th, max_th, label),
                f"{title}Bottleneck queue, instantaneous and RED average, over time ({label}; "
                "first seed).",
            )
        raster = sel["raster"]
        if not raster.empty:
            for value, part in raster.groupby(curve, sort=False):
                seed = part["seed"].iloc[0]
                pflows = select_rows(sel["flows"], {curve: value})
                pflows = pflows[pflows["seed"] == seed]
                fig = plot.plot_raster(
                    part,
                    flows=pflows,
                    start_s=0.0,
                    end_s=end_s,
                    title=f"packets at the bottleneck, {label}, {curve} = {value}",
                )
                figs[f"raster_{slug_fp}_{value}"] = (
                    fig,
                    f"{title}Lockout raster ({label}, {curve} = {value}, seed {int(seed)}): one "
                    "row per flow, one dot per data packet that left the bottleneck queue, marks "
                    "and drops marked. A gap in a row is lockout.",
                )
    return figs


def _fp_slug(fp: Mapping[str, Any]) -> str:
    return "_".join(f"{k}{v:g}" if isinstance(v, float) else f"{k}{v}" for k, v in fp.items())


def _group_panels(
    series: pd.DataFrame,
    curve: str,
    groups: tuple[str, ...],
    column: str,
    scale: float,
    ylabel: str,
    title: str,
) -> Any:
    """One panel per ``curve`` value, one line per group: ``column`` (mean over seeds) over time."""
    from ecnsim.output.plot import _figure

    values = list(dict.fromkeys(series[curve].tolist()))
    ncols = min(4, len(values))
    nrows = math.ceil(len(values) / ncols)
    fig = _figure(3.6 * ncols + 0.8, 3.0 * nrows + 0.6)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
    for ax, value in zip(axes, values, strict=False):
        part = series[series[curve] == value]
        mean = part.groupby(["group", "time_s"], sort=True)[column].mean()
        for g in groups:
            if g in mean.index.get_level_values(0):
                s = mean.loc[g]
                ax.plot(s.index.to_numpy(), s.to_numpy() * scale, label=g, lw=1.1)
        ax.set_title(f"{curve} = {value}", fontsize="medium")
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    for ax in axes[len(values) :]:
        ax.set_visible(False)
    axes[0].set_ylabel(ylabel)
    axes[0].legend(fontsize="small")
    fig.suptitle(title)
    return fig


def _queue_panels(
    series: pd.DataFrame, curve: str, min_th: float, max_th: float, label: str
) -> Any:
    from ecnsim.output.plot import _figure

    values = list(dict.fromkeys(series[curve].tolist()))
    ncols = min(4, len(values))
    nrows = math.ceil(len(values) / ncols)
    fig = _figure(3.6 * ncols + 0.8, 3.0 * nrows + 0.6)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
    for ax in axes[len(values) :]:
        ax.set_visible(False)
    for ax, value in zip(axes, values, strict=False):
        part = series[series[curve] == value]
        part = part[part["seed"] == part["seed"].min()]
        t = part["time_s"].to_numpy(dtype=float)
        ax.plot(t, part["packets"].to_numpy(dtype=float), lw=0.5, color="0.6", label="queue")
        ax.plot(t, part["aqm_avg"].to_numpy(dtype=float), lw=1.2, color="C0", label="average")
        for th in (min_th, max_th):
            ax.axhline(th, color="C3", lw=0.8, ls="--")
        ax.set_title(f"{curve} = {value}", fontsize="medium")
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("packets")
    axes[0].legend(fontsize="small")
    fig.suptitle(f"bottleneck queue over time, {label} (dashed: min_th, max_th)")
    return fig


# ---------------------------------------------------------------------------
# The thesis' findings and the readings they depend on (shared with the aecn study)
# ---------------------------------------------------------------------------


def star_readings(p: StarParams, *, lockout_default: Literal["window", "silent"]) -> list[Reading]:
    """The metric readings of the thesis' chapters 4 and 5, and the profile."""
    window = Alternative(
        "none delivered over the window",
        'ch. 4 counts flows "unable to get any data through the congested router for the '
        'duration of the simulation"',
        metrics={"lockout": "lockout_window_flows"},
    )
    silent = Alternative(
        f"silent >= {p.lockout_s:g} s",
        'ch. 5 also shows flows "locked out in some particular periods" on its packet plots'
        "; the length is ours (lockout_s)",
        metrics={"lockout": "lockout_flows"},
    )
    return [
        Reading(
            "jain",
            "Jain's index: one index over [warm-up, end], or the mean of per-interval indices?",
            (
                Alternative(
                    f"mean of {p.jain_interval_s:g}-s indices",
                    'ch. 5 and Table 5.1 report the "mean Jain\'s fairness index"; the '
                    "thesis' post-processing (C_Stat, §3.2.2) works on one-second intervals "
                    "(Fig. 3.4)",
                    metrics={"jain": "jain_interval"},
                ),
                Alternative(
                    "whole window",
                    "§3.1 defines Jain's index over the flows' rates without naming an "
                    "interval; one index over the measured window is the plain reading",
                    metrics={"jain": "jain"},
                ),
            ),
        ),
        Reading(
            "throughput",
            "Throughput: what reaches the sink, or what the sources send?",
            (
                Alternative(
                    "reaching the sink",
                    "§3.1.1: the rate at which a source's packets, retransmissions included, "
                    'reach the sink ("if one of ten packets is dropped on the way, throughput '
                    'is 9 packets / time")',
                    metrics={"throughput": "throughput_mbps"},
                ),
                Alternative(
                    "sent",
                    "§3.1.1 counts retransmissions in throughput; counting them where the "
                    "source sends them (ecnsim's study did until issue 31) includes packets "
                    "dropped later",
                    metrics={"throughput": "throughput_sent_mbps"},
                ),
            ),
        ),
        Reading(
            "lockout",
            "Lockout: no data over the whole window, or silent for a long period?",
            (window, silent) if lockout_default == "window" else (silent, window),
        ),
        Reading(
            "profile",
            "The TCP and RED details: the source simulator's (ns-2 of 2001) or the RFCs'?",
            (
                Alternative(
                    p.profile,
                    "the thesis ran ns-2 (STUDIES.md §3-4); ns2-2001 is ns-2's Reno and RED of "
                    "that time (docs/profiles.md)",
                    settings={"profile": p.profile},
                ),
                Alternative(
                    "rfc" if p.profile != "rfc" else "ns2-2001",
                    "no text of the source asks for it: a control, the standards' Reno and RED, "
                    "showing which findings rest on ns-2's implementation details",
                    settings={"profile": "rfc" if p.profile != "rfc" else "ns2-2001"},
                ),
            ),
        ),
    ]


def _hp(n: int, max_p: float, mode: str) -> dict[str, Any]:
    return {"n": n, "max_p": max_p, "mode": mode}


def hetero_findings(p: HeteroParams) -> list[Finding]:
    """The findings of the thesis' chapter 4 (STUDIES.md §3, h1-h7) as cells over the grid."""
    ns, mps = p.n_values, p.max_p_values
    big = [m for m in mps if m >= 0.5]
    return [
        Finding(
            "h1a",
            "ECN gets more throughput than RED below 120 flows",
            "ch. 4",
            lambda p: [
                Cell("throughput", _hp(n, m, "ECN"), _hp(n, m, "RED"))
                for n in ns
                if n < 120
                for m in mps
            ],
        ),
        Finding(
            "h1b",
            "Above 120 flows with max_p 0.5 and 0.8, ECN's throughput falls below RED's",
            "ch. 4",
            lambda p: [
                Cell("throughput", _hp(n, m, "ECN"), _hp(n, m, "RED"), higher=False)
                for n in ns
                if n > 120
                for m in big
            ],
        ),
        Finding(
            "h2",
            "At 30 flows the best max_p for ECN's throughput is the smallest, 0.1",
            "ch. 4",
            lambda p: [
                Cell("throughput", _hp(30, min(mps), "ECN"), _hp(30, m, "ECN"))
                for m in mps
                if m != min(mps)
            ],
        ),
        Finding(
            "h3a",
            "ECN with the larger max_p (0.5, 0.8) gets more goodput than RED except at 15 flows",
            "ch. 4",
            lambda p: [
                Cell("goodput_mbps", _hp(n, m, "ECN"), _hp(n, m, "RED"))
                for n in ns
                if n > 15
                for m in big
            ],
        ),
        Finding(
            "h3b",
            "With max_p 0.1 goodput drops clearly for both RED and ECN from 60 flows on "
            "(against 30 flows)",
            "ch. 4",
            lambda p: [
                Cell("goodput_mbps", _hp(n, 0.1, mode), _hp(30, 0.1, mode), higher=False)
                for n in ns
                if n >= 60
                for mode in ("RED", "ECN")
            ],
        ),
        Finding(
            "h4",
            "ECN has a slightly higher mean one-way delay and a clearly higher goodput than RED",
            "ch. 4",
            lambda p: [
                Cell(metric, _hp(n, m, "ECN"), _hp(n, m, "RED"))
                for metric in ("owd_ms", "goodput_mbps")
                for n in ns
                for m in mps
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more (a general statement)",
        ),
        Finding(
            "h5a",
            "ECN is fairer than RED (Jain's index) in almost all situations",
            "ch. 4, §4.4.4.1",
            lambda p: [Cell("jain", _hp(n, m, "ECN"), _hp(n, m, "RED")) for n in ns for m in mps],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more ('almost all')",
        ),
        Finding(
            "h5b",
            "The fairest max_p for ECN grows with N: the smallest max_p is fairer at the "
            "smallest N, the largest max_p at the largest N",
            "ch. 4, §4.4.4.1",
            lambda p: (
                [
                    Cell("jain", _hp(ns[0], min(mps), "ECN"), _hp(ns[0], max(mps), "ECN")),
                    Cell("jain", _hp(ns[-1], max(mps), "ECN"), _hp(ns[-1], min(mps), "ECN")),
                ]
                if len(mps) > 1 and len(ns) > 1
                else []
            ),
        ),
        Finding(
            "h6",
            "Locked-out flows appear for both RED and ECN above 120 flows",
            "ch. 4",
            lambda p: [
                Cell("lockout", _hp(n, m, mode), 0.0)
                for n in ns
                if n > 120
                for m in mps
                for mode in ("RED", "ECN")
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="Lockout as ch. 4 defines it (the lockout reading's default): no data "
            "through the router over the measured window.",
        ),
        Finding(
            "h7",
            "At 120 flows ECN gets more goodput than ECNM except at small max_p",
            "ch. 4",
            lambda p: [
                Cell("goodput_mbps", _hp(120, m, "ECN"), _hp(120, m, "ECNM"))
                for m in mps
                if m > min(mps)
            ],
        ),
    ]


class HeteroStudy(Study):
    name = "hetero"
    title = "RED vs ECN vs ECNM with heterogeneous round-trip times"
    source = (
        "Z. Zheng, WPI MS thesis, ch. 4 (ns-2); R. Kinicki and Z. Zheng, ICN 2001 "
        "(variant icn2001). STUDIES.md §3."
    )
    Params = HeteroParams
    # Measured 2026-12-02 (`ecnsim study run hetero --jobs 2` from an empty store):
    # PGO wheels of main bede5e1 (shared machine, top priority) and of main 2172e3c
    # (idle); each value covers the larger of the two, then scaled by the render's
    # estimated wall time after branch render2 over before (its CPU measured before and
    # after on copies of the idle store; docs/performance.md, "Study run times").
    render_cost_s: ClassVar[float] = 17.0
    run_cost_scale: ClassVar[float] = 1.5
    plan_cost_s_per_run: ClassVar[float] = 0.031
    variants: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "thesis": {},
        # ICN 2001 slides: 600 Mb/s aggregate, buffer 50, min_th 5, w_q 0.001, window 30.
        "icn2001": {
            "aggregate_access_mbps": 600.0,
            "buffer_packets": 50,
            "min_th": 5.0,
            "max_th": 30.0,
            "w_q": 0.001,
            "window_packets": 30,
        },
    }
    derive_version = 2

    # -- parameters -------------------------------------------------------------------

    def quick(self, params: HeteroParams) -> HeteroParams:
        return dataclasses.replace(
            params,
            n_values=(15, 60),
            max_p_values=(0.1,),
            duration_s=40.0,
            warmup_s=10.0,
            figure_n=(60,),
            seeds=1,
        )

    def setup(self, p: HeteroParams) -> list[tuple[str, str]]:
        delays = " / ".join(f"{d:g}" for d in p.access_delays_ms)
        rtts = " / ".join(f"{2 * (d + p.bottleneck_delay_ms):g}" for d in p.access_delays_ms)
        return [
            ("variant", p.variant),
            ("topology", "N sources, each on its own access link, -> router -> sink"),
            (
                "N (sources, split equally into fragile / average / robust)",
                ", ".join(map(str, p.n_values)),
            ),
            ("access one-way delays (ms)", delays),
            ("minimum RTTs (ms)", rtts),
            ("access link capacity", f"{p.aggregate_access_mbps:g} Mb/s / N each"),
            ("bottleneck", f"{p.bottleneck_mbps:g} Mb/s, {p.bottleneck_delay_ms:g} ms"),
            ("router buffer (packets)", str(p.buffer_packets)),
            ("RED min_th / max_th (packets)", f"{p.min_th:g} / {p.max_th:g}"),
            ("RED w_q", f"{p.w_q:g}"),
            ("RED max_p", ", ".join(f"{m:g}" for m in p.max_p_values)),
            ("RED gentle", "yes" if p.gentle else "no"),
            (
                "queue modes",
                ", ".join(p.modes) + " (RED: drop; ECN: mark in [min_th, max_th), drop above; "
                "ECNM: mark above max_th too, drop only on overflow)",
            ),
            ("TCP", f"{p.cc}, FTP (always has data), no delayed ACKs"),
            ("packets", f"data {p.packet_bytes} B, ACK 40 B"),
            ("largest window (packets)", str(p.window_packets)),
            ("starts", " / ".join(f"{s:g} s" for s in p.starts_s) + " (equal waves of each group)"),
            ("simulated", f"{p.duration_s:g} s, the first {p.warmup_s:g} s discarded"),
            ("defaults", f"ecnsim profile {p.profile}"),
            ("seeds per point", str(p.seeds)),
            (
                "lockout",
                f"a flow that delivers nothing for >= {p.lockout_s:g} s "
                f"(measured every {p.sample_interval_s:g} s)",
            ),
        ]

    def findings(self, p: HeteroParams) -> list[Finding]:
        return hetero_findings(p)

    def readings(self, p: HeteroParams) -> list[Reading]:
        return [
            *star_readings(p, lockout_default="window"),
            Reading(
                "gentle",
                "RED's gentle mode: off or on?",
                (
                    Alternative(
                        "off" if not p.gentle else "on",
                        "the thesis' ECN marks between the thresholds and drops above max_th "
                        "(ch. 4), which holds only without gentle RED",
                        settings={"gentle": p.gentle},
                    ),
                    Alternative(
                        "on" if not p.gentle else "off",
                        "ns-2 turned gentle_ on by default on 2001-04-23 and the thesis does "
                        "not name its release",
                        settings={"gentle": not p.gentle},
                    ),
                ),
            ),
        ]

    def choices(self, p: HeteroParams) -> list[Choice]:
        return [
            Choice(
                "RED's gentle mode",
                "off" if not p.gentle else "on",
                "The thesis describes ECN as marking between the thresholds and dropping above "
                "max_th, which holds only without gentle RED (with gentle_, ns-2 marks up to "
                "2 max_th); ns-2 turned gentle_ on by default on 2001-04-23, and the thesis does "
                "not say which release it ran.",
                "gentle",
            ),
            Choice(
                "ECN senders and receivers",
                "every endpoint ECN-capable in ECN and ECNM modes, none in RED mode",
                "The thesis compares the three queue modes with all flows of one kind.",
            ),
            Choice(
                "Access link buffers",
                f"DropTail, {p.access_buffer_packets} packets",
                "Not given; ns-2's default queue limit (limit_ 50). At N = 600 an access link "
                "runs at 0.5 Mb/s, so a full window can queue there.",
                "access_buffer_packets",
            ),
            Choice(
                "Start times",
                "half of each group (the larger half when odd) at 0 s, the rest at 2 s, "
                f"jitter {p.start_jitter_s:g} s",
                "The source gives the two start times only; ns-2 starts them exactly on time, "
                "so no jitter by default.",
                "starts_s, start_jitter_s",
            ),
            Choice(
                "Packet and ACK sizes",
                f"{p.packet_bytes} B data packets, all of it counted as payload, as ns-2 of 2001 "
                "did (useHeaders_ false); 40 B ACKs"
                if p.ns2_accounting
                else f"{p.packet_bytes} B data packets = {p.packet_bytes - 40} B payload + 40 B "
                "headers; 40 B ACKs",
                "ns-2's accounting makes goodputs comparable with the thesis' ns-2 runs; with "
                "ns2_accounting = false, goodput is payload only (x 1000/960 for ns-2's).",
                "packet_bytes, ns2_accounting",
            ),
            Choice(
                "Lockout",
                "both definitions of the thesis: nothing delivered over [warm-up, end] (ch. 4, "
                "the lockout table, lockout_window_flows) and silent for >= "
                f"{p.lockout_s:g} s (ch. 5's 'in some particular periods', lockout_flows, "
                f"measured from delivered bytes every {p.sample_interval_s:g} s)",
                "Ch. 4 counts flows 'unable to get any data through the congested router for "
                "the duration of the simulation'; ch. 5 also shows flows locked out in some "
                "periods. The lockout reading says which one each finding uses.",
                "lockout_s, sample_interval_s",
            ),
            Choice(
                "One-way delay per group",
                "mean over the group's flows of each flow's mean host-to-host delay of "
                "delivered data segments",
                "Each flow weighs the same, as in a per-flow average.",
            ),
            Choice(
                "Throughput",
                "payload bytes that reached the sink (first arrivals), retransmissions "
                "included, over [warm-up, end]; the payload sent is kept as throughput_sent",
                "Thesis §3.1.1: the rate at which a source's packets, retransmissions included, "
                "reach the sink. DEVIATION(ns-2): a duplicate arrival (a spurious "
                "retransmission) is not counted; the core counts first arrivals.",
            ),
            Choice(
                "Jain's index",
                f"the mean over {p.jain_interval_s:g}-s intervals of the index over per-flow "
                "delivered bytes (the jain table); one index over the window is jain_window",
                "Ch. 5 and Table 5.1 report a 'mean Jain's fairness index' and the thesis' "
                "post-processing works on one-second intervals (§3.2.2); the jain reading "
                "judges every finding both ways.",
                "jain_interval_s",
            ),
        ]

    # -- runs -------------------------------------------------------------------------

    def grid(self, p: HeteroParams) -> list[dict[str, Any]]:
        return [
            {"n": n, "max_p": mp, "mode": mode}
            for n in p.n_values
            for mp in p.max_p_values
            for mode in p.modes
        ]

    def scenario(self, p: HeteroParams, point: Mapping[str, Any]) -> Any:
        mode = str(point["mode"])
        ecn = MODES[mode]
        queue = red(
            limit_packets=p.buffer_packets,
            min_th=p.min_th,
            max_th=p.max_th,
            w_q=p.w_q,
            max_p=float(point["max_p"]),
            gentle=p.gentle,
            ecn=ecn,
        )
        return hetero_rtt(
            int(point["n"]),
            name=f"hetero-n{point['n']}-maxp{point['max_p']:g}-{mode}",
            duration=p.duration_s,
            warmup=p.warmup_s,
            sample_interval=p.sample_interval_s,
            profile=p.profile,
            groups=GROUPS,
            access_delays=[d / 1e3 for d in p.access_delays_ms],
            aggregate_access_rate=p.aggregate_access_mbps * 1e6,
            bottleneck_rate=p.bottleneck_mbps * 1e6,
            bottleneck_delay=p.bottleneck_delay_ms / 1e3,
            queue=queue,
            access_queue={"type": "droptail", "limit_packets": p.access_buffer_packets},
            starts=p.starts_s,
            start_jitter=p.start_jitter_s if p.start_jitter_s > 0 else None,
            tcp=tcp(
                cc=p.cc,
                **_packet_fields(p.packet_bytes, p.ns2_accounting),
                max_cwnd=p.window_packets,
                delayed_ack=False,
                ecn="off" if ecn == "none" else "request",
            ),
        )

    def job(self, p: HeteroParams, point: Mapping[str, Any]) -> JobSpec:
        series, raster = _figure_points(p)

        def at(points: list[tuple[int, float]]) -> bool:
            n, mp = int(point["n"]), float(point["max_p"])
            return any(n == fn and math.isclose(mp, fmp) for fn, fmp in points)

        figure, traced = at(series), at(raster)
        context = {
            "warmup_s": p.warmup_s,
            "end_s": p.duration_s,
            "lockout_s": p.lockout_s,
            "jain_interval_s": p.jain_interval_s,
            "bin_s": p.bin_s,
            "min_th": p.min_th,
            "max_th": p.max_th,
            "groups": list(GROUPS),
            "series": figure,
            "raster_seed": p.raster_seed if traced else None,
        }
        return JobSpec(context=context, trace_links=(0,) if traced else None)

    derive = staticmethod(derive_star)

    def estimate_seconds(self, p: HeteroParams, point: Mapping[str, Any]) -> float:
        return star_run_seconds(p.duration_s, int(point["n"]), self.job(p, point).trace_links)

    # -- rendering --------------------------------------------------------------------

    def tables(self, p: HeteroParams, data: StudyData) -> dict[str, StudyTable]:
        return star_tables(data, groups=GROUPS, columns=("max_p", "mode"))

    def figures(self, p: HeteroParams, data: StudyData) -> Figures:
        series, _raster = _figure_points(p)
        return star_figures(
            data,
            groups=GROUPS,
            curve="mode",
            panel="max_p",
            panel_label="max_p",
            figure_points=[{"n": n, "max_p": mp} for n, mp in series],
            warmup_s=p.warmup_s,
            end_s=p.duration_s,
            min_th=p.min_th,
            max_th=p.max_th,
        )
