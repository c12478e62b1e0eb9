"""Every example scenario parses and runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecnsim import Simulation, load_toml

from .conftest import EXAMPLES


def test_there_are_examples() -> None:
    assert {p.name for p in EXAMPLES} >= {"dumbbell.toml", "single_flow.toml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path) -> None:
    spec = load_toml(path).to_dict()
    sim = Simulation.from_toml(path)
    results = sim.run()
    assert sim.is_finished
    assert results.finished
    flows = results.table("flows")
    # One row per connection: each [[flows]] entry is one, workloads open more.
    assert len(flows) >= len(spec.get("flows", []))
    delivered = sum(flows["bytes_delivered"]) + sum(flows["reverse_bytes_delivered"])
    udp = results.table("records").to_pandas().query("kind == 'udp'")
    assert delivered > 0 or udp["response_bytes"].sum() > 0
    c = sim.conservation()
    assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"]
