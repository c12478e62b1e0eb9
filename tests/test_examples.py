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
    assert len(flows) == len(spec["flows"])
    assert sum(flows["bytes_delivered"]) > 0
    c = sim.conservation()
    assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"]
