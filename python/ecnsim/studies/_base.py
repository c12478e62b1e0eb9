"""The study machinery: what a study module provides, and how a study is planned, run and read.

A *study* reproduces one published experiment (``docs/studies/STUDIES.md``). Its
module under :mod:`ecnsim.studies` defines a :class:`Study` subclass with:

- ``Params``: a frozen dataclass of every input, with the source's values as
  defaults (and ``variants``: named sets of values, e.g. a later paper's);
- :meth:`Study.choices`: every reading of an ambiguous source, with its reason
  and the parameter that changes it;
- :meth:`Study.grid` and :meth:`Study.scenario`: the points and the scenario
  of one point;
- :meth:`Study.job` and :meth:`Study.derive`: what each run reduces to, computed
  in the worker right after the run (small tables: one row of metrics, per-group
  rows, series for the figures), so the store never holds per-flow series it
  does not need and a re-render never re-reads them;
- :meth:`Study.tables` and :meth:`Study.figures`: the source's tables (laid out
  as the source lays them out) and figures, from the derived data of every run;
- optionally :meth:`Study.calibration`: a pilot stage whose runs choose
  parameters of the other runs (a rule of the source such as "keep RED's
  average between the thresholds"), run and stored like any other runs.

:func:`run_study` runs the pilot stage first if the study has one
(:func:`calibrate_study`), then plans every run with
:func:`ecnsim.sweep.plan_runs` (so each scenario is checked by the core
first), runs what the store lacks with
:func:`ecnsim.sweep.run_sweep` (serial, a process pool or Dask; interrupted
studies resume), then renders CSV tables, PNG and SVG figures and one
self-contained ``report.html``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from ecnsim.exceptions import SpecError
from ecnsim.scenario.paths import PathError, parse_path, parse_value, set_paths, split_assignment
from ecnsim.scenario.spec import Scenario
from ecnsim.sweep.spec import Plan, RunJob, plan_runs
from ecnsim.sweep.store import canonical_json

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from matplotlib.figure import Figure

    from ecnsim.studies.findings import Alternative, Finding, Reading
    from ecnsim.studies.render import Deferred
    from ecnsim.sweep.execute import ProgressCallback, SweepResult
    from ecnsim.sweep.store import Store

__all__ = [
    "Calibration",
    "Choice",
    "EmulatedRun",
    "Figures",
    "RobustnessRun",
    "Study",
    "StudyData",
    "StudyError",
    "StudyParams",
    "StudyRun",
    "StudyTable",
    "apply_settings",
    "calibrate_study",
    "filter_points",
    "parse_only",
    "parse_setting",
    "plan_study",
    "resolve_params",
    "run_study",
]


class StudyError(SpecError):
    """A bad study name, parameter, setting or filter; the message names it and what is allowed.

    A :class:`~ecnsim.SpecError` (so also a ``ValueError``): the command line reports it as
    ``error: ...`` with exit code 2.
    """


# ---------------------------------------------------------------------------
# What a study module provides
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One reading of an ambiguous source: the question, the answer taken, why, and its knob."""

    topic: str
    choice: str
    reason: str
    #: The study parameter (or scenario path) that changes it, if any.
    parameter: str | None = None


@dataclass(frozen=True)
class StudyParams:
    """Fields every study has; a study's ``Params`` subclasses this.

    ``seeds``: runs per point (seeds 1..``seeds``), for confidence intervals.
    ``scenario_set``: scenario paths set in every point's scenario after the
    study built it (``--set tcp.min_rto=1s``), recorded in the report.
    """

    seeds: int = 5
    scenario_set: tuple[tuple[str, Any], ...] = ()


P = TypeVar("P", bound=StudyParams)


@dataclass
class StudyTable:
    """A table of a study, laid out as its source lays it out.

    ``mean`` holds the values (rows and columns as in the source; columns
    may be a MultiIndex), ``ci`` the matching confidence-interval
    half-widths (or None), ``unit`` the unit of every cell.
    """

    title: str
    mean: pd.DataFrame
    ci: pd.DataFrame | None = None
    unit: str = ""
    note: str = ""
    #: Significant digits shown in the report.
    digits: int = 4


#: ``{name: (figure, caption)}``; a figure may be a
#: :class:`~ecnsim.studies.render.Deferred`, built where it is drawn.
Figures = dict[str, tuple["Figure | Deferred", str]]


