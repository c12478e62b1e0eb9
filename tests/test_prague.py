"""TCP Prague through the Python API: the scenario keys, the error that names what Prague needs,
and the resolved spec (docs/models/prague.md)."""

from __future__ import annotations

import json

import pytest

import ecnsim
from ecnsim import Simulation
from ecnsim.scenario.spec import tcp as tcp_params
from ecnsim.scenario.topology import dumbbell


def _scenario(tcp: dict) -> ecnsim.Scenario:
    """Two flows through a DualPI2 20 Mb/s bottleneck for 2 s."""
    sc = dumbbell(
        2,
        bottleneck_rate="20Mbps",
        bottleneck_delay="5ms",
        access_rate="1Gbps",
        access_delay="100us",
        queue={"type": "dualpi2"},
        duration="2s",
        seed=1,
    )
    data = sc.to_dict()
    data["tcp"] = {"rcv_window": "4MiB", **tcp}
    return ecnsim.Scenario.from_dict(data)


PRAGUE = tcp_params(cc="prague", ecn="request", ecn_feedback="accecn", ect_codepoint="ect1")


def test_prague_runs_marks_ect1_only_and_shows_its_keys_in_the_resolved_spec() -> None:
    results = Simulation(_scenario({**PRAGUE, "prague_rtt_target": "10ms"})).run()
    tcp = json.loads(results.meta["resolved_spec"])["flows"][0]["tcp"]
    assert tcp["cc"] == "prague"
    assert tcp["prague_rtt_transition"] == 500
    assert "prague_rtt_target" in tcp
    queues = results.queues
    assert int(queues["marks_of_ect1"][0]) > 0
    assert int(queues["marks_of_ect0"][0]) == 0
    # Other algorithms' resolved specs do not show Prague's keys.
    cubic = Simulation(_scenario({"cc": "cubic", "ecn": "request"})).run()
    assert "prague_rtt_target" not in json.loads(cubic.meta["resolved_spec"])["flows"][0]["tcp"]
    # The Classic-ECN-bottleneck detection is off by default and then not shown (every existing
    # resolved spec unchanged); turned on, it is.
    assert "prague_ecn_fallback" not in tcp


def test_prague_ecn_fallback_is_shown_when_on_and_changes_nothing_at_dualpi2() -> None:
    base = Simulation(_scenario(PRAGUE)).run()
    on = Simulation(_scenario(tcp_params(**PRAGUE, prague_ecn_fallback="fallback"))).run()
    resolved = json.loads(on.meta["resolved_spec"])["flows"][0]["tcp"]
    assert resolved["prague_ecn_fallback"] == "fallback"
    # Through DualPI2 no Classic bottleneck is detected: the flows are the same as without it.
    assert list(on.flows["bytes_delivered"]) == list(base.flows["bytes_delivered"])


def test_the_classic_ecn_score_is_a_flows_column_of_prague_flows_only() -> None:
    """``flows.prague_classic_ecn``: the Prague sender's Classic-ECN-bottleneck score at the end
    (0 to 17; 0 while the detection is off), NaN for a flow that runs anything else."""
    import math

    def run(fallback: str | None) -> list[float]:
        data = _scenario({"cc": "cubic", "ecn": "request"}).to_dict()
        prague = dict(PRAGUE) if fallback is None else {**PRAGUE, "prague_ecn_fallback": fallback}
        data["flows"][1]["tcp"] = prague
        flows = Simulation(ecnsim.Scenario.from_dict(data)).run().flows
        assert list(flows["cc"]) == ["cubic", "prague"]
        return [float(x) for x in flows["prague_classic_ecn"]]

    cubic, prague = run("detection")
    assert math.isnan(cubic)
    assert 0.0 <= prague <= 17.0
    assert run(None)[1] == 0.0, "no detection: the score stays 0"


@pytest.mark.parametrize(
    ("tcp", "message"),
    [
        ({"cc": "prague"}, r'^tcp\.cc: cc = "prague" needs ecn = "request", ecn_feedback'),
        ({**PRAGUE, "ect_codepoint": "ect0"}, r'ect_codepoint = "ect0"$'),
        ({**PRAGUE, "prague_rtt_target": "1s"}, r"^tcp\.prague_rtt_target: must be >= 0 and"),
        (
            {**PRAGUE, "prague_ecn_fallback": "on"},
            r"^tcp\.prague_ecn_fallback: unknown variant `on`, "
            r"expected one of `none`, `fallback`, `detection`",
        ),
    ],
)
def test_bad_prague_settings_name_the_field(tcp: dict, message: str) -> None:
    with pytest.raises(ecnsim.SpecError, match=message):
        Simulation(_scenario(tcp))
