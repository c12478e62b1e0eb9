"""What every subcommand shares: exit codes, the progress bar, summary tables."""

from __future__ import annotations

import math
import time
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ecnsim.results import Results, Table

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A bad argument or path: printed as ``error: <message>``, exit code 2."""


def printable(text: str) -> str:
    """``text`` with control and invisible characters escaped (newlines kept), for a terminal."""
    out = []
    for c in text:
        if c == "\n" or (c.isprintable() and unicodedata.category(c) not in ("Cf", "Zl", "Zp")):
            out.append(c)
        else:
            out.append(c.encode("unicode_escape").decode("ascii"))
    return "".join(out)


# ---------------------------------------------------------------------------
# Progress bar
# ---------------------------------------------------------------------------


class ProgressBar:
    """A one-line progress bar on a terminal, shown once a run takes over ``delay`` s.

    On a stream that is not a terminal it prints a plain line every
    ``log_every`` seconds instead (nothing for short runs).
    """

    WIDTH = 30

    def __init__(self, stream: TextIO, *, delay: float = 1.0, log_every: float = 30.0) -> None:
        self.stream = stream
        self.is_tty = stream.isatty()
        self.delay = delay
        self.log_every = log_every
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.shown = False

    def __call__(self, now_ns: int, end_ns: int) -> None:
        t = time.monotonic()
        elapsed = t - self.started
        if elapsed < self.delay:
            return
        fraction = now_ns / end_ns if end_ns else 1.0
        if self.is_tty:
            if t - self.last_draw < 0.1 and fraction < 1.0:
                return
            filled = int(self.WIDTH * fraction)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            eta = elapsed * (1 - fraction) / fraction if fraction > 0 else math.inf
            eta_text = f"{eta:5.0f}s" if math.isfinite(eta) else "    ?"
            self.stream.write(
                f"\r[{bar}] {100 * fraction:5.1f}%  sim {now_ns / 1e9:8.2f}/{end_ns / 1e9:g} s"
                f"  wall {elapsed:6.1f} s  eta {eta_text}"
            )
            self.stream.flush()
            self.shown = True
        elif t - self.last_draw >= self.log_every:
            self.stream.write(
                f"progress: {100 * fraction:5.1f}%  sim {now_ns / 1e9:.2f}/{end_ns / 1e9:g} s"
                f"  wall {elapsed:.1f} s\n"
            )
            self.stream.flush()
        else:
            return
        self.last_draw = t

    def close(self) -> None:
        """Erase the bar, if one was drawn."""
        if self.shown:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
            self.shown = False


# ---------------------------------------------------------------------------
# Summary tables
# ---------------------------------------------------------------------------

#: Columns the summary prefers, in order, when the table has them. Of the flows':
#: ``rx_goodput_bps`` only when a warning names it, ``marks``/``ce_received`` only
#: with ECN on a flow or a mark, the transfer columns only when a transfer completed
#: (:func:`_flow_summary_columns`). Of the queues' (:func:`_queue_summary_columns`):
#: ``link`` is the link's name and ``direction`` its ``from->to``.
PREFERRED_COLUMNS: dict[str, list[str]] = {
    "flows": [
        "flow",
        "src",
        "dst",
        "bytes_delivered",
        "goodput_bps",
        "rx_goodput_bps",
        "packets_sent",
        "packets_retransmitted",
        "fast_retransmits",
        "rto_count",
        "drops",
        "marks",
        "ce_received",
        "completion_time_s",
        "transfer_goodput_bps",
    ],
    "queues": [
        "link",
        "direction",
        "arrivals",
        "departures",
        "drops",
        "marks",
        "avg_packets",
        "max_packets",
        "utilization",
    ],
}

#: Tables the summary prints, in order.
SUMMARY_TABLES = ("flows", "queues")

MAX_SUMMARY_ROWS = 40

#: Most link directions the summary lists; beyond it, those that dropped or marked and
#: then the busiest (by bytes arrived), and a line on the others.
MAX_QUEUE_ROWS = 12


def _format_value(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.4g}"
    return str(value)


def format_table(table: Table, preferred: Sequence[str] = ()) -> str:
    """``table`` as aligned plain text; only the ``preferred`` columns if it has any of them.

    Columns in bit/s (``*_bps``) are shown in Mbit/s.
    """
    names = [c for c in preferred if c in table] or table.column_names
    return format_columns({n: (table.to_pylist(n), table.is_numeric(n)) for n in names})


def format_columns(columns: Mapping[str, tuple[list[Any], bool]]) -> str:
    """Columns ``{name: (values, is_numeric)}`` as aligned plain text (see :func:`format_table`)."""
    names = list(columns)
    headers: list[str] = []
    cells: list[list[str]] = []
    numeric: list[bool] = []
    for name, (values, is_number) in columns.items():
        if is_number:
            if name.endswith("_bps"):
                headers.append(name[: -len("_bps")] + "_Mbps")
                values = [v / 1e6 for v in values]
            else:
                headers.append(name)
            cells.append([_format_value(v) for v in values])
            numeric.append(True)
        else:
            headers.append(name)
            cells.append([str(v) for v in values])
            numeric.append(False)
    rows = list(zip(*cells, strict=True)) if cells else []
    if len(rows) > MAX_SUMMARY_ROWS:
        half = MAX_SUMMARY_ROWS // 2
        skipped = len(rows) - 2 * half
        rows = [*rows[:half], tuple("..." for _ in names), *rows[-half:]]
        footer = f"({skipped} rows not shown; --out writes them all)"
    else:
        footer = ""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(row, widths, numeric, strict=True)
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    if footer:
        out.append(footer)
    return "\n".join(out)


def _frame_table(name: str, df: Any) -> Table:
    """A DataFrame as a :class:`Table` for :func:`format_table` (text columns as lists)."""
    from ecnsim.results import Table

    columns: dict[str, Any] = {}
    for c in df.columns:
        values = df[c].to_numpy()
        columns[str(c)] = [str(v) for v in values] if values.dtype == object else values
    return Table(name, columns)


def _workload_apps(results: Results) -> set[str]:
    """The names of the scenario's ``[[apps]]`` (whose connections are workload connections)."""
    spec = results.spec or {}
    return {
        str(a.get("name") or f"app{i}")
        for i, a in enumerate(spec.get("apps", []) or [])
        if isinstance(a, dict)
    }


