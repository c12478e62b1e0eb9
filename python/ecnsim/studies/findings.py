"""The source's findings as code, the readings they depend on, and the robustness check.

A **finding** is a qualitative statement of the study's source (a direction or an
ordering, never a number of the source), as a set of :class:`Cell` comparisons over
the study's own derived tables and a quantifier ("in every cell", "in almost all").
Each cell compares one metric at one point with the same metric at a reference point
(paired by seed) or with a multiple of it, or one paired *change* (a :class:`Delta`: the
metric at one point minus at another) with another change or a number, for findings
that compare differences ("raises delay most for robust flows", "by much more for
RED*"); its outcome comes from the seeds: the
95 % Student-t interval of the paired differences excludes 0 in the claimed direction
(*holds*), in the other (*does not hold*), or not (*n.s.*). With one seed there is no
significance test: the sign decides, and the verdict says so.

A **reading** is a named choice where the source is ambiguous, with its alternatives
(the first is the default) and each one's evidence from the source (a quote and its
section). An alternative applies either as study parameters (``settings``: the points
are run again with them) or as a metric definition (``metrics``: a finding's metric
*role*, such as ``"jain"``, read from another column of the same runs; no rerun).

``ecnsim study run NAME --robustness`` judges every finding under each alternative of
each reading, one reading at a time from the defaults (:func:`robustness_runs` plans
the reruns, only of the points the findings' cells use), and the report shows a
findings table and a robustness table (:func:`findings_html`, CSV beside it).

Declaring them for a study takes a few lines each (``docs/studies/README.md``)::

    def findings(self, p):
        return [
            Finding("h4", "ECN gets more goodput than RED", "ch. 4, §4.4.2",
                    lambda p: [Cell("goodput", {"n": n, "mode": "ECN"}, {"n": n, "mode": "RED"})
                               for n in p.n_values]),
        ]

    def readings(self, p):
        return [
            Reading("jain", "Jain's index: one over the window, or the mean of 1-s indices?", (
                Alternative("interval mean", "'mean Jain's fairness index' (ch. 5, Table 5.1)",
                            metrics={"jain": "jain_interval"}),
                Alternative("whole window", "...", metrics={"jain": "jain"}),
            )),
        ]
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from ecnsim.studies._base import Study, StudyData, StudyRun

__all__ = [
    "ALL",
    "ALMOST_ALL",
    "MOST",
    "Alternative",
    "Cell",
    "CellResult",
    "Delta",
    "Finding",
    "FindingResult",
    "Reading",
    "RobustnessResult",
    "judge_cell",
    "judge_finding",
    "metric_roles",
    "robustness_outcome",
    "verdict_of",
]

Verdict = Literal["holds", "does not hold", "n.s.", "no data"]

#: Quantifiers: the share of a finding's cells (with data) that must hold.
ALL = 1.0
#: "in almost all situations": our reading, three cells in four.
ALMOST_ALL = 0.75
#: "mostly": more than half.
MOST = 0.5 + 1e-9

#: The confidence of the paired intervals.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Delta:
    """One side of a cell that compares changes: the metric at ``point`` minus its value
    at ``ref``, seed by seed (the two runs of a seed paired, as a cell pairs them).

    ``where`` and ``ref_where`` select rows of the cell's table as a :class:`Cell`'s do
    (merged over the cell's ``where``; ``ref_where`` None: ``where``), so a delta can be
    one group's change between two points (``Delta(max_th_50, max_th_30, where={"group":
    "robust"})``) or the gap between two groups of the same runs.
    """

    point: Mapping[str, Any]
    ref: Mapping[str, Any]
    where: Mapping[str, Any] = field(default_factory=dict)
    ref_where: Mapping[str, Any] | None = None
    #: The relative change instead, point / ref - 1 (for a source that normalizes: "power
    #: normalized to IW=1"); a seed whose ref is 0 has none.
    relative: bool = False

    def label(self, where: Mapping[str, Any], shown: Sequence[str] = ()) -> str:
        """``group=robust (max_th=50 - max_th=30)``: what both sides share (but the axes in
        ``shown``, which the cell's label gives once), then what differs between them."""
        a_where = {**where, **self.where}
        b_where = {**where, **(self.where if self.ref_where is None else self.ref_where)}
        keys = list(dict.fromkeys([*self.point, *self.ref]))
        diff = [k for k in keys if not _same(self.point.get(k), self.ref.get(k))]
        wkeys = list(dict.fromkeys([*a_where, *b_where]))
        wdiff = [k for k in wkeys if not _same(a_where.get(k), b_where.get(k))]
        common = "".join(
            [f"{k}={_fmt(self.point[k])} " for k in keys if k not in diff and k not in shown]
            + [f"{k}={_fmt(a_where[k])} " for k in wkeys if k not in wdiff]
        )
        a = " ".join(
            [f"{k}={_fmt(self.point.get(k))}" for k in diff]
            + [f"{k}={_fmt(a_where.get(k))}" for k in wdiff]
        )
        b = " ".join(
            [f"{k}={_fmt(self.ref.get(k))}" for k in diff]
            + [f"{k}={_fmt(b_where.get(k))}" for k in wdiff]
        )
        return f"{common}({a} / {b} - 1)" if self.relative else f"{common}({a} - {b})"


@dataclass(frozen=True)
class Cell:
    """One comparison a finding is judged on.

    The claim: ``metric`` at ``point`` is higher (``higher``; else lower) than
    ``factor`` times its value at ``ref`` (a point: paired seed by seed) or than
    ``ref`` itself (a number). ``metric`` is a role that a reading maps onto a
    column (:func:`metric_roles`), or a column. ``table`` is the derived table
    (one row per run, or per run and ``where``: ``{"group": "robust"}``).

    A cell on differences has a :class:`Delta` as ``point``, and a delta or a number as
    ``ref``: the paired change at ``point`` is higher (lower) than ``factor`` times the
    paired change at ``ref`` (or than the number), seed by seed. "Raises delay most for
    robust flows, then average" is ``Cell("delay_s", Delta(hi, lo, where={"group":
    "robust"}), Delta(hi, lo, where={"group": "average"}), table="groups")``; "improves
    by much more for RED* than for PI" is ``factor=2`` on the two improvements.
    """

    metric: str
    point: Mapping[str, Any] | Delta
    ref: Mapping[str, Any] | float | Delta
    higher: bool = True
    factor: float = 1.0
    table: str = "metrics"
    where: Mapping[str, Any] = field(default_factory=dict)
    #: The reference's rows, where they differ from ``where`` (two groups of the same runs:
    #: ``where={"role": "web_half2"}, ref_where={"role": "web_half1"}``); None: ``where``.
    ref_where: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.point, Delta) != isinstance(self.ref, Delta) and not isinstance(
            self.ref, (int, float)
        ):
            raise ValueError(
                f"cell on {self.metric!r}: a Delta compares with a Delta or a number, "
                "a point with a point or a number"
            )

    def points(self) -> list[Mapping[str, Any]]:
        out: list[Mapping[str, Any]] = []
        for side in (self.point, self.ref):
            if isinstance(side, Delta):
                out += [side.point, side.ref]
            elif isinstance(side, Mapping):
                out.append(side)
        return out

    def label(self) -> str:
        """``n=30 max_p=0.1: ECN > RED`` style: what differs between the two sides."""
        op = ">" if self.higher else "<"
        scale = "" if self.factor == 1.0 else f"{_fmt(self.factor)} x "
        if isinstance(self.point, Delta):
            points = [*self.point_pair(), *self.ref_pair()]
            shown = _common_keys(points)
            common = " ".join(f"{k}={_fmt(points[0][k])}" for k in shown)
            a = self.point.label(self.where, shown)
            b = self.ref.label(self.where, shown) if isinstance(self.ref, Delta) else _fmt(self.ref)
            return _headed(common, f"{self.metric} {a} {op} {scale}{b}")
        if self.ref_where is not None and isinstance(self.ref, Mapping):
            # Two groups: the point's axes, then the groups compared.
            point = " ".join(f"{k}={_fmt(v)}" for k, v in self.point.items())
            if not _same_point(self.point, self.ref):
                point += " vs " + " ".join(f"{k}={_fmt(v)}" for k, v in self.ref.items())
            a = " ".join(f"{k}={_fmt(v)}" for k, v in self.where.items())
            b = " ".join(f"{k}={_fmt(v)}" for k, v in self.ref_where.items())
            return _headed(point, f"{self.metric} {a} {op} {scale}{b}")
        where = " ".join(f"{k}={_fmt(v)}" for k, v in self.where.items())
        if not isinstance(self.ref, Mapping):
            common = " ".join(f"{k}={_fmt(v)}" for k, v in self.point.items())
            return _headed(f"{common} {where}", f"{self.metric} {op} {_fmt(self.ref)}")
        keys = list(dict.fromkeys([*self.point, *self.ref]))
        same = [k for k in keys if _same(self.point.get(k), self.ref.get(k))]
        diff = [k for k in keys if k not in same]
        common = " ".join(f"{k}={_fmt(self.point[k])}" for k in same)
        a = " ".join(f"{k}={_fmt(self.point.get(k))}" for k in diff)
        b = " ".join(f"{k}={_fmt(self.ref.get(k))}" for k in diff)
        return _headed(f"{common} {where}", f"{self.metric} {a} {op} {scale}{b}")

    def point_pair(self) -> list[Mapping[str, Any]]:
        return [self.point.point, self.point.ref] if isinstance(self.point, Delta) else []

    def ref_pair(self) -> list[Mapping[str, Any]]:
        return [self.ref.point, self.ref.ref] if isinstance(self.ref, Delta) else []


