"""Where a hetero star's timeouts come from, in ns-2.35 and in ecnsim, seed by seed.

The harness (``compare.py``) compares totals; this script instruments both sides of
one case on the same seeds to explain them (issue 13, hetero N = 120 with ECN):

- ns-2: the agents' traced ``t_seqno_`` and ``nrexmit_`` (a timeout with data
  outstanding moves ``t_seqno_`` back to ``highest_ack_ + 1``; ``nrexmit_`` counts
  only those that cut ssthresh) and the bottleneck's ``trace-queue``.
- ecnsim: the flows table (``rto_count``: every timeout with data outstanding;
  ``rto_after_ecn``: those answered without an ssthresh cut after an ECN reduction)
  and the bottleneck's ns-2-format trace.

Both report, over [warmup, duration): the bottleneck's drops, the one-second bins in
which they fell ("episodes": RED's average above 2 max_th, every arrival dropped),
drops of each flow's first packet (ns-2's packet 0, ecnsim's sequence number 1),
timeouts with data outstanding, and the timeouts ns-2 would count.

    .venv/bin/python validation/ns2/timeouts.py                 # hetero-n120-ecn, seeds 1-5
    .venv/bin/python validation/ns2/timeouts.py hetero-n120-red 1 2
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ns2cmp
import scenarios

TRACE_TCL = """
set tf [open tcp.tr w]
for {set i 0} {$i < $N} {incr i} {
  $tcp($i) attach $tf
  foreach v {t_seqno_ nrexmit_} { $tcp($i) trace $v }
}
set qf [open q.tr w]
$ns trace-queue $r $d $qf
"""


def _queue_trace(path: str, case: ns2cmp.Case, first_seq: int) -> dict[str, int]:
    """Drops, drop episodes and first-packet drops in [warmup, duration) of an ns-2-format trace."""
    drops = first = 0
    bins: set[int] = set()
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] != "d" or p[4] != "tcp":
                continue
            t = float(p[1])
            if not case.warmup <= t < case.duration:
                continue
            drops += 1
            bins.add(int(t))
            first += int(p[10]) == first_seq
    return {"drops": drops, "episodes": len(bins), "first_packet_drops": first}


def ns2_side(case: ns2cmp.Case, seed: int) -> dict[str, int]:
    script = ns2cmp.tcl(case, seed)
    record = f"$ns at {case.warmup} {{record W}}"
    script = script.replace(record, TRACE_TCL + record)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "run.tcl"), "w") as f:
            f.write(script)
        subprocess.run([ns2cmp.NS, "run.tcl"], cwd=tmp, check=True, capture_output=True)
        out = _queue_trace(os.path.join(tmp, "q.tr"), case, first_seq=0)
        last: dict[int, float] = {}
        timeouts = counted = 0
        with open(os.path.join(tmp, "tcp.tr")) as f:
            for line in f:
                p = line.split()
                t, flow, var, val = float(p[0]), int(p[1]), p[5], float(p[6])
                inside = case.warmup <= t < case.duration
                if var == "t_seqno_":
                    # A timeout with data outstanding: t_seqno_ goes back to highest_ack_ + 1.
                    timeouts += int(inside and flow in last and val < last[flow])
                    last[flow] = val
                elif var == "nrexmit_":
                    counted += int(inside and val > 0)
    return {**out, "timeouts": timeouts, "counted": counted}


def ecnsim_side(case: ns2cmp.Case, seed: int) -> dict[str, int]:
    import ecnsim

    with tempfile.TemporaryDirectory() as tmp:
        sim = ecnsim.Simulation(ns2cmp.ecnsim_scenario(case, seed))
        # Link 0 is r - d; its r -> d direction is the bottleneck.
        sim.trace(ns2=os.path.join(tmp, "q.tr"), links=[0])
        res = sim.run()
        out = _queue_trace(os.path.join(tmp, "q.tr"), case, first_seq=1)
    ft = res.table("flows")
    rto = sum(int(x) for x in ft["rto_count"])
    after_ecn = sum(int(x) for x in ft["rto_after_ecn"])
    return {**out, "timeouts": rto, "counted": rto - after_ecn}


def _one(args: tuple[str, str, int]) -> tuple[str, int, dict[str, int]]:
    side, name, seed = args
    case = scenarios.HETERO[name]
    run = ns2_side if side == "ns-2.35" else ecnsim_side
    return side, seed, run(case, seed)


def main(argv: list[str]) -> None:
    name = argv[0] if argv else "hetero-n120-ecn"
    seeds = [int(s) for s in argv[1:]] or list(scenarios.HETERO_SEEDS)
    jobs = [(side, name, s) for s in seeds for side in ("ns-2.35", "ecnsim")]
    rows: dict[str, dict[int, dict[str, Any]]] = {"ns-2.35": {}, "ecnsim": {}}
    with ProcessPoolExecutor(max_workers=2) as pool:
        for side, seed, r in pool.map(_one, jobs):
            rows[side][seed] = r
    keys = ("drops", "episodes", "first_packet_drops", "timeouts", "counted")
    print(
        f"{name}, seeds {seeds}, over [{scenarios.HETERO[name].warmup:g}, "
        f"{scenarios.HETERO[name].duration:g}) s"
    )
    print("| side | seed | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for side, by_seed in rows.items():
        for seed in seeds:
            r = by_seed[seed]
            print(f"| {side} | {seed} | " + " | ".join(str(r[k]) for k in keys) + " |")
        means = [statistics.mean(by_seed[s][k] for s in seeds) for k in keys]
        print(f"| {side} | mean | " + " | ".join(f"{m:.1f}" for m in means) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
