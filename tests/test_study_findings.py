"""The source's findings and readings declared by rfc2884, ecnplus and rfc2415 (issue 31): every
cell names points of the study's grid, every reading's settings are valid parameters, and each
reading changes what it names. The quick end-to-end runs (test_studies.py) judge them with
``--robustness`` and check every judged cell found its column."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ecnsim import studies
from ecnsim.studies import StudyError
from ecnsim.studies._base import apply_settings
from ecnsim.studies.findings import Cell, _in_grid

NAMES = ("rfc2884", "ecnplus", "rfc2415")


def _cells(study: studies.Study, params: Any) -> list[tuple[str, Cell]]:
    return [(f.id, c) for f in study.findings(params) for c in f.cells(params)]


@pytest.mark.parametrize("name", [*NAMES, "aecn", "hetero"])
def test_every_finding_has_cells_in_the_full_grid(name: str) -> None:
    study = studies.get(name)
    params = study.Params()
    grid = study.grid(params)
    findings = study.findings(params)
    assert len({f.id for f in findings}) == len(findings), "finding ids repeat"
    for f in findings:
        assert f.statement, f.id
        assert f.section, f.id
        cells = f.cells(params)
        assert cells, f"{name} {f.id}: no cell at the full defaults"
        for c in cells:
            for point in c.points():
                assert _in_grid(grid, point), f"{name} {f.id}: {dict(point)} is not in the grid"


@pytest.mark.parametrize("name", NAMES)
def test_quick_grid_judges_some_finding_of_each_study(name: str) -> None:
    study = studies.get(name)
    params = study.quick(study.Params())
    grid = study.grid(params)
    judged = {fid for fid, c in _cells(study, params) if all(_in_grid(grid, p) for p in c.points())}
    assert len(judged) >= 2, f"{name}: --quick judges only {judged}"


@pytest.mark.parametrize("name", NAMES)
def test_readings_are_valid_and_their_defaults_are_the_parameters(name: str) -> None:
    study = studies.get(name)
    params = study.Params()
    readings = study.readings(params)
    assert len({r.id for r in readings}) == len(readings)
    for r in readings:
        for alt in r.alternatives:
            assert alt.evidence, f"{name} {r.id}: {alt.name} has no evidence"
        if r.kind == "metric":
            continue
        # The default alternative is what the study runs by default: it changes nothing.
        assert apply_settings(study, params, list(r.default.settings.items())) == params
        for alt in r.alternatives[1:]:
            changed = apply_settings(study, params, list(alt.settings.items()))
            assert changed != params, f"{name} {r.id}: {alt.name} changes nothing"


def _setting(readings: list[Any], rid: str) -> list[Mapping[str, Any]]:
    return [dict(a.settings) for a in next(r for r in readings if r.id == rid).alternatives]


def test_a_reading_follows_a_parameter_set_by_hand() -> None:
    # Set red_ecn=rfc3168: that is the default alternative now, the Linux reading the other.
    study = studies.get("rfc2884")
    p = studies.resolve_params(study, ["red_ecn=rfc3168"])
    assert _setting(study.readings(p), "red_ecn") == [
        {"red_ecn": "rfc3168"},
        {"red_ecn": "mark_above_max"},
    ]
    study = studies.get("ecnplus")
    p = studies.resolve_params(study, ["ecn_one_segment=linux"])
    alts = _setting(study.readings(p), "ecn_one_segment")
    assert alts[0] == {"ecn_one_segment": "linux"}
    assert sorted(a["ecn_one_segment"] for a in alts[1:]) == ["ns2", "rfc3168"]
    study = studies.get("rfc2415")
    p = studies.resolve_params(study, ["handshake=false", "bottleneck_delay_is=round_trip"])
    assert _setting(study.readings(p), "handshake")[0] == {"handshake": False}
    assert _setting(study.readings(p), "bottleneck_delay_is")[0] == {
        "bottleneck_delay_is": "round_trip"
    }


def test_ecnplus_throughput_reading_maps_onto_both_columns() -> None:
    study = studies.get("ecnplus")
    r = next(r for r in study.readings(study.Params()) if r.id == "throughput")
    assert [dict(a.metrics) for a in r.alternatives] == [
        {"throughput": "normalized_throughput"},
        {"throughput": "utilization"},
    ]


def test_rfc2415_half_and_half_cell_compares_the_two_halves_of_one_run() -> None:
    study = studies.get("rfc2415")
    params = study.Params()
    (i4,) = [f for f in study.findings(params) if f.id == "i4"]
    cells = i4.cells(params)
    assert len(cells) == len(params.half_webs_values)
    for c in cells:
        assert c.point == c.ref
        assert c.table == "groups"
        assert not c.higher
        assert (c.where, c.ref_where) == ({"role": "web_half2"}, {"role": "web_half1"})
        assert "role=web_half2 < role=web_half1" in c.label()


def test_a_bad_reading_setting_is_refused_by_the_parameters() -> None:
    # What --robustness checks before anything runs: an alternative's settings are parameters.
    study = studies.get("rfc2415")
    with pytest.raises(StudyError, match="bottleneck_delay_is"):
        apply_settings(study, study.Params(), [("bottleneck_delay_is", "both")])
