"""Reliability (issue 17): the command line and the Python API under bad input and pressure.

Ctrl-C stops builds and long chunks, a second Ctrl-C cannot lose partial
results, results are written before anything is printed, bad arguments are
``error:`` lines with exit code 2, memory limits refuse or stop runs with a
message, and sweeps do not report statistics that mean nothing.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ecnsim
from ecnsim import ResourceError, Scenario, Simulation, SimulationError, SpecError, bulk

from .conftest import LONG_TOML, ROOT, cpu_seconds, small_scenario, wait_for_cpu

Cli = Callable[..., subprocess.CompletedProcess[str]]
SINGLE = ROOT / "examples" / "single_flow.toml"
posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _popen(*args: str | os.PathLike[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ecnsim", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


# ---------------------------------------------------------------------------
# Item 10: command-line hygiene
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--seed", "-1"], "error: --seed: must be from 0 to 2^64-1"),
        (["--seed", str(2**64)], "error: --seed: must be from 0 to 2^64-1"),
        (["--seed", "x"], "error: --seed: expected an integer"),
        (["--trace-ns2", "t.tr", "--trace-links", "-1"], "error: --trace-links: expected link"),
        (["--trace-ns2", "t.tr", "--trace-links", "a"], "error: --trace-links: no link named 'a'"),
        (["--max-memory", "lots"], "error: --max-memory: expected a size"),
        (["--trace-ns2", "/nonexistent-dir/x.tr"], "error: --trace-ns2: cannot write"),
        (["--pcap", "/proc/version/x"], "error: --pcap: "),
        (["--out", str(SINGLE)], "error: --out: "),
        (["--out", "/proc/version/x"], "error: --out: "),
    ],
)
def test_bad_arguments_are_error_lines_with_exit_2(
    cli: Cli, args: list[str], fragment: str, tmp_path: Path
) -> None:
    r = cli("run", SINGLE, "-q", *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
    # docs/cli.md: one `error:` line, at most one `hint:` line; no argparse usage block.
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error: "), r.stderr
    assert len(lines) <= 2, r.stderr
    assert all(ln.startswith("hint: ") for ln in lines[1:]), r.stderr


def test_non_utf8_scenario_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(SINGLE.read_bytes().replace(b'"a"', b'"\xe9"'))
    r = cli("run", path)
    assert r.returncode == 2
    assert "not UTF-8 text (byte 0xe9" in r.stderr
    assert "Traceback" not in r.stderr


def test_names_with_control_characters_are_refused_and_printed_escaped(
    cli: Cli, tmp_path: Path
) -> None:
    path = tmp_path / "esc.toml"
    path.write_text(
        SINGLE.read_text().replace('name = "a"', 'name = "a\\u001b[31mred"'), encoding="utf-8"
    )
    r = cli("run", path)
    assert r.returncode == 2
    assert "\x1b" not in r.stderr
    assert "U+001B" in r.stderr


def test_numpy_values_in_the_builder() -> None:
    sc = (
        Scenario(duration=np.float64(1.0), seed=np.uint64(3))
        .host("a", "b")
        .link("a", "b", rate=np.int64(10**7), delay=np.float32(0.001))
        .flow("a", "b", app=bulk(bytes=np.int32(1000)), tcp={"delayed_ack": np.bool_(False)})
    )
    r = Simulation(sc).run()
    assert r.finished
    assert r.meta["seed"] == 3
    with pytest.raises(SpecError, match=r"^links\[0\]\.rate: invalid type: object") as info:
        Simulation(Scenario(duration=1).host("a", "b").link("a", "b", rate=object(), delay=0))
    assert info.value.path == "links[0].rate"
    with pytest.raises(SpecError, match=r"^links\[0\]\.delay: must be a finite number, got nan"):
        Simulation(Scenario(duration=1).host("a", "b").link("a", "b", rate=1, delay=np.nan))
    with pytest.raises(SpecError, match=r"^seed: must be an integer in 0\.\.2\^64-1"):
        Simulation(small_scenario(), seed=-1)
    with pytest.raises(SpecError, match=r"^seed: "):
        Simulation(small_scenario(), seed=True)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Item 7: results are written before anything is printed; paths are checked first
# ---------------------------------------------------------------------------


def test_a_closed_pipe_does_not_lose_the_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = f"'{sys.executable}' -m ecnsim run '{SINGLE}' -q --out '{out}' | head -1"
    r = subprocess.run(
        ["bash", "-c", cmd + "; echo status=${PIPESTATUS[0]}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "status=0" in r.stdout, (r.stdout, r.stderr)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is True
    assert (out / "flows.parquet").exists()


@posix
def test_a_second_ctrl_c_does_not_lose_partial_results(long_toml: Path, tmp_path: Path) -> None:
    out = tmp_path / "partial"
    trace = tmp_path / "t.tr"
    proc = _popen("run", long_toml, "--out", out, "--trace-ns2", trace)
    try:
        wait_for_cpu(proc, 2.0)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    finally:
        stdout, stderr = _finish(proc)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is False
    assert len(pd.read_parquet(out / "flows.parquet")) == 2
    # The trace keeps its last events: every line is whole, up to where the run stopped.
    lines = trace.read_text().splitlines()
    assert lines
    assert all(len(line.split()) >= 12 for line in lines), lines[-3:]
    last_time = float(lines[-1].split()[1])
    assert last_time <= float(meta["end_time_s"]) + 1e-9
    assert last_time > float(meta["end_time_s"]) - 0.5, (last_time, meta["end_time_s"])


@posix
def test_ctrl_c_stops_a_long_model_build(tmp_path: Path) -> None:
    n = 200_000
    flows = "".join(f'[[flows]]\nsrc = "a"\ndst = "b"\nstart = "{i % 97}ms"\n' for i in range(n))
    path = tmp_path / "many.toml"
    path.write_text(
        'simulation = { duration = "1s" }\n'
        'nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]\n'
        'links = [ { a = "a", b = "b", rate = "10Mbps", delay = "1ms" } ]\n' + flows,
        encoding="utf-8",
    )
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = _popen("run", path, "-q")
    try:
        wait_for_cpu(proc, 1.0)
        assert proc.poll() is None, proc.communicate()
        cpu_at_signal = cpu_seconds(proc)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = _finish(proc, timeout=30)
        latency = time.monotonic() - sent
    finally:
        _finish(proc)
    assert proc.returncode == 130, stderr
    if cpu_at_signal is None:
        assert latency < 1.5, latency
    else:
        # The work done after the signal, in the child's CPU time: a loaded
        # machine stretches the wall-clock latency, not this.
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = (children.ru_utime - children_before.ru_utime) + (
            children.ru_stime - children_before.ru_stime
        )
        assert total - cpu_at_signal < 1.0, (total, cpu_at_signal, latency)


@posix
def test_ctrl_c_stops_a_run_inside_one_long_chunk() -> None:
    """A run_until in one call, without a progress callback: still stopped within a second."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not handled by Python's default handler here")
    sim = Simulation.from_toml(LONG_TOML)
    sim._sim.run_until(10**9)  # warm up: the first chunks are short
    sent_at: list[float] = []

    def interrupter() -> None:
        time.sleep(0.5)
        sent_at.append(time.process_time())
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupter)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Far beyond the signal's 0.5 s: 500 s of this run took 0.6 s of CPU before the
            # per-segment work of issue 16 and less after, so the signal could come after the
            # run and escape the test.
            sim.run_until(5000.0)
        # In this process's CPU time, which a loaded machine does not stretch.
        latency = time.process_time() - sent_at[0]
    finally:
        thread.join(30)
    assert latency < 1.0, latency
    c = sim.conservation()
    assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"]
    # A cancelled run resumes where it stopped.
    before = sim.now_ns
    sim.run_until(sim.now + 0.01)
    assert sim.now_ns > before


