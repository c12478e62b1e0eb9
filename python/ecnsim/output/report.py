"""A self-contained HTML report of one run (``ecnsim report RESULTS_DIR -o report.html``).

``RESULTS_DIR`` is what ``ecnsim run --out DIR`` (``Results.write_parquet``)
writes: ``<table>.parquet`` per table and ``meta.json``. The report is one
HTML file with no external resources (inline CSS, figures as base64 PNG):
the scenario, the run's metadata, summary metrics (Jain's index, per-group
goodput, the bottleneck's utilization, drops and marks, lockout), the
standard figures of :mod:`ecnsim.output.plot`, the flows and queues tables and the
fully resolved scenario.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ecnsim import analysis
from ecnsim.results import Column, Results, Table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["build_report", "load_results", "write_report"]

#: Threshold for the report's lockout table, seconds.
DEFAULT_LOCKOUT_S = 1.0
#: The report bins goodput over time into at most this many bins.
MAX_BINS = 100
#: d in the report's P(queueing delay > d) (the ``ecnplus`` study's 5 ms).
DELAY_THRESHOLD_S = 0.005


# ---------------------------------------------------------------------------
# Reading a results directory
# ---------------------------------------------------------------------------


def load_results(directory: str | os.PathLike[str]) -> Results:
    """Read a directory written by ``Results.write_parquet`` back into :class:`Results`.

    Raises ``FileNotFoundError`` if it has no ``meta.json``.
    """
    import pyarrow.parquet as pq

    root = Path(directory)
    meta_path = root / "meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(
            f"{root} has no meta.json: not a results directory (ecnsim run --out DIR writes one)"
        )
    raw: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
    names = raw.get("tables") or sorted(p.stem for p in root.glob("*.parquet"))
    tables: dict[str, Table] = {}
    for name in names:
        path = root / f"{name}.parquet"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is listed in meta.json but missing")
        arrow = pq.read_table(path)
        columns: dict[str, Column] = {}
        for col_name, col in zip(arrow.column_names, arrow.columns, strict=True):
            if col.type == "string" or str(col.type) in ("string", "large_string"):
                columns[col_name] = [str(v) for v in col.to_pylist()]
            else:
                columns[col_name] = col.to_numpy()
        tables[name] = Table(name, columns)
    meta: dict[str, str] = {}
    for key, value in raw.items():
        if key in ("tables", "digest"):
            continue
        if key == "resolved_spec":
            if value is not None:
                meta[key] = json.dumps(value)
        elif isinstance(value, bool):
            meta[key] = "true" if value else "false"
        else:
            meta[key] = str(value)
    return Results(tables, meta, int(raw.get("digest", 0)))


# ---------------------------------------------------------------------------
# HTML helpers
# ---------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; }
td.l, th.l { text-align: left; }
.scroll { overflow: auto; max-height: 32em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; padding: 0.8em; overflow: auto; font-size: 0.8em; max-height: 40em; }
.note { color: #555; font-size: 0.9em; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: 0.5em 1em; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; }
dl.kv dt { font-weight: 600; } dl.kv dd { margin: 0; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:.4f}".rstrip("0").rstrip(".")
    return str(value)


def _table_html(df: pd.DataFrame, *, scroll: bool = False) -> str:
    head = "".join(
        f'<th class="{"l" if not _is_numeric(df[c]) else ""}">{_esc(c)}</th>' for c in df.columns
    )
    numeric = [_is_numeric(df[c]) for c in df.columns]
    rows = []
    for values in df.itertuples(index=False, name=None):
        cells = "".join(
            f"<td>{_esc(_fmt(v))}</td>" if num else f'<td class="l">{_esc(_fmt(v))}</td>'
            for v, num in zip(values, numeric, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    body = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{body}</div>' if scroll else body


def _is_numeric(s: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(s.dtype)) and not pd.api.types.is_bool_dtype(s.dtype)


def _kv(items: Sequence[tuple[str, Any]]) -> str:
    inner = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(_fmt(v))}</dd>" for k, v in items)
    return f'<dl class="kv">{inner}</dl>'


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


@dataclass
class _Page:
    sections: list[str] = field(default_factory=list)
    figures: int = 0

    def add(self, text: str) -> None:
        self.sections.append(text)

    def figure(self, make: Callable[[], Figure], caption: str) -> None:
        """Render ``make()`` as an embedded PNG; a failure becomes a note, not a broken page."""
        try:
            fig = make()
            data = _png(fig)
        except analysis.MissingColumnError as e:
            self.add(f'<p class="note">{_esc(caption)}: not available ({_esc(e)}).</p>')
            return
        self.figures += 1
        self.add(
            f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>Figure {self.figures}. {_esc(caption)}</figcaption></figure>"
        )


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def _meta_float(meta: dict[str, str], key: str, default: float) -> float:
    try:
        return float(meta[key])
    except (KeyError, ValueError):
        return default


def _common_mss(spec: dict[str, Any] | None) -> float | None:
    if not spec:
        return None
    values = {
        f.get("tcp", {}).get("mss")
        for f in spec.get("flows", [])
        if isinstance(f, dict) and isinstance(f.get("tcp"), dict)
    }
    values.discard(None)
    if len(values) == 1:
        value = values.pop()
        return float(value) if isinstance(value, (int, float)) else None
    return None


def _bottleneck(queues: pd.DataFrame) -> int | None:
    if queues.empty:
        return None
    score = queues.assign(
        _signals=queues.get("drops", 0) + queues.get("marks", 0),
        _util=queues.get("utilization", 0.0),
    ).sort_values(["_util", "_signals"], ascending=False)
    return int(score["queue_id"].iloc[0])


def _bin_s(series: pd.DataFrame) -> float | None:
    times = np.unique(series["time_s"].to_numpy(dtype=float))
    if times.size < 2:
        return None
    dt = float(np.median(np.diff(times)))
    step = max(1, math.ceil((times.size - 1) / MAX_BINS))
    return dt * step


def _workload_records(results: Results) -> pd.DataFrame | None:
    """The transactions, pages and objects of ``records`` (UDP rows left out), if any."""
    if "records" not in results.tables:
        return None
    rec = results.table("records").to_pandas()
    if "kind" not in rec or "response_time_s" not in rec:
        return None
    rec = rec[rec["kind"] != "udp"]
    return rec if len(rec) else None


def build_report(
    results: Results,
    *,
    title: str | None = None,
    source: str | None = None,
    lockout_s: float = DEFAULT_LOCKOUT_S,
) -> str:
    """The HTML text of the report of ``results``."""
    from ecnsim.output import plot

    spec = results.spec
    meta = results.meta
    name = title or (spec or {}).get("name") or "ecnsim run"
    warmup = _meta_float(meta, "warmup_s", 0.0)
    end = _meta_float(meta, "end_time_s", _meta_float(meta, "duration_s", math.nan))
    flows = results.flows if "flows" in results.tables else pd.DataFrame()
    queues = results.queues if "queues" in results.tables else pd.DataFrame()
    fseries = results.table("flow_series").to_pandas() if "flow_series" in results.tables else None
    qseries = (
        results.table("queue_series").to_pandas() if "queue_series" in results.tables else None
    )
    page = _Page()

    # -- header and run --------------------------------------------------------
    page.add(f"<h1>{_esc(name)}</h1>")
    sub = f"ecnsim {meta.get('ecnsim_version', '?')} report"
    if source:
        sub += f" of <code>{_esc(source)}</code>"
    page.add(f'<p class="note">{sub}</p>')
    if not results.finished:
        page.add(
            '<p class="warn">This run was interrupted before its end '
            "(<code>finished = false</code>): the numbers cover the run so far.</p>"
        )
    page.add("<h2>Run</h2>")
    page.add(
        _kv(
            [
                ("scenario", name),
                ("seed", meta.get("seed", "?")),
                ("profile", meta.get("profile", "?")),
                ("duration (s)", meta.get("duration_s", "?")),
                ("warm-up (s)", warmup),
                ("end time (s)", end),
                ("finished", results.finished),
                ("digest", f"{results.digest:016x}"),
                ("flows", len(flows)),
                ("link directions", len(queues)),
                ("tables", ", ".join(results.tables)),
            ]
        )
    )

    # -- summary metrics -------------------------------------------------------
    page.add("<h2>Summary</h2>")
    groups: pd.DataFrame | None = None
    if not flows.empty and {"start_s", "bytes_delivered", "bytes_sent"} <= set(flows.columns):
        rates = analysis.flow_rates(flows, end_s=end, warmup_s=warmup)
        goodputs = rates["goodput_bps"].to_numpy(dtype=float)
        groups = analysis.group_rates(rates)
        items: list[tuple[str, Any]] = [
            ("aggregate goodput (Mb/s)", np.nansum(goodputs) / 1e6),
            (
                "aggregate throughput (Mb/s)",
                np.nansum(rates["throughput_bps"].to_numpy(dtype=float)) / 1e6,
            ),
            ("Jain's index, per-flow goodput", analysis.jain_index(goodputs)),
        ]
        if len(groups) > 1:
            gap = analysis.group_gap(
                dict(zip(groups["group"], groups["goodput_bps_mean"], strict=True))
            )
            items += [
                ("max-min gap between groups' mean goodput (Mb/s)", gap["gap"] / 1e6),
                ("min/max ratio of groups' mean goodput", gap["min_max_ratio"]),
            ]
        page.add(_kv(items))
        page.add(
            '<p class="note">Goodput: payload bytes delivered in order x 8 / '
            "(end - max(warm-up, start)); throughput counts retransmissions. Groups are "
            "flow names without their trailing index.</p>"
        )
        if len(groups):
            shown = groups[
                [
                    "group",
                    "flows",
                    "goodput_bps",
                    "goodput_bps_mean",
                    "goodput_bps_min",
                    "goodput_bps_max",
                    "jain_goodput_bps",
                    "throughput_bps",
                ]
            ].copy()
            for c in ("goodput_bps", "goodput_bps_mean", "goodput_bps_min", "goodput_bps_max"):
                shown[c] = shown[c] / 1e6
            shown["throughput_bps"] = shown["throughput_bps"] / 1e6
            shown.columns = [
                "group",
                "flows",
                "goodput (Mb/s)",
                "mean per flow",
                "min",
                "max",
                "Jain's index",
                "throughput (Mb/s)",
            ]
            page.add("<h3>Per group</h3>" + _table_html(shown))
    bottleneck = _bottleneck(queues)
    if bottleneck is not None:
        q = queues.loc[queues["queue_id"] == bottleneck].iloc[0]
        items = [
            ("bottleneck (busiest link direction)", q.get("queue", bottleneck)),
            ("utilization", q.get("utilization", math.nan)),
            ("drops", q.get("drops", math.nan)),
            ("CE marks", q.get("marks", math.nan)),
            ("average queue (packets)", q.get("avg_packets", math.nan)),
        ]
        if qseries is not None and "bytes" in qseries:
            p = analysis.queueing_delay_exceeds(
                qseries, queues, bottleneck, DELAY_THRESHOLD_S, warmup_s=warmup
            )
            items.append((f"P(queueing delay > {DELAY_THRESHOLD_S * 1e3:g} ms)", p))
        page.add("<h3>Bottleneck</h3>" + _kv(items))
        rr = analysis.queue_drop_mark_rates(queues.loc[queues["queue_id"] == bottleneck])
        rr = rr.loc[rr["count"] > 0]
        if len(rr):
            page.add(
                "<p>Drops and marks by reason (rate per arriving packet):</p>"
                + _table_html(rr[["queue", "kind", "reason", "count", "rate"]])
            )

    # -- figures -----------------------------------------------------------------
    page.add("<h2>Figures</h2>")
    bottleneck_name = ""
    if bottleneck is not None and "queue" in queues:
        bottleneck_name = str(queues.loc[queues["queue_id"] == bottleneck, "queue"].iloc[0])
    if fseries is not None and qseries is not None and bottleneck is not None:
        mss = _common_mss(spec)
        page.figure(
            lambda: plot.plot_cwnd_queue(
                fseries,
                qseries,
                queue_id=bottleneck,
                flows=flows,
                mss=mss,
                title=f"cwnd and queue {bottleneck_name} over time",
            ),
            "Congestion windows and the bottleneck queue over time.",
        )
    else:
        page.add(
            '<p class="note">No time series: set <code>simulation.sample_interval</code> '
            "to get cwnd and queue plots.</p>"
        )
    if fseries is not None and not flows.empty:
        if "bytes_delivered" in fseries:
            bin_s = _bin_s(fseries)
            page.figure(
                lambda: plot.plot_group_goodput(
                    analysis.group_goodput_series(fseries, flows, bin_s=bin_s, warmup_s=warmup)
                ),
                "Mean goodput per flow of each group over time.",
            )
        else:
            page.add(
                '<p class="note">Goodput over time and lockout need cumulative '
                "<code>bytes_delivered</code> in <code>flow_series</code>, which this run's "
                "core does not export.</p>"
            )
    if not flows.empty and {"drops", "marks"} <= set(flows.columns):
        page.figure(
            lambda: plot.plot_drops_marks(flows, fseries),
            "Per-flow drops and CE marks.",
        )
    if fseries is not None and "bytes_delivered" in fseries and not flows.empty:
        intervals = analysis.lockout_intervals(fseries, lockout_s, warmup_s=warmup)
        page.figure(
            lambda: plot.plot_lockout(intervals, flows, start_s=warmup, end_s=end),
            f"Lockout: intervals of at least {lockout_s:g} s in which a flow delivered nothing.",
        )
    if qseries is not None and bottleneck is not None and "bytes" in qseries:
        page.figure(
            lambda: plot.plot_queue_delay_ccdf(
                qseries,
                queues,
                bottleneck,
                warmup_s=warmup,
                title=f"queueing delay at {bottleneck_name}",
            ),
            "P(queueing delay > d) at the bottleneck (backlog / link rate, per sample).",
        )
    records = _workload_records(results)
    if records is not None:
        from ecnsim.cli._common import workload_summary

        summary = workload_summary(results)
        page.add(
            "<h2>Workload</h2><pre>"
            + _esc("\n".join(line.strip() for line in summary if line))
            + "</pre>"
        )
        page.figure(
            lambda: plot.plot_response_time_cdf(records),
            "Response-time CDF and CCDF; records still in progress at the end are censored, "
            "failed ones never complete (Kaplan-Meier).",
        )

    # -- tables ------------------------------------------------------------------
    if not flows.empty:
        page.add(f"<h2>Flows ({len(flows)})</h2>" + _table_html(flows, scroll=True))
    if not queues.empty:
        page.add(f"<h2>Queues ({len(queues)})</h2>" + _table_html(queues, scroll=True))

    # -- resolved scenario -------------------------------------------------------
    page.add("<h2>Resolved scenario</h2>")
    page.add(
        '<p class="note">Every parameter the run used, defaults filled in '
        "(<code>meta.json</code>'s <code>resolved_spec</code>).</p>"
    )
    page.add(f"<pre>{_esc(json.dumps(spec, indent=2, sort_keys=False))}</pre>")

    body = "\n".join(page.sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{_esc(name)} - ecnsim report</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def write_report(
    results_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    lockout_s: float = DEFAULT_LOCKOUT_S,
) -> Path:
    """Write the report of ``results_dir`` to ``out`` (default ``results_dir/report.html``)."""
    results = load_results(results_dir)
    path = Path(out) if out is not None else Path(results_dir) / "report.html"
    text = build_report(results, title=title, source=str(results_dir), lockout_s=lockout_s)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
