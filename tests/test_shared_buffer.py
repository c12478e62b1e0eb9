"""A router's shared buffer through the builder and the extension (models/shared_buffer.md)."""

from __future__ import annotations

import pytest

from ecnsim import Scenario, Simulation, SpecError, droptail
from ecnsim.scenario.workloads import cbr


def switch(buffer: dict[str, object] | None) -> Scenario:
    """Two 20 Mb/s UDP sources into two 10 Mb/s ports of one switch; 1500-byte packets."""
    big = droptail(limit_packets=10_000)
    sc = Scenario(duration="1s", seed=1).host("a0", "a1", "b0", "b1")
    sc.router("sw", shared_buffer=buffer)
    for i in (0, 1):
        sc.link("sw", f"b{i}", rate="10Mbps", delay="10us", queue=big)
        sc.link(f"a{i}", "sw", rate="1Gbps", delay="10us", queue=big)
    sc.app(cbr("20Mbps", packet_size=1472), clients="a0", servers="b0", name="cbr0")
    sc.app(cbr("20Mbps", packet_size=1472), clients="a1", servers="b1", name="cbr1", start="0.5s")
    return sc


def test_builder_writes_the_field_for_routers() -> None:
    sc = Scenario(duration="1s").router("r", shared_buffer={"bytes": "4MB", "alpha": 7 / 33})
    assert sc.to_dict()["nodes"] == [
        {"name": "r", "kind": "router", "shared_buffer": {"bytes": "4MB", "alpha": 7 / 33}}
    ]
    # Absent by default: the node is written as before.
    assert Scenario(duration="1s").router("r").to_dict()["nodes"] == [
        {"name": "r", "kind": "router"}
    ]


def test_busy_ports_share_the_buffer() -> None:
    # alpha = 1, B = 150,000 bytes: one busy port peaks at alpha B / (1 + alpha) = 75,000 bytes;
    # from 0.5 s the second port is busy too and both hold about B / 3.
    res = Simulation(switch({"bytes": 150_000, "alpha": 1.0})).run()
    q = res.queues.set_index("queue")
    assert q.loc["sw->b0", "max_bytes"] == 75_000
    assert 48_000 <= q.loc["sw->b1", "max_bytes"] <= 51_000
    assert q.loc["sw->b0", "drops_overflow"] > 0
    static = Simulation(switch(None)).run().queues.set_index("queue")
    assert static.loc["sw->b0", "max_bytes"] > 600_000
    assert static.loc["sw->b0", "drops"] == 0


@pytest.mark.parametrize(
    ("buffer", "message"),
    [
        ({"bytes": 150_000, "alpha": -1.0}, r"nodes\[4\]\.shared_buffer\.alpha: must be > 0"),
        ({"bytes": 0, "alpha": 1.0}, r"nodes\[4\]\.shared_buffer\.bytes: must be >= 1"),
        ({"bytes": 150_000}, "alpha"),
    ],
)
def test_bad_buffer_names_the_field(buffer: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        Simulation(switch(buffer))