def _headed(head: str, claim: str) -> str:
    """``head: claim``, or the claim alone when no axis is shared (no label starts with ": ")."""
    head, claim = head.strip(), claim.strip()
    return f"{head}: {claim}" if head else claim


def _common_keys(points: Sequence[Mapping[str, Any]]) -> list[str]:
    """The axes every point has with the same value (a delta cell's label gives them once)."""
    first = points[0]
    return [k for k in first if all(_same(first[k], p.get(k)) for p in points[1:])]


@dataclass(frozen=True)
class Finding:
    """A statement of the source, judged on ``cells(params)`` (only the cells whose points
    are in the study's grid count) with ``quantifier`` (the share that must hold)."""

    id: str
    statement: str
    section: str
    cells: Callable[[Any], Sequence[Cell]]
    quantifier: float = ALL
    #: How the quantifier reads in the report ("every cell", "3 of 4 cells or more").
    quantifier_text: str = "every cell"
    #: Which reading's default the finding uses and why (shown in the report).
    note: str = ""


@dataclass(frozen=True)
class Alternative:
    """One answer to a reading: its name, the source's evidence for it (quote and section),
    and how it applies: study parameters (``settings``) or metric roles (``metrics``)."""

    name: str
    evidence: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """A choice where the source is ambiguous; ``alternatives[0]`` is the default."""

    id: str
    question: str
    alternatives: tuple[Alternative, ...]

    def __post_init__(self) -> None:
        if len(self.alternatives) < 2:
            raise ValueError(f"reading {self.id!r}: needs a default and at least one alternative")
        kinds = {bool(a.metrics) for a in self.alternatives}
        if len(kinds) != 1 or any(bool(a.metrics) == bool(a.settings) for a in self.alternatives):
            raise ValueError(
                f"reading {self.id!r}: every alternative must set either metrics or settings"
            )

    @property
    def default(self) -> Alternative:
        return self.alternatives[0]

    @property
    def kind(self) -> Literal["metric", "parameter"]:
        return "metric" if self.default.metrics else "parameter"

    def applies(self) -> str:
        """How the reading applies, in a few words."""
        if self.kind == "metric":
            roles = sorted({r for a in self.alternatives for r in a.metrics})
            return f"metric definition ({', '.join(roles)}): the same runs, no rerun"
        keys = sorted({k for a in self.alternatives for k in a.settings})
        return f"study parameter ({', '.join(keys)}): the findings' points run again"


