"""Parameter sweeps: a base scenario, a grid of parameter values, seeds; run anywhere, stored once.

A :class:`Sweep` is a base scenario plus

- ``grid``: parameter paths and the values each takes; every combination is
  a *point* (a Cartesian product, the last parameter varying fastest);
- ``zipped``: groups of parameters that vary together (equal-length lists,
  one axis of the product per group);
- ``seeds`` (or ``repetitions=N`` for seeds 1..N): each point runs once per seed.

A parameter path names a scenario field the way the core's errors do:
``links[0].queue.limit_packets``, ``tcp.cc``, ``simulation.duration``;
``[*]`` sets every element of a list (``flows[*].tcp.initial_window``).

:func:`run_sweep` checks every run's scenario with the core before anything
runs (an error names the point's parameters and the field), skips runs whose
results are already in the :class:`~ecnsim.store.Store`, and runs the rest
in-process, on a local process pool (default: one worker per core) or on a
Dask cluster. The core is deterministic per scenario and seed, so all three
give bit-identical results. The full format is in ``docs/sweeps.md``.

Example::

    from ecnsim.sweep import Sweep, run_sweep

    sweep = Sweep(
        "examples/dumbbell.toml",
        grid={"links[0].queue.limit_packets": [20, 80], "tcp.cc": ["reno", "newreno"]},
        repetitions=5,
        name="buffers",
    )
    result = run_sweep(sweep, "out", jobs=4)           # or dask="local" / "tcp://host:8786"
    result.aggregate(["goodput_bps", "jain"])          # mean, std and 95% CI per point
"""

from __future__ import annotations

import copy
import importlib
import itertools
import json
import logging
import math
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from ecnsim import _core
from ecnsim.exceptions import EcnsimError, SpecError
from ecnsim.spec import Scenario, _read_toml_source
from ecnsim.store import RunCheck, RunOutput, Store, canonical_json, run_key

if TYPE_CHECKING:
    import multiprocessing.context

    import pandas as pd

    from ecnsim.aggregate import MetricSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    tomllib = importlib.import_module("tomli")

