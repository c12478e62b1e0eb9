"""The time series handed to Python once: the same values on every path, without extra copies.

A finished run's first ``results()`` moves the series out of the core's store into the
column ``bytes`` it returns (the store freed as they are written) and hands the same
``bytes`` out again later; pandas gets one copy of them, Arrow and the Parquet writer
none. The values are pinned by ``test_series_store.py``; here every path must agree with
the core's bytes, and each removed copy is caught by identity or by a byte count
(``tracemalloc`` sees numpy's and Python's allocations), never by RSS or time.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecnsim import dumbbell, red, tcp
from ecnsim.results import Results
from ecnsim.simulation import Simulation
from tests.conftest import red_ecn_dumbbell

SERIES = ("flow_series", "queue_series")


@pytest.fixture
def finished() -> tuple[Simulation, int]:
    """A finished sampled run (0.1 s), and the digest the core computed from its store."""
    sim = Simulation(red_ecn_dumbbell())
    sim.run_until(sim.duration)
    return sim, sim._sim.digest()


def many_rows() -> Simulation:
    """40 flows sampled every millisecond for 0.5 s (20,040 flow rows; 0.1 s): enough rows that
    a byte a row stands out of a copy's fixed costs."""
    sim = Simulation(
        dumbbell(
            40,
            bottleneck_rate="10Mbps",
            bottleneck_delay="5ms",
            access_rate="100Mbps",
            access_delay="1ms",
            duration="500ms",
            queue=red(min_th=5, max_th=15, limit_packets=60, ecn="rfc3168"),
            sample_interval="1ms",
            tcp=tcp(ecn="request"),
        )
    )
    sim.run_until(sim.duration)
    return sim


def payloads(raw: dict[str, Any], table: str) -> dict[str, Any]:
    return {c: payload for c, (_, payload) in raw["tables"][table].items()}


def test_a_finished_run_hands_its_series_over_once(finished: tuple[Simulation, int]) -> None:
    sim, digest = finished
    assert sim._sim.series_bytes() > 0
    first = sim._sim.results()
    # The store is gone: the columns just written are the only copy.
    assert sim._sim.series_bytes() == 0
    second = sim._sim.results()
    assert first["digest"] == second["digest"] == sim._sim.digest() == digest
    for table in SERIES:
        assert len(first["tables"][table]["time_s"][1]) > 0
        # The same bytes objects again, not a rebuilt copy, in a dict of each call's own.
        assert all(
            a is b
            for a, b in zip(
                payloads(first, table).values(), payloads(second, table).values(), strict=True
            )
        )
        assert first["tables"][table] is not second["tables"][table]
    assert first["tables"].keys() == second["tables"].keys()
    for name in first["tables"]:
        if name not in SERIES:
            assert first["tables"][name] == second["tables"][name]


def test_an_unfinished_run_keeps_its_store_until_the_end() -> None:
    sim = Simulation(red_ecn_dumbbell())
    sim.run_until(1.0)
    held = sim._sim.series_bytes()
    partial = sim._sim.results(), sim._sim.results()
    assert sim._sim.series_bytes() == held > 0
    assert partial[0]["digest"] == partial[1]["digest"] == sim._sim.digest()
    for table in SERIES:
        assert payloads(partial[0], table) == payloads(partial[1], table)
    sim.run_until(sim.duration)
    whole = Simulation(red_ecn_dumbbell())
    whole.run_until(whole.duration)
    assert sim._sim.results()["digest"] == whole._sim.results()["digest"]


def same(a: pa.Table, b: pa.Table) -> bool:
    """Equal schemas and values, bit for bit (NaN equal to NaN, unlike ``Table.equals``)."""
    if a.schema != b.schema:
        return False
    for x, y in zip(a.columns, b.columns, strict=True):
        if pa.types.is_string(x.type):
            if x.to_pylist() != y.to_pylist():
                return False
        elif x.to_numpy().tobytes() != y.to_numpy().tobytes():
            return False
    return True


def frames(results: Results) -> dict[str, Any]:
    return {t: results.to_pandas(t) for t in SERIES}


def test_pandas_arrow_and_parquet_give_the_cores_values(
    finished: tuple[Simulation, int], tmp_path: Path
) -> None:
    sim, digest = finished
    raw = sim._sim.results()
    # Two Results from the same handed-over bytes: one read through Arrow and Parquet as the
    # core's bytes, one decoded (pandas) first, then through the same paths.
    fresh, decoded = sim.results, sim.results
    df = frames(decoded)
    for table in SERIES:
        frame = df[table]
        for column, (dtype, payload) in raw["tables"][table].items():
            want = np.frombuffer(payload, dtype="<f8" if dtype == "<f8" else "<i8")
            assert frame[column].dtype == want.dtype
            assert frame[column].to_numpy().tobytes() == payload
            assert want.dtype in (np.dtype("<i8"), np.dtype("<f8"))
        arrow = fresh.table(table).to_arrow()
        assert same(arrow, decoded.table(table).to_arrow())
        assert arrow.schema.field(table.split("_")[0]).type == pa.string()
        assert arrow.column(table.split("_")[0]).to_pylist() == frame[table.split("_")[0]].tolist()
    fresh.write_parquet(tmp_path / "fresh")
    decoded.write_parquet(tmp_path / "decoded")
    for table in SERIES:
        a = pq.read_table(tmp_path / "fresh" / f"{table}.parquet")
        b = pq.read_table(tmp_path / "decoded" / f"{table}.parquet")
        assert same(a, b)
        assert same(a, fresh.table(table).to_arrow())
        assert {str(t) for t in a.schema.types} == {"int64", "double", "string"}
    assert decoded.digest == fresh.digest == digest


def test_no_copy_comes_back() -> None:
    sim = many_rows()
    raw = sim._sim.results()
    results = sim.results
    table = results.table("flow_series")
    rows = table.num_rows
    numeric = [c for c in table.column_names if table.is_numeric(c)]
    # Imports and first-use caches of pandas and pyarrow are not the copies counted below.
    results.table("flows").to_pandas()
    results.table("flows").to_arrow()
    # Arrow shares the core's bytes; the names are taken by code, not a Python object a row.
    tracemalloc.start()
    arrow = table.to_arrow()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * rows, (peak, rows)
    for column in numeric:
        core = np.frombuffer(raw["tables"]["flow_series"][column][1], dtype=np.uint8)
        assert arrow.column(column).chunk(0).buffers()[1].address == core.ctypes.data
    # pandas: one copy of the numeric columns (pandas' own), none before it (1.11 times the
    # numeric bytes with the names' codes; 2.12 with a copy before pandas').
    numeric_bytes = 8 * rows * len(numeric)
    tracemalloc.start()
    df = table.to_pandas()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert numeric_bytes <= peak < 1.25 * numeric_bytes, (peak, numeric_bytes)
    assert not any(np.shares_memory(df[c].to_numpy(), table[c]) for c in numeric)
    # The Parquet writer gets the core's bytes behind the decoded arrays, not copies of them.
    written = table._writer_columns()
    assert written is not None
    for column in numeric:
        assert written[column][1] is raw["tables"]["flow_series"][column][1]
