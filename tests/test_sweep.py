"""Sweeps: the spec, executors (serial, process pool, Dask) agreeing bit for bit, resuming
after a real SIGKILL or SIGINT, rerunning corrupt results, and aggregation."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecnsim import Simulation, SpecError
from ecnsim.analysis.aggregate import aggregate, run_metrics, summary_table, t_quantile
from ecnsim.cli import main as cli_main
from ecnsim.sweep import ANY, Sweep, SweepSpecError, parse_path, run_sweep, set_path
from ecnsim.sweep.store import Store

from .conftest import ROOT, SWEEP_EXAMPLES, small_scenario

LIMIT = "links[0].queue.limit_packets"
BASE = small_scenario(start_jitter="100ms").to_dict()


def tiny_sweep(name: str = "tiny") -> Sweep:
    """2 buffer sizes x 2 seeds of the small dumbbell; flows start at random (seeded) times."""
    return Sweep(BASE, grid={LIMIT: [10, 40]}, seeds=[1, 2], name=name)


def stored_files(store: Store) -> dict[str, dict[str, Any]]:
    """``{key: {"digest": ..., "files": {name: sha256}, "run_count": ..., "mtime": ...}}``."""
    out = {}
    for key in store.run_keys():
        m = store.manifest(key)
        assert m is not None
        out[key] = {
            "digest": m["digest"],
            "files": {f: info["sha256"] for f, info in m["files"].items()},
            "run_count": m["run_count"],
            "mtime": (store.run_dir(key) / "manifest.json").stat().st_mtime_ns,
        }
    return out


def results_of(files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What must be identical between two stores: each run's digest and file checksums."""
    return {k: (v["digest"], v["files"]) for k, v in files.items()}


# ---------------------------------------------------------------------------
# Parameter paths
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "tokens"),
    [
        ("tcp.cc", ("tcp", "cc")),
        ("links[0].queue.limit_packets", ("links", 0, "queue", "limit_packets")),
        ("flows[*].tcp.initial_window", ("flows", ANY, "tcp", "initial_window")),
        ("a[1][2]", ("a", 1, 2)),
    ],
)
def test_parse_path(path: str, tokens: tuple[object, ...]) -> None:
    assert parse_path(path) == tokens


@pytest.mark.parametrize("bad", ["", "tcp.", ".cc", "links[x].rate", "links[-1]", "a..b", "a b"])
def test_parse_path_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match=r"path|expected|ends with|unexpected"):
        parse_path(bad)


