"""Web sessions at scale: what a run holds stays that of the connections alive."""

from __future__ import annotations

from ecnsim import Simulation
from ecnsim.cli.bench import web_sessions_scenario


def _run(duration_s: float) -> tuple[Simulation, int]:
    sc = web_sessions_scenario(
        70.0, duration_s, rate="10Mbps", clients=6, servers=3, queue_packets=100
    )
    sim = Simulation(sc)
    sim.run_until(duration_s)
    return sim, len(sim.results.tables["flows"])


def test_web_session_live_state_stays_flat_when_simulated_time_doubles() -> None:
    a, conns_a = _run(20.0)
    b, conns_b = _run(40.0)
    assert conns_b > 1.7 * conns_a
    la, lb = a.live_state(), b.live_state()
    for key in ("endpoint_slots", "app_slots"):
        assert lb[key] < 1.35 * la[key] + 20, (key, la, lb, conns_a, conns_b)
    # Connection state is reused: far fewer slots than connections.
    assert lb["endpoint_slots"] < conns_b / 10
    assert lb["live_connections"] <= lb["endpoint_slots"]
