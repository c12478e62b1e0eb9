"""Issue 15 item 2: `--set PATH=VALUE` on `ecnsim run` and `report`, and [key=value] selectors."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ecnsim.scenario.paths import Select, parse_assignment, parse_path, set_path
from ecnsim.sweep import Sweep

Cli = Callable[..., subprocess.CompletedProcess[str]]

TOML = """
name = "groups"
simulation = { duration = "1s", seed = 1 }
tcp = { cc = "newreno" }

nodes = [
  { name = "s0", kind = "host" }, { name = "s1", kind = "host" }, { name = "s2", kind = "host" },
  { name = "d", kind = "host" }, { name = "r", kind = "router" },
]
links = [
  { a = "s0", b = "r", rate = "100Mbps", delay = "1ms" },
  { a = "s1", b = "r", rate = "100Mbps", delay = "1ms" },
  { a = "s2", b = "r", rate = "100Mbps", delay = "1ms" },
  { name = "bottleneck", a = "r", b = "d", rate = "10Mbps", delay = "10ms", queue = RED },
]
flows = [
  { name = "fragile0", src = "s0", dst = "d" },
  { name = "fragile1", src = "s1", dst = "d" },
  { name = "robust0", src = "s2", dst = "d" },
]
"""


TOML = TOML.replace("RED", '{ type = "red", min_th = 5, max_th = 15, max_p = 0.1 }')


def _data() -> dict[str, Any]:
    return {
        "links": [{"a": "x", "b": "r"}, {"name": "bottleneck", "a": "r", "b": "y"}],
        "flows": [{"name": "fragile0"}, {"name": "fragile1"}, {"name": "robust0"}, {}],
        "apps": [{"name": "web", "group": "mice"}],
    }


# ---------------------------------------------------------------------------
# Paths with selectors
# ---------------------------------------------------------------------------


def test_selectors_parse() -> None:
    assert parse_path("links[name=bottleneck].queue.max_p") == (
        "links",
        Select("name", "bottleneck"),
        "queue",
        "max_p",
    )
    with pytest.raises(ValueError, match=r"expected \[N\], \[\*\] or \[key=value\]"):
        parse_path("links[name=].rate")


@pytest.mark.parametrize(
    ("path", "changed"),
    [
        ("links[name=bottleneck].rate", [("links", 1)]),
        ("flows[group=fragile].tcp.cc", [("flows", 0), ("flows", 1)]),
        ("flows[name=robust0].tcp.cc", [("flows", 2)]),
        # An unnamed flow is flow<i>, as the results tables name it.
        ("flows[name=flow3].tcp.cc", [("flows", 3)]),
        ("apps[group=mice].start", [("apps", 0)]),
        ("links[b=r].rate", [("links", 0)]),
    ],
)
def test_a_selector_sets_every_element_it_matches(
    path: str, changed: list[tuple[str, int]]
) -> None:
    data = _data()
    set_path(data, path, "X")
    leaf = path.rsplit(".", 1)[1]
    for name in ("links", "flows", "apps"):
        for i, element in enumerate(data[name]):
            got = element.get(leaf) if leaf != "cc" else element.get("tcp", {}).get("cc")
            assert (got == "X") == ((name, i) in changed), (name, i, element)


def test_a_selector_matching_nothing_names_what_exists() -> None:
    with pytest.raises(
        ValueError,
        match=r"links\[name=bottlenek\] matches nothing; links has name "
        r"bottleneck, link0",
    ):
        set_path(_data(), "links[name=bottlenek].rate", "1Mbps")
    with pytest.raises(ValueError, match=r"flows has group flow, fragile, robust"):
        set_path(_data(), "flows[group=mice].tcp.cc", "reno")


def test_a_path_through_a_missing_table_beside_its_variants_names_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data: dict[str, Any] = {"links": [{"name": "b", "queue_ab": {"type": "red"}}]}
    # Not redirected: which direction is meant is the user's choice.
    with pytest.raises(
        ValueError,
        match=r"^links\[0\] has `queue_ab` but no `queue`, so this would create a new `queue` "
        r"table holding only `max_p`; did you mean links\[name=b\]\.queue_ab\.max_p\?",
    ):
        set_path(data, "links[name=b].queue.max_p", 0.2)
    data["links"][0]["queue_ba"] = {"type": "codel"}
    with pytest.raises(ValueError, match=r"links\[0\]\.queue_ab\.max_p or links\[0\]\.queue_ba"):
        set_path(data, "links[0].queue.max_p", 0.2)
    assert "queue" not in data["links"][0]
    # A whole new table beside them is a deliberate choice (`queue` for both directions),
    # and a table nothing is beside is still created on the way.
    set_path(data, "links[0].queue", {"type": "pie"})
    set_path(data, "links[0].queue.target", "20ms")
    assert data["links"][0]["queue"] == {"type": "pie", "target": "20ms"}
    set_path(data, "tcp.cc", "reno")
    assert data["tcp"] == {"cc": "reno"}
    # The command line says it, where the core would only see a queue without a type.
    from ecnsim.cli import main

    hetero = Path(__file__).parent.parent / "examples" / "hetero_rtt.toml"
    assert main(["run", str(hetero), "-q", "--set", "links[name=bottleneck].queue.max_p=0.2"]) == 2
    err = capsys.readouterr().err
    assert "error: --set links[name=bottleneck].queue.max_p: links[0] has `queue_ab`" in err
    assert "did you mean links[name=bottleneck].queue_ab.max_p?" in err


def test_assignment_splits_outside_brackets() -> None:
    assert parse_assignment("links[name=b].queue.max_p=0.2") == ("links[name=b].queue.max_p", 0.2)
    assert parse_assignment("tcp.cc=newreno") == ("tcp.cc", "newreno")
    assert parse_assignment('name="x"') == ("name", "x")
    with pytest.raises(ValueError, match="write PATH=VALUE"):
        parse_assignment("tcp.cc")


def test_sweeps_take_selectors_too(tmp_path: Path) -> None:
    base = tmp_path / "g.toml"
    base.write_text(TOML, encoding="utf-8")
    sweep = Sweep(
        base,
        set={"flows[group=fragile].tcp.cc": "reno"},
        grid={"links[name=bottleneck].queue.max_p": [0.1, 0.2]},
    )
    point = sweep.scenario(sweep.points()[1])
    assert point["links"][3]["queue"]["max_p"] == 0.2
    assert [f.get("tcp", {}).get("cc") for f in point["flows"]] == ["reno", "reno", None]
    assert len(sweep.plan().runs) == 2


# ---------------------------------------------------------------------------
# ecnsim run --set
# ---------------------------------------------------------------------------


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "g.toml"
    path.write_text(TOML, encoding="utf-8")
    return path


def test_run_set_changes_the_scenario(cli: Cli, scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli(
        "run",
        scenario,
        "-q",
        "--out",
        out,
        "--set",
        "links[name=bottleneck].queue.max_p=0.2",
        "--set",
        "flows[group=fragile].tcp.cc=reno",
        "--set",
        "simulation.duration=500ms",
    )
    assert r.returncode == 0, r.stderr
    spec = json.loads((out / "meta.json").read_text())["resolved_spec"]
    assert spec["links"][3]["queue_ab"]["max_p"] == 0.2  # resolved: one queue per direction
    assert [f["tcp"]["cc"] for f in spec["flows"]] == ["reno", "reno", "newreno"]
    assert spec["simulation"]["duration"] == "500ms"


@pytest.mark.parametrize(
    ("setting", "fragment"),
    [
        (
            "links[name=core].rate=1Mbps",
            "error: --set links[name=core].rate: "
            "links[name=core] matches nothing; links has name bottleneck, link0, link1, link2",
        ),
        ("links[9].rate=1Mbps", "error: --set links[9].rate: links[9] does not exist: links has 4"),
        # Validated like the file: the core names the field it rejects.
        ("links[name=bottleneck].queue.max_p=2", "error: links[3].queue.max_p: "),
        ("tcp.cc=vegas", "error: tcp.cc: "),
        ("tcp.cc", "error: --set: 'tcp.cc': write PATH=VALUE"),
        ("links..rate=1", "error: --set: links..rate: not a parameter path"),
    ],
)
def test_run_set_errors_name_the_path(
    cli: Cli, scenario: Path, setting: str, fragment: str
) -> None:
    r = cli("run", scenario, "-q", "--set", setting)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_report_runs_a_scenario_with_set(cli: Cli, scenario: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "res"
    r = cli(
        "report",
        scenario,
        "-q",
        "--out",
        out,
        "--set",
        "simulation.duration=300ms",
        "-o",
        tmp_path / "r.html",
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    spec = json.loads((out / "meta.json").read_text())["resolved_spec"]
    assert spec["simulation"]["duration"] == "300ms"
    assert (tmp_path / "r.html").is_file()