__all__ = [
    "ANY",
    "Axis",
    "Plan",
    "PlannedRun",
    "RunTask",
    "Sweep",
    "SweepInterrupted",
    "SweepProgressBar",
    "SweepResult",
    "SweepSpecError",
    "SweepStatus",
    "default_jobs",
    "execute",
    "parse_path",
    "run_sweep",
    "set_path",
]

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


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a sweep; every run finished before it is in the store.

    ``result`` is the :class:`SweepResult` so far (``interrupted`` is True).
    """

    def __init__(self, result: SweepResult) -> None:
        super().__init__("sweep interrupted")
        self.result = result


# ---------------------------------------------------------------------------
# Parameter paths
# ---------------------------------------------------------------------------


class _Any:
    """The ``[*]`` of a path: every element of a list."""

    def __repr__(self) -> str:
        return "ANY"


#: The wildcard index ``[*]`` in a parsed path.
ANY = _Any()

PathToken = str | int | _Any

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX_RE = re.compile(r"\[(\d+|\*)\]")


def parse_path(path: str) -> tuple[PathToken, ...]:
    """Split ``links[0].queue.limit_packets`` into ``("links", 0, "queue", "limit_packets")``.

    ``[*]`` becomes :data:`ANY`. Raises ``ValueError`` for anything else.
    """
    if not isinstance(path, str) or not path:
        raise ValueError("a parameter path must be a non-empty string")
    tokens: list[PathToken] = []
    i, n = 0, len(path)
    expect_name = True
    while i < n:
        if expect_name:
            m = _NAME_RE.match(path, i)
            if m is None:
                raise ValueError(f"expected a field name at character {i + 1} of {path!r}")
            tokens.append(m.group())
            i = m.end()
            expect_name = False
        elif path[i] == "[":
            m = _INDEX_RE.match(path, i)
            if m is None:
                raise ValueError(f"expected [N] or [*] at character {i + 1} of {path!r}")
            tokens.append(ANY if m.group(1) == "*" else int(m.group(1)))
            i = m.end()
        elif path[i] == ".":
            i += 1
            expect_name = True
        else:
            raise ValueError(f"unexpected {path[i]!r} at character {i + 1} of {path!r}")
    if expect_name:
        raise ValueError(f"{path!r} ends with '.'")
    return tuple(tokens)


def _format_tokens(tokens: Sequence[PathToken]) -> str:
    out = ""
    for t in tokens:
        if isinstance(t, str):
            out += ("." if out else "") + t
        else:
            out += "[*]" if t is ANY else f"[{t}]"
    return out or "<root>"


def set_path(data: dict[str, Any], path: str | Sequence[PathToken], value: Any) -> None:
    """Set the field at ``path`` in scenario dict ``data`` to (a copy of) ``value``, in place.

    Missing tables on the way are created (``tcp.cc`` in a scenario without
    ``tcp``); list indices must exist; ``[*]`` sets every element and must
    match at least one. Raises ``ValueError`` naming the part that does not fit.
    """
    tokens = parse_path(path) if isinstance(path, str) else tuple(path)

    def rec(node: Any, i: int) -> None:
        tok = tokens[i]
        here = _format_tokens(tokens[:i])
        last = i == len(tokens) - 1
        if isinstance(tok, str):
            if not isinstance(node, dict):
                raise ValueError(f"{here} is not a table, so it has no field {tok!r}")
            if last:
                node[tok] = copy.deepcopy(value)
                return
            if node.get(tok) is None:
                if not isinstance(tokens[i + 1], str):
                    raise ValueError(f"{_format_tokens(tokens[: i + 1])} does not exist")
                node[tok] = {}
            rec(node[tok], i + 1)
            return
        if not isinstance(node, list):
            raise ValueError(f"{here} is not an array")
        if tok is ANY:
            if not node:
                raise ValueError(f"{here}[*] matches nothing: {here} is empty")
            indices: Iterable[int] = range(len(node))
        else:
            assert isinstance(tok, int)
            if tok >= len(node):
                raise ValueError(f"{here}[{tok}] does not exist: {here} has {len(node)} entries")
            indices = (tok,)
        for j in indices:
            if last:
                node[j] = copy.deepcopy(value)
            else:
                rec(node[j], i + 1)

    rec(data, 0)


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
    TOML scenario. ``set`` maps parameter paths to single values applied to
    every point (fixed changes to the base, not swept). ``grid`` maps
    parameter paths to lists of values;
    ``zipped`` is a list of groups, each mapping paths to equally long lists
    that vary together. Give ``seeds`` (a list) or ``repetitions`` (seeds
    ``1..N``), or neither (the base scenario's seed). ``name`` names the sweep
    in the store (default ``"sweep"``); ``store`` is a default store directory.

    Every problem raises :class:`SweepSpecError` naming the field.
    """

    def __init__(
        self,
        base: Scenario | Mapping[str, Any] | str | os.PathLike[str],
        *,
        set: Mapping[str, Any] | None = None,
        grid: Mapping[str, Sequence[Any]] | None = None,
        zipped: Sequence[Mapping[str, Sequence[Any]]] | None = None,
        seeds: Sequence[int] | None = None,
        repetitions: int | None = None,
        name: str | None = None,
        description: str | None = None,
        store: str | os.PathLike[str] | None = None,
    ) -> None:
        self.base: dict[str, Any] = _load_base(base, "base")
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
                    columns.append(_check_values(where, values))
                lengths = {len(c) for c in columns}
                if len(lengths) > 1:
                    detail = ", ".join(
                        f"{p} has {len(c)}" for p, c in zip(group, columns, strict=True)
                    )
                    raise SweepSpecError(
                        gwhere, f"zipped lists must have the same length; {detail}"
                    )
                steps = tuple(zip(*columns, strict=True))
                self.axes.append(Axis(tuple(group), steps))
        self.seeds: list[int] = _check_seeds(seeds, repetitions, self.base)

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
            raise SweepSpecError(
                unknown[0], f"unknown field; allowed: {', '.join(_TOP_LEVEL_KEYS)}"
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
        return cls(
            base,
            set=data.get("set"),
            grid=data.get("grid"),
            zipped=data.get("zip"),
            seeds=data.get("seeds"),
            repetitions=data.get("repetitions"),
            name=name,
            description=description,
            store=(root / store) if store is not None else None,
        )

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
        """The base scenario with ``params`` applied (a new dict)."""
        data = copy.deepcopy(self.base)
        for path, value in params.items():
            set_path(data, path, value)
        return data

    def _apply_overrides(self) -> None:
        """Apply ``set`` to the base (once, at construction)."""
        for path, value in self.overrides.items():
            set_path(self.base, path, value)

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
        out.update(
            {
                "base": self.base,
                "set": self.overrides,
                "grid": grid,
                "zip": zipped,
                "seeds": self.seeds,
            }
        )
        return out

    def plan(self) -> Plan:
        """Check every run's scenario with the core and compute its store key.

        The core builds each run's simulation (which checks every field and the
        topology) without running it. The first bad run raises
        :class:`SweepSpecError`: ``point 3 (tcp.cc="x"), seed 1: tcp.cc: ...``.
        """
        version = _core.__version__
        points = self.points()
        runs: list[PlannedRun] = []
        for i, params in enumerate(points):
            label = f"point {i} ({_format_params(params)})" if params else f"point {i}"
            scenario = copy.deepcopy(self.base)
            for path, value in params.items():
                try:
                    set_path(scenario, path, value)
                except ValueError as e:
                    raise SweepSpecError(path, str(e), point=label) from None
            text = json.dumps(scenario)
            for seed in self.seeds:
                try:
                    sim = _core.PySimulation.from_json(text, seed)
                except EcnsimError as e:
                    raise SweepSpecError(
                        getattr(e, "path", "<root>"), str(e), point=f"{label}, seed {seed}"
                    ) from None
                resolved = sim.results()["meta"]["resolved_spec"]
                del sim
                runs.append(
                    PlannedRun(
                        key=run_key(resolved, seed, version),
                        point=i,
                        seed=seed,
                        params=params,
                        scenario_json=text,
                    )
                )
        return Plan(self, points, runs, version)

    def __repr__(self) -> str:
        shape = " x ".join(str(len(a)) for a in self.axes) or "1"
        return f"Sweep({self.name!r}, points={shape}, seeds={len(self.seeds)}, runs={len(self)})"


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


def _check_values(where: str, values: Any) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise SweepSpecError(where, f"must be a list of values, got {values!r}")
    if len(values) == 0:
        raise SweepSpecError(where, "must have at least one value")
    for i, v in enumerate(values):
        _check_json_value(f"{where}[{i}]", v)
    return list(values)


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
class RunTask:
    """What a worker needs to run one simulation: picklable, self-contained."""

    key: str
    scenario_json: str
    seed: int
    version: str


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep: its point, parameters, seed and store key."""

    key: str
    point: int
    seed: int
    params: dict[str, Any]
    scenario_json: str


@dataclass
class Plan:
    """A sweep whose runs were checked by the core, each with its store key."""

    sweep: Sweep
    points: list[dict[str, Any]]
    runs: list[PlannedRun]
    version: str

    @property
    def name(self) -> str:
        return self.sweep.name

    def tasks(self) -> list[RunTask]:
        """One task per distinct key (identical runs are run once), in sweep order."""
        seen: dict[str, RunTask] = {}
        for r in self.runs:
            if r.key not in seen:
                seen[r.key] = RunTask(r.key, r.scenario_json, r.seed, self.version)
        return list(seen.values())

    def definition(self) -> dict[str, Any]:
        """What the store records for this sweep (``sweeps/<name>.json``)."""
        return {
            "name": self.name,
            "ecnsim_version": self.version,
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "params": self.sweep.params,
            "seeds": self.sweep.seeds,
            "points": [{"point": i, "params": p} for i, p in enumerate(self.points)],
            "runs": [{"key": r.key, "point": r.point, "seed": r.seed} for r in self.runs],
            "spec": self.sweep.to_dict(),
        }


# ---------------------------------------------------------------------------
# Running one task (in any process)
# ---------------------------------------------------------------------------


def execute(task: RunTask) -> RunOutput:
    """Run one task and encode its tables as Parquet; runs in a worker process or in-process.

    Refuses to run on a different ecnsim version than the one that planned
    the sweep (the store key includes the version), and checks that the
    resolved scenario gives the planned key.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ecnsim.simulation import Simulation

    if _core.__version__ != task.version:
        raise RuntimeError(
            f"this worker has ecnsim {_core.__version__}, the sweep was planned with "
            f"{task.version}: install the same version on every worker"
        )
    started = time.perf_counter()
    sim = Simulation(json.loads(task.scenario_json), seed=task.seed)
    results = sim.run()
    wall_s = time.perf_counter() - started
    resolved = results.meta["resolved_spec"]
    key = run_key(resolved, task.seed, task.version)
    if key != task.key:
        raise RuntimeError(
            f"run {task.key[:12]}: the resolved scenario gives key {key[:12]}; "
            "was the scenario resolved by another build of ecnsim?"
        )
    tables: dict[str, bytes] = {}
    rows: dict[str, int] = {}
    for name, table in results.tables.items():
        sink = pa.BufferOutputStream()
        pq.write_table(table.to_arrow(), sink)
        tables[name] = sink.getvalue().to_pybytes()
        rows[name] = table.num_rows
    perf = sim.perf()
    return RunOutput(
        key=key,
        seed=task.seed,
        digest=results.digest,
        meta={k: v for k, v in results.meta.items() if k != "resolved_spec"},
        resolved_spec=resolved,
        tables=tables,
        rows=rows,
        wall_s=wall_s,
        events=perf.get("events", 0),
        packet_hops=perf.get("packet_hops", 0),
        host=socket.gethostname(),
        pid=os.getpid(),
    )


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------


@dataclass
class SweepStatus:
    """Progress of a running sweep, passed to the progress callback after each run."""

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def to_run(self) -> int:
        return self.total - self.skipped

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


#: Called with the :class:`SweepStatus` after each finished (or failed) run.
ProgressCallback = Callable[[SweepStatus], object]


class SweepProgressBar:
    """Progress of a sweep on a stream: a bar on a terminal, else a line every ``log_every`` s."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None, *, log_every: float = 30.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.is_tty = self.stream.isatty()
        self.log_every = log_every
        # A terminal redraws at once; a log gets its first line after log_every.
        self.last = 0.0 if self.is_tty else time.monotonic()
        self.shown = False

    def __call__(self, status: SweepStatus) -> None:
        now = time.monotonic()
        complete = status.done + status.failed >= status.to_run
        finished = status.done + status.failed
        frac = finished / status.to_run if status.to_run else 1.0
        elapsed = status.elapsed
        eta = elapsed * (status.to_run - finished) / finished if finished else math.inf
        eta_text = f"{eta:.0f} s" if math.isfinite(eta) else "?"
        text = f"{finished}/{status.to_run} runs"
        extra = []
        if status.skipped:
            extra.append(f"{status.skipped} already stored")
        if status.failed:
            extra.append(f"{status.failed} failed")
        if extra:
            text += f" ({', '.join(extra)})"
        text += f"  wall {elapsed:.1f} s  eta {eta_text}"
        if self.is_tty:
            if now - self.last < 0.1 and not complete:
                return
            filled = int(self.WIDTH * frac)
            self.stream.write(f"\r[{'#' * filled}{'-' * (self.WIDTH - filled)}] {text}\x1b[K")
            self.shown = True
        elif now - self.last >= self.log_every and not complete:
            self.stream.write(f"progress: {text}\n")
        else:
            return
        self.stream.flush()
        self.last = now

    def close(self) -> None:
        """Erase the bar, if one was drawn."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


# ---------------------------------------------------------------------------
# Executors
# ---------------------------------------------------------------------------


def default_jobs() -> int:
    """Number of CPUs this process may use (one worker per core)."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return int(count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _mp_context() -> multiprocessing.context.BaseContext:
    """``forkserver`` where available (fast, no inherited threads), else ``spawn``."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["ecnsim.sweep", "pyarrow.parquet", "pandas"])
        return ctx
    return multiprocessing.get_context("spawn")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(parent_pid: int, ppid: int) -> None:
    """Exit the worker when the sweep's process is gone (e.g. SIGKILLed)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid or not _pid_alive(parent_pid):
            os._exit(1)


def _worker_init(parent_pid: int) -> None:
    """Pool worker set-up: Ctrl-C is the parent's business; die with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.name == "posix":
        threading.Thread(target=_watch_parent, args=(parent_pid, os.getppid()), daemon=True).start()


OutputHandler = Callable[[RunOutput, bool], None]
FailureHandler = Callable[[RunTask, BaseException], None]


def _run_serial(
    tasks: Sequence[RunTask], on_output: OutputHandler, on_failure: FailureHandler
) -> None:
    for task in tasks:
        try:
            out = execute(task)
        except Exception as e:
            on_failure(task, e)
            continue
        try:
            on_output(out, False)
        except KeyboardInterrupt:
            # The run finished: keep it, then stop.
            with _IgnoreSigint():
                on_output(out, True)
            raise


class _IgnoreSigint:
    """Ignore Ctrl-C while cleaning up after one (main thread only)."""

    def __enter__(self) -> None:
        self.old: Any = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued work and end the worker processes now."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:  # Python 3.14+
        terminate()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
            p.join(timeout=5)


def _run_pool(
    tasks: Sequence[RunTask], jobs: int, on_output: OutputHandler, on_failure: FailureHandler
) -> None:
    pool = ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(tasks))),
        mp_context=_mp_context(),
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )
    futures: dict[Future[RunOutput], RunTask] = {}
    handled: set[Future[RunOutput]] = set()

    def handle(f: Future[RunOutput], recovering: bool) -> None:
        exc = f.exception()
        if exc is not None:
            on_failure(futures[f], exc)
        else:
            on_output(f.result(), recovering)
        handled.add(f)

    try:
        for t in tasks:
            futures[pool.submit(execute, t)] = t
        for f in as_completed(futures):
            handle(f, False)
    except BaseException:
        with _IgnoreSigint():
            for f in futures:
                f.cancel()
            # Keep every run that finished, even one whose write was interrupted.
            for f in futures:
                if f.done() and not f.cancelled() and f not in handled:
                    handle(f, True)
            _stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _run_dask(
    tasks: Sequence[RunTask],
    dask: Any,
    jobs: int,
    on_output: OutputHandler,
    on_failure: FailureHandler,
) -> None:
    try:
        # Imported untyped: distributed's annotations are incomplete.
        distributed: Any = importlib.import_module("distributed")
    except ImportError:
        raise RuntimeError(
            "Dask is not installed: pip install 'ecnsim[dask]' (dask[distributed])"
        ) from None
    cluster = None
    own_client = True
    if isinstance(dask, distributed.Client):
        client = dask
        own_client = False
    elif dask == "local":
        dask_config: Any = importlib.import_module("dask").config
        # A worker's statistical profiler samples its tasks' Python stacks every
        # 10 ms; a run is one call into the core, so it learns nothing, and it
        # costs about 10% of a run's time (docs/sweeps.md, Scaling).
        with dask_config.set({"distributed.worker.profile.enabled": False}):
            cluster = distributed.LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # Errors only: Ctrl-C cancels tasks, and each worker would warn about it.
                silence_logs=logging.ERROR,
            )
        client = distributed.Client(cluster)
    else:
        client = distributed.Client(dask)
    futures: dict[Any, RunTask] = {}
    handled: set[str] = set()

    def handle(f: Any, recovering: bool) -> None:
        task = futures[f]
        if f.status == "finished":
            on_output(f.result(), recovering)
        else:
            on_failure(task, f.exception())
        handled.add(f.key)
        f.release()

    try:
        for t in tasks:
            f = client.submit(execute, t, key=f"ecnsim-run-{t.key}", pure=False)
            futures[f] = t
        for f in distributed.as_completed(list(futures)):
            handle(f, False)
    except BaseException:
        with _IgnoreSigint():
            for f in futures:
                if f.key not in handled and f.status == "finished":
                    handle(f, True)
            client.cancel([f for f in futures if f.key not in handled])
        raise
    finally:
        with _IgnoreSigint():
            if own_client:
                client.close()
            if cluster is not None:
                cluster.close()


