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
        # Nothing left to the profile: each flow's TCP parameters are all written out, those
        # every connection shares once in [tcp], the rest in the flow's own table.
        spec = Scenario.from_toml(printed).to_dict()
        for f in spec.get("flows", []):
            tcp = {**spec.get("tcp", {}), **f.get("tcp", {})}
            assert "min_rto" in tcp, f
            assert "cc" in tcp, f


def test_defaults_write_what_every_connection_shares_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--print-resolved --defaults``: a TCP value every flow shares goes to ``[tcp]`` once;
    what sets a flow apart (its ``cc`` here) stays in its own table; nothing changes how a
    flow resolves (the printout reruns to the example's digest, above)."""
    import json

    from ecnsim.cli import main

    path = next(p for p in EXAMPLES if p.name == "dctcp_cubic_fq_codel.toml")
    assert main(["run", str(path), "--print-resolved", "--format", "json", "--defaults"]) == 0
    spec = json.loads(capsys.readouterr().out)
    assert spec["tcp"]["min_rto"]
    assert spec["tcp"]["mss"]
    ccs = {f["name"]: f["tcp"]["cc"] for f in spec["flows"]}
    assert set(ccs.values()) == {"dctcp", "cubic"}, ccs
    for f in spec["flows"]:
        # Only the differences remain per flow.
        assert not set(f["tcp"]) & {k for k in spec["tcp"] if k != "cc"}, f["tcp"]
        assert "min_rto" not in f["tcp"]
