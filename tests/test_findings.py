"""Findings, readings and the robustness check (ecnsim.studies.findings; issue 31)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecnsim import studies
from ecnsim.studies._base import StudyData, StudyError, select_rows
from ecnsim.studies.findings import (
    ALL,
    ALMOST_ALL,
    Alternative,
    Cell,
    Delta,
    Finding,
    Reading,
    findings_frames,
    findings_html,
    judge_cell,
    judge_finding,
    metric_roles,
    missing_under_alternatives,
    robustness,
    robustness_outcome,
    verdict_of,
)
from ecnsim.studies.hetero import HeteroParams, HeteroStudy
from ecnsim.sweep.store import Store


def _frame(rows: Sequence[tuple[str, int, float, float]]) -> pd.DataFrame:
    """A derived table: mode, seed, jain, jain_interval."""
    frame: pd.DataFrame = pd.DataFrame(rows, columns=["mode", "seed", "jain", "jain_interval"])
    return frame


def _data(frame: pd.DataFrame, points: list[dict[str, Any]]) -> Any:
    """A StudyData of one table (every name reads ``frame``) over ``points``."""
    plan = SimpleNamespace(points=points, params=list(points[0]) if points else [], runs=[])
    data = StudyData(HeteroStudy(), plan, Store("unused"))  # type: ignore[arg-type]
    data.frame = lambda name: frame  # type: ignore[method-assign]
    return data


def test_study_data_select_is_select_rows_with_remembered_masks() -> None:
    # Ints, floats (compared with isclose, not ==), strings, a mixed column, a missing one.
    f = pd.DataFrame(
        {
            "n": [30, 30, 60, 60, 30],
            "max_p": [0.1, 0.1 + 1e-12, 0.2, 0.1, 0.3],
            "mode": ["ECN", "RED", "ECN", "ECN", "ECN"],
            "mixed": ["a", 1, "a", 2.0, None],
            "seed": [1, 2, 1, 2, 3],
            "jain": [0.9, 0.8, 0.7, 0.6, 0.5],
        }
    )
    data = _data(f, [{"n": 30}])
    queries = [
        {"n": 30},
        {"n": 30.0},
        {"max_p": 0.1},
        {"max_p": 0.1, "mode": "ECN"},
        {"mode": "ECN", "n": 60},
        {"mixed": "a"},
        {"mixed": 2.0},
        {"mixed": 1},
        {"mode": "PIE"},
        {"absent": 1},
        {},
    ]
    for _ in range(2):  # the second time through the remembered masks
        for where in queries:
            got = data.select("metrics", where, ["seed", "jain"])
            want = select_rows(f, where)
            want = want.loc[:, ["seed", "jain"]] if not want.empty else want.iloc[0:0, [4, 5]]
            pd.testing.assert_frame_equal(got, want)
    assert data.select("metrics", {"n": 30}, ["seed", "absent"]).empty


ECN, RED = {"mode": "ECN"}, {"mode": "RED"}

# -- one cell: paired differences over seeds -------------------------------------------


def test_cell_holds_when_the_paired_interval_excludes_zero_in_the_claimed_direction() -> None:
    f = _frame([("ECN", s, 0.9 + 0.01 * s, 0) for s in (1, 2, 3)])
    f = pd.concat([f, _frame([("RED", s, 0.8 + 0.01 * s, 0) for s in (1, 2, 3)])])
    r = judge_cell(f, Cell("jain", ECN, RED), "jain")
    assert (r.outcome, r.seeds) == ("holds", 3)
    assert r.diff == pytest.approx(0.1)
    assert r.ci == pytest.approx(0.0, abs=1e-12)
    # The same cell claimed the other way round does not hold.
    assert judge_cell(f, Cell("jain", ECN, RED, higher=False), "jain").outcome == "does not hold"


def test_cell_is_not_significant_when_the_interval_straddles_zero() -> None:
    ecn = [("ECN", 1, 0.90, 0), ("ECN", 2, 0.70, 0), ("ECN", 3, 0.85, 0)]
    red = [("RED", 1, 0.80, 0), ("RED", 2, 0.80, 0), ("RED", 3, 0.80, 0)]
    r = judge_cell(_frame(ecn + red), Cell("jain", ECN, RED), "jain")
    assert r.outcome == "n.s."
    assert r.ci > abs(r.diff)


def test_cell_with_one_seed_is_decided_by_the_sign_alone() -> None:
    f = _frame([("ECN", 1, 0.81, 0), ("RED", 1, 0.80, 0)])
    r = judge_cell(f, Cell("jain", ECN, RED), "jain")
    assert (r.outcome, r.seeds) == ("holds", 1)
    assert r.ci != r.ci  # NaN: no interval
    res = judge_finding(
        Finding("x", "ECN fairer", "§1", lambda p: [Cell("jain", ECN, RED)]), _data(f, [ECN, RED]),
        None, {},
    )  # fmt: skip
    assert res.significance == "1 seed: no significance test"


def test_cell_pairs_by_seed_and_compares_with_a_factor_or_a_number() -> None:
    # Seed 3 has no RED run: only seeds 1 and 2 are paired.
    f = _frame([("ECN", 1, 2.0, 0), ("ECN", 2, 2.01, 0), ("ECN", 3, 0.0, 0)])
    f = pd.concat([f, _frame([("RED", 1, 1.0, 0), ("RED", 2, 1.0, 0)])])
    assert judge_cell(f, Cell("jain", ECN, RED, factor=1.5), "jain").outcome == "holds"
    assert judge_cell(f, Cell("jain", ECN, RED, factor=2.5), "jain").outcome == "does not hold"
    assert judge_cell(f, Cell("jain", ECN, RED), "jain").seeds == 2
    # Against a number: every seed of the point (a count of zero is not "more than 0").
    zeros = _frame([("RED", s, 0.0, 0) for s in (1, 2)])
    assert judge_cell(zeros, Cell("jain", RED, 0.0), "jain").outcome == "does not hold"
    assert judge_cell(f, Cell("jain", ECN, 5.0), "jain").outcome == "does not hold"
    assert judge_cell(f, Cell("jain", {"mode": "ECNM"}, RED), "jain").outcome == "no data"


def test_cell_compares_two_groups_of_the_same_runs() -> None:
    # ref_where: the reference's rows are another group of the same point (RFC 2415's halves).
    rows = [
        {"mode": "ECN", "seed": s, "role": role, "delay": d}
        for s, (a, b) in enumerate([(1.0, 2.0), (1.1, 2.2), (0.9, 1.8)], start=1)
        for role, d in (("fast", a), ("slow", b))
    ]
    f = pd.DataFrame(rows)
    fast, slow = {"role": "fast"}, {"role": "slow"}
    cell = Cell("delay", ECN, ECN, higher=False, where=fast, ref_where=slow)
    res = judge_cell(f, cell, "delay")
    assert (res.outcome, res.seeds, res.value, res.reference) == ("holds", 3, 1.0, 2.0)
    assert cell.label() == "mode=ECN: delay role=fast < role=slow"
    backwards = Cell("delay", ECN, ECN, higher=False, where=slow, ref_where=fast)
    assert judge_cell(f, backwards, "delay").outcome == "does not hold"
    # Without ref_where both sides read ``where``'s rows: no difference, not "lower".
    assert judge_cell(f, Cell("delay", ECN, ECN, higher=False, where=fast), "delay").outcome == (
        "does not hold"
    )


def _groups(values: dict[tuple[int, str, int], float]) -> pd.DataFrame:
    """A per-group table: max_th, group, seed, delay (seconds)."""
    return pd.DataFrame(
        [{"max_th": m, "group": g, "seed": s, "delay": v} for (m, g, s), v in values.items()]
    )


def test_a_cell_on_two_changes_pairs_each_change_by_seed() -> None:
    # Raising max_th from 30 to 50 adds (per seed) 10/11/12 ms to the robust group's delay and
    # 4/4.5/5 ms to the average group's: robust's rise is larger, in every seed.
    rise = {"robust": (0.010, 0.011, 0.012), "average": (0.004, 0.0045, 0.005)}
    values = {}
    for g, r in rise.items():
        for s, x in enumerate(r, start=1):
            values[(30, g, s)] = 0.05 + 0.001 * s
            values[(50, g, s)] = 0.05 + 0.001 * s + x
    f = _groups(values)
    hi, lo = {"max_th": 50}, {"max_th": 30}
    robust = Delta(hi, lo, where={"group": "robust"})
    average = Delta(hi, lo, where={"group": "average"})
    res = judge_cell(f, Cell("delay", robust, average), "delay")
    assert (res.outcome, res.seeds) == ("holds", 3)
    assert res.value == pytest.approx(0.011)
    assert res.reference == pytest.approx(0.0045)
    assert res.diff == pytest.approx(0.0065)
    assert judge_cell(f, Cell("delay", average, robust), "delay").outcome == "does not hold"
    # A factor scales the reference change: 10/11/12 are not more than 3 x 4/4.5/5 = 12/13.5/15.
    assert judge_cell(f, Cell("delay", robust, average, factor=3.0), "delay").outcome == (
        "does not hold"
    )
    assert judge_cell(f, Cell("delay", robust, average, factor=2.0), "delay").outcome == "holds"
    # Against a number: the change itself above 8 ms in every seed (11 +- 2.5 ms).
    assert judge_cell(f, Cell("delay", robust, 0.008), "delay").outcome == "holds"
    assert judge_cell(f, Cell("delay", robust, 0.011), "delay").outcome == "n.s."
    label = Cell("delay", robust, average).label()
    assert label == (
        "delay group=robust (max_th=50 - max_th=30) > group=average (max_th=50 - max_th=30)"
    )


def test_a_change_is_not_judged_where_its_seeds_do_not_pair() -> None:
    # Seed 2 has no max_th = 30 run for the robust group: its change is left out, and the
    # other delta's seed 2 with it (changes pair by seed too).
    values = {(50, "robust", 1): 2.0, (30, "robust", 1): 1.0, (50, "robust", 2): 9.0}
    values |= {(50, "average", s): 1.5 for s in (1, 2)}
    values |= {(30, "average", s): 1.0 for s in (1, 2)}
    f = _groups(values)
    hi, lo = {"max_th": 50}, {"max_th": 30}
    cell = Cell("delay", Delta(hi, lo, where={"group": "robust"}),
                Delta(hi, lo, where={"group": "average"}))  # fmt: skip
    res = judge_cell(f, cell, "delay")
    assert (res.seeds, res.diff) == (1, pytest.approx(0.5))
    assert {tuple(sorted(p.items())) for p in cell.points()} == {
        (("max_th", 50),),
        (("max_th", 30),),
    }


def test_a_relative_change_compares_ratios_not_differences() -> None:
    # Web power (RFC 2415 normalizes to IW=1): without FTP it goes 1.0 -> 1.3 (+30 %), with FTP
    # 3.0 -> 3.6 (+20 %). The absolute rise is larger with FTP, the relative one without.
    rows = [
        {"iw": iw, "ftps": f, "seed": s, "power": v * (1 + 0.01 * s)}
        for s in (1, 2, 3)
        for f, (lo, hi) in ((0, (1.0, 1.3)), (3, (3.0, 3.6)))
        for iw, v in ((1, lo), (4, hi))
    ]
    f = pd.DataFrame(rows)

    def change(ftps: int, relative: bool) -> Delta:
        return Delta({"iw": 4, "ftps": ftps}, {"iw": 1, "ftps": ftps}, relative=relative)

    rel = judge_cell(f, Cell("power", change(0, True), change(3, True)), "power")
    assert rel.outcome == "holds"
    assert (rel.value, rel.reference) == (pytest.approx(0.3), pytest.approx(0.2))
    absolute = judge_cell(f, Cell("power", change(0, False), change(3, False)), "power")
    assert absolute.outcome == "does not hold"
    assert change(0, True).label({}) == "ftps=0 (iw=4 / iw=1 - 1)"
    assert Cell("power", change(0, True), change(3, True)).label() == (
        "power ftps=0 (iw=4 / iw=1 - 1) > ftps=3 (iw=4 / iw=1 - 1)"
    )
    # A reference of zero has no relative change: that seed is left out.
    extra = [
        {"iw": 1, "ftps": 5, "seed": 1, "power": 0.0},
        {"iw": 4, "ftps": 5, "seed": 1, "power": 1.0},
    ]
    zero = pd.concat([f, pd.DataFrame(extra)])
    assert judge_cell(zero, Cell("power", change(5, True), 0.0), "power").outcome == "no data"


def test_a_delta_compares_only_with_a_delta_or_a_number() -> None:
    d = Delta({"mode": "ECN"}, {"mode": "RED"})
    with pytest.raises(ValueError, match="a Delta compares with a Delta or a number"):
        Cell("jain", d, {"mode": "RED"})
    with pytest.raises(ValueError, match="a Delta compares with a Delta or a number"):
        Cell("jain", {"mode": "RED"}, d)
    assert Cell("jain", d, 0.0).label() == "jain (mode=ECN - mode=RED) > 0"


def test_a_finding_on_changes_is_left_out_when_a_change_is_outside_the_grid() -> None:
    f = _frame([("ECN", 1, 0.9, 0), ("RED", 1, 0.8, 0), ("ECNM", 1, 0.75, 0)])
    cell = Cell("jain", Delta(ECN, RED), Delta(RED, {"mode": "ECNM"}))
    finding = Finding("x", "ECN's gain over RED exceeds RED's over ECNM", "§1", lambda p: [cell])
    assert judge_finding(finding, _data(f, [ECN, RED]), None, {}).verdict == "no data"
    full = judge_finding(finding, _data(f, [ECN, RED, {"mode": "ECNM"}]), None, {})
    # One seed: the sign of 0.1 - 0.05 decides.
    assert (full.verdict, len(full.cells), full.significance) == (
        "holds", 1, "1 seed: no significance test"
    )  # fmt: skip


# -- a finding's verdict from its cells --------------------------------------------------


@pytest.mark.parametrize(
    ("held", "not_held", "ns", "quantifier", "verdict"),
    [
        (4, 0, 0, ALL, "holds"),
        (3, 0, 1, ALL, "n.s."),
        (3, 1, 0, ALL, "does not hold"),
        (3, 1, 0, ALMOST_ALL, "holds"),
        (2, 1, 1, ALMOST_ALL, "n.s."),
        (2, 2, 0, ALMOST_ALL, "does not hold"),
        (0, 0, 0, ALL, "no data"),
    ],
)
def test_verdict_of_cells(
    held: int, not_held: int, ns: int, quantifier: float, verdict: str
) -> None:
    assert verdict_of(held, not_held, ns, quantifier) == verdict


def test_robustness_outcome() -> None:
    assert robustness_outcome("holds", "holds") == "same"
    assert robustness_outcome("does not hold", "does not hold") == "same"
    assert robustness_outcome("holds", "does not hold") == "flips"
    assert robustness_outcome("does not hold", "holds") == "flips"
    assert robustness_outcome("holds", "n.s.") == "n.s."
    assert robustness_outcome("n.s.", "holds") == "flips"


def test_cells_outside_the_grid_are_left_out() -> None:
    f = _frame([("ECN", 1, 0.9, 0), ("RED", 1, 0.8, 0)])
    finding = Finding(
        "x", "s", "§1", lambda p: [Cell("jain", ECN, RED), Cell("jain", ECN, {"mode": "ECNM"})]
    )
    res = judge_finding(finding, _data(f, [ECN, RED]), None, {})
    assert len(res.cells) == 1
    assert res.verdict == "holds"


# -- readings ------------------------------------------------------------------------------


JAIN = Reading(
    "jain",
    "which Jain?",
    (
        Alternative("interval mean", "quote (§1)", metrics={"jain": "jain_interval"}),
        Alternative("whole window", "quote (§2)", metrics={"jain": "jain"}),
    ),
)


def test_a_reading_needs_alternatives_of_one_kind() -> None:
    with pytest.raises(ValueError, match="at least one alternative"):
        Reading("r", "q", (Alternative("a", "e", metrics={"x": "y"}),))
    with pytest.raises(ValueError, match="either metrics or settings"):
        Reading(
            "r",
            "q",
            (Alternative("a", "e", metrics={"x": "y"}), Alternative("b", "e", settings={"s": 1})),
        )
    assert JAIN.kind == "metric"
    assert metric_roles([JAIN]) == {"jain": "jain_interval"}
    assert metric_roles([JAIN], {"jain": "whole window"}) == {"jain": "jain"}


def test_a_metric_reading_flips_a_finding_on_the_same_runs() -> None:
    # RED fairer over the whole window, ECN fairer per interval: the definition decides.
    rows = [("ECN", s, 0.80, 0.95 + 0.001 * s) for s in (1, 2, 3)]
    rows += [("RED", s, 0.85 + 0.001 * s, 0.90) for s in (1, 2, 3)]
    data = _data(_frame(rows), [ECN, RED])
    finding = Finding("h", "ECN is fairer than RED", "§4", lambda p: [Cell("jain", ECN, RED)])
    study = SimpleNamespace(readings=lambda p: [JAIN], findings=lambda p: [finding])
    base, rows_out = robustness(study, None, data, [])  # type: ignore[arg-type]
    assert base[0].verdict == "holds"
    assert [(r.reading, r.alternative, r.verdict, r.outcome) for r in rows_out] == [
        ("jain", "whole window", "does not hold", "flips")
    ]


def test_the_robustness_table_names_the_cells_that_fail_under_an_alternative(
    tmp_path: Path,
) -> None:
    # Two cells: under "whole window" RED is fairer (the first cell does not hold), and ECN's
    # index stays above 0.5 (the second holds). The CSV and the report name the first.
    rows = [("ECN", s, 0.80, 0.95 + 0.001 * s) for s in (1, 2, 3)]
    rows += [("RED", s, 0.85 + 0.001 * s, 0.90) for s in (1, 2, 3)]
    data = _data(_frame(rows), [ECN, RED])
    cells = [Cell("jain", ECN, RED), Cell("jain", ECN, 0.5)]
    finding = Finding("h", "ECN is fairer than RED", "§4", lambda p: cells)
    study = SimpleNamespace(readings=lambda p: [JAIN], findings=lambda p: [finding])
    base, rows_out = robustness(study, None, data, [])  # type: ignore[arg-type]
    assert base[0].verdict == "holds"
    (row,) = rows_out
    failing = cells[0].label()
    assert failing.endswith("jain mode=ECN > mode=RED")  # the label findings_cells.csv gives
    assert row.cells == "1 hold, 1 do not, 0 n.s. of 2"
    assert row.failing_cells == (failing,)
    assert row.ns_cells == ()
    csv = tmp_path / "robustness.csv"
    findings_frames(base, rows_out)["robustness"].to_csv(csv, index=False)
    read = pd.read_csv(csv, keep_default_na=False)
    assert list(read["failing_cells"]) == [failing]
    assert list(read["ns_cells"]) == [""]
    page = "".join(findings_html(base, rows_out, [JAIN]))
    assert f"<li>{failing}: does not hold</li>" in page.replace("&gt;", ">")
    # Nothing fails under an alternative that agrees: nothing named.
    agree = [("ECN", s, 0.90 + 0.001 * s, 0.95) for s in (1, 2, 3)]
    agree += [("RED", s, 0.80, 0.90 + 0.001 * s) for s in (1, 2, 3)]
    _, rows2 = robustness(study, None, _data(_frame(agree), [ECN, RED]), [])  # type: ignore[arg-type]
    assert [(r.failing_cells, r.ns_cells) for r in rows2] == [((), ())]
    assert "<details>" not in "".join(findings_html(base, rows2, [JAIN])).split("Robustness")[1]


def test_a_metric_reading_that_agrees_keeps_the_finding() -> None:
    rows = [("ECN", s, 0.90 + 0.001 * s, 0.95) for s in (1, 2, 3)]
    rows += [("RED", s, 0.80, 0.90 + 0.001 * s) for s in (1, 2, 3)]
    data = _data(_frame(rows), [ECN, RED])
    finding = Finding("h", "ECN is fairer than RED", "§4", lambda p: [Cell("jain", ECN, RED)])
    study = SimpleNamespace(readings=lambda p: [JAIN], findings=lambda p: [finding])
    _, rows_out = robustness(study, None, data, [])  # type: ignore[arg-type]
    assert [r.outcome for r in rows_out] == ["same"]


def test_a_finding_that_loses_its_data_under_an_alternative_is_a_warning() -> None:
    # The default judges the finding; under the alternative its column is missing (all NaN),
    # as when an alternative's runs fail. The robustness table must not say "no data" quietly.
    rows = [("ECN", s, math.nan, 0.95 + 0.001 * s) for s in (1, 2, 3)]
    rows += [("RED", s, math.nan, 0.90) for s in (1, 2, 3)]
    data = _data(_frame(rows), [ECN, RED])
    finding = Finding("h", "ECN is fairer than RED", "§4", lambda p: [Cell("jain", ECN, RED)])
    study = SimpleNamespace(readings=lambda p: [JAIN], findings=lambda p: [finding])
    base, rows_out = robustness(study, None, data, [])  # type: ignore[arg-type]
    assert base[0].verdict == "holds"
    assert [(r.verdict, r.outcome) for r in rows_out] == [("no data", "no data")]
    assert missing_under_alternatives(base, rows_out) == ["h under jain = whole window"]
    page = "".join(findings_html(base, rows_out, [JAIN]))
    assert "Warning:" in page
    assert "h under jain = whole window" in page
    # A finding the defaults could not judge either is not a warning.
    none = [("ECN", s, math.nan, math.nan) for s in (1, 2, 3)]
    none += [("RED", s, math.nan, math.nan) for s in (1, 2, 3)]
    base2, rows2 = robustness(study, None, _data(_frame(none), [ECN, RED]), [])  # type: ignore[arg-type]
    assert base2[0].verdict == "no data"
    assert missing_under_alternatives(base2, rows2) == []
    assert "Warning:" not in "".join(findings_html(base2, rows2, [JAIN]))


# -- parameter readings: the findings' points run again ------------------------------------


class _Toy(HeteroStudy):
    """hetero on a tiny grid, with a finding a parameter reading flips and one it does not."""

    def findings(self, p: HeteroParams) -> list[Finding]:
        pt = {"n": p.n_values[0], "max_p": p.max_p_values[0], "mode": "RED"}
        return [
            # Goodput above 5 Mb/s: true on 10 Mb/s, false on 2 Mb/s.
            Finding(
                "fast", "goodput above 5 Mb/s", "toy", lambda p: [Cell("goodput_mbps", pt, 5.0)]
            ),
            # Goodput below 20 Mb/s: true on either.
            Finding(
                "bounded", "goodput below 20 Mb/s", "toy",
                lambda p: [Cell("goodput_mbps", pt, 20.0, higher=False)],
            ),
        ]  # fmt: skip

    def readings(self, p: HeteroParams) -> list[Reading]:
        return [
            Reading(
                "capacity",
                "which bottleneck?",
                (
                    Alternative("10 Mb/s", "toy", settings={"bottleneck_mbps": 10.0}),
                    Alternative("2 Mb/s", "toy", settings={"bottleneck_mbps": 2.0}),
                ),
            )
        ]


def test_a_parameter_reading_reruns_only_the_findings_points_and_can_flip(tmp_path: Path) -> None:
    from ecnsim.studies.findings import report_findings

    study = _Toy()
    params = studies.resolve_params(
        study,
        ["n_values=6", "max_p_values=0.5", "modes=RED,ECN", "duration_s=4", "warmup_s=1",
         "figure_n=99"],
        seeds=2,
    )  # fmt: skip
    run = studies.run_study(study, params, tmp_path, workers=1, render=False, robustness=True)
    assert run.robustness is not None
    assert len(run.robustness) == 1
    alt = run.robustness[0]
    # Only the RED point (the one the findings use) ran again, with both seeds.
    assert alt.plan.points == [{"n": 6, "max_p": 0.5, "mode": "RED"}]
    assert alt.sweep.ran == 2
    assert not alt.sweep.failures
    (tmp_path / "tables").mkdir(exist_ok=True)
    run.tables = {}
    from ecnsim.studies._base import StudyData

    _html, info = report_findings(run, StudyData(study, run.plan, run.sweep.store))
    assert [f["verdict"] for f in info["findings"]] == ["holds", "holds"]
    outcome = {(r["finding"], r["alternative"]): r["outcome"] for r in info["robustness"]}
    assert outcome == {("fast", "2 Mb/s"): "flips", ("bounded", "2 Mb/s"): "same"}
    csv = pd.read_csv(tmp_path / "tables" / "robustness.csv")
    assert set(csv["outcome"]) == {"flips", "same"}
    # Resumable: a second call finds the alternative's runs in the store.
    again = studies.run_study(study, params, tmp_path, workers=1, render=False, robustness=True)
    assert again.robustness is not None
    assert again.robustness[0].sweep.ran == 0
    # The report counts the alternative's own runs' simulation CPU apart from the study's.
    from ecnsim.studies.render import render_study

    render_study(again)
    info = json.loads((tmp_path / "study.json").read_text(encoding="utf-8"))
    assert info["robustness_runs_own"] == 2
    assert 0 < info["simulation_cpu_s_robustness_runs"] < info["simulation_cpu_s_all_runs"]
    assert info["simulation_cpu_s_pilot_runs"] == 0
    assert "the robustness runs" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_a_bad_reading_setting_is_a_study_error(tmp_path: Path) -> None:
    class Bad(_Toy):
        def readings(self, p: HeteroParams) -> list[Reading]:
            return [
                Reading(
                    "x", "q",
                    (Alternative("a", "e", settings={"cc": "reno"}),
                     Alternative("b", "e", settings={"cc": "vegas"})),
                )
            ]  # fmt: skip

    params = studies.resolve_params(Bad(), ["n_values=6", "duration_s=4", "warmup_s=1"], seeds=1)
    with pytest.raises(StudyError, match="cc='vegas': must be one of"):
        studies.run_study(Bad(), params, tmp_path, workers=1, render=False, robustness=True)
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").rglob("*.parquet"))


def test_study_show_lists_findings_and_readings(cli: Any) -> None:
    r = cli("study", "show", "hetero")
    assert r.returncode == 0, r.stderr
    assert "Findings of the source" in r.stdout
    assert "h5a. ECN is fairer than RED" in r.stdout
    assert "jain: Jain's index" in r.stdout
    assert "(default)" in r.stdout


def test_report_has_the_findings_table_and_csv(tmp_path: Path) -> None:
    study = HeteroStudy()
    params = studies.resolve_params(
        study,
        ["n_values=6", "max_p_values=0.5", "modes=RED,ECN", "duration_s=4", "warmup_s=1",
         "figure_n=99"],
        seeds=2,
    )  # fmt: skip
    run = studies.run_study(study, params, tmp_path, workers=1)
    assert run.report is not None
    text = run.report.read_text()
    assert "The source&#x27;s findings" in text or "The source's findings" in text
    assert "Robustness not run" in text
    info = json.loads((tmp_path / "study.json").read_text())
    assert {f["finding"] for f in info["findings"]} >= {"h1a", "h5a"}
    assert info["robustness"] is None
    table = pd.read_csv(tmp_path / "tables" / "findings.csv")
    assert list(table.columns[:4]) == ["finding", "statement", "section", "verdict"]
    assert set(table["verdict"]) <= {"holds", "does not hold", "n.s.", "no data"}
    cells = pd.read_csv(tmp_path / "tables" / "findings_cells.csv")
    assert (cells["seeds"] == 2).all()


# -- layouts (issue 31 item 4) ---------------------------------------------------------------


def test_hetero_figures_are_drawn_where_the_thesis_draws_them() -> None:
    study = HeteroStudy()
    p = study.Params()
    jobs = {(pt["n"], pt["max_p"], pt["mode"]): study.job(p, pt) for pt in study.grid(p)}
    series = {k[:2] for k, j in jobs.items() if j.context["series"]}
    traced = {k[:2] for k, j in jobs.items() if j.trace_links}
    assert series == {(30, 0.2), (30, 0.5), (60, 0.5), (120, 0.8)}
    assert traced == {(120, 0.8)}
    # --quick has none of those points: its largest N at its max_p, traced.
    q = study.quick(p)
    quick = {(pt["n"], pt["max_p"]) for pt in study.grid(q) if study.job(q, pt).trace_links}
    assert quick == {(60, 0.1)}


def test_aecn_table_5_1_is_one_table(tmp_path: Path) -> None:
    from ecnsim.studies.aecn import AecnStudy

    study = AecnStudy()
    params = studies.resolve_params(
        study,
        ["n_values=6,9", "experiments=main", "duration_s=4", "warmup_s=1", "figure_n=99"],
        seeds=1,
    )
    run = studies.run_study(study, params, tmp_path, workers=1, render=False)
    from ecnsim.studies._base import StudyData

    t = study.tables(params, StudyData(study, run.plan, run.sweep.store))["table_5_1"]
    assert list(t.mean.index) == [6, 9]  # 60 and 120 are not in this grid: every N
    assert t.mean.columns.names == ["quantity", "scheme"]
    assert list(dict.fromkeys(t.mean.columns.get_level_values(1))) == ["ECN", "AECN a=1"]
    assert len(t.mean.columns) == 6
    assert np.isfinite(t.mean.to_numpy(dtype=float)).all()


def test_interval_jain_is_the_mean_of_per_interval_indices() -> None:
    from ecnsim.studies.hetero import interval_jain

    t = np.round(np.arange(0, 3.01, 0.1), 10)
    # Flow 0 delivers 1000 B every 0.1 s; flow 1 the same in [0, 1) s, nothing in [1, 2), then
    # 3000 B per 0.1 s in [2, 3).
    a = 1000.0 * np.arange(t.size)
    b = np.array([1000.0 * min(i, 10) + 3000.0 * max(0, i - 20) for i in range(t.size)])
    fs = pd.DataFrame(
        {
            "time_s": np.concatenate([t, t]),
            "flow_id": np.repeat([0, 1], t.size),
            "bytes_delivered": np.concatenate([a, b]),
        }
    )
    # Intervals: equal shares (1), one flow alone (1/2), 1:3 shares (16/20).
    assert interval_jain(fs, bin_s=1.0, warmup_s=0.0) == pytest.approx((1 + 0.5 + 0.8) / 3)
    # From 1 s on: the last two intervals only.
    assert interval_jain(fs, bin_s=1.0, warmup_s=1.0) == pytest.approx((0.5 + 0.8) / 2)
    # One index over [1, 3) is another number: 20 kB and 30 kB, (20+30)^2 / (2 (20^2+30^2)).
    assert interval_jain(fs, bin_s=2.0, warmup_s=1.0) == pytest.approx(2500 / 2600)


def test_a_label_with_no_shared_axes_starts_with_the_metric() -> None:
    # Seen in robustness.csv: cells whose sides share no axis were labelled ": metric ...".
    assert Cell("jain", {}, 0.5).label() == "jain > 0.5"
    assert Cell("jain", {"mode": "ECN"}, {"mode": "RED"}).label() == "jain mode=ECN > mode=RED"
    assert Cell("jain", {}, 0.5, where={"role": "web"}).label() == "role=web: jain > 0.5"
    cell = Cell("jain", {"n": 30}, 0.5, where={"role": "web"})
    assert cell.label() == "n=30 role=web: jain > 0.5"
    d = Delta({"mode": "ECN"}, {"mode": "RED"})
    assert not Cell("jain", d, d, higher=False).label().startswith(":")
