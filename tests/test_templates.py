"""Topology templates (``[topology]``), flow groups (``[[flow_groups]]``), the Python
builders on them, ``--set`` on expanded scenarios and ``ecnsim run --print-resolved``."""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from ecnsim import (
    Scenario,
    Simulation,
    SpecError,
    bulk,
    droptail,
    dumbbell,
    hetero_rtt,
    parking_lot,
    red,
)
from ecnsim.cli import main
from ecnsim.scenario.paths import PathError, set_paths

from .conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

EXAMPLES = ROOT / "examples"


def small_dumbbell(**kw: Any) -> Scenario:
    args: dict[str, Any] = {
        "bottleneck_rate": "10Mbps",
        "bottleneck_delay": "10ms",
        "access_rate": "100Mbps",
        "access_delay": "1ms",
        "duration": "1s",
        "queue": droptail(limit_packets=30),
        "seed": 1,
        **kw,
    }
    return dumbbell(3, **args)


# ---------------------------------------------------------------------------
# The builders are the templates
# ---------------------------------------------------------------------------


def test_dumbbell_builder_writes_the_template_and_the_core_expands_it() -> None:
    template = small_dumbbell(expand=False, start_spacing="0.1s")
    data = template.to_dict()
    assert data["topology"]["type"] == "dumbbell"
    assert data["topology"]["senders"] == 3
    assert data["flow_groups"] == [
        {
            "name": "flow",
            "count": 3,
            "src": "s{i}",
            "dst": "c{i}",
            "start_spacing": "0.1s",
            "app": {"type": "bulk"},
        }
    ]
    expanded = small_dumbbell(start_spacing="0.1s").to_dict()
    assert expanded == template.expanded().to_dict()
    assert "topology" not in expanded
    assert "flow_groups" not in expanded
    assert [n["name"] for n in expanded["nodes"]] == [
        "s0",
        "s1",
        "s2",
        "c0",
        "c1",
        "c2",
        "r1",
        "r2",
    ]
    assert [link["name"] for link in expanded["links"]] == [
        "bottleneck",
        *(f"s{i}" for i in range(3)),
        *(f"c{i}" for i in range(3)),
    ]
    assert [(f["name"], f["group"], f["start"]) for f in expanded["flows"]] == [
        ("flow0", "flow", "0ns"),
        ("flow1", "flow", "100ms"),
        ("flow2", "flow", "200ms"),
    ]
    # The template and its expansion run to bit-identical results.
    a = Simulation(template, seed=4).run()
    b = Simulation(template.expanded(), seed=4).run()
    assert a.digest == b.digest
    assert a.flows["group"].tolist() == ["flow"] * 3


def test_a_template_written_as_toml_reads_back_as_the_same_scenario(tmp_path: Path) -> None:
    sc = hetero_rtt(
        [2, 0, 3],
        duration="2s",
        access_rate="10Mbps",
        starts=("0s", "1s"),
        group_tcp={"robust": {"cc": "reno"}},
        queue=red(max_p=0.2),
        expand=False,
    )
    text = sc.to_toml()
    assert "[topology]" in text
    assert "[[flow_groups]]" in text
    again = Scenario.from_toml_str(text)
    assert again.expanded() == sc.expanded()
    flows = sc.expanded().to_dict()["flows"]
    assert [(f["name"], f["start"]) for f in flows] == [
        ("fragile0", "0ns"),
        ("fragile1", "1s"),
        ("robust0", "0ns"),
        ("robust1", "0ns"),
        ("robust2", "1s"),
    ]
    assert [f["tcp"].get("cc") for f in flows] == [None, None, "reno", "reno", "reno"]


def test_parking_lot_builder_runs_with_long_and_cross_groups() -> None:
    sc = parking_lot(
        2,
        senders=1,
        cross=1,
        duration="1s",
        bottleneck_rate=["10Mbps", "5Mbps"],
        bottleneck_delay="5ms",
        access_rate="100Mbps",
        access_delay="1ms",
        app=bulk(bytes="50KB"),
    )
    links = sc.to_dict()["links"]
    assert [(link["name"], link["rate"]) for link in links[:2]] == [
        ("bottleneck0", "10Mbps"),
        ("bottleneck1", "5Mbps"),
    ]
    res = Simulation(sc, seed=1).run()
    assert res.flows["flow"].tolist() == ["long0", "cross0", "cross1"]
    assert res.flows["group"].tolist() == ["long", "cross", "cross"]
    assert (res.flows["bytes_delivered"] == 50_000).all()


def test_flow_group_builder_parameters_match_the_core_schema() -> None:
    sc = small_dumbbell(expand=False).to_dict()
    sc["flow_groups"][0]["zzz_not_a_field"] = 1
    with pytest.raises(SpecError) as info:
        Simulation(sc)
    listed = re.search(r"expected (.*?)( at line|$)", str(info.value))
    assert listed, str(info.value)
    fields = set(re.findall(r"`([a-z_]+)`", listed.group(1)))
    params = set(inspect.signature(Scenario.flow_group).parameters) - {"self"}
    assert params == fields


