"""A self-contained HTML report of one run (``ecnsim report RESULTS_DIR -o report.html``).

``RESULTS_DIR`` is what ``ecnsim run --out DIR`` (``Results.write_parquet``)
writes: ``<table>.parquet`` per table and ``meta.json`` (or a run inside a
results store). The report is one HTML file with no external resources
(inline CSS, figures as base64 PNG; each figure is also written as PNG, SVG
and PDF into ``<report>-figures/`` beside it, linked from its caption):
the scenario, the run's metadata, summary metrics (Jain's index, per-group
goodput, the bottleneck's utilization, drops and marks, lockout), the
standard figures of :mod:`ecnsim.output.plot`, the flows and queues tables and the
fully resolved scenario.
"""

from __future__ import annotations

import base64
import functools
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

__all__ = [
    "build_report",
    "build_sweep_report",
    "load_results",
    "write_report",
    "write_sweep_report",
]

#: Threshold for the report's lockout table, seconds.
DEFAULT_LOCKOUT_S = 1.0
#: The report bins goodput over time into at most this many bins.
MAX_BINS = 100
#: d in the report's P(queueing delay > d) (the ``ecnplus`` study's 5 ms).
DELAY_THRESHOLD_S = 0.005


# ---------------------------------------------------------------------------
# Reading a results directory
# ---------------------------------------------------------------------------


def _store_root(run_dir: Path) -> Path | None:
    """The store holding ``run_dir`` (``STORE/runs/<xx>/<key>``), if it is a stored run."""
    if not (run_dir / "manifest.json").is_file():
        return None
    store = run_dir.resolve().parent.parent.parent
    return store if (store / "runs").is_dir() else None


def load_results(directory: str | os.PathLike[str], *, run: str | None = None) -> Results:
    """Read a run's results: a directory written by ``Results.write_parquet``
    (``ecnsim run --out DIR``), a run directory inside a results store
    (``STORE/runs/<xx>/<key>``, as ``ecnsim runs`` lists them), or a store
    with ``run`` naming one of its runs by key (or a unique key prefix).

    Raises ``FileNotFoundError`` for anything else, saying what was expected.
    """
    import pyarrow.parquet as pq

    root = Path(directory)
    store_root = _store_root(root)
    if store_root is not None and run is None:
        from ecnsim.sweep.store import Store

        return Store(store_root).results(root.name)
    if run is not None:
        from ecnsim.sweep.store import Store

        store = Store(root if store_root is None else store_root)
        if not store.runs_root.is_dir():
            raise FileNotFoundError(f"{root} is not a results store (it has no runs/ directory)")
        keys = [k for k in store.run_keys() if k.startswith(run)]
        if len(keys) != 1:
            what = "no run" if not keys else f"{len(keys)} runs"
            raise FileNotFoundError(
                f"{what} in {root} with a key starting {run!r} "
                f"(`ecnsim runs --out {root}` lists them)"
            )
        return store.results(keys[0])
    meta_path = root / "meta.json"
    if not meta_path.is_file():
        hint = "ecnsim run --out DIR writes one"
        if (root / "runs").is_dir():
            hint = "it is a results store: give a run (--run KEY) or a sweep (--sweep NAME)"
        study = _study_name(root)
        if study is not None:
            hint = (
                f"it is the output of `ecnsim study run {study}`, whose report is "
                f"{root / 'report.html'}; to render it again run the same `ecnsim study run` "
                f"command with `--out {root}` (it runs only what its store lacks); one run of "
                f"it: `ecnsim report {root / 'store'} --run KEY`, KEY from `ecnsim runs --out "
                f"{root / 'store'}`"
            )
        raise FileNotFoundError(f"{root} has no meta.json: not a results directory ({hint})")
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


#: Formats each figure is also written in, beside the report (``figures/``).
FIGURE_FORMATS = ("png", "svg", "pdf")


def _is_empty(fig: Figure) -> bool:
    """True if no axes of ``fig`` draws any data (lines, bars, markers, images)."""
    for ax in fig.axes:
        if ax.images or ax.collections or ax.patches:
            return False
        if any(np.size(line.get_xdata()) for line in ax.lines):
            return False
    return True


