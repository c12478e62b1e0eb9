"""Sweep specifications: a base scenario, a grid of parameter values, seeds; checked into a plan."""

from __future__ import annotations

import copy
import importlib
import itertools
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecnsim import _core
from ecnsim.exceptions import EcnsimError, SpecError
from ecnsim.scenario.spec import Scenario, _read_toml_source
from ecnsim.sweep.store import canonical_json, run_key

if TYPE_CHECKING:
    pass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    tomllib = importlib.import_module("tomli")


from ecnsim.scenario.paths import PathError, parse_path, set_paths

# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class SweepSpecError(SpecError):
    """A sweep is malformed, or one of its points is not a valid scenario.

    A :class:`~ecnsim.SpecError` (so also a ``ValueError``). ``path`` names
    the sweep field (``grid."tcp.cc"``, ``zip[1]``, ``seeds[2]``) or, for a
    bad point, the scenario field that was rejected; the message of a bad
    point starts with the point's number, parameters and seed:
    ``point 1 (tcp.cc="vegas"), seed 1: tcp.cc: unknown variant ...``.
    """

    def __init__(self, path: str, message: str, *, point: str | None = None) -> None:
        super().__init__(f"{point or path}: {message}")
        self.path = path


# ---------------------------------------------------------------------------
# Sweep specification
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One axis of the grid: one parameter, or a group of zipped parameters.

    ``steps[i]`` holds the values of every parameter in ``params`` at step ``i``.
    """

    params: tuple[str, ...]
    steps: tuple[tuple[Any, ...], ...]

    def __len__(self) -> int:
        return len(self.steps)


_TOP_LEVEL_KEYS = (
    "name",
    "description",
    "base",
    "set",
    "grid",
    "zip",
    "seeds",
    "repetitions",
    "store",
    "series",
)

#: Top-level keys of a scenario file that a sweep file does not have.
_SCENARIO_ONLY_KEYS = (
    "simulation",
    "tcp",
    "topology",
    "nodes",
    "links",
    "flow_groups",
    "flows",
    "apps",
)


def _q(path: str) -> str:
    """A TOML-quoted key, as it appears in the sweep file."""
    return json.dumps(path)


def _check_json_value(where: str, value: Any) -> None:
    """Reject values that cannot go into a JSON scenario (TOML dates, NaN, ...)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise SweepSpecError(where, f"value {value!r} cannot be used in a scenario ({e})") from None


