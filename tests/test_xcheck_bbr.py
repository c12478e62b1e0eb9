"""BBR's cross-check harnesses (issue 32 item 7): ecnsim's BBR against Linux's tcp_bbr
through ``ecnsim emulate`` (``validation/linux_bbr``) and against ns-3's TcpBbr
(``validation/ns3_bbr``).

The fast tests (CI) check that each grid is the issue's (DropTail; 10 and 100 Mb/s; 20
and 100 ms; 1, 2, 4 flows), that every band is well formed and names a metric the
harness computes, that every ecnsim scenario validates and runs BBR, and that the ns-3
descriptions ask for TcpBbr with keys the ns-3 script knows. Running ns-3 (``pytest -m
ns3``) or Linux (root, ``pytest -m linux``) is deselected by default.
"""

from __future__ import annotations

import importlib.util
import json
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
    sys.modules.pop("scenarios", None)  # each harness imports its own by that name
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LNX = _load(VALIDATION / "linux_bbr" / "compare.py", "xb_linux_bbr_compare")
NS3 = _load(VALIDATION / "ns3_bbr" / "compare.py", "xb_ns3_bbr_compare")
NS3_SCRIPT = _load(VALIDATION / "ns3" / "ns3_dumbbell.py", "xb_ns3_dumbbell")
KINDS = {"rel": 2, "abs": 2, "rel_or_abs": 3}


def _bands(scen: ModuleType) -> dict[str, tuple[Any, ...]]:
    bands: dict[str, tuple[Any, ...]] = scen.BANDS.get("bbr", scen.BANDS)
    return bands


@pytest.mark.parametrize("cmp", [LNX, NS3], ids=["linux", "ns3"])
def test_grid_is_the_issues(cmp: ModuleType) -> None:
    scen = cmp.scenarios
    # ns3_bbr's many-flow rows come after the issue's grid (the next test)
    scs = [s for s in scen.scenarios() if not s.get("many")]
    assert len(scs) == 12
    assert len({s["id"] for s in scs}) == 12
    assert {s["n"] for s in scs} == {1, 2, 4}
    assert {s["rate"] for s in scs} == {10e6, 100e6}
    assert {s["rtt"] for s in scs} == {0.020, 0.100}
    for s in scs:
        assert math.isclose(2 * s["bottleneck_delay"] + 4 * scen.ACCESS_DELAY, s["rtt"])
        # DropTail of one BDP
        assert s["buffer"] == scen.bdp_packets(s["rate"], s["rtt"])
    assert 0 < scen.WARMUP < scen.DURATION


def test_ns3_many_flow_rows_are_the_dumbbell_100_benchmarks_network() -> None:
    """``bbr-many-100M-100ms-100`` is ``ecnsim bench dumbbell-100``'s network (rates, delays,
    DropTail limit, starts) in the harness; ``bbr-many-20M-100ms-20`` the same at 20 Mb/s and
    20 flows. Both take the grid's bands (``BANDS["bbr"]``), and their ids select neither
    each other nor a grid row by prefix (``--only bbr-100M`` stays the grid's six)."""
    from ecnsim.cli.bench import BENCHMARKS
    from ecnsim.emulation.plan import parse_seconds
    from ecnsim.scenario.topology import rate_bps

    scen = NS3.scenarios
    many = {s["id"]: s for s in scen.scenarios() if s.get("many")}
    assert set(many) == {"bbr-many-20M-100ms-20", "bbr-many-100M-100ms-100"}
    bench = BENCHMARKS["dumbbell-100"].build().to_dict()
    links = {lk["name"]: lk for lk in bench["links"]}
    bn = links["bottleneck"]
    for sc in many.values():
        assert sc["algo"] == "bbr"
        assert sc["access_delay"] == parse_seconds(links["s0"]["delay"], "s0")
        assert sc["bottleneck_delay"] == parse_seconds(bn["delay"], "bottleneck")
        assert math.isclose(2 * sc["bottleneck_delay"] + 4 * sc["access_delay"], sc["rtt"])
        # one BDP by the benchmark's rule (1500-byte packets)
        assert sc["buffer"] == round(sc["rate"] * sc["rtt"] / (8 * 1500))
        assert sc["starts"] == [round(0.01 * i, 6) for i in range(sc["n"])]
        d = NS3.ecnsim_scenario(sc).to_dict()
        assert {lk["delay"] for lk in d["links"][1:]} == {sc["access_delay"]}
        cfg = NS3.ns3_config(sc)
        assert cfg["access_delay"] == sc["access_delay"]
        assert cfg["bottleneck_delay"] == sc["bottleneck_delay"]
        assert cfg["start"] == sc["starts"]
        # ns-3's send buffer bounded (scenarios.MANY_NS3_SND_BUF: 1 GiB x 100 sockets)
        assert cfg["tcp"]["snd_buf"] == scen.MANY_NS3_SND_BUF
    sc = many["bbr-many-100M-100ms-100"]
    assert sc["n"] == len(bench["flows"]) == 100
    assert sc["rate"] == rate_bps(bn["rate"])
    assert sc["buffer"] == bn["queue"]["limit_packets"] == 833
    bench_starts = [parse_seconds(f["start"], "start") for f in bench["flows"]]
    assert sc["starts"] == pytest.approx(bench_starts, abs=1e-9)
    assert rate_bps(links["s0"]["rate"]) == scen.ACCESS_RATE
    for prefix in ("bbr-100M", "bbr-10M", "bbr-100M-100ms-1"):
        assert not [i for i in many if i.startswith(prefix)], prefix
    # the grid's rows keep the grid's access delay and ns3_dumbbell.py's send buffer
    for s in scen.scenarios():
        if not s.get("many"):
            assert NS3.ns3_config(s)["access_delay"] == scen.ACCESS_DELAY
            assert "snd_buf" not in NS3.ns3_config(s)["tcp"]


