"""The scenario builder, and the core's errors as Python exceptions."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ecnsim
from ecnsim import (
    EcnsimError,
    Scenario,
    Simulation,
    SpecError,
    TopologyError,
    bulk,
    droptail,
    load_toml,
    queue,
    tcp,
)
from ecnsim import exceptions as exc_module
from ecnsim.scenario.spec import Scenario as SpecScenario

from .conftest import EXAMPLES, ROOT, small_scenario


def three_node() -> Scenario:
    """a - r - b, plus a direct a - b link: three links, one flow."""
    return (
        Scenario(duration="1s", seed=3)
        .host("a", "b")
        .router("r")
        .link("a", "r", rate="10Mbps", delay="1ms")
        .link("r", "b", rate=10_000_000, delay=0.001, queue=droptail(limit_packets=20))
        .link("a", "b", rate="1Mbps", delay="5ms")
        .flow("a", "b", app=bulk(bytes="100KB"), start="10ms", tcp=tcp(mss=1000))
    )


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------


def test_builder_produces_the_schema_dict() -> None:
    sc = three_node().tcp(cc="reno", initial_window=10)
    assert sc.to_dict() == {
        "simulation": {"duration": "1s", "seed": 3},
        "nodes": [
            {"name": "a", "kind": "host"},
            {"name": "b", "kind": "host"},
            {"name": "r", "kind": "router"},
        ],
        "links": [
            {"a": "a", "b": "r", "rate": "10Mbps", "delay": "1ms"},
            {
                "a": "r",
                "b": "b",
                "rate": 10_000_000,
                "delay": 0.001,
                "queue": {"type": "droptail", "limit_packets": 20},
            },
            {"a": "a", "b": "b", "rate": "1Mbps", "delay": "5ms"},
        ],
        "flows": [
            {
                "src": "a",
                "dst": "b",
                "start": "10ms",
                "app": {"type": "bulk", "bytes": "100KB"},
                "tcp": {"mss": 1000},
            }
        ],
        "tcp": {"cc": "reno", "initial_window": 10},
    }


def test_builder_output_is_accepted_by_the_core() -> None:
    sc = three_node()
    assert sc.check() is sc
    sim = Simulation(sc)
    assert sim.end_ns == 1_000_000_000
    assert sim.now_ns == 0
    spec = sim.spec
    assert [n["name"] for n in spec["nodes"]] == ["a", "b", "r"]
    assert len(spec["links"]) == 3


def test_to_json_round_trips_through_from_dict() -> None:
    sc = three_node()
    again = Scenario.from_dict(json.loads(sc.to_json()))
    assert again == sc
    assert again is not sc


def test_to_dict_is_a_copy() -> None:
    sc = three_node()
    d = sc.to_dict()
    d["links"].clear()
    assert len(sc.to_dict()["links"]) == 3


def test_generic_queue_builder() -> None:
    q = queue("red", min_th=5, max_th=15, wait=None)
    assert q == {"type": "red", "min_th": 5, "max_th": 15}
    assert queue("droptail", limit_packets=7) == droptail(limit_packets=7)
    d = small_scenario().to_dict()
    droptail_run = Simulation(d).run()
    d["links"][0]["queue"] = queue("red", min_th=2, max_th=6)
    red_run = Simulation(d).run()
    assert red_run.digest != droptail_run.digest
    assert red_run.spec is not None
    assert red_run.spec["links"][0]["queue_ab"]["type"] == "red"
    # The core checks the fields and names the queue.
    d["links"][1]["queue"] = queue("red", limit=5)
    with pytest.raises(SpecError, match=r"^links\[1\]\.queue.*: unknown field `limit`"):
        Simulation(d)


def test_component_builders_omit_unset_fields() -> None:
    assert droptail() == {"type": "droptail"}
    assert droptail(limit_bytes="64KB") == {"type": "droptail", "limit_bytes": "64KB"}
    assert bulk() == {"type": "bulk"}
    assert bulk(bytes=10) == {"type": "bulk", "bytes": 10}
    assert tcp() == {}
    assert tcp(delayed_ack=False, min_rto="200ms") == {"delayed_ack": False, "min_rto": "200ms"}


def test_tcp_fidelity_options_reach_the_core_and_the_resolved_spec() -> None:
    d = small_scenario().to_dict()
    d["simulation"]["profile"] = "ns2-2001"
    d["tcp"] = tcp(carry_rtt=True, limited_transmit=True, ecn_ece_growth="slow_start")
    run = Simulation(d).run()
    resolved = run.spec["flows"][0]["tcp"]
    # Booleans for carry_rtt are still accepted: True is "smoothed".
    assert resolved["carry_rtt"] == "smoothed"
    assert resolved["limited_transmit"] is True
    assert resolved["ecn_ece_growth"] == "slow_start"
    # The rest is ns2-2001's: ns-2's estimator, no handshake, whole-packet payload accounting.
    assert resolved["rto_estimator"] == "ns2"
    assert resolved["handshake"] is False
    assert resolved["headers_on_data"] is False
    assert resolved["mss"] == 1000
    with pytest.raises(SpecError, match=r"^tcp\.carry_rtt: unknown variant `min`"):
        Simulation({**d, "tcp": tcp(carry_rtt="min")})
    # Segmentation offload appears in the resolved spec only when on.
    assert "tso_segments" not in resolved
    on = Simulation({**d, "tcp": tcp(tso_segments=44)}).run().spec["flows"][0]["tcp"]
    assert on["tso_segments"] == 44


@pytest.mark.parametrize(
    "call",
    [
        lambda: tcp(msss=1460),
        lambda: Scenario(duration=1).tcp(msss=1460),
        lambda: droptail(limit=5),
        lambda: bulk(size=5),
        lambda: Scenario(duration=1).link("a", "b", rate=1, delay=0, qdisc=droptail()),
        lambda: Scenario(duration=1).flow("a", "b", begin=0),
        lambda: Scenario(duration=1, sead=1),
    ],
    ids=["tcp", "Scenario.tcp", "droptail", "bulk", "link", "flow", "Scenario"],
)
def test_unknown_keyword_names_the_field(call: Callable[[], Any]) -> None:
    with pytest.raises(
        TypeError, match=r"unexpected keyword argument '(msss|limit|size|qdisc|begin|sead)'"
    ):
        call()


def _core_fields(section_error: Callable[[dict[str, Any]], None]) -> set[str]:
    """The field names the core lists in its 'unknown field' message."""
    with pytest.raises(SpecError) as info:
        section_error({"zzz_not_a_field": 1})
    listed = re.search(
        r"unknown field `zzz_not_a_field`, expected (.*?)( at line|$)", str(info.value)
    )
    assert listed, str(info.value)
    return set(re.findall(r"`([a-z_]+)`", listed.group(1)))


def _params(fn: Callable[..., Any], skip: tuple[str, ...] = ()) -> set[str]:
    return {p for p in inspect.signature(fn).parameters if p not in ("self", *skip)}


def _with(path: str) -> Callable[[dict[str, Any]], None]:
    """Inject extra keys into the object at ``path`` of a valid scenario, then build it."""

    def build(extra: dict[str, Any]) -> None:
        d = three_node().to_dict()
        target: Any = d
        for part in path.split("."):
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        target.update(extra)
        Simulation(d)

    return build


@pytest.mark.parametrize(
    ("path", "builder", "skip"),
    [
        ("tcp", tcp, ()),
        ("nodes.0", Scenario.node, ()),
        ("links.0", Scenario.link, ()),
        ("flows.0", Scenario.flow, ()),
        # `name` is a top-level field that Scenario() takes along with the run settings.
        ("simulation", Scenario.__init__, ("name",)),
        ("links.1.queue", droptail, ()),
        ("flows.0.app", bulk, ()),
    ],
)
def test_builder_parameters_match_the_core_schema(
    path: str, builder: Callable[..., Any], skip: tuple[str, ...]
) -> None:
    # The core is the single validator; this only catches the Python builder
    # falling behind the schema in spec.rs.
    assert _params(builder, skip) == _core_fields(_with(path)) - {"type"}


# ---------------------------------------------------------------------------
# Errors: type, path, message
# ---------------------------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(d: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = d
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value

    return mutate


BAD_INPUT = [
    # (id, mutation, exception, path, message fragment)
    ("unknown-top-level-key", _set("colour", "red"), SpecError, "colour", "unknown field"),
    ("unknown-key-in-link", _set("links.0.speed", 5), SpecError, "links[0].speed", "unknown field"),
    (
        "unknown-key-in-flow-tcp",
        _set("flows.0.tcp.msss", 1),
        SpecError,
        "flows[0].tcp.msss",
        "unknown field",
    ),
    ("negative-rate", _set("links.2.rate", -5), SpecError, "links[2].rate", "must be > 0"),
    (
        "zero-duration",
        _set("simulation.duration", 0),
        SpecError,
        "simulation.duration",
        "must be > 0",
    ),
    ("bad-unit", _set("links.1.delay", "5 parsecs"), SpecError, "links[1].delay", "unknown unit"),
    ("wrong-type", _set("links.0.a", 7), SpecError, "links[0].a", "invalid type"),
    ("flow-to-missing-node", _set("flows.0.dst", "mars"), SpecError, "flows[0].dst", "mars"),
    (
        "unknown-queue-type",
        _set("links.0.queue", {"type": "fifo"}),
        SpecError,
        "links[0].queue",
        "fifo",
    ),
    ("unknown-cc", _set("tcp", {"cc": "vegas"}), SpecError, "tcp.cc", "vegas"),
    ("missing-duration", _set("simulation", {}), SpecError, "simulation", "duration"),
    ("self-link", _set("links.2.b", "a"), SpecError, "links[2]", "a"),
    # Issue 13 item 8: RED thresholds in bytes only with a byte average.
    (
        "red-byte-threshold-in-packet-measure",
        _set("links.0.queue", {"type": "red", "min_th_bytes": "5KB"}),
        SpecError,
        "links[0].queue.min_th_bytes",
        'needs measure = "bytes"',
    ),
    (
        "red-threshold-twice",
        _set(
            "links.0.queue",
            {"type": "red", "measure": "bytes", "max_th": 15, "max_th_bytes": "15KB"},
        ),
        SpecError,
        "links[0].queue.max_th_bytes",
        "cannot be combined with max_th",
    ),
    (
        "tso-segments-zero",
        _set("tcp", {"tso_segments": 0}),
        SpecError,
        "tcp.tso_segments",
        "must be >= 1 and <= 256, got 0",
    ),
    (
        "droptail-ns2-limit-of-one",
        _set("links.0.queue", {"type": "droptail", "limit_packets": 1, "limit_rule": "ns2"}),
        SpecError,
        "links[0].queue.limit_packets",
        "must be >= 2",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "exc_type", "path", "fragment"),
    [case[1:] for case in BAD_INPUT],
    ids=[case[0] for case in BAD_INPUT],
)
def test_bad_input_names_the_field(
    mutate: Callable[[dict[str, Any]], None], exc_type: type[Exception], path: str, fragment: str
) -> None:
    d = three_node().to_dict()
    mutate(d)
    with pytest.raises(exc_type) as info:
        Simulation(d)
    err = info.value
    assert isinstance(err, ValueError)
    assert isinstance(err, EcnsimError)
    assert err.path.startswith(path), (err.path, str(err))
    assert str(err).startswith(f"{err.path}: "), str(err)
    assert fragment in str(err)


def test_check_reports_the_same_error_as_building() -> None:
    d = three_node().to_dict()
    d["links"][2]["rate"] = -5
    with pytest.raises(SpecError, match=r"^links\[2\]\.rate: "):
        Scenario.from_dict(d).check()


def test_unreachable_destination_is_a_topology_error() -> None:
    sc = three_node().host("island").flow("a", "island")
    with pytest.raises(TopologyError) as info:
        Simulation(sc)
    assert isinstance(info.value, ValueError)
    assert info.value.path.startswith("flows[1]")
    assert "island" in str(info.value)


def test_toml_errors_name_the_field() -> None:
    text = (ROOT / "examples" / "single_flow.toml").read_text()
    bad = text.replace('rate = "10Mbps"', 'rate = "-10Mbps"')
    assert bad != text
    with pytest.raises(SpecError, match=r"^links\[1\]\.rate: must be > 0"):
        Simulation.from_toml(bad)
    with pytest.raises(SpecError, match=r"^flows\[0\]\.colour: unknown field"):
        Simulation.from_toml(text.replace('src = "a"', 'src = "a"\ncolour = 1'))
    with pytest.raises(SpecError) as info:
        Simulation.from_toml("simulation = { duration = ")
    # A syntax error names the key whose value it is in.
    assert info.value.path == "simulation"


def test_exception_hierarchy() -> None:
    for cls in (SpecError, TopologyError):
        assert issubclass(cls, EcnsimError)
        assert issubclass(cls, ValueError)
        assert cls.__module__ == "ecnsim.exceptions"
        assert cls.__doc__
    assert issubclass(EcnsimError, Exception)
    assert not issubclass(EcnsimError, ValueError)
    assert exc_module.SpecError is ecnsim.SpecError is ecnsim._core.SpecError


# ---------------------------------------------------------------------------
# TOML
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_load_toml_gives_the_same_run_as_the_toml_path(path: Path) -> None:
    sc = load_toml(path)
    assert isinstance(sc, SpecScenario)
    from_builder = Simulation(sc, seed=5)
    from_toml = Simulation.from_toml(path, seed=5)
    from_builder.run()
    from_toml.run()
    assert from_builder.digest() == from_toml.digest()


def test_from_toml_accepts_text_and_paths(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "single_flow.toml").read_text()
    (tmp_path / "s.toml").write_text(text)
    a = Scenario.from_toml(text)
    b = Scenario.from_toml(tmp_path / "s.toml")
    c = Scenario.from_toml(str(tmp_path / "s.toml"))
    d = Scenario.from_toml_str(text)
    assert a == b == c == d
    assert a.to_dict()["flows"][0]["name"] == "a-to-b"
    with pytest.raises(FileNotFoundError):
        Scenario.from_toml(str(tmp_path / "missing.toml"))


# ---------------------------------------------------------------------------
# Quantities cross the boundary unchanged and the core parses them exactly
# ---------------------------------------------------------------------------

UNITS_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


@given(n=st.integers(min_value=1, max_value=10**6), unit=st.sampled_from(sorted(UNITS_NS)))
def test_duration_string_with_unit(n: int, unit: str) -> None:
    sc = Scenario(duration=f"{n}{unit}").host("a", "b").link("a", "b", rate="1Mbps", delay=0)
    assert Simulation(sc).end_ns == n * UNITS_NS[unit]


@given(x=st.decimals(min_value="0.000000001", max_value="100000", places=9, allow_nan=False))
def test_duration_float_seconds(x: Decimal) -> None:
    seconds = float(x)
    sc = Scenario(duration=seconds).host("a", "b").link("a", "b", rate="1Mbps", delay=0)
    # The core reads the float's shortest decimal form, so 0.1 means exactly 0.1 s.
    expected = int((Decimal(repr(seconds)) * 10**9).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    assert Simulation(sc).end_ns == expected


def test_aqm_builders_are_thin_and_run() -> None:
    from ecnsim.scenario.spec import aecn, codel, fq_codel, fq_pie, pi, pie, red, rem, threshold

    assert red(min_th=5, max_th=15, ecn="rfc3168", w_q="auto") == {
        "type": "red",
        "min_th": 5,
        "max_th": 15,
        "w_q": "auto",
        "ecn": "rfc3168",
    }
    assert codel() == {"type": "codel"}
    assert fq_pie(ecn=True, overflow="ns3") == {"type": "fq_pie", "ecn": True, "overflow": "ns3"}
    assert pie(target="15ms", ecn=True) == {"type": "pie", "target": "15ms", "ecn": True}
    assert fq_codel(ce_threshold="1ms", ce_threshold_ect1=True) == {
        "type": "fq_codel",
        "ce_threshold": "1ms",
        "ce_threshold_ect1": True,
    }
    assert fq_pie(ce_threshold="1ms", ce_threshold_ect1=True, drop_early="linux") == {
        "type": "fq_pie",
        "drop_early": "linux",
        "ce_threshold": "1ms",
        "ce_threshold_ect1": True,
    }
    assert pie(drop_early="linux") == {"type": "pie", "drop_early": "linux"}
    queues = (
        red(),
        aecn(),
        threshold(k=10),
        threshold(k_sojourn="2ms"),
        pi(qref=20),
        rem(),
        codel(ecn=True),
        pie(),
        fq_codel(),
        fq_pie(),
        fq_pie(overflow="ns3", derandomize=False, quantum=1500),
        fq_pie(ecn=True, ce_threshold="1ms", ce_threshold_ect1=True, drop_early="linux"),
        pie(drop_early="linux", byte_mode=True, derandomize=True),
    )
    for q in queues:
        d = small_scenario().to_dict()
        d["links"][0]["queue"] = q
        run = Simulation(d).run()
        assert run.spec is not None
        assert run.spec["links"][0]["queue_ab"]["type"] == q["type"]
    # The resolved step marker records the sojourn threshold and not the profile's k.
    d = small_scenario().to_dict()
    d["links"][0]["queue"] = threshold(k_sojourn="2ms")
    resolved = Simulation(d).run().spec["links"][0]["queue_ab"]
    assert resolved["k_sojourn"] == "2ms"
    assert "k" not in resolved
    d = small_scenario().to_dict()
    d["links"][0]["queue"] = red(w_q=1.5)
    with pytest.raises(SpecError, match=r"^links\[0\]\.queue\.w_q: must be > 0 and <= 1, got 1.5"):
        Simulation(d)


def test_workload_builders_make_the_schema_tables_and_run() -> None:
    from ecnsim import Scenario, Simulation
    from ecnsim.scenario import workloads as w

    sc = (
        Scenario(duration="6s", seed=1)
        .host("c0", "c1", "s0")
        .router("r")
        .link("c0", "r", rate="10Mbps", delay="1ms")
        .link("c1", "r", rate="10Mbps", delay="1ms")
        .link("r", "s0", rate="10Mbps", delay="5ms")
        .app(
            w.crr(request="1KB", response="5KB", think_time=0),
            clients="c0",
            servers="s0",
            name="crr",
            group="tx",
        )
        .app(w.http(think_time=w.uniform(1, 2)), clients=["c1"], servers=["s0"], start="1s")
        .app(w.cbr("100kbps", packet_size=500), clients="c1", servers="s0", name="udp")
    )
    apps = sc.to_dict()["apps"]
    assert apps[0] == {
        "name": "crr",
        "group": "tx",
        "clients": ["c0"],
        "servers": ["s0"],
        "model": {
            "type": "crr",
            "request": "1KB",
            "response": "5KB",
            "think_time": {"type": "constant", "value": 0},
        },
    }
    assert apps[1]["model"]["think_time"] == {"type": "uniform", "min": 1, "max": 2}
    assert apps[1]["start"] == "1s"
    assert "apps=3" in repr(sc)
    records = Simulation(sc).run().table("records").to_pandas()
    assert (records["app"] == "crr").sum() > 10
    assert set(records["app"]) >= {"crr", "udp"}
    assert w.empirical(points=[(1, 0.0), (2, 1.0)])["points"] == [[1.0, 0.0], [2.0, 1.0]]
    with pytest.raises(ValueError, match="exactly one"):
        w.empirical()
    with pytest.raises(TypeError, match="distribution"):
        w.crr(think_time=True)


def test_a_runaway_nesting_is_an_error_naming_where_not_a_recursion_error() -> None:
    d = small_scenario().to_dict()
    deep: list[Any] = []
    d["links"][0]["delay"] = deep
    for _ in range(300):
        deep.append([])
        deep = deep[0]
    with pytest.raises(SpecError, match=r"^links\[0\]\.delay(\[0\])+: .*nested more than 64") as e:
        Simulation(d)
    assert e.value.path.startswith("links[0].delay[0]")
    # A value that contains itself gets the same error.
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    d["links"][0]["delay"] = cyclic
    with pytest.raises(SpecError, match="nested more than 64"):
        Simulation(d)
    # A few levels are fine for this check (the core then names what is wrong).
    d["links"][0]["delay"] = [[["20ms"]]]
    with pytest.raises(SpecError, match=r"^links\[0\]\.delay") as e:
        Simulation(d)
    assert "nested" not in str(e.value)


def test_cubic_timeout_follows_the_profile_and_refuses_unknown_rules() -> None:
    """`tcp.cubic_timeout` (issue 32 item 1): "flight_size" under `rfc`, "linux" under `linux`
    and `linux-2.4`, shown for CUBIC flows only; anything else is an error naming the field."""
    for profile, rule in [("rfc", "flight_size"), ("linux", "linux"), ("linux-2.4", "linux")]:
        d = small_scenario().to_dict()
        d["simulation"]["profile"] = profile
        d["tcp"] = tcp(cc="cubic")
        assert Simulation(d).run().spec["flows"][0]["tcp"]["cubic_timeout"] == rule, profile
    d = small_scenario().to_dict()
    d["tcp"] = tcp(cc="newreno")
    assert "cubic_timeout" not in Simulation(d).run().spec["flows"][0]["tcp"]
    d["tcp"] = tcp(cc="cubic", cubic_timeout="linux")
    assert Simulation(d).run().spec["flows"][0]["tcp"]["cubic_timeout"] == "linux"
    with pytest.raises(
        SpecError,
        match=r"^tcp\.cubic_timeout: unknown variant `ns3`, expected `flight_size` or `linux`",
    ):
        Simulation({**d, "tcp": tcp(cc="cubic", cubic_timeout="ns3")})


def test_slow_start_increase_and_cubic_initial_growth_follow_the_profile() -> None:
    """`tcp.slow_start_increase` and `tcp.cubic_initial_growth` (issue 32): "linux" under
    `linux-6.x` only (`linux` is frozen), shown only where they or the profile's default are not
    RFC 5681's / RFC 9438's, so every other resolved spec is unchanged; unknown values are errors
    naming the field."""
    for profile in ("rfc", "ns2-2001", "linux", "linux-2.4", "linux-6.x"):
        d = small_scenario().to_dict()
        d["simulation"]["profile"] = profile
        d["tcp"] = tcp(cc="cubic")
        got = Simulation(d).run().spec["flows"][0]["tcp"]
        if profile == "linux-6.x":
            assert got["slow_start_increase"] == "linux"
            assert got["cubic_initial_growth"] == "linux"
        else:
            assert "slow_start_increase" not in got, profile
            assert "cubic_initial_growth" not in got, profile
    d = small_scenario().to_dict()
    d["tcp"] = tcp(cc="reno", slow_start_increase="linux")
    got = Simulation(d).run().spec["flows"][0]["tcp"]
    assert got["slow_start_increase"] == "linux"
    assert "cubic_initial_growth" not in got
    d["tcp"] = tcp(cc="cubic", cubic_initial_growth="linux")
    assert Simulation(d).run().spec["flows"][0]["tcp"]["cubic_initial_growth"] == "linux"
    with pytest.raises(
        SpecError,
        match=r"^tcp\.slow_start_increase: unknown variant `abc`, expected `rfc5681` or `linux`",
    ):
        Simulation({**d, "tcp": tcp(slow_start_increase="abc")})
    with pytest.raises(
        SpecError,
        match=r"^tcp\.cubic_initial_growth: unknown variant `ns3`, expected `rfc9438` or `linux`",
    ):
        Simulation({**d, "tcp": tcp(cc="cubic", cubic_initial_growth="ns3")})


def test_sack_recovery_guard_is_an_option_every_profile_leaves_off() -> None:
    """`tcp.sack_recovery_guard` (RFC 6675 §5.1 after a timeout): "newreno_careful" in every
    profile (so no resolved spec shows it), "rfc6675" shown for SACK flows that set it."""
    for profile in ("rfc", "ns2-2001", "linux", "linux-2.4", "linux-6.x"):
        d = small_scenario().to_dict()
        d["simulation"]["profile"] = profile
        d["tcp"] = tcp(cc="sack")
        assert "sack_recovery_guard" not in Simulation(d).run().spec["flows"][0]["tcp"], profile
    d = small_scenario().to_dict()
    d["tcp"] = tcp(cc="sack", sack_recovery_guard="rfc6675")
    assert Simulation(d).run().spec["flows"][0]["tcp"]["sack_recovery_guard"] == "rfc6675"
    d["tcp"] = tcp(cc="newreno", sack_recovery_guard="rfc6675")
    assert "sack_recovery_guard" not in Simulation(d).run().spec["flows"][0]["tcp"]
    with pytest.raises(
        SpecError,
        match=r"^tcp\.sack_recovery_guard: unknown variant `x`, "
        r"expected `newreno_careful` or `rfc6675`",
    ):
        Simulation({**d, "tcp": tcp(cc="sack", sack_recovery_guard="x")})
