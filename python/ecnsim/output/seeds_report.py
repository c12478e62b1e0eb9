"""The report of an ``ecnsim run --seeds --out DIR`` folder: one scenario, several seeds.

``DIR/seed-<N>/`` holds each seed's results; the report is ``DIR/report.html``: the
summary metrics' mean ± 95 % confidence interval across the seeds (the aggregation a
sweep uses per point, :func:`ecnsim.analysis.aggregate.aggregate`), each seed's values
and digest, and a link to each seed's own report (``seed-<N>/report.html``).
"""

from __future__ import annotations

import html
import math
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["is_seeds_folder", "seed_dirs", "write_seeds_report"]

_SEED_DIR = re.compile(r"^seed-(\d+)$")


def seed_dirs(directory: str | os.PathLike[str]) -> list[tuple[int, Path]]:
    """The ``seed-<N>`` result directories in ``directory``, by seed."""
    root = Path(directory)
    if not root.is_dir():
        return []
    found = []
    for p in root.iterdir():
        m = _SEED_DIR.match(p.name)
        if m and (p / "meta.json").is_file():
            found.append((int(m.group(1)), p))
    return sorted(found)


def is_seeds_folder(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` is what ``ecnsim run --seeds --out`` writes (and no run's own)."""
    return not (Path(directory) / "meta.json").is_file() and bool(seed_dirs(directory))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.4g}"
    return html.escape(str(value))


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_seeds_report(
    directory: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    lockout_s: float | None = None,
) -> Path:
    """Write the report of a ``--seeds`` folder (see the module) and each seed's report."""
    import pandas as pd

    from ecnsim.analysis.aggregate import DEFAULT_METRICS, aggregate, summary_metrics, summary_table
    from ecnsim.cli._common import cc_seed_metrics, cc_seed_table
    from ecnsim.output.report import load_results, write_report

    root = Path(directory)
    seeds = seed_dirs(root)
    if not seeds:
        raise FileNotFoundError(f"{root} has no seed-<N>/ results (ecnsim run --seeds --out DIR)")
    path = Path(out) if out is not None else root / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    by_cc: list[tuple[str, Any]] = []
    links: list[list[Any]] = []
    name = None
    for seed, seed_dir in seeds:
        results = load_results(seed_dir)
        name = name or (results.spec or {}).get("name")
        if lockout_s is None:
            seed_report = write_report(seed_dir, figures=False)
        else:
            seed_report = write_report(seed_dir, figures=False, lockout_s=lockout_s)
        metrics = summary_metrics(results)
        rows.append({"key": str(seed), **{m: metrics[m] for m in DEFAULT_METRICS}})
        by_cc.append((str(seed), cc_seed_metrics(results)))
        link = os.path.relpath(seed_report, path.parent)
        finished = "yes" if results.finished else "no (interrupted)"
        links.append(
            [
                f'<a href="{html.escape(link)}">{seed}</a>',
                f"{results.digest:016x}",
                finished,
                *(_cell(metrics[m]) for m in DEFAULT_METRICS),
            ]
        )
    per_run = pd.DataFrame(rows)
    summary = summary_table(aggregate(per_run, [], list(DEFAULT_METRICS)), [])
    cc_table = cc_seed_table(by_cc)
    cc_part = []
    if cc_table is not None:
        # As `ecnsim run --seeds` prints it: a mix's algorithms across the seeds.
        cc_part = [
            "<h2>By congestion control (tcp.cc)</h2>",
            "<p>The flows grouped by their algorithm in each seed's run (goodput, its share of "
            "all flows', the mean per flow, summed loss counts), then mean ± 95 % CI half-width "
            "across the seeds.</p>",
            _table(
                list(cc_table.columns), [[_cell(v) for v in r] for r in cc_table.values.tolist()]
            ),
        ]
    heading = title or f"{name or root.name}: {len(seeds)} seeds"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(heading)}</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}</style></head><body>",
        f"<h1>{html.escape(heading)}</h1>",
        f"<p>Source: {html.escape(str(root))} (<code>ecnsim run --seeds</code>). Each seed "
        "is one run of the same scenario; the table gives each summary metric's mean ± "
        "the half-width of its 95 % Student-t confidence interval across the seeds "
        "(goodput in Mbit/s).</p>",
        _table(list(summary.columns), [[_cell(v) for v in r] for r in summary.values.tolist()]),
        *cc_part,
        "<h2>Seeds</h2>",
        _table(["seed", "digest", "finished", *DEFAULT_METRICS], links),
        "</body></html>",
    ]
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path
