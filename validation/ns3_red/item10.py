#!/usr/bin/env python3
"""Issue 13 item 10: why ecnsim's RED gives fewer congestion signals than ns-3's
on hetero N = 120, and a different share per RTT group.

Runs ecnsim variants that each change one suspect (TCP variant; RED thresholds
shifted by one packet, which is what ns-3's 1-packet device queue below the
queue disc does to the queue RED sees) and tabulates them beside saved ns-3
runs (``ns3_hetero.py`` outputs: NewReno with classic recovery, the same with
``ns1_compat`` (RED's count reset after a forced drop, as ns-2), and SACK).

    .venv/bin/python validation/ns3_red/item10.py NS3_JSON_DIR

The findings are in docs/validation.md ("Item 10: fewer signals than ns-3").
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import compare  # noqa: E402

N = 120
SEEDS = (1, 2, 3, 4)
#: (label, cc, RED overrides)
ECNSIM = [
    ("ecnsim reno", "reno", {}),
    ("ecnsim newreno", "newreno", {}),
    ("ecnsim sack", "sack", {}),
    ("ecnsim newreno, min/max_th + 1", "newreno", {"min_th": 11, "max_th": 31}),
    ("ecnsim sack, min/max_th + 1", "sack", {"min_th": 11, "max_th": 31}),
]


def row(label: str, runs: list[dict]) -> str:
    s = [compare.summary(r) for r in runs]

    def m(k: str, fmt: str = ".0f") -> str:
        xs = [x[k] for x in s if k in x]
        return format(statistics.fmean(xs), fmt) if xs else "-"

    to = [sum(f.get("timeouts", f.get("loss_entries", 0)) for f in r["flows"]) for r in runs]
    fr = [
        sum(f.get("fast_retransmits", f.get("recovery_entries", 0)) for f in r["flows"])
        for r in runs
    ]
    return (
        f"| {label} | {len(runs)} | {m('signals')} | {m('drops_early')} | {m('drops_forced')} "
        f"| {m('marks')} | {m('arrivals')} | {m('goodput', '.4g')} | {statistics.fmean(to):.0f} "
        f"| {statistics.fmean(fr):.0f} | {m('share_fragile', '.3f')} / {m('share_robust', '.3f')} |"
    )


def main() -> int:
    ns3_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "item10")
    ns3 = []
    for p in sorted(glob.glob(os.path.join(ns3_dir, "*.json"))):
        with open(p) as f:
            text = f.read().strip()
        if text:
            r = json.loads(text)
            ns3 += r if isinstance(r, list) else [r]
    head = (
        "| run | seeds | drops + marks | early drops | forced drops | marks | arrivals "
        "| goodput b/s | timeouts | fast retransmits | fragile / robust share |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|"
    )
    for mode in ("red", "ecn"):
        print(f"\nN = {N}, {mode}\n\n{head}")
        for label, cc, red in ECNSIM:
            runs = [compare.run_ecnsim(N, mode, s, cc=cc, red_overrides=red) for s in SEEDS]
            print(row(label, runs))
        groups: dict[str, list[dict]] = {}
        for r in ns3:
            c = r["config"]
            if r["n"] != N or r["mode"] != mode:
                continue
            label = "ns-3 " + ("sack" if c.get("sack") else "newreno classic")
            if c.get("ns1_compat"):
                label += ", Ns1Compat"
            groups.setdefault(label, []).append(r)
        for label, runs in sorted(groups.items()):
            print(row(label, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
