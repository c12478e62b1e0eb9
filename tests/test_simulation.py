"""Running simulations: results, determinism, conservation, GIL, Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from ecnsim import Results, Scenario, Simulation, Table

from .conftest import EXAMPLES, LONG_TOML, ROOT, small_scenario, wait_for_cpu

SINGLE_FLOW = ROOT / "examples" / "single_flow.toml"


@pytest.fixture(scope="module")
def finished() -> tuple[Simulation, Results]:
    sim = Simulation(small_scenario())
    return sim, sim.run()


# ---------------------------------------------------------------------------
# Results: tables, shapes, dtypes
# ---------------------------------------------------------------------------


def test_results_have_the_documented_tables(finished: tuple[Simulation, Results]) -> None:
    _, results = finished
    assert set(results.tables) >= {"flows", "queues", "flow_series", "queue_series"}
    assert results.finished
    assert results.meta["finished"] is True
    assert results.meta["seed"] == 1


def test_table_shapes_and_dtypes(finished: tuple[Simulation, Results]) -> None:
    sim, results = finished
    spec = sim.spec
    assert len(results.table("flows")) == len(spec["flows"])
    assert len(results.table("queues")) == 2 * len(spec["links"])
    for table in results.tables.values():
        assert table.columns, table.name
        lengths = {len(v) for v in table.columns.values()}
        assert lengths == {len(table)}, table.name
        for name, values in table.columns.items():
            if isinstance(values, np.ndarray):
                assert values.dtype in (np.dtype("int64"), np.dtype("float64")), (table.name, name)
                assert values.ndim == 1
            else:
                assert isinstance(values, list), (table.name, name)
                assert all(isinstance(v, str) for v in values), (table.name, name)


def test_series_are_sampled_at_the_interval(finished: tuple[Simulation, Results]) -> None:
    _, results = finished
    series = results.table("queue_series")
    times = np.unique(np.asarray(series["time_s"]))
    # 2 s at 100 ms: samples at 0, 0.1, ..., 2.0 (the first may be at 0.1).
    assert 19 <= len(times) <= 21
    assert np.allclose(np.diff(times), 0.1)


def test_numbers_are_plausible(finished: tuple[Simulation, Results]) -> None:
    _, results = finished
    flows = results.flows
    # Flow 0 sends 200 kB and completes; flow 1 is unlimited.
    assert flows["bytes_delivered"].iloc[0] == 200_000
    assert 0 < flows["completion_time_s"].iloc[0] < 2
    assert np.isnan(flows["completion_time_s"].iloc[1])
    # Nobody beats the 10 Mb/s bottleneck.
    assert (flows["goodput_bps"] <= 10e6).all()
    assert flows["goodput_bps"].sum() > 1e6


def test_to_pandas_and_to_numpy(finished: tuple[Simulation, Results]) -> None:
    _, results = finished
    for table in results.tables.values():
        df = table.to_pandas()
        assert isinstance(df, pd.DataFrame)
        assert list(df.columns) == table.column_names
        assert len(df) == len(table)
        arrays = table.to_numpy()
        assert list(arrays) == table.column_names
        for name, values in table.columns.items():
            if isinstance(values, np.ndarray):
                assert df[name].dtype == values.dtype
                np.testing.assert_array_equal(df[name].to_numpy(), values)
                assert arrays[name] is values
            else:
                assert arrays[name].tolist() == values
                assert df[name].tolist() == values
    assert results.flows.equals(results.table("flows").to_pandas())


def test_generic_table_does_not_need_known_columns() -> None:
    t = Table("anything", {"x": np.arange(3, dtype=np.uint64), "label": ["p", "q", "r"]})
    assert len(t) == 3
    assert t.to_pandas().shape == (3, 2)
    assert t.to_arrow().num_rows == 3
    with pytest.raises(ValueError, match="different lengths"):
        Table("bad", {"x": np.zeros(2), "y": np.zeros(3)})
    with pytest.raises(KeyError, match="no column 'z'"):
        t["z"]


def test_arrow_from_the_core_bytes_equals_arrow_from_the_read_columns() -> None:
    # A fresh run's tables go to Arrow straight from the core's bytes; once a
    # column is read, from numpy and lists. Both give the same Arrow table.
    fresh = Simulation(small_scenario()).run()
    read = Simulation(small_scenario()).run()
    for name, table in read.tables.items():
        _ = table.columns  # decode
        assert fresh.tables[name]._columns is None  # still the core's bytes
        assert fresh.tables[name].column_names == table.column_names
        assert len(fresh.tables[name]) == len(table)
        x, y = fresh.tables[name].to_arrow(), table.to_arrow()
        assert x.schema == y.schema
        for column in x.column_names:
            # assert_array_equal: NaN equals NaN (pyarrow's equals does not).
            np.testing.assert_array_equal(
                x.column(column).to_numpy(zero_copy_only=False),
                y.column(column).to_numpy(zero_copy_only=False),
            )


def test_arrow_of_hand_built_columns() -> None:
    t = Table(
        "t",
        {
            "u": np.arange(6, dtype=np.uint64)[::2],  # a strided view
            "f": np.array([0.5, np.nan, -1.0]),
            "i": np.array([1, 2, 3], dtype=np.int32),  # not a core dtype: pyarrow converts
            "s": ["é", "", "a b"],
        },
    )
    a = t.to_arrow()
    # Counters are int64 for pandas, also when a caller builds them as uint64.
    assert [str(f.type) for f in a.schema] == ["int64", "double", "int32", "string"]
    assert a.column("u").to_pylist() == [0, 2, 4]
    assert a.column("s").to_pylist() == ["é", "", "a b"]
    empty = Table("e", {"u": np.zeros(0, dtype=np.uint64), "s": []}).to_arrow()
    assert empty.num_rows == 0
    assert [str(f.type) for f in empty.schema] == ["int64", "string"]


def test_import_and_parquet_output_do_not_import_pandas(tmp_path: Path) -> None:
    code = (
        "import sys, ecnsim\n"
        "assert 'pandas' not in sys.modules and 'numpy' not in sys.modules, 'import'\n"
        "from ecnsim.cli import main\n"
        f"assert main(['run', {str(ROOT / 'examples' / 'dumbbell.toml')!r}, '-q', '--out', "
        f"{str(tmp_path)!r}]) == 0\n"
        "assert 'pandas' not in sys.modules, 'run --out'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "flows.parquet").exists()


def test_write_parquet(tmp_path: Path, finished: tuple[Simulation, Results]) -> None:
    _, results = finished
    written = results.write_parquet(tmp_path / "out")
    assert {p.name for p in written} == {f"{n}.parquet" for n in results.tables} | {"meta.json"}
    for name, table in results.tables.items():
        back = pd.read_parquet(tmp_path / "out" / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, table.to_pandas(), check_dtype=True)
        assert pq.read_schema(tmp_path / "out" / f"{name}.parquet").names == table.column_names
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["finished"] is True
    assert meta["digest"] == results.digest
    assert meta["resolved_spec"]["simulation"]["seed"] == 1
    assert len(meta["resolved_spec"]["flows"]) == 2


# ---------------------------------------------------------------------------
# Running in steps; progress
# ---------------------------------------------------------------------------


def test_run_until_gives_partial_results() -> None:
    sim = Simulation(small_scenario())
    sim.run_until(0.5)
    assert sim.now_ns == 500_000_000
    assert not sim.is_finished
    partial = sim.results
    assert not partial.finished
    assert partial.meta["finished"] is False
    sim.run_until(10)  # clamps at the end
    assert sim.is_finished
    assert sim.now_ns == sim.end_ns == 2_000_000_000
    assert sim.results.finished


def test_stepwise_run_matches_one_run() -> None:
    whole = Simulation(small_scenario())
    whole.run()
    steps = Simulation(small_scenario())
    for t in (0.05, 0.3, 0.3, 1.234567891, 1.9):
        steps.run_until(t)
    steps.run()
    assert steps.digest() == whole.digest()


def test_fixed_chunks_give_the_same_results_and_refuse_bad_lengths() -> None:
    whole = Simulation(small_scenario())
    whole.run()
    fixed = Simulation(small_scenario())
    fixed.run_until(1.0, chunk=0.01)
    assert fixed.now_ns == 1_000_000_000
    fixed.run_until(5.0, chunk=0.3)
    assert fixed.is_finished
    assert fixed.digest() == whole.digest()
    for bad in (0.0, -1.0, 1e-12, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="chunk must be a positive number of seconds"):
            fixed.run_until(1.0, chunk=bad)
    with pytest.raises(ValueError, match="chunk_ns must be > 0"):
        fixed._sim.run_until(1, 0)


def test_progress_callback() -> None:
    sim = Simulation(small_scenario(duration="20s"))
    calls: list[tuple[int, int]] = []

    def progress(now: int, end: int) -> None:
        # The callback may read the simulation between chunks.
        assert sim.now_ns == now
        c = sim.conservation()
        assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"]
        calls.append((now, end))

    sim.run(progress=progress)
    assert calls
    nows = [c[0] for c in calls]
    assert nows == sorted(nows)
    assert calls[-1] == (sim.end_ns, sim.end_ns)
    assert {c[1] for c in calls} == {sim.end_ns}


def test_progress_callback_errors_propagate() -> None:
    sim = Simulation(small_scenario())

    def boom(now: int, end: int) -> None:
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        sim.run(progress=boom)
    assert 0 < sim.now_ns < sim.end_ns
    sim.run()
    assert sim.is_finished


def test_perf_counters(finished: tuple[Simulation, Results]) -> None:
    sim, _ = finished
    perf = sim.perf()
    assert set(perf) == {"events", "packet_hops"}
    assert perf["events"] >= perf["packet_hops"] > 0


# ---------------------------------------------------------------------------
# Conservation
# ---------------------------------------------------------------------------


def test_conservation_holds_at_every_step() -> None:
    sim = Simulation(small_scenario())
    seen_in_flight = False
    last_sent = 0
    for step in range(1, 42):
        sim.run_until(step * 0.05)
        c = sim.conservation()
        assert set(c) == {"sent", "delivered", "dropped", "in_flight"}
        assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"], (sim.now, c)
        assert c["sent"] >= last_sent
        last_sent = c["sent"]
        seen_in_flight |= c["in_flight"] > 0
    assert sim.is_finished
    assert last_sent > 0
    assert seen_in_flight


# ---------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------


def _tables_equal(a: Results, b: Results) -> bool:
    if list(a.tables) != list(b.tables):
        return False
    for name in a.tables:
        ta, tb = a.tables[name], b.tables[name]
        if ta.column_names != tb.column_names:
            return False
        for col in ta.column_names:
            va, vb = ta[col], tb[col]
            if isinstance(va, np.ndarray):
                if not isinstance(vb, np.ndarray) or va.tobytes() != vb.tobytes():
                    return False
            elif va != vb:
                return False
    return True


def test_same_seed_same_results_in_process() -> None:
    a = Simulation(small_scenario(), seed=7).run()
    b = Simulation(small_scenario(), seed=7).run()
    assert a.digest == b.digest
    assert _tables_equal(a, b)
    assert a.meta == b.meta


_DIGEST_SCRIPT = (
    "import sys, ecnsim\n"
    "sim = ecnsim.Simulation.from_toml(sys.argv[1], seed=int(sys.argv[2]))\n"
    "print(sim.run().digest)\n"
)


def test_same_seed_same_digest_across_processes() -> None:
    in_process = {p.name: Simulation.from_toml(p, seed=11).run().digest for p in EXAMPLES}
    for hash_seed in ("0", "12345"):
        for path in EXAMPLES:
            out = subprocess.run(
                [sys.executable, "-c", _DIGEST_SCRIPT, str(path), "11"],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
                env={**os.environ, "PYTHONHASHSEED": hash_seed},
            )
            assert int(out.stdout) == in_process[path.name], path.name


def test_seed_changes_nothing_without_randomness() -> None:
    a = Simulation(small_scenario(), seed=1).run()
    b = Simulation(small_scenario(), seed=2).run()
    assert (a.meta["seed"], b.meta["seed"]) == (1, 2)
    assert a.digest != b.digest  # the seed is part of the recorded metadata
    # No component of this scenario draws random numbers (DropTail, bulk, Reno).
    assert _tables_equal(a, b)


def test_different_seeds_give_different_results() -> None:
    def run(seed: int) -> Results:
        return Simulation(small_scenario(start_jitter="100ms"), seed=seed).run()

    a, b, again = run(1), run(2), run(1)
    assert _tables_equal(a, again)
    assert a.digest == again.digest
    assert not _tables_equal(a, b)
    starts_a = a.table("flows")["start_s"]
    starts_b = b.table("flows")["start_s"]
    assert isinstance(starts_a, np.ndarray)
    assert isinstance(starts_b, np.ndarray)
    assert not np.array_equal(starts_a, starts_b)
    # Jitter only delays: flow 1 is configured to start at 0.2 s.
    assert 0.2 <= starts_a[1] < 0.3


# ---------------------------------------------------------------------------
# The GIL is released while running; Ctrl-C stops a run promptly
# ---------------------------------------------------------------------------


class _StopRunError(Exception):
    pass


def _count_for(seconds: float) -> int:
    n = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        n += 1
    return n


def test_gil_is_released_while_running() -> None:
    baseline = _count_for(0.3)
    sim = Simulation.from_toml(LONG_TOML)
    started = threading.Event()
    stop = threading.Event()
    seen: list[int] = []

    def progress(now: int, end: int) -> None:
        seen.append(now)
        started.set()
        if stop.is_set():
            raise _StopRunError

    def worker() -> None:
        with contextlib.suppress(_StopRunError):
            sim.run(progress=progress)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert started.wait(30)
        sim_time_before = seen[-1]
        work = _count_for(0.3)
        sim_time_after = seen[-1]
        assert thread.is_alive(), "the run ended before the measurement did; lengthen it"
        # Touching the simulation while a chunk runs is refused, not a crash.
        errors: list[str] = []
        for _ in range(20):
            try:
                sim.perf()
            except RuntimeError as e:
                errors.append(str(e).lower())
        assert errors
        assert all("borrow" in e for e in errors), errors
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    assert sim_time_after > sim_time_before, "the simulation made no progress meanwhile"
    # Were the GIL held during chunks, this thread would get a few percent of its baseline.
    assert work > 0.3 * baseline, (work, baseline)
    assert not sim.is_finished


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_interrupts_a_run_in_process() -> None:
    # No progress callback: only the core's signal checks between chunks can
    # raise KeyboardInterrupt during the run.
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not handled by Python's default handler here")
    sim = Simulation.from_toml(LONG_TOML)
    sent_at: list[float] = []

    def interrupter() -> None:
        time.sleep(0.3)
        sent_at.append(time.process_time())
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupter)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # 3000 s: a few seconds of CPU, if nothing stops it (200 s now run in
            # about 0.25 s, less than the interrupter's wait).
            sim.run_until(3000.0)
        # In this process's CPU time, which a loaded machine does not stretch.
        latency = time.process_time() - sent_at[0]
    finally:
        thread.join(30)
    assert latency < 1.0, latency
    assert 0 < sim.now_ns < 3000 * 10**9
    partial = sim.results
    assert not partial.finished
    c = sim.conservation()
    assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_on_the_cli_writes_partial_results(long_toml: Path, tmp_path: Path) -> None:
    out = tmp_path / "partial"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecnsim", "run", str(long_toml), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_cpu(proc, 1.5)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupted" in stderr
    assert "Traceback" not in stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is False
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 2
    assert flows["bytes_delivered"].sum() > 0


def test_simulation_rejects_non_scenarios() -> None:
    with pytest.raises(TypeError, match="from_toml"):
        Simulation("examples/dumbbell.toml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="t must be >= 0"):
        Simulation(small_scenario()).run_until(-1)
    assert isinstance(small_scenario(), Scenario)