class Study(ABC):
    """A reproduction of one published study. Subclasses set the class attributes and methods."""

    #: Command-line name (``ecnsim study run NAME``).
    name: ClassVar[str]
    #: One line: what the study compares.
    title: ClassVar[str]
    #: The source it reproduces (authors, title, venue, year; section).
    source: ClassVar[str]
    #: The parameters dataclass (a :class:`StudyParams` subclass).
    Params: ClassVar[type[StudyParams]]
    #: Named sets of parameter values (``--set variant=NAME`` applies one).
    variants: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: Bump when :meth:`derive` changes what it computes: stored runs are then derived again.
    derive_version: ClassVar[int] = 1
    #: Columns of derived tables stored under an earlier name: ``{old: new}``, applied when
    #: the store is read (a rename changes no value, so it needs no new ``derive_version``).
    derived_renames: ClassVar[Mapping[str, str]] = {}
    #: Seconds to render the report of the default grid once every run is in the store
    #: (measured: the CPU time of a second `ecnsim study run NAME`, which only renders;
    #: docs/performance.md, "Study run times"). 0 leaves rendering out of the estimates.
    render_cost_s: ClassVar[float] = 0.0
    #: The full study's measured wall time of its runs over the sum of :meth:`estimate_seconds`
    #: per worker (1: the per-run model is right as it is). It carries what the per-run model
    #: leaves out (deriving and storing each run, the workers' start) at the measured scale.
    run_cost_scale: ClassVar[float] = 1.0
    #: Seconds per run of the planning before any run starts (every scenario built and checked
    #: in the parent process), measured on the full study.
    plan_cost_s_per_run: ClassVar[float] = 0.0
    #: A point axis whose value the study writes into each point's scenario, mapped to the
    #: study parameter(s) that give it: a ``--set`` of that scenario path is refused naming
    #: them (:func:`check_scenario_set`).
    axis_parameters: ClassVar[Mapping[str, str]] = {}
    #: Tables computed from the parameters or the pilot stage alone (not from the study's
    #: runs): an emulated study's report shows them once, not again for the emulated runs.
    shared_tables: ClassVar[tuple[str, ...]] = ()

    # -- parameters -------------------------------------------------------------------

    def quick(self, params: Any) -> Any:
        """The reduced grid of ``--quick``: fewer points, shorter runs, one seed (< 1 min)."""
        return params

    def quick_emulate(self, params: Any) -> Any:
        """The reduced grid of ``--quick --emulate``. Emulated runs take their scenario's
        duration in real time, one after another, so this should add up to about a minute
        of scenario time. Default: :meth:`quick`."""
        return self.quick(params)

    def emulation_notes(self, params: Any) -> list[Choice]:
        """How the study's experiments run with real Linux hosts (``--emulate``), beyond the
        per-parameter TCP mapping: what runs with the closest real setting, what is not
        measured, what is refused. Shown by ``ecnsim study show --emulate`` and the report.
        Default: none."""
        return []

    def placeholder_params(self, params: Any) -> Any:
        """``params`` with whatever a pilot stage chooses filled in by a placeholder, so the
        points can be built (to show their emulation mapping) before any pilot ran.
        Default: ``params``."""
        return params

    @abstractmethod
    def setup(self, params: Any) -> list[tuple[str, str]]:
        """The setup as ``(parameter, value)`` rows, in the source's terms and units."""

    @abstractmethod
    def choices(self, params: Any) -> list[Choice]:
        """Every choice made where the source is ambiguous, with the reason."""

    # -- runs -------------------------------------------------------------------------

    @abstractmethod
    def grid(self, params: Any) -> list[dict[str, Any]]:
        """The points: one dict of axis values per point (``{"n": 30, "mode": "ecn"}``)."""

    @abstractmethod
    def scenario(self, params: Any, point: Mapping[str, Any]) -> Scenario | dict[str, Any]:
        """The scenario of one point (the seed is set per run)."""

    def job(self, params: Any, point: Mapping[str, Any]) -> JobSpec:
        """What to compute from each run of ``point`` (the context :meth:`derive` receives)."""
        return JobSpec(context={})

    @staticmethod
    @abstractmethod
    def derive(
        results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
    ) -> dict[str, pd.DataFrame]:
        """Reduce one run to small tables; runs in the worker, right after the simulation."""

    def estimate_seconds(self, params: Any, point: Mapping[str, Any]) -> float:
        """Estimated wall seconds of one run of ``point`` on one core."""
        return 1.0

    def warnings(self, params: Any, data: StudyData) -> list[str]:
        """What a reader must know before trusting the tables (e.g. points without a steady
        state); each is shown at the top of the report. Default: none."""
        return []

    def findings(self, params: Any) -> list[Finding]:
        """The qualitative findings the source states, as predicates over the study's own
        tables (:mod:`ecnsim.studies.findings`); the report opens with their verdicts.
        Default: none."""
        return []

    def readings(self, params: Any) -> list[Reading]:
        """The choices where the source is ambiguous that can change a finding, each with its
        alternatives and their evidence (:mod:`ecnsim.studies.findings`); ``--robustness``
        judges every finding under each. Default: none."""
        return []

    def calibration(self, params: Any) -> Calibration | None:
        """The pilot stage whose runs choose some of ``params``, or None (the default: none).

        :func:`run_study` runs the pilot points first (through the same store,
        so they are cached and resumable), then calls ``apply`` with their
        derived data and plans the study's points with the parameters it
        returns. The pilot runs use :meth:`derive` too (their ``job`` context
        tells them apart).
        """
        return None

    def derived_columns(
        self, name: str, frame: pd.DataFrame, run_table: Callable[..., pd.DataFrame]
    ) -> pd.DataFrame:
        """Derived table ``name`` of one run with columns added when the store is read.

        Computed from the table's own columns or from the run's stored tables
        (``run_table("flows", columns=[...])``, a table the :class:`JobSpec` keeps; name the
        columns you need, a report reads every run): a new metric over
        runs already stored, without a new ``derive_version`` (which would run them
        again). The default adds none.
        """
        return frame

    # -- rendering --------------------------------------------------------------------

    @abstractmethod
    def tables(self, params: Any, data: StudyData) -> dict[str, StudyTable]:
        """The study's tables, from the derived data of every run."""

    @abstractmethod
    def figures(self, params: Any, data: StudyData) -> Figures:
        """The study's figures, from the derived data of every run."""

    # -- helpers ----------------------------------------------------------------------

    @classmethod
    def hook_name(cls) -> str:
        """``"module:Class.derive"``: how a worker finds :meth:`derive`."""
        return f"{cls.__module__}:{cls.__qualname__}.derive"

    @classmethod
    def docs_path(cls) -> str:
        return f"docs/studies/{cls.name}.md"


@dataclass(frozen=True)
class JobSpec:
    """A study's per-run job: the context of :meth:`Study.derive`, the trace and tables it needs."""

    context: dict[str, Any]
    #: Links whose packet records :meth:`Study.derive` receives (None: no trace).
    trace_links: tuple[int, ...] | None = None
    #: The run's own tables to keep in the store (default: the small per-flow and per-queue ones).
    keep_tables: tuple[str, ...] | None = ("flows", "queues")


@dataclass(frozen=True)
class Calibration:
    """A study's pilot stage: runs whose derived data choose parameters of its other runs.

    ``points`` are the pilot points (dicts of axis values), ``scenario`` and
    ``job`` build each one's scenario and :class:`JobSpec` (as
    :meth:`Study.scenario` and :meth:`Study.job` do for the study's points),
    each run with every seed of ``seeds``. ``apply`` receives the pilot runs'
    :class:`StudyData` and returns the study's parameters with the chosen
    values set; it must depend on nothing but that data and the parameters,
    so a study re-rendered from its store chooses the same values.
    """

    points: list[dict[str, Any]]
    scenario: Callable[[Mapping[str, Any]], Scenario | dict[str, Any]]
    job: Callable[[Mapping[str, Any]], JobSpec]
    apply: Callable[[StudyData], Any]
    seeds: tuple[int, ...] = (1,)


# ---------------------------------------------------------------------------
# Parameters from the command line: --set, variants, --quick, --seeds
# ---------------------------------------------------------------------------


def resolve_params(
    study: Study,
    settings: Sequence[str] = (),
    *,
    quick: bool = False,
    seeds: int | None = None,
    emulate: bool = False,
) -> Any:
    """The study's parameters: defaults, then a ``variant=...`` setting, ``--quick`` (with
    ``emulate``, the study's :meth:`Study.quick_emulate`), the other settings
    (``PATH=VALUE``), ``--seeds``. Raises :class:`StudyError` naming a bad setting."""
    parsed = [parse_setting(s) for s in settings]
    params = study.Params()
    variant = [v for k, v in parsed if k == "variant"]
    if variant:
        params = apply_settings(study, params, [("variant", variant[-1])])
    if quick:
        params = study.quick_emulate(params) if emulate else study.quick(params)
    params = apply_settings(study, params, [(k, v) for k, v in parsed if k != "variant"])
    if seeds is not None:
        if seeds < 1:
            raise StudyError(f"--seeds must be >= 1, got {seeds}")
        params = dataclasses.replace(params, seeds=seeds)
    check_scenario_set(study, params)
    return params


_MISSING = object()


