"""The rfc2884 study's rules (calibration, relative advantage, timeouts) and the pilot stage."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest

from ecnsim import Scenario, Simulation, bulk, studies
from ecnsim.studies import Calibration, JobSpec, Study, StudyData, StudyError, StudyParams
from ecnsim.studies.rfc2884 import (
    Rfc2884Params,
    Rfc2884Study,
    bulk_side_metrics,
    choose_red_setting,
    percent_decrease,
    relative_advantage,
    retransmit_pct,
)
from ecnsim.sweep.store import Store

# ---------------------------------------------------------------------------
# The calibration rule on constructed pilot results
# ---------------------------------------------------------------------------


def _pilots(rows: list[tuple[float, float, float]]) -> pd.DataFrame:
    """Pilot runs as (min_th, max_p, inside); max_th = 3 min_th, buffer = 6 min_th."""
    return pd.DataFrame(
        [
            {"min_th": m, "max_th": 3 * m, "buffer": int(6 * m), "max_p": p, "inside": s}
            for m, p, s in rows
        ]
    )


def test_calibration_picks_the_smallest_min_th_that_keeps_the_average_inside() -> None:
    pilots = _pilots(
        [
            (5, 0.02, 0.40), (5, 0.5, 0.95),  # fails at the small max_p (average above max_th)
            (12, 0.02, 0.92), (12, 0.5, 0.91),  # meets 0.9 at both: chosen
            (30, 0.02, 0.99), (30, 0.5, 0.97),  # also meets it, but larger
        ]
    )  # fmt: skip
    c = choose_red_setting(pilots, target=0.9)
    assert (c["min_th"], c["max_th"], c["buffer"], c["met"]) == (12.0, 36.0, 72, True)
    assert c["worst"] == pytest.approx(0.91)
    assert list(c["candidates"]["worst"]) == pytest.approx([0.40, 0.91, 0.97])


def test_calibration_judges_a_candidate_by_its_worst_max_p_and_averages_seeds() -> None:
    # min_th 5: seeds 0.95 and 0.75 at max_p 0.5 average to 0.85 < 0.9, so it fails there.
    pilots = _pilots(
        [(5, 0.02, 0.99), (5, 0.5, 0.95), (5, 0.5, 0.75), (8, 0.02, 0.9), (8, 0.5, 0.9)]
    )
    c = choose_red_setting(pilots, target=0.9)
    assert c["min_th"] == 8.0
    assert c["met"]


def test_calibration_without_a_candidate_meeting_the_target_takes_the_best_worst_case() -> None:
    pilots = _pilots(
        [(5, 0.02, 0.1), (5, 0.5, 0.9), (12, 0.02, 0.6), (12, 0.5, 0.7), (30, 0.02, 0.6)]
    )
    c = choose_red_setting(pilots, target=0.95)
    # Worst cases: 0.1, 0.6, 0.6: the tie goes to the smaller min_th.
    assert (c["min_th"], c["met"]) == (12.0, False)
    assert c["worst"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="lack columns"):
        choose_red_setting(pilots.drop(columns="inside"), target=0.9)
    with pytest.raises(ValueError, match="no pilot run"):
        choose_red_setting(pilots.iloc[0:0], target=0.9)


def test_apply_calibration_sets_each_level_and_keeps_hand_set_ones() -> None:
    study = Rfc2884Study()
    p = Rfc2884Params(
        experiments=("bulk",), congestion_levels=(2, 10), red_settings=((10, 40, 120, 240),)
    )
    cal = study.calibration(p)
    assert cal is not None
    # Only level 2 is calibrated; each candidate at the smallest and largest max_p.
    assert {pt["level"] for pt in cal.points} == {2}
    assert {pt["max_p"] for pt in cal.points} == {0.02, 0.5}
    assert len(cal.points) == 2 * len(p.calibration_min_th)
    pilots = pd.DataFrame(
        [
            {**pt, "red_inside": 0.95 if pt["min_th"] >= 8 else 0.5, "red_above": 0.0, "seed": 1}
            for pt in cal.points
        ]
    )
    out = study.apply_calibration(p, pilots)
    assert out.setting(2) == (8.0, 24.0, 48)
    assert out.setting(10) == (40.0, 120.0, 240)
    # Nothing left to calibrate: no pilot stage.
    assert study.calibration(out) is None


def test_study_parameters_refuse_bad_red_settings() -> None:
    study = Rfc2884Study()
    with pytest.raises(StudyError, match=r"red_settings: each entry is \(level, min_th"):
        studies.resolve_params(study, ["red_settings=[[2, 5, 15]]"])
    with pytest.raises(StudyError, match="0 <= min_th < max_th <= buffer"):
        studies.resolve_params(study, ["red_settings=[[2, 20, 15, 30]]"])
    p = studies.resolve_params(study, ["red_settings=[[2, 5, 15, 30]]", "calibration_target=0.8"])
    assert p.setting(2) == (5.0, 15.0, 30)
    with pytest.raises(StudyError, match="no RED setting for congestion level 5"):
        study.scenario(p, {"experiment": "bulk", "cc": "reno", "level": 5, "max_p": 0.1})


# ---------------------------------------------------------------------------
# Relative advantage, % decrease and timeout counting
# ---------------------------------------------------------------------------


def test_relative_advantage_and_percent_decrease() -> None:
    assert relative_advantage(120.0, 100.0) == pytest.approx(0.2)
    assert relative_advantage(80.0, 100.0) == pytest.approx(-0.2)
    assert math.isnan(relative_advantage(5.0, 0.0))
    assert math.isnan(relative_advantage(math.nan, 1.0))
    # 10 timeouts without ECN, 4 with: ECN has 60 % fewer.
    assert percent_decrease(4.0, 10.0) == pytest.approx(60.0)
    assert percent_decrease(12.0, 10.0) == pytest.approx(-20.0)
    assert math.isnan(percent_decrease(0.0, 0.0))


def _two_losses() -> Scenario:
    """Two 30-segment transfers (linux-2.4): one loses segment 5, the other its last segment."""
    mss = 1448
    rules = [
        {"action": "drop", "packets": "data", "flow": "mid", "nth": [5]},
        {"action": "drop", "packets": "data", "flow": "tail", "nth": [30]},
    ]
    sc = Scenario(10, profile="linux-2.4")
    sc.host("s", "d").router("r")
    sc.link("s", "r", rate="10Mbps", delay="1ms")
    sc.link("r", "d", rate="10Mbps", delay="10ms", queue_ab={"type": "script", "rules": rules})
    sc.flow("s", "d", name="mid", app=bulk(bytes=30 * mss))
    sc.flow("s", "d", name="tail", app=bulk(bytes=30 * mss), start=3.0)
    return sc


def test_timeouts_count_retransmissions_not_caused_by_three_duplicate_acks() -> None:
    flows = Simulation(_two_losses(), seed=1).run().flows
    mid = bulk_side_metrics(flows, "mid", end_s=10.0)
    tail = bulk_side_metrics(flows, "tail", end_s=10.0)
    # A lost segment followed by 25 more: three duplicate ACKs, fast retransmit, no timeout.
    assert (mid["retransmits"], mid["fast_retransmits"], mid["timeouts"]) == (1, 1, 0)
    # A lost last segment: no duplicate ACK at all, so only the retransmission timer resends it.
    assert (tail["retransmits"], tail["fast_retransmits"], tail["timeouts"]) == (1, 0, 1)
    assert mid["complete"] == tail["complete"] == 1.0
    # Goodput counts the 30 segments once, over the time to completion.
    assert mid["goodput_kbps"] == pytest.approx(30 * 1448 * 8 / mid["completion_s"] / 1e3)
    # Waiting for the timer (at least the 200 ms minimum RTO) costs more than a fast retransmit.
    assert tail["completion_s"] > mid["completion_s"] + 0.05
    with pytest.raises(KeyError, match="no flow 'nope'"):
        bulk_side_metrics(flows, "nope", end_s=10.0)
    # r2e's metric: one retransmission among the 31 data packets each flow sent.
    assert retransmit_pct(flows, "mid") == pytest.approx(100 / 31)
    assert retransmit_pct(flows, "tail") == pytest.approx(100 / 31)
    with pytest.raises(KeyError, match="no flow 'nope'"):
        retransmit_pct(flows, "nope")


# ---------------------------------------------------------------------------
# The pilot stage of the study machinery (a toy study)
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ToyParams(StudyParams):
    seeds: int = 1
    #: Chosen by the pilot: the buffer that kept the toy's drops lowest.
    buffer: int = 0
    candidates: tuple[int, ...] = (2, 50)


class ToyStudy(Study):
    """A study whose pilot picks a DropTail buffer; its points then use it."""

    name = "toy"
    title = "toy"
    source = "tests"
    Params = ToyParams
    applied: ClassVar[list[pd.DataFrame]] = []

    def setup(self, params: Any) -> list[tuple[str, str]]:
        return [("buffer", str(params.buffer))]

    def choices(self, params: Any) -> list[Any]:
        return []

    @staticmethod
    def _scenario(buffer: int, rate: str) -> Scenario:
        sc = Scenario(3)
        sc.host("a", "b").router("r")
        sc.link("a", "r", rate="10Mbps", delay="1ms")
        sc.link(
            "r", "b", rate=rate, delay="5ms", queue_ab={"type": "droptail", "limit_packets": buffer}
        )
        sc.flow("a", "b")
        return sc

    def grid(self, params: Any) -> list[dict[str, Any]]:
        return [{"rate": "1Mbps"}, {"rate": "2Mbps"}]

    def scenario(self, params: Any, point: Mapping[str, Any]) -> Scenario:
        if params.buffer == 0:
            raise StudyError("toy: not calibrated")
        return self._scenario(params.buffer, str(point["rate"]))

    @staticmethod
    def derive(results: Any, trace: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
        q = results.queues
        drops = float(q.loc[q["queue_id"] == 0, "drops"].iloc[0])
        return {"metrics": pd.DataFrame([{"drops": drops, "stage": context["stage"]}])}

    def calibration(self, params: Any) -> Calibration | None:
        if params.buffer:
            return None

        def apply(data: StudyData) -> Any:
            frame = data.frame("metrics")
            ToyStudy.applied.append(frame)
            best = frame.sort_values(["drops", "buffer"]).iloc[0]
            return dataclasses.replace(params, buffer=int(best["buffer"]))

        return Calibration(
            points=[{"buffer": b} for b in params.candidates],
            scenario=lambda pt: self._scenario(int(pt["buffer"]), "1Mbps"),
            job=lambda pt: JobSpec(context={"stage": "pilot"}, keep_tables=("queues",)),
            apply=apply,
        )

    def job(self, params: Any, point: Mapping[str, Any]) -> JobSpec:
        return JobSpec(context={"stage": "main"})

    def tables(self, params: Any, data: StudyData) -> dict[str, Any]:
        return {}

    def figures(self, params: Any, data: StudyData) -> dict[str, Any]:
        return {}


def test_a_pilot_stage_runs_first_is_stored_and_chooses_the_parameters(tmp_path: Path) -> None:
    study = ToyStudy()
    ToyStudy.applied.clear()
    params = ToyParams()
    assert studies.estimate_wall_s(study, params) == pytest.approx(4.0)  # 2 pilot + 2 points
    run = studies.run_study(study, params, tmp_path, workers=1, render=False)
    assert run.calibration is not None
    assert run.calibration.sweep.ran == 2
    # apply() saw both pilot runs; the study's points were planned with its choice.
    pilot = ToyStudy.applied[-1]
    assert sorted(pilot["buffer"]) == [2, 50]
    assert set(pilot["stage"]) == {"pilot"}
    chosen = int(pilot.sort_values(["drops", "buffer"]).iloc[0]["buffer"])
    assert run.params.buffer == chosen
    assert run.calibration.params_before.buffer == 0
    assert run.sweep.ran == 2
    spec = Store(tmp_path / "store").run_dir(run.plan.runs[0].key) / "scenario.json"
    resolved = json.loads(spec.read_text(encoding="utf-8"))
    assert resolved["links"][1]["queue_ab"]["limit_packets"] == chosen
    main = StudyData(study, run.plan, Store(tmp_path / "store")).frame("metrics")
    assert set(main["stage"]) == {"main"}
    assert len(main) == 2
    # A second call finds every run, the pilot's included, in the store.
    again = studies.run_study(study, params, tmp_path, workers=1, render=False)
    assert again.calibration is not None
    assert again.calibration.sweep.ran == 0
    assert again.sweep.ran == 0
    assert again.params == run.params
    # Parameters set by hand skip the pilot stage.
    fixed = studies.run_study(study, ToyParams(buffer=chosen), tmp_path, workers=1, render=False)
    assert fixed.calibration is None
    assert fixed.sweep.ran == 0


# ---------------------------------------------------------------------------
# The quick study's output
# ---------------------------------------------------------------------------


def test_quick_study_calibrates_reports_and_repeats_bit_for_bit(tmp_path: Path) -> None:
    study = Rfc2884Study()
    params = studies.resolve_params(study, [], quick=True)
    run = studies.run_study(study, params, tmp_path / "a", workers=1)
    assert run.calibration is not None
    levels = sorted({2, 10})
    assert [lv for lv in levels if run.params.setting(lv) is None] == []
    # Every pilot point: each level x candidate at the one quick max_p.
    assert len(run.calibration.plan.tasks()) == len(levels) * len(params.calibration_min_th)
    tables = {p.stem: pd.read_csv(p) for p in (tmp_path / "a" / "tables").glob("*.csv")}
    assert len(tables["red_settings"]) == len(levels)
    assert len(tables["calibration"]) == len(levels) * len(params.calibration_min_th)
    runs = tables["runs"]
    shares = runs[["red_below", "red_inside", "red_above"]].sum(axis=1)
    assert (abs(shares - 1) < 1e-9).all()
    bulk_runs = runs[runs["experiment"] == "bulk"]
    capacity_kbps = params.bottleneck_mbps * 1e3
    for side in ("ecn", "nonecn"):
        assert (bulk_runs[f"goodput_kbps_{side}"] <= capacity_kbps).all()
        assert (bulk_runs[f"complete_{side}"] == 1).all()
        assert (bulk_runs[f"timeouts_{side}"] <= bulk_runs[f"retransmits_{side}"]).all()
        # Added when the store is read (Study.derived_columns), from the run's flows table.
        pct = bulk_runs[f"retransmit_pct_{side}"]
        assert ((pct >= 0) & (pct < 100)).all()
        assert ((pct > 0) == (bulk_runs[f"retransmits_{side}"] > 0)).all()
    assert "bulk_retransmit_pct" in tables
    # r2e is judged on the bulk runs (one cell per level at the quick grid's one TCP, max_p).
    r2e = tables["findings"].set_index("finding").loc["r2e"]
    assert r2e["verdict"] in ("holds", "does not hold")
    assert r2e["cells_hold"] + r2e["cells_not"] == len(levels)
    # runs.csv keeps 6 significant digits.
    recomputed = bulk_runs["goodput_kbps_ecn"] / bulk_runs["goodput_kbps_nonecn"] - 1
    assert (abs(recomputed - bulk_runs["advantage"]) < 1e-4).all()
    fair = runs[runs["experiment"] == "fairness"]
    assert ((fair["jain"] >= 0.25) & (fair["jain"] <= 1 + 1e-12)).all()
    # Non-ECN flows are never marked; ECN ones are marked, not dropped, below the buffer.
    assert (fair.loc[fair["mode"] == "non-ECN", "marks"] == 0).all()
    tx = runs[runs["experiment"] == "transactional"]
    assert (tx["tps_ecn"] > 0).all()
    assert (tx["tps_nonecn"] > 0).all()
    # The tables are laid out as the RFC's: rows congestion level, columns max_p.
    adv = tables["bulk_advantage"]
    assert adv["congestion"].tolist() == ["low (2)", "high (10)"]
    html = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert "calibration (pilot) runs" in html
    assert "RED thresholds and buffer" in html
    # The same study in another directory: the same numbers, bit for bit.
    studies.run_study(study, params, tmp_path / "b", workers=1)
    again = pd.read_csv(tmp_path / "b" / "tables" / "runs.csv")
    pd.testing.assert_frame_equal(runs, again)
