#!/usr/bin/env python3
"""One AQM-with-CBR case over seeds 1-5 in both simulators: mean ± sd per metric.

The one-seed bands of ``scenarios.AQM_CBR`` are fixed; this tells whether a
one-seed difference is the seed's or the model's::

    .venv/bin/python validation/ns2/seeds.py rem-cbr queue_mean,prob_mean,drop_rate
"""

from __future__ import annotations

import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ns2cmp
import scenarios


def main(name: str, metrics: list[str], seeds: range = range(1, 6)) -> None:
    case = scenarios.AQM_CBR[name]
    with ThreadPoolExecutor(2) as ex:
        a = list(ex.map(lambda s: ns2cmp.summary(case, ns2cmp.run_ns2(case, s)), seeds))
    b = [ns2cmp.summary(case, ns2cmp.run_ecnsim(case, s)) for s in seeds]
    print("| case | metric | ecnsim | ns-2.35 | difference / SE |\n|---|---|---|---|---|")
    for m in metrics:
        xa, xb = [r[m] for r in a], [r[m] for r in b]
        ma, sa = statistics.fmean(xa), statistics.stdev(xa)
        mb, sb = statistics.fmean(xb), statistics.stdev(xb)
        se = (sa**2 / len(xa) + sb**2 / len(xb)) ** 0.5
        print(
            f"| {name} | {m} | {mb:.4g} ± {sb:.2g} | {ma:.4g} ± {sa:.2g} | {(mb - ma) / se:+.1f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","))
