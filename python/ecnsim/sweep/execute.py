"""Running a sweep's plan: one task anywhere, progress, the serial/pool/Dask executors, results."""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import math
import os
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Collection, Hashable, Iterable, MutableMapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast

from ecnsim import _core
from ecnsim.exceptions import EcnsimError
from ecnsim.sweep.store import RunCheck, RunOutput, Store, run_key

if TYPE_CHECKING:
    import multiprocessing.context

    import pandas as pd

    from ecnsim.analysis.aggregate import MetricSpec
    from ecnsim.results import Results

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    tomllib = importlib.import_module("tomli")


from ecnsim.sweep.spec import Plan, PlannedRun, RunTask, Sweep, _format_params

# ---------------------------------------------------------------------------
# Seeds that change nothing (a sweep's points, `ecnsim run --seeds`)
# ---------------------------------------------------------------------------


def same_for_every_seed(outcomes: Iterable[tuple[int, Hashable]]) -> list[int]:
    """The groups (a sweep's points) whose runs, two or more, all gave the same outcome.

    ``outcomes``: ``(group, outcome)`` per run, the outcome being anything that
    compares the run's tables alone (checksums), never its digest, which covers
    the seed. Such a group's seeds are not independent repetitions: nothing in
    the scenario draws a random number, so their spread is 0 by construction.
    """
    seen: dict[int, set[Hashable]] = {}
    runs: dict[int, int] = {}
    for group, outcome in outcomes:
        seen.setdefault(group, set()).add(outcome)
        runs[group] = runs.get(group, 0) + 1
    return sorted(g for g, s in seen.items() if len(s) == 1 and runs[g] > 1)


def identical_seeds_message(subject: str, seeds: int) -> str:
    """The warning for :func:`same_for_every_seed`'s groups: ``subject`` (what gave the same
    tables: ``"sweep x: 2 of 3 point(s)"``) and the number of seeds each ran."""
    return (
        f"{subject} gave bit-identical results for every seed ({seeds} seeds): "
        "the scenario has no randomness there (add start_jitter or a random "
        "workload), so their spread of 0 is not a confidence interval"
    )