def bulk_flows(results: Results) -> Any:
    """The ``flows`` rows of the scenario's ``[[flows]]`` (not workload connections), with
    goodput over each finite transfer's life (``transfer_goodput_bps``,
    :func:`ecnsim.analysis.transfer_goodput`); None without a flows table."""
    if "flows" not in results.tables:
        return None
    from ecnsim.analysis import transfer_goodput

    flows = results.tables["flows"].to_pandas()
    apps = _workload_apps(results)
    if apps and "app" in flows.columns:
        flows = flows[~flows["app"].astype(str).isin(apps)].reset_index(drop=True)
    if {"start_s", "completion_time_s", "bytes_delivered"} <= set(flows.columns):
        warmup = float(results.meta.get("warmup_s", 0) or 0)
        flows["transfer_s"], flows["transfer_goodput_bps"] = transfer_goodput(
            flows, warmup_s=warmup
        )
    return flows


def _bulk_flow_columns(
    results: Results, preferred: Sequence[str]
) -> dict[str, tuple[list[Any], bool]] | None:
    """:func:`bulk_flows`' ``preferred`` columns as ``{name: (values, is_numeric)}`` for
    :func:`format_columns`, in plain Python (`ecnsim run` imports neither numpy nor pandas)."""
    if "flows" not in results.tables:
        return None
    table = results.tables["flows"]
    apps = _workload_apps(results)
    keep = [True] * len(table)
    if apps and "app" in table:
        keep = [str(a) not in apps for a in table.to_pylist("app")]
    # Only the columns shown (all of them if none is preferred) are decoded.
    names = [c for c in table.column_names if c in preferred or c in _TRANSFER_INPUTS]
    if not any(c in preferred for c in names):
        names = table.column_names
    cols: dict[str, tuple[list[Any], bool]] = {}
    for name in names:
        values = table.to_pylist(name)
        cols[name] = ([v for v, k in zip(values, keep, strict=True) if k], table.is_numeric(name))
    if set(_TRANSFER_INPUTS) <= set(cols):
        # As ecnsim.analysis.transfer_goodput.
        warmup = float(results.meta.get("warmup_s", 0) or 0)
        goodput = []
        for start, done, delivered in zip(*(cols[c][0] for c in _TRANSFER_INPUTS), strict=True):
            life = float(start) + float(done) - max(float(start), warmup)
            goodput.append(float(delivered) * 8.0 / life if life > 0 else math.nan)
        cols["transfer_goodput_bps"] = (goodput, True)
    ordered = [c for c in preferred if c in cols] or list(cols)
    return {c: cols[c] for c in ordered}