def _values_at(data: Any, tokens: Sequence[Any]) -> list[Any]:
    """The values at a parsed path in a scenario dict (``_MISSING`` where a part is absent),
    one per element its ``[*]`` or ``[key=value]`` parts match."""
    from ecnsim.scenario.paths import ANY, Select, select_indices

    if not tokens:
        return [data]
    tok, rest = tokens[0], tokens[1:]
    if isinstance(tok, str):
        if not isinstance(data, Mapping) or data.get(tok) is None:
            return [_MISSING]
        return _values_at(data[tok], rest)
    if not isinstance(data, list):
        return [_MISSING]
    if tok is ANY:
        indices: Sequence[int] = range(len(data))
    elif isinstance(tok, Select):
        indices = select_indices(data, tok)
    else:
        indices = [tok] if isinstance(tok, int) and tok < len(data) else []
    return [v for j in indices for v in _values_at(data[j], rest)] or [_MISSING]


def check_scenario_set(study: Study, params: Any) -> None:
    """Refuse a scenario path of ``--set`` whose value the study itself sets per point.

    The study builds every point's scenario from its parameters and then applies
    ``--set``: a path whose value differs between the points of the full grid (before
    ``--only``) is one of the study's axes, so overriding it would make every point run the
    same while the tables still label them apart. The error names the point axes that set
    it and the study's own parameter (:attr:`Study.axis_parameters`).
    """
    if not params.scenario_set:
        return
    try:
        built_params = study.placeholder_params(params)
        points = study.grid(built_params)
        scenarios = []
        for point in points:
            built = study.scenario(built_params, point)
            scenarios.append(built.to_dict() if isinstance(built, Scenario) else dict(built))
    except Exception:  # the plan builds them again and reports what fails
        return
    for path, _ in params.scenario_set:
        tokens = parse_path(path)
        # The distinct values a point's scenario holds there (a `[*]` over flows whose number is
        # itself an axis matches more elements at some points: that alone is no conflict).
        seen = [
            canonical_json(
                sorted(
                    {canonical_json(None if v is _MISSING else v) for v in _values_at(sc, tokens)}
                )
            )
            for sc in scenarios
        ]
        if len(set(seen)) < 2:
            continue
        # The axes that decide the value: equal axis value -> equal path value, and varying.
        axes = sorted({k for p in points for k in p})
        deciding = []
        for axis in axes:
            by_value: dict[str, set[str]] = {}
            for point, value in zip(points, seen, strict=True):
                by_value.setdefault(canonical_json(point.get(axis)), set()).add(value)
            if len(by_value) > 1 and all(len(v) == 1 for v in by_value.values()):
                deciding.append(axis)
        named = [study.axis_parameters[a] for a in deciding if a in study.axis_parameters]
        if named:
            instead = f"set the study's {' or '.join(named)} instead"
        elif deciding:
            instead = f"it follows the points' {' / '.join(deciding)} axis; change that instead"
        else:
            instead = "the study's parameters choose it per point"
        raise StudyError(
            f"--set {path}: study {study.name!r} sets {path} per point "
            f"({len(set(seen))} different values), so this would run every point alike under "
            f"labels that differ; {instead}"
        )


def parse_setting(text: str) -> tuple[str, str]:
    """``"PATH=VALUE"`` split at the first ``=`` outside brackets."""
    parts = split_assignment(text)
    if parts is None or not parts[0]:
        raise StudyError(f"--set {text!r}: write PATH=VALUE (e.g. max_p=0.1 or tcp.min_rto=1s)")
    return parts


def apply_settings(study: Study, params: Any, settings: Sequence[tuple[str, Any]]) -> Any:
    """``params`` with each ``(path, value)`` applied.

    A path naming a field of the study's parameters sets it (the value is
    converted to the field's type, or refused naming the allowed values);
    ``variant=NAME`` applies a named variant; any other path is a scenario
    path (``tcp.min_rto``, ``links[0].queue.w_q``) set in every point's
    scenario (``scenario.`` may prefix it).
    """
    fields = {f.name: f for f in dataclasses.fields(params) if f.name != "scenario_set"}
    hints = typing.get_type_hints(type(params))
    changes: dict[str, Any] = {}
    scenario_set = list(params.scenario_set)
    for path, raw in settings:
        if path == "variant":
            name = _convert_text(raw) if isinstance(raw, str) else raw
            if name not in study.variants:
                allowed = ", ".join(sorted(study.variants)) or "(none)"
                raise StudyError(f"variant={name!r}: unknown variant; allowed: {allowed}")
            for k, v in study.variants[name].items():
                changes[k] = _convert(f"variant {name}: {k}", v, hints[k])
            if "variant" in fields:
                changes["variant"] = name
            continue
        if path in fields:
            changes[path] = _convert(path, raw, hints[path])
            continue
        spath = path.removeprefix("scenario.")
        try:
            parse_path(spath)
        except ValueError as e:
            raise StudyError(f"--set {path}: {e}") from None
        if "." not in spath and "[" not in spath:
            allowed = ", ".join(sorted(fields))
            raise StudyError(
                f"--set {path}: not a parameter of study {study.name!r}; its parameters: "
                f"{allowed} (a scenario path such as tcp.min_rto is set in every point)"
            )
        value = _convert_text(raw) if isinstance(raw, str) else raw
        scenario_set = [(p, v) for p, v in scenario_set if p != spath] + [(spath, value)]
    if scenario_set != list(params.scenario_set):
        changes["scenario_set"] = tuple(scenario_set)
    try:
        out = dataclasses.replace(params, **changes)
    except (TypeError, ValueError) as e:
        raise StudyError(str(e)) from None
    check = getattr(out, "check", None)
    if callable(check):
        try:
            check()
        except ValueError as e:
            raise StudyError(str(e)) from None
    return out


def _convert_text(text: str) -> Any:
    """A setting's text as a value (:func:`~ecnsim.scenario.paths.parse_value`); a value
    nested beyond what is taken is a :class:`StudyError`."""
    try:
        return parse_value(text)
    except ValueError as e:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise StudyError(f"{shown!r}: {e}") from None