def tables_checksum(results: Results) -> str:
    """A checksum of a run's tables (names, columns and values) and nothing else: two seeds
    of a scenario without randomness give the same one, while their digests differ (the
    digest covers the metadata, the seed among it)."""
    import hashlib

    h = hashlib.sha256()
    for name, table in results.tables.items():
        h.update(f"table {name}\n".encode())
        columns = table._writer_columns()
        if columns is None:
            # A table built by hand in Python, not by the core: its values as text.
            columns = {c: ("str", [repr(table.to_pylist(c))]) for c in table}
        for column, (dtype, payload) in columns.items():
            h.update(f"column {column} {dtype}\n".encode())
            if dtype == "str":
                h.update(json.dumps(payload).encode())
            elif dtype == "dict":
                codes, names = payload
                h.update(codes)
                h.update(json.dumps(names).encode())
            else:
                h.update(payload)
    return h.hexdigest()


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a sweep; every run finished before it is in the store.

    ``result`` is the :class:`SweepResult` so far (``interrupted`` is True).
    """

    def __init__(self, result: SweepResult) -> None:
        super().__init__("sweep interrupted")
        self.result = result


class SweepFailedError(EcnsimError):
    """Every run a sweep started failed (:func:`run_sweep` with ``raise_if_all_failed``).

    ``result`` is the :class:`SweepResult`, its ``failures`` holding each run's error.
    """

    def __init__(self, result: SweepResult) -> None:
        first = result.failures[0][1] if result.failures else "?"
        super().__init__(
            f"sweep {result.plan.name}: every one of the {len(result.failures)} run(s) it "
            f"started failed; the first: {first}. (A script that runs a sweep on a process "
            'pool needs the `if __name__ == "__main__":` guard: the workers import it; '
            "docs/sweeps.md.)"
        )
        self.result = result


# ---------------------------------------------------------------------------
# Running one task (in any process)
# ---------------------------------------------------------------------------


def execute(task: RunTask) -> RunOutput:
    """Run one task and encode its tables as Parquet; runs in a worker process or in-process.

    Refuses to run on a different ecnsim version than the one that planned
    the sweep (the store key includes the version), and checks that the
    resolved scenario gives the planned key. With a :class:`RunJob`, also
    records the trace it asks for, calls its hook on the results and encodes
    the tables the hook returns; only the run's tables the job keeps are encoded.
    """
    from ecnsim.simulation import Simulation

    if _core.__version__ != task.version:
        raise RuntimeError(
            f"this worker has ecnsim {_core.__version__}, the sweep was planned with "
            f"{task.version}: install the same version on every worker"
        )
    if task.mode == "emulation":
        return _execute_emulation(task)
    job = task.job
    started = time.perf_counter()
    # CPU of this thread over the same span as wall_s (the core runs in this thread, with
    # the GIL released): the simulation's own CPU, whatever else shares the machine.
    cpu_started = time.thread_time()
    sim = Simulation(json.loads(task.scenario_json), seed=task.seed)
    trace: dict[str, Any] | None = None
    if job is not None and job.trace_links is not None:
        chunks: list[dict[str, Any]] = []
        sim._sim.enable_trace(list(job.trace_links), None, None)

        def drain(_now: int, _end: int) -> None:
            chunks.append(sim._sim.drain_trace())

        results = sim.run(drain)
        chunks.append(sim._sim.drain_trace())
        trace = _concat_trace(chunks)
    else:
        results = sim.run()
    wall_s = time.perf_counter() - started
    cpu_s = time.thread_time() - cpu_started
    resolved = results.meta["resolved_spec"]
    key = run_key(resolved, task.seed, task.version)
    if key != task.key:
        raise RuntimeError(
            f"run {task.key[:12]}: the resolved scenario gives key {key[:12]}; "
            "was the scenario resolved by another build of ecnsim?"
        )
    perf = sim.perf()
    out = _output(task, results, trace, key, resolved, wall_s, perf)
    return dataclasses.replace(out, cpu_s=cpu_s)


def _output(
    task: RunTask,
    results: Any,
    trace: dict[str, Any] | None,
    key: str,
    resolved: str,
    wall_s: float,
    perf: dict[str, int],
    extra_tables: Sequence[str] = (),
) -> RunOutput:
    """A finished run's :class:`RunOutput`: the tables it keeps, its job's derived tables."""
    job = task.job
    keep_tables = job.keep_tables if job is not None else task.keep_tables
    keep = None if keep_tables is None else {*keep_tables, *extra_tables}
    tables: dict[str, bytes] = {}
    rows: dict[str, int] = {}
    for name, table in results.tables.items():
        if keep is not None and name not in keep:
            continue
        tables[name] = _parquet_bytes(table.to_arrow())
        rows[name] = table.num_rows
    derived: dict[str, dict[str, bytes]] = {}
    derived_rows: dict[str, dict[str, int]] = {}
    derived_arrow: dict[str, dict[str, bytes]] = {}
    if job is not None:
        import pyarrow as pa

        hook = _import_hook(job.hook)
        out = hook(results, trace, job.context)
        derived[job.tag] = {}
        derived_rows[job.tag] = {}
        derived_arrow[job.tag] = {}
        for name, frame in out.items():
            arrow = (
                frame
                if isinstance(frame, pa.Table)
                else pa.Table.from_pandas(frame, preserve_index=False)
            )
            derived[job.tag][name] = _parquet_bytes(arrow)
            derived_rows[job.tag][name] = arrow.num_rows
            derived_arrow[job.tag][name] = _ipc_bytes(arrow)
    from ecnsim.analysis.aggregate import SUMMARY_VERSION, summary_metrics

    metrics = {"version": SUMMARY_VERSION, "values": summary_metrics(results)}
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
        derived=derived,
        metrics=metrics,
        derived_rows=derived_rows,
        derived_arrow=derived_arrow,
    )


def _execute_emulation(task: RunTask) -> RunOutput:
    """Run one task with real Linux hosts in real time (``docs/emulation.md``); in this process.

    The same scenario, seed and job as a simulated run; the results carry the
    simulator's table layout (``flows``, ``queues``, ``records``, ...) so the
    job's hook reads them unchanged, plus the driver's own measurements
    (``emulation``: how late departures were, the machine's load), which are
    always stored. Ctrl-C (and SIGTERM) stop the emulation and tear it down
    before :class:`KeyboardInterrupt` goes on.
    """
    from ecnsim.emulation import Emulation
    from ecnsim.sweep.spec import EMULATION_TABLES

    if task.job is not None and task.job.trace_links is not None:
        raise RuntimeError("an emulated run records no core packet trace (trace_links)")
    started = time.perf_counter()
    emu = Emulation(json.loads(task.scenario_json), seed=task.seed)
    results = emu.run()
    wall_s = time.perf_counter() - started
    resolved = results.meta["resolved_spec"]
    key = run_key(resolved, task.seed, task.version, "emulation")
    if key != task.key:
        raise RuntimeError(
            f"run {task.key[:12]}: the emulated scenario gives key {key[:12]}; "
            "was the scenario resolved by another build of ecnsim?"
        )
    results.meta.setdefault("ecnsim_version", task.version)
    return _output(task, results, None, key, resolved, wall_s, {}, EMULATION_TABLES)


def _parquet_bytes(table: Any) -> bytes:
    """An Arrow table as the bytes of a Parquet file (zstd-compressed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _ipc_bytes(table: Any) -> bytes:
    """An Arrow table as an Arrow IPC stream (what :func:`_decode_derived` reads back)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _import_hook(spec: str) -> Callable[..., Any]:
    """The function named ``"package.module:function"``."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"a run hook is named 'package.module:function', got {spec!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"run hook {spec!r} is not callable")
    return cast("Callable[..., Any]", obj)


def _concat_trace(chunks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Drained trace chunks (``{column: (dtype, payload)}``) as one ``{column: array}``."""
    import numpy as np

    from ecnsim.results import Table

    parts = [Table._from_core("trace", c).to_numpy() for c in chunks]
    parts = [p for p in parts if p and len(next(iter(p.values()))) > 0] or parts[:1]
    if not parts:
        return {}
    return {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}


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


def _worker_init(parent_pid: int, max_memory: int | None = None) -> None:
    """Pool worker set-up: Ctrl-C is the parent's business; die with the parent.

    ``max_memory`` is this worker's share of the memory available, the
    default limit of the simulations it runs (``ECNSIM_MAX_MEMORY``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if max_memory is not None and not os.environ.get("ECNSIM_MAX_MEMORY"):
        os.environ["ECNSIM_MAX_MEMORY"] = str(max_memory)
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
    from ecnsim._system import default_max_memory

    workers = max(1, min(jobs, len(tasks)))
    # Workers run side by side: each may use its share of the memory available.
    total = default_max_memory()
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_mp_context(),
        initializer=_worker_init,
        initargs=(os.getpid(), None if total is None else total // workers),
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
                # Its HTTP server binds 8787 unless told otherwise, and warns when
                # another cluster holds it: any free port, chosen by the kernel.
                dashboard_address=":0",
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

    def deterministic_points(self) -> list[int]:
        """Points whose seeds (two or more) all gave bit-identical results.

        At such a point nothing in the scenario draws a random number (no
        start jitter, no random AQM or workload), so the seeds are not
        independent repetitions: their spread is 0 by construction, not a
        measurement. Empty when the sweep has one seed.
        """
        if len(self.plan.seeds) < 2:
            return []
        # The digest covers the metadata (the seed among it); the tables' own
        # checksums in the manifest compare the results alone.
        tables: dict[str, tuple[tuple[str, str], ...]] = {}
        for key in self.keys:
            m = self.store.manifest(key)
            if m is not None:
                files = m.get("files", {})
                tables[key] = tuple(
                    sorted(
                        (f, str(i.get("sha256")))
                        for f, i in files.items()
                        if f.endswith(".parquet")
                    )
                )
        return same_for_every_seed(
            (r.point, tables[r.key]) for r in self.plan.runs if r.key in tables
        )

    def metrics(self, metrics: MetricSpec | None = None) -> pd.DataFrame:
        """One row per run: the catalog's columns plus one column per metric.

        ``metrics``: built-in names and/or ``{name: function(Results)}``
        (default: :data:`ecnsim.analysis.aggregate.DEFAULT_METRICS`).
        """
        from ecnsim.analysis.aggregate import run_metrics

        return run_metrics(self.store, self.runs(), metrics)

    def aggregate(
        self, metrics: MetricSpec | None = None, *, confidence: float = 0.95
    ) -> pd.DataFrame:
        """Mean, standard deviation and Student-t confidence interval per point and metric.

        A tidy DataFrame: the swept parameters, ``metric``, ``n``, ``mean``,
        ``std``, ``sem``, ``ci_low``, ``ci_high``, ``confidence`` (see
        :func:`ecnsim.analysis.aggregate.aggregate`).
        """
        from ecnsim.analysis.aggregate import aggregate, resolve_metrics

        names = list(resolve_metrics(metrics))
        per_run = self.metrics(metrics)
        by = [p for p in self.plan.params if p in per_run.columns]
        if self.failures:
            # Failed runs are simply absent from the means: say so, or a sweep whose every run
            # failed (a script without the `__main__` guard on the process pool) reads as a
            # table of n = 0 and NaN with no reason given.
            warnings.warn(
                f"sweep {self.name}: {len(self.failures)} of {len(self.plan.runs)} run(s) "
                "failed and are left out of these means (n counts the runs that finished; "
                f"result.failures has each error); the first: {self.failures[0][1]}",
                UserWarning,
                stacklevel=2,
            )
        same = self.deterministic_points()
        if same:
            warnings.warn(
                identical_seeds_message(
                    f"sweep {self.name}: {len(same)} of {len(self.plan.points)} point(s)",
                    len(self.plan.seeds),
                ),
                UserWarning,
                stacklevel=2,
            )
        return aggregate(per_run, by=by, metrics=names, confidence=confidence)


def _decode_derived(out: RunOutput, into: MutableMapping[tuple[str, str, str], Any]) -> None:
    """``out``'s derived tables into ``into`` by ``(key, tag, name)``, read from their Arrow IPC
    streams (:func:`_output` writes one beside each Parquet file): the table the file was
    written from, which a read of the file gives again (pyarrow stores the Arrow schema in
    it; a test checks this for each study)."""
    import pyarrow as pa

    for tag, named in out.derived_arrow.items():
        for name, stream in named.items():
            into[(out.key, tag, name)] = pa.ipc.open_stream(stream).read_all()


def _has_tables(store: Store, task: RunTask) -> bool:
    """True if the stored run has every table the task keeps (a sweep that asks for
    series reruns a run stored without them)."""
    keep = task.job.keep_tables if task.job is not None else task.keep_tables
    m = store.manifest(task.key) or {}
    stored = set(m.get("tables", {}))
    if keep is None:
        return {"flow_series", "queue_series"} <= stored
    return set(keep) <= stored


def run_sweep(
    sweep: Sweep | Plan,
    store: Store | str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    executor: Literal["auto", "serial", "process", "dask"] = "auto",
    dask: Any = None,
    progress: ProgressCallback | bool | None = None,
    verify: bool = True,
    raise_if_all_failed: bool = True,
    verified: Collection[str] = (),
    derived_into: MutableMapping[tuple[str, str, str], Any] | None = None,
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
    are run again; ``verified``: keys the caller has just seen complete (checked in full
    or written by an earlier sweep of the same call), checked without their checksums (the
    manifest and file sizes). Results are written as runs finish, each atomically. On
    Ctrl-C, finished results are kept, workers are stopped, and
    :class:`SweepInterrupted` is raised. A run that raises is recorded in
    ``failures`` and the others go on; if every run started failed (and
    ``raise_if_all_failed``, the default), :class:`SweepFailedError` is raised with the
    result, so that a script whose every run failed does not end as if it had worked.

    ``derived_into``: a mapping that receives each run written now's derived tables as Arrow
    tables, ``(key, tag, name) -> pyarrow.Table``, decoded from the Parquet bytes just
    written (so each is the table a read of the stored file gives) while the next runs are
    still running: a caller that reads them all afterwards (a study's report) then does not
    read the files again.
    """
    plan = sweep if isinstance(sweep, Plan) else sweep.plan()
    if plan.mode == "emulation":
        # Real time cannot be shared: two emulations (or an emulation beside simulations)
        # on the same cores would delay each other's packets and change the experiment.
        if executor in ("process", "dask") or dask is not None or (jobs or 1) > 1:
            raise ValueError(
                "emulated runs run one at a time, in real time: running them side by side "
                "would delay each other's packets and distort the experiment; use jobs=1 "
                "(--jobs 1) and no Dask"
            )
        executor, jobs = "serial", 1
    if not isinstance(store, Store):
        from ecnsim.sweep.store import default_store_path

        store = Store(store if store is not None else plan.store or default_store_path())
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
        check = store.check(t.key, full=verify and t.key not in verified)
        if (
            check.is_done
            and (t.job is None or store.has_derived(t.key, t.job.tag))
            and _has_tables(store, t)
        ):
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
        if derived_into is not None:
            _decode_derived(out, derived_into)
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

    if todo and plan.mode == "emulation":
        from ecnsim.emulation import check_environment

        # Root, namespaces, TUN: refused with what to do before any run (NamespaceError).
        check_environment()
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
    if raise_if_all_failed and todo and len(result.failures) == len(todo):
        raise SweepFailedError(result)
    return result