# ---------------------------------------------------------------------------
# Judging
# ---------------------------------------------------------------------------


@dataclass
class CellResult:
    cell: Cell
    column: str
    seeds: int
    value: float
    reference: float
    #: Mean of the paired differences in the claimed direction (> 0: as claimed).
    diff: float
    #: Half-width of its 95 % interval (NaN with one seed).
    ci: float
    outcome: Verdict


@dataclass
class FindingResult:
    finding: Finding
    verdict: Verdict
    cells: list[CellResult]
    held: int
    not_held: int
    not_significant: int
    #: The fewest seeds of any judged cell (0: no data).
    seeds: int

    @property
    def significance(self) -> str:
        if self.seeds == 0:
            return "no data"
        if self.seeds == 1:
            return "1 seed: no significance test"
        return f"{self.seeds} seeds, paired 95 % CI"


def metric_roles(
    readings: Sequence[Reading], choose: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Role -> column under each metric reading's default, or the alternative ``choose`` names."""
    out: dict[str, str] = {}
    for r in readings:
        if r.kind != "metric":
            continue
        name = (choose or {}).get(r.id, r.default.name)
        alt = next((a for a in r.alternatives if a.name == name), r.default)
        out.update(alt.metrics)
    return out


#: ``select(where, columns)``: the rows of a frame that match ``where`` (as
#: :func:`ecnsim.studies._base.select_rows` matches them), only ``columns``.
Select = Callable[[Mapping[str, Any], Sequence[str]], "pd.DataFrame"]


def _seed_values(
    frame: pd.DataFrame | Select,
    point: Mapping[str, Any],
    where: Mapping[str, Any],
    column: str,
) -> pd.Series:
    from ecnsim.studies._base import select_rows

    if callable(frame):
        rows = frame({**point, **where}, ["seed", column])
    else:
        rows = select_rows(frame, {**point, **where})
    if rows.empty or column not in rows.columns:
        import pandas as pd

        return pd.Series([], dtype=float)
    values = rows.groupby("seed")[column].mean()
    return values.astype(float)


def _delta_values(
    frame: pd.DataFrame | Select, d: Delta, where: Mapping[str, Any], column: str
) -> pd.Series:
    """Per seed: the column at ``d.point`` minus at ``d.ref`` (seeds with both sides)."""
    a_where = {**where, **d.where}
    b_where = a_where if d.ref_where is None else {**where, **d.ref_where}
    a = _seed_values(frame, d.point, a_where, column)
    b = _seed_values(frame, d.ref, b_where, column)
    seeds = sorted(set(a.index) & set(b.index))
    a, b = a.reindex(seeds), b.reindex(seeds)
    change: pd.Series = (a / b.where(b != 0) - 1.0).dropna() if d.relative else a - b
    return change


def judge_cell(frame: pd.DataFrame | Select, cell: Cell, column: str) -> CellResult:
    """The outcome of one cell on ``frame`` (a derived table with the axes and ``seed``, or
    a function selecting its rows: :data:`Select`)."""
    if isinstance(cell.point, Delta):
        a = _delta_values(frame, cell.point, cell.where, column)
    else:
        a = _seed_values(frame, cell.point, cell.where, column)
    if isinstance(cell.ref, (Mapping, Delta)):
        if isinstance(cell.ref, Delta):
            b = _delta_values(frame, cell.ref, cell.where, column)
        else:
            ref_where = cell.where if cell.ref_where is None else cell.ref_where
            b = _seed_values(frame, cell.ref, ref_where, column)
        seeds = sorted(set(a.index) & set(b.index))
        av = a.reindex(seeds).to_numpy(dtype=float)
        bv = b.reindex(seeds).to_numpy(dtype=float)
    else:
        seeds = list(a.index)
        av = a.to_numpy(dtype=float)
        bv = np.full(av.shape, float(cell.ref))
    ok = ~(np.isnan(av) | np.isnan(bv))
    av, bv = av[ok], bv[ok]
    d = av - cell.factor * bv if cell.higher else cell.factor * bv - av
    return _result(cell, column, av, bv, d)


def _result(cell: Cell, column: str, av: np.ndarray, bv: np.ndarray, d: np.ndarray) -> CellResult:
    from ecnsim.analysis.stats import student_t_ppf

    n = int(d.size)
    if n == 0:
        return CellResult(cell, column, 0, math.nan, math.nan, math.nan, math.nan, "no data")
    mean = float(d.mean())
    value, reference = float(av.mean()), float(bv.mean())
    if n == 1:
        outcome: Verdict = "holds" if mean > 0 else "does not hold"
        return CellResult(cell, column, 1, value, reference, mean, math.nan, outcome)
    half = float(student_t_ppf(0.5 + CONFIDENCE / 2, n - 1) * d.std(ddof=1) / math.sqrt(n))
    if mean - half > 0:
        outcome = "holds"
    elif mean + half < 0 or (half == 0.0 and mean <= 0):
        # Identical differences in every seed: the sign decides; none at all is not "more".
        outcome = "does not hold"
    else:
        outcome = "n.s."
    return CellResult(cell, column, n, value, reference, mean, half, outcome)


def verdict_of(held: int, not_held: int, not_significant: int, quantifier: float) -> Verdict:
    """A finding's verdict from its cells' outcomes: *holds* when at least ``quantifier`` of
    the cells hold, *does not hold* when they could not even if every n.s. cell held, n.s.
    between."""
    total = held + not_held + not_significant
    if total == 0:
        return "no data"
    need = math.ceil(quantifier * total - 1e-9)
    if held >= need:
        return "holds"
    if held + not_significant < need:
        return "does not hold"
    return "n.s."


def judge_finding(
    finding: Finding,
    data: StudyData,
    params: Any,
    roles: Mapping[str, str],
    *,
    cells: Sequence[Cell] | None = None,
) -> FindingResult:
    """Judge ``finding`` on the runs of ``data`` (its cells outside the grid left out)."""
    grid = data.plan.points
    results = []
    for cell in finding.cells(params) if cells is None else cells:
        if not all(_in_grid(grid, p) for p in cell.points()):
            continue
        column = roles.get(cell.metric, cell.metric)
        results.append(judge_cell(functools.partial(data.select, cell.table), cell, column))
    judged = [r for r in results if r.outcome != "no data"]
    held = sum(r.outcome == "holds" for r in judged)
    not_held = sum(r.outcome == "does not hold" for r in judged)
    ns = sum(r.outcome == "n.s." for r in judged)
    return FindingResult(
        finding,
        verdict_of(held, not_held, ns, finding.quantifier),
        results,
        held,
        not_held,
        ns,
        min((r.seeds for r in judged), default=0),
    )


# ---------------------------------------------------------------------------
# Robustness
# ---------------------------------------------------------------------------


RobustOutcome = Literal["same", "flips", "n.s.", "no data"]


def robustness_outcome(default: Verdict, alternative: Verdict) -> RobustOutcome:
    """*same*: the default's verdict (holds, or does not hold) is reached under the
    alternative too; *flips*: the alternative reaches the other verdict (or one where the
    default was n.s.); *n.s.*: the alternative reaches none."""
    if alternative == "no data" or default == "no data":
        return "no data"
    if alternative == "n.s.":
        return "n.s."
    return "same" if alternative == default else "flips"


@dataclass
class RobustnessResult:
    finding: str
    reading: str
    alternative: str
    default_verdict: Verdict
    verdict: Verdict
    outcome: RobustOutcome
    cells: str
    #: The cells that do not hold under the alternative, by label (as ``findings_cells.csv``
    #: names them; ``robustness.csv`` joins them with ``"; "``).
    failing_cells: tuple[str, ...] = ()
    #: The cells that are not significant either way under the alternative, likewise.
    ns_cells: tuple[str, ...] = ()


def _in_grid(grid: Sequence[Mapping[str, Any]], point: Mapping[str, Any]) -> bool:
    return any(_matches(g, point) for g in grid)


def _matches(g: Mapping[str, Any], point: Mapping[str, Any]) -> bool:
    return all(k in g and _same(g[k], v) for k, v in point.items())


def finding_points(study: Study, params: Any) -> list[dict[str, Any]]:
    """The grid's points that some finding's cell uses, in the grid's order."""
    used: list[Mapping[str, Any]] = [
        p for f in study.findings(params) for c in f.cells(params) for p in c.points()
    ]
    return [g for g in study.grid(params) if any(_matches(g, p) for p in used)]


def robustness_settings(study: Study, params: Any) -> list[tuple[Reading, Alternative, Any]]:
    """Every parameter reading's alternatives as ``(reading, alternative, params)``: the
    defaults with that one alternative's settings applied."""
    from ecnsim.studies._base import apply_settings

    out = []
    for r in study.readings(params):
        if r.kind != "parameter":
            continue
        for alt in r.alternatives[1:]:
            out.append((r, alt, apply_settings(study, params, list(alt.settings.items()))))
    return out


def _cells_text(res: FindingResult) -> str:
    return f"{res.held} hold, {res.not_held} do not, {res.not_significant} n.s. of {len(res.cells)}"


def robustness(
    study: Study,
    params: Any,
    data: StudyData,
    alternates: Sequence[tuple[Reading, Alternative, Any, StudyData]],
) -> tuple[list[FindingResult], list[RobustnessResult]]:
    """The findings under the defaults, and under every alternative of every reading:
    metric readings on ``data``, parameter readings on their own runs (``alternates``)."""
    readings = study.readings(params)
    roles = metric_roles(readings)
    findings = study.findings(params)
    base = [judge_finding(f, data, params, roles) for f in findings]
    rows: list[RobustnessResult] = []
    for reading in readings:
        if reading.kind == "metric":
            for alt in reading.alternatives[1:]:
                alt_roles = metric_roles(readings, {reading.id: alt.name})
                for f, b in zip(findings, base, strict=True):
                    res = judge_finding(f, data, params, alt_roles)
                    rows.append(_row(f, reading, alt, b, res))
        else:
            for r, alt, alt_params, alt_data in alternates:
                if r.id != reading.id:
                    continue
                for f, b in zip(findings, base, strict=True):
                    res = judge_finding(f, alt_data, alt_params, roles)
                    rows.append(_row(f, reading, alt, b, res))
    return base, rows


def missing_under_alternatives(
    base: Sequence[FindingResult], rows: Sequence[RobustnessResult]
) -> list[str]:
    """``finding under reading = alternative`` for every finding the defaults judged
    (any verdict but *no data*) that has no data under an alternative: a silent hole in the
    robustness table (a run that failed, a metric an alternative does not produce)."""
    judged = {b.finding.id for b in base if b.verdict != "no data"}
    return [
        f"{r.finding} under {r.reading} = {r.alternative}"
        for r in rows
        if r.finding in judged and r.verdict == "no data"
    ]


def _row(
    f: Finding, reading: Reading, alt: Alternative, b: FindingResult, res: FindingResult
) -> RobustnessResult:
    return RobustnessResult(
        f.id,
        reading.id,
        alt.name,
        b.verdict,
        res.verdict,
        robustness_outcome(b.verdict, res.verdict),
        _cells_text(res),
        _cell_names(res, "does not hold"),
        _cell_names(res, "n.s."),
    )


def _cell_names(res: FindingResult, outcome: Verdict) -> tuple[str, ...]:
    """The labels of ``res``'s cells judged ``outcome``, in the finding's order."""
    return tuple(c.cell.label() for c in res.cells if c.outcome == outcome)


# ---------------------------------------------------------------------------
# Report: HTML sections and CSV
# ---------------------------------------------------------------------------


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _same_point(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)


def _same(a: Any, b: Any) -> bool:
    from ecnsim.studies._base import _same as same

    return a is not None and b is not None and same(a, b)


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def findings_frames(
    base: Sequence[FindingResult], rows: Sequence[RobustnessResult]
) -> dict[str, pd.DataFrame]:
    """``findings``, ``findings_cells`` and (with robustness) ``robustness`` as tables."""
    import pandas as pd

    out = {
        "findings": pd.DataFrame(
            [
                {
                    "finding": r.finding.id,
                    "statement": r.finding.statement,
                    "section": r.finding.section,
                    "verdict": r.verdict,
                    "quantifier": r.finding.quantifier_text,
                    "cells_hold": r.held,
                    "cells_not": r.not_held,
                    "cells_ns": r.not_significant,
                    "significance": r.significance,
                }
                for r in base
            ],
            columns=[
                "finding",
                "statement",
                "section",
                "verdict",
                "quantifier",
                "cells_hold",
                "cells_not",
                "cells_ns",
                "significance",
            ],
        ),
        "findings_cells": pd.DataFrame(
            [
                {
                    "finding": r.finding.id,
                    "cell": c.cell.label(),
                    "column": c.column,
                    "seeds": c.seeds,
                    "value": c.value,
                    "reference": c.reference,
                    "diff": c.diff,
                    "ci95": c.ci,
                    "outcome": c.outcome,
                }
                for r in base
                for c in r.cells
            ],
            columns=[
                "finding",
                "cell",
                "column",
                "seeds",
                "value",
                "reference",
                "diff",
                "ci95",
                "outcome",
            ],
        ),
    }
    if rows:
        out["robustness"] = pd.DataFrame(
            [
                {
                    **r.__dict__,
                    "failing_cells": "; ".join(r.failing_cells),
                    "ns_cells": "; ".join(r.ns_cells),
                }
                for r in rows
            ]
        )
    return out


def _cell_line(c: CellResult) -> str:
    if c.outcome == "no data":
        return f"{c.cell.label()}: no data"
    ci = "" if math.isnan(c.ci) else f" ± {c.ci:.3g}"
    return (
        f"{c.cell.label()} [{c.column}]: {c.value:.4g} vs {c.reference:.4g} "
        f"(difference {c.diff:+.3g}{ci}) → {c.outcome}"
    )


def findings_html(
    base: Sequence[FindingResult],
    rows: Sequence[RobustnessResult] | None,
    readings: Sequence[Reading],
) -> list[str]:
    """The report's findings table, robustness table (when it ran) and readings list."""
    s: list[str] = ["<h2>The source's findings</h2>"]
    if not base:
        s.append('<p class="note">This study declares no findings yet.</p>')
        return s
    s.append(
        '<p class="note">Each finding is a direction or an ordering the source states, judged '
        "on this report's own runs: per cell, the paired difference over seeds and its 95 % "
        "Student-t interval, signed so that a positive difference goes the stated way "
        "(holds: the interval excludes 0 on that side; does not hold: on the other; n.s.: "
        "neither; a cell on changes compares the paired change at each side, seed by seed); "
        "with one seed the sign decides and nothing is "
        "significant. A finding holds when its quantifier's share of cells holds. CSV: "
        "<code>tables/findings.csv</code>, every cell in "
        "<code>tables/findings_cells.csv</code>.</p>"
    )
    head = ["finding", "source section", "verdict", "significance", "cells judged on"]
    body = []
    for r in base:
        lines = "".join(f"<li>{_esc(_cell_line(c))}</li>" for c in r.cells)
        summary = f"{_esc(r.finding.quantifier_text)}: {_esc(_cells_text(r))}"
        note = f'<br><span class="note">{_esc(r.finding.note)}</span>' if r.finding.note else ""
        body.append(
            "<tr>"
            f'<td class="l"><b>{_esc(r.finding.id)}</b> {_esc(r.finding.statement)}{note}</td>'
            f'<td class="l">{_esc(r.finding.section)}</td>'
            f'<td class="l"><b>{_esc(r.verdict)}</b></td>'
            f'<td class="l">{_esc(r.significance)}</td>'
            f'<td class="l"><details><summary>{summary}</summary><ul>{lines}</ul></details></td>'
            "</tr>"
        )
    s.append(_table(head, body))
    if rows:
        s.append("<h3>Robustness: each finding under every reading</h3>")
        s.append(
            '<p class="note">One reading at a time changed from its default (the others at '
            "theirs); each cell is the finding's verdict under that alternative, and "
            "<b>same</b> (the default's verdict again), <b>flips</b> (the other verdict) or "
            "<b>n.s.</b> (none), with the cells that do not hold or are n.s. under it named "
            "(click). Parameter readings ran the findings' points again (same "
            "store); metric readings re-read the same runs. CSV: "
            "<code>tables/robustness.csv</code> (<code>failing_cells</code>, "
            "<code>ns_cells</code>).</p>"
        )
        cols = list(dict.fromkeys((r.reading, r.alternative) for r in rows))
        head = ["finding", "default", *[f"{rd}: {alt}" for rd, alt in cols]]
        by = {(r.finding, r.reading, r.alternative): r for r in rows}
        body = []
        for b in base:
            row = [
                f'<td class="l"><b>{_esc(b.finding.id)}</b></td>',
                f'<td class="l">{_esc(b.verdict)}</td>',
            ]
            for rd, alt in cols:
                hit = by.get((b.finding.id, rd, alt))
                if hit is None:
                    row.append("<td></td>")
                    continue
                text = (
                    hit.outcome
                    if hit.outcome in ("n.s.", "no data")
                    else f"{hit.verdict} ({hit.outcome})"
                )
                style = ' style="background:#fde2e2"' if hit.outcome == "flips" else ""
                named = [
                    f"<li>{_esc(label)}: {what}</li>"
                    for labels, what in (
                        (hit.failing_cells, "does not hold"),
                        (hit.ns_cells, "n.s."),
                    )
                    for label in labels
                ]
                shown = (
                    f"<details><summary>{_esc(text)}</summary><ul>{''.join(named)}</ul></details>"
                    if named
                    else _esc(text)
                )
                row.append(f'<td class="l"{style} title="{_esc(hit.cells)}">{shown}</td>')
            body.append(f"<tr>{''.join(row)}</tr>")
        s.append(_table(head, body))
        lost = missing_under_alternatives(base, rows)
        if lost:
            items = "".join(f"<li>{_esc(t)}</li>" for t in lost)
            s.append(
                '<p class="warn"><b>Warning:</b> the defaults judged these findings, but an '
                "alternative has no data for them: its runs failed, or did not produce the "
                "columns the finding reads. That is a defect to find, not a result.</p>"
                f"<ul>{items}</ul>"
            )
    if readings:
        s.append("<h3>Readings: where the source is ambiguous</h3>")
        head = ["reading", "alternative", "evidence", "applies as"]
        body = []
        for reading in readings:
            for i, option in enumerate(reading.alternatives):
                how = ", ".join(
                    f"{k} = {v}" for k, v in {**option.settings, **option.metrics}.items()
                )
                first = (
                    f'<td class="l" rowspan="{len(reading.alternatives)}"><b>'
                    f"{_esc(reading.id)}</b>: {_esc(reading.question)}</td>"
                    if i == 0
                    else ""
                )
                name = _esc(option.name) + (" (default)" if i == 0 else "")
                body.append(
                    f'<tr>{first}<td class="l">{name}</td><td class="l">'
                    f'{_esc(option.evidence)}</td><td class="l">{_esc(how)}</td></tr>'
                )
        s.append(_table(head, body))
        if rows is None:
            s.append(
                '<p class="note">Robustness not run: <code>ecnsim study run NAME '
                "--robustness</code> judges every finding under each alternative.</p>"
            )
    return s


def _table(head: Sequence[str], body: Sequence[str]) -> str:
    th = "".join(f'<th class="l">{_esc(h)}</th>' for h in head)
    rows = "".join(body)
    return (
        f'<div class="scroll"><table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody>'
        "</table></div>"
    )


def show_lines(study: Study, params: Any) -> list[str]:
    """``ecnsim study show``'s findings and readings."""
    lines: list[str] = []
    findings = study.findings(params)
    if findings:
        lines.append("\nFindings of the source (judged in every report):")
        for f in findings:
            lines.append(f"  {f.id}. {f.statement} ({f.section}; {f.quantifier_text})")
    readings = study.readings(params)
    if readings:
        lines.append("\nReadings (--robustness judges every finding under each alternative):")
        for r in readings:
            lines.append(f"  {r.id}: {r.question} [{r.applies()}]")
            for i, a in enumerate(r.alternatives):
                how = ", ".join(f"{k}={v}" for k, v in {**a.settings, **a.metrics}.items())
                tag = " (default)" if i == 0 else ""
                lines.append(f"    - {a.name}{tag} [{how}]: {a.evidence}")
    return lines


def report_findings(run: StudyRun, data: StudyData) -> tuple[list[str], dict[str, Any]]:
    """Judge the findings of ``run`` (and, when it ran, their robustness), write
    ``tables/findings.csv``, ``findings_cells.csv`` and ``robustness.csv`` into
    ``run.out`` (listed in ``run.tables``); the report's HTML and ``study.json``'s part."""
    from ecnsim.studies._base import StudyData as Data

    study, params = run.study, run.params
    readings = study.readings(params)
    if run.robustness is None:
        roles = metric_roles(readings)
        base = [judge_finding(f, data, params, roles) for f in study.findings(params)]
        rows: list[RobustnessResult] = []
    else:
        alternates = []
        for rr in run.robustness:
            pilot = (
                None
                if rr.calibration is None
                else Data(
                    study,
                    rr.calibration.plan,
                    rr.calibration.sweep.store,
                    reads=data.reads,
                    arrived=data.arrived,
                )
            )
            alt_data = Data(
                study, rr.plan, rr.sweep.store, pilot=pilot, reads=data.reads, arrived=data.arrived
            )
            alternates.append((rr.reading, rr.alternative, rr.params, alt_data))
        base, rows = robustness(study, params, data, alternates)
    run.robustness_missing = missing_under_alternatives(base, rows)
    frames = findings_frames(base, rows) if base else {}
    for name, frame in frames.items():
        path = run.out / "tables" / f"{name}.csv"
        frame.to_csv(path, index=False, float_format="%.6g")
        run.tables[name] = path
    info = {
        "findings": [
            {
                "finding": r.finding.id,
                "section": r.finding.section,
                "verdict": r.verdict,
                "significance": r.significance,
                "cells": _cells_text(r),
            }
            for r in base
        ],
        "robustness": None
        if run.robustness is None
        else [
            {
                "finding": r.finding,
                "reading": r.reading,
                "alternative": r.alternative,
                "verdict": r.verdict,
                "outcome": r.outcome,
                "failing_cells": list(r.failing_cells),
            }
            for r in rows
        ],
        "robustness_missing": run.robustness_missing,
        "robustness_runs": None
        if run.robustness is None
        else {
            f"{rr.reading.id}: {rr.alternative.name}": {
                "planned": len(rr.plan.tasks()),
                "run_now": rr.sweep.ran,
                "failed": len(rr.sweep.failures),
            }
            for rr in run.robustness
        },
    }
    return findings_html(base, None if run.robustness is None else rows, readings), info
