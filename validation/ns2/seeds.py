#!/usr/bin/env python3
"""One AQM case (CBR or TCP) over several seeds in both simulators: mean ± sd per metric.

The one-seed bands of ``scenarios.AQM_CBR`` and the five-seed bands of
``scenarios.AQM_TCP`` are fixed; this tells whether a difference is the seeds'
or the model's::

    .venv/bin/python validation/ns2/seeds.py rem-cbr queue_mean,prob_mean,drop_rate
    .venv/bin/python validation/ns2/seeds.py red-markp-tcp marks,drops,goodput_pps 1-20

The last column is the difference of the means over its standard error (Welch). It is
read, as written before any run: |difference / SE| < 2 is what independent seeds of
one mechanism give (about 95 % of the time); 2 or more in a metric is a lead to a
mechanism difference, to be found in the models' source, never a verdict by itself.
"""

from __future__ import annotations

import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ns2cmp
import scenarios


def seed_range(text: str) -> range:
    """``"1-20"`` -> seeds 1 to 20."""
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def main(name: str, metrics: list[str], seeds: range = range(1, 6)) -> None:
    case = {**scenarios.AQM_CBR, **scenarios.AQM_TCP}[name]
    with ThreadPoolExecutor(2) as ex:
        a = list(ex.map(lambda s: ns2cmp.summary(case, ns2cmp.run_ns2(case, s)), seeds))
    b = [ns2cmp.summary(case, ns2cmp.run_ecnsim(case, s)) for s in seeds]
    print(f"seeds {seeds.start}-{seeds.stop - 1}\n")
    print("| case | metric | ecnsim | ns-2.35 | difference / SE |\n|---|---|---|---|---|")
    for m in metrics:
        xa, xb = [r[m] for r in a], [r[m] for r in b]
        ma, sa = statistics.fmean(xa), statistics.stdev(xa)
        mb, sb = statistics.fmean(xb), statistics.stdev(xb)
        se = (sa**2 / len(xa) + sb**2 / len(xb)) ** 0.5
        print(
            f"| {name} | {m} | {mb:.4g} ± {sb:.2g} | {ma:.4g} ± {sa:.2g} | {(mb - ma) / se:+.1f} |"
        )
    print("\nper seed (ecnsim / ns-2.35):")
    for s, ra, rb in zip(seeds, a, b, strict=True):
        print(f"  {s:3d}  " + "  ".join(f"{m} {rb[m]:.4g} / {ra[m]:.4g}" for m in metrics))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","), *(seed_range(a) for a in sys.argv[3:4]))