# ---------------------------------------------------------------------------
# Running a sweep
# ---------------------------------------------------------------------------


@dataclass
class SweepResult:
    """What :func:`run_sweep` did, and access to the sweep's runs in the store."""

    plan: Plan
    store: Store
    executor: str
    workers: int
    #: Runs executed now (and written to the store).
    ran: int = 0
    #: Runs found complete in the store and not run again.
    skipped: int = 0
    #: Runs found corrupt or partial in the store, and so run again.
    corrupt: list[RunCheck] = field(default_factory=list)
    #: Runs that raised, with the error message.
    failures: list[tuple[RunTask, str]] = field(default_factory=list)
    wall_s: float = 0.0
    interrupted: bool = False

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def keys(self) -> list[str]:
        """The sweep's run keys, in sweep order (a key appears once)."""
        return [t.key for t in self.plan.tasks()]

    @property
    def complete(self) -> bool:
        """True when every run of the sweep is in the store."""
        return not self.failures and not self.interrupted

    def digests(self) -> dict[str, int]:
        """``{key: digest}`` of every stored run of the sweep."""
        out = {}
        for key in self.keys:
            m = self.store.manifest(key)
            if m is not None:
                out[key] = int(m["digest"])
        return out

    def runs(self) -> pd.DataFrame:
        """The sweep's runs from the catalog: one row per run, parameters as columns."""
        return self.store.runs(sweep=self.name)

    def metrics(self, metrics: MetricSpec | None = None) -> pd.DataFrame:
        """One row per run: the catalog's columns plus one column per metric.

        ``metrics``: built-in names and/or ``{name: function(Results)}``
        (default: :data:`ecnsim.aggregate.DEFAULT_METRICS`).
        """
        from ecnsim.aggregate import run_metrics

        return run_metrics(self.store, self.runs(), metrics)

    def aggregate(
        self, metrics: MetricSpec | None = None, *, confidence: float = 0.95
    ) -> pd.DataFrame:
        """Mean, standard deviation and Student-t confidence interval per point and metric.

        A tidy DataFrame: the swept parameters, ``metric``, ``n``, ``mean``,
        ``std``, ``sem``, ``ci_low``, ``ci_high``, ``confidence`` (see
        :func:`ecnsim.aggregate.aggregate`).
        """
        from ecnsim.aggregate import aggregate, resolve_metrics

        names = list(resolve_metrics(metrics))
        per_run = self.metrics(metrics)
        by = [p for p in self.plan.sweep.params if p in per_run.columns]
        return aggregate(per_run, by=by, metrics=names, confidence=confidence)