def test_ns3_nosack_variant_turns_ns3s_sack_off_only() -> None:
    sc = next(s for s in NS3.scenarios.scenarios() if s.get("many"))
    assert NS3.ns3_config(sc)["tcp"]["sack"] is True
    v = NS3.ns3_config(sc, "nosack")
    assert v["tcp"]["sack"] is False
    # Limited Transmit too: ns-3 3.44 aborts without SACK and without it (compare.py)
    assert v["tcp"]["limited_transmit"] is True
    assert NS3.ns3_config(sc)["tcp"].get("limited_transmit", False) is False
    changed = ("sack", "limited_transmit")
    same = {k: x for k, x in v["tcp"].items() if k not in changed}
    assert same == {k: x for k, x in NS3.ns3_config(sc)["tcp"].items() if k not in changed}
    assert NS3.base.VARIANTS == ["nosack"]


@pytest.mark.parametrize("cmp", [LNX, NS3], ids=["linux", "ns3"])
def test_bands_are_well_formed(cmp: ModuleType) -> None:
    for name, band in _bands(cmp.scenarios).items():
        assert band[0] in KINDS, name
        assert len(band) == KINDS[band[0]], name
        assert all(isinstance(x, (int, float)) and x > 0 for x in band[1:]), name
        if band[0] != "abs":
            assert band[1] < 1, f"{name}: a relative band of 100 % or more checks nothing"
    w = cmp.scenarios.within
    assert w(("rel_or_abs", 0.25, 2.0), 3.9, 2.0)
    assert not w(("rel_or_abs", 0.25, 2.0), 126.0, 100.0)
    assert not w(("rel", 0.5), math.nan, 1.0)


def _fake_side(n: int, duration: float, dt: float) -> dict[str, Any]:
    times = [round(k * dt, 6) for k in range(int(duration / dt) + 1)]
    return {
        "goodput": [4e6] * n,
        "retx": 30,
        "recoveries": 10,
        "timeouts": 2,
        "ecn_reductions": 0,
        "marks": 0,
        "drops": 30,
        "queue_series": {t: 5.0 for t in times},
        "cwnd_series": [{t: 10.0 + 10.0 * (k % 2) for k, t in enumerate(times)} for _ in range(n)],
    }


@pytest.mark.parametrize("cmp", [LNX, NS3], ids=["linux", "ns3"])
def test_every_banded_metric_is_computed(cmp: ModuleType) -> None:
    scen = cmp.scenarios
    sc = next(s for s in scen.scenarios() if s["n"] == 2)
    m = cmp.base.metrics(sc, _fake_side(2, scen.DURATION, scen.SAMPLE))
    assert set(_bands(scen)) <= set(m)
    if cmp is NS3:
        # BBR's congestion events are fast recoveries + timeouts
        assert m["events_per_s"] == pytest.approx(12 / (scen.DURATION - scen.WARMUP))
        assert not set(scen.INFO) & set(m)  # the grid's rows print no unbanded metrics
        many = next(s for s in scen.scenarios() if s.get("many"))
        side = _fake_side(many["n"], scen.DURATION, scen.SAMPLE)
        side["goodput"] = [1e6 * (i + 1) for i in range(many["n"])]
        m = cmp.base.metrics(many, side)
        assert set(_bands(scen)) | set(scen.INFO) <= set(m)
        assert (m["flow_min"], m["flow_max"]) == (1e6, 1e6 * many["n"])
        assert m["drops_per_s"] == pytest.approx(30 / (scen.DURATION - scen.WARMUP))