def test_set_path_creates_tables_and_expands_wildcards() -> None:
    data = small_scenario().to_dict()
    set_path(data, "flows[*].tcp.initial_window", 4)
    set_path(data, "links[0].queue.limit_packets", 7)
    set_path(data, "simulation.warmup", "1s")
    assert [f["tcp"]["initial_window"] for f in data["flows"]] == [4, 4]
    assert data["links"][0]["queue"] == {"type": "droptail", "limit_packets": 7}
    assert data["simulation"]["warmup"] == "1s"
    # A value is copied, not shared between the places it is set.
    set_path(data, "flows[*].app", {"type": "bulk"})
    data["flows"][0]["app"]["bytes"] = 5
    assert data["flows"][1]["app"] == {"type": "bulk"}


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("links[9].rate", "links[9] does not exist: links has 5 entries"),
        ("simulation.duration.x", "simulation.duration is not a table"),
        ("nodes.name", "nodes is not a table"),
        ("simulation[0]", "simulation is not an array"),
        ("missing[0].x", "missing does not exist"),
    ],
)
def test_set_path_errors_name_the_part(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^" + message.replace("[", r"\[").replace("]", r"\]")):
        set_path(small_scenario().to_dict(), path, 1)


# ---------------------------------------------------------------------------
# The sweep spec
# ---------------------------------------------------------------------------


def test_points_are_the_grid_product_with_zipped_groups() -> None:
    sweep = Sweep(
        BASE,
        set={"simulation.duration": "1s"},
        grid={LIMIT: [10, 20], "tcp.cc": ["reno", "newreno"]},
        zipped=[{"flows[0].start": ["0s", "1s"], "flows[1].start": ["0.5s", "1.5s"]}],
        repetitions=3,
    )
    points = sweep.points()
    assert len(points) == 8
    assert len(sweep) == 24
    assert sweep.seeds == [1, 2, 3]
    assert points[0] == {
        LIMIT: 10,
        "tcp.cc": "reno",
        "flows[0].start": "0s",
        "flows[1].start": "0.5s",
    }
    # The last axis varies fastest; zipped parameters move together.
    assert [(p[LIMIT], p["tcp.cc"], p["flows[0].start"]) for p in points[:3]] == [
        (10, "reno", "0s"),
        (10, "reno", "1s"),
        (10, "newreno", "0s"),
    ]
    assert all(
        (p["flows[0].start"], p["flows[1].start"]) in {("0s", "0.5s"), ("1s", "1.5s")}
        for p in points
    )
    # `set` changes the base for every point and is not a parameter.
    assert sweep.params == [LIMIT, "tcp.cc", "flows[0].start", "flows[1].start"]
    assert sweep.scenario(points[5])["simulation"]["duration"] == "1s"
    assert sweep.scenario(points[5])["flows"][0]["start"] == "1s"


def test_seeds_default_to_the_base_scenarios() -> None:
    assert Sweep(BASE).seeds == [1]
    other = small_scenario(seed=42).to_dict()
    assert Sweep(other, grid={"tcp.cc": ["reno"]}).seeds == [42]


def test_toml_sweep_with_relative_base(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.toml").write_text(
        (ROOT / "examples" / "single_flow.toml").read_text()
    )
    path = tmp_path / "my-sweep.toml"
    path.write_text('base = "sub/base.toml"\nseeds = [3, 4]\n[grid]\n"tcp.cc" = ["reno"]\n')
    sweep = Sweep.from_toml(path)
    assert sweep.name == "my-sweep"
    assert sweep.seeds == [3, 4]
    assert sweep.base["name"] == "single-flow" or sweep.base["nodes"]
    # Round trip through the stored definition.
    again = Sweep.from_dict(sweep.to_dict())
    assert [r.key for r in again.plan().runs] == [r.key for r in sweep.plan().runs]


@pytest.mark.parametrize("path", SWEEP_EXAMPLES, ids=[p.name for p in SWEEP_EXAMPLES])
def test_example_sweeps_are_valid(path: Path) -> None:
    sweep = Sweep.from_toml(path)
    plan = sweep.plan()
    assert len(plan.runs) == len(sweep) > 1
    assert len(plan.tasks()) == len(plan.runs)


def test_aggregate_says_when_runs_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every run refused for memory: the means are empty, and aggregate says why.
    monkeypatch.setenv("ECNSIM_MAX_MEMORY", "1KB")
    result = run_sweep(
        tiny_sweep("failing"),
        tmp_path,
        executor="serial",
        progress=False,
        raise_if_all_failed=False,
    )
    assert (result.ran, len(result.failures)) == (0, 4)
    with pytest.warns(UserWarning, match=r"4 of 4 run\(s\) failed and are left out"):
        agg = result.aggregate(["goodput_bps"])
    assert set(agg["n"]) == {0}


def test_a_sweep_whose_every_run_failed_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script that ignores ``result.failures`` (or lacks the ``__main__`` guard, so that
    every pooled run fails) must not end with exit code 0 (issue 35 item 1)."""
    from ecnsim.sweep import SweepFailedError

    monkeypatch.setenv("ECNSIM_MAX_MEMORY", "1KB")
    with pytest.raises(
        SweepFailedError, match=r"every one of the 4 run\(s\) it started failed"
    ) as info:
        run_sweep(tiny_sweep("failing"), tmp_path, executor="serial", progress=False)
    assert "__main__" in str(info.value)
    assert len(info.value.result.failures) == 4
    # A sweep with one run that worked returns, its failures listed.
    monkeypatch.delenv("ECNSIM_MAX_MEMORY")
    assert not run_sweep(tiny_sweep("working"), tmp_path, executor="serial").failures


def test_the_cli_sweep_whose_every_run_failed_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ecnsim.cli import main

    monkeypatch.setenv("ECNSIM_MAX_MEMORY", "1KB")
    path = tmp_path / "s.toml"
    path.write_text(f'base = "{ROOT / "examples" / "single_flow.toml"}"\nseeds = [1]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "store"), "-j", "1", "-q"]) == 1
    err = capsys.readouterr().err
    assert "failed:" in err
    assert "Traceback" not in err


def test_there_are_example_sweeps() -> None:
    assert {p.name for p in SWEEP_EXAMPLES} >= {"sweep_buffers.toml", "sweep_red_ecn.toml"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"base": BASE, "gird": {}}, "gird: unknown field; allowed: name, description, base"),
        (
            BASE,
            "simulation: unknown field; allowed: name, description, base, set, grid, zip, "
            "seeds, repetitions, store, series; this looks like a scenario file: run it with "
            "`ecnsim run`, or name it as a sweep's `base`",
        ),
        ({}, "base: missing"),
        ({"base": 5}, "base: must be a file path"),
        ({"base": "nope.toml"}, "base: cannot read"),
        ({"base": BASE, "grid": {"tcp.cc": "reno"}}, 'grid."tcp.cc": must be a list of values'),
        ({"base": BASE, "grid": {"tcp.cc": []}}, 'grid."tcp.cc": must have at least one value'),
        ({"base": BASE, "grid": [1]}, "grid: must be a table"),
        ({"base": BASE, "grid": {"links[0.rate": [1]}}, 'grid."links[0.rate": not a parameter'),
        (
            {"base": BASE, "grid": {"simulation.seed": [1, 2]}},
            'grid."simulation.seed": use `seeds`',
        ),
        (
            {"base": BASE, "grid": {"tcp.cc": ["reno"]}, "zip": [{"tcp.cc": ["reno"]}]},
            'zip[0]."tcp.cc": parameter already swept at grid."tcp.cc"',
        ),
        (
            {"base": BASE, "zip": [{"tcp.cc": ["reno", "newreno"], "tcp.mss": [1000]}]},
            "zip[0]: zipped lists must have the same length; tcp.cc has 2, tcp.mss has 1",
        ),
        ({"base": BASE, "zip": {"tcp.cc": ["reno"]}}, "zip: must be a list of tables"),
        ({"base": BASE, "zip": [{}]}, "zip[0]: must be a non-empty table"),
        ({"base": BASE, "seeds": [1, 1]}, "seeds[1]: duplicate seed 1"),
        ({"base": BASE, "seeds": [1, -1]}, "seeds[1]: must be an integer in 0..2^64-1, got -1"),
        ({"base": BASE, "seeds": []}, "seeds: must be a non-empty list"),
        ({"base": BASE, "seeds": [1], "repetitions": 2}, "seeds: give `seeds` or `repetitions`"),
        ({"base": BASE, "repetitions": 0}, "repetitions: must be an integer >= 1, got 0"),
        ({"base": BASE, "name": "a b"}, "name: 'a b': use letters, digits"),
        ({"base": BASE, "set": {"links[9].rate": "1Mbps"}}, "set: links[9] does not exist"),
        ({"base": BASE, "set": {"tcp.cc": float("nan")}}, 'set."tcp.cc": value nan cannot'),
        ({"base": BASE, "store": 3}, "store: must be a directory path"),
    ],
)
def test_sweep_spec_errors_name_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(SweepSpecError) as info:
        Sweep.from_dict(data)
    assert str(info.value).startswith(message), str(info.value)
    assert isinstance(info.value, SpecError)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(info.value.path + ": ")


def test_bad_toml_is_a_sweep_error(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('base = "x.toml"\n[grid\n')
    with pytest.raises(SweepSpecError, match=r"^<root>: not valid TOML"):
        Sweep.from_toml(path)


def test_every_point_is_checked_before_anything_runs(tmp_path: Path) -> None:
    sweep = Sweep(BASE, grid={"tcp.cc": ["reno", "newreno"], LIMIT: [10, 0]}, seeds=[1, 2])
    with pytest.raises(SweepSpecError) as info:
        run_sweep(sweep, tmp_path / "store", executor="serial")
    message = str(info.value)
    assert message.startswith(f'point 1 (tcp.cc="reno", {LIMIT}=0), seed 1: {LIMIT}: '), message
    assert info.value.path == LIMIT
    assert not (tmp_path / "store").exists(), "nothing may run or be written"
    # A path that does not fit a point's scenario is reported the same way.
    sweep = Sweep(BASE, grid={"flows[5].start": ["1s"]})
    with pytest.raises(
        SweepSpecError, match=r'^point 0 \(flows\[5\].start="1s"\): flows\[5\] does not'
    ) as info:
        sweep.plan()
    assert info.value.path == "flows[5].start"


# ---------------------------------------------------------------------------
# Executors give identical results
# ---------------------------------------------------------------------------


def test_serial_pool_and_dask_give_identical_results(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    plan = tiny_sweep().plan()
    serial = run_sweep(plan, tmp_path / "serial", executor="serial")
    pool = run_sweep(plan, tmp_path / "pool", executor="process", jobs=2)
    dask = run_sweep(plan, tmp_path / "dask", dask="local", jobs=2)
    assert (serial.executor, pool.executor, dask.executor) == ("serial", "process", "dask")
    for r in (serial, pool, dask):
        assert (r.ran, r.skipped, r.failures) == (4, 0, [])
    a = stored_files(Store(tmp_path / "serial"))
    b = stored_files(Store(tmp_path / "pool"))
    c = stored_files(Store(tmp_path / "dask"))
    assert len(a) == 4
    assert results_of(a) == results_of(b) == results_of(c)
    # ... and they equal a plain in-process run.
    for run in plan.runs:
        direct = Simulation(json.loads(run.scenario_json), seed=run.seed).run()
        assert a[run.key]["digest"] == direct.digest
    # The runs really ran elsewhere, and the seeds really matter.
    assert {Store(tmp_path / "pool").manifest(k)["pid"] for k in b} != {os.getpid()}  # type: ignore[index]
    assert {Store(tmp_path / "dask").manifest(k)["pid"] for k in c} != {os.getpid()}  # type: ignore[index]
    assert len({v["digest"] for v in a.values()}) == 4


# ---------------------------------------------------------------------------
# Resuming
# ---------------------------------------------------------------------------


def test_rerunning_a_sweep_skips_finished_runs(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first = run_sweep(tiny_sweep(), store, executor="serial")
    before = stored_files(store)
    second = run_sweep(tiny_sweep(), store, executor="serial")
    assert (first.ran, first.skipped) == (4, 0)
    assert (second.ran, second.skipped, second.corrupt) == (0, 4, [])
    assert stored_files(store) == before
    # A bigger sweep over the same store runs only what is new.
    bigger = Sweep(BASE, grid={LIMIT: [10, 40]}, seeds=[1, 2, 3], name="tiny")
    third = run_sweep(bigger, store, executor="serial")
    assert (third.ran, third.skipped) == (2, 4)
    after = stored_files(store)
    assert {k: after[k] for k in before} == before


def test_truncated_parquet_is_detected_and_rerun(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_sweep(tiny_sweep(), store, executor="serial")
    before = stored_files(store)
    victim = sorted(before)[1]
    f = store.run_dir(victim) / "queues.parquet"
    f.write_bytes(f.read_bytes()[:100])
    result = run_sweep(tiny_sweep(), store, executor="serial")
    assert (result.ran, result.skipped) == (1, 3)
    assert [c.key for c in result.corrupt] == [victim]
    assert "queues.parquet has 100 bytes" in result.corrupt[0].reason
    after = stored_files(store)
    assert results_of(after) == results_of(before)
    assert after[victim]["run_count"] == 2
    for key in set(before) - {victim}:
        assert after[key] == before[key], "an intact run was rewritten"


# -- killed with a real signal ----------------------------------------------------

KILL_BASE = """\
name = "kill"
simulation = {{ duration = "{duration}s", seed = 1 }}
tcp = {{ cc = "newreno" }}
nodes = [
  {{ name = "a", kind = "host" }},
  {{ name = "b", kind = "host" }},
  {{ name = "r", kind = "router" }},
]
links = [
  {{ a = "a", b = "r", rate = "1Gbps", delay = "1ms" }},
  {{ a = "r", b = "b", rate = "100Mbps", delay = "5ms", queue = {{ type = "droptail" }} }},
]
flows = [
  {{ src = "a", dst = "b", start_jitter = "50ms" }},
  {{ src = "a", dst = "b", start_jitter = "50ms" }},
]
"""

KILL_SWEEP = """\
name = "kill"
base = "base.toml"
seeds = [1, 2, 3, 4]

[grid]
"links[1].queue.limit_packets" = [30, 60]
"""

#: Wall time each run of the kill tests should take, whatever the build profile.
#: Long enough that, on a loaded machine, finished runs whose results the
#: parent has not yet written cannot make up the rest of the sweep by the time
#: the interrupt arrives.
KILL_RUN_S = 0.5


@pytest.fixture(scope="module")
def kill_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A sweep file of 8 runs of about KILL_RUN_S each, and its uninterrupted results."""
    d = tmp_path_factory.mktemp("kill")
    # Size the runs for this build (debug builds are many times slower than release),
    # in CPU time: a loaded machine stretches wall time, and runs sized by it would be
    # so short that every run could finish before the interrupt lands.
    probe = Simulation.from_toml_str(KILL_BASE.format(duration=1))
    started = time.process_time()
    probe.run()
    per_sim_second = time.process_time() - started
    duration = max(1, min(300, round(KILL_RUN_S / max(per_sim_second, 1e-4))))
    (d / "base.toml").write_text(KILL_BASE.format(duration=duration))
    path = d / "sweep.toml"
    path.write_text(KILL_SWEEP)
    reference = Store(d / "reference")
    run_sweep(Sweep.from_toml(path), reference, executor="serial")
    return path, results_of(stored_files(reference))


def _count_manifests(root: Path) -> int:
    return len(list((root / "runs").glob("*/*/manifest.json"))) if root.exists() else 0


def _start_sweep(path: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ecnsim", "sweep", str(path), "--out", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for_runs(proc: subprocess.Popen[str], out: Path, n: int) -> None:
    deadline = time.monotonic() + 120
    while _count_manifests(out) < n:
        if proc.poll() is not None:
            pytest.fail(f"the sweep ended before {n} runs were stored:\n{proc.communicate()}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail("the sweep stored no runs within 120 s")
        time.sleep(0.01)


def _live_processes(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are not zombies (Linux /proc)."""
    live = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            live.append(int(stat.parent.name))
    return live


def _wait_until_gone(pgid: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while _live_processes(pgid):
        if time.monotonic() > deadline:
            left = _live_processes(pgid)
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"processes of the stopped sweep still running: {left}")
        time.sleep(0.05)


def _resume_and_check(path: Path, out: Path, reference: dict[str, Any]) -> None:
    store = Store(out)
    finished = {k: v for k, v in stored_files(store).items() if store.check(k).is_done}
    assert 2 <= len(finished) < len(reference), "the sweep was not stopped midway"
    resumed = subprocess.run(
        [sys.executable, "-m", "ecnsim", "sweep", str(path), "--out", str(out), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(finished)} already stored" in resumed.stdout
    final = stored_files(store)
    # Finished runs were not run again; every run ran exactly once.
    for key, before in finished.items():
        assert final[key] == before, f"run {key[:12]} was rerun"
    assert all(v["run_count"] == 1 for v in final.values())
    # The results equal an uninterrupted sweep's, bit for bit.
    assert results_of(final) == reference


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and signals")
def test_sweep_killed_with_sigkill_resumes(
    kill_sweep: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    path, reference = kill_sweep
    out = tmp_path / "store"
    proc = _start_sweep(path, out)
    _wait_for_runs(proc, out, 2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    _wait_until_gone(proc.pid)
    _resume_and_check(path, out, reference)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and signals")
def test_sweep_stopped_with_sigint_keeps_finished_runs_and_resumes(
    kill_sweep: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    path, reference = kill_sweep
    out = tmp_path / "store"
    proc = _start_sweep(path, out)
    _wait_for_runs(proc, out, 2)
    os.kill(proc.pid, signal.SIGINT)  # the sweep process only: it must stop its workers
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted:" in stderr
    assert "Traceback" not in stderr
    _wait_until_gone(proc.pid)
    # Whatever is in the store is complete and intact.
    store = Store(out)
    assert all(store.check(k).is_done for k in store.run_keys())
    _resume_and_check(path, out, reference)


# ---------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------

# Two-sided 95% and 99% Student t quantiles (standard tables, to 9 digits).
T_TABLE = {
    (0.975, 1): 12.7062047,
    (0.975, 2): 4.30265273,
    (0.975, 3): 3.18244631,
    (0.975, 4): 2.77644511,
    (0.975, 5): 2.57058184,
    (0.975, 9): 2.26215716,
    (0.975, 10): 2.22813885,
    (0.975, 29): 2.04522964,
    (0.975, 30): 2.04227246,
    (0.975, 100): 1.98397152,
    (0.975, 1000): 1.96233908,
    (0.995, 4): 4.60409487,
    (0.995, 30): 2.74999565,
    (0.95, 7): 1.89457861,
}


@pytest.mark.parametrize(("p", "df"), list(T_TABLE), ids=[f"{p}-{df}" for p, df in T_TABLE])
def test_t_quantile_matches_tables(p: float, df: int) -> None:
    assert t_quantile(p, df) == pytest.approx(T_TABLE[(p, df)], rel=1e-8)
    assert t_quantile(1 - p, df) == pytest.approx(-T_TABLE[(p, df)], rel=1e-8)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.999])
def test_t_quantile_general_path_matches_closed_forms_and_normal(p: float) -> None:
    # Non-integer df next to 1 and 2 goes through the incomplete-beta inversion.
    assert t_quantile(p, 1 + 1e-9) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-6)
    assert t_quantile(p, 2 + 1e-9) == pytest.approx(
        (2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-6
    )
    normal = t_quantile(p, math.inf)
    assert t_quantile(p, 1e7) == pytest.approx(normal, rel=1e-6)
    assert t_quantile(0.5, 3) == 0.0


def test_aggregate_computes_mean_std_and_t_interval() -> None:
    per_run = pd.DataFrame(
        {
            "cc": ["reno"] * 4 + ["cubic"] * 3 + ["bbr"],
            "goodput": [1.0, 2.0, 3.0, 4.0, 10.0, np.nan, 14.0, 7.0],
        }
    )
    agg = aggregate(per_run, by=["cc"], metrics=["goodput"]).set_index("cc")
    reno = agg.loc["reno"]
    std = math.sqrt(sum((x - 2.5) ** 2 for x in [1, 2, 3, 4]) / 3)
    assert reno["n"] == 4
    assert reno["mean"] == pytest.approx(2.5)
    assert reno["std"] == pytest.approx(std)
    assert reno["sem"] == pytest.approx(std / 2)
    half = 3.18244631 * std / 2
    assert (reno["ci_low"], reno["ci_high"]) == (
        pytest.approx(2.5 - half),
        pytest.approx(2.5 + half),
    )
    cubic = agg.loc["cubic"]  # NaN is left out: n = 2
    assert (cubic["n"], cubic["mean"]) == (2, pytest.approx(12.0))
    assert cubic["ci_high"] - cubic["mean"] == pytest.approx(12.7062047 * 2.0, rel=1e-7)
    bbr = agg.loc["bbr"]  # one run: a mean, no interval
    assert bbr["n"] == 1
    assert bbr["mean"] == 7.0
    assert math.isnan(bbr["std"])
    assert math.isnan(bbr["ci_low"])
    with pytest.raises(KeyError, match="no column 'nope'"):
        aggregate(per_run, by=["nope"], metrics=["goodput"])


def test_built_in_metrics_match_the_tables(tmp_path: Path) -> None:
    result = run_sweep(tiny_sweep(), tmp_path, executor="serial")
    per_run = result.metrics(["goodput_bps", "jain", "drops", "marks", "utilization"])
    assert len(per_run) == 4
    for row in per_run.to_dict("records"):
        r = Store(tmp_path).results(row["key"])
        goodput = np.asarray(r.table("flows")["goodput_bps"])
        queues = r.queues
        assert row["goodput_bps"] == pytest.approx(goodput.sum())
        assert row["jain"] == pytest.approx(goodput.sum() ** 2 / (2 * (goodput**2).sum()))
        assert row["drops"] == queues["drops"].sum()
        assert row["marks"] == queues["marks"].sum()
        assert row["utilization"] == queues["utilization"].max()
        assert 0 < row["jain"] <= 1
    # A function of a run's Results is a metric too.
    custom = run_metrics(
        Store(tmp_path), result.runs(), {"flows": lambda r: float(len(r.table("flows")))}
    )
    assert custom["flows"].tolist() == [2.0] * 4


def test_sweep_aggregate_is_tidy(tmp_path: Path) -> None:
    result = run_sweep(tiny_sweep(), tmp_path, executor="serial")
    agg = result.aggregate(["goodput_bps", "drops"])
    assert list(agg.columns) == [
        LIMIT,
        "metric",
        "n",
        "mean",
        "std",
        "sem",
        "ci",
        "ci_low",
        "ci_high",
        "confidence",
    ]
    assert len(agg) == 2 * 2
    assert set(agg["n"]) == {2}
    assert (agg["ci_low"] <= agg["mean"]).all()
    assert (agg["mean"] <= agg["ci_high"]).all()
    per_run = result.metrics(["goodput_bps"])
    for lim in (10, 40):
        mean = per_run.loc[per_run[LIMIT] == lim, "goodput_bps"].mean()
        got = agg[(agg[LIMIT] == lim) & (agg["metric"] == "goodput_bps")]["mean"].item()
        assert got == pytest.approx(mean)
    table = summary_table(agg, [LIMIT])
    assert list(table.columns) == [LIMIT, "n", "goodput_Mbps", "drops"]
    assert "±" in table["goodput_Mbps"][0]


# ---------------------------------------------------------------------------
# `ecnsim sweep`
# ---------------------------------------------------------------------------


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text((ROOT / "examples" / "single_flow.toml").read_text())
    path = tmp_path / "s.toml"
    path.write_text(
        'name = "cli"\nbase = "base.toml"\nrepetitions = 2\n'
        '[set]\n"simulation.duration" = "2s"\n[grid]\n"tcp.cc" = ["reno", "newreno"]\n'
    )
    return path


def test_sweep_command_runs_and_summarises(
    sweep_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "store"
    assert cli_main(["sweep", str(sweep_file), "--out", str(out), "--jobs", "1"]) == 0
    stdout = capsys.readouterr().out
    assert "cli: 4 runs: 4 run now, 0 already stored, 0 failed" in stdout
    assert "goodput_Mbps" in stdout
    assert len(Store(out).runs(sweep="cli")) == 4
    assert cli_main(["sweep", str(sweep_file), "--out", str(out), "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "4 of 4 runs already in the store" in captured.out
    assert "cli: 2 points x 2 seeds = 4 runs" in captured.err


def test_sweep_command_errors_are_exit_2(
    sweep_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = sweep_file.read_text()
    sweep_file.write_text(text.replace('["reno", "newreno"]', '["reno", "vegas"]'))
    assert cli_main(["sweep", str(sweep_file), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: point 1 (tcp.cc="vegas"), seed 1: tcp.cc: '), err
    assert not (tmp_path / "x").exists()
    sweep_file.write_text(text.replace("repetitions = 2", "repetitions = [2]"))
    assert cli_main(["sweep", str(sweep_file)]) == 2
    assert capsys.readouterr().err.startswith("error: repetitions: must be an integer >= 1")
    assert cli_main(["sweep", str(tmp_path / "missing.toml")]) == 2
    assert capsys.readouterr().err.startswith("error: cannot read")
    assert cli_main(["sweep", str(sweep_file), "--jobs", "0"]) == 2


def test_sweep_command_in_a_subprocess(
    cli: Callable[..., subprocess.CompletedProcess[str]], sweep_file: Path, tmp_path: Path
) -> None:
    proc = cli("sweep", sweep_file, "--out", tmp_path / "store", "--no-summary")
    assert proc.returncode == 0, proc.stderr
    assert "4 run now" in proc.stdout
    assert "goodput_Mbps" not in proc.stdout


def test_the_documented_view_works_on_the_catalog_opened_directly(tmp_path: Path) -> None:
    """docs/sweeps.md: the flows view is per connection; its recipe for a catalog opened
    with duckdb itself gives the same rows (issue 35 item 1)."""
    import duckdb

    store = tmp_path / "store"
    run_sweep(tiny_sweep("direct"), store, executor="serial", progress=False)
    expected = Store(store).query("SELECT key, flow, goodput_bps FROM flows ORDER BY key, flow")
    con = duckdb.connect(str(store / "catalog.duckdb"), read_only=True)
    try:
        assert {"runs", "sweeps"} <= {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        con.execute(
            "CREATE TEMP VIEW flows AS SELECT regexp_extract(filename, "
            "'([0-9a-f]{64})/[^/]+$', 1) AS key, * EXCLUDE (filename) FROM read_parquet("
            f"'{store}/runs/*/*/flows.parquet', filename = true, union_by_name = true)"
        )
        got = con.execute(
            "SELECT key, flow, goodput_bps FROM runs JOIN flows USING (key) ORDER BY key, flow"
        ).df()
    finally:
        con.close()
    assert len(got) == len(expected) > 0
    assert got.values.tolist() == expected.values.tolist()