# ---------------------------------------------------------------------------
# Errors name the template's field
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (
            {"topology": {"type": "star"}},
            "topology.type",
            "expected one of `dumbbell`, `hetero_rtt`",
        ),
        ({"senders": 0}, "topology.senders", "must be an integer >= 1 and <= 100000, got 0"),
        ({"sender_delays": ["1ms"]}, "topology.sender_delays", "one entry per sender (3), got 1"),
        ({"sender_delays": ["1ms", "2ms", "-3ms"]}, "topology.sender_delays[2]", "must be >= 0"),
        ({"count": -1}, "flow_groups[0].count", "must be an integer >= 0"),
        ({"dst": "d{i}"}, "flow_groups[0].dst", '"d{i}" gives "d0" for flow "flow0"'),
        ({"src": "s{n}"}, "flow_groups[0].src", '"{n}" in "s{n}" is not a placeholder'),
        ({"queue": {"type": "red", "max_p": 3}}, "topology.queue.max_p", "(in links[0], made by"),
    ],
)
def test_template_errors_name_the_field(change: dict[str, Any], path: str, message: str) -> None:
    data = small_dumbbell(expand=False).to_dict()
    for key, value in change.items():
        if key == "topology":
            data["topology"] = value
        elif key in data["topology"] or key.startswith("sender") or key == "queue":
            data["topology"][key] = value
        else:
            data["flow_groups"][0][key] = value
    with pytest.raises(SpecError) as info:
        Simulation(data)
    assert info.value.path == path, str(info.value)
    assert message in str(info.value)
    if "(in " not in str(info.value):
        # Found by the expansion itself: the Python builders meet it when they expand.
        with pytest.raises(SpecError, match=re.escape(path)):
            Scenario.from_dict(data).expanded()


# ---------------------------------------------------------------------------
# Paths and selectors on expanded scenarios
# ---------------------------------------------------------------------------


def test_set_paths_reach_the_template_and_what_it_expands_into() -> None:
    data = small_dumbbell(expand=False).to_dict()
    set_paths(
        data,
        [
            ("links[name=bottleneck].queue.limit_packets", 7),
            ("flows[group=flow].tcp.cc", "newreno"),
            ("topology.senders", 2),
            ("flow_groups[0].count", 2),
        ],
    )
    # Paths into the templates first, then the expansion, then the rest.
    assert "topology" not in data
    assert len(data["flows"]) == 2
    assert data["links"][0]["queue"]["limit_packets"] == 7
    assert {f["tcp"]["cc"] for f in data["flows"]} == {"newreno"}
    with pytest.raises(PathError) as info:
        set_paths(small_dumbbell(expand=False).to_dict(), [("flows[group=nope].tcp.cc", "reno")])
    assert info.value.path == "flows[group=nope].tcp.cc"
    assert "group flow" in str(info.value)


# ---------------------------------------------------------------------------
# ecnsim run --print-resolved
# ---------------------------------------------------------------------------


def _run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", ["dumbbell.toml", "hetero_rtt.toml", "parking_lot.toml"])
def test_print_resolved_reruns_to_the_same_result(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = EXAMPLES / name
    sets = ["--set", "simulation.duration=3s", "--set", "simulation.warmup=0s"]
    code, out, err = _run_main(capsys, "run", str(path), "--print-resolved", "--seed", "9", *sets)
    assert code == 0, err
    resolved = tomllib.loads(out)
    assert "topology" not in resolved
    assert "flow_groups" not in resolved
    assert resolved["simulation"]["seed"] == 9
    assert resolved["links"][0]["name"].startswith("bottleneck")
    printed = tmp_path / "resolved.toml"
    printed.write_text(out)
    direct = Simulation.from_toml(printed).run()
    code, out, err = _run_main(capsys, "run", str(path), "--quiet", "--seed", "9", *sets)
    assert code == 0, err
    assert f"digest {direct.digest:016x}" in out


def test_print_resolved_as_json_and_its_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(EXAMPLES / "dumbbell.toml")
    code, out, err = _run_main(capsys, "run", path, "--print-resolved", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert [f["group"] for f in data["flows"]] == ["flow"] * 4
    assert data == json.loads(
        json.dumps(tomllib.loads((EXAMPLES / "dumbbell_explicit.toml").read_text()))
    ) | {"flows": data["flows"], "links": data["links"], "nodes": data["nodes"], "tcp": data["tcp"]}
    code, _, err = _run_main(capsys, "run", path, "--format", "json")
    assert code == 2
    assert "--format" in err
    code, _, err = _run_main(capsys, "run", path, "--print-resolved", "--out", str(tmp_path))
    assert code == 2
    assert "runs nothing" in err
    bad = tmp_path / "bad.toml"
    bad.write_text((EXAMPLES / "dumbbell.toml").read_text().replace('dst = "c{i}"', 'dst = "x{i}"'))
    code, _, err = _run_main(capsys, "run", str(bad), "--print-resolved")
    assert code == 2
    assert err.startswith('error: flow_groups[0].dst: "x{i}" gives "x0"'), err


def test_a_flow_groups_stop_reaches_every_flow_and_stops_its_sender() -> None:
    sc = (
        Scenario(duration="4s", seed=1)
        .topology(
            "dumbbell",
            senders=2,
            bottleneck_rate="10Mbps",
            bottleneck_delay="10ms",
            access_rate="100Mbps",
            access_delay="1ms",
        )
        .flow_group("bulk", 2, "s{i}", "c{i}", stop="1s")
    )
    assert [f["stop"] for f in sc.expanded().to_dict()["flows"]] == ["1s", "1s"]
    delivered = Simulation(sc).run().flows["bytes_delivered"]
    # Written until 1 s only: at most the whole bottleneck for 1 s each (without the stop,
    # each flow delivers about 2.4 MB in the 4 s).
    assert (delivered > 0).all(), delivered
    assert (delivered < 10e6 / 8).all(), delivered
    group = {**sc.to_dict()["flow_groups"][0], "stop": "9s"}
    late = Scenario.from_dict({**sc.to_dict(), "flow_groups": [group]})
    with pytest.raises(SpecError, match=r"flow_groups\[0\]\.stop"):
        Simulation(late)