def test_ecnsim_scenarios_validate_and_run_bbr() -> None:
    import ecnsim

    for sc in LNX.scenarios.scenarios():
        d = LNX.scenario_dict(sc)
        assert d["tcp"]["cc"] == "bbr"
        ecnsim.Scenario.from_dict(d).check()
    for sc in NS3.scenarios.scenarios():
        s = NS3.ecnsim_scenario(sc)
        assert s.to_dict()["tcp"]["cc"] == "bbr"
        assert not any(k.startswith("cubic_") for k in s.to_dict()["tcp"])
        s.check()


def test_the_cubic_harness_is_left_as_it_was() -> None:
    """Loading the BBR harness patches its own copy of the CUBIC harness, not the CUBIC one."""
    cubic = _load(VALIDATION / "linux_cubic" / "compare.py", "xb_linux_cubic_compare")
    sc = cubic.scenarios.scenarios()[0]
    assert cubic.scenario_dict(sc)["tcp"]["cc"] == "cubic"


def test_ns3_descriptions_ask_for_tcpbbr_with_known_keys() -> None:
    for sc in NS3.scenarios.scenarios():
        cfg = NS3.ns3_config(sc)
        assert cfg["tcp"]["cc"] == "Bbr"
        assert cfg["ns3_defaults"]["ns3::TcpSocketState::EnablePacing"] == "true"
        assert set(cfg) - {"tcp", "name"} <= set(NS3_SCRIPT.DEFAULTS)
        assert set(cfg["tcp"]) <= set(NS3_SCRIPT.TCP_DEFAULTS)
        assert cfg.get("queue") is None  # DropTail of queue_packets
        assert cfg["queue_packets"] == sc["buffer"]
        assert cfg["n_flows"] == len(cfg["start"]) == sc["n"]


def test_a_row_missing_from_the_recorded_ns3_runs_is_named_with_how_to_record_it(
    tmp_path: Path,
) -> None:
    """`--ns3-json` without a selected row: an error naming the row and the command that records
    it, before any simulation runs (not a KeyError)."""
    import json

    saved = json.loads((VALIDATION / "ns3_bbr" / "results" / "ns3_10M.json").read_text())
    f = tmp_path / "ns3.json"
    f.write_text(json.dumps([o for o in saved if o["config"]["name"] == "bbr-10M-20ms-1"]))
    with pytest.raises(SystemExit) as e:
        NS3.base.main(["compare.py", "--only", "bbr-10M-20ms", "--ns3-json", str(f)])
    msg = str(e.value)
    assert "no recorded ns-3 run for bbr-10M-20ms-2, bbr-10M-20ms-4" in msg
    assert "(it has bbr-10M-20ms-1)" in msg
    assert "--only bbr-10M-20ms-2 --only bbr-10M-20ms-4 --save-ns3 NEW.json" in msg


def _ns3_python() -> str | None:
    exe = os.environ.get("NS3_PYTHON")
    if exe and shutil.which(exe):
        return exe
    return None


