"""The compiled core of ecnsim (``crates/ecnsim-py``). Hand-written stub."""

from collections.abc import Callable
from typing import Any, Literal, TypeAlias, TypedDict, final

__all__ = [
    "EcnsimError",
    "PyEmulator",
    "PySimulation",
    "ResourceError",
    "SimulationError",
    "SpecError",
    "TopologyError",
    "__version__",
    "build_info",
    "check_file_json",
    "check_json",
    "dist_atoms",
    "dist_cdf",
    "dist_mean",
    "dist_partial_mean",
    "dist_quantiles",
    "dist_sample",
    "dist_sf",
    "expanded_json",
    "json_with_units",
    "name_codes",
    "shipped_table",
    "shipped_tables",
    "toml_to_json",
    "workload_defaults",
    "write_parquet",
]

__version__: str

# A column: little-endian numbers as bytes (numpy.frombuffer(payload, dtype)), or names.
_Encoded: TypeAlias = tuple[Literal["<u8", "<f8"], bytes] | tuple[Literal["str"], list[str]]

class _Results(TypedDict):
    tables: dict[str, dict[str, _Encoded]]
    meta: dict[str, str]
    digest: int

class _BuildInfo(TypedDict):
    pgo: bool
    pgo_note: str
    debug_assertions: bool

def build_info() -> _BuildInfo:
    """How this extension was built: with profile-guided optimisation or not, and why."""

class EcnsimError(Exception):
    """Base class of every error raised by ecnsim."""

    path: str

class SpecError(EcnsimError, ValueError):
    """The scenario is malformed or a value is out of range."""

class TopologyError(EcnsimError, ValueError):
    """The scenario is well-formed but its network is not usable."""

class ResourceError(EcnsimError, MemoryError):
    """The run would need, or came to need, more memory than allowed."""

class SimulationError(EcnsimError, RuntimeError):
    """The run cannot go on: a component makes no progress in simulated time."""

def write_parquet(path: str, columns: dict[str, tuple[str, Any]]) -> None:
    """Write one table as a Parquet file; ``columns``: ``{name: (dtype, payload)}``."""

def name_codes(ids: bytes, keys: bytes, names: list[str]) -> tuple[bytes, list[str]]:
    """Each id's name (``names[i]`` is the name of ``keys[i]``) as ``(u32 codes, names)``."""

def toml_to_json(text: str) -> str:
    """Parse a TOML scenario and return it as JSON."""

def check_json(text: str) -> None:
    """Parse a JSON scenario and check every field rule; raise SpecError on the first violation."""

def check_file_json(text: str) -> None:
    """Parse a JSON scenario file: every non-zero time and rate needs a unit (SpecError if not)."""

def expanded_json(text: str) -> str:
    """A builder JSON scenario with its topology and flow groups expanded, quantities with units."""

def json_with_units(text: str) -> str:
    """A builder JSON scenario written back with every quantity as a string with its unit."""

def dist_quantiles(spec: str, us: list[float]) -> list[float]:
    """Quantiles of the distribution ``spec`` (JSON) at each ``u`` in [0, 1]."""

def dist_cdf(spec: str, xs: list[float]) -> list[float]:
    """``P(X <= x)`` of the distribution ``spec`` (JSON) at each ``x``."""

def dist_sf(spec: str, xs: list[float]) -> list[float]:
    """``P(X > x)`` of the distribution ``spec`` (JSON) at each ``x``, computed directly."""

def dist_partial_mean(spec: str, xs: list[float]) -> list[float]:
    """``E[X; X > x]`` of the distribution ``spec`` (JSON) at each ``x`` (inf where it diverges)."""

def dist_mean(spec: str) -> float | None:
    """The distribution's mean, or None where it is infinite or has no closed form."""

def dist_sample(spec: str, n: int, seed: int, component: str) -> list[float]:
    """``n`` draws from the stream of ``component`` under ``seed``."""

def dist_atoms(spec: str) -> tuple[list[float], list[float]] | None:
    """``(values, probabilities)`` of a discrete distribution, else None."""

def workload_defaults(model: str) -> str | None:
    """The default distributions of a workload model as JSON ``{field: distribution}``."""

def shipped_tables() -> list[str]:
    """The names of the shipped empirical tables."""

def shipped_table(name: str) -> tuple[list[float], list[float]] | None:
    """A shipped table's ``(values, counts)``, or None for an unknown name."""

@final
class PySimulation:
    """A simulation built from a scenario."""

    @staticmethod
    def from_toml(
        text: str, seed: int | None = None, max_memory: int | None = None
    ) -> PySimulation: ...
    @staticmethod
    def from_json(
        text: str, seed: int | None = None, max_memory: int | None = None
    ) -> PySimulation: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def is_finished(self) -> bool: ...
    @property
    def stopped(self) -> str | None: ...
    def spec_json(self) -> str: ...
    def warnings(self) -> list[str]: ...
    def run_until(self, t_ns: int, chunk_ns: int | None = None) -> None: ...
    def run(self, progress: Callable[[int, int], object] | None = None) -> None: ...
    def results(self) -> _Results:
        """``{"tables": {name: {column: (dtype, payload)}}, "meta": {k: v}, "digest": int}``.

        The first call on a finished run moves the time series out of the core into the
        ``bytes`` it returns; later calls return the same ``bytes`` objects again."""
    def series_bytes(self) -> int:
        """Heap bytes the core holds for the time series (read in place by ``results`` until
        the run has finished; 0 once ``results`` has handed a finished run's series over)."""
    def digest(self) -> int: ...
    def perf(self) -> dict[str, int]: ...
    def conservation(self) -> dict[str, int]: ...
    def live_state(self) -> dict[str, int]: ...
    def enable_trace(
        self,
        links: list[int] | None = None,
        nodes: list[str] | None = None,
        flows: list[str] | None = None,
    ) -> None: ...
    def drain_trace(self) -> dict[str, tuple[str, Any]]: ...

@final
class PyEmulator:
    """A scenario's network run in real time between real hosts (``ecnsim.emulation``)."""

    def __new__(
        cls,
        spec_json: str,
        hosts: list[tuple[str, str, str, str, str | None]],
        *,
        seed: int | None = None,
        pool_packets: int = 65536,
        late_threshold_ns: int = 1_000_000,
        flow_port_base: int = 20000,
        flow_count: int = 0,
        warmup_ns: int = 0,
        realtime_priority: int | None = None,
    ) -> PyEmulator: ...
    def run(self, start_at_ns: int | None = None) -> None: ...
    def stop(self) -> None: ...
    def close(self) -> None: ...
    def now_ns(self) -> int: ...
    def results(self) -> _Results:
        """As ``PySimulation.results``, plus ``emulation``, ``emu_ports``, ``emu_flow_dirs``."""