# ---------------------------------------------------------------------------
# Items 2 and 3: no progress, memory
# ---------------------------------------------------------------------------


def test_hangs_of_the_report_are_refused() -> None:
    base = (
        Scenario(duration="10s").host("a", "b").link("a", "b", rate="10Mbps", delay="1ms").to_dict()
    )
    for model, field in [
        ({"type": "onoff", "rate": "1Mbps", "on": {"type": "constant", "value": 0},
          "off": {"type": "constant", "value": 0}}, "on"),
        ({"type": "onoff", "rate": "1Mbps", "on": {"type": "constant", "value": 1e-300},
          "off": {"type": "constant", "value": 1e-300}}, "on"),
        ({"type": "onoff", "rate": "1Mbps", "on": {"type": "exponential", "mean": 1e-12}}, "on"),
        ({"type": "cbr", "rate": "10000Gbps"}, "rate"),
    ]:  # fmt: skip
        data = {**base, "apps": [{"clients": ["a"], "servers": ["b"], "model": model}]}
        with pytest.raises(SpecError) as info:
            Simulation(data)
        assert info.value.path == f"apps[0].model.{field}"


def test_a_scenario_too_large_for_the_memory_limit_is_refused(cli: Cli, tmp_path: Path) -> None:
    nodes = ", ".join(f'{{ name = "n{i}", kind = "router" }}' for i in range(2000))
    path = tmp_path / "chain.toml"
    path.write_text(
        'simulation = { duration = "1s" }\n'
        f'nodes = [ {{ name = "a", kind = "host" }}, {nodes} ]\nlinks = []\n',
        encoding="utf-8",
    )
    with pytest.raises(ResourceError) as info:
        Simulation.from_toml(path, max_memory="10MB")
    assert isinstance(info.value, MemoryError)
    assert info.value.path == "nodes"
    assert "routes of 2001 nodes (2001 routers and multi-link hosts) 16.0 MB" in str(info.value)
    r = cli("run", path, "--max-memory", "10MB")
    assert r.returncode == 2
    assert "error: nodes: the run would need about 16.0 MB" in r.stderr
    assert Simulation.from_toml(path, max_memory="1GB").duration == 1.0


