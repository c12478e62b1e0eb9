"""Web sessions at scale: what a run holds stays that of the connections alive."""

from __future__ import annotations

import json
import subprocess
import sys

from ecnsim import Simulation
from ecnsim.cli.bench import web_sessions_scenario


def _run(duration_s: float) -> tuple[Simulation, int]:
    sc = web_sessions_scenario(
        70.0, duration_s, rate="10Mbps", clients=6, servers=3, queue_packets=100
    )
    sim = Simulation(sc)
    sim.run_until(duration_s)
    return sim, int(sim.results.tables["apps"]["connections"].sum())


def test_web_session_live_state_stays_flat_when_simulated_time_doubles() -> None:
    a, conns_a = _run(20.0)
    b, conns_b = _run(40.0)
    assert conns_b > 1.7 * conns_a
    la, lb = a.live_state(), b.live_state()
    for key in ("endpoint_slots", "connection_slots", "app_slots"):
        assert lb[key] < 1.35 * la[key] + 20, (key, la, lb, conns_a, conns_b)
    # Connection state is reused: far fewer slots than connections.
    assert lb["endpoint_slots"] < conns_b / 10
    assert lb["connection_slots"] < conns_b / 10
    assert lb["live_connections"] <= lb["endpoint_slots"]
    # No per-connection rows unless asked for; the records are the per-object output.
    assert len(b.results.tables["flows"]) == 0
    assert len(b.results.tables["records"]) >= conns_b
    assert b.results.apps["connections"].sum() == conns_b


#: A whole run in a fresh interpreter: peak RSS, connections and records after the
#: results reached Python (the memory a user's script pays).
_CHILD = """
import json, resource, sys
from ecnsim import Simulation
from ecnsim.cli.bench import web_sessions_scenario

sim = Simulation(web_sessions_scenario(90.0, float(sys.argv[1]), rate="100Mbps"))
results = sim.run()
records = results.tables["records"]
print(json.dumps({
    "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    "connections": int(results.tables["apps"]["connections"].sum()),
    "records": len(records),
    "slots": sim.live_state()["connection_slots"],
}))
"""


def _whole_run(duration_s: float) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(duration_s)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, int] = json.loads(out.stdout)
    return result


def test_whole_process_memory_grows_only_with_the_records() -> None:
    # 100 Mb/s of web sessions at 90 %: about 1,500 connections per simulated second.
    # Doubling the simulated time doubles the connections opened; the process's peak
    # memory (the run, then its results handed to Python) grows only by the records'
    # own bytes (one row per object), not by per-connection state (a `flows` row and
    # a connection's final state cost about 0.7 KB in the core alone, and more again
    # at the peak of handing the tables to Python).
    a = _whole_run(10.0)
    b = _whole_run(20.0)
    added = b["connections"] - a["connections"]
    assert added > 10_000, (a, b)
    assert b["slots"] < 1.35 * a["slots"] + 200, (a, b)
    per_connection = (b["rss"] - a["rss"]) / added
    assert per_connection < 600, f"{per_connection:.0f} B of peak memory per added connection"
