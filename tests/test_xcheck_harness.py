"""The cross-check harnesses of issue 32 item 7 (CUBIC and DCTCP against ns-3's
TcpCubic and TcpDctcp, ``validation/ns3_modern_cc``; CUBIC against Linux's
tcp_cubic through ``ecnsim emulate``, ``validation/linux_cubic``).

The fast tests (CI) check that each harness's scenarios are the grid the issue
asks for, that every band is well formed and means what it says, that every
ecnsim scenario validates, and that the ns-3 descriptions use only keys the ns-3
script knows; and ecnsim today against ns-3's recorded output for three 10 Mb/s
scenarios (no ns-3 needed), one of them the CUBIC timeout loop of issue 32 item 1
(``cubic_timeout``), which the ecnsim setting ns-3 matches has fixed. Running ns-3
(``pytest -m ns3``) or Linux through emulation (root, ``pytest -m linux``) is
deselected by default.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
VALIDATION = ROOT / "validation"


def _load(path: Path, name: str) -> ModuleType:
    """Import ``path`` as ``name`` with its directory first on sys.path (each harness has its
    own ``scenarios`` module)."""
    sys.path.insert(0, str(path.parent))
    try:
        for stale in ("scenarios", "compare"):
            sys.modules.pop(stale, None)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(path.parent))


NS3_SCEN = _load(VALIDATION / "ns3_modern_cc" / "scenarios.py", "xc_ns3_scenarios")
NS3_CMP = _load(VALIDATION / "ns3_modern_cc" / "compare.py", "xc_ns3_compare")
LNX_SCEN = _load(VALIDATION / "linux_cubic" / "scenarios.py", "xc_linux_scenarios")
LNX_CMP = _load(VALIDATION / "linux_cubic" / "compare.py", "xc_linux_compare")
NS3_SCRIPT = _load(VALIDATION / "ns3" / "ns3_dumbbell.py", "xc_ns3_dumbbell")

KINDS = {"rel": 2, "abs": 2, "rel_or_abs": 3}


@pytest.mark.parametrize("mod", [NS3_SCEN, LNX_SCEN], ids=["ns3", "linux"])
def test_grid_is_the_issues(mod: ModuleType) -> None:
    ids = [s["id"] for s in mod.scenarios()]
    assert len(ids) == len(set(ids))
    assert {s["n"] for s in mod.scenarios()} == {1, 2, 4}
    assert {s["rate"] for s in mod.scenarios()} == {10e6, 100e6}
    assert {s["rtt"] for s in mod.scenarios()} == {0.020, 0.100}
    for s in mod.scenarios():
        # base RTT = 2 x bottleneck delay + 4 x 1 ms access
        assert math.isclose(2 * s["bottleneck_delay"] + 4 * mod.ACCESS_DELAY, s["rtt"])
        assert s["buffer"] >= 1
    assert 0 < mod.WARMUP < mod.DURATION


def _bands(mod: ModuleType) -> list[tuple[str, tuple[Any, ...]]]:
    if mod is NS3_SCEN:
        return [(f"{a}.{k}", b) for a, bands in mod.BANDS.items() for k, b in bands.items()]
    return list(mod.BANDS.items())


@pytest.mark.parametrize("mod", [NS3_SCEN, LNX_SCEN], ids=["ns3", "linux"])
def test_bands_are_well_formed(mod: ModuleType) -> None:
    for name, band in _bands(mod):
        assert band[0] in KINDS, name
        assert len(band) == KINDS[band[0]], name
        assert all(isinstance(x, (int, float)) and x > 0 for x in band[1:]), name
        if band[0] != "abs":
            assert band[1] < 1, f"{name}: a relative band of 100 % or more checks nothing"
        assert mod.band_text(band).startswith("±")


@pytest.mark.parametrize("mod", [NS3_SCEN, LNX_SCEN], ids=["ns3", "linux"])
def test_within_means_what_the_band_says(mod: ModuleType) -> None:
    assert mod.within(("rel", 0.03), 103.0, 100.0)
    assert not mod.within(("rel", 0.03), 103.1, 100.0)
    assert mod.within(("abs", 10), -10.0, 0.0)
    assert not mod.within(("abs", 10), 10.5, 0.0)
    # rel_or_abs: the wider of the two
    assert mod.within(("rel_or_abs", 0.25, 2.0), 3.9, 2.0)
    assert not mod.within(("rel_or_abs", 0.25, 2.0), 4.1, 2.0)
    assert mod.within(("rel_or_abs", 0.25, 2.0), 124.0, 100.0)
    assert not mod.within(("rel_or_abs", 0.25, 2.0), 126.0, 100.0)
    assert not mod.within(("rel", 0.5), math.nan, 1.0)
    with pytest.raises(ValueError, match="unknown band kind"):
        mod.within(("ratio", 1.0), 1.0, 1.0)


def test_every_banded_metric_is_computed() -> None:
    """Each band names a metric the harness computes (a typo would leave a check unrun)."""
    for algo, bands in NS3_SCEN.BANDS.items():
        sc = next(s for s in NS3_SCEN.scenarios() if s["algo"] == algo and s["n"] == 2)
        m = NS3_CMP.metrics(sc, _fake_side(sc["n"], NS3_SCEN.DURATION, NS3_SCEN.SAMPLE))
        assert set(bands) <= set(m), algo
    sc = next(s for s in LNX_SCEN.scenarios() if s["n"] == 2)
    m = LNX_CMP.metrics(sc, _fake_side(2, LNX_SCEN.DURATION, LNX_SCEN.SAMPLE))
    assert set(LNX_SCEN.BANDS) <= set(m)


def _fake_side(n: int, duration: float, dt: float) -> dict[str, Any]:
    times = [round(k * dt, 6) for k in range(int(duration / dt) + 1)]
    return {
        "goodput": [4e6, 4e6][:n] + [2e6] * (n - 2),
        "retx": 30,
        "recoveries": 10,
        "timeouts": 2,
        "ecn_reductions": 0,
        "marks": 40,
        "drops": 30,
        "queue_series": {t: 5.0 for t in times},
        # flow i's cwnd alternates between 10 and 20 segments
        "cwnd_series": [{t: 10.0 + 10.0 * (k % 2) for k, t in enumerate(times)} for _ in range(n)],
    }


def test_metrics_on_a_known_input() -> None:
    sc = next(s for s in NS3_SCEN.scenarios() if s["algo"] == "cubic" and s["n"] == 2)
    m = NS3_CMP.metrics(sc, _fake_side(2, NS3_SCEN.DURATION, NS3_SCEN.SAMPLE))
    span = NS3_SCEN.DURATION - NS3_SCEN.WARMUP
    assert m["goodput"] == 8e6
    assert m["jain"] == pytest.approx(1.0)
    assert m["events_per_s"] == pytest.approx(12 / span)
    assert m["queue_mean"] == 5.0
    assert m["cwnd_total"] == pytest.approx(30.0, abs=0.1)
    assert m["cwnd_swing"] == pytest.approx(10.0)
    unequal = _fake_side(2, NS3_SCEN.DURATION, NS3_SCEN.SAMPLE)
    unequal["goodput"] = [6e6, 2e6]
    assert NS3_CMP.metrics(sc, unequal)["jain"] == pytest.approx(0.8)


def test_ecnsim_scenarios_validate() -> None:
    import ecnsim

    for sc in NS3_SCEN.scenarios():
        NS3_CMP.ecnsim_scenario(sc).check()
    for sc in LNX_SCEN.scenarios():
        ecnsim.Scenario.from_dict(LNX_CMP.scenario_dict(sc)).check()


def test_ns3_descriptions_use_known_keys() -> None:
    for sc in NS3_SCEN.scenarios():
        for variant in (None, "hystart"):
            cfg = NS3_CMP.ns3_config(sc, variant)
            assert set(cfg) - {"tcp", "name"} <= set(NS3_SCRIPT.DEFAULTS)
            assert set(cfg["tcp"]) <= set(NS3_SCRIPT.TCP_DEFAULTS)
            assert set(cfg.get("queue") or {}) <= set(NS3_SCRIPT.QUEUE_DEFAULTS)
            assert cfg["n_flows"] == len(cfg["start"]) == sc["n"]


def _ns3_python() -> str | None:
    exe = os.environ.get("NS3_PYTHON")
    if exe and shutil.which(exe):
        return exe
    return None


@pytest.mark.ns3
@pytest.mark.skipif(_ns3_python() is None, reason="set NS3_PYTHON to the ns-3 venv's python")
def test_ns3_dctcp_one_flow_agrees() -> None:
    """The cheapest scenario both sides run in seconds; its bands must hold
    (docs/validation.md, "CUBIC and DCTCP against ns-3")."""
    env = {**os.environ, "NS3_PYTHON": str(_ns3_python())}
    p = subprocess.run(
        [sys.executable, str(VALIDATION / "ns3_modern_cc" / "compare.py"), "--only",
         "dctcp-10M-20ms-1", "--jobs", "1"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=900,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr


def _emulation_problem() -> str | None:
    try:
        from ecnsim.emulation import NamespaceError, check_environment

        try:
            check_environment()
        except NamespaceError as e:
            return str(e)
    except ImportError as e:  # pragma: no cover
        return str(e)
    return None


@pytest.mark.linux
@pytest.mark.skipif(_emulation_problem() is not None, reason=str(_emulation_problem()))
def test_linux_cubic_two_flows_agree() -> None:
    """Two CUBIC flows, 10 Mb/s, 20 ms, DropTail: the aggregate bands of the Linux
    cross-check hold (40 s of real time; docs/validation.md, "CUBIC against Linux's
    tcp_cubic"). Only goodput, mean queue and summed cwnd: Linux's per-flow swing and
    counts vary from run to run (this scenario's swing was 11.6 segments in the recorded
    run and 14.1 in the next, out of band), so one emulated run decides them by chance."""
    sc = next(s for s in LNX_SCEN.scenarios() if s["id"] == "droptail-10M-20ms-2")
    e = LNX_CMP.metrics(sc, LNX_CMP.run_sim(sc))
    n = LNX_CMP.metrics(sc, LNX_CMP.run_linux(sc))
    aggregate = ("goodput", "queue_mean", "cwnd_total")
    bands = LNX_SCEN.BANDS
    out = {k: (e[k], n[k]) for k in aggregate if not LNX_SCEN.within(bands[k], e[k], n[k])}
    assert not out, f"out of band (ecnsim, Linux): {out}"


def _saved_ns3() -> dict[str, Any]:
    import json

    path = VALIDATION / "ns3_modern_cc" / "results" / "ns3_10M.json"
    return {o["config"]["name"]: o for o in json.loads(path.read_text())}


def _out_of_band(sid: str) -> dict[str, tuple[float, float]]:
    sc = next(s for s in NS3_SCEN.scenarios() if s["id"] == sid)
    e = NS3_CMP.metrics(sc, NS3_CMP.run_ecnsim(sc))
    n = NS3_CMP.metrics(sc, NS3_CMP.from_ns3(sc, _saved_ns3()[sid]))
    bands = NS3_SCEN.BANDS[sc["algo"]]
    return {
        k: (e[k], n[k]) for k, b in bands.items() if k in e and not NS3_SCEN.within(b, e[k], n[k])
    }


@pytest.mark.parametrize(
    "sid",
    [
        "dctcp-10M-20ms-1",
        "cubic-10M-20ms-2",
        # The CUBIC + SACK timeout loop (issue 32 item 1), fixed by `cubic_timeout = "linux"`.
        "cubic-10M-20ms-1",
    ],
)
def test_ecnsim_against_recorded_ns3(sid: str) -> None:
    """ecnsim today against ns-3's recorded output (no ns-3 needed; ~2 s each): the
    scenarios whose every band held when the comparison ran."""
    out = _out_of_band(sid)
    assert not out, f"out of band (ecnsim, ns-3): {out}"


@pytest.mark.parametrize(("profile", "mss"), [("linux", 1460), ("linux-6.x", 1448)])
def test_linux_side_counts_windows_in_the_runs_own_mss(profile: str, mss: int) -> None:
    """Windows are in segments of the run's own MSS (``linux``: 1460 with 40-byte headers, which
    the emulated hosts take as ``advmss`` with timestamps off; ``linux-6.x``: 1448 with the
    timestamps' 12 more), not a fixed 1448: a ``linux`` run read at 1448 B showed every window
    0.8 % large. A side saved before ``cwnd_mss`` existed is rescaled from 1448 to 1460."""
    import ecnsim

    sc = next(s for s in LNX_SCEN.scenarios() if s["id"] == "droptail-10M-20ms-2")
    saved = LNX_CMP.PROFILE[0]
    LNX_CMP.PROFILE[0] = profile
    try:
        sim = ecnsim.Simulation(ecnsim.Scenario.from_dict(LNX_CMP.scenario_dict(sc)))
        sim.run()
    finally:
        LNX_CMP.PROFILE[0] = saved
    assert LNX_CMP.flow_mss(sim.results, 2) == [mss, mss]
    side = LNX_CMP.side(sim.results, 2)
    assert side["cwnd_mss"] == [mss, mss]
    fs = sim.results.flow_series
    part = fs[fs["flow"] == "f1"]
    t, c = float(part["time_s"].iloc[-1]), float(part["cwnd_bytes"].iloc[-1])
    assert side["cwnd_series"][1][round(t, 6)] == pytest.approx(c / mss)
    # Through JSON, as --save-linux writes it: unchanged with its cwnd_mss, rescaled without.
    import json

    saved_side = json.loads(json.dumps(side))
    m = LNX_CMP.metrics(sc, saved_side)
    assert m["cwnd_total"] == pytest.approx(LNX_CMP.metrics(sc, side)["cwnd_total"])
    legacy = {k: v for k, v in saved_side.items() if k != "cwnd_mss"}
    assert LNX_CMP.metrics(sc, legacy)["cwnd_total"] == pytest.approx(m["cwnd_total"] * 1448 / 1460)
