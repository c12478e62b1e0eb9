"""Readings of ambiguous sources as study parameters (issue 31): each settable with --set, each
changing exactly what it names, the defaults leaving the scenarios as they were."""

from __future__ import annotations

import pandas as pd
import pytest

from ecnsim import studies
from ecnsim.scenario.spec import Scenario
from ecnsim.studies import StudyError
from ecnsim.studies.rfc2884 import choose_red_setting


def _spec(study: studies.Study, params: object, point: dict) -> dict:
    sc = study.scenario(params, point)
    return sc.to_dict() if isinstance(sc, Scenario) else sc


# ---------------------------------------------------------------------------
# rfc2884: the calibration's bound on the time above max_th (RFC 2884 §4.4)
# ---------------------------------------------------------------------------


def _pilots(rows: list[tuple[float, float, float, float]]) -> pd.DataFrame:
    """(min_th, max_p, inside, above); max_th = 3 min_th, buffer = 6 min_th."""
    return pd.DataFrame(
        [
            {
                "min_th": m,
                "max_th": 3 * m,
                "buffer": int(6 * m),
                "max_p": p,
                "inside": i,
                "above": a,
            }
            for m, p, i, a in rows
        ]
    )


def test_calibration_skips_a_candidate_whose_average_sits_above_max_th() -> None:
    pilots = _pilots(
        [
            (5, 0.02, 0.91, 0.08), (5, 0.5, 0.95, 0.0),  # inside enough, above max_th 8 %
            (12, 0.02, 0.93, 0.005), (12, 0.5, 0.92, 0.0),  # within both bounds: chosen
            (30, 0.02, 0.99, 0.0), (30, 0.5, 0.97, 0.0),
        ]
    )  # fmt: skip
    # Without a bound (the default) the smallest min_th meeting the inside target wins.
    assert choose_red_setting(pilots, target=0.9)["min_th"] == 5.0
    c = choose_red_setting(pilots, target=0.9, max_above=0.01)
    assert (c["min_th"], c["met"]) == (12.0, True)
    assert c["worst_above"] == pytest.approx(0.005)
    assert list(c["candidates"]["worst_above"]) == pytest.approx([0.08, 0.005, 0.0])


def test_calibration_fallbacks_respect_the_bound_first() -> None:
    # Nobody reaches the inside target; only min_th 12 stays within the bound on above.
    pilots = _pilots([(5, 0.02, 0.85, 0.10), (12, 0.02, 0.70, 0.0), (30, 0.02, 0.80, 0.02)])
    c = choose_red_setting(pilots, target=0.9, max_above=0.01)
    assert (c["min_th"], c["met"]) == (12.0, False)
    # Nobody within the bound either: the smallest time above max_th.
    c = choose_red_setting(pilots, target=0.9, max_above=0.0)
    assert c["min_th"] == 12.0
    pilots.loc[1, "above"] = 0.05
    c = choose_red_setting(pilots, target=0.9, max_above=0.0)
    assert c["min_th"] == 30.0


def test_calibration_bound_needs_the_above_share() -> None:
    pilots = _pilots([(5, 0.02, 0.9, 0.0)]).drop(columns="above")
    with pytest.raises(ValueError, match="above"):
        choose_red_setting(pilots, target=0.9, max_above=0.05)


def test_rfc2884_max_above_is_a_checked_parameter() -> None:
    study = studies.get("rfc2884")
    p = studies.resolve_params(study, ["calibration_max_above=0.01"], quick=True)
    assert p.calibration_max_above == 0.01
    assert studies.get("rfc2884").Params().calibration_max_above == 0.01
    with pytest.raises(ValueError, match="calibration_max_above"):
        studies.resolve_params(study, ["calibration_max_above=2"]).check()


# ---------------------------------------------------------------------------
# rfc2415: the "50 ms" of the bottleneck, one way or the round trip
# ---------------------------------------------------------------------------


def test_rfc2415_bottleneck_delay_reading() -> None:
    study = studies.get("rfc2415")
    default = studies.resolve_params(study, [], quick=True)
    rtt = studies.resolve_params(study, ["bottleneck_delay_is=round_trip"], quick=True)
    point = study.grid(default)[0]
    assert study.grid(rtt)[0] == point
    assert default.bottleneck_delay_is == "one_way"
    assert default.bottleneck_one_way_ms() == 50.0
    assert rtt.bottleneck_one_way_ms() == 25.0
    one, half = _spec(study, default, point), _spec(study, rtt, point)
    assert one["links"][0]["delay"] == pytest.approx(0.05)
    assert half["links"][0]["delay"] == pytest.approx(0.025)
    # Only the bottleneck's delay differs.
    one["links"][0].pop("delay")
    half["links"][0].pop("delay")
    assert one == half
    with pytest.raises(StudyError, match="one_way"):
        studies.resolve_params(study, ["bottleneck_delay_is=both"])
    rows = {c.topic: c for c in study.choices(rtt)}
    assert rows["Bottleneck delay"].parameter == "bottleneck_delay_is"
    assert "round trip" in rows["Bottleneck delay"].choice


