"""Measure what one run of each study costs, against the estimate `ecnsim study list` shows.

For each study, a few points of its full grid (spread over the estimate's range:
the cheapest, the quartiles and the dearest) run one at a time, seed 1, through
the same path `ecnsim study run` takes (plan, worker, derive, store), each in a
fresh temporary store; the wall time of each includes planning, the
simulation, the study's derive step and the store's write. The output is one
row per point (estimate, measured, ratio) and a summary per study; with
``--json FILE`` the rows too, with the machine, date and commit.

    python bench/study_timings.py                      # every study, 5 points each
    python bench/study_timings.py hetero --points 3
    python bench/study_timings.py --json bench/results/study-timings.json

The estimates are each study's ``estimate_seconds`` (a formula per study, its
coefficients measured with this script; see docs/performance.md, "Study run
times").
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _sample(points: list[dict[str, Any]], estimates: list[float], k: int) -> list[int]:
    """Indices of ``k`` points spread evenly over the estimates' order (both ends included)."""
    order = sorted(range(len(points)), key=lambda i: (estimates[i], i))
    if k >= len(order):
        return order
    if k == 1:
        return [order[len(order) // 2]]
    picks = [order[round(j * (len(order) - 1) / (k - 1))] for j in range(k)]
    return list(dict.fromkeys(picks))


def time_point(study: Any, params: Any, point: dict[str, Any]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``point`` (seed 1) through the study's run path."""
    from ecnsim.studies._base import _plan_points
    from ecnsim.sweep.execute import run_sweep
    from ecnsim.sweep.store import Store

    with tempfile.TemporaryDirectory(prefix="ecnsim-timing-") as tmp:
        store = Store(Path(tmp) / "store")
        t0, c0 = time.perf_counter(), time.process_time()
        plan = _plan_points(
            study,
            params,
            [point],
            lambda pt: study.scenario(params, pt),
            lambda pt: study.job(params, pt),
            [1],
            name=f"timing-{study.name}",
            store=store.root,
        )
        result = run_sweep(plan, store, jobs=1, executor="serial", progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if result.failures:
            raise RuntimeError(f"{study.name} {point}: the run failed: {result.failures}")
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    from ecnsim import studies

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("studies", nargs="*", help="study names (default: all)")
    ap.add_argument("--points", type=int, default=5, help="points per study (default 5)")
    ap.add_argument("--quick", action="store_true", help="time the --quick grid instead")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    args = ap.parse_args(argv)
    names = args.studies or studies.names()
    rows: list[dict[str, Any]] = []
    for name in names:
        study = studies.get(name)
        params = study.Params()
        if args.quick:
            params = study.quick(params)
        # A pilot stage's choices only set queue parameters, not the amount of work.
        params = study.placeholder_params(params)
        points = study.grid(params)
        estimates = [study.estimate_seconds(params, p) for p in points]
        ratios = []
        for i in _sample(points, estimates, max(1, args.points)):
            wall, measured = time_point(study, params, points[i])
            ratio = estimates[i] / measured
            ratios.append(ratio)
            rows.append(
                {
                    "study": name,
                    "point": points[i],
                    "estimate_s": round(estimates[i], 3),
                    "measured_cpu_s": round(measured, 3),
                    "measured_wall_s": round(wall, 3),
                    "estimate_over_measured": round(ratio, 2),
                }
            )
            print(
                f"{name:8s} estimate {estimates[i]:7.2f} s  measured {measured:7.2f} s CPU "
                f"({wall:.2f} s wall)  "
                f"x{ratio:5.2f}  {points[i]}",
                flush=True,
            )
        print(
            f"{name:8s} estimate / measured: median x{statistics.median(ratios):.2f}, "
            f"range x{min(ratios):.2f} to x{max(ratios):.2f}",
            flush=True,
        )
    if args.json:
        record = {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": _commit(),
            "machine": {
                "cpu": platform.processor() or platform.machine(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "load_average": os.getloadavg()[0],
            },
            "quick": args.quick,
            "rows": rows,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
