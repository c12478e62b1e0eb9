"""Running an emulation: namespaces up, driver and traffic running in real
time, results collected, everything torn down on every way out.

Teardown runs on a normal end, on an error at any step, on Ctrl-C and on
SIGTERM (turned into :class:`KeyboardInterrupt` while an emulation runs): the
traffic programs are killed by pid, the TUN devices closed, the namespaces
deleted. A process killed with SIGKILL cannot clean up; ``ecnsim emulate
--cleanup`` removes what it left (namespaces whose emulating process is gone).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ecnsim import _core
from ecnsim.emulation.netns import Namespace, NamespaceError, check_environment
from ecnsim.emulation.plan import (
    FLOW_PORT_BASE,
    EmulationPlan,
    FlowPlan,
    make_plan,
    parse_seconds,
)
from ecnsim.results import Results, Table

__all__ = ["Emulation", "EmulationError"]

#: ``tcpi_options`` bits (include/uapi/linux/tcp.h); ``ecnsim.emulation.traffic`` reads them.
TCPI_OPT_SACK = 2
TCPI_OPT_ECN = 8

#: Kernel TCP counters kept per host (``emu_hosts``), from the warm-up to the end.
HOST_COUNTERS = (
    "TcpOutSegs",
    "TcpRetransSegs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPFastRetrans",
    "TcpExtTCPLossProbes",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPRenoRecovery",
    "TcpExtTCPSackRecovery",
    "TcpExtDelayedACKs",
    "TcpExtTCPDelivered",
    "TcpExtTCPDeliveredCE",
)

#: Time between the last program's ``ready`` and simulated time zero, s (their wake-up).
LEAD_TIME_S = 0.2
#: How long the traffic programs may take to start, s.
READY_TIMEOUT_S = 30.0
#: The built-in traffic programs (``ecnsim/emulation/traffic.py``), run by path.
TRAFFIC_PROGRAM = str(Path(__file__).resolve().with_name("traffic.py"))
#: How long after the end the programs get to report, s.
GRACE_S = 1.0


class EmulationError(RuntimeError):
    """An emulation could not be set up or run (the message says which step)."""


def available_cc() -> set[str]:
    """The congestion controls this kernel offers (`tcp_available_congestion_control`)."""
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    try:
        return set(path.read_text().split())
    except OSError:
        return {"reno"}


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt in the main thread (so teardown runs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@dataclass
class _Program:
    flow: FlowPlan
    role: str
    proc: subprocess.Popen[str]
    output: dict[str, Any] | None = None
    stderr: str = ""


@dataclass
class Emulation:
    """One scenario run with real Linux hosts (see ``docs/emulation.md``).

    ``scenario`` is a scenario dict (``Scenario.to_dict()``, or the JSON form
    of a TOML file). ``pcap_dir`` gets one capture per host device.
    """

    scenario: Mapping[str, Any]
    seed: int | None = None
    pcap_dir: str | os.PathLike[str] | None = None
    late_threshold_s: float = 1e-3
    pool_packets: int = 16384
    #: SCHED_FIFO priority of the driver thread (None: normal scheduling).
    realtime_priority: int | None = 10
    #: Called with a short line at each step (set-up, start, end).
    log: Callable[[str], None] = field(default=lambda _msg: None)
    #: For tests: called after the namespaces and devices are up, before traffic starts.
    _after_setup: Callable[[Emulation], None] | None = None

    plan: EmulationPlan | None = field(default=None, init=False)
    namespaces: list[Namespace] = field(default_factory=list, init=False)
    _programs: list[_Program] = field(default_factory=list, init=False)
    _emulator: Any = field(default=None, init=False)
    _loadavg_start: str = field(default="", init=False)
    _counters_warm: dict[str, dict[str, int]] = field(default_factory=dict, init=False)
    _counters_end: dict[str, dict[str, int]] = field(default_factory=dict, init=False)
    #: Allowed values that make part of the scenario inert, as ``ecnsim run`` warns of them
    #: (``"path: message"``; set by :meth:`make_plan`).
    warnings: list[str] = field(default_factory=list, init=False)
    #: After an interrupt (Ctrl-C, SIGTERM) once traffic ran: the results up to it
    #: (``finished`` false), as ``ecnsim run`` keeps them; None if none could be read.
    partial: Results | None = field(default=None, init=False)

    @classmethod
    def from_toml_str(cls, text: str, **kwargs: Any) -> Emulation:
        """An emulation of the TOML scenario ``text``."""
        return cls(json.loads(_core.toml_to_json(text)), **kwargs)

    # ------------------------------------------------------------------

    def make_plan(self) -> EmulationPlan:
        """Validate the scenario as ``ecnsim run`` does and plan the emulation."""
        sim = _core.PySimulation.from_json(json.dumps(self.scenario), self.seed)
        resolved = json.loads(sim.results()["meta"]["resolved_spec"])
        self.warnings = list(sim.warnings())
        if self.seed is not None:
            resolved["simulation"]["seed"] = self.seed
        self.plan = make_plan(resolved, pid=os.getpid(), available_cc=available_cc())
        return self.plan

    def run(self) -> Results:
        """Set up, run in real time for the scenario's duration, tear down; the results."""
        check_environment()
        plan = self.plan or self.make_plan()
        with _sigterm_as_interrupt():
            try:
                self._setup(plan)
                if self._after_setup is not None:
                    self._after_setup(self)
                return self._run(plan)
            finally:
                self.teardown()

    # ------------------------------------------------------------------

    def _setup(self, plan: EmulationPlan) -> None:
        pcap_dir = Path(self.pcap_dir) if self.pcap_dir is not None else None
        if pcap_dir is not None:
            pcap_dir.mkdir(parents=True, exist_ok=True)
        for h in plan.hosts:
            ns = Namespace(name=h.namespace, host=h.name, address=h.address, ifname=h.ifname)
            self.namespaces.append(ns)
            ns.create()
            for key, value in h.sysctls.items():
                ns.sysctl(key, value)
        self.log(f"{len(plan.hosts)} namespaces up: {', '.join(h.namespace for h in plan.hosts)}")
        hosts = [
            (
                h.name,
                str(Path("/run/netns") / h.namespace),
                h.ifname,
                h.address,
                None if pcap_dir is None else str(pcap_dir / f"{h.name}.pcap"),
            )
            for h in plan.hosts
        ]
        self._emulator = _core.PyEmulator(
            json.dumps(plan.network_spec),
            hosts,
            seed=plan.seed,
            pool_packets=self.pool_packets,
            late_threshold_ns=round(self.late_threshold_s * 1e9),
            flow_port_base=FLOW_PORT_BASE,
            flow_count=len(plan.flows),
            warmup_ns=round(plan.warmup_s * 1e9),
            realtime_priority=self.realtime_priority,
        )
        for h, ns in zip(plan.hosts, self.namespaces, strict=True):
            ns.configure_device(h.mtu, h.route_options)

    def _spawn(self, flow: FlowPlan, role: str, args: list[str]) -> _Program:
        assert self.plan is not None
        host = flow.server if role == "server" else flow.client
        ns = next(n for n in self.namespaces if n.host == host)
        # By path, isolated and without site-packages: it imports the standard library only,
        # and skipping ecnsim's own imports keeps its start-up short on a loaded machine.
        cmd = [sys.executable, "-I", "-S", TRAFFIC_PROGRAM, role, *args]
        proc = ns.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        prog = _Program(flow=flow, role=role, proc=proc)
        self._programs.append(prog)
        return prog

    def _await_ready(self, prog: _Program, deadline: float) -> None:
        """Wait for ``prog``'s ``ready`` line; an error naming it if it fails or is too slow."""
        assert prog.proc.stderr is not None
        name = f"the {prog.role} of {prog.flow.name}"
        wait = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([prog.proc.stderr], [], [], wait)
        line = prog.proc.stderr.readline() if ready else ""
        if line.strip() == "ready":
            return
        if not ready:
            raise EmulationError(
                f"{name} did not start within {READY_TIMEOUT_S:g} s (machine load "
                f"{_loadavg()}); nothing was measured"
            )
        rest = prog.proc.stderr.read() if prog.proc.poll() is not None else ""
        raise EmulationError(f"{name} did not start: {(line + rest).strip()}")

    def _run(self, plan: EmulationPlan) -> Results:
        self._loadavg_start = _loadavg()
        grace = round(GRACE_S * 1e9)
        # Every time the programs get is relative to simulated time zero, which is chosen
        # once all of them are ready (and sent to them on stdin).
        end_ns = round(plan.duration_s * 1e9)
        common = ["--end-at", str(end_ns), "--warmup-at", str(round(plan.warmup_s * 1e9))]
        # simulation.sample_interval: the bulk senders sample their socket's TCP_INFO (cwnd,
        # ssthresh, ...) at the core's sampling instants, for the flow_series table.
        interval = plan.resolved_spec.get("simulation", {}).get("sample_interval")
        sample_ns = (
            round(parse_seconds(interval, "simulation.sample_interval") * 1e9) if interval else 0
        )
        for f in plan.flows:
            mode = "sink" if f.kind == "bulk" else f.kind
            args = ["--mode", mode, "--port", str(f.port), "--grace-ns", str(grace), *common]
            args += ["--request", str(f.request), "--response", str(f.response), "--cc", f.cc]
            if f.kind == "bulk":
                args.append("--once")
                if f.window_clamp:
                    args += ["--window-clamp", str(f.window_clamp)]
            self._spawn(f, "server", args)
        for f in plan.flows:
            dst = plan.host(f.server).address
            args = ["--mode", f.kind, "--dst", dst, "--port", str(f.port), "--cc", f.cc]
            args += ["--start-at", str(round(f.start_s * 1e9)), *common]
            args += ["--request", str(f.request), "--response", str(f.response)]
            if f.bytes is not None:
                args += ["--bytes", str(f.bytes)]
            if f.kind == "bulk" and sample_ns:
                args += ["--sample-ns", str(sample_ns)]
            if f.kind != "bulk" and f.window_clamp:
                args += ["--window-clamp", str(f.window_clamp)]
            self._spawn(f, "client", args)
        deadline = time.monotonic() + READY_TIMEOUT_S
        for prog in self._programs:
            self._await_ready(prog, deadline)
        t0 = time.monotonic_ns() + round(LEAD_TIME_S * 1e9)
        warmup_at = t0 + round(plan.warmup_s * 1e9)
        for prog in self._programs:
            assert prog.proc.stdin is not None
            try:
                prog.proc.stdin.write(f"{t0}\n")
                prog.proc.stdin.close()
            except BrokenPipeError:
                raise EmulationError(
                    f"the {prog.role} of {prog.flow.name} ended before simulated time zero"
                ) from None
            # communicate() would flush the closed stream.
            prog.proc.stdin = None
        self.log(
            f"{len(self._programs)} traffic programs started; running {plan.duration_s:g} s "
            "in real time"
        )
        errors: list[BaseException] = []

        def drive() -> None:
            try:
                self._emulator.run(start_at_ns=t0)
            except BaseException as e:
                errors.append(e)

        driver = threading.Thread(target=drive, name="ecnsim-emulator", daemon=True)
        driver.start()
        # Kernel TCP counters per host, at the warm-up and at the end (as the core's tables).
        self._counters_warm = {} if plan.warmup_s > 0 else self._tcp_counters()
        try:
            while driver.is_alive():
                driver.join(timeout=0.05 if not self._counters_warm else 0.2)
                if not self._counters_warm and time.monotonic_ns() >= warmup_at:
                    self._counters_warm = self._tcp_counters()
        except KeyboardInterrupt:
            self._emulator.stop()
            driver.join(timeout=5)
            if not driver.is_alive():
                self.partial = self._partial_results(plan, t0)
            raise
        if errors:
            raise EmulationError(f"the emulation driver failed: {errors[0]}") from errors[0]
        self._counters_end = self._tcp_counters()
        self._collect(deadline=time.monotonic() + GRACE_S + 2)
        raw = self._emulator.results()
        return self._results(plan, raw, t0)

    def _partial_results(self, plan: EmulationPlan, t0: int) -> Results | None:
        """The results up to an interrupt: the kernel counters now, each program's report
        (asked for with SIGTERM, as at the end), the emulator's tables to the time reached.
        A further interrupt while they are read gives up on them (teardown still runs)."""
        try:
            self._counters_end = self._tcp_counters()
            for prog in self._programs:
                if prog.proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        prog.proc.send_signal(signal.SIGTERM)
            self._collect(deadline=time.monotonic() + 2)
            return self._results(plan, self._emulator.results(), t0)
        except KeyboardInterrupt:
            self.log("interrupted again: partial results given up")
        except Exception as e:  # the interrupt's teardown must still run
            self.log(f"partial results could not be read: {e}")
        return None

    def _tcp_counters(self) -> dict[str, dict[str, int]]:
        out = {}
        for ns in self.namespaces:
            with contextlib.suppress(NamespaceError):
                out[ns.host] = ns.tcp_counters()
        return out

    def _collect(self, deadline: float) -> None:
        """Let each program print its report (SIGTERM once past its end), then read it."""
        for prog in self._programs:
            timeout = max(0.1, deadline - time.monotonic())
            try:
                out, err = prog.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    prog.proc.send_signal(signal.SIGTERM)
                try:
                    out, err = prog.proc.communicate(timeout=2)
                except subprocess.TimeoutExpired:
                    prog.proc.kill()
                    out, err = prog.proc.communicate()
            prog.stderr = err
            lines = [x for x in out.splitlines() if x.strip()]
            if lines:
                with contextlib.suppress(json.JSONDecodeError):
                    prog.output = json.loads(lines[-1])

    def teardown(self) -> None:
        """Kill the programs, close the devices, delete the namespaces (idempotent)."""
        for prog in self._programs:
            if prog.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(prog.proc.pid, signal.SIGKILL)
                with contextlib.suppress(Exception):
                    prog.proc.wait(timeout=2)
            for stream in (prog.proc.stdin, prog.proc.stdout, prog.proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if self._emulator is not None:
            self._emulator.close()
            self._emulator = None
        for ns in reversed(self.namespaces):
            with contextlib.suppress(NamespaceError):
                ns.destroy()
        self.namespaces.clear()

    # ------------------------------------------------------------------
    # Results
    # ------------------------------------------------------------------

    def _results(self, plan: EmulationPlan, raw: Mapping[str, Any], t0: int) -> Results:
        res = Results._from_core(raw)
        # Interrupted: rates over the time reached, not the scenario's duration.
        end = plan.duration_s if res.finished else float(res.meta.get("end_time_s", 0.0))
        warm = plan.warmup_s
        client = {p.flow.index: p.output or {} for p in self._programs if p.role == "client"}
        server = {p.flow.index: p.output or {} for p in self._programs if p.role == "server"}
        dirs = res.tables["emu_flow_dirs"]

        def rel(ns: int | None) -> float:
            return math.nan if ns is None else (ns - t0) / 1e9

        deltas = {
            h: {k: v - self._counters_warm.get(h, {}).get(k, 0) for k, v in end.items()}
            for h, end in self._counters_end.items()
        }
        rows: list[dict[str, Any]] = []
        records: list[dict[str, Any]] = []
        series: list[dict[str, Any]] = []
        for f in plan.flows:
            c, s = client.get(f.index, {}), server.get(f.index, {})
            to_srv, to_cli = 2 * f.index, 2 * f.index + 1
            data_dir = to_srv if f.kind == "bulk" else to_cli
            conns = s.get("connections", [])
            info = c.get("tcp_info") or {}
            warm_info = c.get("tcp_info_warmup") or {}
            for t_ns, cwnd, ssthresh, mss, rtt_us, retrans, sent, acked in c.get("samples", []):
                series.append(
                    {
                        "time_s": t_ns / 1e9,
                        "flow_id": f.index,
                        "flow": f.name,
                        "cwnd_bytes": float(cwnd * mss),
                        # Linux's "infinite" ssthresh (TCP_INFINITE_SSTHRESH) until the first
                        # reduction, as the simulator's inf.
                        "ssthresh_bytes": math.inf
                        if ssthresh >= 0x7FFFFFFF
                        else float(ssthresh * mss),
                        "bytes_sent": float(sent),
                        "bytes_delivered": float(acked),
                        "retransmits": float(retrans),
                        "srtt_s": rtt_us / 1e6,
                    }
                )
            row: dict[str, Any] = {
                "flow_id": f.index,
                "flow": f.name,
                "src": f.client,
                "dst": f.server,
                "start_s": f.start_s,
                "app_bytes": math.inf
                if f.bytes is None and f.kind == "bulk"
                else (float(f.bytes) if f.bytes is not None else math.nan),
                "packets_sent": int(dirs["packets"][data_dir]),
                "bytes_sent": int(dirs["payload_bytes"][data_dir]),
                "drops": int(dirs["drops"][to_srv] + dirs["drops"][to_cli]),
                "marks": int(dirs["marks"][to_srv] + dirs["marks"][to_cli]),
                "ce_received": int(dirs["ce_delivered"][data_dir]),
                "ece_received": int(dirs["ece_sent"][to_cli if data_dir == to_srv else to_srv]),
                "cwr_sent": int(dirs["cwr_sent"][data_dir]),
                # The largest window the data's receiver advertised (its ACKs' direction).
                "max_rwnd_bytes": int(dirs["max_window_bytes"][to_cli + to_srv - data_dir]),
                "cc": f.scenario_cc,
                "linux_cc": f.cc,
                "app": f.app or f.name,
                "kind": f.kind,
                "error": c.get("error", ""),
                # How late the client program began against its start time (it reports it).
                "start_delay_s": rel(c["start_ns"]) - f.start_s if c.get("start_ns") else math.nan,
            }
            if f.kind == "bulk":
                got = sum(x["bytes"] for x in conns)
                by_end = sum(x["bytes_by_end"] for x in conns)
                before = sum(x["bytes_before_warmup"] for x in conns)
                span = end - max(warm, f.start_s)
                closed = c.get("closed_ns")
                done = (
                    f.bytes is not None and got >= f.bytes and any(x.get("eof_ns") for x in conns)
                )
                eof = max((x["eof_ns"] for x in conns if x.get("eof_ns")), default=None)
                row.update(
                    bytes_delivered=by_end - before,
                    goodput_bps=(by_end - before) * 8 / span if span > 0 else math.nan,
                    packets_retransmitted=info.get("total_retrans", 0)
                    - warm_info.get("total_retrans", 0),
                    bytes_retransmitted=info.get("bytes_retrans", 0)
                    - warm_info.get("bytes_retrans", 0),
                    connect_time_s=rel(c.get("connected_ns")) - f.start_s
                    if c.get("connected_ns")
                    else math.nan,
                    completion_time_s=rel(closed if closed else eof) - f.start_s
                    if done
                    else math.nan,
                    ecn_negotiated=int(bool(info.get("options", 0) & TCPI_OPT_ECN)),
                    sack_negotiated=int(bool(info.get("options", 0) & TCPI_OPT_SACK)),
                    final_cwnd_bytes=info.get("snd_cwnd", 0) * info.get("snd_mss", 0),
                    final_srtt_s=info.get("rtt_us", 0) / 1e6 if info else math.nan,
                    # Linux's chrono counters over the whole connection (`ss -ti` busy,
                    # rwnd_limited, sndbuf_limited): time sending, and limited by the
                    # receive window or the send buffer.
                    busy_s=info.get("busy_time", 0) / 1e6 if info else math.nan,
                    rwnd_limited_s=info.get("rwnd_limited", 0) / 1e6 if info else math.nan,
                    sndbuf_limited_s=info.get("sndbuf_limited", 0) / 1e6 if info else math.nan,
                    delivered_ce=info.get("delivered_ce", 0),
                    transactions=0,
                    transactions_per_s=math.nan,
                )
            else:
                recs = c.get("records", [])
                done = [r for r in recs if r[3] == "completed"]
                in_window = [r for r in done if rel(r[1]) >= warm]
                span = end - max(warm, f.start_s)
                row.update(
                    bytes_delivered=len(in_window) * f.response,
                    goodput_bps=len(in_window) * f.response * 8 / span if span > 0 else math.nan,
                    packets_retransmitted=int(c.get("retransmits", 0)),
                    bytes_retransmitted=0,
                    connect_time_s=math.nan,
                    completion_time_s=math.nan,
                    ecn_negotiated=int(c.get("ecn", 0)),
                    sack_negotiated=0,
                    final_cwnd_bytes=0,
                    final_srtt_s=math.nan,
                    busy_s=math.nan,
                    rwnd_limited_s=math.nan,
                    sndbuf_limited_s=math.nan,
                    delivered_ce=0,
                    transactions=len(in_window),
                    transactions_per_s=len(in_window) / span if span > 0 else math.nan,
                )
                for r in recs:
                    records.append(
                        {
                            "kind": "transaction",
                            "state": r[3],
                            "app": f.app,
                            "group": f.app,
                            "client": f.client,
                            "server": f.server,
                            "start_s": rel(r[0]),
                            # Under way at the end: seen until the end, as in a simulation.
                            "end_s": end if r[3] == "in_progress" else rel(r[1]),
                            "response_time_s": (end - rel(r[0]))
                            if r[3] == "in_progress"
                            else (r[1] - r[0]) / 1e9,
                            "request_bytes": f.request,
                            "response_bytes": f.response,
                            "setup_s": r[2] / 1e9 if r[2] >= 0 else math.nan,
                        }
                    )
            # Linux counts timeouts and fast retransmits per namespace, not per socket: they
            # are a flow's own when it is the only one its sender host sends.
            sender = f.client if f.kind == "bulk" else f.server
            alone = (
                sum(
                    1
                    for g in plan.flows
                    if (g.client if g.kind == "bulk" else g.server) == sender and g.kind == f.kind
                )
                == 1
                and f.kind == "bulk"
            )
            host_delta = deltas.get(sender, {})
            row["rto_count"] = host_delta.get("TcpExtTCPTimeouts", 0) if alone else math.nan
            if f.kind == "bulk" and "total_rto" in info:
                # The sender's own socket counts its timeouts (TCP_INFO, Linux 6.7+); before
                # the warm-up none when the flow starts later.
                row["rto_count"] = info["total_rto"] - warm_info.get("total_rto", 0)
            row["fast_retransmits"] = (
                host_delta.get("TcpExtTCPFastRetrans", 0) if alone else math.nan
            )
            # As the core's column: payload the sender put on the wire after the warm-up,
            # retransmissions included, over the flow's time after the warm-up.
            span = end - max(warm, f.start_s)
            row["throughput_bps"] = row["bytes_sent"] * 8 / span if span > 0 else math.nan
            rows.append(row)
        res.tables["flows"] = _table("flows", rows)
        if series:
            res.tables["flow_series"] = _table("flow_series", series)
        res.tables["emu_hosts"] = _table(
            "emu_hosts",
            [
                {"host": h, **{k: deltas[h].get(k, 0) for k in HOST_COUNTERS}}
                for h in (hp.name for hp in plan.hosts)
                if h in deltas
            ],
        )
        res.tables["records"] = _table("records", records, like=res.tables.get("records"))
        res.tables["tcp_mapping"] = _table(
            "tcp_mapping",
            [
                {
                    "host": m.host,
                    "parameter": m.parameter,
                    "scenario": m.value,
                    "linux": m.linux,
                    "status": m.status,
                    "note": m.note,
                }
                for m in plan.mapping
            ],
        )
        res.meta["mode"] = "emulation"
        res.meta["resolved_spec"] = json.dumps(plan.resolved_spec)
        res.meta["kernel"] = os.uname().release
        res.meta["loadavg_start"] = self._loadavg_start
        res.meta["loadavg_end"] = _loadavg()
        return res


def _loadavg() -> str:
    """``/proc/loadavg`` (1, 5 and 15 minute load averages, runnable/total tasks)."""
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def _table(name: str, rows: list[dict[str, Any]], like: Table | None = None) -> Table:
    """A results table from row dicts: numbers become uint64 or float64 columns, others str."""
    if not rows:
        cols: dict[str, Any] = {}
        if like is not None:
            for c in like.column_names:
                v = like[c]
                cols[c] = v[:0] if isinstance(v, np.ndarray) else []
        return Table(name, cols)
    cols = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        if all(isinstance(v, (bool, int, np.integer)) and v >= 0 for v in values):
            cols[key] = np.asarray(values, dtype="<u8")
        elif all(isinstance(v, (int, float, np.number)) for v in values):
            cols[key] = np.asarray(values, dtype="<f8")
        else:
            cols[key] = [str(v) for v in values]
    return Table(name, cols)