#: The ``flows`` columns a transfer's own goodput is computed from.
_TRANSFER_INPUTS = ("start_s", "completion_time_s", "bytes_delivered")


def print_summary(results: Results, stream: TextIO) -> None:
    """Print what the run did: the ``[[flows]]`` (bulk and finite transfers) with their
    goodput over the run and over each transfer's life, drops and ECN marks; the link
    directions by link name, those that dropped or marked and the busiest first when
    there are many; and per-app summaries of the workloads (``[[apps]]``) from the
    ``records`` table."""
    flows = _flow_summary_columns(results)
    rows = len(next(iter(flows.values()))[0]) if flows else 0
    if flows is not None and rows:
        stream.write(f"\nflows ({rows} rows)\n")
        stream.write(format_columns(flows) + "\n")
        if "transfer_goodput_bps" in flows:
            stream.write(
                "goodput: over [max(warm-up, start), end of run]; transfer_goodput: over a "
                "finite transfer's own life, to its completion\n"
            )
        by_cc = cc_summary_columns(flows)
        if by_cc is not None:
            stream.write("\nby congestion control (tcp.cc)\n")
            stream.write(format_columns(by_cc) + "\n")
    for warning in results.warnings:
        stream.write(f"warning: {printable(warning)}\n")
    queues = _queue_summary_columns(results)
    if queues is not None:
        title, columns, footer = queues
        stream.write(f"\n{title}\n")
        stream.write(format_columns(columns) + "\n")
        if footer:
            stream.write(footer + "\n")
    for line in workload_summary(results):
        stream.write(line + "\n")


def _flow_summary_columns(results: Results) -> dict[str, tuple[list[Any], bool]] | None:
    """The flows table of the summary: :data:`PREFERRED_COLUMNS` less the columns that
    would say nothing in this run (ECN counts where no flow uses ECN and nothing was
    marked, transfer columns where no finite transfer completed, ``rx_goodput`` unless a
    warning asks to compare it)."""
    preferred = list(PREFERRED_COLUMNS["flows"])
    preferred.insert(preferred.index("dst") + 1, "cc")
    flows = _bulk_flow_columns(results, [*preferred, "ecn_negotiated"])
    if flows is None:
        return None

    def values(name: str) -> list[Any]:
        return flows[name][0] if name in flows else []

    hidden = {"ecn_negotiated"}
    if len(set(values("cc"))) < 2:
        # One algorithm for every flow: the column says nothing (mixes get it, and a table by cc).
        hidden.add("cc")
    if not any(values("ecn_negotiated")) and not any(values("marks")):
        hidden |= {"marks", "ce_received"}
    if not any(v == v for v in values("transfer_goodput_bps")):  # all NaN: none completed
        hidden |= {"completion_time_s", "transfer_goodput_bps"}
    if not any("rx_goodput_bps" in w for w in results.warnings):
        hidden.add("rx_goodput_bps")
    return {name: column for name, column in flows.items() if name not in hidden}


