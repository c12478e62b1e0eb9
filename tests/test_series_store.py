"""The time series as the core stores them (once, compactly) and hands them over.

The core keeps a sample's time once for all its rows, the sampled ports' ids once for
all samples and the AQM estimates only of rows that have them, and the bindings write
the series' column bytes straight from that store. What Python receives must be what
a column of one value per row gave before: the same columns, dtypes and bytes. The
pinned hashes below are of the series' payloads as the core handed them over before
the compact store (main f2139ed), on a partial and on a finished run.
"""

from __future__ import annotations

import hashlib
import math
import struct
from typing import Any

import pytest

from ecnsim.simulation import Simulation
from tests.conftest import red_ecn_dumbbell, small_scenario

FLOW_COLUMNS = {
    "time_s": "<f8",
    "flow_id": "<u8",
    "cwnd_bytes": "<u8",
    "ssthresh_bytes": "<f8",
    "bytes_sent": "<u8",
    "bytes_delivered": "<u8",
    "drops": "<u8",
    "marks": "<u8",
    "owd_sum_ns": "<u8",
    "owd_count": "<u8",
}
QUEUE_COLUMNS = {
    "time_s": "<f8",
    "queue_id": "<u8",
    "packets": "<u8",
    "bytes": "<u8",
    "aqm_avg": "<f8",
    "aqm_prob": "<f8",
    "aqm_max_p": "<f8",
}

#: (scenario, (series hash, digest) at 1 s, (series hash, digest) at the end), from main f2139ed;
#: the digests since branch aqm-l4s, whose new tcp option (`ect_codepoint`) the resolved spec in
#: the digested metadata echoes and whose queues table has three new columns (`marks_of_ect0`,
#: `marks_of_ect1`, `marks_of_ce`); every other column of every table byte-identical to main's.
#: The digests again since branch tcp-edges (issue 35 item 5), which made the `rfc` profile's
#: `newreno_careful` "careful_ack_heuristic": the resolved spec in the digested metadata names
#: it (these Reno flows do not use it); every table byte-identical, the series hashes unchanged.
#: The digests again since branch tidy (session 13), whose flows table has a new last column,
#: `prague_classic_ecn` (NaN here: no flow runs Prague); every other column of every table
#: byte-identical to main 6f73794's, the series hashes unchanged.
PINNED = [
    (
        red_ecn_dumbbell,
        ("748e7f9de8971256", 6348112959159334165),
        ("74826877ea575911", 8363185954695994942),
    ),
    (
        small_scenario,
        ("b5dbd1a4e00d048f", 2086708779830984499),
        ("a6d2e59f40a66ae0", 10815156849390844127),
    ),
]


def series_hash(raw: dict[str, Any]) -> str:
    m = hashlib.sha256()
    for table in ("flow_series", "queue_series"):
        for column, (dtype, payload) in raw["tables"][table].items():
            m.update(f"{table}.{column}.{dtype}".encode())
            m.update(payload)
    return m.hexdigest()[:16]


def words(raw: dict[str, Any], table: str, column: str) -> list[Any]:
    dtype, payload = raw["tables"][table][column]
    return list(struct.unpack(f"<{len(payload) // 8}{'d' if dtype == '<f8' else 'Q'}", payload))


@pytest.mark.parametrize(("build", "partial", "finished"), PINNED, ids=["red_ecn", "small"])
def test_series_bytes_are_those_of_one_value_per_row(
    build: Any, partial: Any, finished: Any
) -> None:
    sim = Simulation(build())
    sim.run_until(1.0)
    first, second = sim._sim.results(), sim._sim.results()
    assert first["meta"]["finished"] == "false"
    for raw in (first, second):
        assert (series_hash(raw), raw["digest"]) == partial
    assert sim._sim.digest() == partial[1]
    sim.run_until(sim.duration)
    raw = sim._sim.results()
    assert (series_hash(raw), raw["digest"]) == finished
    assert (series_hash(sim._sim.results()), sim._sim.digest()) == finished
    for table, columns in (("flow_series", FLOW_COLUMNS), ("queue_series", QUEUE_COLUMNS)):
        assert {c: dt for c, (dt, _) in raw["tables"][table].items()} == columns


def test_rows_repeat_what_the_store_keeps_once() -> None:
    sim = Simulation(red_ecn_dumbbell())
    sim.run_until(sim.duration)
    raw = sim._sim.results()
    ports = len(words(raw, "queues", "queue_id"))
    times, ids = words(raw, "queue_series", "time_s"), words(raw, "queue_series", "queue_id")
    samples = len(times) // ports
    assert samples * ports == len(times)
    assert samples == 61  # 3 s every 50 ms, both ends
    # Every sample lists every port, in order, at the sample's time.
    assert ids == list(range(ports)) * samples
    assert times == [k * 50_000_000 / 1e9 for k in range(samples) for _ in range(ports)]
    # RED reports its estimates; the drop-tail ports none (NaN, as AqmState::NONE).
    red = [q for q, link in enumerate(words(raw, "queues", "link")) if link == 0]  # r1 <-> r2
    avg = words(raw, "queue_series", "aqm_avg")
    assert any(not math.isnan(avg[k * ports + red[0]]) for k in range(samples))
    assert all(math.isnan(a) for i, a in enumerate(avg) if i % ports not in red)
    # Flow rows: the sample's time on each of the sample's rows, ascending.
    flow_times = words(raw, "flow_series", "time_s")
    assert flow_times == sorted(flow_times)
    assert flow_times[0] == 0.0


def test_the_core_holds_the_series_compactly_and_hands_them_over() -> None:
    sim = Simulation(red_ecn_dumbbell())
    sim.run_until(sim.duration)
    held = sim._sim.series_bytes()
    raw = sim._sim.results()
    rows = {t: len(words(raw, t, "time_s")) for t in ("flow_series", "queue_series")}
    one_value_per_row = 8 * (
        len(FLOW_COLUMNS) * rows["flow_series"] + len(QUEUE_COLUMNS) * rows["queue_series"]
    )
    # Per row: 9 flow columns, 2 queue columns and a bit, plus the RED port's three estimates;
    # capacity is reserved for the whole run up front. Storing a column per row again (or a
    # copy beside the store) would be more than this bound.
    assert held < 0.6 * one_value_per_row, (held, one_value_per_row)
    # Reading a finished run's results moves the series out of the store into the columns
    # handed to Python (tests/test_series_handover.py): the store is then empty.
    sim._sim.results()
    assert sim._sim.series_bytes() == 0