@dataclass
class _Page:
    sections: list[str] = field(default_factory=list)
    figures: int = 0
    #: Directory to write every figure into as PNG, SVG and PDF (None: embedded PNG only).
    figure_dir: Path | None = None
    #: The report's directory, so figure links are relative to it.
    base_dir: Path | None = None
    written: list[Path] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.sections.append(text)

    def note(self, text: str) -> None:
        self.add(f'<p class="note">{text}</p>')

    def figure(self, make: Callable[[], Figure], caption: str, *, empty: str = "") -> None:
        """Render ``make()`` as an embedded PNG (and files beside the report).

        A figure with nothing drawn is not shown: a note says so (``empty``:
        what to do to get it). A missing column becomes a note too.
        """
        try:
            fig = make()
        except analysis.MissingColumnError as e:
            self.note(f"{_esc(caption)}: not available ({_esc(e)}).")
            return
        if _is_empty(fig):
            self.note(f"{_esc(caption)}: nothing to draw in this run. {empty}")
            return
        data = _png(fig)
        self.figures += 1
        links = ""
        if self.figure_dir is not None:
            self.figure_dir.mkdir(parents=True, exist_ok=True)
            stem = f"figure{self.figures:02d}"
            parts = []
            for fmt in FIGURE_FORMATS:
                path = self.figure_dir / f"{stem}.{fmt}"
                fig.savefig(path, format=fmt, dpi=100 if fmt == "png" else None)
                self.written.append(path)
                rel = os.path.relpath(path, self.base_dir) if self.base_dir else str(path)
                parts.append(f'<a href="{_esc(Path(rel).as_posix())}">{fmt.upper()}</a>')
            links = " (" + ", ".join(parts) + ")"
        self.add(
            f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>Figure {self.figures}. {_esc(caption)}{links}</figcaption></figure>"
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


_NO_SERIES = (
    "No time series in this run: set <code>simulation.sample_interval</code> (e.g. "
    "<code>ecnsim run SCENARIO --set simulation.sample_interval=0.1s --out DIR</code>) to get "
    "cwnd, queue, goodput-over-time and lockout figures."
)


def _rows_or_none(results: Results, name: str) -> pd.DataFrame | None:
    """Table ``name`` as a DataFrame, or None if the run has none or it has no rows."""
    if name not in results.tables or not len(results.tables[name]):
        return None
    return results.table(name).to_pandas()


def _ecn_in_use(spec: dict[str, Any] | None, flows: pd.DataFrame, queues: pd.DataFrame) -> bool:
    """Did ECN play a part: any CE mark, or any TCP end (``tcp.ecn``, a node's ``ecn``)
    asking for it? A marking AQM alone does not count: without ECN-capable ends it drops."""
    for df in (flows, queues):
        if "marks" in df and float(df["marks"].sum()) > 0:
            return True
    spec = spec or {}

    def asks(table: Any) -> bool:
        return isinstance(table, dict) and table.get("ecn") not in (None, False, "off")

    ends = [spec.get("tcp")] + [
        e.get("tcp")
        for key in ("flows", "apps")
        for e in spec.get(key) or []
        if isinstance(e, dict)
    ]
    return any(asks(t) for t in ends) or any(asks(n) for n in spec.get("nodes") or [])


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
    figure_dir: str | os.PathLike[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> str:
    """The HTML text of the report of ``results``.

    ``figure_dir``: also write every figure there as PNG, SVG and PDF,
    linked from its caption (relative to ``base_dir``, the report's directory).
    """
    from ecnsim.output import plot

    spec = results.spec
    meta = results.meta
    name = title or (spec or {}).get("name") or "ecnsim run"
    warmup = _meta_float(meta, "warmup_s", 0.0)
    end = _meta_float(meta, "end_time_s", _meta_float(meta, "duration_s", math.nan))
    flows = results.flows if "flows" in results.tables else pd.DataFrame()
    queues = results.queues if "queues" in results.tables else pd.DataFrame()
    # A series table with no rows (sample_flows = [], or a run shorter than one interval)
    # is as good as none: nothing is drawn from it.
    fseries = _rows_or_none(results, "flow_series")
    qseries = _rows_or_none(results, "queue_series")
    page = _Page(
        figure_dir=Path(figure_dir) if figure_dir is not None else None,
        base_dir=Path(base_dir) if base_dir is not None else None,
    )

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
    emulated = meta.get("mode") == "emulation"
    if emulated:
        page.add(
            '<p class="warn">Emulated, not simulated: real Linux TCP endpoints (kernel '
            f"{_esc(meta.get('kernel', '?'))}) in network namespaces, through ecnsim's links "
            "and queues in real time (<code>ecnsim emulate</code>, docs/emulation.md). Its "
            "numbers are measurements of one real run and depend on the machine's timing; "
            "the digest does not repeat.</p>"
        )
    page.add("<h2>Run</h2>")
    page.add(
        _kv(
            [
                ("mode", "emulation" if emulated else "simulation"),
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
        if len(rates) > 1:
            page.figure(
                lambda: plot.plot_flow_goodput(rates),
                "Goodput of every flow (sorted bars, or the per-group CDF with many flows).",
            )
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
        page.note(_NO_SERIES)
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
        ecn = _ecn_in_use(spec, flows, queues)
        page.figure(
            lambda: plot.plot_drops_marks(flows, fseries, marks=ecn),
            "Per-flow drops and CE marks." if ecn else "Per-flow drops (ECN is off: no marks).",
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

    return _html_page(name, "\n".join(page.sections))


def _html_page(name: str, body: str) -> str:
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
    run: str | None = None,
    figures: bool = True,
) -> Path:
    """Write the report of a run to ``out`` (default ``results_dir/report.html``).

    ``results_dir`` is anything :func:`load_results` reads (with ``run``: a
    store and a run key). ``figures``: also write every figure as PNG, SVG
    and PDF into ``<report name>-figures/`` beside the report.
    """
    results = load_results(results_dir, run=run)
    if out is not None:
        path = Path(out)
    elif run is not None:
        path = Path(results_dir) / f"report-{run}.html"
    else:
        path = Path(results_dir) / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    figure_dir = path.parent / f"{path.stem}-figures" if figures else None
    text = build_report(
        results,
        title=title,
        source=str(results_dir) + (f" (run {run})" if run else ""),
        lockout_s=lockout_s,
        figure_dir=figure_dir,
        base_dir=path.parent,
    )
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# The sweep report
# ---------------------------------------------------------------------------


def sweep_params(store: Any, name: str) -> list[str]:
    """The swept parameters of sweep ``name`` in ``store``, in axis order."""
    definition = store.sweep_definition(name)
    if definition is None:
        known = ", ".join(store.sweep_names()) or "none"
        raise FileNotFoundError(f"no sweep {name!r} in {store.root}; sweeps: {known}")
    if isinstance(definition.get("params"), list):
        return [str(p) for p in definition["params"]]
    spec = definition.get("spec") or definition
    params = list(spec.get("grid") or {})
    for group in spec.get("zip") or []:
        params += [p for p in group if p not in params]
    return params


def build_sweep_report(
    store: Any,
    name: str,
    *,
    metrics: Sequence[str] | None = None,
    confidence: float = 0.95,
    title: str | None = None,
    figure_dir: str | os.PathLike[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> str:
    """The HTML text of a sweep's report: each metric against each swept parameter.

    Per-run metrics (:func:`ecnsim.analysis.aggregate.run_metrics`, default
    :data:`~ecnsim.analysis.aggregate.DEFAULT_METRICS`) are aggregated over
    seeds and the other parameters' values by
    :func:`~ecnsim.analysis.aggregate.aggregate`: for each swept parameter,
    one figure per metric with the mean and its ``confidence`` interval
    (Student t over the runs at that value; with one other swept parameter,
    one line per value of it). Then the table of every point.
    """
    from ecnsim.analysis.aggregate import DEFAULT_METRICS, aggregate, run_metrics, summary_table
    from ecnsim.output import plot

    params = sweep_params(store, name)
    runs = store.runs(sweep=name)
    page = _Page(
        figure_dir=Path(figure_dir) if figure_dir is not None else None,
        base_dir=Path(base_dir) if base_dir is not None else None,
    )
    heading = title or f"sweep {name}"
    page.add(f"<h1>{_esc(heading)}</h1>")
    page.add(f'<p class="note">ecnsim sweep report of <code>{_esc(store.root)}</code></p>')
    if runs.empty:
        page.note("No finished runs of this sweep in the store yet.")
        return _html_page(heading, "\n".join(page.sections))
    names = list(metrics) if metrics is not None else list(DEFAULT_METRICS)
    per_run = run_metrics(store, runs, names)
    params = [p for p in params if p in per_run.columns]
    seeds = sorted(per_run["seed"].dropna().unique().tolist()) if "seed" in per_run else []
    page.add("<h2>Sweep</h2>")
    page.add(
        _kv(
            [
                ("sweep", name),
                ("finished runs", len(per_run)),
                ("points", per_run[params].drop_duplicates().shape[0] if params else 1),
                ("seeds", ", ".join(str(int(x)) for x in seeds)),
                ("swept parameters", ", ".join(params) or "(none)"),
                ("confidence", f"{confidence:.0%} (Student t over the runs at each value)"),
            ]
        )
    )
    page.add("<h2>Metrics against each parameter</h2>")
    for p in params:
        others = [q for q in params if q != p]
        hue = others[0] if len(others) == 1 else None
        by = [p] if hue is None else [p, hue]
        agg = aggregate(per_run, by, names, confidence=confidence)
        agg["ci"] = agg["ci_high"] - agg["mean"]
        numeric = pd.api.types.is_numeric_dtype(agg[p])
        if not numeric:
            agg[p] = agg[p].astype(str)
        page.add(f"<h3>{_esc(p)}</h3>")
        if len(others) > 1:
            page.note(
                f"Each point averages over every value of {_esc(', '.join(others))} and every seed."
            )
        for metric in names:
            part = agg[agg["metric"] == metric].copy()
            scale, unit = (1e-6, " (Mb/s)") if metric.endswith("_bps") else (1.0, "")
            part["mean"] = part["mean"] * scale
            part["ci"] = part["ci"] * scale
            page.figure(
                functools.partial(
                    plot.plot_sweep,
                    part,
                    p,
                    hue=hue,
                    ylabel=f"{metric}{unit}",
                    title=f"{metric} against {p}",
                ),
                f"{metric}{unit} against {p}: mean and {confidence:.0%} confidence interval.",
                empty=f"No run has a value of {metric}.",
            )
    page.add("<h2>Every point</h2>")
    table = summary_table(aggregate(per_run, params, names, confidence=confidence), params)
    page.add(_table_html(table, scroll=True))
    page.note(f"mean ± half-width of the {confidence:.0%} confidence interval; bit/s in Mb/s.")
    return _html_page(heading, "\n".join(page.sections))


def write_sweep_report(
    store_dir: str | os.PathLike[str],
    name: str,
    out: str | os.PathLike[str] | None = None,
    *,
    metrics: Sequence[str] | None = None,
    title: str | None = None,
    figures: bool = True,
) -> Path:
    """Write the report of sweep ``name`` in the store at ``store_dir`` (default
    ``STORE/sweep-<name>.html``, figures in ``sweep-<name>-figures/``)."""
    from ecnsim.sweep.store import Store

    root = Path(store_dir)
    if not (root / "runs").is_dir() and not (root / "sweeps").is_dir():
        raise FileNotFoundError(f"{root} is not a results store (no runs/ or sweeps/ directory)")
    store = Store(root)
    path = Path(out) if out is not None else root / f"sweep-{name}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    figure_dir = path.parent / f"{path.stem}-figures" if figures else None
    text = build_sweep_report(
        store, name, metrics=metrics, title=title, figure_dir=figure_dir, base_dir=path.parent
    )
    path.write_text(text, encoding="utf-8")
    return path


def _study_name(root: Path) -> str | None:
    """The study whose ``ecnsim study run --out`` folder ``root`` is (its ``study.json``)."""
    try:
        info = json.loads((root / "study.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = info.get("study") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None
