"""Store size and re-aggregation time of a small hetero-style sweep, with and without series.

    python docs/scripts/store_size.py            # about two minutes on one core

Runs the same sweep (hetero_rtt as the hetero study sets it: N = 60 Reno
flows, RED, 100 s sampled every 1 s, max_p x 2, 3 seeds = 6 runs) into two fresh stores: one with
``series=True`` (what every sweep stored before: all tables) and one with
the default (flows, queues, records and the summary metrics). Prints the
stores' sizes on disk and the wall time of ``aggregate()``: over the first
recomputing the metrics from every run's tables (as before), over the
second reading the catalog only. The figures in docs/sweeps.md come from it.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import ecnsim
from ecnsim import red
from ecnsim.analysis import aggregate
from ecnsim.scenario.topology import hetero_rtt
from ecnsim.sweep import Sweep, run_sweep


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and "catalog" not in p.name)


def main() -> None:
    base = hetero_rtt(
        60,
        duration="100s",
        warmup="20s",
        aggregate_access_rate="300Mbps",
        queue=red(limit_packets=120, min_th=10, max_th=30),
        start_jitter="1s",
        sample_interval="1s",
    )
    version = aggregate.SUMMARY_VERSION
    rows = []
    for series in (True, False):
        store = Path(tempfile.mkdtemp(prefix="ecnsim-size-"))
        sweep = Sweep(
            base,
            grid={"links[0].queue_ab.max_p": [0.1, 0.5]},
            seeds=[1, 2, 3],
            name="size",
            series=series,
        )
        result = run_sweep(sweep, store, jobs=1, executor="serial")
        # "Before" recomputes every metric from the runs' tables, as a store
        # without summary metrics does (another SUMMARY_VERSION counts as none).
        aggregate.SUMMARY_VERSION = -1 if series else version
        result.aggregate(["goodput_bps"])  # the catalog is brought up to date once
        started = time.perf_counter()
        result.aggregate(["goodput_bps", "jain", "drops", "utilization"])
        agg_s = time.perf_counter() - started
        aggregate.SUMMARY_VERSION = version
        runs = len(result.runs())
        rows.append((series, runs, _size(store), agg_s))
    print("| stored | runs | store size | per run | aggregate() |")
    print("|---|---|---|---|---|")
    for series, runs, size, agg_s in rows:
        what = (
            "all tables, metrics from tables (before)"
            if series
            else "default: no series, metrics at finish"
        )
        per_run = size / runs / 1e3
        print(f"| {what} | {runs} | {size / 1e6:.2f} MB | {per_run:.0f} kB | {agg_s:.3f} s |")
    print(f"\n(ecnsim {ecnsim.__version__}; sizes exclude catalog.duckdb)")


if __name__ == "__main__":
    main()
