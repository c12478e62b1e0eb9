"""Every example scenario parses and runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecnsim import Scenario, Simulation, load_toml

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


#: Simulated time each side of the --print-resolved comparison runs (the whole example
#: runs in test_example_runs; the same scenario gives the same state at every time).
RESOLVED_UNTIL_S = 2.0


@pytest.mark.parametrize("fmt", ["toml", "json", "toml --defaults"])
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_print_resolved_reruns_to_the_same_digest(
    path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ecnsim run EXAMPLE --print-resolved`` prints a scenario that runs as the example
    does (issue 35 item 1: crr.toml's printout was refused); with ``--defaults`` too, every
    value the profile supplies written out."""
    from ecnsim.cli import main

    fmt, *extra = fmt.split()
    code = main(["run", str(path), "--print-resolved", "--format", fmt, *extra])
    printed, err = capsys.readouterr()
    assert code == 0, err
    direct = Simulation.from_toml(path)
    again = (Simulation.from_toml_str if fmt == "toml" else Simulation.from_json_str)(printed)
    for sim in (direct, again):
        sim.run_until(min(RESOLVED_UNTIL_S, sim.duration))
    assert again.results.digest == direct.results.digest
    if extra:
        # Nothing left to the profile: each flow's TCP parameters are all written out.
        flows = Scenario.from_toml(printed).to_dict().get("flows", [])
        assert all("min_rto" in f["tcp"] and "cc" in f["tcp"] for f in flows)