# ---------------------------------------------------------------------------
# ecnplus: the one-segment rule and the testbed's profile
# ---------------------------------------------------------------------------


def test_ecnplus_one_segment_rule_and_testbed_profile() -> None:
    study = studies.get("ecnplus")
    default = studies.resolve_params(study, [], quick=True)
    main = next(p for p in study.grid(default) if p["experiment"] == "main")
    spec = _spec(study, default, main)
    # The defaults leave the scenario as it was: no rule spelled out, the study's profile.
    assert "ecn_one_segment" not in spec["tcp"]
    assert spec["simulation"]["profile"] == "rfc"
    for rule in ("rfc3168", "ns2", "linux"):
        p = studies.resolve_params(study, [f"ecn_one_segment={rule}"], quick=True)
        assert _spec(study, p, main)["tcp"]["ecn_one_segment"] == rule
    with pytest.raises(StudyError, match="'linux'"):
        studies.resolve_params(study, ["ecn_one_segment=bsd"])
    p = studies.resolve_params(
        study, ["experiments=main,testbed", "testbed_profile=linux"], quick=True
    )
    by_exp = {pt["experiment"]: _spec(study, p, pt) for pt in study.grid(p)}
    assert by_exp["testbed"]["simulation"]["profile"] == "linux"
    assert by_exp["main"]["simulation"]["profile"] == "rfc"
    topics = {c.topic: c.parameter for c in study.choices(p)}
    assert topics["ECN-Echo at a one-segment window"] == "ecn_one_segment"
    assert "testbed_profile" in (topics["Profile (the endpoints' defaults)"] or "")


# ---------------------------------------------------------------------------
# ecnplus: the uncongested reference and both normalized throughputs
# ---------------------------------------------------------------------------


def test_ecnplus_uncongested_reference_runs_the_same_sessions_over_a_fast_droptail() -> None:
    study = studies.get("ecnplus")
    p = studies.resolve_params(study, [])
    assert "uncongested" in p.experiments
    refs = [pt for pt in study.grid(p) if pt["experiment"] == "uncongested"]
    assert [pt["load"] for pt in refs] == list(p.loads_percent)
    main = next(
        pt
        for pt in study.grid(p)
        if pt["experiment"] == "main" and pt["endpoint"] == "none" and pt["load"] == refs[0]["load"]
    )
    ref, cong = _spec(study, p, refs[0]), _spec(study, p, main)
    assert ref["links"][0]["rate"] == "1000Mbps"
    assert ref["links"][0]["queue"]["type"] == "droptail"
    # The same bytes per second: the load of the 1 Gb/s link is a tenth of the main one's.
    ref_load = ref["apps"][0]["model"]["offered_load"]["percent"]
    main_load = cong["apps"][0]["model"]["offered_load"]["percent"]
    assert ref_load * 1000.0 == pytest.approx(main_load * 100.0)
    assert ref["tcp"]["ecn"] == "off"
    # Everything else as in the main experiment's point without ECN.
    for key in ("nodes", "tcp", "simulation"):
        assert ref[key] == cong[key], key
    assert ref["links"][1:] == cong["links"][1:]
    # Not in --quick (whose main tables keep one row per AQM).
    assert "uncongested" not in study.quick(p).experiments


class _Aggregates:
    """What EcnplusStudy._uncongested_rows reads of a StudyData."""

    def aggregate(self, name: str, metrics: list[str]) -> pd.DataFrame:
        rows = []
        for exp, aqm in (("main", "RED"), ("uncongested", "uncongested (1 Gb/s DropTail)")):
            for metric, value in (("utilization", 0.09), ("normalized_throughput", 0.85)):
                rows.append(
                    {"experiment": exp, "aqm": aqm, "endpoint": "none", "load": 90.0}
                    | {"metric": metric, "runs": 2, "mean": value, "ci": 0.01}
                )
        return pd.DataFrame(rows)


def test_ecnplus_reference_utilization_is_per_main_capacity() -> None:
    study = studies.get("ecnplus")
    p = study.Params()
    rows = study._uncongested_rows(p, _Aggregates(), ["utilization"])  # type: ignore[attr-defined,arg-type]
    util = rows[rows["metric"] == "utilization"].iloc[0]
    # 9 % of 1 Gb/s on the wire = 90 % of the 100 Mb/s the main experiment is normalized by.
    assert util["mean"] == pytest.approx(0.9)
    assert util["ci"] == pytest.approx(0.1)
    payload = rows[rows["metric"] == "normalized_throughput"].iloc[0]
    assert payload["mean"] == pytest.approx(0.85)
    assert set(rows["experiment"]) == {"uncongested"}