def _convert(name: str, raw: Any, hint: Any) -> Any:
    """``raw`` (text or a value) as a value of type ``hint``, or a StudyError naming ``name``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple:
        elem = args[0] if args else Any
        if isinstance(raw, str):
            value = _convert_text(raw)
            if not isinstance(value, list):
                value = [_convert_text(p.strip()) for p in raw.split(",") if p.strip()]
        else:
            value = raw
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            value = [value]
        if not value:
            raise StudyError(f"{name}: needs at least one value")
        return tuple(_convert(f"{name}[{i}]", v, elem) for i, v in enumerate(value))
    if origin is Literal:
        value = _convert_text(raw) if isinstance(raw, str) else raw
        if value not in args:
            allowed = ", ".join(repr(a) for a in args)
            raise StudyError(f"{name}={value!r}: must be one of {allowed}")
        return value
    if origin in (typing.Union, types.UnionType):
        is_none = raw is None or (isinstance(raw, str) and raw.lower() in ("none", "null"))
        if is_none and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(name, raw, a)
            except StudyError as e:
                errors.append(str(e))
        raise StudyError(errors[-1] if errors else f"{name}: bad value {raw!r}")
    value = _convert_text(raw) if isinstance(raw, str) else raw
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise StudyError(f"{name}={value!r}: must be true or false")
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise StudyError(f"{name}={value!r}: must be an integer")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StudyError(f"{name}={value!r}: must be a number")
        if not math.isfinite(value):
            raise StudyError(f"{name}={value!r}: must be finite")
        return float(value)
    if hint is str:
        return str(raw) if isinstance(raw, str) else str(value)
    return value


# ---------------------------------------------------------------------------
# --only: a subset of the points
# ---------------------------------------------------------------------------


def parse_only(filters: Sequence[str]) -> dict[str, list[Any]]:
    """``["n=30,60", "mode=ecn"]`` as ``{"n": [30, 60], "mode": ["ecn"]}``."""
    out: dict[str, list[Any]] = {}
    for text in filters:
        if not text.strip(" ;"):
            # An empty filter would select every point: refused, as a typo more likely than not.
            raise StudyError(f"--only {text!r}: empty; write AXIS=V1,V2 (e.g. n=30,60 or mode=ecn)")
        for part in text.split(";"):
            if not part.strip():
                continue
            key, sep, values = part.partition("=")
            if not sep or not key.strip() or not values.strip():
                raise StudyError(f"--only {text!r}: write AXIS=V1,V2 (e.g. n=30,60 or mode=ecn)")
            vals = [_convert_text(v.strip()) for v in values.split(",") if v.strip()]
            out.setdefault(key.strip(), []).extend(vals)
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return str(a) == str(b)


def filter_points(
    points: Sequence[dict[str, Any]], only: Mapping[str, Sequence[Any]]
) -> list[dict[str, Any]]:
    """The points whose every filtered axis has one of the given values."""
    if not only:
        return list(points)
    axes = {k for p in points for k in p}
    for key in only:
        if key not in axes:
            raise StudyError(
                f"--only {key}=...: the study's points have no axis {key!r}; "
                f"axes: {', '.join(sorted(axes))}"
            )
    return [p for p in points if all(any(_same(p[k], v) for v in vals) for k, vals in only.items())]


def no_point_left(points: Sequence[dict[str, Any]], only: Mapping[str, Sequence[Any]]) -> str:
    """Why :func:`filter_points` kept none of ``points``: the filters that match no point
    on their own, each with the values its axis takes (or, if each matches some point,
    that no point has them all together)."""

    def takes(key: str) -> str:
        values: list[Any] = []
        for p in points:
            if not any(_same(p[key], v) for v in values):
                values.append(p[key])
        return f"{key} takes {', '.join(map(str, values))}"

    def given(key: str) -> str:
        return f"{key}={','.join(map(str, only[key]))}"

    alone = [k for k in only if not filter_points(points, {k: only[k]})]
    if alone:
        return "no point is left after --only: " + "; ".join(
            f"no point has {given(k)} ({takes(k)})" for k in alone
        )
    return (
        f"no point is left after --only: no point has {' and '.join(map(given, only))} "
        f"together ({'; '.join(takes(k) for k in only)})"
    )


# ---------------------------------------------------------------------------
# Planning and running
# ---------------------------------------------------------------------------


def _job_tag(study: Study, context: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(canonical_json(context).encode("utf-8")).hexdigest()[:12]
    return f"{study.name}.v{study.derive_version}.{digest}"


def study_seeds(params: StudyParams) -> list[int]:
    return list(range(1, params.seeds + 1))


def plan_study(
    study: Study,
    params: Any,
    *,
    only: Mapping[str, Sequence[Any]] | None = None,
    store: str | os.PathLike[str] | None = None,
    mode: str = "simulation",
) -> Plan:
    """Every run of the study (points x seeds), each scenario checked by the core.

    ``mode="emulation"``: the same runs with real Linux hosts (other store keys, the
    plan named ``study-NAME-emulation``), each point checked against what the
    emulation can run.
    """
    points = filter_points(study.grid(params), only or {})
    if not points:
        raise StudyError(no_point_left(study.grid(params), only or {}))
    return _plan_points(
        study,
        params,
        points,
        lambda point: study.scenario(params, point),
        lambda point: study.job(params, point),
        study_seeds(params),
        name=f"study-{study.name}" + ("" if mode == "simulation" else f"-{mode}"),
        store=store,
        mode=mode,
    )


def _plan_points(
    study: Study,
    params: Any,
    points: Sequence[dict[str, Any]],
    scenario_of: Callable[[Mapping[str, Any]], Scenario | dict[str, Any]],
    job_of: Callable[[Mapping[str, Any]], JobSpec],
    seeds: Sequence[int],
    *,
    name: str,
    store: str | os.PathLike[str] | None,
    mode: str = "simulation",
) -> Plan:
    planned = []
    for point in points:
        built = scenario_of(point)
        scenario = built.to_dict() if isinstance(built, Scenario) else dict(built)
        try:
            set_paths(scenario, params.scenario_set)
        except PathError as e:
            raise StudyError(f"--set {e.path}: {e}") from None
        spec = job_of(point)
        job = RunJob(
            hook=study.hook_name(),
            tag=_job_tag(study, spec.context),
            context=spec.context,
            trace_links=spec.trace_links,
            keep_tables=spec.keep_tables,
        )
        planned.append((point, scenario, job))
    return plan_runs(
        name,
        planned,
        seeds,
        spec={"study": study.name, "params": params_dict(params)},
        store=store,
        mode=mode,
    )


@dataclass
class CalibrationRun:
    """What :func:`calibrate_study` ran: the pilot plan and sweep, and the parameters chosen."""

    plan: Plan
    sweep: SweepResult
    params_before: Any
    params: Any


def calibrate_study(
    study: Study,
    params: Any,
    store: Store,
    *,
    workers: int | None = None,
    dask: Any = None,
    progress: ProgressCallback | bool | None = None,
) -> CalibrationRun | None:
    """Run the study's pilot stage (what ``store`` lacks of it) and apply it; None without one.

    Raises :class:`StudyError` if a pilot run failed: the parameters it
    would choose are then unknown, and no study point is planned.
    """
    from ecnsim.sweep.execute import run_sweep

    cal = study.calibration(params)
    if cal is None:
        return None
    if not cal.points:
        raise StudyError(f"study {study.name!r}: its calibration has no pilot point")
    plan = _plan_points(
        study,
        params,
        cal.points,
        cal.scenario,
        cal.job,
        list(cal.seeds),
        name=f"study-{study.name}-pilot",
        store=store.root,
    )
    executor: Literal["auto", "serial", "process", "dask"] = "auto"
    if dask is None and workers == 1:
        executor = "serial"
    sweep = run_sweep(
        plan,
        store,
        jobs=workers,
        executor=executor,
        dask=dask,
        progress=progress,
        raise_if_all_failed=False,
    )
    if sweep.failures:
        first = sweep.failures[0][1]
        raise StudyError(
            f"study {study.name!r}: {len(sweep.failures)} calibration run(s) failed, so the "
            f"parameters they choose are unknown; the first: {first}"
        )
    chosen = cal.apply(StudyData(study, plan, store))
    return CalibrationRun(plan, sweep, params, chosen)


def params_dict(params: Any) -> dict[str, Any]:
    """The parameters as JSON-ready data (tuples as lists)."""
    out: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(params)))
    return out


@dataclass
class StudyRun:
    """What :func:`run_study` did and wrote."""

    study: Study
    params: Any
    plan: Plan
    sweep: SweepResult
    out: Path
    report: Path | None
    tables: dict[str, Path] = field(default_factory=dict)
    figures: dict[str, list[Path]] = field(default_factory=dict)
    render_s: float = math.nan
    #: The pilot stage, for a study with a :meth:`Study.calibration` (``params`` are its output).
    calibration: CalibrationRun | None = None
    #: With ``emulate``: the same points run with real Linux hosts (``plan.mode`` "emulation").
    emulated: EmulatedRun | None = None
    #: With ``robustness``: the findings' points run under each parameter reading's alternative.
    robustness: list[RobustnessRun] | None = None
    #: With ``robustness``: "finding under reading = alternative" for each finding the defaults
    #: judged that has no data under an alternative (the report warns; so does the CLI).
    robustness_missing: list[str] = field(default_factory=list)
    #: The derived tables of the runs this call ran, ``(key, tag, name) -> pyarrow.Table``,
    #: decoded as each run was written (``run_sweep(derived_into=...)``); the report takes
    #: them from here instead of reading their files again (:class:`StudyData`'s ``arrived``).
    arrived: dict[tuple[str, str, str], Any] = field(default_factory=dict)


@dataclass
class RobustnessRun:
    """The runs of one alternative of a parameter reading (``--robustness``)."""

    reading: Reading
    alternative: Alternative
    params: Any
    plan: Plan
    sweep: SweepResult
    calibration: CalibrationRun | None = None


@dataclass
class EmulatedRun:
    """The emulated runs of a study (``ecnsim study run NAME --emulate``)."""

    plan: Plan
    sweep: SweepResult


def run_study(
    study: Study,
    params: Any,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    dask: Any = None,
    only: Mapping[str, Sequence[Any]] | None = None,
    progress: ProgressCallback | bool | None = None,
    render: bool = True,
    emulate: bool = False,
    robustness: bool = False,
    svg: bool = False,
) -> StudyRun:
    """Run every run of the study that ``out/store`` lacks, then write its report into ``out``.

    A study with a :meth:`Study.calibration` runs its pilot points first and
    plans its points with the parameters the pilot chose (``StudyRun.params``).

    ``emulate``: also run every point with real Linux hosts in network
    namespaces through the core's links and queues, in real time
    (``docs/emulation.md``; root). The emulated runs are keyed apart from the
    simulated ones in the store and run one at a time after them (real time
    cannot be shared without distorting it: ``workers`` applies to the
    simulated runs only). The pilot stage stays simulated: it only chooses
    parameters of the network (the queue, which is the core's either way). The
    report puts both side by side. Every point is checked against what the
    emulation can run before anything runs.

    ``robustness``: then, for each alternative of each parameter reading
    (:meth:`Study.readings`, one reading at a time from the defaults), run the
    points the findings' cells use (within ``only``) with that alternative's
    parameters, in the same store (resumable, and a point whose scenario does not
    change is not run again); the report adds the robustness table.

    ``workers``: processes (default: one per core; 1 runs in this process);
    ``dask``: a Dask scheduler address, ``"local"`` or a Client. On Ctrl-C
    the finished runs stay in the store (:class:`ecnsim.sweep.SweepInterrupted`
    is raised) and the next call resumes. Runs that fail are reported and
    the report is still written from the others.

    ``svg``: write each figure as SVG too, beside its PNG (see
    :func:`ecnsim.studies.render.render_study`).
    """
    from ecnsim.sweep.execute import run_sweep
    from ecnsim.sweep.store import Store

    out = Path(out)
    if emulate:
        from ecnsim.emulation import check_environment

        # Root, namespaces, TUN (NamespaceError saying what to do), before anything runs.
        check_environment()
    store = Store(out / "store")
    if robustness:
        from ecnsim.studies.findings import robustness_settings

        # A reading's bad setting is an error before anything runs.
        robustness_settings(study, params)
    calibration = calibrate_study(
        study, params, store, workers=workers, dask=dask, progress=progress
    )
    if calibration is not None:
        params = calibration.params
    plan = plan_study(study, params, only=only, store=store.root)
    emu_plan = None
    if emulate:
        from ecnsim.sweep.spec import SweepSpecError

        try:
            emu_plan = plan_study(study, params, only=only, store=store.root, mode="emulation")
        except SweepSpecError as e:
            raise StudyError(
                f"{e}; `ecnsim study show {study.name} --emulate` lists every point that "
                "cannot be emulated: leave them out with --only"
            ) from None
    executor: Literal["auto", "serial", "process", "dask"] = "auto"
    if dask is None and workers == 1:
        executor = "serial"
    # The runs' derived tables are decoded as each run is written, while the others run, and
    # handed to the report (StudyData's `arrived`), which would otherwise read every file again.
    arrived: dict[tuple[str, str, str], Any] = {}
    # Failed runs are reported with the study's own summary (and exit code 1).
    result = run_sweep(
        plan,
        store,
        jobs=workers,
        executor=executor,
        dask=dask,
        progress=progress,
        raise_if_all_failed=False,
        derived_into=arrived,
    )
    emulated = None
    if emu_plan is not None:
        emulated = EmulatedRun(
            emu_plan,
            run_sweep(
                emu_plan,
                store,
                jobs=1,
                executor="serial",
                progress=progress,
                raise_if_all_failed=False,
            ),
        )
    run = StudyRun(
        study,
        params,
        plan,
        result,
        out,
        None,
        calibration=calibration,
        emulated=emulated,
        arrived=arrived,
    )
    if robustness:
        run.robustness = _run_robustness(
            study,
            params,
            store,
            only or {},
            workers=workers,
            dask=dask,
            progress=progress,
            done=_done_keys(result),
            arrived=arrived,
        )
    if render:
        from ecnsim.studies.render import render_study

        render_study(run, svg=svg)
    return run


def _run_robustness(
    study: Study,
    params: Any,
    store: Store,
    only: Mapping[str, Sequence[Any]],
    *,
    workers: int | None,
    dask: Any,
    progress: ProgressCallback | bool | None,
    done: set[str],
    arrived: dict[tuple[str, str, str], Any] | None = None,
) -> list[RobustnessRun]:
    """Run the findings' points under each parameter reading's alternatives.

    ``done``: keys this call has already seen complete (checked or written); a run of an
    alternative whose scenario is one of them is not hashed again. ``arrived``: receives the
    derived tables of the runs written now (``run_sweep``'s ``derived_into``).
    """
    from ecnsim.studies.findings import finding_points, robustness_settings
    from ecnsim.sweep.execute import run_sweep

    executor: Literal["auto", "serial", "process", "dask"] = "auto"
    if dask is None and workers == 1:
        executor = "serial"
    out = []
    for reading, alt, alt_params in robustness_settings(study, params):
        cal = calibrate_study(
            study, alt_params, store, workers=workers, dask=dask, progress=progress
        )
        if cal is not None:
            alt_params = cal.params
        points = finding_points(study, alt_params)
        if points and only:
            points = filter_points(points, only)
        if not points:
            continue
        plan = _plan_points(
            study,
            alt_params,
            points,
            functools.partial(study.scenario, alt_params),
            functools.partial(study.job, alt_params),
            study_seeds(alt_params),
            name=f"study-{study.name}-robustness-{slug(reading.id)}-{slug(alt.name)}",
            store=store.root,
        )
        sweep = run_sweep(
            plan,
            store,
            jobs=workers,
            executor=executor,
            dask=dask,
            progress=progress,
            verified=done,
            derived_into=arrived,
        )
        done |= _done_keys(sweep)
        out.append(RobustnessRun(reading, alt, alt_params, plan, sweep, cal))
    return out


def _done_keys(sweep: SweepResult) -> set[str]:
    """The keys of ``sweep``'s runs that are complete in its store now (checked in full or
    written by it); none if it was interrupted."""
    if sweep.interrupted:
        return set()
    failed = {task.key for task, _msg in sweep.failures}
    return {k for k in sweep.keys if k not in failed}


# ---------------------------------------------------------------------------
# Reading a study's derived data
# ---------------------------------------------------------------------------


def _axis_column(values: Sequence[tuple[Any, int]], index: pd.Index) -> pd.Series:
    """One axis over stacked runs: each run's ``(value, rows)``, repeated over its rows, with
    the dtype stacking per-run constant columns gives (a None anywhere keeps objects; NaN
    stands where a run's point has no such axis)."""
    import pandas as pd

    flat = [v for v, n in values for _ in range(n)]
    column: pd.Series = pd.Series(flat, index=index, dtype=object)
    if any(v is None for v, _ in values):
        return column
    typed: pd.Series = column.infer_objects()
    return typed


class StudyData:
    """The derived tables of every run of a study, with each run's point and seed as columns."""

    def __init__(
        self,
        study: Study,
        plan: Plan,
        store: Store,
        *,
        pilot: StudyData | None = None,
        reads: dict[tuple[str, str, str], Any] | None = None,
        arrived: dict[tuple[str, str, str], Any] | None = None,
    ) -> None:
        self.study = study
        self.plan = plan
        self.store = store
        #: Derived tables already in memory, ``(key, tag, name) -> pyarrow.Table`` as a read of
        #: the stored file gives it (the runs a :func:`run_study` call has just written:
        #: :attr:`StudyRun.arrived`); each is taken out when read, then kept as :attr:`reads`
        #: keeps what is read from files. Shared with the other StudyData of one report.
        self.arrived = arrived
        #: The pilot stage's data, for a study with a :meth:`Study.calibration` (else None).
        self.pilot = pilot
        #: Each run's derived tables as read, by ``(key, tag, name)``, None where the run has
        #: no such table (an Arrow table as stored; for a study with its own
        #: :meth:`Study.derived_columns`, a DataFrame renamed and with those columns added):
        #: given, the dict is shared with the other StudyData of one report (a robustness
        #: alternative's runs that are also the defaults' are then read once); None keeps none.
        self.reads = reads
        self._cache: dict[str, pd.DataFrame] = {}
        self._runs: list[tuple[int, int, str, str]] | None = None
        #: Each stored run's derived files, ``{key: {tag: {name: path}}}`` (its manifest,
        #: read once by :meth:`runs`).
        self._derived_files: dict[str, dict[str, dict[str, Path]]] = {}
        self._masks: dict[tuple[str, str, str, str], np.ndarray] = {}
        self.axes = list(plan.params)

    def runs(self) -> list[tuple[int, int, str, str]]:
        """``(point, seed, key, tag)`` of every planned run whose derived data is stored
        (looked up once: the store is not written while a report is read from it)."""
        if self._runs is None:
            self._runs = []
            for r in self.plan.runs:
                assert r.job is not None
                files = self._derived_files.get(r.key)
                if files is None:
                    files = self._derived_files[r.key] = self.store.derived_files(r.key)
                if r.job.tag in files:
                    self._runs.append((r.point, r.seed, r.key, r.job.tag))
        return list(self._runs)

    def _arrived(self, key: str, tag: str, name: str) -> pa.Table | None:
        """Derived table ``name`` of one run if it is in :attr:`arrived` (taken out), else None."""
        if not self.arrived:
            return None
        table: pa.Table | None = self.arrived.pop((key, tag, name), None)
        return table

    def _run_arrow(self, key: str, tag: str, name: str) -> pa.Table | None:
        """Derived table ``name`` of one run as stored (an Arrow table); None if it has none."""
        if self.reads is not None and (key, tag, name) in self.reads:
            table: pa.Table | None = self.reads[(key, tag, name)]
            return table
        import pyarrow.parquet as pq

        path = self._derived_files.get(key, {}).get(tag, {}).get(name)
        table = self._arrived(key, tag, name)
        if table is None and path is not None:
            table = pq.ParquetFile(path).read()
        if self.reads is not None:
            self.reads[(key, tag, name)] = table
        return table

    def _read_ahead(self, name: str) -> dict[tuple[str, str], pa.Table | None]:
        """Derived table ``name`` of every stored run not read yet, read several at a time:
        pyarrow releases the GIL while it reads and decodes a file, so the reads of many small
        files overlap (reading rfc2415's 1,250 one at a time was most of its render). The
        tables are those :meth:`_run_arrow` reads, kept in :attr:`reads` as it keeps them;
        the order of the runs is the caller's, so nothing depends on which read ends first."""
        from concurrent.futures import ThreadPoolExecutor

        import pyarrow.parquet as pq

        todo: list[tuple[str, str, Path]] = []
        read: dict[tuple[str, str], pa.Table | None] = {}
        for _point, _seed, key, tag in self.runs():
            if self.reads is not None and (key, tag, name) in self.reads:
                continue
            path = self._derived_files.get(key, {}).get(tag, {}).get(name)
            if path is None:
                continue
            known = self._arrived(key, tag, name)
            if known is not None:
                read[(key, tag)] = known
                if self.reads is not None:
                    self.reads[(key, tag, name)] = known
            else:
                todo.append((key, tag, path))
        if len(todo) < 8:
            return read
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1) * 2) as pool:
            tables = list(pool.map(lambda item: pq.ParquetFile(item[2]).read(), todo))
        for (key, tag, _path), table in zip(todo, tables, strict=True):
            read[(key, tag)] = table
            if self.reads is not None:
                self.reads[(key, tag, name)] = table
        return read

    def _stacked(self, tables: Sequence[pa.Table]) -> pd.DataFrame:
        """The runs' tables converted to pandas and stacked in their order, renamed: the frame
        ``pd.concat`` of each one's ``to_pandas()`` gives (the same values, dtypes and order),
        with one conversion per schema instead of one per run (the per-run conversion was most
        of reading a large study's store).

        Runs whose tables share a schema (names, types and pandas metadata) are converted
        together; each group's frame has the dtypes each of its runs' frames has, so stacking
        the groups resolves every column's dtype as stacking the runs did; the rows are then
        put back in the runs' order.
        """
        import pandas as pd
        import pyarrow as pa

        groups: dict[bytes, list[int]] = {}
        for i, t in enumerate(tables):
            groups.setdefault(t.schema.serialize().to_pybytes(), []).append(i)
        frames = [
            self._renamed(pa.concat_tables([tables[i] for i in members]).to_pandas())
            for members in groups.values()
        ]
        if len(frames) == 1:
            body = frames[0]
        else:
            body = pd.concat(frames, ignore_index=True)
            # Row offsets of each run inside the stacked groups, then the runs' order.
            start: dict[int, int] = {}
            offset = 0
            for members in groups.values():
                for i in members:
                    start[i] = offset
                    offset += tables[i].num_rows
            import numpy as np

            order = np.concatenate(
                [
                    np.arange(start[i], start[i] + tables[i].num_rows, dtype=np.int64)
                    for i in range(len(tables))
                ]
            )
            body = body.take(order).reset_index(drop=True)
        return body

    def _renamed(self, df: pd.DataFrame) -> pd.DataFrame:
        """``df`` with the columns of :attr:`Study.derived_renames` under their new names."""
        renames = {o: n for o, n in self.study.derived_renames.items() if o in df.columns}
        return df.rename(columns=renames) if renames else df

    def _columns(self, name: str, table: pa.Table) -> list[str]:
        """The columns of a run's table ``name`` once read (renamed)."""
        renames = self.study.derived_renames
        return [renames.get(c, c) for c in table.column_names]

    def _run_frame(self, key: str, tag: str, name: str) -> pd.DataFrame | None:
        """Derived table ``name`` of one run, renamed and with the study's derived columns;
        None if the run has none."""
        if self.reads is not None and (key, tag, name) in self.reads:
            known: pd.DataFrame | None = self.reads[(key, tag, name)]
            return known
        import pyarrow.parquet as pq

        path = self._derived_files.get(key, {}).get(tag, {}).get(name)
        table = None if path is None else self._arrived(key, tag, name)
        if table is None and path is not None:
            table = pq.ParquetFile(path).read()
        df: pd.DataFrame | None = None if table is None else table.to_pandas()
        if df is not None:
            df = self._renamed(df)
            df = self.study.derived_columns(name, df, functools.partial(self.store.read_table, key))
        if self.reads is not None:
            self.reads[(key, tag, name)] = df
        return df

    def frame(self, name: str) -> pd.DataFrame:
        """Derived table ``name`` of every stored run, with the point's axes and ``seed`` first."""
        import pandas as pd

        if name in self._cache:
            return self._cache[name]
        # A study that adds columns per run (Study.derived_columns) gets each run's frame;
        # the others' runs are read as Arrow tables and converted together (_stacked).
        per_run = type(self.study).derived_columns is not Study.derived_columns
        parts: list[Any] = []
        #: Per run: its axes and seed, and its number of rows.
        runs: list[tuple[dict[str, Any], int]] = []
        order: dict[str, None] = {}
        read = {} if per_run else self._read_ahead(name)
        for point, seed, key, tag in self.runs():
            if per_run:
                part = self._run_frame(key, tag, name)
            elif (key, tag) in read:
                part = read[(key, tag)]
            else:
                part = self._run_arrow(key, tag, name)
            if part is None:
                continue
            columns = list(part.columns) if per_run else self._columns(name, part)
            params = self.plan.points[point]
            clash = [k for k in [*params, "seed"] if k in columns]
            if clash:
                raise ValueError(
                    f"study {self.study.name}: derived table {name!r} has columns named like "
                    f"the grid's axes: {', '.join(clash)}; rename them in derive "
                    "(derived_renames for stored runs)"
                )
            order.update(dict.fromkeys([*params, "seed", *columns]))
            runs.append(({**params, "seed": seed}, len(part)))
            parts.append(part)
        if parts:
            # The axes are added once over the stacked runs, not per run (a DataFrame.insert
            # per axis and run was most of a large study's render): the same columns, order
            # and dtypes as stacking runs that each carry their axes.
            body = pd.concat(parts, ignore_index=True) if per_run else self._stacked(parts)
            axes = {
                k: _axis_column([(r.get(k, math.nan), n) for r, n in runs], body.index)
                for k in order
                if k not in body.columns
            }
            stacked = pd.concat([pd.DataFrame(axes, index=body.index), body], axis=1)
            frame: pd.DataFrame = stacked.loc[:, list(order)]
        else:
            frame = pd.DataFrame({c: pd.Series([], dtype="float64") for c in [*self.axes, "seed"]})
        self._cache[name] = frame
        return frame

    def select(self, name: str, where: Mapping[str, Any], columns: Sequence[str]) -> pd.DataFrame:
        """``select_rows(self.frame(name), where)[columns]``: the same rows in the same order,
        through one mask per ``(column, value)`` kept for the next selection (a study's
        findings select hundreds of cells, again under every reading, from the same values);
        no rows if the table lacks a column of ``where`` or ``columns``."""
        import numpy as np

        df = self.frame(name)
        if df.empty or any(c not in df.columns for c in [*where, *columns]):
            none: pd.DataFrame = df.iloc[0:0].loc[:, [c for c in columns if c in df.columns]]
            return none
        mask = np.ones(len(df), dtype=bool)
        for k, v in where.items():
            memo = (name, k, type(v).__name__, repr(v))
            part = self._masks.get(memo)
            if part is None:
                part = self._masks[memo] = column_mask(df, k, v)
            mask &= part
        rows: pd.DataFrame = df.loc[mask, list(columns)]
        return rows

    def aggregate(
        self,
        name: str,
        metrics: Sequence[str],
        *,
        by: Sequence[str] | None = None,
        confidence: float = 0.95,
    ) -> pd.DataFrame:
        """Mean and CI over seeds of ``metrics`` of table ``name`` per point (and extra ``by``).

        Tidy: the ``by`` columns (default: the study's axes), ``metric``,
        ``runs``, ``mean``, ``std``, ``sem``, ``ci_low``, ``ci_high``,
        ``confidence``; ``ci`` = the half-width.
        """
        from ecnsim.analysis.aggregate import aggregate

        df = self.frame(name)
        keys = [c for c in (by if by is not None else self.axes) if c in df.columns]
        if df.empty:
            import pandas as pd

            empty: pd.DataFrame = pd.DataFrame(
                columns=[*keys, "metric", "runs", "mean", "std", "sem", "ci_low", "ci_high", "ci"]
            )
            return empty
        # aggregate() adds columns named n, mean, ...: keep axes of those names apart.
        tmp = {k: f"__axis_{k}" for k in keys}
        agg = aggregate(
            df.rename(columns=tmp),
            by=list(tmp.values()),
            metrics=list(metrics),
            confidence=confidence,
        )
        out: pd.DataFrame = agg.rename(columns={"n": "runs"}).rename(
            columns={v: k for k, v in tmp.items()}
        )
        return out

    def order(self) -> dict[str, list[Any]]:
        """Each axis' values in the order of the grid (the source's order)."""
        out: dict[str, list[Any]] = {a: [] for a in self.axes}
        for point in self.plan.points:
            for k, v in point.items():
                if v not in out[k]:
                    out[k].append(v)
        return out

    def scenario_sources(self) -> list[tuple[dict[str, Any], Path]]:
        """``(point, its resolved scenario's file)`` of the first stored seed of each point."""
        seen: set[int] = set()
        out = []
        for point, _seed, key, _tag in self.runs():
            if point in seen:
                continue
            seen.add(point)
            out.append((self.plan.points[point], self.store.run_dir(key) / "scenario.json"))
        return out

    def resolved_scenarios(self) -> list[tuple[dict[str, Any], str]]:
        """``(point, resolved scenario JSON)`` of the first stored seed of each point."""
        out = []
        for point, path in self.scenario_sources():
            try:
                out.append((point, path.read_text(encoding="utf-8")))
            except OSError:
                continue
        return out


