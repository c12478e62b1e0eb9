"""A property-based fuzzer over the scenario schema (issue 17 item 6).

Every input either runs (its clock advancing, packets conserved) or is
refused with an error that names a field; never a panic, a hang, an abort or
a Python exception of another kind. Inputs are a small valid scenario (or
one made by a ``[topology]`` template and ``[[flow_groups]]``) with
hostile values put at random places (integers beyond 64 bits, NaN, huge and
tiny times, arrays for tables, control characters, numpy scalars, deep
nesting), plus a fixed corpus of inputs that once failed.

The CI profile tries a few hundred inputs in seconds; the long profile
(``ECNSIM_FUZZ=long pytest -m fuzz tests/test_fuzz.py -s``) tries thousands
and prints the counts recorded in ``docs/validation.md``.
"""

from __future__ import annotations

import copy
import math
import os
import time
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecnsim import EcnsimError, Simulation

#: Wall-clock budget of one input's run; a run still advancing then is counted, not failed.
BUDGET_S = 2.0

BASE: dict[str, Any] = {
    "name": "fuzz",
    "simulation": {"duration": "300ms", "seed": 3, "sample_interval": "50ms", "warmup": "10ms"},
    "tcp": {"mss": 1000, "ecn": "request"},
    "nodes": [
        {"name": "h1", "kind": "host"},
        {"name": "r1", "kind": "router"},
        {"name": "h2", "kind": "host"},
    ],
    "links": [
        {"a": "h1", "b": "r1", "rate": "100Mbps", "delay": "1ms"},
        {
            "a": "r1",
            "b": "h2",
            "rate": "10Mbps",
            "delay": "5ms",
            "queue": {"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 50},
        },
    ],
    "flows": [
        {
            "src": "h1",
            "dst": "h2",
            "start_jitter": "10ms",
            "app": {"type": "bulk", "bytes": 200000},
            "tcp": {"cc": "newreno", "initial_window": 4},
        }
    ],
    "apps": [
        {
            "clients": ["h1"],
            "servers": ["h2"],
            "model": {
                "type": "onoff",
                "rate": "1Mbps",
                "on": {"type": "exponential", "mean": 0.01},
                "off": {"type": "pareto", "shape": 1.5, "scale": 0.01},
            },
        },
        {
            "clients": ["h1"],
            "servers": ["h2"],
            "model": {"type": "crr", "think_time": {"type": "uniform", "min": 0, "max": 0.01}},
        },
        {
            "clients": ["h1"],
            "servers": ["h2"],
            "model": {"type": "websessions", "session_rate": 5},
        },
    ],
}

#: A scenario made by templates: a ``[topology]`` and ``[[flow_groups]]`` (with a
#: written-out node, link and flow after what they make).
TEMPLATE_BASE: dict[str, Any] = {
    "name": "fuzz-templates",
    "simulation": {"duration": "300ms", "seed": 3},
    "topology": {
        "type": "dumbbell",
        "senders": 3,
        "receivers": 2,
        "bottleneck_rate": "10Mbps",
        "bottleneck_delay": "5ms",
        "access_rate": "100Mbps",
        "access_delay": "1ms",
        "sender_delays": ["1ms", "2ms", "3ms"],
        "queue": {"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 50},
    },
    "nodes": [{"name": "x", "kind": "host"}],
    "links": [{"a": "x", "b": "r1", "rate": "10Mbps", "delay": "1ms"}],
    "flow_groups": [
        {
            "name": "a",
            "count": 2,
            "src": "s{i}",
            "dst": "c{i}",
            "start_spacing": "2ms",
            "start_jitter": "10ms",
            "app": {"type": "bulk", "bytes": 100000},
            "tcp": {"cc": "newreno"},
        },
        {"name": "b", "group": "late", "count": 1, "first": 2, "src": "s{i}", "dst": "c1"},
    ],
    "flows": [{"src": "x", "dst": "c0", "start": "5ms"}],
}


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _set(data: Any, path: list[Any], value: Any) -> None:
    for p in path[:-1]:
        data = data[p]
    data[path[-1]] = value


def _with(changes: dict[str, Any]) -> dict[str, Any]:
    """BASE with dotted-path changes (``"apps.0.model.on"``); None deletes."""
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        path: list[Any] = [int(p) if p.isdigit() else p for p in dotted.split(".")]
        if value is None:
            parent = data
            for p in path[:-1]:
                parent = parent[p]
            del parent[path[-1]]
        else:
            _set(data, path, value)
    return data


#: Inputs that hung, aborted, wrapped time or were accepted as nonsense before issue 17.
CORPUS: list[dict[str, Any]] = [
    _with({"apps.0.model.on": {"type": "constant", "value": 0},
           "apps.0.model.off": {"type": "constant", "value": 0}}),
    _with({"apps.0.model.on": {"type": "constant", "value": 1e-300},
           "apps.0.model.off": {"type": "constant", "value": 1e-300}}),
    _with({"apps.0.model.on": {"type": "exponential", "mean": 1e-12}}),
    _with({"apps.0.model.rate": "10000Gbps"}),
    _with({"apps.0.model.off": {"type": "constant", "value": 1e12}}),
    _with({"apps.1.model.think_time": {"type": "constant", "value": 1e300}}),
    _with({"apps.1.model.think_time": {"type": "pareto", "shape": 0.01, "scale": 0.1}}),
    _with({"apps.0.model.off": {"type": "pareto", "shape": 0.01, "scale": 0.1}}),
    _with({"apps.2.model.rcv_window": {"type": "constant", "value": 0}}),
    _with({"apps.2.model.rcv_window": {"type": "constant", "value": 1000}}),
    _with({"apps.2.model.session_rate": 1e7, "simulation.duration": "10s"}),
    _with({"simulation": ["3s", "1s", 7]}),
    _with({"tcp": ["newreno", 1000]}),
    _with({"tcp": []}),
    _with({"links.1.queue": ["droptail", 50]}),
    _with({"simulation.seed": 2**64}),
    _with({"links.1.b": 2**63}),
    _with({"name": _deep(300)}),
    _with({"links.1": "1e-30Gbps"}),
    _with({"nodes.0.name": "h\u200b1"}),
    _with({"nodes.0.name": "h\x1b[31m1"}),
    _with({"nodes.0.name": "h\n1"}),
    _with({"simulation.sample_interval": "1ns", "simulation.duration": "100s"}),
    _with({"links.0.rate": np.int64(10**8), "simulation.seed": np.uint64(5)}),
    _with({"flows.0.tcp.delayed_ack": np.bool_(True)}),
    # Templates.
    {**TEMPLATE_BASE, "topology": {**TEMPLATE_BASE["topology"], "senders": 10**30}},
    {**TEMPLATE_BASE, "topology": {**TEMPLATE_BASE["topology"], "senders": np.int64(3)}},
    {**TEMPLATE_BASE, "topology": {**TEMPLATE_BASE["topology"], "type": "star"}},
    {**TEMPLATE_BASE, "topology": {"type": "hetero_rtt"}},
    {**TEMPLATE_BASE, "topology": ["dumbbell", 3]},
    {**TEMPLATE_BASE, "flow_groups": [{**TEMPLATE_BASE["flow_groups"][0], "src": "s{"}]},
    {**TEMPLATE_BASE, "flow_groups": [{**TEMPLATE_BASE["flow_groups"][0], "count": 10**6}]},
    {**TEMPLATE_BASE, "flow_groups": [{**TEMPLATE_BASE["flow_groups"][0], "first": -1}]},
]  # fmt: skip


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


PATHS = _paths(BASE)
TEMPLATE_PATHS = _paths(TEMPLATE_BASE)

hostile = st.one_of(
    st.sampled_from([0, -1, 2**63, 2**64, -(2**63) - 1, 10**30, True, None, "", "x"]),
    st.sampled_from([1e-300, 1e300, 1e12, -0.0, 1e-12, math.inf, -math.inf, math.nan]),
    st.sampled_from(["10000Gbps", "1e-30Gbps", "1e40s", "-5ms", "0ns", "1e-9s", "64KiB"]),
    st.sampled_from(["host", "router", "red", "droptail", "codel", "onoff", "pareto"]),
    st.sampled_from(["s{i}", "{i}{i}", "s{", "}", "dumbbell", "hetero_rtt", "parking_lot"]),
    st.text(max_size=6),
    st.integers(),
    st.floats(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(
        st.sampled_from(["type", "value", "mean", "colour"]), st.integers(), max_size=2
    ),
    st.builds(_deep, st.integers(0, 300)),
    st.sampled_from([np.int64(7), np.float32(0.5), np.bool_(False), np.uint64(2**63)]),
    st.sampled_from(
        [
            {"type": "constant", "value": 0},
            {"type": "pareto", "shape": 0.01, "scale": 0.1},
            {"type": "exponential", "mean": 1e-12},
            {"type": "droptail", "limit_packets": 1},
            {"type": "codel"},
            {"type": "discrete", "values": [0, 1e6], "weights": [1, 1]},
        ]
    ),
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    templates = draw(st.booleans())
    data = copy.deepcopy(TEMPLATE_BASE if templates else BASE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(TEMPLATE_PATHS if templates else PATHS))
        try:
            if draw(st.booleans()) or len(path) < 2:
                _set(data, list(path), draw(hostile))
            else:
                parent = data
                for p in path[:-1]:
                    parent = parent[p]
                del parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced the way there
    return data


def exercise(data: Any) -> str:
    """Build and run ``data``: ``"ran"``, ``"stopped after the budget"`` or ``"refused"``.

    Raises AssertionError for an error without a field, a Python exception
    of another kind, a clock that does not advance, or broken conservation.
    """
    try:
        sim = Simulation(data, max_memory="1GB")
    except EcnsimError as e:
        _assert_named(e)
        return "refused"
    started = time.monotonic()
    while not sim.is_finished:
        before = sim.now_ns
        try:
            sim.run_until(sim.now + 0.001)
        except EcnsimError as e:
            _assert_named(e)
            return "stopped with an error"
        assert sim.now_ns > before, f"the clock did not advance at {before} ns"
        if time.monotonic() - started > BUDGET_S:
            return "stopped after the budget"
    c = sim.conservation()
    assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"], c
    return "ran"


def _assert_named(e: EcnsimError) -> None:
    path = getattr(e, "path", "")
    assert path, f"no path: {e}"
    assert str(e).startswith(f"{path}: "), e
    if path == "<root>":
        assert "missing field" in str(e), f"<root> error that could name a field: {e}"
    for rust in ("struct ", "internally tagged", "untagged enum", "Spec`", "i64", "u64"):
        assert rust not in str(e), f"names a Rust type: {e}"


@pytest.mark.parametrize("base", [BASE, TEMPLATE_BASE], ids=["plain", "templates"])
def test_the_bases_run(base: dict[str, Any]) -> None:
    assert exercise(copy.deepcopy(base)) == "ran"


@pytest.mark.parametrize("data", CORPUS, ids=range(len(CORPUS)))
def test_corpus(data: dict[str, Any]) -> None:
    exercise(data)


def _fuzz(examples: int) -> Counter[str]:
    counts: Counter[str] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(doc=documents())
    def one(doc: dict[str, Any]) -> None:
        counts[exercise(doc)] += 1

    one()
    return counts


def test_fuzz_ci_profile() -> None:
    counts = _fuzz(int(os.environ.get("ECNSIM_FUZZ_EXAMPLES", "120")))
    print(f"fuzz: {sum(counts.values())} inputs: {dict(counts)}")
    assert counts["ran"] + counts["stopped after the budget"] > 0
    assert counts["refused"] > 0


@pytest.mark.fuzz
def test_fuzz_long_profile() -> None:
    if os.environ.get("ECNSIM_FUZZ") != "long":
        pytest.skip("the long profile: ECNSIM_FUZZ=long pytest -m fuzz tests/test_fuzz.py -s")
    counts = _fuzz(int(os.environ.get("ECNSIM_FUZZ_EXAMPLES", "3000")))
    print(f"fuzz: {sum(counts.values())} inputs: {dict(counts)}")
