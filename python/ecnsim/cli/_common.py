"""What every subcommand shares: exit codes, the progress bar, summary tables."""

from __future__ import annotations

import math
import time
import unicodedata
from collections.abc import Sequence
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

#: Columns the summary prefers, in order, when the table has them.
PREFERRED_COLUMNS: dict[str, list[str]] = {
    "flows": [
        "flow",
        "name",
        "src",
        "dst",
        "bytes_delivered",
        "goodput_bps",
        "throughput_bps",
        "packets_sent",
        "packets_retransmitted",
        "fast_retransmits",
        "rto_count",
        "completion_time_s",
    ],
    "queues": [
        "queue",
        "link",
        "from",
        "to",
        "arrivals",
        "departures",
        "drops",
        "marks",
        "avg_packets",
        "max_packets",
    ],
}

#: Tables the summary prints, in order.
SUMMARY_TABLES = ("flows", "queues")

MAX_SUMMARY_ROWS = 40


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
    import numpy as np

    names = [c for c in preferred if c in table] or table.column_names
    headers: list[str] = []
    columns: list[list[str]] = []
    numeric: list[bool] = []
    for name in names:
        values = table[name]
        if isinstance(values, np.ndarray):
            if name.endswith("_bps"):
                headers.append(name[: -len("_bps")] + "_Mbps")
                values = values / 1e6
            else:
                headers.append(name)
            columns.append([_format_value(v) for v in values.tolist()])
            numeric.append(True)
        else:
            headers.append(name)
            columns.append([str(v) for v in values])
            numeric.append(False)
    rows = list(zip(*columns, strict=True)) if columns else []
    if len(rows) > MAX_SUMMARY_ROWS:
        half = MAX_SUMMARY_ROWS // 2
        skipped = len(rows) - 2 * half
        rows = [*rows[:half], tuple("..." for _ in names), *rows[-half:]]
        footer = f"({skipped} rows not shown; --out writes them all)"
    else:
        footer = ""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    if footer:
        out.append(footer)
    return "\n".join(out)


def print_summary(results: Results, stream: TextIO) -> None:
    """Print the flow and queue tables (whatever columns they have), then the workload records."""
    for name in SUMMARY_TABLES:
        if name not in results.tables:
            continue
        table = results.tables[name]
        stream.write(f"\n{name} ({len(table)} rows)\n")
        stream.write(format_table(table, PREFERRED_COLUMNS.get(name, ())) + "\n")
    for line in workload_summary(results):
        stream.write(line + "\n")


def workload_summary(results: Results) -> list[str]:
    """Lines on the ``records`` table: records by kind and state, and whether the
    open backlog reached a steady state (:func:`ecnsim.analysis.steady_state`)."""
    if "records" not in results.tables or not len(results.tables["records"]):
        return []
    from ecnsim.analysis import steady_state

    rec = results.tables["records"].to_pandas()
    rec = rec[rec["kind"] != "udp"]
    if not len(rec):
        return []
    lines = ["", f"records ({len(rec)} rows)"]
    states = rec["state"] if "state" in rec.columns else None
    for kind, g in rec.groupby("kind", sort=True):
        counts = (
            ""
            if states is None
            else ", ".join(f"{n} {s}" for s, n in g["state"].value_counts().sort_index().items())
        )
        lines.append(f"  {kind}: {counts}")
    kind = "object" if (rec["kind"] == "object").any() else None
    verdict = steady_state(rec, kind=kind, warmup_s=float(results.meta.get("warmup_s", 0) or 0))
    lines.append(f"  {verdict['message']}")
    return lines
