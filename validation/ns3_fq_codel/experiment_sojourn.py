#!/usr/bin/env python3
"""Explanatory variant for the `mixed` sojourn FAIL (docs/validation.md, FQ-CoDel section):
ecnsim's mean sojourn measured as ns-3's SojournTime trace does (departed packets only,
from the bottleneck's packet trace) next to compare.py's Little's-law mean (backlog over
departures, which also counts the time waited by packets the overflow rule later drops
from the head of the fattest queue). Not banded.

    .venv/bin/python validation/ns3_fq_codel/experiment_sojourn.py
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import scenarios  # noqa: E402


def main() -> int:
    import ecnsim

    gid = "mixed"
    g = scenarios.GROUPS[gid]
    sim = ecnsim.Simulation(compare.ecnsim_scenario(gid, 1))
    dep_sum = dep_n = 0.0
    head_sum = head_n = 0.0
    for ev, t0, tn in compare.bottleneck_leaves(sim, g):
        if ev == "-":
            dep_sum += (tn - t0) / 1e9
            dep_n += 1
        elif t0 != tn:  # dropped after waiting: the overflow rule's head drops
            head_sum += (tn - t0) / 1e9
            head_n += 1
    little = compare.summarise(gid, [compare.run_ecnsim(gid, 1)])["sojourn_ms"]
    print(f"ecnsim, Little's law (compare.py): {little:.0f} ms")
    print(f"ecnsim, departed packets only (as ns-3's SojournTime): {1e3 * dep_sum / dep_n:.0f} ms")
    wait = 1e3 * head_sum / max(head_n, 1)
    print(f"ecnsim, packets dropped after waiting: {head_n:.0f}, mean wait {wait:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