def cc_summary_columns(
    flows: Mapping[str, tuple[list[Any], bool]],
) -> dict[str, tuple[list[Any], bool]] | None:
    """The flows of a mix, grouped by ``tcp.cc`` (in order of first appearance): how many, their
    total goodput and its share of all flows', the mean per flow, and the summed loss and ECN
    counts; None unless the flows use more than one algorithm."""
    if "cc" not in flows or "goodput_bps" not in flows:
        return None
    ccs = [str(c) for c in flows["cc"][0]]
    groups = list(dict.fromkeys(ccs))
    if len(groups) < 2:
        return None
    goodput = [float(g) for g in flows["goodput_bps"][0]]
    total = sum(goodput) or 1.0
    out: dict[str, tuple[list[Any], bool]] = {"cc": (groups, False)}
    count = [ccs.count(g) for g in groups]
    sums = [sum(v for c, v in zip(ccs, goodput, strict=True) if c == g) for g in groups]
    out["flows"] = (count, True)
    out["goodput_bps"] = (sums, True)
    out["share"] = ([v / total for v in sums], True)
    out["per_flow_goodput_bps"] = ([v / n for v, n in zip(sums, count, strict=True)], True)
    for name in ("packets_retransmitted", "rto_count", "drops", "marks"):
        if name in flows:
            vals = flows[name][0]
            out[name] = (
                [sum(int(v) for c, v in zip(ccs, vals, strict=True) if c == g) for g in groups],
                True,
            )
    return out


#: What :func:`cc_seed_metrics` keeps of each algorithm's row of :func:`cc_summary_columns`, for
#: the table across seeds (``run --seeds``; with ``flows``, the algorithm's number of flows);
#: counts summed over the algorithm's flows.
CC_SEED_METRICS = (
    "goodput_bps",
    "share",
    "per_flow_goodput_bps",
    "packets_retransmitted",
    "rto_count",
    "drops",
    "marks",
)


def cc_seed_metrics(results: Results) -> dict[str, dict[str, float]] | None:
    """One run's flows grouped by ``tcp.cc`` as :func:`cc_summary_columns` groups them for the
    summary, ``{cc: {"flows": n, metric: value, ...}}`` with the metrics of
    :data:`CC_SEED_METRICS` (NaN for a count the flows table lacks); None unless the flows use
    more than one algorithm."""
    flows = _flow_summary_columns(results)
    by_cc = None if flows is None else cc_summary_columns(flows)
    if by_cc is None:
        return None
    out: dict[str, dict[str, float]] = {}
    for i, cc in enumerate(by_cc["cc"][0]):
        out[str(cc)] = {
            "flows": float(by_cc["flows"][0][i]),
            **{m: float(by_cc[m][0][i]) if m in by_cc else math.nan for m in CC_SEED_METRICS},
        }
    return out


def cc_seed_table(runs: Sequence[tuple[str, dict[str, dict[str, float]] | None]]) -> Any:
    """The table by ``tcp.cc`` across seeds: ``runs`` as ``(seed, cc_seed_metrics(results))``
    pairs; one row per algorithm (in the order the flows first name them) with its number of
    flows and each of :data:`CC_SEED_METRICS` as mean ± 95 % CI half-width
    (:func:`ecnsim.analysis.aggregate.summary_table`), counts no run has (marks without ECN)
    left out. None when no run is a mix."""
    import pandas as pd

    from ecnsim.analysis.aggregate import aggregate, summary_table

    by_cc = pd.DataFrame(
        [
            {"key": seed, "cc": cc, **values}
            for seed, groups in runs
            for cc, values in (groups or {}).items()
        ]
    )
    if by_cc.empty:
        return None
    # The number of flows is the scenario's, not a statistic: a column of the key.
    by_cc["flows"] = by_cc["flows"].astype(int)
    metrics = [m for m in CC_SEED_METRICS if by_cc[m].notna().any()]
    table = summary_table(aggregate(by_cc, ["cc", "flows"], metrics), ["cc", "flows"])
    return table.set_index("cc").loc[list(dict.fromkeys(by_cc["cc"]))].reset_index()


def _link_names(results: Results, links: int) -> list[str]:
    """Each link's name, as the scenario names it (``link<i>`` for an unnamed one)."""
    spec = results.spec or {}
    given = [(x.get("name") if isinstance(x, dict) else None) for x in spec.get("links") or []]
    return [str(given[i]) if i < len(given) and given[i] else f"link{i}" for i in range(links)]