def select_rows(df: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``df`` whose columns equal ``where``'s values (floats compared with
    ``numpy.isclose``, a column that is not numeric matching no float); none if ``df`` lacks
    one of the columns."""
    import numpy as np

    if df.empty:
        return df
    mask = np.ones(len(df), dtype=bool)
    for k, v in where.items():
        if k not in df.columns:
            none: pd.DataFrame = df.iloc[0:0]
            return none
        mask &= column_mask(df, k, v)
    rows: pd.DataFrame = df[mask]
    return rows


def column_mask(df: pd.DataFrame, column: str, value: Any) -> np.ndarray:
    """The rows of ``df`` whose ``column`` equals ``value``, as :func:`select_rows` compares."""
    import numpy as np
    import pandas as pd

    col = df[column]
    if isinstance(value, float):
        close: np.ndarray = np.isclose(
            pd.to_numeric(col, errors="coerce").to_numpy(dtype=float), value
        )
        return close
    equal: np.ndarray = (col == value).to_numpy()
    return equal


def pivot(
    agg: pd.DataFrame,
    metric: str,
    *,
    index: str | Sequence[str],
    columns: str | Sequence[str],
    scale: float = 1.0,
    order: Mapping[str, Sequence[Any]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(mean, ci)`` tables of one metric of :meth:`StudyData.aggregate`, rows ``index`` and
    columns ``columns`` (the source's layout), values times ``scale``.

    ``order`` gives each axis' values in the order to show them (default:
    sorted); :meth:`StudyData.order` is the grid's order.
    """
    import pandas as pd

    part = agg[agg["metric"] == metric]
    idx = [index] if isinstance(index, str) else list(index)
    cols = [columns] if isinstance(columns, str) else list(columns)
    mean = part.pivot_table(index=idx, columns=cols, values="mean", aggfunc="first", sort=False)
    ci = part.pivot_table(
        index=idx, columns=cols, values="ci", aggfunc="first", sort=False, dropna=False
    )

    def key(names: Sequence[str]) -> Callable[[Any], Any]:
        def rank(label: Any) -> tuple[Any, ...]:
            parts = label if isinstance(label, tuple) else (label,)
            out = []
            for name, value in zip(names, parts, strict=True):
                values = list((order or {}).get(name, ()))
                out.append((values.index(value), "") if value in values else (len(values), value))
            return tuple(out)

        return rank

    rows = sorted(mean.index, key=key(idx))
    columns_sorted = sorted(mean.columns, key=key(cols))
    mean = (
        mean.reindex(
            index=pd.Index(rows, name=mean.index.name)
            if len(idx) == 1
            else pd.MultiIndex.from_tuples(rows, names=idx),
            columns=columns_sorted,
        )
        * scale
    )
    ci = ci.reindex_like(mean) * scale
    return mean, ci


