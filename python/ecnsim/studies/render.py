"""Writing a study's output: tables as CSV, figures as PNG and SVG, one self-contained HTML report.

Layout of the output directory (``ecnsim study run NAME --out DIR``)::

    DIR/report.html            the report: setup, choices, tables, figures, resolved scenarios
    DIR/study.json             parameters, choices, versions, run counts, wall times
    DIR/tables/<name>.csv      each table as the source lays it out (mean, then its CI half-width)
    DIR/tables/runs.csv        every run's metrics (one row per point and seed)
    DIR/figures/<name>.png     each figure, and .svg beside it
    DIR/store/                 the results store (what lets a re-run only render)
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from ecnsim.studies._base import StudyData, StudyRun, StudyTable, format_seconds, params_dict, slug

__all__ = ["render_study", "table_csv", "table_html"]

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


def render_study(run: StudyRun) -> Path:
    """Write the study's tables, figures, ``study.json`` and ``report.html`` into ``run.out``."""
    from ecnsim import __version__

    started = time.perf_counter()
    study, params, out = run.study, run.params, run.out
    pilot = (
        None
        if run.calibration is None
        else StudyData(study, run.calibration.plan, run.calibration.sweep.store)
    )
    data = StudyData(study, run.plan, run.sweep.store, pilot=pilot)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    tables = study.tables(params, data)
    figures = study.figures(params, data)
    warnings = study.warnings(params, data)
    emulation: dict[str, Any] | None = None
    if run.emulated is not None:
        emulation = _emulated_part(run, data, tables, figures, warnings)

    run.tables = {}
    compare = {} if emulation is None else emulation["compare"]
    for name, t in {**compare, **tables}.items():
        path = out / "tables" / f"{slug(name)}.csv"
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

    run.figures = {}
    pngs: dict[str, bytes] = {}
    for name, (fig, _caption) in figures.items():
        png = _figure_png(fig)
        pngs[name] = png
        p_png = out / "figures" / f"{slug(name)}.png"
        p_svg = out / "figures" / f"{slug(name)}.svg"
        p_png.write_bytes(png)
        fig.savefig(p_svg, format="svg")
        run.figures[name] = [p_png, p_svg]

    from ecnsim.studies.findings import report_findings

    findings_part, findings_info = report_findings(run, data)

    sweep = run.sweep
    stored = data.runs()
    sim_wall = 0.0
    for _point, _seed, key, _tag in stored:
        m = sweep.store.manifest(key)
        if m is not None and isinstance(m.get("wall_s"), (int, float)):
            sim_wall += float(m["wall_s"])
    planned = len({(r.key, r.job.tag if r.job else None) for r in run.plan.runs})
    run.render_s = time.perf_counter() - started
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
        "simulation_cpu_s_all_runs": sim_wall,
        "render_s": run.render_s,
        "emulation": None if emulation is None else emulation["info"],
        **findings_info,
        "tables": {k: str(v.relative_to(out)) for k, v in run.tables.items()},
        "figures": {k: [str(p.relative_to(out)) for p in v] for k, v in run.figures.items()},
    }
    (out / "study.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")

    page = _report(run, data, tables, figures, pngs, info, emulation, findings_part)
    report = out / "report.html"
    report.write_text(page, encoding="utf-8")
    run.report = report
    return report


def _emulated_part(
    run: StudyRun,
    data: StudyData,
    tables: dict[str, StudyTable],
    figures: dict[str, tuple[Any, str]],
    warnings: list[str],
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
    for name, (fig, caption) in study.figures(params, emu).items():
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
    findings_part: list[str] | None = None,
) -> str:
    study, params = run.study, run.params
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
        (
            "simulation time of all runs (one core)",
            format_seconds(info["simulation_cpu_s_all_runs"]),
        ),
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

    for text in info.get("warnings", []):
        s.append(f'<div class="warn"><b>Warning:</b> {_esc(text)}</div>')
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
        s.append(f'<h3 id="table-{_esc(slug(name))}">{_esc(t.title)}{unit}</h3>')
        if t.note:
            s.append(f'<p class="note">{_esc(t.note)}</p>')
        if t.mean.empty:
            s.append('<p class="note">No data (no run of these points is in the store).</p>')
        else:
            s.append(table_html(t))
        s.append(f'<p class="note"><code>tables/{_esc(slug(name))}.csv</code></p>')

    s.append("<h2>Figures</h2>")
    for i, (name, (_fig, caption)) in enumerate(figures.items(), start=1):
        data_uri = base64.b64encode(pngs[name]).decode("ascii")
        s.append(
            f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{data_uri}">'
            f"<figcaption>Figure {i}. {_esc(caption)} "
            f"(<code>figures/{_esc(slug(name))}.png</code>, <code>.svg</code>)</figcaption>"
            "</figure>"
        )

    s.append("<h2>Resolved scenarios</h2>")
    s.append(
        '<p class="note">Every parameter each point ran with, defaults filled in '
        "(the first seed's; seeds differ only in <code>simulation.seed</code>).</p>"
    )
    for point, text in data.resolved_scenarios():
        label = ", ".join(f"{k} = {_label(v)}" for k, v in point.items())
        try:
            pretty = json.dumps(json.loads(text), indent=1)
        except ValueError:
            pretty = text
        s.append(f"<details><summary>{_esc(label)}</summary><pre>{_esc(pretty)}</pre></details>")

    runs = data.frame("metrics")
    if not runs.empty:
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