@pytest.mark.ns3
@pytest.mark.skipif(_ns3_python() is None, reason="set NS3_PYTHON to the ns-3 venv's python")
def test_ns3_bbr_one_flow_agrees() -> None:
    """One BBR flow, 10 Mb/s, 20 ms: every band of the ns-3 cross-check holds
    (docs/validation.md, "BBR against ns-3's TcpBbr")."""
    env = {**os.environ, "NS3_PYTHON": str(_ns3_python())}
    p = subprocess.run(
        [sys.executable, str(VALIDATION / "ns3_bbr" / "compare.py"), "--only",
         "bbr-10M-20ms-1", "--jobs", "1"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800,
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
def test_linux_bbr_one_flow_agrees() -> None:
    """One BBR flow, 10 Mb/s, 20 ms, DropTail: goodput, mean queue and summed cwnd of the
    Linux cross-check hold (40 s of real time; docs/validation.md, "BBR against Linux's
    tcp_bbr")."""
    sc = next(s for s in LNX.scenarios.scenarios() if s["id"] == "bbr-10M-20ms-1")
    e = LNX.base.metrics(sc, LNX.run_sim(sc))
    n = LNX.base.metrics(sc, LNX.base.run_linux(sc))
    bands = LNX.scenarios.BANDS
    aggregate = ("goodput", "queue_mean", "cwnd_total")
    out = {k: (e[k], n[k]) for k in aggregate if not LNX.scenarios.within(bands[k], e[k], n[k])}
    assert not out, f"out of band (ecnsim, Linux): {out}"


@pytest.mark.parametrize("profile", ["linux", "linux-6.x"])
def test_every_profile_the_linux_harness_offers_runs_against_the_recorded_runs(
    profile: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--profile`` offers ``linux-6.x``, whose check adds ``RACK_BANDS``: each choice runs a
    row to its verdict against ``results/linux.json`` (it once raised AttributeError)."""
    # The harness keeps its profile in a module-level list: the other tests keep theirs.
    monkeypatch.setattr(LNX.base, "PROFILE", list(LNX.base.PROFILE))
    recorded = VALIDATION / "linux_bbr" / "results" / "linux.json"
    argv = ["compare.py", "--linux-json", str(recorded), "--profile", profile, "--only"]
    code = LNX.main([*argv, "bbr-10M-20ms-1"])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert "banded checks" in out
    assert ("rto_per_s" in out) == (profile == "linux-6.x"), out


@pytest.mark.parametrize(
    ("recorded", "extra"),
    [
        ("ns3_many.json", []),
        ("ns3_many.json", ["--profile", "linux-6.x"]),
        ("ns3_many_nosack.json", ["--variant", "nosack", "--ecnsim-tcp", 'recovery="newreno"']),
    ],
    ids=["verdict", "profile-linux-6.x", "variant-nosack"],
)
def test_the_many_flow_row_runs_against_the_recorded_ns3_runs(
    recorded: str, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``bbr-many-20M-100ms-20`` (2 s of ecnsim) against its recorded ns-3 run, as checked, under
    ``--profile linux-6.x`` and as the ``nosack`` variant: banded rows, a verdict only for the
    checked setting, and the unbanded ``INFO`` rows."""
    path = VALIDATION / "ns3_bbr" / "results" / recorded
    argv = ["compare.py", "--only", "bbr-many-20M", "--ns3-json", str(path), *extra]
    saved = dict(NS3.base.ECNSIM_TCP)
    try:
        code = NS3.base.main(argv)
    finally:
        NS3.base.ECNSIM_TCP.clear()
        NS3.base.ECNSIM_TCP.update(saved)
        NS3.base.PROFILE[0] = None
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert ("banded checks" in out) == (not extra), out
    assert ("(variant)" in out) == bool(extra), out
    for name in NS3.scenarios.INFO:
        assert f"| bbr-many-20M-100ms-20 | {name} |" in out, out


def test_linux_many_flow_rows_are_recorded_and_selected_alone() -> None:
    """linux_bbr's many-flow rows (``MANY``): one BDP of DropTail like the grid's, Linux's side
    recorded for every row of the harness, and no row's id a prefix of another's (``--only
    bbr-10M-100ms-1`` once selected ``bbr-10M-100ms-10`` too)."""
    scen = LNX.scenarios
    rows = scen.scenarios()
    many = [s for s in rows if s.get("many")]
    assert {(s["rate"], s["rtt"], s["n"]) for s in many} == set(scen.MANY)
    for s in many:
        assert s["buffer"] == scen.bdp_packets(s["rate"], s["rtt"])
    ids = [s["id"] for s in rows]
    assert not [(a, b) for a in ids for b in ids if a != b and b.startswith(a)]
    recorded = json.loads((VALIDATION / "linux_bbr" / "results" / "linux.json").read_text())
    assert set(ids) <= set(recorded), set(ids) - set(recorded)


def test_linux_sim_side_models_the_emulated_hosts_gso() -> None:
    # The emulated Linux hosts send GSO frames (TUN devices, gso_max_size 64 KB): the simulated
    # side gets tso_segments = 65536 // 1448 (docs/models/bbr.md, "Offload frames"); the Linux
    # side's scenario does not carry it.
    sc = LNX.scenarios.scenarios()[0]
    assert LNX.scenario_dict(sc, variant=True)["tcp"]["tso_segments"] == 65536 // 1448
    assert "tso_segments" not in LNX.scenario_dict(sc)["tcp"]