def test_a_run_that_outgrows_the_limit_stops_and_the_cli_keeps_its_results(
    cli: Cli, tmp_path: Path
) -> None:
    text = (
        'simulation = { duration = "100s" }\n'
        'nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]\n'
        'links = [ { a = "a", b = "b", rate = "10Mbps", delay = "1ms" } ]\n'
        '[[apps]]\nclients = ["a"]\nservers = ["b"]\nmodel = { type = "crr" }\n'
    )
    path = tmp_path / "crr.toml"
    path.write_text(text, encoding="utf-8")
    sim = Simulation.from_toml(path, max_memory="3MB")
    with pytest.raises(ResourceError, match=r"^apps: stopped at t = "):
        sim.run()
    assert not sim.is_finished
    assert sim.stopped is not None
    assert "max_memory" in sim.stopped
    assert sim.results.meta["stopped"] == sim.stopped
    out = tmp_path / "out"
    r = cli("run", path, "--max-memory", "3MB", "--out", out, "-q")
    assert r.returncode == 2, r.stderr
    assert "partial results (finished=false) written to" in r.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is False
    assert "max_memory" in meta["stopped"]


def test_errors_are_exceptions_of_the_hierarchy() -> None:
    assert issubclass(ResourceError, ecnsim.EcnsimError)
    assert issubclass(ResourceError, MemoryError)
    assert issubclass(SimulationError, ecnsim.EcnsimError)
    assert issubclass(SimulationError, RuntimeError)


# ---------------------------------------------------------------------------
# Item 11: statistics that mislead
# ---------------------------------------------------------------------------


def test_repeated_grid_values_are_one_point(tmp_path: Path) -> None:
    from ecnsim.sweep import Sweep, run_sweep

    with pytest.warns(UserWarning, match=r'grid\."links\[0\]\.queue\.limit_packets"\[2\]'):
        sweep = Sweep(
            small_scenario(duration="1s", start_jitter="50ms"),
            grid={"links[0].queue.limit_packets": [10, 40, 10]},
            seeds=[1, 2],
        )
    assert len(sweep.points()) == 2
    result = run_sweep(sweep, tmp_path, executor="serial")
    agg = result.aggregate(["goodput_bps"])
    assert set(agg["n"]) == {2}


def test_seeds_of_a_deterministic_scenario_are_reported(tmp_path: Path) -> None:
    from ecnsim.sweep import Sweep, run_sweep

    # No start jitter, DropTail, bulk flows: nothing draws a random number.
    sweep = Sweep(small_scenario(duration="1s"), grid={"links[0].queue.limit_packets": [10, 40]},
                  seeds=[1, 2, 3])  # fmt: skip
    result = run_sweep(sweep, tmp_path, executor="serial")
    assert result.deterministic_points() == [0, 1]
    with pytest.warns(UserWarning, match="gave bit-identical results for every seed"):
        agg = result.aggregate(["goodput_bps"])
    assert set(agg["n"]) == {3}
    # With randomness, no warning.
    sweep = Sweep(small_scenario(duration="1s", start_jitter="100ms"), seeds=[1, 2], name="jit")
    result = run_sweep(sweep, tmp_path, executor="serial")
    assert result.deterministic_points() == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result.aggregate(["goodput_bps"])


def test_tables_checksum_tells_seeds_that_changed_nothing() -> None:
    from ecnsim.sweep.execute import same_for_every_seed, tables_checksum

    # `ecnsim run --seeds` compares runs by this checksum (the digest covers the seed).
    fixed = [Simulation(small_scenario(duration="1s"), seed=s).run() for s in (1, 2)]
    assert fixed[0].digest != fixed[1].digest
    assert tables_checksum(fixed[0]) == tables_checksum(fixed[1])
    jitter = [
        Simulation(small_scenario(duration="1s", start_jitter="100ms"), seed=s).run()
        for s in (1, 2)
    ]
    assert tables_checksum(jitter[0]) != tables_checksum(jitter[1])
    runs = [(0, tables_checksum(r)) for r in fixed] + [(1, tables_checksum(r)) for r in jitter]
    assert same_for_every_seed(runs) == [0]
    # One run is no evidence either way.
    assert same_for_every_seed(runs[:1]) == []


def test_times_longer_than_the_run_are_warned_about(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "onoff.toml"
    path.write_text(
        'simulation = { duration = "2s" }\n'
        'nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]\n'
        'links = [ { a = "a", b = "b", rate = "10Mbps", delay = "1ms" } ]\n'
        '[[apps]]\nclients = ["a"]\nservers = ["b"]\n'
        'model = { type = "onoff", rate = "1Mbps", on = { type = "constant", value = 0.1 }, '
        'off = { type = "constant", value = 1e5 } }\n',
        encoding="utf-8",
    )
    sim = Simulation.from_toml(path)
    assert sim.warnings == [
        "apps[0].model.off: every value is at least 100000 s, as long as the run after the app "
        "starts (2 s): the sources send during their first on period only"
    ]
    r = cli("run", path, "-q")
    assert r.returncode == 0, r.stderr
    assert "warning: apps[0].model.off: every value is at least 100000 s" in r.stderr
