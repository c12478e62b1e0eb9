"""Run a scenario: :class:`Simulation` wraps one compiled simulation."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from ecnsim import _core
from ecnsim._system import default_max_memory, deferred_sigint, parse_bytes
from ecnsim.results import Results, Table

if TYPE_CHECKING:
    import pandas as pd

    from ecnsim.output.trace import Ns2TraceWriter, PcapDirectoryWriter
from ecnsim.scenario.spec import Scenario, _read_toml_source, scenario_json

__all__ = ["ProgressCallback", "Simulation"]

#: Called between chunks of a run as ``progress(now_ns, end_ns)``.
ProgressCallback = Callable[[int, int], object]


class Simulation:
    """One simulation of one scenario, built and checked by the core.

    Build it from a :class:`~ecnsim.scenario.spec.Scenario` (or its dict), or with
    :meth:`from_toml`; ``seed`` overrides the scenario's seed. Building and
    running release the GIL, so other Python threads keep running, and Ctrl-C
    raises :class:`KeyboardInterrupt` within a fraction of a second (also
    while a large model is being built), leaving the simulation where it
    stopped (:attr:`results` then holds the partial results).

    ``max_memory`` (bytes, or a size such as ``"8GB"``) bounds the memory the
    simulation may use; by default it is 90% of what the machine has
    available (``ECNSIM_MAX_MEMORY`` overrides that). A scenario whose
    estimate is larger raises :class:`~ecnsim.ResourceError` when built; a run
    that outgrows it stops with :class:`~ecnsim.ResourceError`, its results so
    far kept.
    """

    _sim: _core.PySimulation

    def __init__(
        self,
        scenario: Scenario | Mapping[str, Any],
        *,
        seed: int | None = None,
        max_memory: int | str | None = None,
    ) -> None:
        if not isinstance(scenario, (Scenario, Mapping)):
            raise TypeError(
                f"scenario must be a Scenario or a mapping, got {type(scenario).__name__}; "
                "use Simulation.from_toml() for TOML"
            )
        self._sim = _core.PySimulation.from_json(
            scenario_json(scenario), _seed(seed), _max_memory(max_memory)
        )

    @classmethod
    def from_json_str(
        cls, text: str, *, seed: int | None = None, max_memory: int | str | None = None
    ) -> Simulation:
        """Build from the text of a JSON scenario *file* (the TOML schema, as JSON).

        As in TOML, every non-zero time and rate needs a unit (``"20ms"``);
        errors name the field. (A dict from the Python builder goes to
        ``Simulation(...)``, whose numbers are in base units.)
        """
        _core.check_file_json(text)
        sim = cls.__new__(cls)
        sim._sim = _core.PySimulation.from_json(text, _seed(seed), _max_memory(max_memory))
        return sim

    @classmethod
    def from_toml(
        cls,
        source: str | os.PathLike[str],
        *,
        seed: int | None = None,
        max_memory: int | str | None = None,
    ) -> Simulation:
        """Build from a TOML file path, or from TOML text."""
        return cls.from_toml_str(_read_toml_source(source), seed=seed, max_memory=max_memory)

    @classmethod
    def from_toml_str(
        cls, text: str, *, seed: int | None = None, max_memory: int | str | None = None
    ) -> Simulation:
        """Build from TOML text."""
        sim = cls.__new__(cls)
        sim._sim = _core.PySimulation.from_toml(text, _seed(seed), _max_memory(max_memory))
        return sim

    # -- running --------------------------------------------------------------

    def run(self, progress: ProgressCallback | None = None) -> Results:
        """Run to the end and return the results.

        ``progress(now_ns, end_ns)`` is called between chunks: every 0.025 to
        0.05 s of wall time, or 0.1 s of simulated time if that comes first.
        With :meth:`trace` on, the trace is written between chunks and its
        files are closed at the end (also when interrupted). Between chunks the
        records of finished objects also leave the core (into columns held
        beside it), so the core keeps only those of objects still open;
        ``results.records`` is the same table, bit for bit, as without.
        """
        sinks = getattr(self, "_trace_sinks", None)
        if sinks:
            user = progress

            def drain_then_report(now_ns: int, end_ns: int) -> None:
                self._write_trace()
                if user is not None:
                    user(now_ns, end_ns)

            progress = drain_then_report
        try:
            self._sim.run(progress)
        finally:
            if sinks:
                self._write_trace()
                self.close_trace()
        return self.results

    # -- traces ---------------------------------------------------------------

    def trace(
        self,
        *,
        ns2: str | os.PathLike[str] | None = None,
        pcap: str | os.PathLike[str] | None = None,
        pcap_drops: bool = False,
        links: Sequence[int] | None = None,
        nodes: Sequence[str] | None = None,
        flows: Sequence[str] | None = None,
        tcp_header: bool = False,
    ) -> None:
        """Stream link events to an ns-2 trace and/or one pcap file per link direction.

        ``ns2``: a file of every link event (``+ - r d``), ns-2's format.
        ``pcap``: a directory (created if missing) with one capture file per
        link direction that carried packets, named
        ``<link>-<from>-<to>.pcap`` (``<link>`` is the link's ``name``, or
        ``link<i>`` for ``[[links]]`` entry ``i``), each packet once as it
        starts onto the link, as ns-3's ``EnablePcapAll`` writes one file per
        device; ``pcap_drops=True`` adds ``<link>-<from>-<to>.drops.pcap``
        with the packets that direction's queue dropped
        (:class:`~ecnsim.output.trace.PcapDirectoryWriter`).

        ``links`` (indices of ``[[links]]``), ``nodes`` (link directions at
        these nodes) and ``flows`` (flow or app names) narrow what is traced;
        unknown names raise :class:`~ecnsim.exceptions.SpecError`. Tracing is
        off unless this is called; the files are written while :meth:`run`
        runs. Without files, use :meth:`drain_trace` yourself.
        """
        from ecnsim.output.trace import Ns2TraceWriter, PcapDirectoryWriter

        self._sim.enable_trace(
            None if links is None else list(links),
            None if nodes is None else list(nodes),
            None if flows is None else list(flows),
        )
        sinks: list[tuple[IO[Any] | None, Ns2TraceWriter | PcapDirectoryWriter]] = []
        if ns2 is not None:
            f = open(ns2, "w", encoding="ascii")  # noqa: SIM115 (closed by close_trace)
            sinks.append((f, Ns2TraceWriter(f, tcp_header=tcp_header)))
        if pcap is not None:
            os.makedirs(pcap, exist_ok=True)
            writer = PcapDirectoryWriter(pcap, self.pcap_names(), drops=pcap_drops)
            sinks.append((None, writer))
        self._trace_sinks = sinks

    def pcap_names(self) -> dict[tuple[int, int], str]:
        """The capture file name of each link direction, by ``(from_node, to_node)`` node index.

        ``<link>-<from>-<to>.pcap``: the link's ``name`` (``link<i>`` if it
        has none) and the node names (:func:`~ecnsim.output.trace.pcap_file_name`).
        """
        from ecnsim.output.trace import pcap_file_name

        spec = self.spec
        index = {node["name"]: i for i, node in enumerate(spec.get("nodes", []))}
        names: dict[tuple[int, int], str] = {}
        for i, link in enumerate(spec.get("links", [])):
            label = link.get("name") or f"link{i}"
            a, b = link["a"], link["b"]
            names[(index[a], index[b])] = pcap_file_name(label, a, b)
            names[(index[b], index[a])] = pcap_file_name(label, b, a)
        return names

    def drain_trace(self) -> pd.DataFrame:
        """The trace records since the last drain (columns: see :mod:`ecnsim.output.trace`)."""
        return Table._from_core("trace", self._sim.drain_trace()).to_pandas()

    def _write_trace(self) -> None:
        sinks = getattr(self, "_trace_sinks", None)
        if not sinks:
            return
        # Ctrl-C is held off until the batch is written whole (then re-raised).
        with deferred_sigint():
            records = Table._from_core("trace", self._sim.drain_trace()).to_numpy()
            if len(records["uid"]) == 0:
                return
            for _, writer in sinks:
                writer.write(records)

    def close_trace(self) -> None:
        """Write what is pending and close the trace files."""
        sinks = getattr(self, "_trace_sinks", None)
        if not sinks:
            return
        try:
            self._write_trace()
        finally:
            with deferred_sigint():
                for f, _ in sinks:
                    if f is not None:
                        f.close()
                self._trace_sinks = []

    def run_until(self, t: float, *, chunk: float | None = None) -> None:
        """Run until simulated time ``t`` seconds (at most to the end).

        The run goes in chunks (between them the GIL is taken back and signals
        are checked), normally ended after 0.025 to 0.05 s of wall time or 0.1 s of
        simulated time; ``chunk`` fixes their length in
        simulated seconds, so the work done does not depend on the machine's
        speed (``ecnsim bench`` counts instructions that way). With ``chunk``,
        Ctrl-C takes effect at the end of the current chunk.
        """
        if t < 0:
            raise ValueError(f"t must be >= 0 seconds, got {t}")
        if chunk is None:
            self._sim.run_until(round(t * 1e9))
            return
        chunk_ns = round(chunk * 1e9) if math.isfinite(chunk) else 0
        if chunk_ns <= 0:
            raise ValueError(
                f"chunk must be a positive number of seconds (at least 1 ns), got {chunk}"
            )
        self._sim.run_until(round(t * 1e9), chunk_ns)

    # -- state ----------------------------------------------------------------

    @property
    def now(self) -> float:
        """Current simulated time in seconds."""
        return self._sim.now_ns / 1e9

    @property
    def now_ns(self) -> int:
        """Current simulated time in nanoseconds."""
        return self._sim.now_ns

    @property
    def end_ns(self) -> int:
        """End of the run in nanoseconds."""
        return self._sim.end_ns

    @property
    def duration(self) -> float:
        """End of the run in seconds."""
        return self._sim.end_ns / 1e9

    @property
    def is_finished(self) -> bool:
        """True once the run reached its end."""
        return self._sim.is_finished

    @property
    def warnings(self) -> list[str]:
        """Allowed values that make part of the scenario inert (``"path: message"``).

        For example an off period longer than the run: the source sends during
        its first on period only. ``ecnsim run`` prints them as ``warning:`` lines.
        """
        return self._sim.warnings()

    @property
    def stopped(self) -> str | None:
        """Why the run stopped for good before its end (``"path: message"``), or None."""
        return self._sim.stopped

    @property
    def results(self) -> Results:
        """The results so far (partial, with ``meta["finished"] == "false"``, before the end)."""
        return Results._from_core(self._sim.results(), self._sim.spec_json())

    @property
    def spec(self) -> dict[str, Any]:
        """The scenario as the core parsed it."""
        parsed: dict[str, Any] = json.loads(self._sim.spec_json())
        return parsed

    def digest(self) -> int:
        """64-bit digest of the results so far; equal digests mean identical results."""
        return self._sim.digest()

    def perf(self) -> dict[str, int]:
        """Engine work counters: ``events`` run and ``packet_hops`` (link traversals)."""
        return self._sim.perf()

    def conservation(self) -> dict[str, int]:
        """Packet accounting: ``sent == delivered + dropped + in_flight``."""
        return self._sim.conservation()

    def live_state(self) -> dict[str, int]:
        """What the run holds for live connections now: ``live_connections``,
        ``endpoint_slots`` (the most connections alive at once), ``app_slots``
        (the workloads' connection and session slots), ``connection_slots``,
        ``pending_events`` and ``record_slots`` (finished records the core has
        room for: the run hands them over after every chunk, so this is the
        most that finished within one chunk). Unlike the output tables, these
        do not grow with the connections ever opened. ``drained_records`` is
        the output side: the finished records moved out of the core so far,
        held as the core's compact rows (96 bytes each, no Python object per
        record) until :attr:`results` makes them a table."""
        return self._sim.live_state()

    def __repr__(self) -> str:
        return f"Simulation(now={self.now:g}s, end={self.duration:g}s, finished={self.is_finished})"


def _seed(seed: Any) -> int | None:
    """A seed as the core takes it, or :class:`~ecnsim.SpecError` naming ``seed``."""
    if seed is None:
        return None
    if type(seed).__module__ == "numpy" and hasattr(seed, "item"):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        err = _core.SpecError(f"seed: must be an integer in 0..2^64-1, got {seed!r}")
        err.path = "seed"
        raise err
    return seed


def _max_memory(value: int | str | None) -> int | None:
    """``max_memory`` in bytes; None: the default (:func:`ecnsim._system.default_max_memory`)."""
    if value is None:
        return default_max_memory()
    if isinstance(value, str):
        try:
            return parse_bytes(value)
        except ValueError as e:
            raise ValueError(f"max_memory: {e}") from None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"max_memory: must be a positive number of bytes, got {value!r}")
    return value
