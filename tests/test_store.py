"""The results store: keys, atomic writes, corruption checks, the DuckDB catalog, `ecnsim runs`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from ecnsim import Simulation
from ecnsim.sweep import Sweep, execute, run_sweep
from ecnsim.sweep.store import RunOutput, Store, run_key

from .conftest import small_scenario

Cli = Callable[..., subprocess.CompletedProcess[str]]

LIMIT = "links[0].queue.limit_packets"


def tiny_sweep(name: str = "tiny", **kwargs: object) -> Sweep:
    """2 buffer sizes x 2 seeds of the small dumbbell; flows start at random (seeded) times."""
    options: dict[str, object] = {"grid": {LIMIT: [10, 40]}, "seeds": [1, 2], "name": name}
    options.update(kwargs)
    return Sweep(small_scenario(start_jitter="100ms"), **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def outputs() -> list[RunOutput]:
    """The four runs of ``tiny_sweep()``, executed in this process, every table kept."""
    return [execute(t) for t in tiny_sweep(series=True).plan().tasks()]


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A store holding ``tiny_sweep()`` (run serially); tests must not change it."""
    store = Store(tmp_path_factory.mktemp("filled"))
    result = run_sweep(tiny_sweep(), store, executor="serial")
    assert result.ran == 4
    return store


# ---------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------


def test_run_key_is_canonical_and_covers_spec_seed_and_version() -> None:
    spec = {"b": [1, 2.5, "x"], "a": {"y": None, "x": True}}
    same = '{ "a": {"x": true, "y": null}, "b": [1, 2.5, "x"] }'
    k = run_key(spec, 1, "0.1.0")
    assert len(k) == 64
    assert run_key(same, 1, "0.1.0") == k
    assert run_key(spec, 2, "0.1.0") != k
    assert run_key(spec, 1, "0.1.1") != k
    assert run_key({**spec, "b": [1, 2.5, "y"]}, 1, "0.1.0") != k


def test_planned_key_is_the_key_of_the_runs_resolved_scenario() -> None:
    plan = tiny_sweep().plan()
    run = plan.runs[3]
    results = Simulation(json.loads(run.scenario_json), seed=run.seed).run()
    assert run_key(results.meta["resolved_spec"], run.seed, results.meta["ecnsim_version"]) == (
        run.key
    )
    assert len({r.key for r in plan.runs}) == 4


# ---------------------------------------------------------------------------
# Writing and reading runs
# ---------------------------------------------------------------------------


def test_put_writes_every_table_and_a_manifest(tmp_path: Path, outputs: list[RunOutput]) -> None:
    store = Store(tmp_path)
    out = outputs[0]
    m = store.put(out, sweep="s", point=0, params={LIMIT: 10})
    d = store.run_dir(out.key)
    assert sorted(p.name for p in d.iterdir()) == sorted(
        ["manifest.json", "scenario.json", *(f"{t}.parquet" for t in out.tables)]
    )
    assert m == json.loads((d / "manifest.json").read_text())
    assert m["key"] == out.key
    assert m["digest"] == out.digest
    assert m["run_count"] == 1
    assert m["params"] == {LIMIT: 10}
    assert m["seed"] == 1
    for name, info in m["tables"].items():
        assert pq.read_metadata(d / info["file"]).num_rows == info["rows"] == out.rows[name]
    assert store.check(out.key).status == "done"
    assert store.run_keys() == [out.key]


def test_results_read_back_equal_the_run(tmp_path: Path, outputs: list[RunOutput]) -> None:
    store = Store(tmp_path)
    out = outputs[1]
    store.put(out)
    back = store.results(out.key)
    task = next(t for t in tiny_sweep().plan().tasks() if t.key == out.key)
    direct = Simulation(json.loads(task.scenario_json), seed=task.seed).run()
    assert back.digest == direct.digest
    assert set(back.tables) == set(direct.tables)
    for name, table in direct.tables.items():
        pd.testing.assert_frame_equal(back.table(name).to_pandas(), table.to_pandas())
    assert back.spec == direct.spec
    assert back.meta["seed"] == direct.meta["seed"]
    pd.testing.assert_frame_equal(store.read_table(out.key, "flows"), direct.flows)


def test_rewriting_a_run_counts_it(tmp_path: Path, outputs: list[RunOutput]) -> None:
    store = Store(tmp_path)
    store.put(outputs[0])
    m = store.put(outputs[0])
    assert m["run_count"] == 2


