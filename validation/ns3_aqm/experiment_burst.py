#!/usr/bin/env python3
"""Explanatory experiment for the PIE transient FAILs of compare.py (not a check).

ns-3's PieQueueDisc holds its drop probability at 0 while the burst allowance
lasts; ecnsim follows RFC 8033's pseudocode and updates it throughout
(docs/models/pie.md, DEVIATION(ns-3)). With MaxBurstAllowance = max_burst = 0
on both sides that difference is gone and nothing else changes; if the 15 Mb/s
transients then agree, the hold is their cause. Same metrics and bands as
compare.py; run from the repository root::

    .venv/bin/python validation/ns3_aqm/experiment_burst.py      # ~1.5 min
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import scenarios  # noqa: E402


def main() -> int:
    scns = [
        {**s, "max_burst": 0.0}
        for s in scenarios.udp_scenarios()
        if s["aqm"] == "pie" and s["rate"] == 15e6
    ]
    jobs = [{**s, "seed": seed} for s in scns for seed in s["seeds"]]
    ns3_all = compare.run_ns3(jobs)
    head = "| scenario (max_burst 0) | metric | ecnsim | ns-3 | ecnsim - ns-3 | band | verdict |"
    compare.ROWS.extend([head,
                   "|---|---|---|---|---|---|---|"])  # fmt: skip
    for s in scns:
        ns3 = sorted(
            (r for r in ns3_all if r["config"]["id"] == s["id"]), key=lambda r: r["config"]["seed"]
        )
        compare.report(s, [compare.run_ecnsim(s, seed) for seed in s["seeds"]], ns3)
    print("\n".join(compare.ROWS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