def _queue_summary_columns(
    results: Results,
) -> tuple[str, dict[str, tuple[list[Any], bool]], str] | None:
    """The queues table of the summary as ``(title, columns, footer)``: one row per link
    direction, named by its link's name and ``from->to``, in the table's order; beyond
    :data:`MAX_QUEUE_ROWS` directions, those that dropped or marked first, then the
    busiest by bytes arrived, and a footer on the directions left out. None without a
    queues table."""
    if "queues" not in results.tables:
        return None
    table = results.tables["queues"]
    n = len(table)

    def column(name: str, default: Any = 0) -> list[Any]:
        return table.to_pylist(name) if name in table else [default] * n

    links = column("link", None)
    names = _link_names(results, 1 + max((i for i in links if i is not None), default=-1))
    drops, marks, arrived = column("drops"), column("marks"), column("arrival_bytes")
    columns: dict[str, tuple[list[Any], bool]] = {
        "link": ([names[i] if i is not None else "-" for i in links], False),
        "direction": (
            column("queue", "-")
            if "queue" in table
            else [f"{a}->{b}" for a, b in zip(column("from"), column("to"), strict=True)],
            False,
        ),
    }
    for name in PREFERRED_COLUMNS["queues"][2:]:
        if name in table:
            columns[name] = (table.to_pylist(name), table.is_numeric(name))
    rows = list(range(n))
    title = f"queues ({n} link directions)"
    footer = ""
    if n > MAX_QUEUE_ROWS:
        ranked = sorted(rows, key=lambda r: (drops[r] + marks[r] == 0, -arrived[r], r))
        rows, left = ranked[:MAX_QUEUE_ROWS], ranked[MAX_QUEUE_ROWS:]
        title = (
            f"queues ({MAX_QUEUE_ROWS} of {n} link directions: those that dropped or marked "
            "first, then the busiest)"
        )
        footer = (
            f"({len(left)} link directions not shown, with {sum(drops[r] for r in left)} drops "
            f"and {sum(marks[r] for r in left)} marks in all; --out writes them all)"
        )
    shown = {name: ([vals[r] for r in rows], numeric) for name, (vals, numeric) in columns.items()}
    return title, shown, footer


def _capacity_bps(results: Results) -> float | None:
    """The slowest link direction's rate (a dumbbell's bottleneck), for normalized throughput."""
    if "queues" not in results.tables or "rate_bps" not in results.tables["queues"]:
        return None
    import numpy as np

    rates = np.asarray(results.tables["queues"]["rate_bps"], dtype=float)
    return float(rates.min()) if rates.size else None


#: Columns of the per-app workload summary, renamed for the terminal.
_WORKLOAD_COLUMNS = {
    "app": "app",
    "kind": "kind",
    "count": "completed",
    "in_progress": "in_progress",
    "failed": "failed",
    "per_second": "per_s",
    "p50_response_time_s": "median_s",
    "p90_response_time_s": "p90_s",
    "p99_response_time_s": "p99_s",
    "response_bytes": "bytes",
    "goodput_bps": "goodput_bps",
    "normalized_throughput": "normalized",
}


