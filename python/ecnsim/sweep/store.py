"""The results store: one directory of Parquet files per run, and a DuckDB catalog over them.

A run is identified by its **key**, the SHA-256 of the fully resolved scenario
(``meta["resolved_spec"]``: every default filled in), the seed and the ecnsim
version (:func:`run_key`). Two runs with the same key give bit-identical
results, so a run whose key is already in the store is never run again.

Layout (``docs/sweeps.md``)::

    STORE/
      runs/<key[:2]>/<key>/
          flows.parquet  queues.parquet  flow_series.parquet  queue_series.parquet
          scenario.json        the resolved scenario
          derived/<tag>/<name>.parquet   tables a study computed from the run (RunJob)
          manifest.json        written last: the run is in the store once this exists
      sweeps/<name>.json       each sweep's points, parameters and run keys
      catalog.duckdb           the catalog: an index rebuilt from the two above

Every file is written atomically: to a temporary file in the same directory,
flushed to disk (``fsync``), then renamed over the final name. The manifest
records each file's size and SHA-256 and each table's row count, so a
truncated or corrupt file is detected (:meth:`Store.check`) and the run is
rerun. The manifest also counts how many times the run was written
(``run_count``).

The manifest carries its own SHA-256 (``manifest_sha256``, over the rest of
it), so an edited manifest is seen as corrupt like an edited table.

The catalog (:meth:`Store.catalog`) is a cache: manifests and sweep files are
the source of truth, and the catalog is brought up to date from them each
time it is opened, so it never disagrees with the files, whatever was
interrupted. A run is catalogued only once its checksums are verified; a
damaged run is left out of the catalog and named by :meth:`Store.damaged`
(``ecnsim runs`` warns about it) until it is rerun.

The store refuses to write through a symbolic link that leads out of it (a
``runs/<xx>`` directory, the catalog), so a link cannot make it write or
change files elsewhere.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import re
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ecnsim.exceptions import EcnsimError
from ecnsim.results import Column, Results, Table

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = [
    "MANIFEST_FORMAT",
    "MODES",
    "RunCheck",
    "RunOutput",
    "Store",
    "StoreError",
    "canonical_json",
    "default_store_path",
    "run_key",
]

#: Version of the manifest and sweep-file layout (2: manifests carry their own SHA-256).
MANIFEST_FORMAT = 2

#: Environment variable naming the default store directory.
STORE_ENV = "ECNSIM_STORE"

_KEY_RE = re.compile(r"^[0-9a-f]{64}$")
_SWEEP_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

#: Columns of :meth:`Store.runs` that are not sweep parameters, in order.
RUN_COLUMNS = (
    "sweep",
    "point",
    "seed",
    "run_mode",
    "key",
    "digest",
    "scenario",
    "ecnsim_version",
    "finished",
    "wall_s",
    "events",
    "packet_hops",
    "run_count",
    "written_at",
    "dir",
)


class StoreError(EcnsimError):
    """The store cannot be used as asked (a symbolic link that leads out of it, ...).

    ``path`` names the file or directory of the store it is about.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def _manifest_digest(manifest: Mapping[str, Any]) -> str:
    """SHA-256 of a manifest's content other than this digest itself."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return _sha256(canonical_json(body).encode("utf-8"))


def default_store_path() -> Path:
    """``$ECNSIM_STORE`` if set, else ``./ecnsim-store``."""
    return Path(os.environ.get(STORE_ENV) or "ecnsim-store")


def canonical_json(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces: equal data, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


#: How a run was made: ``"simulation"`` (the core alone) or ``"emulation"`` (real Linux
#: hosts through the core's network in real time, ``docs/emulation.md``).
MODES = ("simulation", "emulation")


def run_key(
    resolved_spec: str | Mapping[str, Any], seed: int, version: str, mode: str = "simulation"
) -> str:
    """The store key of a run: SHA-256 (hex) of the resolved scenario, the seed, the version
    and, for any mode but ``"simulation"``, the mode.

    ``resolved_spec`` is the core's resolved scenario (``meta["resolved_spec"]``),
    as JSON text or parsed; it is canonicalised first, so key order and
    whitespace do not matter. An emulated run of a scenario has another key
    than its simulation, so the two never mix in a store (simulated keys are
    those of stores written before emulation existed).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    spec = json.loads(resolved_spec) if isinstance(resolved_spec, str) else resolved_spec
    keyed: dict[str, Any] = {"ecnsim_version": version, "seed": int(seed), "spec": spec}
    if mode != "simulation":
        keyed["mode"] = mode
    text = canonical_json(keyed)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RunOutput:
    """What one finished run hands to the store: Parquet bytes per table and its metadata.

    Produced by :func:`ecnsim.sweep.execute` in whichever process ran the
    simulation; written by :meth:`Store.put` in the process that owns the store.
    """

    key: str
    seed: int
    digest: int
    #: The run's metadata (``Results.meta``) without ``resolved_spec``.
    meta: dict[str, str]
    #: The resolved scenario as JSON text.
    resolved_spec: str
    #: Each table encoded as a Parquet file.
    tables: dict[str, bytes]
    #: Each table's row count.
    rows: dict[str, int]
    wall_s: float = math.nan
    #: CPU seconds of the simulation in its worker thread (the span of ``wall_s``); NaN if unknown.
    cpu_s: float = math.nan
    events: int = 0
    packet_hops: int = 0
    host: str = ""
    pid: int = 0
    #: Tables a :class:`~ecnsim.sweep.RunJob` derived from the run: ``{tag: {name: Parquet}}``.
    derived: dict[str, dict[str, bytes]] = field(default_factory=dict)
    #: Their row counts, ``{tag: {name: rows}}``.
    derived_rows: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The same tables as Arrow IPC streams, ``{tag: {name: bytes}}``: not stored; a caller
    #: that wants the tables in memory (``run_sweep(derived_into=...)``) reads these, a
    #: fraction of a Parquet file's decoding.
    derived_arrow: dict[str, dict[str, bytes]] = field(default_factory=dict)
    #: The run's summary metrics, computed when it finished
    #: (:func:`ecnsim.analysis.aggregate.summary_metrics`): ``{"version": v, "values": {...}}``.
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunCheck:
    """The state of one key in the store: ``done``, ``missing`` or ``corrupt`` (with why)."""

    key: str
    status: Literal["done", "missing", "corrupt"]
    reason: str = ""

    @property
    def is_done(self) -> bool:
        return self.status == "done"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _fsync_dir(path: Path) -> None:
    """Flush a directory's entries (new names) to disk; a no-op where unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``: temp file in the same directory, fsync, rename."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _json_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Summary metrics for a manifest: NaN (no value) as null, so the JSON stays standard."""
    values = {
        str(k): (None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v))
        for k, v in (metrics.get("values") or {}).items()
    }
    return {"version": metrics.get("version"), "values": values} if values else {}


