"""``ecnsim bench``: named benchmark scenarios (packet-hops per wall second, memory per flow)."""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ecnsim import __version__, _core
from ecnsim.cli._common import EXIT_OK, EXIT_USAGE
from ecnsim.cli.run import apply_sets, set_arg

if TYPE_CHECKING:
    # Imported where used: `ecnsim --help` and `ecnsim run` do not load the builders.
    from ecnsim.scenario.spec import Scenario

# ---------------------------------------------------------------------------
# ecnsim bench
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    """A named benchmark scenario."""

    name: str
    description: str
    n_flows: int
    build: Callable[[], Scenario]
    #: A workload of many short connections: report connections per wall second.
    connections: bool = False
    #: Two simulated times (s): instructions per packet-hop are measured between
    #: them (callgrind runs to each; start-up and build cancel in the difference).
    instructions_window: tuple[float, float] = (1.0, 2.0)


#: Simulated length of each run chunk in the callgrind runs (s). Normal runs size
#: their chunks by wall time, which callgrind stretches, so the bindings' work
#: between chunks (and with it the instruction count) would vary run to run; a
#: fixed length makes the count a function of the build and the scenario. 0.1 s is
#: the largest chunk a normal run uses (the one it settles on when a chunk is cheap).
INSTRUCTIONS_CHUNK_S = 0.1


def _dumbbell_bench(
    n_flows: int,
    duration_s: float,
    *,
    bottleneck_rate: str = "100Mbps",
    limit_packets: int = 833,
    name: str | None = None,
    tcp: dict[str, Any] | None = None,
    profile: str | None = None,
) -> Scenario:
    from ecnsim.scenario.spec import droptail
    from ecnsim.scenario.topology import dumbbell

    # 1 Gb/s access links (so that no one flow fills a 10 Gb/s bottleneck), 100 ms RTT:
    # 2 * (5 ms + 40 ms + 5 ms); DropTail of one bandwidth-delay product
    # (100 Mb/s * 100 ms / 1500 B = 833 packets; at 10 Gb/s, 83,333).
    return dumbbell(
        n_flows,
        bottleneck_rate=bottleneck_rate,
        bottleneck_delay="40ms",
        access_rate="1Gbps",
        access_delay="5ms",
        queue=droptail(limit_packets=limit_packets),
        duration=f"{duration_s}s",
        # Starts spread over the first second, 1 s / n_flows apart.
        start=[f"{i * 1_000_000 // n_flows}us" for i in range(n_flows)],
        # The receive window these benchmarks were defined with (the `rfc` default until issue 13
        # bounded it to 64 KiB), so that their event counts stay comparable across versions.
        tcp=tcp or {"cc": "reno", "rcv_window": 2**30},
        name=name or f"dumbbell-{n_flows}",
        seed=1,
        profile=profile,
    )


def hetero_scenario(n: int, duration_s: float = 100.0) -> Scenario:
    """The ``hetero`` study's star at ``N = n`` in RED mode, ``max_p`` 0.1 (the study's defaults:
    Zheng's thesis ch. 4, 10 Mb/s bottleneck, 300 Mb/s aggregate access, RED 10/30 of 120
    packets, Reno with a 64-packet window, 1000-byte packets; ``ecnsim study show hetero``)."""
    from ecnsim.scenario.spec import red, tcp
    from ecnsim.scenario.topology import hetero_rtt

    return hetero_rtt(
        n,
        name=f"hetero-{n}",
        duration=duration_s,
        warmup=20.0,
        sample_interval=0.1,
        profile="ns2-2001",
        groups=("fragile", "average", "robust"),
        access_delays=(0.145, 0.045, 0.005),
        aggregate_access_rate=300e6,
        bottleneck_rate=10e6,
        bottleneck_delay=0.005,
        queue=red(
            limit_packets=120,
            min_th=10.0,
            max_th=30.0,
            w_q=0.002,
            max_p=0.1,
            gentle=False,
            ecn="none",
        ),
        access_queue={"type": "droptail", "limit_packets": 50},
        starts=(0.0, 2.0),
        tcp=tcp(
            cc="reno",
            # ns-2 accounting (useHeaders_ false): the 1000-byte packet is all payload.
            mss=1000,
            header_bytes=40,
            headers_on_data=False,
            max_cwnd=64,
            delayed_ack=False,
            ecn="off",
        ),
        seed=1,
    )


