"""Web sessions at scale: what a run holds stays that of the connections alive."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from ecnsim import Results, Simulation
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
    records_b = len(b.results.tables["records"])
    assert records_b >= conns_b
    assert b.results.apps["connections"].sum() == conns_b
    # The finished records left the core between chunks: what the core holds for them
    # (its own counter, not the process's RSS) is the most that finished in one chunk.
    assert lb["record_slots"] < 1.35 * la["record_slots"] + 50, (la, lb)
    assert lb["record_slots"] < records_b / 10, (lb, records_b)
    assert lb["drained_records"] > 0.9 * records_b, (lb, records_b)
    assert lb["drained_records"] > 1.7 * la["drained_records"], (la, lb)


def _records_in_steps(step_s: float | None) -> tuple[Simulation, Results]:
    sc = web_sessions_scenario(95.0, 12.0, rate="10Mbps", clients=6, servers=3, queue_packets=30)
    sim = Simulation(sc, seed=3)
    if step_s is None:
        return sim, sim.run()
    t = 0.0
    while not sim.is_finished:
        t += step_s
        sim.run_until(t)
    return sim, sim.results


@pytest.mark.parametrize("step_s", [0.003, 0.25, 5.0])
def test_records_are_bit_identical_whatever_the_chunks_they_leave_the_core_in(
    step_s: float,
) -> None:
    # run() drains after chunks of its own size; run_until in steps drains after each step.
    # The records table (and the digest of all results) is the same bit for bit; the Rust
    # test `drained_records_are_the_undrained_table_bit_for_bit_at_any_step` compares
    # with a run never drained.
    sim_a, a = _records_in_steps(None)
    sim_b, b = _records_in_steps(step_s)
    assert a.digest == b.digest == sim_b.digest() == sim_a.digest()
    ra, rb = a.records, b.records
    assert len(ra) > 500
    assert set(ra["state"]) >= {"completed", "in_progress"}
    pd.testing.assert_frame_equal(ra, rb, check_exact=True)
    assert sim_b.live_state()["drained_records"] > 0.8 * len(rb)
    # The results can be taken again, and mid-run: the drained rows stay in front.
    assert sim_b.results.digest == b.digest


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
