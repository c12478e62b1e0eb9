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
    # What the run simulates: templates and flow groups expanded.
    spec = load_toml(path).expanded().to_dict()
    sim = Simulation.from_toml(path)
    results = sim.run()
    assert sim.is_finished
    assert results.finished
    flows = results.table("flows")
    # One row per [[flows]] entry; workload connections are summed per app in `apps`.
    assert len(flows) == len(spec.get("flows", []))
    apps = results.table("apps")
    assert len(apps) == len(spec.get("apps", []))
    delivered = sum(
        sum(t[c]) for t in (flows, apps) for c in ("bytes_delivered", "reverse_bytes_delivered")
    )
    udp = results.table("records").to_pandas().query("kind == 'udp'")
    assert delivered > 0 or udp["response_bytes"].sum() > 0
    c = sim.conservation()
    assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"]