def workload_summaries(results: Results) -> tuple[Any, Any]:
    """Per-app summaries of the ``records`` table: ``(transactions, udp)`` DataFrames or None.

    ``transactions``: one row per app and record kind (transaction, page,
    object) over the records that started after the warm-up: completed,
    in progress and failed records, completions per second, the median,
    p90 and p99 response time with unfinished records counted as censored
    (:func:`ecnsim.analysis.record_metrics`, Kaplan-Meier), the response
    bytes of completed records, their goodput, and that goodput over the
    slowest link's rate (``normalized``). ``udp``: one row per UDP app, over
    each of its flows' whole life whenever it started (a UDP record's counters
    run from the flow's start, warm-up included): packets sent and received,
    loss, payload bytes received, goodput (the sum of the flows' rates over
    their lives), normalized throughput and the mean one-way delay.
    """
    if "records" not in results.tables or not len(results.tables["records"]):
        return None, None
    import pandas as pd

    from ecnsim.analysis import record_metrics

    rec = results.tables["records"].to_pandas()
    warmup = float(results.meta.get("warmup_s", 0) or 0)
    end = float(results.meta.get("end_time_s", results.meta.get("duration_s", 0)) or 0)
    capacity = _capacity_bps(results)
    # A UDP record is its flow's whole life (the core counts from the flow's start), so it is
    # kept whenever it started; the other records count only when they started after the warm-up.
    udp_rec = rec[rec["kind"] == "udp"]
    rec = rec[(rec["kind"] != "udp") & (rec["start_s"] >= warmup)]
    tx_rows = []
    for kind, g in rec.groupby("kind", sort=True):
        m = record_metrics(g, by="app", interval_s=(warmup, end), capacity_bps=capacity)
        m.insert(1, "kind", kind)
        done = g["state"] == "completed" if "state" in g else slice(None)
        m["response_bytes"] = m["app"].map(g[done].groupby("app")["response_bytes"].sum())
        m["response_bytes"] = m["response_bytes"].fillna(0).astype("int64")
        tx_rows.append(m)
    tx = None
    if tx_rows:
        tx = pd.concat(tx_rows, ignore_index=True).sort_values(["app", "kind"], kind="stable")
        tx = tx[[c for c in _WORKLOAD_COLUMNS if c in tx.columns]].rename(columns=_WORKLOAD_COLUMNS)
    udp = None
    if len(udp_rec):
        # Each flow's goodput over its own life [start, end of run] (its counters' window),
        # summed per app: the warm-up cannot be taken out of counters that include it.
        life = udp_rec["end_s"] - udp_rec["start_s"]
        udp_rec = udp_rec.assign(
            rate_bps=(udp_rec["response_bytes"] * 8.0 / life.where(life > 0)).fillna(0.0)
        )
        g = udp_rec.groupby("app", sort=True)
        sent = g["packets_sent"].sum()
        received = g["packets_received"].sum()
        got = g["response_bytes"].sum()
        udp = pd.DataFrame(
            {
                "app": sent.index.astype(str),
                "flows": g.size().to_numpy(),
                "packets_sent": sent.to_numpy(),
                "packets_received": received.to_numpy(),
                "loss": 1 - received.to_numpy() / sent.to_numpy().clip(min=1),
                "bytes": got.to_numpy(),
                "goodput_bps": g["rate_bps"].sum().to_numpy(),
                "mean_owd_s": g["response_time_s"].mean().to_numpy(),
            }
        )
        if capacity:
            udp.insert(7, "normalized", udp["goodput_bps"] / capacity)
    return tx, udp


def workload_summary(results: Results) -> list[str]:
    """Lines on the ``records`` table: per-app summaries (:func:`workload_summaries`), records
    by kind and state, and whether the open backlog reached a steady state
    (:func:`ecnsim.analysis.steady_state`)."""
    if "records" not in results.tables or not len(results.tables["records"]):
        return []
    from ecnsim.analysis import steady_state

    lines: list[str] = []
    tx, udp = workload_summaries(results)
    warmup = float(results.meta.get("warmup_s", 0) or 0)
    since = f" started after the warm-up ({warmup:g} s)" if warmup > 0 else ""
    if tx is not None and len(tx):
        lines += ["", f"workloads (records{since}, per app)"]
        lines += format_table(_frame_table("workloads", tx)).split("\n")
        lines.append(
            "median/p90/p99: response (or page, transaction) time, records still in progress "
            "or failed counted as censored (Kaplan-Meier; '-': too many unfinished to reach "
            "that level); normalized: goodput / slowest link"
        )
    if udp is not None and len(udp):
        lines += ["", "udp (per app)"]
        lines += format_table(_frame_table("udp", udp)).split("\n")
        lines.append(
            "udp: each flow over its whole life, from its start to the end of the run (its "
            "counters include any warm-up); goodput: the sum of its flows' rates"
        )
    rec = results.tables["records"].to_pandas()
    rec = rec[rec["kind"] != "udp"]
    if not len(rec):
        return lines
    lines += ["", f"records ({len(rec)} rows)"]
    states = rec["state"] if "state" in rec.columns else None
    for kind, g in rec.groupby("kind", sort=True):
        counts = (
            ""
            if states is None
            else ", ".join(f"{n} {s}" for s, n in g["state"].value_counts().sort_index().items())
        )
        lines.append(f"  {kind}: {counts}")
    kind = "object" if (rec["kind"] == "object").any() else None
    verdict = steady_state(rec, kind=kind, warmup_s=warmup)
    lines.append(f"  {verdict['message']}")
    return lines