class Sweep:
    """A base scenario, parameter axes and seeds: the definition of a set of runs.

    ``base`` is a :class:`~ecnsim.Scenario`, a scenario dict, or the path of a
    TOML scenario, or a function that builds a scenario from keyword
    arguments (such as :func:`ecnsim.topology.hetero_rtt`). ``set`` maps
    parameter paths to single values applied to
    every point (fixed changes to the base, not swept). ``grid`` maps
    parameter paths to lists of values;
    ``zipped`` is a list of groups, each mapping paths to equally long lists
    that vary together. Give ``seeds`` (a list) or ``repetitions`` (seeds
    ``1..N``), or neither (the base scenario's seed). ``name`` names the sweep
    in the store (default ``"sweep"``); ``store`` is a default store directory.
    The store keeps each run's ``flows``, ``queues`` and ``records`` tables
    and its summary metrics; with ``series=True`` (a sweep file's
    ``series = true``) also its time series (``flow_series``,
    ``queue_series``, when the scenario samples them), which are most of a
    store's size.

    With a function as ``base``, a parameter named like one of its keyword
    arguments (``n``, ``aggregate_access_rate``, ...) is passed to it, so the
    number of flows and anything else that changes the topology can be swept
    like any other parameter; every other path is set in the scenario it
    returns::

        Sweep(hetero_rtt, set={"duration": 100, "aggregate_access_rate": 300e6},
              grid={"n": [15, 30, 60], "links[0].queue.max_p": [0.1, 0.5]}, repetitions=5)

    Every problem raises :class:`SweepSpecError` naming the field.
    """

    def __init__(
        self,
        base: Scenario | Mapping[str, Any] | str | os.PathLike[str] | Callable[..., Any],
        *,
        set: Mapping[str, Any] | None = None,
        grid: Mapping[str, Sequence[Any]] | None = None,
        zipped: Sequence[Mapping[str, Sequence[Any]]] | None = None,
        seeds: Sequence[int] | None = None,
        repetitions: int | None = None,
        name: str | None = None,
        description: str | None = None,
        store: str | os.PathLike[str] | None = None,
        series: bool = False,
    ) -> None:
        if not isinstance(series, bool):
            raise SweepSpecError("series", f"must be true or false, got {series!r}")
        #: Store the runs' time series (``flow_series``, ``queue_series``) too;
        #: by default a sweep stores only the summary tables (:data:`SUMMARY_TABLES`).
        self.series = series
        #: True for a sweep read from a file: as in a scenario file, every
        #: non-zero time and rate it writes (``set``, ``grid``, ``zip``, an
        #: inline ``base``) needs a unit (``"20ms"``, ``"10Mbps"``).
        self.units_required = False
        #: The scenario builder, when ``base`` is a function; its keyword names.
        self.builder: Callable[..., Any] | None = None
        self.builder_params: frozenset[str] = frozenset()
        if callable(base) and not isinstance(base, (Scenario, Mapping, str, os.PathLike)):
            self.builder = base
            self.builder_params = _keyword_names(base)
            self.base: dict[str, Any] = {}
        else:
            self.base = _load_base(base, "base")
        self.name: str = _check_name(name)
        self.description = description
        self.store: Path | None = Path(store) if store is not None else None
        self.axes: list[Axis] = []
        seen: dict[str, str] = {}
        overrides = set

        def add_param(where: str, path: str) -> None:
            try:
                tokens = parse_path(path)
            except ValueError as e:
                raise SweepSpecError(where, f"not a parameter path: {e}") from None
            if tokens[:2] == ("simulation", "seed"):
                raise SweepSpecError(where, "use `seeds` or `repetitions` to vary the seed")
            if path in seen:
                raise SweepSpecError(where, f"parameter already swept at {seen[path]}")
            seen[path] = where

        self.overrides: dict[str, Any] = {}
        if overrides is not None:
            if not isinstance(overrides, Mapping):
                raise SweepSpecError("set", "must be a table of parameter paths to values")
            for path, value in overrides.items():
                where = f"set.{_q(path)}"
                add_param(where, path)
                _check_json_value(where, value)
                self.overrides[path] = copy.deepcopy(value)
            if self.builder is None:
                try:
                    self._apply_overrides()
                except ValueError as e:
                    raise SweepSpecError("set", str(e)) from None
        if grid is not None:
            if not isinstance(grid, Mapping):
                raise SweepSpecError("grid", "must be a table of parameter paths to value lists")
            for path, values in grid.items():
                where = f"grid.{_q(path)}"
                add_param(where, path)
                values = _check_values(where, values)
                self.axes.append(Axis((path,), tuple((v,) for v in values)))
        if zipped is not None:
            if isinstance(zipped, Mapping) or not isinstance(zipped, Sequence):
                raise SweepSpecError("zip", "must be a list of tables (TOML: [[zip]])")
            for g, group in enumerate(zipped):
                gwhere = f"zip[{g}]"
                if not isinstance(group, Mapping) or not group:
                    raise SweepSpecError(
                        gwhere, "must be a non-empty table of paths to value lists"
                    )
                columns: list[list[Any]] = []
                for path, values in group.items():
                    where = f"{gwhere}.{_q(path)}"
                    add_param(where, path)
                    columns.append(_check_values(where, values, dedupe=False))
                lengths = {len(c) for c in columns}
                if len(lengths) > 1:
                    detail = ", ".join(
                        f"{p} has {len(c)}" for p, c in zip(group, columns, strict=True)
                    )
                    raise SweepSpecError(
                        gwhere, f"zipped lists must have the same length; {detail}"
                    )
                steps = tuple(_unique_steps(gwhere, list(zip(*columns, strict=True))))
                self.axes.append(Axis(tuple(group), steps))
        if self.builder is not None and seeds is None and repetitions is None:
            points = self.points()
            first = self._scenario_checked(points[0], "point 0" if points else "base")
            self.seeds: list[int] = _check_seeds(None, None, first)
        else:
            self.seeds = _check_seeds(seeds, repetitions, self.base)

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str]) -> Sweep:
        """Read a sweep from a TOML file (or TOML text); see ``docs/sweeps.md``.

        A ``base`` or ``store`` path is relative to the sweep file's directory;
        the sweep's name defaults to the file name without ``.toml``.
        """
        text = _read_toml_source(source)
        is_file = isinstance(source, os.PathLike) or text is not source
        base_dir = Path(source).resolve().parent if is_file else Path.cwd()
        default_name = Path(source).stem if is_file else None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepSpecError("<root>", f"not valid TOML: {e}") from None
        return cls.from_dict(data, base_dir=base_dir, default_name=default_name)

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        base_dir: str | os.PathLike[str] | None = None,
        default_name: str | None = None,
    ) -> Sweep:
        """A sweep from parsed TOML/JSON: keys ``base``, ``grid``, ``zip``, ``seeds``, ...

        Relative paths (``base``, ``store``) are taken from ``base_dir``
        (default: the current directory).
        """
        if not isinstance(data, Mapping):
            raise SweepSpecError("<root>", "a sweep must be a table")
        unknown = [k for k in data if k not in _TOP_LEVEL_KEYS]
        if unknown:
            hint = ""
            if unknown[0] in _SCENARIO_ONLY_KEYS:
                # A scenario file given where a sweep belongs: say which command reads it.
                hint = (
                    "; this looks like a scenario file: run it with `ecnsim run`, or name it "
                    "as a sweep's `base`"
                )
            raise SweepSpecError(
                unknown[0], f"unknown field; allowed: {', '.join(_TOP_LEVEL_KEYS)}{hint}"
            )
        if "base" not in data:
            raise SweepSpecError("base", "missing: the path of a scenario TOML file or a table")
        root = Path(base_dir) if base_dir is not None else Path.cwd()
        base = data["base"]
        if isinstance(base, str):
            base = root / base
        elif not isinstance(base, Mapping):
            raise SweepSpecError("base", "must be a file path (string) or a scenario table")
        store = data.get("store")
        if store is not None and not isinstance(store, str):
            raise SweepSpecError("store", "must be a directory path (string)")
        description = data.get("description")
        if description is not None and not isinstance(description, str):
            raise SweepSpecError("description", "must be a string")
        name = data.get("name", default_name)
        sweep = cls(
            base,
            set=data.get("set"),
            grid=data.get("grid"),
            zipped=data.get("zip"),
            seeds=data.get("seeds"),
            repetitions=data.get("repetitions"),
            name=name,
            description=description,
            store=(root / store) if store is not None else None,
            series=data.get("series", False),
        )
        sweep.units_required = True
        return sweep

    # -- the points ----------------------------------------------------------------

    @property
    def params(self) -> list[str]:
        """Every swept parameter path, in axis order."""
        return [p for axis in self.axes for p in axis.params]

    def points(self) -> list[dict[str, Any]]:
        """Each point's parameter values, ``{path: value}``, in sweep order."""
        out = []
        for combo in itertools.product(*(axis.steps for axis in self.axes)):
            point: dict[str, Any] = {}
            for axis, step in zip(self.axes, combo, strict=True):
                point.update(zip(axis.params, step, strict=True))
            out.append(point)
        return out

    def scenario(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The base scenario with ``params`` applied (a new dict).

        With a builder as ``base``: the builder's result for the builder
        arguments of ``set`` and ``params``, then every other path set in it.
        """
        if self.builder is None:
            data = copy.deepcopy(self.base)
            rest: Mapping[str, Any] = params
        else:
            merged = {**self.overrides, **params}
            args = {p: v for p, v in merged.items() if p in self.builder_params}
            built = self.builder(**args)
            data = built.to_dict() if isinstance(built, Scenario) else copy.deepcopy(dict(built))
            rest = {p: v for p, v in merged.items() if p not in self.builder_params}
        try:
            set_paths(data, rest.items())
        except PathError as e:
            raise _PathError(e.path, str(e)) from None
        return data

    def _scenario_checked(self, params: Mapping[str, Any], label: str) -> dict[str, Any]:
        """:meth:`scenario`, with a bad path or builder argument raised as a SweepSpecError."""
        try:
            return self.scenario(params)
        except _PathError as e:
            raise SweepSpecError(e.path, str(e), point=label) from None
        except (ValueError, TypeError) as e:
            # The builder refused its arguments.
            name = getattr(self.builder, "__name__", "base")
            raise SweepSpecError("base", f"{name}(): {e}", point=label) from None

    def _apply_overrides(self) -> None:
        """Apply ``set`` to the base (once, at construction)."""
        set_paths(self.base, self.overrides.items())

    def __len__(self) -> int:
        """Number of runs: points times seeds."""
        return math.prod(len(a) for a in self.axes) * len(self.seeds)

    def to_dict(self) -> dict[str, Any]:
        """The sweep as plain data, as stored with its runs (``base`` inlined, ``set`` applied)."""
        grid = {a.params[0]: [s[0] for s in a.steps] for a in self.axes if len(a.params) == 1}
        zipped = [
            {p: [s[i] for s in a.steps] for i, p in enumerate(a.params)}
            for a in self.axes
            if len(a.params) > 1
        ]
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        base: Any = self.base
        if self.builder is not None:
            base = f"{self.builder.__module__}:{self.builder.__qualname__}"
        out.update(
            {
                "base": base,
                "set": self.overrides,
                "grid": grid,
                "zip": zipped,
                "seeds": self.seeds,
            }
        )
        if self.series:
            out["series"] = True
        return out

    def plan(self, mode: str = "simulation") -> Plan:
        """Check every run's scenario with the core and compute its store key.

        The core builds each run's simulation (which checks every field and the
        topology) without running it. The first bad run raises
        :class:`SweepSpecError`: ``point 3 (tcp.cc="x"), seed 1: tcp.cc: ...``.
        ``mode="emulation"`` plans the same runs with real Linux hosts
        (``docs/emulation.md``): other keys, and every point checked against
        what the emulation can run.
        """
        _check_mode(mode)
        version = _core.__version__
        points = self.points()
        runs: list[PlannedRun] = []
        for i, params in enumerate(points):
            label = f"point {i} ({_format_params(params)})" if params else f"point {i}"
            scenario = self._scenario_checked(params, label)
            text = json.dumps(scenario)
            runs.extend(_plan_point(i, params, text, self.seeds, version, label, None, mode))
            if self.units_required:
                _check_units(text, label)
        return Plan(
            name=self.name,
            params=self.params,
            seeds=self.seeds,
            points=points,
            runs=runs,
            version=version,
            spec=self.to_dict(),
            store=self.store,
            keep_tables=None if self.series else SUMMARY_TABLES,
            mode=mode,
        )

    def __repr__(self) -> str:
        shape = " x ".join(str(len(a)) for a in self.axes) or "1"
        return f"Sweep({self.name!r}, points={shape}, seeds={len(self.seeds)}, runs={len(self)})"


class _PathError(ValueError):
    """A parameter path that cannot be set in the scenario."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def _keyword_names(fn: Callable[..., Any]) -> frozenset[str]:
    """The names ``fn`` accepts as keyword arguments."""
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds)


