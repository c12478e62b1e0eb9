"""Studies and sweeps with real Linux hosts (``--emulate``, issue 14 item 7).

Planning, store keys and the side-by-side tables need no root. The runs of an
emulated study are in tests/test_emulation.py (its last section): every test that
emulates is in that one file, which ``--dist loadfile`` keeps on one worker, because
its "nothing left behind" checks see every emulation of this checkout.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ecnsim import _core, studies
from ecnsim.studies.emulated import compare_tables, emulated_seconds, emulation_mapping
from ecnsim.studies.rfc2884 import Rfc2884Study
from ecnsim.sweep import Sweep, SweepSpecError, run_sweep
from ecnsim.sweep.store import Store, run_key

ROOT = Path(__file__).resolve().parent.parent


def quick_emulate_params() -> Any:
    """rfc2884's ``--quick --emulate`` parameters, RED set by hand (no pilot needed)."""
    study = Rfc2884Study()
    params = studies.resolve_params(
        study, ["red_settings=[[2, 5, 15, 30]]"], quick=True, emulate=True
    )
    return study, params


# ---------------------------------------------------------------------------
# Keys, plans, refusals (no root)
# ---------------------------------------------------------------------------


def test_emulated_runs_have_other_keys_and_simulated_keys_are_unchanged() -> None:
    spec = {"simulation": {"duration": 1.0}, "nodes": []}
    version = _core.__version__
    sim = run_key(spec, 1, version)
    assert sim == run_key(spec, 1, version, "simulation")
    # The formula of stores written before emulation existed (no mode in the key).
    import hashlib

    from ecnsim.sweep.store import canonical_json

    old = canonical_json({"ecnsim_version": version, "seed": 1, "spec": spec})
    assert sim == hashlib.sha256(old.encode()).hexdigest()
    assert run_key(spec, 1, version, "emulation") != sim
    with pytest.raises(ValueError, match="mode must be one of simulation, emulation"):
        run_key(spec, 1, version, "emulated")


def test_study_plans_of_the_two_modes_share_no_key() -> None:
    study, params = quick_emulate_params()
    sim = studies.plan_study(study, params)
    emu = studies.plan_study(study, params, mode="emulation")
    assert (sim.name, emu.name) == ("study-rfc2884", "study-rfc2884-emulation")
    assert (sim.mode, emu.mode) == ("simulation", "emulation")
    assert len(sim.runs) == len(emu.runs) == 4
    assert not {r.key for r in sim.runs} & {r.key for r in emu.runs}
    assert {t.mode for t in emu.tasks()} == {"emulation"}
    assert emu.definition()["mode"] == "emulation"


def test_quick_emulate_adds_up_to_about_a_minute_of_real_time() -> None:
    study, params = quick_emulate_params()
    # Fixed before any run: four runs of 12-14 s plus their set-up.
    assert 45 <= emulated_seconds(study, params) <= 75
    quick = studies.resolve_params(study, [], quick=True)
    assert emulated_seconds(study, quick) > 300  # why --quick alone is not the emulated one


def test_rfc2884_maps_onto_real_hosts_with_nothing_refused() -> None:
    study = Rfc2884Study()
    params = studies.resolve_params(study, [], quick=True, emulate=True)  # RED not chosen yet
    mapping, refused = emulation_mapping(study, params)
    assert refused == []
    rows = mapping.to_dict("records")
    approximate = {r["parameter"] for r in rows if r["status"] == "approximate"}
    assert approximate <= {"rcv_window", "rcv_window, max_cwnd"}
    cc = {r["linux"].split(" (")[0] for r in rows if r["parameter"] == "cc"}
    assert "TCP_CONGESTION reno" in cc
    assert "net.ipv4.tcp_sack = 0" in cc  # --quick runs reno only: SACK off
    assert any(r["parameter"] == "initial_rto" and r["status"] == "not mapped" for r in rows)
    ecn = {(r["host"], r["linux"]) for r in rows if r["parameter"] == "ecn"}
    assert ("ecn_on", "net.ipv4.tcp_ecn = 1") in ecn
    assert ("ecn_off", "net.ipv4.tcp_ecn = 0") in ecn


