"""Accurate ECN (RFC 9768) through the Python API: the scenario keys, their errors, and that
classic feedback (the default) is what it was (docs/models/accecn.md)."""

from __future__ import annotations

import json

import pytest

import ecnsim
from ecnsim import Simulation
from ecnsim.scenario.topology import dumbbell


def _dctcp(tcp: dict) -> ecnsim.Scenario:
    """Two DCTCP flows through a step-marking 100 Mb/s bottleneck (K = 20 packets) for 1 s."""
    sc = dumbbell(
        2,
        bottleneck_rate="100Mbps",
        bottleneck_delay="1ms",
        access_rate="1Gbps",
        access_delay="100us",
        queue={"type": "threshold", "limit_packets": 300, "k": 20},
        duration="1s",
        seed=1,
    )
    data = sc.to_dict()
    data["tcp"] = {"rcv_window": "16MiB", "cc": "dctcp", "ecn": "request", **tcp}
    return ecnsim.Scenario.from_dict(data)


def test_accecn_runs_and_the_resolved_spec_shows_its_keys_for_accecn_flows_only() -> None:
    results = Simulation(_dctcp({"ecn_feedback": "accecn"})).run()
    tcp = json.loads(results.meta["resolved_spec"])["flows"][0]["tcp"]
    assert (tcp["ecn_feedback"], tcp["accecn_option"]) == ("accecn", True)
    flows = results.flows
    assert (flows["marks"] > 0).all()
    classic = Simulation(_dctcp({})).run()
    tcp = json.loads(classic.meta["resolved_spec"])["flows"][0]["tcp"]
    assert "ecn_feedback" not in tcp
    assert "accecn_option" not in tcp


def test_classic_feedback_named_or_not_gives_the_same_digest() -> None:
    named = Simulation(_dctcp({"ecn_feedback": "classic"})).run()
    default = Simulation(_dctcp({})).run()
    assert named.digest == default.digest


@pytest.mark.parametrize(
    ("tcp", "message"),
    [
        (
            {"ecn_feedback": "accurate"},
            "unknown variant `accurate`, expected `classic` or `accecn`",
        ),
        ({"accecn_option": "yes"}, "expected a boolean"),
    ],
)
def test_bad_accecn_keys_are_refused_by_name(tcp: dict, message: str) -> None:
    key = next(iter(tcp))
    with pytest.raises(ecnsim.SpecError, match=rf"tcp\.{key}") as err:
        Simulation(_dctcp(tcp))
    assert message in str(err.value)


def test_the_tcp_builder_takes_the_accecn_keys() -> None:
    assert ecnsim.tcp(ecn_feedback="accecn", accecn_option=False) == {
        "ecn_feedback": "accecn",
        "accecn_option": False,
    }
