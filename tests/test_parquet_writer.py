"""Issue 16 goal 1: ``Results.write_parquet`` writes from Rust, without pyarrow.

The files must read back as those pyarrow's ``pq.write_table(table.to_arrow())``
wrote (the writer before): same files, column names and order, Arrow types and
nullability, every value bit for bit, the same DataFrames, and the same
key-value metadata (pyarrow's ``ARROW:schema``: the same schema once decoded).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecnsim import Results, Simulation, Table
from ecnsim.cli.bench import web_sessions_scenario

from .conftest import red_ecn_dumbbell, small_scenario


def _pyarrow_write(results: Results, out: Path) -> None:
    """The writer before: pyarrow from ``Table.to_arrow``."""
    out.mkdir()
    for name, table in results.tables.items():
        pq.write_table(table.to_arrow(), out / f"{name}.parquet")


def _bits(column: pa.ChunkedArray) -> list[object]:
    """A column's values, reals as their bit patterns (NaN, -0.0 compared exactly)."""
    if pa.types.is_floating(column.type):
        return np.asarray(column.to_numpy(), dtype=np.float64).view(np.int64).tolist()
    return column.to_pylist()


def _assert_same_files(ours: Path, theirs: Path) -> None:
    names = sorted(p.name for p in theirs.glob("*.parquet"))
    assert sorted(p.name for p in ours.glob("*.parquet")) == names
    for name in names:
        a, b = pq.read_table(ours / name), pq.read_table(theirs / name)
        assert a.schema.equals(b.schema), (name, a.schema, b.schema)
        assert all(f.nullable for f in a.schema), name
        assert a.num_rows == b.num_rows, name
        for col in a.column_names:
            assert _bits(a[col]) == _bits(b[col]), (name, col)
        pd.testing.assert_frame_equal(
            pd.read_parquet(ours / name), pd.read_parquet(theirs / name), check_exact=True
        )
        meta_a = pq.read_metadata(ours / name).metadata or {}
        meta_b = pq.read_metadata(theirs / name).metadata or {}
        assert set(meta_a) == set(meta_b) == {b"ARROW:schema"}, name
        # The Arrow schema pyarrow stores, written by ecnsim: the same schema once decoded.
        decoded = [
            pa.ipc.read_schema(pa.py_buffer(base64.b64decode(m[b"ARROW:schema"])))
            for m in (meta_a, meta_b)
        ]
        assert decoded[0].equals(decoded[1], check_metadata=True), (name, decoded)
        # Names stay plain strings (not Arrow dictionaries or categoricals) on the way back.
        for field in a.schema:
            assert not pa.types.is_dictionary(field.type), (name, field)


def _scenarios() -> dict[str, object]:
    sc = red_ecn_dumbbell()
    web = web_sessions_scenario(80.0, 4.0, rate="10Mbps", clients=3, servers=2, queue_packets=50)
    return {"small": small_scenario(), "red-ecn-dumbbell": sc, "web-sessions": web}


@pytest.mark.parametrize("name", sorted(_scenarios()))
def test_rust_writer_files_read_back_as_pyarrows(name: str, tmp_path: Path) -> None:
    results = Simulation(_scenarios()[name]).run()
    assert len(results.tables) >= 5
    results.write_parquet(tmp_path / "ours")
    _pyarrow_write(results, tmp_path / "theirs")
    _assert_same_files(tmp_path / "ours", tmp_path / "theirs")
    meta = json.loads((tmp_path / "ours" / "meta.json").read_text())
    assert meta["digest"] == results.digest
    assert meta["tables"] == list(results.tables)
    # The resolved scenario, written last on one line as the core produced it.
    assert meta["resolved_spec"] == results.spec
    assert list(meta)[-1] == "resolved_spec"


def test_decoded_and_hand_built_tables_are_written_too(tmp_path: Path) -> None:
    results = Simulation(small_scenario()).run()
    # Reading columns decodes them: the writer re-encodes what it has.
    for table in results.tables.values():
        _ = table.columns
    results.write_parquet(tmp_path / "ours")
    _pyarrow_write(results, tmp_path / "theirs")
    _assert_same_files(tmp_path / "ours", tmp_path / "theirs")
    # Columns of other kinds (a table built by hand) go through pyarrow, as before.
    odd = Results(
        {"t": Table("t", {"a": np.array([1, 2], dtype=np.int32), "b": ["x", "y"]})}, {}, 0
    )
    odd.write_parquet(tmp_path / "odd")
    back = pq.read_table(tmp_path / "odd" / "t.parquet")
    assert back["a"].to_pylist() == [1, 2]
    assert back["b"].to_pylist() == ["x", "y"]


def test_a_counter_beyond_int64_is_refused_when_written(tmp_path: Path) -> None:
    core = Table._from_core("t", {"c": ("<u8", np.array([2**64 - 1], dtype="<u8").tobytes())})
    with pytest.raises(OverflowError, match="'c'"):
        Results({"t": core}, {}, 0).write_parquet(tmp_path)


def test_the_writer_checks_what_it_is_given(tmp_path: Path) -> None:
    from ecnsim import _core

    path = str(tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="unknown dtype"):
        _core.write_parquet(path, {"a": ("<u4", b"\0" * 8)})
    with pytest.raises(ValueError, match="rows"):
        _core.write_parquet(path, {"a": ("<i8", b"\0" * 8), "b": ("str", ["x", "y"])})
    with pytest.raises(ValueError, match="outside"):
        _core.write_parquet(path, {"a": ("dict", ((5).to_bytes(4, "little"), ["x"]))})
    with pytest.raises(OSError, match="cannot write"):
        _core.write_parquet(str(tmp_path / "no" / "dir.parquet"), {"a": ("<i8", b"\0" * 8)})