def run_sweep(
    sweep: Sweep | Plan,
    store: Store | str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    executor: Literal["auto", "serial", "process", "dask"] = "auto",
    dask: Any = None,
    progress: ProgressCallback | bool | None = None,
    verify: bool = True,
) -> SweepResult:
    """Run every run of ``sweep`` that is not already in ``store``; return a :class:`SweepResult`.

    ``store`` defaults to the sweep's ``store`` or ``./ecnsim-store``.
    ``executor``: ``"serial"`` runs in this process; ``"process"`` on a
    local process pool of ``jobs`` workers (default: one per core);
    ``"dask"`` on the Dask cluster ``dask`` (a ``distributed.Client``, a
    scheduler address such as ``"tcp://host:8786"``, or ``"local"`` for a
    ``LocalCluster`` of ``jobs`` workers). ``"auto"`` picks Dask if ``dask``
    is given, else serial for ``jobs=1``, else the pool.

    Runs already complete in the store are skipped; with ``verify`` (the
    default) their files' checksums are checked, and corrupt or partial runs
    are run again. Results are written as runs finish, each atomically. On
    Ctrl-C, finished results are kept, workers are stopped, and
    :class:`SweepInterrupted` is raised. A run that raises is recorded in
    ``failures`` and the others go on.
    """
    plan = sweep if isinstance(sweep, Plan) else sweep.plan()
    if not isinstance(store, Store):
        from ecnsim.store import default_store_path

        store = Store(store if store is not None else plan.sweep.store or default_store_path())
    if executor == "auto":
        executor = "dask" if dask is not None else ("serial" if jobs == 1 else "process")
    if executor == "dask" and dask is None:
        raise ValueError('executor="dask" needs dask= (an address, "local" or a Client)')
    workers = jobs if jobs is not None else default_jobs()
    if workers < 1:
        raise ValueError(f"jobs must be >= 1, got {workers}")
    if executor == "serial":
        workers = 1

    store.record_sweep(plan.name, plan.definition())
    first: dict[str, PlannedRun] = {}
    for r in plan.runs:
        first.setdefault(r.key, r)
    tasks = plan.tasks()
    todo: list[RunTask] = []
    result = SweepResult(plan, store, executor, workers)
    for t in tasks:
        check = store.check(t.key, full=verify)
        if check.is_done:
            result.skipped += 1
        else:
            todo.append(t)
            if check.status == "corrupt" or check.reason:
                result.corrupt.append(check)

    bar: SweepProgressBar | None = None
    callback: ProgressCallback | None
    if progress is True:
        bar = SweepProgressBar()
        callback = bar
    elif progress is False or progress is None:
        callback = None
    else:
        callback = progress
    status = SweepStatus(total=len(tasks), skipped=result.skipped)

    def on_output(out: RunOutput, recovering: bool) -> None:
        if recovering and store.check(out.key).is_done:
            return
        planned = first[out.key]
        store.put(out, sweep=plan.name, point=planned.point, params=planned.params)
        result.ran += 1
        status.done += 1
        if callback is not None:
            callback(status)

    def on_failure(task: RunTask, exc: BaseException) -> None:
        planned = first[task.key]
        label = f"point {planned.point} ({_format_params(planned.params)}), seed {planned.seed}"
        result.failures.append((task, f"{label}: {type(exc).__name__}: {exc}"))
        status.failed += 1
        if callback is not None:
            callback(status)

    started = time.perf_counter()
    try:
        if todo:
            if executor == "serial":
                _run_serial(todo, on_output, on_failure)
            elif executor == "process":
                _run_pool(todo, workers, on_output, on_failure)
            elif executor == "dask":
                _run_dask(todo, dask, workers, on_output, on_failure)
            else:
                raise ValueError(f"unknown executor {executor!r}")
    except KeyboardInterrupt:
        result.interrupted = True
        result.wall_s = time.perf_counter() - started
        raise SweepInterrupted(result) from None
    finally:
        if bar is not None:
            bar.close()
    result.wall_s = time.perf_counter() - started
    return result
