"""Measure how a fixed sweep scales with local workers and Dask workers; draw the figure.

Runs the same 16-run sweep (4 buffer sizes x 4 seeds of a 4-flow, 100 Mb/s
dumbbell) with each executor, into a fresh store each time, and times
``run_sweep`` as a user sees it: pool or cluster start-up, the runs, and the
writes to the store (the scenarios are checked once, beforehand). Each
configuration is measured ``--repeats`` times, in rotating order, each time
after waiting until the machine is idle (other processes using less than
``--max-busy`` percent of the CPUs over 2 s); the figure shows the medians
and every measurement.

    python docs/scripts/sweep_scaling.py --repeats 5

writes ``docs/img/sweep_scaling.png`` and ``docs/img/sweep_scaling.json``
(needs matplotlib and dask[distributed]: ``pip install 'ecnsim[dask,plot]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import ecnsim
from ecnsim import droptail, dumbbell
from ecnsim.sweep.store import Store
from ecnsim.sweep import Plan, Sweep, run_sweep

HERE = Path(__file__).resolve().parent
IMG = HERE.parent / "img"

#: (label, run_sweep keyword arguments)
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("serial\n(in-process)", {"executor": "serial"}),
    ("pool\n1 worker", {"executor": "process", "jobs": 1}),
    ("pool\n2 workers", {"executor": "process", "jobs": 2}),
    ("Dask local\n1 worker", {"dask": "local", "jobs": 1}),
    ("Dask local\n2 workers", {"dask": "local", "jobs": 2}),
]


def the_sweep(duration: str) -> Sweep:
    base = dumbbell(
        4,
        bottleneck_rate="100Mbps",
        bottleneck_delay="20ms",
        access_rate="1Gbps",
        access_delay="1ms",
        queue=droptail(limit_packets=100),
        duration=duration,
        start_jitter="1s",
        tcp={"cc": "newreno"},
        name="scaling",
    )
    return Sweep(
        base,
        grid={"links[0].queue.limit_packets": [50, 100, 200, 400]},
        seeds=[1, 2, 3, 4],
        name="scaling",
    )


def wait_for_idle(max_busy: float, max_wait: float) -> float:
    """Wait until the CPUs are less than ``max_busy`` percent busy over 2 s; return that."""
    import psutil

    deadline = time.monotonic() + max_wait
    while True:
        busy = psutil.cpu_percent(interval=2.0)
        if busy < max_busy or time.monotonic() > deadline:
            return busy


def measure(plan: Plan, kwargs: dict[str, Any]) -> tuple[float, dict[str, int]]:
    with tempfile.TemporaryDirectory() as d:
        started = time.perf_counter()
        result = run_sweep(plan, Store(d), **kwargs)
        wall = time.perf_counter() - started
        assert not result.failures, result.failures
        assert result.ran == len(plan.runs)
        return wall, result.digests()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--duration", default="20s", help="simulated time of each run")
    parser.add_argument("--max-busy", type=float, default=10.0, help="CPU %% before measuring")
    parser.add_argument("--max-wait", type=float, default=300.0, help="seconds per measurement")
    parser.add_argument("--out", type=Path, default=IMG)
    parser.add_argument(
        "--replot", action="store_true", help="redraw the figure from OUT/sweep_scaling.json"
    )
    args = parser.parse_args()
    if args.replot:
        record = json.loads((args.out / "sweep_scaling.json").read_text())
        by_label = {label.replace("\n", " "): label for label, _ in CONFIGS}
        samples = {by_label[k]: v for k, v in record["samples"].items()}
        medians = {label: statistics.median(s["wall_s"] for s in v) for label, v in samples.items()}
        plot(samples, medians, record, args.out / "sweep_scaling.png")
        return

    plan = the_sweep(args.duration).plan()
    args.out.mkdir(parents=True, exist_ok=True)
    # The work in one run, measured in this process.
    with tempfile.TemporaryDirectory() as d:
        store = Store(d)
        run_sweep(plan, store, executor="serial")
        run_walls = [store.manifest(k)["wall_s"] for k in store.run_keys()]  # type: ignore[index]
    record: dict[str, Any] = {
        "sweep": "16 runs: 4 buffer sizes x 4 seeds, 4 NewReno flows, 100 Mb/s dumbbell",
        "simulated_s_per_run": args.duration,
        "median_run_wall_s": statistics.median(run_walls),
        "ecnsim_version": ecnsim.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "repeats": args.repeats,
        "max_busy_percent": args.max_busy,
    }
    digests: dict[str, int] | None = None
    samples: dict[str, list[dict[str, float]]] = {label: [] for label, _ in CONFIGS}
    for rep in range(args.repeats):
        order = CONFIGS[rep % len(CONFIGS) :] + CONFIGS[: rep % len(CONFIGS)]
        for label, kwargs in order:
            busy = wait_for_idle(args.max_busy, args.max_wait)
            load = os.getloadavg()[0]
            wall, d = measure(plan, kwargs)
            if digests is None:
                digests = d
            assert d == digests, f"{label}: results differ from the first configuration's"
            samples[label].append({"wall_s": wall, "cpu_busy_before": busy, "load_before": load})
            print(f"{rep} {label.replace(chr(10), ' '):24s} {wall:7.2f} s  busy {busy:4.1f}%")
            # Save as we go: a long measurement is not lost to a late failure.
            record["samples"] = {k.replace("\n", " "): v for k, v in samples.items()}
            (args.out / "sweep_scaling.json").write_text(json.dumps(record, indent=1) + "\n")

    medians = {label: statistics.median(s["wall_s"] for s in v) for label, v in samples.items()}
    record["median_wall_s"] = {k.replace("\n", " "): v for k, v in medians.items()}
    (args.out / "sweep_scaling.json").write_text(json.dumps(record, indent=1) + "\n")
    plot(samples, medians, record, args.out / "sweep_scaling.png")
    print(json.dumps(record["median_wall_s"], indent=1))


def plot(
    samples: dict[str, list[dict[str, float]]],
    medians: dict[str, float],
    record: dict[str, Any],
    path: Path,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(samples)
    colors = ["#999999", "#4c72b0", "#4c72b0", "#dd8452", "#dd8452"]
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    xs = range(len(labels))
    ax.bar(xs, [medians[k] for k in labels], color=colors, alpha=0.85, width=0.6)
    for x, k in zip(xs, labels, strict=True):
        walls = [s["wall_s"] for s in samples[k]]
        ax.plot([x + 0.18] * len(walls), walls, "k.", markersize=4, alpha=0.6)
        ax.annotate(
            f"{medians[k]:.1f} s",
            (x - 0.05, medians[k]),
            textcoords="offset points",
            xytext=(0, 3),
            ha="center",
            fontsize=9,
            fontweight="bold",
        )
    ax.set_xticks(list(xs), labels, fontsize=9)
    ax.set_ylabel("wall time of the sweep (s)")
    ax.set_title(
        f"16-run sweep ({record['median_run_wall_s']:.2f} s per run in-process), "
        f"{record['cpus']}-core machine, median of {record['repeats']}",
        fontsize=10,
    )
    ax.set_ylim(0, max(s["wall_s"] for v in samples.values() for s in v) * 1.15)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