def _tag_dir(tag: str) -> str:
    """A directory name for a derived-table tag: readable, and distinct for distinct tags."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", tag)[:60]
    return f"{safe}-{hashlib.sha256(tag.encode('utf-8')).hexdigest()[:8]}"


def _carry_over(
    d: Path,
    previous: Mapping[str, Any],
    files: dict[str, dict[str, Any]],
    tables: dict[str, dict[str, Any]],
    derived: dict[str, dict[str, dict[str, Any]]],
) -> None:
    """Add to a new manifest what ``previous`` has and it lacks (tables, tags), if intact."""
    old_files = previous.get("files") or {}

    def intact(rel: str) -> bool:
        info = old_files.get(rel)
        if not isinstance(info, dict):
            return False
        try:
            return (d / rel).stat().st_size == info.get("bytes")
        except OSError:
            return False

    for name, info in (previous.get("tables") or {}).items():
        if name not in tables and isinstance(info, dict) and intact(info.get("file", "")):
            tables[name] = info
            files[info["file"]] = old_files[info["file"]]
    for tag, named in (previous.get("derived") or {}).items():
        if tag in derived or not isinstance(named, dict):
            continue
        if all(isinstance(i, dict) and intact(i.get("file", "")) for i in named.values()):
            derived[tag] = named
            for info in named.values():
                files[info["file"]] = old_files[info["file"]]


def _read_parquet(path: Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """One small Parquet file as a DataFrame: the same frame as ``pd.read_parquet``, without
    its dataset machinery (a third of the CPU per file; a study's report reads thousands);
    ``columns``: only those."""
    import pyarrow.parquet as pq

    cols = None if columns is None else list(columns)
    df: pd.DataFrame = pq.ParquetFile(path).read(columns=cols).to_pandas()
    return df


def _column_from_arrow(array: Any) -> Column:
    """A Parquet column back as the core's types: uint64/float64 numpy arrays or ``str`` lists."""
    import pyarrow as pa

    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        names: list[str] = array.to_pylist()
        return names
    values: np.ndarray = array.to_numpy(zero_copy_only=False)
    return values


def _scalar_param(value: Any) -> Any:
    """A parameter value as a catalog cell: scalars as they are, anything else as JSON."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return canonical_json(value)


class Store:
    """A results store rooted at ``root`` (created on first write).

    ::

        store = Store("out")
        store.runs()                       # DataFrame: one row per run, parameters as columns
        store.runs(where='"tcp.cc" = \\'reno\\'')
        store.results(key)                 # the run's Results, read back from Parquet
        store.query("SELECT ... FROM runs JOIN flows USING (key) ...")
    """

    CATALOG = "catalog.duckdb"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    # -- paths ----------------------------------------------------------------

    @property
    def runs_root(self) -> Path:
        return self.root / "runs"

    @property
    def sweeps_root(self) -> Path:
        return self.root / "sweeps"

    @property
    def catalog_path(self) -> Path:
        return self.root / self.CATALOG

    def run_dir(self, key: str) -> Path:
        """The directory of the run with ``key`` (whether or not it exists)."""
        if not _KEY_RE.match(key):
            raise ValueError(f"not a run key (64 hex digits): {key!r}")
        return self.runs_root / key[:2] / key

    def _inside(self, path: Path) -> Path:
        """``path``, if it resolves inside the store; :class:`StoreError` if a
        symbolic link takes it (or any directory on the way) elsewhere."""
        root = self.root.resolve()
        real = path.resolve()
        if real != root and root not in real.parents:
            rel = path.relative_to(self.root) if self.root in path.parents else path
            raise StoreError(
                str(rel),
                f"is (or is under) a symbolic link to {real}, outside the store {root}; "
                "refusing to write there",
            )
        return path

    def run_keys(self) -> list[str]:
        """Keys of every run directory holding a manifest (complete or not), sorted."""
        if not self.runs_root.is_dir():
            return []
        return sorted(p.parent.name for p in self.runs_root.glob("*/*/manifest.json"))

    # -- reading ----------------------------------------------------------------

    def manifest(self, key: str) -> dict[str, Any] | None:
        """The run's manifest, or None if there is none (or it cannot be parsed)."""
        try:
            data = json.loads((self.run_dir(key) / "manifest.json").read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def check(self, key: str, *, full: bool = True) -> RunCheck:
        """Whether the run with ``key`` is complete and intact.

        Checks that the manifest parses and names this key, and that every
        file it lists exists with the recorded size. With ``full`` (the
        default) also checks each file's SHA-256 and each Parquet file's
        footer and row count, so any truncation or corruption is found.
        """
        d = self.run_dir(key)
        path = d / "manifest.json"
        if not path.exists():
            why = "no manifest (interrupted write)" if d.exists() else ""
            return RunCheck(key, "missing", why)
        m = self.manifest(key)
        if m is None:
            return RunCheck(key, "corrupt", "manifest.json is not valid JSON")
        if m.get("key") != key or m.get("format") != MANIFEST_FORMAT:
            return RunCheck(key, "corrupt", "manifest.json is for another key or format")
        if m.get("manifest_sha256") != _manifest_digest(m):
            return RunCheck(key, "corrupt", "manifest.json was changed after it was written")
        files = m.get("files")
        tables = m.get("tables")
        if not isinstance(files, dict) or not isinstance(tables, dict):
            return RunCheck(key, "corrupt", "manifest.json lists no files")
        for name, info in files.items():
            f = d / name
            try:
                size = f.stat().st_size
            except OSError:
                return RunCheck(key, "corrupt", f"{name} is missing")
            if size != info.get("bytes"):
                return RunCheck(
                    key,
                    "corrupt",
                    f"{name} has {size} bytes, the manifest says {info.get('bytes')}",
                )
            if full and _sha256_file(f) != info.get("sha256"):
                return RunCheck(key, "corrupt", f"{name}: SHA-256 differs from the manifest")
        derived = m.get("derived", {})
        if not isinstance(derived, dict):
            return RunCheck(key, "corrupt", "manifest.json has a malformed derived section")
        if full:
            import pyarrow.parquet as pq

            every = [*tables.items()]
            for tag, named in derived.items():
                every.extend((f"{tag}/{name}", info) for name, info in named.items())
            for table, info in every:
                f = d / info["file"]
                try:
                    rows = pq.read_metadata(f).num_rows
                except Exception as e:  # pyarrow raises several types for a bad file
                    return RunCheck(key, "corrupt", f"{info['file']}: unreadable Parquet ({e})")
                if rows != info.get("rows"):
                    return RunCheck(
                        key,
                        "corrupt",
                        f"table {table}: {rows} rows, the manifest says {info.get('rows')}",
                    )
        return RunCheck(key, "done")

    def has(self, key: str, *, full: bool = True) -> bool:
        """True if the run with ``key`` is complete and intact (see :meth:`check`)."""
        return self.check(key, full=full).is_done

    def results(self, key: str) -> Results:
        """The run's :class:`~ecnsim.Results`, read back from its Parquet files."""
        import pyarrow.parquet as pq

        m = self.manifest(key)
        if m is None:
            raise KeyError(f"no run {key} in {self.root}")
        d = self.run_dir(key)
        tables: dict[str, Table] = {}
        for name, info in m["tables"].items():
            t = pq.read_table(d / info["file"])
            tables[name] = Table(name, {c: _column_from_arrow(t.column(c)) for c in t.column_names})
        meta = dict(m.get("meta", {}))
        meta["resolved_spec"] = (d / "scenario.json").read_text(encoding="utf-8")
        return Results(tables, meta, int(m["digest"]))

    def read_table(
        self, key: str, table: str, *, columns: Sequence[str] | None = None
    ) -> pd.DataFrame:
        """One table of one run as a DataFrame (``columns``: only those)."""
        m = self.manifest(key)
        if m is None:
            raise KeyError(f"no run {key} in {self.root}")
        try:
            info = m["tables"][table]
        except KeyError:
            raise KeyError(f"run {key} has no table {table!r}") from None
        return _read_parquet(self.run_dir(key) / info["file"], columns)

    def has_derived(self, key: str, tag: str) -> bool:
        """True if the run's manifest lists tables derived under ``tag`` (see :class:`RunJob`)."""
        m = self.manifest(key)
        return m is not None and tag in (m.get("derived") or {})

    def derived_files(self, key: str) -> dict[str, dict[str, Path]]:
        """The files of the tables derived from a run, ``{tag: {name: path}}``, from one read
        of its manifest (empty without a manifest)."""
        m = self.manifest(key)
        derived = (m or {}).get("derived") or {}
        d = self.run_dir(key)
        return {
            tag: {name: d / info["file"] for name, info in named.items()}
            for tag, named in derived.items()
            if isinstance(named, dict)
        }

    def read_derived(self, key: str, tag: str, name: str) -> pd.DataFrame:
        """One table that a :class:`~ecnsim.sweep.RunJob` derived from a run, as a DataFrame."""

        m = self.manifest(key)
        if m is None:
            raise KeyError(f"no run {key} in {self.root}")
        try:
            info = m["derived"][tag][name]
        except KeyError:
            raise KeyError(f"run {key} has no derived table {tag}/{name}") from None
        return _read_parquet(self.run_dir(key) / info["file"])

    def concat_derived(self, keys: Sequence[str], tag: str, name: str) -> pd.DataFrame:
        """A derived table of several runs, stacked, with a leading ``key`` column.

        Each key is a ``(key, tag)`` pair's key; runs without the table are skipped.
        """
        import pandas as pd

        parts = []
        for key in keys:
            try:
                df = self.read_derived(key, tag, name)
            except KeyError:
                continue
            df.insert(0, "key", key)
            parts.append(df)
        if not parts:
            empty: pd.DataFrame = pd.DataFrame({"key": pd.Series([], dtype="str")})
            return empty
        joined: pd.DataFrame = pd.concat(parts, ignore_index=True)
        return joined

    # -- writing ----------------------------------------------------------------

    def put(
        self,
        output: RunOutput,
        *,
        sweep: str | None = None,
        point: int | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Write one run atomically; returns its manifest.

        Tables and ``scenario.json`` are written first, the manifest last, each
        through a temporary file, fsync and rename: a run interrupted at any
        point has no manifest, or an old one whose checksums do not match, and
        is seen as missing or corrupt. Rewriting a key (after corruption)
        increments ``run_count``.
        """
        d = self.run_dir(output.key)
        self._inside(d.parent)
        d.mkdir(parents=True, exist_ok=True)
        self._inside(d)
        previous = self.manifest(output.key)
        run_count = 1
        if previous is not None:
            run_count = int(previous.get("run_count", 0)) + 1
            (d / "manifest.json").unlink()
        for stale in d.glob(".*.tmp-*"):
            with contextlib.suppress(OSError):
                stale.unlink()
        files: dict[str, dict[str, Any]] = {}
        tables: dict[str, dict[str, Any]] = {}
        derived: dict[str, dict[str, dict[str, Any]]] = {}
        for name, data in output.tables.items():
            filename = f"{name}.parquet"
            _atomic_write(d / filename, data)
            files[filename] = {"bytes": len(data), "sha256": _sha256(data)}
            tables[name] = {"file": filename, "rows": output.rows[name]}
        for tag, named in output.derived.items():
            sub = d / "derived" / _tag_dir(tag)
            sub.mkdir(parents=True, exist_ok=True)
            self._inside(sub)
            derived[tag] = {}
            for name, data in named.items():
                rel = f"derived/{_tag_dir(tag)}/{name}.parquet"
                _atomic_write(d / rel, data)
                files[rel] = {"bytes": len(data), "sha256": _sha256(data)}
                derived[tag][name] = {"file": rel, "rows": output.derived_rows[tag][name]}
        if previous is not None:
            # The same key gives the same results: keep what an earlier write stored
            # and this one did not (other tables, other tags), if it is still intact.
            _carry_over(d, previous, files, tables, derived)
        spec_bytes = output.resolved_spec.encode("utf-8")
        _atomic_write(d / "scenario.json", spec_bytes)
        files["scenario.json"] = {"bytes": len(spec_bytes), "sha256": _sha256(spec_bytes)}
        manifest: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "key": output.key,
            "ecnsim_version": output.meta.get("ecnsim_version", ""),
            "seed": output.seed,
            "digest": output.digest,
            "digest_hex": f"{output.digest:016x}",
            "scenario": json.loads(output.resolved_spec).get("name"),
            "finished": output.meta.get("finished", True) not in (False, "false"),
            "sweep": sweep,
            "point": point,
            "params": dict(params) if params is not None else {},
            "meta": dict(output.meta),
            "tables": tables,
            "derived": derived,
            "metrics": _json_metrics(output.metrics),
            "files": files,
            "run_count": run_count,
            "wall_s": output.wall_s,
            "cpu_s": output.cpu_s if math.isfinite(output.cpu_s) else None,
            "events": output.events,
            "packet_hops": output.packet_hops,
            "host": output.host,
            "pid": output.pid,
            "written_at": _utc_now(),
        }
        manifest["manifest_sha256"] = _manifest_digest(manifest)
        _atomic_write(d / "manifest.json", _json_bytes(manifest))
        _fsync_dir(d)
        _fsync_dir(d.parent)
        return manifest

    def record_sweep(self, name: str, definition: Mapping[str, Any]) -> Path:
        """Write (atomically, replacing any earlier one) the definition of sweep ``name``."""
        if not _SWEEP_NAME_RE.match(name):
            raise ValueError(
                f"sweep name {name!r}: use letters, digits, '.', '_' and '-' "
                "(starting with a letter or digit)"
            )
        self.sweeps_root.mkdir(parents=True, exist_ok=True)
        self._inside(self.sweeps_root)
        path = self.sweeps_root / f"{name}.json"
        _atomic_write(path, _json_bytes({"format": MANIFEST_FORMAT, **definition}))
        _fsync_dir(self.sweeps_root)
        return path

    def sweep_definition(self, name: str) -> dict[str, Any] | None:
        """The stored definition of sweep ``name`` (see :meth:`record_sweep`), if any."""
        try:
            data = json.loads((self.sweeps_root / f"{name}.json").read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def sweep_names(self) -> list[str]:
        """Names of the sweeps recorded in the store, sorted."""
        if not self.sweeps_root.is_dir():
            return []
        return sorted(p.stem for p in self.sweeps_root.glob("*.json"))

    # -- the catalog --------------------------------------------------------------

    @contextlib.contextmanager
    def catalog(self, *, timeout: float = 30.0) -> Iterator[duckdb.DuckDBPyConnection]:
        """An open DuckDB connection to the catalog, brought up to date first.

        Tables: ``runs`` (one row per run and sweep it belongs to, with each
        swept parameter as a column named by its path), ``sweeps`` (one row
        per sweep: points, planned and finished runs). Views over the runs'
        Parquet files: ``flows``, ``queues``, ``flow_series``,
        ``queue_series`` (whichever tables the runs have), each with a ``key``
        column to join with ``runs``. The file can be held by one process at
        a time; opening waits up to ``timeout`` seconds for another holder.
        """
        con = self._connect(timeout)
        try:
            self._sync(con)
            self._create_views(con)
            yield con
        finally:
            con.close()

    def runs(self, *, sweep: str | None = None, where: str | None = None) -> pd.DataFrame:
        """Every finished run as a DataFrame, the swept parameters as columns.

        ``sweep`` keeps the runs of one sweep; ``where`` is an SQL condition on
        the ``runs`` table (``'"links[0].queue.limit_packets" >= 50 AND seed = 1'``).
        Parameter columns with no value in the selected runs are left out.
        """
        sql = "SELECT * FROM runs"
        conditions = []
        args: list[Any] = []
        if sweep is not None:
            conditions.append("sweep = ?")
            args.append(sweep)
        if where:
            conditions.append(f"({where})")
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        sql += " ORDER BY sweep NULLS LAST, point NULLS LAST, seed, key"
        df = self.query(sql, args)
        empty = [c for c in df.columns if c not in RUN_COLUMNS and df[c].isna().all()]
        kept: pd.DataFrame = df.drop(columns=empty)
        return kept

    def query(self, sql: str, args: Sequence[Any] | None = None) -> pd.DataFrame:
        """Run an SQL query on the catalog (see :meth:`catalog`) and return a DataFrame."""
        with self.catalog() as con:
            df: pd.DataFrame = con.execute(sql, list(args or [])).df()
        return df

    def summary_metrics(self, keys: Sequence[str], *, version: int) -> pd.DataFrame:
        """The summary metrics stored when each run finished: one row per key that has them.

        Read from the catalog's ``run_metrics`` table (no run's Parquet file is
        opened); columns are metric names, the index the run keys. Runs
        stored without metrics of ``version`` are absent.
        """
        import pandas as pd

        wanted = list(dict.fromkeys(str(k) for k in keys))
        # The full catalog: making its views finds files damaged in place, whose
        # runs (and metrics) it leaves out.
        with self.catalog() as con:
            con.register("_wanted", pd.DataFrame({"key": wanted}))
            try:
                long = con.execute(
                    "SELECT m.key, m.metric, m.value FROM run_metrics m "
                    "JOIN _wanted w ON m.key = w.key WHERE m.version = ?",
                    [version],
                ).df()
            finally:
                con.unregister("_wanted")
        if long.empty:
            none: pd.DataFrame = pd.DataFrame(index=pd.Index([], name="key", dtype=object))
            return none
        wide: pd.DataFrame = long.pivot(index="key", columns="metric", values="value")
        wide.columns.name = None
        floats: pd.DataFrame = wide.astype("float64")
        return floats

    def concat_table(self, keys: Sequence[str], table: str) -> pd.DataFrame:
        """Table ``table`` of every run in ``keys``, stacked, with a leading ``key`` column."""
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        parts = []
        for key in dict.fromkeys(keys):
            m = self.manifest(key)
            if m is None or table not in m.get("tables", {}):
                continue
            t = pq.read_table(self.run_dir(key) / m["tables"][table]["file"])
            # Stores written before counters became int64 have uint64 columns.
            for i, f in enumerate(t.schema):
                if pa.types.is_unsigned_integer(f.type):
                    t = t.set_column(i, f.name, t.column(i).cast(pa.int64()))
            parts.append(t.add_column(0, "key", pa.array([key] * t.num_rows, type=pa.string())))
        if not parts:
            empty: pd.DataFrame = pd.DataFrame({"key": pd.Series([], dtype=object)})
            return empty
        df: pd.DataFrame = pa.concat_tables(parts, promote_options="default").to_pandas()
        return df

    # -- catalog internals ----------------------------------------------------------

    def _connect(self, timeout: float) -> duckdb.DuckDBPyConnection:
        import duckdb

        self.root.mkdir(parents=True, exist_ok=True)
        for p in (self.catalog_path, self.catalog_path.with_name(self.CATALOG + ".wal")):
            if p.is_symlink():
                raise StoreError(
                    p.name,
                    f"is a symbolic link (to {os.readlink(p)}); the catalog must be this store's "
                    "own file: remove the link (the catalog is rebuilt from the runs)",
                )
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            try:
                return duckdb.connect(str(self.catalog_path))
            except duckdb.Error as e:
                if "lock" not in str(e).lower():
                    # Not a usable database file (garbled, or from another DuckDB
                    # version): the catalog is only a cache, so rebuild it.
                    self._discard_catalog()
                    return duckdb.connect(str(self.catalog_path))
                # Held by another process: wait for it.
                if time.monotonic() > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _discard_catalog(self) -> None:
        for p in (self.catalog_path, self.catalog_path.with_name(self.CATALOG + ".wal")):
            with contextlib.suppress(OSError):
                p.unlink()

    def _scan(self, pattern: str, base: Path) -> dict[str, tuple[int, Path]]:
        """``{name: (mtime_ns, path)}`` for files matching ``pattern`` under ``base``."""
        found: dict[str, tuple[int, Path]] = {}
        if not base.is_dir():
            return found
        for p in base.glob(pattern):
            try:
                st = p.stat()
            except OSError:
                continue
            name = p.parent.name if p.name == "manifest.json" else p.stem
            found[name] = (st.st_mtime_ns, p)
        return found

    def _sync(self, con: duckdb.DuckDBPyConnection) -> None:
        """Bring the catalog's tables up to date with the manifests and sweep files."""
        con.execute(
            "CREATE TABLE IF NOT EXISTS run_index "
            "(key VARCHAR PRIMARY KEY, mtime_ns BIGINT, info VARCHAR)"
        )
        con.execute(
            "CREATE TABLE IF NOT EXISTS sweep_index "
            "(name VARCHAR PRIMARY KEY, mtime_ns BIGINT, definition VARCHAR)"
        )
        con.execute(
            "CREATE TABLE IF NOT EXISTS run_damage (key VARCHAR PRIMARY KEY, reason VARCHAR)"
        )
        changed = self._sync_index(
            con, "run_index", "key", "info", self._scan("*/*/manifest.json", self.runs_root)
        )
        changed |= self._sync_index(
            con, "sweep_index", "name", "definition", self._scan("*.json", self.sweeps_root)
        )
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if changed or not {"runs", "sweeps", "run_metrics"} <= tables:
            self._rebuild(con)

    def _sync_index(
        self,
        con: duckdb.DuckDBPyConnection,
        table: str,
        id_col: str,
        data_col: str,
        on_disk: dict[str, tuple[int, Path]],
    ) -> bool:
        known = {
            r[0]: (r[1], r[2])
            for r in con.execute(f"SELECT {id_col}, mtime_ns, {data_col} FROM {table}").fetchall()
        }
        gone = [k for k in known if k not in on_disk]
        fresh = [
            (k, m, p)
            for k, (m, p) in on_disk.items()
            if k not in known
            or known[k][0] != m
            or (table == "run_index" and not self._still_intact(k, known[k][1]))
        ]
        if not gone and not fresh:
            return False
        con.execute("BEGIN TRANSACTION")
        try:
            for k in gone:
                con.execute(f"DELETE FROM {table} WHERE {id_col} = ?", [k])
                if table == "run_index":
                    con.execute("DELETE FROM run_damage WHERE key = ?", [k])
            for k, mtime, path in fresh:
                try:
                    data = json.loads(path.read_bytes())
                except (OSError, ValueError):
                    data = None
                if table == "run_index":
                    data, reason = self._index_entry(k, data)
                    con.execute("DELETE FROM run_damage WHERE key = ?", [k])
                    if reason:
                        con.execute("INSERT INTO run_damage VALUES (?, ?)", [k, reason])
                con.execute(f"DELETE FROM {table} WHERE {id_col} = ?", [k])
                con.execute(
                    f"INSERT INTO {table} VALUES (?, ?, ?)",
                    [k, mtime, None if data is None else json.dumps(data)],
                )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return True

    def _still_intact(self, key: str, info: str | None) -> bool:
        """Whether an indexed run's files are unchanged since it was indexed (verified).

        Files can be damaged without touching the manifest, so this runs at
        every sync: one ``stat`` per file, comparing size and modification
        time; a changed file has its run verified again (checksums). A run
        indexed as damaged is always looked at again (it may have been repaired).
        """
        if info is None:
            return False
        d = self.run_dir(key)
        stamps = json.loads(info).get("stamps")
        if not isinstance(stamps, dict):
            return False
        for name, (size, mtime_ns) in stamps.items():
            try:
                st = (d / name).stat()
            except OSError:
                return False
            if st.st_size != size or st.st_mtime_ns != mtime_ns:
                return False
        return True

    def _index_entry(self, key: str, m: Any) -> tuple[dict[str, Any] | None, str]:
        """The manifest fields the catalog keeps, or ``(None, why)`` if the run is damaged.

        The run is verified in full (checksums, Parquet footers) once per change.
        """
        if not isinstance(m, dict):
            return None, "manifest.json is not valid JSON"
        check = self.check(key, full=True)
        if not check.is_done:
            return None, check.reason or check.status
        d = self.run_dir(key)
        stamps = {}
        for name in m.get("files", {}):
            with contextlib.suppress(OSError):
                st = (d / name).stat()
                stamps[name] = [st.st_size, st.st_mtime_ns]
        meta: dict[str, Any] = m["meta"] if isinstance(m.get("meta"), dict) else {}
        entry = {
            "seed": m.get("seed"),
            "run_mode": meta.get("mode") or "simulation",
            "digest": m.get("digest"),
            "scenario": m.get("scenario"),
            "ecnsim_version": m.get("ecnsim_version"),
            "finished": m.get("finished"),
            "wall_s": m.get("wall_s"),
            "events": m.get("events"),
            "packet_hops": m.get("packet_hops"),
            "run_count": m.get("run_count"),
            "written_at": m.get("written_at"),
            "sweep": m.get("sweep"),
            "point": m.get("point"),
            "params": m.get("params") or {},
            "tables": {t: info["file"] for t, info in m.get("tables", {}).items()},
            "metrics": m.get("metrics") or {},
            "stamps": stamps,
        }
        return entry, ""

    def damaged(self) -> list[tuple[str, str]]:
        """``(key, why)`` of every run left out of the catalog because its files are damaged.

        Such a run is rerun by the next sweep that needs it.
        """
        with self.catalog() as con:
            rows = con.execute("SELECT key, reason FROM run_damage ORDER BY key").fetchall()
        return [(str(k), str(r)) for k, r in rows]

    def _rebuild(self, con: duckdb.DuckDBPyConnection) -> None:
        """Recreate the ``runs`` and ``sweeps`` tables from the two indexes."""
        import pandas as pd

        runs: dict[str, dict[str, Any]] = {}
        for key, info in con.execute(
            "SELECT key, info FROM run_index WHERE info IS NOT NULL"
        ).fetchall():
            runs[key] = json.loads(info)
        sweeps: dict[str, dict[str, Any]] = {}
        for name, definition in con.execute(
            "SELECT name, definition FROM sweep_index WHERE definition IS NOT NULL ORDER BY name"
        ).fetchall():
            d = json.loads(definition)
            if isinstance(d, dict):
                sweeps[name] = d

        rows: list[dict[str, Any]] = []
        param_names: dict[str, None] = {}
        claimed: set[str] = set()
        sweep_rows: list[dict[str, Any]] = []
        for name, d in sweeps.items():
            points = {p["point"]: p.get("params", {}) for p in d.get("points", [])}
            param_names.update(dict.fromkeys(d.get("params", [])))
            planned = d.get("runs", [])
            done = 0
            for r in planned:
                info = runs.get(r["key"])
                if info is None:
                    continue
                done += 1
                claimed.add(r["key"])
                rows.append(
                    self._run_row(r["key"], info, name, r["point"], points.get(r["point"], {}))
                )
            sweep_rows.append(
                {
                    "name": name,
                    "points": len(points),
                    "runs": len(planned),
                    "done": done,
                    "params": json.dumps(d.get("params", [])),
                    "written_at": d.get("written_at"),
                }
            )
        for key, info in runs.items():
            if key in claimed:
                continue
            params = info.get("params") or {}
            param_names.update(dict.fromkeys(params))
            rows.append(self._run_row(key, info, info.get("sweep"), info.get("point"), params))

        columns = list(RUN_COLUMNS) + list(param_names)
        df = pd.DataFrame(rows, columns=columns)
        for p in param_names:
            df[p] = _uniform_column([r.get(p) for r in rows])
        for c in ("point", "seed", "events", "packet_hops", "run_count"):
            df[c] = pd.array(df[c].tolist(), dtype="Int64")
        df["digest"] = pd.array(df["digest"].tolist(), dtype="UInt64")
        df["wall_s"] = df["wall_s"].astype("float64")
        df["finished"] = pd.array(df["finished"].tolist(), dtype="boolean")
        for c in ("sweep", "run_mode", "key", "scenario", "ecnsim_version", "written_at", "dir"):
            df[c] = pd.array(df[c].tolist(), dtype="string")
        sdf = pd.DataFrame(
            sweep_rows, columns=["name", "points", "runs", "done", "params", "written_at"]
        )
        for c in ("name", "params", "written_at"):
            sdf[c] = pd.array(sdf[c].tolist(), dtype="string")
        for c in ("points", "runs", "done"):
            sdf[c] = pd.array(sdf[c].tolist(), dtype="Int64")
        metric_rows = [
            (key, int(m["version"]), str(name), None if v is None else float(v))
            for key, info in runs.items()
            if isinstance(m := info.get("metrics"), dict) and isinstance(m.get("version"), int)
            for name, v in (m.get("values") or {}).items()
        ]
        mdf = pd.DataFrame(metric_rows, columns=["key", "version", "metric", "value"])
        mdf["key"] = pd.array(mdf["key"].tolist(), dtype="string")
        mdf["metric"] = pd.array(mdf["metric"].tolist(), dtype="string")
        mdf["version"] = pd.array(mdf["version"].tolist(), dtype="Int64")
        mdf["value"] = mdf["value"].astype("float64")
        con.register("_runs_df", df)
        con.register("_sweeps_df", sdf)
        con.register("_metrics_df", mdf)
        try:
            con.execute("CREATE OR REPLACE TABLE runs AS SELECT * FROM _runs_df")
            con.execute("CREATE OR REPLACE TABLE sweeps AS SELECT * FROM _sweeps_df")
            con.execute("CREATE OR REPLACE TABLE run_metrics AS SELECT * FROM _metrics_df")
        finally:
            con.unregister("_runs_df")
            con.unregister("_sweeps_df")
            con.unregister("_metrics_df")

    def _run_row(
        self,
        key: str,
        info: Mapping[str, Any],
        sweep: str | None,
        point: int | None,
        params: Mapping[str, Any],
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "sweep": sweep,
            "point": point,
            "seed": info.get("seed"),
            # Not "mode": a study may have an axis of that name (rfc2884's ECN / non-ECN).
            "run_mode": info.get("run_mode") or "simulation",
            "key": key,
            "digest": info.get("digest"),
            "scenario": info.get("scenario"),
            "ecnsim_version": info.get("ecnsim_version"),
            "finished": info.get("finished"),
            "wall_s": info.get("wall_s"),
            "events": info.get("events"),
            "packet_hops": info.get("packet_hops"),
            "run_count": info.get("run_count"),
            "written_at": info.get("written_at"),
            "dir": str(self.run_dir(key)),
        }
        for p, v in params.items():
            row[p] = _scalar_param(v)
        return row

    def _create_views(self, con: duckdb.DuckDBPyConnection) -> None:
        """Temporary views ``flows``, ``queues``, ... over the catalogued runs' Parquet files."""
        import duckdb

        files: dict[str, list[str]] = {}
        for key, info in con.execute(
            "SELECT key, info FROM run_index WHERE info IS NOT NULL ORDER BY key"
        ).fetchall():
            for table, filename in json.loads(info)["tables"].items():
                files.setdefault(table, []).append(str(self.run_dir(key) / filename))
        for table in ("flows", "queues", "flow_series", "queue_series", *files):
            if not re.match(r"^[a-z_][a-z0-9_]*$", table):
                continue
            paths = files.get(table)
            if not paths:
                con.execute(
                    f"CREATE OR REPLACE TEMP VIEW {table} AS "
                    "SELECT NULL::VARCHAR AS key WHERE false"
                )
                continue
            try:
                self._create_view(con, table, paths)
            except duckdb.Error:
                # A file damaged since its run was verified (same size and time):
                # leave its run out, name it, and try again without it.
                bad = self._unreadable(paths)
                for path in bad:
                    key = Path(path).parent.name
                    con.execute("UPDATE run_index SET info = NULL WHERE key = ?", [key])
                    con.execute("DELETE FROM run_damage WHERE key = ?", [key])
                    con.execute(
                        "INSERT INTO run_damage VALUES (?, ?)",
                        [key, f"{Path(path).name}: unreadable Parquet"],
                    )
                good = [p for p in paths if p not in bad]
                if bad:
                    self._rebuild(con)
                if not bad or not good:
                    con.execute(
                        f"CREATE OR REPLACE TEMP VIEW {table} AS "
                        "SELECT NULL::VARCHAR AS key WHERE false"
                    )
                    if not bad:
                        raise
                    continue
                self._create_view(con, table, good)

    @staticmethod
    def _create_view(con: duckdb.DuckDBPyConnection, table: str, paths: Sequence[str]) -> None:
        listing = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {table} AS "
            r"SELECT regexp_extract(filename, '([0-9a-f]{64})[/\\][^/\\]+$', 1) AS key, "
            f"* EXCLUDE (filename) FROM read_parquet([{listing}], filename = true, "
            "union_by_name = true)"
        )

    @staticmethod
    def _unreadable(paths: Sequence[str]) -> set[str]:
        """The Parquet files among ``paths`` whose footer cannot be read."""
        import pyarrow.parquet as pq

        bad = set()
        for p in paths:
            try:
                pq.read_metadata(p)
            except Exception:  # pyarrow raises several types for a bad file
                bad.add(p)
        return bad


def _uniform_column(values: list[Any]) -> Any:
    """A parameter column with one type: ints, floats, bools or strings (JSON if mixed)."""
    import pandas as pd

    present = [v for v in values if v is not None]
    kinds = {type(v) for v in present}
    if not present:
        return pd.array(values, dtype="string")
    if kinds == {bool}:
        return pd.array(values, dtype="boolean")
    if kinds == {int}:
        return pd.array(values, dtype="Int64")
    if kinds <= {int, float}:
        return pd.array([math.nan if v is None else float(v) for v in values], dtype="float64")
    if kinds == {str}:
        return pd.array(values, dtype="string")
    return pd.array([None if v is None else canonical_json(v) for v in values], dtype="string")
