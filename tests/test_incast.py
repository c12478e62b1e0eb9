"""The incast workload through the Python builder and the extension (models/transactions.md)."""

from __future__ import annotations

from ecnsim import Scenario, Simulation, droptail
from ecnsim.scenario.workloads import incast


def star(n: int, limit: int) -> Scenario:
    """A client and ``n`` servers on one switch at 1 Gb/s; the client's port holds ``limit``."""
    sc = Scenario(duration="2s", seed=1).tcp(min_rto="10ms").router("sw").host("c")
    sc.link("c", "sw", rate="1Gbps", delay="25us", queue_ba=droptail(limit_packets=limit))
    servers = [f"s{i}" for i in range(n)]
    for s in servers:
        sc.host(s).link(s, "sw", rate="1Gbps", delay="25us")
    return sc.app(
        incast(response=1_000_000 // n, request=100, queries=20),
        clients="c",
        servers=servers,
        name="q",
    )


def test_builder_writes_the_model() -> None:
    assert incast(response=25_000, queries=3) == {
        "type": "incast",
        "response": 25_000,
        "queries": 3,
    }


def test_query_records_and_timeouts() -> None:
    deep = Simulation(star(8, 100_000)).run().records
    assert len(deep) == 20
    assert (deep["objects"] == 8).all()
    assert (deep["response_bytes"] == 8 * 125_000).all()
    assert (deep["rto_count"] == 0).all()
    shallow = Simulation(star(32, 32)).run().records
    assert len(shallow) == 20
    # The share of queries with a timeout, the incast experiments' measure.
    assert (shallow["rto_count"] > 0).mean() > 0