def web_sessions_scenario(
    load_percent: float = 105.0,
    duration_s: float = 60.0,
    *,
    clients: int = 20,
    servers: int = 10,
    rate: str = "100Mbps",
    queue_packets: int = 500,
    seed: int = 1,
) -> Scenario:
    """Web sessions (Feldmann et al. 1999 defaults) across one bottleneck, as STUDIES.md §5 sets it.

    Servers s<i> -- r2 ==``rate``, 2.5 ms== r1 -- clients c<i>; congestion in the
    server -> client direction. Client access delays are spread so that
    round-trip times run from 10 to 150 ms (servers 1 ms away). DropTail of
    ``queue_packets`` at r2. ``load_percent`` of the bottleneck is offered.
    """
    from ecnsim.scenario.spec import Scenario

    nodes = [{"name": "r1", "kind": "router"}, {"name": "r2", "kind": "router"}]
    links: list[dict[str, Any]] = [
        {
            "a": "r2",
            "b": "r1",
            "rate": rate,
            "delay": "2.5ms",
            "queue": {"type": "droptail", "limit_packets": queue_packets},
        }
    ]
    big = {"type": "droptail", "limit_packets": 10_000}
    for i in range(servers):
        nodes.append({"name": f"s{i}", "kind": "host"})
        links.append({"a": f"s{i}", "b": "r2", "rate": "1Gbps", "delay": "1ms", "queue": big})
    for i in range(clients):
        # RTT = 2 * (1 ms + 2.5 ms + d): 10 ms to 150 ms.
        rtt_ms = 10.0 + 140.0 * i / max(clients - 1, 1)
        d_us = round((rtt_ms / 2 - 3.5) * 1000)
        nodes.append({"name": f"c{i}", "kind": "host"})
        links.append({"a": f"c{i}", "b": "r1", "rate": "1Gbps", "delay": f"{d_us}us", "queue": big})
    return Scenario.from_dict(
        {
            "simulation": {"duration": f"{duration_s}s", "seed": seed},
            "tcp": {"initial_window": 2},
            "nodes": nodes,
            "links": links,
            "apps": [
                {
                    "name": "web",
                    "clients": [f"c{i}" for i in range(clients)],
                    "servers": [f"s{i}" for i in range(servers)],
                    "model": {
                        "type": "websessions",
                        "offered_load": {"link": 0, "percent": load_percent},
                    },
                }
            ],
        }
    )


def idle_connections_scenario(
    n: int, duration_s: float = 6.0, start_spread_s: float = 4.0
) -> Scenario:
    """``n`` request/response connections from one host to another, each idle after one
    transaction: the memory a connection holds when it has nothing in flight (issue 16, goal 4).

    c --1 Gb/s, 1 ms-- r --1 Gb/s, 1 ms-- s; every connection opens at a time drawn
    uniformly over the first ``start_spread_s`` seconds, sends a 100-byte request, gets a
    100-byte response and thinks for 1,000 s (past the end of the run), so that at the end
    all ``n`` are ESTABLISHED, idle, with no packet in the network.
    """
    from ecnsim.scenario.spec import Scenario

    return Scenario.from_dict(
        {
            "name": f"idle-{n}",
            "simulation": {"duration": f"{duration_s}s", "seed": 1},
            "nodes": [
                {"name": "c", "kind": "host"},
                {"name": "r", "kind": "router"},
                {"name": "s", "kind": "host"},
            ],
            "links": [
                {"a": "c", "b": "r", "rate": "1Gbps", "delay": "1ms"},
                {"a": "r", "b": "s", "rate": "1Gbps", "delay": "1ms"},
            ],
            "apps": [
                {
                    "name": "rr",
                    # One connection per entry: the same client host n times.
                    "clients": ["c"] * n,
                    "servers": ["s"],
                    "start_jitter": f"{start_spread_s}s",
                    "model": {
                        "type": "rr",
                        "request": 100,
                        "response": 100,
                        "think_time": {"type": "constant", "value": 1000.0},
                    },
                }
            ],
        }
    )


def dctcp_incast_scenario(servers: int = 40, queries: int = 1000) -> Scenario:
    """The dctcp study's D6 point at ``servers`` servers: DCTCP (K = 20) through a static
    100-packet port, 1 MB / n per server, ``queries`` queries, RTO min 10 ms, 1 Gb/s
    (``ecnsim study show dctcp``)."""
    from ecnsim.studies.dctcp import DCTCP, DctcpParams, DctcpStudy, pt

    study = DctcpStudy()
    params = dataclasses.replace(DctcpParams(), incast_queries=queries)
    point = pt("D6", DCTCP, n=servers, k=params.k_1g, rto_ms=10.0)
    return _named(study.scenario(params, point), f"incast-{servers}")


def dctcp_analysis_scenario(flows: int = 40, duration_s: float = 1.0) -> Scenario:
    """The dctcp study's D13 point: ``flows`` long DCTCP flows into one 10 Gb/s port marking
    at K = 40, RTT 100 µs, the queue sampled every 2 µs, ``duration_s`` simulated."""
    from ecnsim.studies.dctcp import DCTCP, DctcpParams, DctcpStudy, pt

    study = DctcpStudy()
    params = dataclasses.replace(DctcpParams(), d13_duration_s=duration_s)
    point = pt("D13", DCTCP, n=flows, k=params.d13_k, rto_ms=params.min_rto_long_ms)
    return _named(study.scenario(params, point), f"dc10g-{flows}")


def _named(scenario: Scenario, name: str) -> Scenario:
    """A study point's scenario as a benchmark: its own name, seed 1."""
    d = scenario.to_dict()
    d["name"] = name
    d["simulation"]["seed"] = 1
    return type(scenario).from_dict(d)


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in [
        Benchmark(
            "dumbbell-100",
            "100 Reno bulk flows, 100 Mb/s bottleneck, 100 ms RTT, BDP DropTail, 60 s",
            100,
            lambda: _dumbbell_bench(100, 60),
            # Past the starts and the first slow start: the steady state.
            instructions_window=(10.0, 20.0),
        ),
        Benchmark(
            "dumbbell-100-linux6",
            "dumbbell-100 with 100 CUBIC flows under the linux-6.x profile (RACK-TLP, PRR, "
            "HyStart), 60 s",
            100,
            lambda: _dumbbell_bench(
                100, 60, profile="linux-6.x", tcp={"cc": "cubic"}, name="dumbbell-100-linux6"
            ),
            instructions_window=(10.0, 20.0),
        ),
        Benchmark(
            "dumbbell-100-linux6-dupack",
            "dumbbell-100-linux6 with duplicate-ACK loss detection "
            '(`loss_detection = "dupack"`): RACK-TLP\'s cost is the difference',
            100,
            lambda: _dumbbell_bench(
                100,
                60,
                profile="linux-6.x",
                tcp={"cc": "cubic", "loss_detection": "dupack"},
                name="dumbbell-100-linux6-dupack",
            ),
            instructions_window=(10.0, 20.0),
        ),
        Benchmark(
            "web-100m",
            "web sessions (Feldmann99 defaults) at 105% of a 100 Mb/s bottleneck, RTT 10-150 ms, "
            "DropTail 500, 200 s",
            0,
            lambda: web_sessions_scenario(105.0, 200.0),
            connections=True,
        ),
        Benchmark(
            "web-100m-90",
            "web sessions at 90% of a 100 Mb/s bottleneck, RTT 10-150 ms, DropTail 500, 200 s",
            0,
            lambda: web_sessions_scenario(90.0, 200.0),
            connections=True,
        ),
        Benchmark(
            "hetero-15",
            "the hetero study's star, N = 15 Reno flows, RED (max_p 0.1), 10 Mb/s bottleneck, "
            "100 s (the reference of flat cost per hop as flows grow)",
            15,
            lambda: hetero_scenario(15),
            instructions_window=(20.0, 30.0),
        ),
        Benchmark(
            "hetero-120",
            "the hetero study's star, N = 120 Reno flows, RED (max_p 0.1), 10 Mb/s bottleneck, "
            "100 s",
            120,
            lambda: hetero_scenario(120),
            instructions_window=(20.0, 30.0),
        ),
        Benchmark(
            "hetero-600",
            "the hetero study's star, N = 600 Reno flows, RED (max_p 0.1), 10 Mb/s bottleneck, "
            "100 s",
            600,
            lambda: hetero_scenario(600),
            instructions_window=(20.0, 30.0),
        ),
        Benchmark(
            "hetero-2400",
            "the hetero study's star, N = 2,400 Reno flows, RED (max_p 0.1), 10 Mb/s bottleneck, "
            "100 s",
            2400,
            lambda: hetero_scenario(2400),
            instructions_window=(20.0, 30.0),
        ),
        Benchmark(
            "hetero-9600",
            "the hetero study's star, N = 9,600 Reno flows, RED (max_p 0.1), 10 Mb/s bottleneck, "
            "100 s",
            9600,
            lambda: hetero_scenario(9600),
            instructions_window=(20.0, 30.0),
        ),
        Benchmark(
            "dumbbell-10000-10g",
            "10,000 Reno bulk flows, 10 Gb/s bottleneck, 1 Gb/s access, 100 ms RTT, BDP DropTail, "
            "5 s",
            10_000,
            lambda: _dumbbell_bench(
                10_000,
                5.0,
                bottleneck_rate="10Gbps",
                limit_packets=83_333,
                name="dumbbell-10000-10g",
            ),
            instructions_window=(2.0, 2.1),
        ),
        Benchmark(
            "idle-40000",
            "40,000 request/response connections between two hosts, each idle after one "
            "transaction (think time 1,000 s), 6 s: memory per idle connection",
            40_000,
            lambda: idle_connections_scenario(40_000),
            connections=True,
            instructions_window=(5.0, 6.0),
        ),
        Benchmark(
            "incast-40",
            "the dctcp study's D6 at 40 servers: DCTCP (K = 20), static 100-packet ports, "
            "1 MB / 40 per server, 1000 queries, RTO min 10 ms, 1 Gb/s, 100 µs RTT",
            40,
            lambda: dctcp_incast_scenario(40, 1000),
            instructions_window=(2.0, 3.0),
        ),
        Benchmark(
            "dc10g-40",
            "the dctcp study's D13 with N = 40: 40 DCTCP flows into one 10 Gb/s port (K = 40), "
            "100 µs RTT, the queue sampled every 2 µs, 1 s",
            40,
            lambda: dctcp_analysis_scenario(40, 1.0),
            instructions_window=(0.5, 0.6),
        ),
        Benchmark(
            "dumbbell-10",
            "10 Reno bulk flows, 100 Mb/s bottleneck, 100 ms RTT, BDP DropTail, 10 s (smoke test)",
            10,
            lambda: _dumbbell_bench(10, 10),
        ),
    ]
}


def _maxrss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return int(rss) if sys.platform == "darwin" else int(rss) * 1024


def _rss_bytes() -> int | None:
    """The resident memory of this process now (Linux; None elsewhere): what it holds, where
    ``ru_maxrss`` gives the peak, which a vector's copy as it doubles raises for a moment."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _scenario(
    bench: Benchmark, series: bool = True, sets: Sequence[tuple[str, Any]] = ()
) -> Scenario:
    """The benchmark's scenario; without its time series if ``series`` is false; with each
    ``--set`` of ``sets`` applied in order (``ecnsim run``'s rules)."""
    scenario = bench.build()
    if series and not sets:
        return scenario
    d = scenario.to_dict()
    if not series:
        d.get("simulation", {}).pop("sample_interval", None)
    if sets:
        d = apply_sets(d, sets)
    return type(scenario).from_dict(d)


def _set_texts(sets: Sequence[tuple[str, Any]]) -> list[str]:
    """``sets`` as ``PATH=VALUE`` texts that parse back to them (the value as JSON)."""
    return [f"{path}={json.dumps(value)}" for path, value in sets]


def run_benchmark(
    bench: Benchmark,
    until: float | None = None,
    series: bool = True,
    chunk: float | None = None,
    sets: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any]:
    """Build and run ``bench`` in this process (to ``until`` seconds simulated if given;
    without its time series if ``series`` is false; in run chunks of ``chunk`` simulated
    seconds if given, see :meth:`Simulation.run_until`; with the ``--set`` changes ``sets``).

    ``build_s`` is the core's model build (the scenario is written first);
    ``wall_s`` counts the run only. Memory per flow is the peak RSS growth
    from just before the build.
    """
    from ecnsim.simulation import Simulation

    scenario = _scenario(bench, series, sets)
    rss_before, held_before = _maxrss_bytes(), _rss_bytes()
    t0, c0 = time.perf_counter(), time.process_time()
    sim = Simulation(scenario)
    build_s, build_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    t1, c1 = time.perf_counter(), time.process_time()
    sim.run_until(sim.duration if until is None else min(until, sim.duration), chunk=chunk)
    wall_s, cpu_s = time.perf_counter() - t1, time.process_time() - c1
    perf = sim.perf()
    run_peak, held_after = _maxrss_bytes(), _rss_bytes()
    live = sim.live_state()
    results = sim.results
    if bench.connections:
        # Workload connections are summed per app (``apps``); ``flows`` has the [[flows]] ones.
        apps = results.tables["apps"]
        conns = sum(apps.to_pylist("connections")) + len(results.tables["flows"])
    else:
        conns = bench.n_flows
    peak = _maxrss_bytes()
    extra: dict[str, Any] = {}
    if bench.connections:
        extra = {
            "connections": conns,
            "connections_per_s": conns / wall_s if wall_s > 0 else math.inf,
            "run_peak_rss_bytes": run_peak,
            "bytes_per_connection": max(peak - rss_before, 0) / max(conns, 1),
            # The simulation's own: peak growth up to the end of the run, before the results.
            "run_bytes_per_connection": max(run_peak - rss_before, 0) / max(conns, 1),
            # What the simulation holds at the end of the run (resident), per connection.
            "held_bytes_per_connection": (
                None
                if held_before is None or held_after is None
                else max(held_after - held_before, 0) / max(conns, 1)
            ),
            "live_connections": live["live_connections"],
            "connection_slots": live["connection_slots"],
            "records": len(results.tables["records"]),
        }
    return {
        "name": bench.name,
        "description": bench.description,
        # The benchmark's scenario as changed by `--set` (empty: as defined).
        "set": _set_texts(sets),
        "series": series,
        "flows": conns,
        "simulated_s": sim.now,
        "wall_s": wall_s,
        "build_s": build_s,
        # CPU time of the process (every thread): less sensitive than wall time to
        # other jobs on a shared machine.
        "cpu_s": cpu_s,
        "build_cpu_s": build_cpu_s,
        "events": perf["events"],
        "packet_hops": perf["packet_hops"],
        "packet_hops_per_s": perf["packet_hops"] / wall_s if wall_s > 0 else math.inf,
        "events_per_s": perf["events"] / wall_s if wall_s > 0 else math.inf,
        "ns_per_hop": cpu_s * 1e9 / perf["packet_hops"] if perf["packet_hops"] else math.nan,
        "peak_rss_bytes": peak,
        "bytes_per_flow": max(peak - rss_before, 0) / max(conns, 1),
        **extra,
        "load_average": _load_average(),
        "ecnsim_version": __version__,
        # Whether the extension was built with profile-guided optimisation: about 10 % of
        # the CPU per hop (docs/performance.md, "Profile-guided builds").
        "build": _core.build_info(),
    }


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (what ``uptime`` shows), if known."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _child_command(
    name: str,
    until: float | None,
    series: bool = True,
    chunk: float | None = None,
    sets: Sequence[tuple[str, Any]] = (),
) -> list[str]:
    cmd = [sys.executable, "-m", "ecnsim", "bench", name, "--json", "--no-instructions"]
    for text in _set_texts(sets):
        cmd += ["--set", text]
    if not series:
        cmd.append("--no-series")
    if chunk is not None:
        cmd += ["--chunk", repr(chunk)]
    return cmd if until is None else [*cmd, "--until", repr(until)]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """Linux: the child gets SIGKILL when the process that started it dies, however it dies
    (a killed ``ecnsim bench`` left its valgrind children running for minutes)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1 (prctl(2))
    except (OSError, AttributeError):
        pass


def _run_child(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` for the benchmark's child processes: output captured as text, and
    the child killed if this process dies (Linux) or is interrupted (``run`` kills it)."""
    preexec = _die_with_parent if sys.platform.startswith("linux") else None
    return subprocess.run(
        cmd, capture_output=True, text=True, check=False, preexec_fn=preexec, **kwargs
    )


def _run_benchmark_in_child(
    name: str,
    until: float | None = None,
    series: bool = True,
    chunk: float | None = None,
    sets: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any]:
    """Run one benchmark in a fresh interpreter, so peak memory is its own."""
    proc = _run_child(_child_command(name, until, series, chunk, sets))
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {name} failed (exit {proc.returncode}):\n{proc.stderr}")
    record: dict[str, Any] = json.loads(proc.stdout)[0]
    return record


#: The bindings' run loop (``crates/ecnsim-py/src/simulation.rs``, never inlined): the
#: callgrind runs count instructions only while it runs.
RUN_LOOP_SYMBOL = "*PySimulation::run_chunks*"

#: Callgrind's summary line: the instructions the program executed.
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions_per_hop(
    bench: Benchmark, valgrind: str, series: bool = True, sets: Sequence[tuple[str, Any]] = ()
) -> dict[str, Any]:
    """Instructions per packet-hop by callgrind, as the difference of two run lengths.

    The benchmark runs twice under ``valgrind --tool=callgrind``, to each time
    of ``bench.instructions_window``, counting only inside the bindings' run loop
    (:data:`RUN_LOOP_SYMBOL`: the simulation, and the bindings' work between run
    chunks of :data:`INSTRUCTIONS_CHUNK_S`, fixed so that the count does not depend
    on how much callgrind slows the run); the run to the window's start is the same
    in both, so (instructions2 - instructions1) / (hops2 - hops1) is the cost of the
    packets in between alone. Start-up, build and output are not counted at all:
    they varied by hundreds of thousands of instructions from one process to the
    next (the interpreter's garbage collections, signal polls timed by the wall
    clock during the build), enough to move a short window's figure by 25 per hop.
    """
    counts = []
    # What else makes a count vary run to run: string hashing (its order changes the
    # work of sets and dicts) and numpy's BLAS worker threads, which spin for a time.
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for until in bench.instructions_window:
        cmd = [
            valgrind,
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            f"--toggle-collect={RUN_LOOP_SYMBOL}",
        ]
        proc = _run_child(
            [*cmd, *_child_command(bench.name, until, series, INSTRUCTIONS_CHUNK_S, sets)],
            env=env,
        )
        found = _COLLECTED.findall(proc.stderr)
        if proc.returncode != 0 or not found:
            raise RuntimeError(
                f"callgrind run of {bench.name} to {until} s failed (exit {proc.returncode}):\n"
                f"{proc.stderr[-2000:]}"
            )
        hops = int(json.loads(proc.stdout)[0]["packet_hops"])
        if int(found[-1]) == 0:
            raise RuntimeError(
                f"callgrind counted no instructions in {RUN_LOOP_SYMBOL} (was it inlined?)"
            )
        counts.append((int(found[-1]), hops))
    (i1, h1), (i2, h2) = counts
    if h2 <= h1:
        raise RuntimeError(f"{bench.name}: no packet-hops between {bench.instructions_window} s")
    return {
        "instructions_per_hop": (i2 - i1) / (h2 - h1),
        "instructions_window_s": list(bench.instructions_window),
        "instructions_window_hops": h2 - h1,
        "instructions_chunk_s": INSTRUCTIONS_CHUNK_S,
        # The raw counts (the run loop's, to each end of the window) and hops, to compare runs.
        "instructions_counts": [i1, i2],
        "instructions_hops": [h1, h2],
    }


def _si(value: float) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}"
    return f"{value:.2f} "


def _held(r: dict[str, Any]) -> str:
    held = r.get("held_bytes_per_connection")
    return "" if held is None else f"{held:.0f} B held at the end, "


def _format_benchmark(r: dict[str, Any]) -> str:
    speed = r["simulated_s"] / r["wall_s"] if r["wall_s"] > 0 else math.inf
    if "connections" in r:
        return "\n".join(
            [
                f"{r['name']}: {r['description']}",
                *([f"  --set          {', '.join(r['set'])}"] if r.get("set") else []),
                f"  connections/s  {_si(r['connections_per_s'])}connections/s "
                f"({r['connections']} connections)",
                f"  packet-hops/s  {_si(r['packet_hops_per_s'])}hops/s ({r['packet_hops']} hops)",
                f"  wall time      {r['wall_s']:.3f} s run, {r['build_s']:.3f} s build "
                f"({speed:.1f}x real time)",
                f"  peak memory    {r['run_peak_rss_bytes'] / 2**20:.1f} MiB RSS after the run, "
                f"{r['peak_rss_bytes'] / 2**20:.1f} MiB with its results "
                f"(per connection: {_held(r)}"
                f"{r['run_bytes_per_connection']:.0f} B at the run's peak, "
                f"{r['bytes_per_connection']:.0f} B with its results; "
                f"{r['connection_slots']} connection slots, "
                f"{r['live_connections']} connections live at the end)",
            ]
        )
    lines = [
        f"{r['name']}: {r['description']}",
        *([f"  --set          {', '.join(r['set'])}"] if r.get("set") else []),
        f"  packet-hops/s  {_si(r['packet_hops_per_s'])}hops/s ({r['packet_hops']} hops)",
        f"  events/s       {_si(r['events_per_s'])}events/s ({r['events']} events)",
        f"  wall time      {r['wall_s']:.3f} s run, {r['build_s']:.3f} s build "
        f"({speed:.1f}x real time)",
        f"  CPU time       {r['cpu_s']:.3f} s run, {r['build_cpu_s']:.3f} s build "
        f"({r['ns_per_hop']:.0f} ns per packet-hop)",
        f"  peak memory    {r['peak_rss_bytes'] / 2**20:.1f} MiB RSS, "
        f"{r['bytes_per_flow'] / 2**10:.1f} KiB per flow",
    ]
    if "instructions_per_hop" in r:
        lines.append(f"  instructions   {r['instructions_per_hop']:.0f} per packet-hop (callgrind)")
    return "\n".join(lines)


def cmd_bench(args: argparse.Namespace) -> int:
    if args.list:
        width = max(len(n) for n in BENCHMARKS)
        for b in BENCHMARKS.values():
            print(f"{b.name.ljust(width)}  {b.description}")
        return EXIT_OK
    names = args.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(
            f"error: unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    sets = args.set or []
    if args.write_scenario is not None:
        if len(names) != 1:
            print("error: --write-scenario takes one benchmark name", file=sys.stderr)
            return EXIT_USAGE
        with open(args.write_scenario, "w", encoding="utf-8") as f:
            scenario = _scenario(BENCHMARKS[names[0]], not args.no_series, sets)
            json.dump(scenario.to_dict(), f, indent=1)
            f.write("\n")
        print(f"wrote {args.write_scenario} (run it with: ecnsim run {args.write_scenario})")
        return EXIT_OK
    valgrind = None if args.no_instructions or not args.json else shutil.which("valgrind")
    records = []
    series = not args.no_series
    for name in names:
        if len(names) == 1:
            record = run_benchmark(BENCHMARKS[name], args.until, series, args.chunk, sets)
        else:
            record = _run_benchmark_in_child(name, args.until, series, args.chunk, sets)
        if valgrind is not None:
            record.update(instructions_per_hop(BENCHMARKS[name], valgrind, series, sets))
        records.append(record)
        if not args.json:
            print(_format_benchmark(record), flush=True)
    if args.json:
        print(json.dumps(records, indent=2))
    return EXIT_OK


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and value >= 1e-9):
        raise argparse.ArgumentTypeError(f"must be at least 1e-9 seconds (1 ns), got {text!r}")
    return value


def _until_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite time >= 0 seconds, got {text!r}")
    return value


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim bench``."""
    bench = sub.add_parser("bench", help="run named benchmark scenarios")
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    bench.add_argument("--json", action="store_true", help="print results as JSON")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")
    bench.add_argument(
        "--until",
        type=_until_seconds,
        metavar="SECONDS",
        help="stop each run at this simulated time (default: the benchmark's end)",
    )
    bench.add_argument(
        "--chunk",
        type=_positive_seconds,
        metavar="SECONDS",
        help="run in chunks of this much simulated time (default: chunks sized by wall time); "
        "the work done then does not depend on the machine's speed",
    )
    bench.add_argument(
        "--write-scenario",
        metavar="FILE.json",
        help="write the benchmark's scenario as JSON (for ecnsim run, or another simulator) "
        "instead of running it",
    )
    bench.add_argument(
        "--set",
        action="append",
        type=set_arg,
        metavar="PATH=VALUE",
        help="change one field of each benchmark's scenario, as ecnsim run --set does "
        "(tcp.cc=bbr, links[name=bottleneck].queue.type=red); repeatable, applied in order; "
        "the JSON record lists them under set",
    )
    bench.add_argument(
        "--no-series",
        action="store_true",
        help="leave out the benchmark's time series (simulation.sample_interval): the cost of the "
        "packets alone, as flows grow",
    )
    bench.add_argument(
        "--no-instructions",
        action="store_true",
        help="with --json: skip instructions per packet-hop (two callgrind runs per benchmark, "
        "done when valgrind is installed)",
    )
    bench.set_defaults(func=cmd_bench)