def slug(text: str) -> str:
    """A file-name-safe version of ``text``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def format_seconds(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def estimate_wall_s(study: Study, params: Any, workers: int = 1) -> float:
    """Estimated wall seconds of the whole study on ``workers`` cores: the planning, its pilot
    stage, its runs (scaled by :attr:`Study.run_cost_scale`) and the report's rendering."""
    runs: int = len(study.grid(params)) * int(params.seeds)
    total = sum(study.estimate_seconds(params, p) for p in study.grid(params)) * params.seeds
    cal = study.calibration(params)
    if cal is not None:
        total += sum(study.estimate_seconds(params, p) for p in cal.points) * len(cal.seeds)
    planning = float(study.plan_cost_s_per_run) * runs
    scale = float(study.run_cost_scale)
    return float(total) * scale / max(1, workers) + planning + render_seconds(study, params)


def render_seconds(study: Study, params: Any) -> float:
    """Estimated seconds to render the report of ``params``' grid: the measured
    :attr:`Study.render_cost_s` of the default grid, in proportion to the runs, but at least a
    fifth of it (every figure is drawn however few runs it shows)."""
    if study.render_cost_s <= 0:
        return 0.0
    default = study.placeholder_params(study.Params())
    full: int = len(study.grid(default)) * default.seeds
    runs: int = len(study.grid(params)) * params.seeds
    return study.render_cost_s * max(0.2, runs / max(1, full))


def pilot_runs(study: Study, params: Any) -> int:
    """The number of runs of the study's pilot stage (0 without one)."""
    cal = study.calibration(params)
    return 0 if cal is None else len(cal.points) * len(cal.seeds)
