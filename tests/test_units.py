"""Issue 15 item 8: a scenario file's times and rates carry units; the Python builder's numbers
are read in the unit its docstrings name."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecnsim import Scenario, Simulation, SpecError
from ecnsim.sweep import Sweep, SweepSpecError

TOML = """
[simulation]
duration = "1s"

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "20ms"

[[flows]]
src = "a"
dst = "b"
"""


@pytest.mark.parametrize(
    ("old", "new", "path", "fragment"),
    [
        ('delay = "20ms"', "delay = 20", "links[0].delay", 'write delay = "20ms" or "20s"'),
        ('rate = "10Mbps"', "rate = 10", "links[0].rate", 'write rate = "10Mbps" or "10bps"'),
        ('duration = "1s"', "duration = 1", "simulation.duration", "a time needs a unit"),
    ],
)
def test_bare_numbers_in_toml_are_refused_naming_the_field(
    old: str, new: str, path: str, fragment: str
) -> None:
    text = TOML.replace(old, new)
    for load in (Scenario.from_toml_str, Simulation.from_toml_str):
        with pytest.raises(SpecError) as e:
            load(text)
        assert str(e.value).startswith(f"{path}: "), str(e.value)
        assert fragment in str(e.value)


def test_zero_needs_no_unit_and_the_builder_takes_base_units() -> None:
    Simulation.from_toml_str(TOML.replace('delay = "20ms"', "delay = 0"))
    # The Python builder: seconds and bit/s, as its docstrings say.
    sc = (
        Scenario(duration=1, seed=1)
        .host("a", "b")
        .link("a", "b", rate=10e6, delay=0.02)
        .flow("a", "b")
    )
    spec = Simulation(sc).spec
    assert spec["links"][0]["delay"] == "20ms"
    assert spec["links"][0]["rate"] == "10Mbps"


def test_sweep_files_need_units_python_sweeps_do_not(tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(TOML, encoding="utf-8")
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(
        'base = "base.toml"\n[grid]\n"links[0].delay" = ["10ms", 0.05]\n', encoding="utf-8"
    )
    with pytest.raises(SweepSpecError) as e:
        Sweep.from_toml(sweep_file).plan()
    msg = str(e.value)
    assert "point 1" in msg
    assert "links[0].delay" in msg
    assert "a time needs a unit" in msg
    # The same grid from Python: 0.05 is seconds.
    plan = Sweep(base, grid={"links[0].delay": ["10ms", 0.05]}).plan()
    assert len(plan.runs) == 2