def test_a_failed_write_leaves_no_file(
    tmp_path: Path, outputs: list[RunOutput], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path)
    calls = {"n": 0}
    real_replace = os.replace

    def crash_on_third_rename(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk on fire")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_third_rename)
    with pytest.raises(OSError, match="disk on fire"):
        store.put(outputs[0])
    d = store.run_dir(outputs[0].key)
    assert not list(d.glob(".*tmp*")), "temporary file left behind"
    assert not (d / "manifest.json").exists()
    check = store.check(outputs[0].key)
    assert check.status == "missing"
    assert "interrupted" in check.reason


# ---------------------------------------------------------------------------
# Damage detection
# ---------------------------------------------------------------------------


def _truncate(d: Path) -> None:
    f = d / "flows.parquet"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def _flip_a_bit(d: Path) -> None:
    f = d / "queues.parquet"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x01
    f.write_bytes(bytes(data))


def _remove_table(d: Path) -> None:
    (d / "flow_series.parquet").unlink()


def _garble_manifest(d: Path) -> None:
    (d / "manifest.json").write_text('{"key": ')


def _lie_about_rows(d: Path) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m["tables"]["flows"]["rows"] += 1
    (d / "manifest.json").write_text(json.dumps(m))


def _edit_digest(d: Path) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m["digest"] += 1
    (d / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize(
    ("damage", "reason", "quick"),
    [
        (_truncate, "flows.parquet has", True),
        (_flip_a_bit, "queues.parquet: SHA-256 differs", False),
        (_remove_table, "flow_series.parquet is missing", True),
        (_garble_manifest, "not valid JSON", True),
        # An edited manifest fails its own checksum (issue 17 item 12).
        (_lie_about_rows, "manifest.json was changed after it was written", True),
        (_edit_digest, "manifest.json was changed after it was written", True),
    ],
    ids=["truncated", "bit-flip", "missing-table", "bad-manifest", "row-count", "digest"],
)
def test_damage_is_detected(
    tmp_path: Path,
    outputs: list[RunOutput],
    damage: Callable[[Path], None],
    reason: str,
    quick: bool,
) -> None:
    store = Store(tmp_path)
    out = outputs[0]
    store.put(out)
    assert store.check(out.key).is_done
    damage(store.run_dir(out.key))
    check = store.check(out.key)
    assert check.status == "corrupt"
    assert reason in check.reason
    # The cheap check (sizes only) used by the catalog sees size changes.
    assert store.check(out.key, full=False).is_done is not quick


def test_truncated_parquet_is_really_unreadable(tmp_path: Path, outputs: list[RunOutput]) -> None:
    store = Store(tmp_path)
    store.put(outputs[0])
    _truncate(store.run_dir(outputs[0].key))
    with pytest.raises(Exception, match=r"(?i)parquet|magic|size|footer"):
        pq.read_table(store.run_dir(outputs[0].key) / "flows.parquet")


# ---------------------------------------------------------------------------
# The catalog
# ---------------------------------------------------------------------------


def test_catalog_answers_a_query_by_parameter(filled: Store) -> None:
    plan = tiny_sweep().plan()
    df = filled.runs(where=f'"{LIMIT}" = 40')
    expected = sorted(r.key for r in plan.runs if r.params[LIMIT] == 40)
    assert sorted(df["key"]) == expected
    assert set(df[LIMIT]) == {40}
    assert sorted(df["seed"]) == [1, 2]
    # Parameters keep their type: integer comparisons work.
    assert len(filled.runs(where=f'"{LIMIT}" > 20 AND seed = 2')) == 1
    assert pd.api.types.is_integer_dtype(filled.runs()[LIMIT])


def test_catalog_has_every_run_with_its_parameters_and_digest(filled: Store) -> None:
    df = filled.runs(sweep="tiny")
    plan = tiny_sweep().plan()
    assert len(df) == 4
    by_key = df.set_index("key")
    for r in plan.runs:
        row = by_key.loc[r.key]
        assert row["point"] == r.point
        assert row["seed"] == r.seed
        assert row[LIMIT] == r.params[LIMIT]
        assert row["digest"] == filled.manifest(r.key)["digest"]  # type: ignore[index]
        assert row["run_count"] == 1
    sweeps = filled.query("SELECT * FROM sweeps")
    assert sweeps.to_dict("records")[0] | {"written_at": None} == {
        "name": "tiny",
        "points": 2,
        "runs": 4,
        "done": 4,
        "params": json.dumps([LIMIT]),
        "written_at": None,
    }


def test_catalog_joins_runs_with_their_tables(filled: Store) -> None:
    df = filled.query(
        f'SELECT r."{LIMIT}" AS lim, r.seed, sum(f.goodput_bps) AS goodput, count(*) AS flows '
        "FROM runs r JOIN flows f USING (key) GROUP BY ALL ORDER BY lim, seed"
    )
    assert df["flows"].tolist() == [2, 2, 2, 2]
    for row in df.to_dict("records"):
        key = filled.runs(where=f'"{LIMIT}" = {row["lim"]} AND seed = {row["seed"]}')["key"][0]
        expected = filled.results(key).table("flows")["goodput_bps"].sum()
        assert row["goodput"] == pytest.approx(expected, rel=1e-12)


def test_catalog_follows_the_files(tmp_path: Path, outputs: list[RunOutput]) -> None:
    store = Store(tmp_path)
    for out in outputs:
        store.put(out)
    assert len(store.runs()) == 4
    # A truncated run drops out of the catalog.
    _truncate(store.run_dir(outputs[0].key))
    assert outputs[0].key not in set(store.runs()["key"])
    # So does a deleted one.
    for f in store.run_dir(outputs[1].key).iterdir():
        f.unlink()
    assert set(store.runs()["key"]) == {outputs[2].key, outputs[3].key}
    # The catalog is a cache: a deleted or garbled catalog file is rebuilt.
    store.catalog_path.unlink()
    assert len(store.runs()) == 2
    store.catalog_path.write_bytes(b"this is not a database" * 100)
    assert len(store.runs()) == 2
    # Runs written without a sweep keep the parameters they were written with.
    store.put(outputs[0], sweep="by-hand", point=7, params={"tcp.cc": "reno"})
    row = store.runs(where="sweep = 'by-hand'").to_dict("records")[0]
    assert (row["point"], row["tcp.cc"]) == (7, "reno")


def _corrupt_in_place(path: Path) -> None:
    """Overwrite the middle of ``path`` with garbage, keeping its size and, at worst, its time."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid - 64 : mid + 64] = b"\xff" * 128
    data[-12:-8] = b"\xff\xff\xff\x7f"  # the footer's length: no longer a Parquet file
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_damaged_file_is_left_out_of_the_catalog_and_named(
    tmp_path: Path, outputs: list[RunOutput], cli: Cli
) -> None:
    """Issue 17 item 8: a corrupted Parquet file does not break `ecnsim runs`."""
    store = Store(tmp_path)
    for out in outputs:
        store.put(out)
    assert len(store.runs()) == 4
    with store.catalog() as con:  # the views over the files work
        assert con.execute("SELECT count(*) FROM flows").fetchone()[0] > 0
    # Same size and modification time: only reading the file shows the damage.
    bad = store.run_dir(outputs[0].key) / "flows.parquet"
    _corrupt_in_place(bad)
    runs = store.runs()
    assert outputs[0].key not in set(runs["key"])
    assert len(runs) == 3
    with store.catalog() as con:
        assert con.execute("SELECT count(DISTINCT key) FROM flows").fetchone()[0] == 3
    ((key, why),) = store.damaged()
    assert key == outputs[0].key
    assert why.startswith("flows.parquet: "), why
    r = cli("runs", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "3 runs" in r.stdout
    assert f"warning: run {outputs[0].key[:12]} left out: flows.parquet" in r.stderr
    # A damaged file with a new time is found by its checksum.
    bad2 = store.run_dir(outputs[1].key) / "queues.parquet"
    data = bytearray(bad2.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad2.write_bytes(bytes(data))
    assert len(store.runs()) == 2
    assert (
        dict(store.damaged())[outputs[1].key] == "queues.parquet: SHA-256 differs from the manifest"
    )
    # Rewritten, both are back.
    store.put(outputs[0])
    store.put(outputs[1])
    assert len(store.runs()) == 4
    assert store.damaged() == []


def test_symlinks_out_of_the_store_are_refused(tmp_path: Path, outputs: list[RunOutput]) -> None:
    """Issue 17 item 12: no write through a link that leads out of the store."""
    from ecnsim.sweep.store import StoreError

    root, outside = tmp_path / "store", tmp_path / "elsewhere"
    outside.mkdir()
    store = Store(root)
    out = outputs[0]
    (root / "runs").mkdir(parents=True)
    (root / "runs" / out.key[:2]).symlink_to(outside, target_is_directory=True)
    with pytest.raises(StoreError, match=r"symbolic link to .*elsewhere, outside the store"):
        store.put(out)
    assert list(outside.iterdir()) == []
    # A catalog linked to another DuckDB file is refused, not filled with our tables.
    other = tmp_path / "other.duckdb"
    import duckdb

    duckdb.connect(str(other)).close()
    before = other.read_bytes()
    store.catalog_path.symlink_to(other)
    with pytest.raises(StoreError, match=r"catalog.duckdb: is a symbolic link"):
        store.runs()
    assert other.read_bytes() == before
    # Links inside the store are fine.
    store.catalog_path.unlink()
    (root / "runs" / out.key[:2]).unlink()
    (root / "runs" / "real").mkdir()
    (root / "runs" / out.key[:2]).symlink_to(root / "runs" / "real", target_is_directory=True)
    store.put(out)
    assert store.has(out.key)


def test_non_scalar_parameters_are_json_columns(tmp_path: Path) -> None:
    queues = [{"type": "droptail", "limit_packets": 10}, {"type": "red", "limit_packets": 60}]
    sweep = Sweep(small_scenario(duration="1s"), grid={"links[0].queue": queues}, name="q")
    store = Store(tmp_path)
    run_sweep(sweep, store, executor="serial")
    df = store.runs(sweep="q")
    assert sorted(json.loads(v)["type"] for v in df["links[0].queue"]) == ["droptail", "red"]
    assert len(store.runs(where="\"links[0].queue\"->>'type' = 'red'")) == 1


# ---------------------------------------------------------------------------
# `ecnsim runs`
# ---------------------------------------------------------------------------


def test_runs_command_lists_and_queries(cli: Cli, filled: Store) -> None:
    proc = cli("runs", "--out", filled.root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("4 runs\n")
    assert LIMIT in proc.stdout
    proc = cli("runs", "--out", filled.root, "--where", f'"{LIMIT}" = 10', "--format", "json")
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    assert sorted(r["key"] for r in records) == sorted(filled.runs(where=f'"{LIMIT}" = 10')["key"])
    assert all(r[LIMIT] == 10 for r in records)
    proc = cli("runs", "--out", filled.root, "--sweeps", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith("tiny,2,4,4,")
    proc = cli("runs", "--out", filled.root, "--sql", "SELECT count(*) AS n FROM flows")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["n", "8"]


def test_runs_command_errors(cli: Cli, filled: Store, tmp_path: Path) -> None:
    proc = cli("runs", "--out", tmp_path / "nothing")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no store at")
    proc = cli("runs", "--out", filled.root, "--where", "no_such_column = 1")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "no_such_column" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------
# Store growth (issue 15 item 11): series only when asked, metrics at finish
# ---------------------------------------------------------------------------


def test_series_are_stored_only_when_asked(tmp_path: Path) -> None:
    plain = run_sweep(tiny_sweep(), Store(tmp_path / "a"), executor="serial")
    for key in plain.runs()["key"]:
        m = plain.store.manifest(key)
        assert m is not None
        assert set(m["tables"]) == {"flows", "queues", "records"}
    # Asking for series later reruns the runs stored without them, and keeps them.
    again = run_sweep(tiny_sweep(series=True), plain.store, executor="serial")
    assert (again.ran, again.skipped) == (4, 0)
    for key in again.runs()["key"]:
        m = again.store.manifest(key)
        assert m is not None
        assert {"flow_series", "queue_series"} <= set(m["tables"])
    # And a sweep without series is then satisfied by them.
    third = run_sweep(tiny_sweep(), plain.store, executor="serial")
    assert (third.ran, third.skipped) == (0, 4)


def test_metrics_are_computed_once_and_read_from_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ecnsim.analysis import aggregate as agg_module

    result = run_sweep(tiny_sweep(), Store(tmp_path), executor="serial")
    keys = result.runs()["key"].tolist()
    stored = result.store.summary_metrics(keys, version=agg_module.SUMMARY_VERSION)
    assert sorted(stored.index) == sorted(keys)
    assert set(stored.columns) == set(agg_module.METRICS)
    # Reading them opens no run's tables.
    opened: list[str] = []
    monkeypatch.setattr(
        Store, "concat_table", lambda self, k, t: opened.append(t) or pd.DataFrame()
    )
    from_catalog = result.metrics(list(agg_module.METRICS))
    assert opened == []
    monkeypatch.undo()
    # They equal the metrics computed from the stored tables (another version = none stored).
    monkeypatch.setattr(agg_module, "SUMMARY_VERSION", -1)
    from_tables = result.metrics(list(agg_module.METRICS))
    for name in agg_module.METRICS:
        np.testing.assert_allclose(
            from_catalog[name].to_numpy(), from_tables[name].to_numpy(), rtol=1e-12, equal_nan=True
        )
    assert from_catalog["goodput_bps"].notna().all()
