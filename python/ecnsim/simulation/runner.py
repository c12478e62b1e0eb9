"""Run a scenario: :class:`Simulation` wraps one compiled simulation."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from ecnsim import _core
from ecnsim.results import Results, Table

if TYPE_CHECKING:
    import pandas as pd

    from ecnsim.output.trace import Ns2TraceWriter, PcapWriter
from ecnsim.scenario.spec import Scenario, _read_toml_source

__all__ = ["ProgressCallback", "Simulation"]

#: Called between chunks of a run as ``progress(now_ns, end_ns)``.
ProgressCallback = Callable[[int, int], object]


class Simulation:
    """One simulation of one scenario, built and checked by the core.

    Build it from a :class:`~ecnsim.scenario.spec.Scenario` (or its dict), or with
    :meth:`from_toml`; ``seed`` overrides the scenario's seed. Running
    releases the GIL, so other Python threads keep running, and Ctrl-C
    raises :class:`KeyboardInterrupt` within about a tenth of a second,
    leaving the simulation where it stopped (:attr:`results` then holds the
    partial results).
    """

    _sim: _core.PySimulation

    def __init__(self, scenario: Scenario | Mapping[str, Any], *, seed: int | None = None) -> None:
        if isinstance(scenario, Scenario):
            text = scenario.to_json()
        elif isinstance(scenario, Mapping):
            text = json.dumps(scenario)
        else:
            raise TypeError(
                f"scenario must be a Scenario or a mapping, got {type(scenario).__name__}; "
                "use Simulation.from_toml() for TOML"
            )
        self._sim = _core.PySimulation.from_json(text, seed)

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str], *, seed: int | None = None) -> Simulation:
        """Build from a TOML file path, or from TOML text."""
        return cls.from_toml_str(_read_toml_source(source), seed=seed)

    @classmethod
    def from_toml_str(cls, text: str, *, seed: int | None = None) -> Simulation:
        """Build from TOML text."""
        sim = cls.__new__(cls)
        sim._sim = _core.PySimulation.from_toml(text, seed)
        return sim

    # -- running --------------------------------------------------------------

    def run(self, progress: ProgressCallback | None = None) -> Results:
        """Run to the end and return the results.

        ``progress(now_ns, end_ns)`` is called every ~0.1 s of wall time.
        With :meth:`trace` on, the trace is written between chunks and its
        files are closed at the end (also when interrupted).
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
        links: Sequence[int] | None = None,
        nodes: Sequence[str] | None = None,
        flows: Sequence[str] | None = None,
        tcp_header: bool = False,
    ) -> None:
        """Stream link events (``+ - r d``) to an ns-2 trace and/or a pcap file.

        ``links`` (indices of ``[[links]]``), ``nodes`` (link directions at
        these nodes) and ``flows`` (flow or app names) narrow what is traced;
        unknown names raise :class:`~ecnsim.exceptions.SpecError`. Tracing is
        off unless this is called; the files are written while :meth:`run`
        runs. Without files, use :meth:`drain_trace` yourself.
        """
        from ecnsim.output.trace import Ns2TraceWriter, PcapWriter

        self._sim.enable_trace(
            None if links is None else list(links),
            None if nodes is None else list(nodes),
            None if flows is None else list(flows),
        )
        sinks: list[tuple[IO[Any], Ns2TraceWriter | PcapWriter]] = []
        if ns2 is not None:
            f = open(ns2, "w", encoding="ascii")  # noqa: SIM115 (closed by close_trace)
            sinks.append((f, Ns2TraceWriter(f, tcp_header=tcp_header)))
        if pcap is not None:
            fb = open(pcap, "wb")  # noqa: SIM115 (closed by close_trace)
            sinks.append((fb, PcapWriter(fb)))
        self._trace_sinks = sinks

    def drain_trace(self) -> pd.DataFrame:
        """The trace records since the last drain (columns: see :mod:`ecnsim.output.trace`)."""
        return Table._from_core("trace", self._sim.drain_trace()).to_pandas()

    def _write_trace(self) -> None:
        sinks = getattr(self, "_trace_sinks", None)
        if not sinks:
            return
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
        self._write_trace()
        for f, _ in sinks:
            f.close()
        self._trace_sinks = []

    def run_until(self, t: float) -> None:
        """Run until simulated time ``t`` seconds (at most to the end)."""
        if t < 0:
            raise ValueError(f"t must be >= 0 seconds, got {t}")
        self._sim.run_until(round(t * 1e9))

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
        (the workloads' connection and session slots) and ``pending_events``.
        Unlike the output tables, these do not grow with the connections ever opened."""
        return self._sim.live_state()

    def __repr__(self) -> str:
        return f"Simulation(now={self.now:g}s, end={self.duration:g}s, finished={self.is_finished})"