def test_emulated_plan_refuses_what_cannot_be_emulated_naming_point_and_field() -> None:
    sweep = Sweep(
        str(ROOT / "examples/emulate_red_ecn.toml"),
        grid={"links[0].queue": [{"type": "droptail", "limit_packets": 50}, {"type": "aecn"}]},
    )
    sweep.plan()  # simulated: both are fine
    with pytest.raises(SweepSpecError, match=r"point 1 .*aecn.*cannot be emulated"):
        sweep.plan(mode="emulation")


def test_emulated_sweeps_run_one_at_a_time(tmp_path: Path) -> None:
    sweep = Sweep(str(ROOT / "examples/emulate_red_ecn.toml"))
    plan = sweep.plan(mode="emulation")
    for kwargs in ({"jobs": 2}, {"executor": "process"}, {"dask": "local"}):
        with pytest.raises(ValueError, match="one at a time, in real time"):
            run_sweep(plan, Store(tmp_path / "s"), **kwargs)


class _FakeData:
    """Just what :func:`compare_tables` reads of a StudyData."""

    def __init__(self, frame: pd.DataFrame, axes: list[str]) -> None:
        self._frame, self.axes = frame, axes

    def frame(self, name: str) -> pd.DataFrame:
        return self._frame

    def order(self) -> dict[str, list[Any]]:
        return {a: list(dict.fromkeys(self._frame[a].dropna())) for a in self.axes}


def test_compare_tables_put_both_modes_and_the_difference_side_by_side() -> None:
    sim = pd.DataFrame(
        {
            "experiment": ["bulk", "bulk", "crr"],
            "max_p": [0.1, 0.1, 0.1],
            "mode": [None, None, None],
            "seed": [1, 2, 1],
            "goodput": [10.0, 14.0, math.nan],
            "tps": [math.nan, math.nan, 5.0],
        }
    )
    emu = pd.DataFrame(
        {
            "experiment": ["bulk", "crr"],
            "max_p": [0.1, 0.1],
            "mode": [None, None],
            "seed": [1, 1],
            "goodput": [11.0, math.nan],
            "tps": [math.nan, 4.0],
        }
    )
    axes = ["experiment", "max_p", "mode"]
    tables = compare_tables(_FakeData(sim, axes), _FakeData(emu, axes))  # type: ignore[arg-type]
    assert set(tables) == {"compare_goodput", "compare_tps"}
    g = tables["compare_goodput"].mean
    assert list(g.columns) == ["simulated", "emulated", "emulated - simulated"]
    assert g.index.names == ["experiment", "max_p"]  # the all-empty axis is left out
    assert g.iloc[0].tolist() == pytest.approx([12.0, 11.0, -1.0])
    assert len(g) == 1  # the crr point has no goodput in either mode
    assert tables["compare_tps"].mean.iloc[0].tolist() == pytest.approx([5.0, 4.0, -1.0])


def test_cli_study_show_emulate_prints_the_mapping_and_real_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ecnsim.cli import main

    assert main(["study", "show", "rfc2884", "--quick", "--emulate"]) == 0
    out = capsys.readouterr().out
    assert "With --emulate" in out
    assert "TCP variants" in out
    assert "Background start times" in out
    assert "initial_rto" in out
    assert "one at a time in real time" in out
    assert "cannot be emulated" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["study", "run", "rfc2884", "--quick", "--emulate"],
        ["sweep", str(ROOT / "examples/sweep_buffers.toml"), "--emulate"],
    ],
)
def test_cli_refuses_clearly_when_not_root(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    # emulate's own check, as that user, before anything runs or is written.
    from ecnsim.cli import main

    monkeypatch.setattr(os, "geteuid", lambda: 65534)
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 3
    assert "not root: run as root" in capsys.readouterr().err
    assert not out.exists()