def _check_name(name: Any) -> str:
    if name is None:
        return "sweep"
    if not isinstance(name, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", name):
        raise SweepSpecError(
            "name",
            f"{name!r}: use letters, digits, '.', '_' and '-', starting with a letter or digit",
        )
    return name


def _load_base(base: Any, where: str) -> dict[str, Any]:
    if isinstance(base, Scenario):
        return base.to_dict()
    if isinstance(base, Mapping):
        data = copy.deepcopy(dict(base))
        _check_json_value(where, data)
        return data
    if isinstance(base, (str, os.PathLike)):
        path = Path(base)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise SweepSpecError(where, f"cannot read {path}: {e.strerror or e}") from None
        try:
            return Scenario.from_toml_str(text).to_dict()
        except SpecError as e:
            raise SweepSpecError(where, f"{path}: {e}") from None
    raise SweepSpecError(where, f"must be a Scenario, a table or a path, got {type(base).__name__}")


def _unique_steps(where: str, steps: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Zipped steps with any repeated step dropped, with a warning (as grid values)."""
    out: list[tuple[Any, ...]] = []
    seen: dict[str, int] = {}
    for i, step in enumerate(steps):
        text = canonical_json(list(step))
        if text in seen:
            warnings.warn(
                f"{where}: step {i} {text} repeats step {seen[text]}; the repeat is dropped",
                UserWarning,
                stacklevel=4,
            )
            continue
        seen[text] = i
        out.append(step)
    return out


def _check_values(where: str, values: Any, *, dedupe: bool = True) -> list[Any]:
    """The values of one grid axis; a repeated value is dropped with a warning.

    A repeated value would make two identical points, whose runs are one
    run each: counted twice, they would double ``n`` and shrink the confidence
    interval.
    """
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise SweepSpecError(where, f"must be a list of values, got {values!r}")
    if len(values) == 0:
        raise SweepSpecError(where, "must have at least one value")
    out: list[Any] = []
    seen: dict[str, int] = {}
    for i, v in enumerate(values):
        _check_json_value(f"{where}[{i}]", v)
        text = canonical_json(v)
        if dedupe and text in seen:
            warnings.warn(
                f"{where}[{i}]: {text} repeats {where}[{seen[text]}]; the repeat is dropped",
                UserWarning,
                stacklevel=4,
            )
            continue
        seen[text] = i
        out.append(v)
    return out


def _check_seeds(
    seeds: Sequence[int] | None, repetitions: int | None, base: Mapping[str, Any]
) -> list[int]:
    if seeds is not None and repetitions is not None:
        raise SweepSpecError("seeds", "give `seeds` or `repetitions`, not both")
    if repetitions is not None:
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
            raise SweepSpecError("repetitions", f"must be an integer >= 1, got {repetitions!r}")
        return list(range(1, repetitions + 1))
    if seeds is None:
        sim = base.get("simulation")
        seed = sim.get("seed", 1) if isinstance(sim, Mapping) else 1
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise SweepSpecError("base.simulation.seed", f"must be an integer >= 0, got {seed!r}")
        return [seed]
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise SweepSpecError("seeds", f"must be a non-empty list of integers, got {seeds!r}")
    out: list[int] = []
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
            raise SweepSpecError(f"seeds[{i}]", f"must be an integer in 0..2^64-1, got {s!r}")
        if s in out:
            raise SweepSpecError(f"seeds[{i}]", f"duplicate seed {s}")
        out.append(s)
    return out


def _format_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{p}={canonical_json(v)}" for p, v in params.items())


# ---------------------------------------------------------------------------
# Plan: the checked runs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunJob:
    """Work a worker does with a run's results besides storing them: a study's per-run metrics.

    The worker imports ``hook`` (``"package.module:function"``) and calls
    ``hook(results, trace, context)`` right after the run, while every table
    is still in memory; it returns small tables (``{name: DataFrame}``) that
    the store keeps with the run under ``tag`` (:meth:`Store.read_derived`).
    ``trace`` is None, or, when ``trace_links`` names links, the packet
    records of those links (columns of :mod:`ecnsim.output.trace`, as numpy
    arrays). ``keep_tables`` lists the run's own tables to store (None: all);
    big per-flow series need not be kept when the hook has reduced them.

    ``tag`` must change whenever ``hook``'s code or ``context`` changes what
    it computes: a stored run lacking the tag is run again.
    """

    hook: str
    tag: str
    context: dict[str, Any]
    trace_links: tuple[int, ...] | None = None
    keep_tables: tuple[str, ...] | None = None


@dataclass(frozen=True)
class RunTask:
    """What a worker needs to run one simulation: picklable, self-contained."""

    key: str
    scenario_json: str
    seed: int
    version: str
    job: RunJob | None = None
    #: The run's tables to store when there is no job (None: all of them).
    keep_tables: tuple[str, ...] | None = None
    #: ``"simulation"``, or ``"emulation"``: real Linux hosts in real time (``docs/emulation.md``).
    mode: str = "simulation"


#: Tables an emulated run stores besides the ones its sweep or job keeps: the driver's
#: measurements (how late departures were, the machine's load), the TCP mapping, the hosts'
#: kernel counters.
EMULATION_TABLES = ("emulation", "tcp_mapping", "emu_hosts")

#: The tables a sweep stores unless it asks for the time series (``series``).
SUMMARY_TABLES = ("flows", "queues", "records")


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep: its point, parameters, seed and store key."""

    key: str
    point: int
    seed: int
    params: dict[str, Any]
    scenario_json: str
    job: RunJob | None = None


@dataclass
class Plan:
    """Runs whose scenarios were checked by the core, each with its store key.

    Made by :meth:`Sweep.plan`, or by :func:`plan_runs` for any list of
    scenarios (a study's points). ``params`` are the names of the parameters
    that vary between points (the catalog's parameter columns), ``spec``
    what the store records as the definition (``sweeps/<name>.json``).
    """

    name: str
    params: list[str]
    seeds: list[int]
    points: list[dict[str, Any]]
    runs: list[PlannedRun]
    version: str
    spec: dict[str, Any]
    store: Path | None = None
    #: Tables stored for runs without a job (None: all, the time series included).
    keep_tables: tuple[str, ...] | None = None
    #: ``"simulation"`` or ``"emulation"`` (part of every run's key: the two never mix).
    mode: str = "simulation"

    def tasks(self) -> list[RunTask]:
        """One task per distinct key and job (identical runs are run once), in plan order."""
        seen: dict[tuple[str, str | None], RunTask] = {}
        for r in self.runs:
            ident = (r.key, r.job.tag if r.job is not None else None)
            if ident not in seen:
                seen[ident] = RunTask(
                    r.key,
                    r.scenario_json,
                    r.seed,
                    self.version,
                    r.job,
                    self.keep_tables,
                    self.mode,
                )
        return list(seen.values())

    def definition(self) -> dict[str, Any]:
        """What the store records for this plan (``sweeps/<name>.json``)."""
        return {
            "name": self.name,
            "mode": self.mode,
            "ecnsim_version": self.version,
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "params": self.params,
            "seeds": self.seeds,
            "points": [{"point": i, "params": p} for i, p in enumerate(self.points)],
            "runs": [{"key": r.key, "point": r.point, "seed": r.seed} for r in self.runs],
            "spec": self.spec,
        }


def plan_runs(
    name: str,
    points: Sequence[tuple[Mapping[str, Any], Mapping[str, Any], RunJob | None]],
    seeds: Sequence[int],
    *,
    spec: Mapping[str, Any] | None = None,
    store: str | os.PathLike[str] | None = None,
    mode: str = "simulation",
) -> Plan:
    """A :class:`Plan` from explicit points: ``(params, scenario, job)`` each, run once per seed.

    ``params`` labels the point in the catalog (``{"n": 30, "mode": "ecn"}``),
    ``scenario`` is its scenario dict, ``job`` an optional :class:`RunJob`.
    Every run's scenario is checked by the core; the first bad one raises
    :class:`SweepSpecError` naming the point, the seed and the field. With
    ``mode="emulation"`` each is also checked against what the emulation
    can run (:func:`ecnsim.emulation.make_plan`), and refused by name.
    """
    name = _check_name(name)
    seeds = _check_seeds(list(seeds), None, {})
    _check_mode(mode)
    version = _core.__version__
    names: list[str] = []
    runs: list[PlannedRun] = []
    out_points: list[dict[str, Any]] = []
    for i, (params, scenario, job) in enumerate(points):
        params = dict(params)
        for p in params:
            if p not in names:
                names.append(p)
        label = f"point {i} ({_format_params(params)})" if params else f"point {i}"
        _check_json_value(label, scenario)
        runs.extend(_plan_point(i, params, json.dumps(scenario), seeds, version, label, job, mode))
        out_points.append(params)
    return Plan(
        name=name,
        params=names,
        seeds=seeds,
        points=out_points,
        runs=runs,
        version=version,
        spec=dict(spec) if spec is not None else {"name": name},
        store=Path(store) if store is not None else None,
        mode=mode,
    )


def _check_mode(mode: str) -> None:
    from ecnsim.sweep.store import MODES

    if mode not in MODES:
        raise SweepSpecError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")


def _check_emulable(resolved: Mapping[str, Any], job: RunJob | None, label: str) -> None:
    """Refuse, naming the point and the field, a run that the emulation cannot run."""
    from ecnsim.emulation.plan import PlanError, make_plan
    from ecnsim.emulation.runner import available_cc

    if job is not None and job.trace_links is not None:
        raise SweepSpecError(
            "job.trace_links",
            "an emulated run records no core packet trace (it writes pcap of the real "
            "packets instead); this job needs one, so it cannot be emulated",
            point=label,
        )
    try:
        make_plan(dict(resolved), pid=0, available_cc=available_cc())
    except PlanError as e:
        # A plan error starts with the scenario field it is about.
        path = str(e).split(" ", 1)[0].rstrip(":")
        raise SweepSpecError(path, f"cannot be emulated: {e}", point=label) from None


def _check_units(text: str, label: str) -> None:
    """A sweep file's values, like a scenario file's, write times and rates with units."""
    try:
        _core.check_file_json(text)
    except EcnsimError as e:
        raise SweepSpecError(getattr(e, "path", "<root>"), str(e), point=label) from None


def _plan_point(
    point: int,
    params: dict[str, Any],
    text: str,
    seeds: Sequence[int],
    version: str,
    label: str,
    job: RunJob | None,
    mode: str = "simulation",
) -> list[PlannedRun]:
    """Check one point's scenario with the core, once per seed; its planned runs.

    An emulated point is also checked against what the emulation can run."""
    runs: list[PlannedRun] = []
    for seed in seeds:
        try:
            sim = _core.PySimulation.from_json(text, seed)
        except EcnsimError as e:
            raise SweepSpecError(
                getattr(e, "path", "<root>"), str(e), point=f"{label}, seed {seed}"
            ) from None
        resolved = sim.results()["meta"]["resolved_spec"]
        del sim
        if mode == "emulation" and not runs:
            # Seeds change nothing the emulation refuses: one check per point.
            _check_emulable(json.loads(resolved), job, label)
        runs.append(
            PlannedRun(
                key=run_key(resolved, seed, version, mode),
                point=point,
                seed=seed,
                params=params,
                scenario_json=text,
                job=job,
            )
        )
    return runs
