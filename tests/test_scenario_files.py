"""Issue 15 item 3 (part): any scenario written back as TOML, and JSON scenario files on the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecnsim import Scenario, Simulation, _core

from .conftest import EXAMPLES, run_cli, small_scenario


def _units(sc: Scenario) -> dict:
    return json.loads(_core.json_with_units(sc.to_json()))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_to_toml_round_trips_every_example(path: Path) -> None:
    sc = Scenario.from_toml(path)
    back = Scenario.from_toml_str(sc.to_toml())
    assert _units(back) == _units(sc)


def test_to_toml_writes_units_for_builder_numbers() -> None:
    sc = (
        Scenario(duration=2.5, seed=3, sample_interval=0.1)
        .host("a", "b")
        .link("a", "b", rate=1e7, delay=0.02)
        .flow("a", "b", start=0.5)
    )
    text = sc.to_toml()
    assert 'delay = "20ms"' in text
    assert 'rate = "10Mbps"' in text
    assert 'duration = "2500ms"' in text or 'duration = "2.5s"' in text
    a = Simulation(sc).run()
    b = Simulation.from_toml_str(text).run()
    assert a.digest == b.digest


def test_to_toml_of_a_generated_scenario_runs_identically() -> None:
    sc = small_scenario()
    assert Simulation.from_toml_str(sc.to_toml()).run().digest == Simulation(sc).run().digest


def test_cli_runs_json_scenario_files(tmp_path: Path) -> None:
    data = _units(small_scenario(duration="500ms"))
    good = tmp_path / "s.json"
    good.write_text(json.dumps(data, indent=1), encoding="utf-8")
    proc = run_cli("run", good, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["finished"] is True
    # A JSON scenario file is a scenario file: times and rates need units.
    data["links"][0]["delay"] = 0.01
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, indent=1), encoding="utf-8")
    proc = run_cli("run", bad)
    assert proc.returncode == 2
    assert "links[0].delay: a time needs a unit" in proc.stderr
