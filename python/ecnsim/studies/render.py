"""Writing a study's output: tables as CSV, figures as PNG (and SVG on request), one self-contained
HTML report.

Layout of the output directory (``ecnsim study run NAME --out DIR``)::

    DIR/report.html            the report: setup, choices, warnings, tables, figures
    DIR/study.json             parameters, choices, versions, run counts, wall and CPU times
    DIR/tables/<name>.csv      each table as the source lays it out (mean, then its CI half-width)
    DIR/tables/runs.csv        every run's metrics (one row per point and seed)
    DIR/figures/<name>.png     each figure (with ``svg``: an .svg beside it)
    DIR/scenarios/<n>.json     each point's resolved scenario (linked from the report's appendix)
    DIR/store/                 the results store (what lets a re-run only render)

The report embeds its figures and links the side files, so it stays small (a few MB for the
largest study) however many flows a scenario has: the resolved scenarios, which grow with the
flows, are files of their own. Without matplotlib the tables and the report are still written,
and the report says how to get the figures.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import json
import math
import pickle
import textwrap
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ecnsim.studies._base import StudyData, StudyRun, StudyTable, format_seconds, params_dict, slug

__all__ = [
    "MATPLOTLIB_HINT",
    "embedded_png",
    "file_stems",
    "fit_titles",
    "render_study",
    "table_csv",
    "table_html",
    "thin_log_ticks",
]

#: What the report says when matplotlib is missing (figures need it; tables and report do not).
MATPLOTLIB_HINT = (
    "Figures need matplotlib, which is not installed: pip install 'ecnsim[plot]' (from a "
    "checkout of ecnsim: pip install '.[plot]'), then run the same command again; the runs are "
    "in the store, so it only renders."
)
#: The report lists every run's metrics inline up to this many runs (all of them are in
#: tables/runs.csv).
MAX_INLINE_RUNS = 300

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222;
       padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ddd;
       padding-bottom: 0.2em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.scroll { overflow: auto; max-height: 40em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; padding: 0.8em; overflow: auto; font-size: 0.8em; max-height: 40em; }
.note { color: #555; font-size: 0.9em; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: 0.5em 1em; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; }
dl.kv dt { font-weight: 600; } dl.kv dd { margin: 0; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def _label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:g}"
    return str(value)


def table_html(t: StudyTable) -> str:
    """A :class:`StudyTable` as HTML: ``mean ± half-width`` cells, a header row per level."""
    mean, ci = t.mean, t.ci
    col_levels = mean.columns.nlevels
    row_names = [n if n is not None else "" for n in mean.index.names]
    head_rows = []
    for level in range(col_levels):
        name = mean.columns.names[level]
        cells: list[str] = []
        if level == col_levels - 1:
            cells.extend(f'<th class="l">{_esc(n)}</th>' for n in row_names)
        else:
            cells.append(f'<th class="l" colspan="{len(row_names)}">{_esc(name or "")}</th>')
        values = [c[level] if col_levels > 1 else c for c in mean.columns]
        # Merge equal neighbours of the upper levels into one spanning header.
        i = 0
        while i < len(values):
            j = i + 1
            if level < col_levels - 1:
                prefix = [c[: level + 1] for c in mean.columns]
                while j < len(values) and prefix[j] == prefix[i]:
                    j += 1
            label = _label(values[i])
            if level == col_levels - 1 and name and col_levels == 1:
                label = f"{name} = {label}"
            span = f' colspan="{j - i}"' if j - i > 1 else ""
            cells.append(f"<th{span}>{_esc(label)}</th>")
            i = j
        head_rows.append(f"<tr>{''.join(cells)}</tr>")
    body = []
    for r, idx in enumerate(mean.index):
        keys = idx if isinstance(idx, tuple) else (idx,)
        cells = [f'<td class="l">{_esc(_label(k))}</td>' for k in keys]
        for c in range(mean.shape[1]):
            m = mean.iat[r, c]
            h = ci.iat[r, c] if ci is not None else math.nan
            text = _num(m, t.digits)
            if h is not None and not (isinstance(h, float) and math.isnan(h)) and text != "-":
                text += f" ± {_num(h, 2)}"
            cells.append(f"<td>{_esc(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<div class="scroll"><table><thead>{"".join(head_rows)}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def table_csv(t: StudyTable) -> str:
    """A :class:`StudyTable` as CSV: the row labels, then per column its mean and ``... ci95``.

    Column names join the levels of the source's column headers with ``/``
    (``max_p=0.1/RED``).
    """
    import pandas as pd

    mean = t.mean
    names = mean.columns.names

    def col_name(c: Any) -> str:
        parts = c if isinstance(c, tuple) else (c,)
        return "/".join(
            f"{n}={_label(v)}" if n else _label(v) for n, v in zip(names, parts, strict=True)
        )

    out = pd.DataFrame(index=mean.index)
    for i, c in enumerate(mean.columns):
        name = col_name(c)
        out[name] = mean.iloc[:, i].to_numpy()
        if t.ci is not None:
            out[f"{name} ci95"] = t.ci.iloc[:, i].to_numpy()
    text: str = out.reset_index().to_csv(index=False, float_format="%.6g")
    return text


def _figure_png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


#: ``(png, the report's png, svg or None)``: one figure's files as drawn.
Drawing = tuple[bytes, bytes, bytes | None]


@dataclasses.dataclass(frozen=True)
class Deferred:
    """A figure built where it is drawn: ``build(*args)``, a module-level function and
    arguments that pickle (the study's parameters, the aggregated frames). A study's
    ``figures`` may return one in place of a figure, so that the report's process only
    prepares the data and the ``--jobs`` drawing processes build the figure as well as draw
    it (building matplotlib's artists was most of a cheap study's render in that process).
    Built in this process where there are no drawing processes: the same figure either way.
    """

    build: Callable[..., Any]
    args: tuple[Any, ...]

    def figure(self) -> Any:
        return self.build(*self.args)


def _draw(fig: Any, svg: bool) -> tuple[Drawing, float]:
    """One figure's PNG (full and as the report embeds it) and, with ``svg``, its SVG, its
    titles fitted first (:func:`fit_titles`, :func:`thin_log_ticks`); and the CPU seconds the
    drawing (and, for a :class:`Deferred`, the building) took."""
    cpu = time.process_time()
    if isinstance(fig, Deferred):
        fig = fig.figure()
    fit_titles(fig)
    thin_log_ticks(fig)
    png = _figure_png(fig)
    svg_bytes = None
    if svg:
        # The PNG's draw laid the figure out: keep that layout for the SVG rather than
        # solving it again (the same positions, a third of the SVG's drawing time).
        fig.set_layout_engine("none")
        buf = io.BytesIO()
        fig.savefig(buf, format="svg")
        svg_bytes = buf.getvalue()
    return (png, embedded_png(png), svg_bytes), time.process_time() - cpu


def _draw_pickled(blob: bytes, svg: bool) -> tuple[Drawing, float]:
    """:func:`_draw` in a worker process, of a pickled figure."""
    return _draw(pickle.loads(blob), svg)  # our own figure, from this study


def _drawing_worker() -> None:
    """A drawing process's start: import matplotlib's drawing now (it takes longer than most
    figures), while the report's process is still reading the store."""
    try:
        import matplotlib.figure  # noqa: F401
        from matplotlib.backends import backend_agg  # noqa: F401
    except ImportError:  # no figures without it; the report says so
        pass


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``fn(*args)`` and the CPU seconds it took (in a worker process)."""
    cpu = time.process_time()
    value = fn(*args)
    return value, time.process_time() - cpu


def _ready() -> None:
    """A task that does nothing: submitted once per worker, it starts the worker processes."""


T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class _Done:
    """The outcome of a call made in this process (a finished future's ``result``)."""

    value: Any

    def result(self) -> Any:
        return self.value


class _Drawer:
    """Draws a report's figures (:func:`_draw`) in ``workers`` processes (the study's
    ``--jobs``) while the report's process goes on with its other parts; with one worker, or
    where there are no worker processes, in this process when the drawings are collected.

    The processes are started when the drawer is made (at the start of a render), so that
    they have imported matplotlib by the time the first figure is built. The drawings are
    the same bytes wherever they are made: the same matplotlib draws the same figure. A
    figure that cannot be pickled is drawn here.
    """

    def __init__(self, workers: int) -> None:
        self.pool: Any = None
        self.futures: dict[str, Any] = {}
        self.figures: dict[str, Any] = {}
        self.svg = False
        #: CPU seconds of the calls (:meth:`call`) made in worker processes.
        self.other_cpu = 0.0
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor

            from ecnsim.sweep.execute import _mp_context

            try:
                self.pool = ProcessPoolExecutor(
                    workers, mp_context=_mp_context(), initializer=_drawing_worker
                )
                for _ in range(workers):
                    self.pool.submit(_ready)
            except OSError:  # no worker processes here
                self.close()

    def submit(self, figures: dict[str, Any], svg: bool) -> None:
        """Start drawing ``figures`` (in the order given; collected by :meth:`drawings`)."""
        self.figures, self.svg = dict(figures), svg
        if self.pool is None or len(figures) < 2:
            return
        from concurrent.futures.process import BrokenProcessPool

        blobs: list[tuple[str, bytes]] = []
        for name, fig in figures.items():
            try:
                blobs.append((name, pickle.dumps(fig)))
            except Exception:  # e.g. a formatter that is a local function
                continue
        # The figures with the most data first (a stable sort: ties in the figures' order): they
        # take longest to build and draw, and one left to the end would keep one process busy
        # while the other waits (rfc2415's page-delay CDFs, 9.5 MB of pages, took 0.7 s after
        # three 0.3-s figures on one process). The drawings are collected in the figures' order.
        blobs.sort(key=lambda item: -len(item[1]))
        for name, blob in blobs:
            try:
                self.futures[name] = self.pool.submit(_draw_pickled, blob, svg)
            except (OSError, RuntimeError, BrokenProcessPool):
                break

    def call(self, fn: Callable[..., T], *args: Any) -> Any:
        """``fn(*args)`` in a worker process (``fn`` a module-level function), or here and now
        without one; its outcome by :meth:`result`."""
        if self.pool is not None:
            try:
                return self.pool.submit(_timed, fn, *args)
            except RuntimeError:  # the pool broke
                pass
        return _Done((fn(*args), 0.0))

    def result(self, pending: Any) -> Any:
        """The outcome of :meth:`call`'s ``pending`` (its CPU time in a worker is counted
        with the drawings')."""
        value, cpu = pending.result()
        self.other_cpu += cpu
        return value

    def drawings(self) -> tuple[dict[str, Drawing], float]:
        """Every figure drawn, in the figures' order, and the CPU seconds of the work done in
        other processes (the drawings and the calls collected); the processes are then
        stopped."""
        from concurrent.futures.process import BrokenProcessPool

        out: dict[str, Drawing] = {}
        other_cpu = self.other_cpu
        # The figures the workers do not have are drawn here meanwhile.
        for name, fig in self.figures.items():
            if name not in self.futures:
                out[name] = _draw(fig, self.svg)[0]
        for name, future in self.futures.items():
            try:
                out[name], cpu = future.result()
            except (OSError, BrokenProcessPool):
                continue  # a worker died: drawn here below
            other_cpu += cpu
        self.close()
        for name, fig in self.figures.items():
            if name not in out:
                out[name] = _draw(fig, self.svg)[0]
        return {name: out[name] for name in self.figures}, other_cpu

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def _draw_figures(
    figures: dict[str, Any], svg: bool, workers: int
) -> tuple[dict[str, Drawing], float]:
    """Every figure drawn (:func:`_draw`) by a :class:`_Drawer` of ``workers`` processes, in
    the figures' order, and the CPU seconds of the drawing done in other processes."""
    drawer = _Drawer(workers if len(figures) > 1 else 1)
    drawer.submit(figures, svg)
    return drawer.drawings()


def embedded_png(png: bytes) -> bytes:
    """``png`` as the report embeds it: 256 colours, no dithering (about a third of the
    bytes of matplotlib's RGBA file for line plots, which use a handful of colours and their
    anti-aliasing); the figure files keep the full PNG. Unchanged without Pillow."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with matplotlib
        return png
    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    small.save(buf, format="PNG")
    out = buf.getvalue()
    return out if len(out) < len(png) else png


def file_stems(names: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A file-name stem per name: its :func:`slug`, made unique (``-2``, ``-3``, ... in the
    order given) where two names share one, ignoring case (``RED`` and ``RED*`` both slug
    to ``RED``; a case-insensitive file system would merge ``a`` and ``A``)."""
    used = {r.lower() for r in reserved}
    out: dict[str, str] = {}
    for name in names:
        base = slug(name)
        stem, i = base, 2
        while stem.lower() in used:
            stem, i = f"{base}-{i}", i + 1
        used.add(stem.lower())
        out[name] = stem
    return out


def fit_titles(fig: Any) -> None:
    """Wrap the figure's suptitle and its axes' titles onto more lines where a line is wider
    than the figure (the suptitle) or the axes' columns (a title): nothing is clipped.

    Constrained layout then makes room for the extra lines when the figure is saved.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    fig_w = fig.get_figwidth() * fig.dpi
    texts: list[tuple[Any, float]] = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        texts.append((suptitle, 0.96 * fig_w))
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        spec = ax.get_subplotspec()
        share = 1.0
        if spec is not None:
            ncols = spec.get_gridspec().ncols
            share = (spec.colspan.stop - spec.colspan.start) / max(1, ncols)
        for t in (ax.title, ax._left_title, ax._right_title):
            if t.get_text():
                texts.append((t, 0.96 * fig_w * share))
    for text, avail in texts:
        width = text.get_window_extent(renderer).width
        if width <= avail:
            continue
        raw = " ".join(text.get_text().split())
        chars = max(12, int(len(raw) * avail / width))
        text.set_text(textwrap.fill(raw, width=chars, break_on_hyphens=False))


def thin_log_ticks(fig: Any, decades: float = 3.0) -> None:
    """Minor ticks at 2 and 5 of each decade, unlabelled, on every log axis spanning at least
    ``decades`` decades (matplotlib's default puts 8 per decade, each a tick object that
    constrained layout measures on every draw: most of a CDF figure's drawing time).

    Readability is unchanged: the major ticks (the decades) keep their labels, and an axis
    of fewer decades keeps matplotlib's labelled minor ticks.
    """
    from matplotlib.ticker import LogLocator, NullFormatter

    for ax in fig.axes:
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() != "log":
                continue
            lo, hi = sorted(float(v) for v in lim)
            if lo <= 0 or math.log10(hi / lo) < decades:
                continue
            axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
            axis.set_minor_formatter(NullFormatter())


def _study_figures(study: Any, params: Any, data: StudyData) -> tuple[dict[str, Any], bool]:
    """``(figures, drawn)``: the study's figures; none and False without matplotlib."""
    try:
        return study.figures(params, data), True
    except ImportError as e:
        if "matplotlib" not in f"{e} {e.name or ''}":
            raise
        return {}, False


def _kv(items: list[tuple[str, Any]]) -> str:
    inner = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in items)
    return f'<dl class="kv">{inner}</dl>'


def _simple_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    head = "".join(f'<th class="l">{_esc(c)}</th>' for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="l">{_esc("" if r.get(c) is None else r.get(c))}</td>' for c in columns
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_study(run: StudyRun, *, svg: bool = False) -> Path:
    """Write the study's tables, figures, ``study.json`` and ``report.html`` into ``run.out``.

    ``svg``: write each figure as SVG too, beside its PNG. Off by default: the SVG is a
    second drawing of the figure (matplotlib renders each format anew), about a third of a
    figure's cost and most of a cheap study's render; a re-run with every run in the store
    only renders, so the SVGs can be had later (``ecnsim study run NAME --out DIR --svg``).
    Without it, an SVG an earlier render left under a figure's name is removed (it would
    show older data than its PNG).
    """
    started = time.perf_counter()
    cpu_started = time.process_time()
    study, params, out = run.study, run.params, run.out
    pilot = (
        None
        if run.calibration is None
        else StudyData(study, run.calibration.plan, run.calibration.sweep.store)
    )
    # With --robustness, the alternatives' runs that are also the defaults' (a reading whose
    # alternative leaves a point's scenario as it was) are read once for all of them.
    reads: dict[tuple[str, str, str], Any] | None = None if run.robustness is None else {}
    data = StudyData(
        study, run.plan, run.sweep.store, pilot=pilot, reads=reads, arrived=run.arrived
    )
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    # The figures are built first and drawn in the --jobs processes (started now, so they
    # import matplotlib while this one reads the store) while this process computes the
    # tables, the findings and the rest of the report.
    drawer = _Drawer(run.sweep.workers)
    try:
        sources = data.scenario_sources()
        scenarios = drawer.call(_write_scenarios, out, [path for _point, path in sources])
        figures, drawn = _study_figures(study, params, data)
        if run.emulated is None:
            drawer.submit({name: fig for name, (fig, _caption) in figures.items()}, svg)
        tables = study.tables(params, data)
        warnings = study.warnings(params, data)
        emulation: dict[str, Any] | None = None
        if run.emulated is not None:
            emulation = _emulated_part(run, data, tables, figures, warnings, drawn)
            drawer.submit({name: fig for name, (fig, _caption) in figures.items()}, svg)
        return _render_rest(
            run,
            data,
            tables,
            figures,
            drawn,
            warnings,
            emulation,
            drawer,
            svg,
            (sources, scenarios),
            (started, cpu_started),
        )
    finally:
        drawer.close()


def _render_rest(
    run: StudyRun,
    data: StudyData,
    tables: dict[str, StudyTable],
    figures: dict[str, tuple[Any, str]],
    drawn: bool,
    warnings: list[str],
    emulation: dict[str, Any] | None,
    drawer: _Drawer,
    svg: bool,
    scenario_part: tuple[list[tuple[dict[str, Any], Path]], Any],
    clocks: tuple[float, float],
) -> Path:
    """:func:`render_study` once the figures are being drawn: the files and the report."""
    sources, scenarios = scenario_part
    started, cpu_started = clocks
    from ecnsim import __version__

    study, params, out = run.study, run.params, run.out

    run.tables = {}
    compare = {} if emulation is None else emulation["compare"]
    all_tables = {**compare, **tables}
    table_stems = file_stems(all_tables, reserved=("runs", "runs_emulated"))
    for name, t in all_tables.items():
        path = out / "tables" / f"{table_stems[name]}.csv"
        path.write_text(table_csv(t), encoding="utf-8")
        run.tables[name] = path
    runs_df = data.frame("metrics")
    runs_path = out / "tables" / "runs.csv"
    runs_df.to_csv(runs_path, index=False, float_format="%.6g")
    run.tables["runs"] = runs_path
    if emulation is not None:
        emu_path = out / "tables" / "runs_emulated.csv"
        emulation["data"].frame("metrics").to_csv(emu_path, index=False, float_format="%.6g")
        run.tables["runs_emulated"] = emu_path

    scenario_files = [
        (point, out / "scenarios" / f"point-{n:04d}.json")
        for n, i in enumerate(drawer.result(scenarios), start=1)
        for point in [sources[i][0]]
    ]
    from ecnsim.studies.findings import report_findings

    findings_part, findings_info = report_findings(run, data)

    sweep = run.sweep
    stored = data.runs()
    sim_wall, sim_cpu, no_cpu = 0.0, 0.0, 0
    for _point, _seed, key, _tag in stored:
        m = sweep.store.manifest(key)
        if m is None:
            continue
        if isinstance(m.get("wall_s"), (int, float)):
            sim_wall += float(m["wall_s"])
        cpu = m.get("cpu_s")
        if isinstance(cpu, (int, float)) and math.isfinite(cpu):
            sim_cpu += float(cpu)
        else:
            no_cpu += 1
    # The pilot's and the robustness alternatives' own runs (keys not already counted).
    counted = {key for _p, _s, key, _t in stored}
    pilot_keys = set() if run.calibration is None else {r.key for r in run.calibration.plan.runs}
    robust_keys = {
        r.key
        for rr in run.robustness or []
        for plan in (rr.plan, None if rr.calibration is None else rr.calibration.plan)
        if plan is not None
        for r in plan.runs
    }
    pilot_cpu = _cpu_of(sweep.store, pilot_keys - counted)
    robust_cpu = _cpu_of(sweep.store, robust_keys - counted - pilot_keys)
    planned = len({(r.key, r.job.tag if r.job else None) for r in run.plan.runs})

    run.figures = {}
    pngs: dict[str, bytes] = {}
    figure_stems = file_stems(figures)
    drawings, draw_cpu_s = drawer.drawings()
    for name, (png, embedded, svg_bytes) in drawings.items():
        pngs[name] = embedded
        p_png = out / "figures" / f"{figure_stems[name]}.png"
        p_svg = out / "figures" / f"{figure_stems[name]}.svg"
        p_png.write_bytes(png)
        run.figures[name] = [p_png]
        if svg_bytes is None:
            p_svg.unlink(missing_ok=True)
        else:
            p_svg.write_bytes(svg_bytes)
            run.figures[name].append(p_svg)
    run.render_s = time.perf_counter() - started
    # The figures drawn in other processes count too.
    render_cpu_s = time.process_time() - cpu_started + draw_cpu_s
    info = {
        "study": study.name,
        "title": study.title,
        "source": study.source,
        "ecnsim_version": __version__,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "params": params_dict(params),
        "choices": [dataclasses.asdict(c) for c in study.choices(params)],
        "points": len(run.plan.points),
        "seeds": run.plan.seeds,
        "runs_planned": planned,
        "runs_stored": len(stored),
        "runs_run_now": sweep.ran,
        "runs_failed": [msg for _task, msg in sweep.failures],
        "warnings": warnings,
        "pilot_runs": 0 if run.calibration is None else len(run.calibration.plan.tasks()),
        "pilot_runs_run_now": 0 if run.calibration is None else run.calibration.sweep.ran,
        "executor": sweep.executor,
        "workers": sweep.workers,
        "wall_s_this_call": sweep.wall_s,
        "simulation_cpu_s_all_runs": sim_cpu,
        "runs_without_cpu_s": no_cpu,
        "simulation_cpu_s_pilot_runs": pilot_cpu[0],
        "simulation_cpu_s_robustness_runs": None if run.robustness is None else robust_cpu[0],
        "robustness_runs_own": None if run.robustness is None else robust_cpu[1],
        "simulation_wall_s_all_runs": sim_wall,
        "figures_drawn": drawn,
        "figure_formats": ["png", "svg"] if svg else ["png"],
        "render_s": run.render_s,
        "render_cpu_s": render_cpu_s,
        "render_cpu_s_figure_workers": draw_cpu_s,
        "emulation": None if emulation is None else emulation["info"],
        **findings_info,
        "tables": {k: str(v.relative_to(out)) for k, v in run.tables.items()},
        "figures": {k: [str(p.relative_to(out)) for p in v] for k, v in run.figures.items()},
        "scenarios": [str(p.relative_to(out)) for _point, p in scenario_files],
    }
    (out / "study.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")

    names = {"tables": table_stems, "figures": figure_stems, "scenarios": scenario_files}
    page = _report(run, data, tables, figures, pngs, info, emulation, names, findings_part)
    report = out / "report.html"
    report.write_text(page, encoding="utf-8")
    run.report = report
    return report


def _write_scenarios(out: Path, sources: list[Path]) -> list[int]:
    """Write the resolved scenarios ``sources`` (each point's first stored seed's, in the
    grid's order) to ``out/scenarios/point-NNNN.json``, pretty-printed, the files of an earlier
    render removed first; the indexes of the sources written (one that cannot be read is left
    out). Runs in a drawing process while the report's process goes on."""
    directory = out / "scenarios"
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("point-*.json"):
        old.unlink()
    written: list[int] = []
    for i, source in enumerate(sources):
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            continue
        try:
            pretty = json.dumps(json.loads(text), indent=1)
        except ValueError:
            pretty = text
        path = directory / f"point-{len(written) + 1:04d}.json"
        path.write_text(pretty + "\n", encoding="utf-8")
        written.append(i)
    return written


def _emulated_part(
    run: StudyRun,
    data: StudyData,
    tables: dict[str, StudyTable],
    figures: dict[str, tuple[Any, str]],
    warnings: list[str],
    drawn: bool = True,
) -> dict[str, Any]:
    """Add the emulated runs' tables and figures (and the side-by-side tables) to ``tables``
    and ``figures``; what the report's emulation section shows."""
    from ecnsim.studies.emulated import compare_tables, driver_rows, emulation_mapping

    assert run.emulated is not None
    study, params = run.study, run.params
    emu = StudyData(study, run.emulated.plan, run.emulated.sweep.store, pilot=data.pilot)
    compare = compare_tables(data, emu)
    own = study.tables(params, emu)
    # Tables that do not depend on the runs (the calibration's) are shown once.
    for name, t in own.items():
        if name in study.shared_tables:
            continue
        t.title = f"Emulated: {t.title}"
        tables[f"emulated_{name}"] = t
    emu_figures = _study_figures(study, params, emu)[0] if drawn else {}
    for name, (fig, caption) in emu_figures.items():
        figures[f"emulated_{name}"] = (fig, f"Emulated (real Linux hosts): {caption}")
    for text in study.warnings(params, emu):
        warnings.append(f"Emulated runs: {text}")
    mapping, refused = emulation_mapping(study, params, run.emulated.plan.points)
    drivers = driver_rows(emu)
    behind = [r for r in drivers if r["fell behind"] == "yes"]
    if behind:
        warnings.append(
            f"The emulation driver fell behind in {len(behind)} of {len(drivers)} emulated runs "
            "(departures written later than the threshold after their simulated time; no packet "
            "was dropped or re-timed). Read their numbers with the machine's load beside them "
            "(Emulation section)."
        )
    sweep = run.emulated.sweep
    info = {
        "runs_planned": len(run.emulated.plan.tasks()),
        "runs_stored": len(emu.runs()),
        "runs_run_now": sweep.ran,
        "runs_failed": [msg for _task, msg in sweep.failures],
        "wall_s_this_call": sweep.wall_s,
        "fell_behind": len(behind),
        "drivers": drivers,
        "refused": [{"point": p, "why": w} for p, w in refused],
    }
    return {
        "info": info,
        "compare": compare,
        "mapping": mapping,
        "notes": study.emulation_notes(params),
        "data": emu,
    }


def _emulation_html(emulation: dict[str, Any]) -> list[str]:
    """The report's sections of an emulated study: side by side, then how it was emulated."""
    info = emulation["info"]
    s: list[str] = []
    s.append("<h2>Simulated and emulated, side by side</h2>")
    s.append(
        '<p class="note">Each point ran twice: simulated (ecnsim\'s TCP models) and emulated '
        "(real Linux TCP endpoints in network namespaces, through the same links and queues "
        "of ecnsim's core in real time; <code>docs/emulation.md</code>). The two are stored "
        "under different keys and never mix. One table per metric of the study's per-run "
        "metrics: the mean over seeds of each, and emulated - simulated. Real stacks in real "
        "time are not deterministic: compare over seeds. CSV: "
        "<code>tables/compare_&lt;metric&gt;.csv</code>.</p>"
    )
    for name, t in emulation["compare"].items():
        s.append(f'<h3 id="table-{_esc(slug(name))}">{_esc(t.title)}</h3>')
        s.append(table_html(t))
    if not emulation["compare"]:
        s.append('<p class="note">No run of either mode is in the store yet.</p>')
    s.append("<h2>Emulation</h2>")
    status = [
        ("emulated runs", f"{info['runs_stored']} of {info['runs_planned']} in the store"),
        ("run by this call", f"{info['runs_run_now']} (one at a time, in real time)"),
        ("real time of this call's emulated runs", format_seconds(info["wall_s_this_call"])),
        ("runs whose driver fell behind", info["fell_behind"]),
        (
            "calibration (pilot) runs",
            "simulated: they choose the queue's settings, and the queue is ecnsim's core "
            "in both modes, so emulating them would add real time and no realism",
        ),
    ]
    s.append(_kv(status))
    for msg in info["runs_failed"][:20]:
        s.append(f'<div class="warn"><b>Emulated run failed:</b> {_esc(msg)}</div>')
    if info["refused"]:
        s.append("<h3>Points that cannot be emulated</h3>")
        s.append(
            _simple_table(
                [{"point": _esc_point(r["point"]), "why": r["why"]} for r in info["refused"]],
                ["point", "why"],
            )
        )
    if emulation["notes"]:
        s.append("<h3>How the experiments map onto real hosts</h3>")
        s.append(
            _simple_table(
                [dataclasses.asdict(c) for c in emulation["notes"]],
                ["topic", "choice", "reason", "parameter"],
            )
        )
    mapping = emulation["mapping"]
    if not mapping.empty:
        s.append("<h3>TCP parameters on the real hosts</h3>")
        s.append(
            '<p class="note">Every resolved TCP parameter of every point and the Linux '
            "setting that stands for it (<code>applied</code>), only approximately "
            "(<code>approximate</code>), or none (<code>not mapped</code>: Linux's own "
            "behaviour applies); <code>points</code> counts the points with that row.</p>"
        )
        rows = _simple_table(mapping.to_dict("records"), list(mapping.columns))
        s.append(f'<div class="scroll">{rows}</div>')
    if info["drivers"]:
        s.append("<h3>The real-time driver, per emulated run</h3>")
        s.append(
            '<p class="note">How late the driver wrote departures against their simulated '
            "time, and the machine's 1-minute load average (other work shared its cores). A "
            "run that fell behind kept its experiment (no packet dropped or re-timed) with "
            "less exact timing.</p>"
        )
        cols = list(info["drivers"][0])
        s.append(f'<div class="scroll">{_simple_table(info["drivers"], cols)}</div>')
    return s


def _cpu_of(store: Any, keys: set[str]) -> tuple[float, int]:
    """``(CPU seconds, runs)`` of the stored runs ``keys`` that recorded their CPU time."""
    total, n = 0.0, 0
    for key in sorted(keys):
        m = store.manifest(key)
        cpu = None if m is None else m.get("cpu_s")
        if isinstance(cpu, (int, float)) and math.isfinite(cpu):
            total += float(cpu)
            n += 1
    return total, n


def _cpu_text(info: dict[str, Any]) -> str:
    """The CPU time of every stored run's simulation (measured in its worker thread), and
    how many runs were stored before it was recorded; the pilot's and the robustness
    alternatives' own runs apart."""
    text = f"{format_seconds(info['simulation_cpu_s_all_runs'])} (one core)"
    missing = int(info.get("runs_without_cpu_s", 0))
    if missing:
        text += (
            f"; {missing} of {info['runs_stored']} runs were stored without their CPU time "
            "(an earlier ecnsim) and are not counted"
        )
    if info.get("simulation_cpu_s_pilot_runs"):
        text += f"; the pilot runs {format_seconds(info['simulation_cpu_s_pilot_runs'])} more"
    if info.get("simulation_cpu_s_robustness_runs") is not None:
        text += (
            f"; the robustness runs {format_seconds(info['simulation_cpu_s_robustness_runs'])} "
            f"more ({info['robustness_runs_own']} runs of their own)"
        )
    return text


def _warnings_html(warnings: list[str]) -> list[str]:
    """The warnings as one box: a single one in full; several as their count, the first
    three, and the rest behind a disclosure (a reader sees the tables without scrolling past
    dozens of boxes)."""
    if not warnings:
        return []
    if len(warnings) == 1:
        return [f'<div class="warn"><b>Warning:</b> {_esc(warnings[0])}</div>']
    shown, rest = warnings[:3], warnings[3:]
    items = "".join(f"<li>{_esc(w)}</li>" for w in shown)
    more = ""
    if rest:
        others = "".join(f"<li>{_esc(w)}</li>" for w in rest)
        more = f"<details><summary>{len(rest)} more</summary><ul>{others}</ul></details>"
    return [
        f'<div class="warn"><b>{len(warnings)} warnings</b> (read them before trusting the '
        f"tables):<ul>{items}</ul>{more}</div>"
    ]


def _esc_point(point: Any) -> str:
    return ", ".join(f"{k} = {_label(v)}" for k, v in dict(point).items())


def _report(
    run: StudyRun,
    data: StudyData,
    tables: dict[str, StudyTable],
    figures: dict[str, tuple[Any, str]],
    pngs: dict[str, bytes],
    info: dict[str, Any],
    emulation: dict[str, Any] | None = None,
    names: dict[str, Any] | None = None,
    findings_part: list[str] | None = None,
) -> str:
    study, params = run.study, run.params
    names = names or {}
    table_stems: dict[str, str] = names.get("tables") or file_stems(tables)
    figure_stems: dict[str, str] = names.get("figures") or file_stems(figures)
    scenario_files: list[tuple[dict[str, Any], Path]] = names.get("scenarios") or []
    one_seed = len(info["seeds"]) == 1
    s: list[str] = []
    s.append(f"<h1>{_esc(study.name)}: {_esc(study.title)}</h1>")
    s.append(f"<p><b>Source.</b> {_esc(study.source)}</p>")
    s.append(
        '<p class="note">Every number below comes from ecnsim\'s models and the setup and '
        "choices listed here; the published numbers are deliberately not in ecnsim. "
        f"Details: <code>{_esc(study.docs_path())}</code>.</p>"
    )
    status = [
        ("ecnsim", info["ecnsim_version"]),
        ("written", info["written_at"]),
        (
            "points x seeds",
            f"{info['points']} x {len(info['seeds'])} = {info['runs_planned']} runs",
        ),
        ("runs in the store", info["runs_stored"]),
        *(
            [
                (
                    "calibration (pilot) runs",
                    f"{info['pilot_runs']} ({info['pilot_runs_run_now']} run now)",
                )
            ]
            if info["pilot_runs"]
            else []
        ),
        ("runs run by this call", info["runs_run_now"]),
        ("executor", f"{info['executor']} ({info['workers']} workers)"),
        ("wall time of this call's runs", format_seconds(info["wall_s_this_call"])),
        ("simulation CPU of all runs", _cpu_text(info)),
    ]
    s.append(_kv(status))
    if info["runs_failed"] or info["runs_stored"] < info["runs_planned"]:
        missing = info["runs_planned"] - info["runs_stored"]
        lines = "".join(f"<li>{_esc(m)}</li>" for m in info["runs_failed"][:20])
        s.append(
            f'<div class="warn"><b>Incomplete:</b> {missing} of {info["runs_planned"]} runs are '
            f"not in the store; tables and figures use the others. Run the same command again "
            f"to finish.<ul>{lines}</ul></div>"
        )

    s.extend(_warnings_html(info.get("warnings", [])))
    s.extend(findings_part or [])

    s.append("<h2>Setup</h2>")
    s.append(
        _simple_table(
            [{"parameter": k, "value": v} for k, v in study.setup(params)], ["parameter", "value"]
        )
    )
    s.append("<h2>Choices where the source is ambiguous</h2>")
    s.append(
        _simple_table(
            [dataclasses.asdict(c) for c in study.choices(params)],
            ["topic", "choice", "reason", "parameter"],
        )
    )
    overrides = list(params.scenario_set)
    if overrides:
        s.append(
            "<p><b>Scenario overrides (<code>--set</code>), applied to every point:</b> "
            + ", ".join(f"<code>{_esc(p)} = {_esc(json.dumps(v))}</code>" for p, v in overrides)
            + "</p>"
        )
    s.append("<details><summary>All parameters</summary>")
    s.append(f"<pre>{_esc(json.dumps(params_dict(params), indent=1))}</pre></details>")

    if emulation is not None:
        s.extend(_emulation_html(emulation))

    s.append("<h2>Tables</h2>")
    s.append(
        '<p class="note">Cells are the mean over seeds ± the half-width of its 95% '
        "Student-t confidence interval (none with one seed). CSV: "
        "<code>tables/&lt;name&gt;.csv</code>."
        + (
            " Tables titled <i>Emulated:</i> are the emulated runs' (CSV: "
            "<code>tables/emulated_&lt;name&gt;.csv</code>); the others the simulated runs'."
            if emulation is not None
            else ""
        )
        + "</p>"
    )
    for name, t in tables.items():
        unit = f" ({_esc(t.unit)})" if t.unit else ""
        stem = table_stems.get(name, slug(name))
        s.append(f'<h3 id="table-{_esc(stem)}">{_esc(t.title)}{unit}</h3>')
        if t.note:
            s.append(f'<p class="note">{_esc(t.note)}</p>')
        if t.mean.empty:
            s.append('<p class="note">No data (no run of these points is in the store).</p>')
        else:
            s.append(table_html(t))
        s.append(f'<p class="note"><code>tables/{_esc(stem)}.csv</code></p>')

    s.append("<h2>Figures</h2>")
    if not info.get("figures_drawn", True):
        s.append(f'<div class="warn"><b>No figures:</b> {_esc(MATPLOTLIB_HINT)}</div>')
    elif one_seed and figures:
        s.append(
            '<p class="note">One seed per point: the figures have no confidence intervals '
            "(no error bars or bands, and a curve is one run's). Run with <code>--seeds N</code> "
            "(N &ge; 2) for them.</p>"
        )
    svg = "svg" in info.get("figure_formats", ("png", "svg"))
    if figures and not svg:
        s.append(
            '<p class="note">Each figure is in <code>figures/</code> as PNG. For SVG too, run '
            f"<code>ecnsim study run {_esc(study.name)} --out DIR --svg</code> with the same "
            "options on this directory: every run is in its store, so it only renders.</p>"
        )
    for i, (name, (_fig, caption)) in enumerate(figures.items(), start=1):
        data_uri = base64.b64encode(pngs[name]).decode("ascii")
        stem = figure_stems.get(name, slug(name))
        svg_link = f', <a href="figures/{_esc(stem)}.svg"><code>.svg</code></a>' if svg else ""
        s.append(
            f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{data_uri}">'
            f"<figcaption>Figure {i}. {_esc(caption)} "
            f'(<a href="figures/{_esc(stem)}.png"><code>figures/{_esc(stem)}.png</code></a>'
            f"{svg_link})</figcaption>"
            "</figure>"
        )

    s.append("<h2>Resolved scenarios</h2>")
    s.append(
        '<p class="note">Every parameter each point ran with, defaults filled in '
        "(the first seed's; seeds differ only in <code>simulation.seed</code>), one JSON file "
        "per point beside this report (<code>scenarios/</code>), so the report stays small "
        "however many flows a scenario has.</p>"
    )
    if scenario_files:
        links = []
        for point, path in scenario_files:
            rel = f"scenarios/{path.name}"
            label = ", ".join(f"{k} = {_label(v)}" for k, v in point.items())
            links.append(
                f'<tr><td class="l">{_esc(label)}</td><td class="l">'
                f'<a href="{_esc(rel)}"><code>{_esc(rel)}</code></a></td></tr>'
            )
        s.append(
            '<div class="scroll"><table><thead><tr><th class="l">point</th>'
            '<th class="l">resolved scenario</th></tr></thead>'
            f"<tbody>{''.join(links)}</tbody></table></div>"
        )

    runs = data.frame("metrics")
    if len(runs) > MAX_INLINE_RUNS:
        s.append(
            f'<p class="note">Every run\'s metrics ({len(runs)} runs): '
            '<a href="tables/runs.csv"><code>tables/runs.csv</code></a>.</p>'
        )
    elif not runs.empty:
        s.append("<details><summary>Every run's metrics</summary>")
        cols = list(runs.columns)
        rows = [
            {
                str(c): (_num(v, 5) if isinstance(v, (float, np.floating)) else v)
                for c, v in r.items()
            }
            for r in runs.to_dict("records")
        ]
        s.append(f'<div class="scroll">{_simple_table(rows, cols)}</div></details>')
    s.append(
        f'<p class="note">Rendered in {run.render_s:.1f} s by ecnsim '
        f"{_esc(info['ecnsim_version'])}."
        "</p>"
    )
    body = "\n".join(s)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{_esc(study.name)} - ecnsim study</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )
