"""``ecnsim bench``: named benchmark scenarios (packet-hops per wall second, memory per flow)."""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ecnsim import __version__
from ecnsim.cli._common import EXIT_OK, EXIT_USAGE
from ecnsim.scenario.spec import Scenario, droptail
from ecnsim.scenario.topology import dumbbell
from ecnsim.simulation import Simulation

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


def _dumbbell_bench(n_flows: int, duration_s: int) -> Scenario:
    # 100 Mb/s bottleneck, 100 ms RTT: 2 * (5 ms + 40 ms + 5 ms).
    # DropTail sized to the bandwidth-delay product: 100 Mb/s * 100 ms / 1500 B = 833 packets.
    return dumbbell(
        n_flows,
        bottleneck_rate="100Mbps",
        bottleneck_delay="40ms",
        access_rate="1Gbps",
        access_delay="5ms",
        queue=droptail(limit_packets=833),
        duration=f"{duration_s}s",
        # Starts spread over the first second, 1 s / n_flows apart.
        start=[f"{i * 1_000_000 // n_flows}us" for i in range(n_flows)],
        tcp={"cc": "reno"},
        name=f"dumbbell-{n_flows}",
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


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in [
        Benchmark(
            "dumbbell-100",
            "100 Reno bulk flows, 100 Mb/s bottleneck, 100 ms RTT, BDP DropTail, 60 s",
            100,
            lambda: _dumbbell_bench(100, 60),
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


def run_benchmark(bench: Benchmark) -> dict[str, Any]:
    """Build and run ``bench`` in this process; wall time counts the run only."""
    rss_before = _maxrss_bytes()
    t0 = time.perf_counter()
    sim = Simulation(bench.build())
    build_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    sim.run_until(sim.duration)
    wall_s = time.perf_counter() - t1
    perf = sim.perf()
    run_peak = _maxrss_bytes()
    live = sim.live_state()
    results = sim.results
    if bench.connections:
        # Workload connections are summed per app (``apps``); ``flows`` has the [[flows]] ones.
        apps = results.tables["apps"]
        conns = int(np.sum(apps["connections"])) + len(results.tables["flows"])
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
            "connection_slots": live["connection_slots"],
            "records": len(results.tables["records"]),
        }
    return {
        "name": bench.name,
        "description": bench.description,
        "flows": conns,
        "simulated_s": sim.duration,
        "wall_s": wall_s,
        "build_s": build_s,
        "events": perf["events"],
        "packet_hops": perf["packet_hops"],
        "packet_hops_per_s": perf["packet_hops"] / wall_s if wall_s > 0 else math.inf,
        "events_per_s": perf["events"] / wall_s if wall_s > 0 else math.inf,
        "peak_rss_bytes": peak,
        "bytes_per_flow": max(peak - rss_before, 0) / max(conns, 1),
        **extra,
        "ecnsim_version": __version__,
    }


def _run_benchmark_in_child(name: str) -> dict[str, Any]:
    """Run one benchmark in a fresh interpreter, so peak memory is its own."""
    proc = subprocess.run(
        [sys.executable, "-m", "ecnsim", "bench", name, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {name} failed (exit {proc.returncode}):\n{proc.stderr}")
    record: dict[str, Any] = json.loads(proc.stdout)[0]
    return record


def _si(value: float) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}"
    return f"{value:.2f} "


def _format_benchmark(r: dict[str, Any]) -> str:
    speed = r["simulated_s"] / r["wall_s"] if r["wall_s"] > 0 else math.inf
    if "connections" in r:
        return "\n".join(
            [
                f"{r['name']}: {r['description']}",
                f"  connections/s  {_si(r['connections_per_s'])}connections/s "
                f"({r['connections']} connections)",
                f"  packet-hops/s  {_si(r['packet_hops_per_s'])}hops/s ({r['packet_hops']} hops)",
                f"  wall time      {r['wall_s']:.3f} s run, {r['build_s']:.3f} s build "
                f"({speed:.1f}x real time)",
                f"  peak memory    {r['run_peak_rss_bytes'] / 2**20:.1f} MiB RSS after the run, "
                f"{r['peak_rss_bytes'] / 2**20:.1f} MiB with its results "
                f"({r['bytes_per_connection']:.0f} B per connection; "
                f"{r['connection_slots']} connection slots reused)",
            ]
        )
    return "\n".join(
        [
            f"{r['name']}: {r['description']}",
            f"  packet-hops/s  {_si(r['packet_hops_per_s'])}hops/s ({r['packet_hops']} hops)",
            f"  events/s       {_si(r['events_per_s'])}events/s ({r['events']} events)",
            f"  wall time      {r['wall_s']:.3f} s run, {r['build_s']:.3f} s build "
            f"({speed:.1f}x real time)",
            f"  peak memory    {r['peak_rss_bytes'] / 2**20:.1f} MiB RSS, "
            f"{r['bytes_per_flow'] / 2**10:.1f} KiB per flow",
        ]
    )


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
    records = []
    for name in names:
        if len(names) == 1:
            record = run_benchmark(BENCHMARKS[name])
        else:
            record = _run_benchmark_in_child(name)
        records.append(record)
        if not args.json:
            print(_format_benchmark(record), flush=True)
    if args.json:
        print(json.dumps(records, indent=2))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim bench``."""
    bench = sub.add_parser("bench", help="run named benchmark scenarios")
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    bench.add_argument("--json", action="store_true", help="print results as JSON")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")
    bench.set_defaults(func=cmd_bench)
