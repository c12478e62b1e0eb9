#!/usr/bin/env python3
"""Issue 13 item 10: which events start a SACK fast recovery, ecnsim against ns-3.

One SACK flow over a 10 Mb/s, 10 ms DropTail bottleneck (the settings of
``validation/ns3_red/compare.py``'s TCP: 960-byte segments, 42-byte headers,
initial window 1, 64-packet window, RTO 1 s, no delayed ACKs, no Limited
Transmit). Chosen data packets (1-based, counted where they cross the
bottleneck) are dropped: ns-3 with ``ns3_dumbbell.py``'s ``drops`` (an error
model at r2), ecnsim with a ``script`` queue at r1. For each drop pattern the
script prints the entries into fast recovery and the timeouts on both sides,
and for ns-3 the congestion-state sequence, so the recoveries ns-3 starts and
ecnsim does not can be read off.

    .venv/bin/python validation/ns3/sack_dialogue.py [--ns3-python $NS3_PYTHON] [--json out.json]

What each side counts (the same event on both): ``fast_recoveries`` =
ecnsim ``fast_retransmits`` / ns-3 entries into CA_RECOVERY; ``timeouts`` =
ecnsim ``rto_count`` (every expiry) / ns-3 ``rto_expiries`` (every expiry,
counted from the RTO trace's backoff) and ``loss_entries`` (entries into
CA_LOSS, what ``ns3_hetero.py`` reports as timeouts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
DURATION = 4.0

# Drop patterns: data packets (1-based) dropped as they cross the bottleneck.
# With initial window 1 and no loss, cwnd is 16 packets when packet 16-31 are sent
# (slow start), 32 for packets 32-63 and 64 (the cap) from packet 64 on.
PATTERNS: dict[str, list[int]] = {
    "one loss": [40],
    "two in a window": [40, 44],
    "three in a window": [40, 44, 48],
    "three adjacent": [40, 41, 42],
    "five in a window": [40, 42, 44, 46, 48],
    "ten adjacent": list(range(40, 50)),
    "half a window": list(range(40, 72, 2)),
    "all but two of a window": [k for k in range(40, 72) if k not in (50, 60)],
    "loss, then loss in next window": [40, 90],
    "loss in each of 4 windows": [40, 100, 160, 220],
    "window-edge pair": [63, 64],
    "tail of a window": list(range(60, 64)),
    # Found by the sweep (``random 30``): the same seven original segments are lost in
    # both; the last loss (packet 390, segment 383) comes when cwnd is under 4 segments.
    # ns-3 sends a new segment on each of the first two duplicate ACKs and so gets the
    # third; ecnsim (no Limited Transmit, as configured) has two and waits for the RTO.
    "last loss at cwnd < 4": [112, 247, 348, 351, 375, 388, 396],
}


def sweep_patterns(count: int) -> dict[str, list[int]]:
    """``count`` random drop patterns (fixed seed): 2 to 12 drops among data packets 30-400,
    clustered (a run of nearby packets) or scattered, to find where the two part."""
    import random

    rng = random.Random(13)
    out: dict[str, list[int]] = {}
    for i in range(count):
        k = rng.randint(2, 12)
        if i % 2:
            base = rng.randint(30, 300)
            drops = sorted(rng.sample(range(base, base + rng.randint(k, 3 * k + 40)), k))
        else:
            drops = sorted(rng.sample(range(30, 400), k))
        out[f"random {i}"] = drops
    return out


#: ``--variant``: ecnsim's cc and ns-3's SACK switch (both with ns-3's classic recovery).
VARIANTS = {"sack": ("sack", True), "newreno": ("newreno", False)}


def tcp_settings(variant: str = "sack") -> dict[str, Any]:
    return {
        "cc": VARIANTS[variant][0],
        "mss": 960,
        "header_bytes": 42,
        "initial_window": 1,
        "max_cwnd": 64,
        "rcv_window": 64 * 960,
        "initial_rto": 1.0,
        "min_rto": 1.0,
        "max_rto": 60.0,
        "clock_granularity": 0.001,
        "delayed_ack": False,
        "limited_transmit": False,
        "ca_increase": "per_ack_truncated",
    }


def ecnsim_scenario(drops: list[int], limited_transmit: bool = False, variant: str = "sack") -> Any:
    """The ecnsim side of one drop pattern."""
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, queue, tcp

    sc = ecnsim.Scenario(DURATION, name="sack_dialogue", seed=1)
    sc.tcp(**tcp(**{**tcp_settings(variant), "limited_transmit": limited_transmit}))
    sc.host("s")
    sc.host("c")
    sc.router("r1")
    sc.router("r2")
    big = droptail(limit_packets=10000)
    bn = queue(
        "script",
        limit_packets=100,
        rules=[{"action": "drop", "packets": "data", "nth": drops}],
    )
    sc.link("s", "r1", rate=1_000_000_000, delay=0.001, queue=big)
    sc.link("r1", "r2", rate=10_000_000, delay=0.010, queue_ab=bn, queue_ba=big)
    sc.link("r2", "c", rate=1_000_000_000, delay=0.001, queue=big)
    sc.flow("s", "c", app=bulk(), start=0.0, name="f0")
    return sc


def run_ecnsim(
    drops: list[int], limited_transmit: bool = False, variant: str = "sack"
) -> dict[str, Any]:
    import ecnsim

    res = ecnsim.Simulation(ecnsim_scenario(drops, limited_transmit, variant)).run()
    ft = res.table("flows")
    return {
        "fast_recoveries": int(ft["fast_retransmits"][0]),
        "timeouts": int(ft["rto_count"][0]),
        "retransmissions": int(ft["packets_retransmitted"][0]),
        "delivered_packets": int(ft["bytes_delivered"][0]) // 960,
    }


def ns3_configs(
    patterns: dict[str, list[int]], variant: str = "sack", trace: bool | str = True
) -> list[dict[str, Any]]:
    out = []
    for drops in patterns.values():
        out.append(
            {
                "n_flows": 1,
                "duration": DURATION,
                "bottleneck_rate": 10e6,
                "bottleneck_delay": 0.010,
                "access_rate": 1e9,
                "access_delay": 0.001,
                "queue_packets": 100,
                "drops": drops,
                "trace": trace,
                "tcp": {
                    "sack": VARIANTS[variant][1],
                    "segment_size": 960,
                    "initial_cwnd": 1,
                    "rcv_window": 64 * 960,
                    "snd_buf": 131072,
                    "recovery": "classic",
                },
            }
        )
    return out


STATE = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}


def ns3_summary(r: dict[str, Any]) -> dict[str, Any]:
    f = r["flows"][0]
    states, rtos = [], []
    last_rto = None
    expiries = 0
    for t, kind, v in f["trace"]:
        if kind == "state":
            states.append((round(t, 4), STATE.get(int(v), str(v))))
            if int(v) == 4:
                expiries += 1
        elif kind == "rto":
            # A repeated expiry in Loss doubles the RTO without a new state change.
            if (
                last_rto is not None
                and v >= 2 * last_rto - 1e-9
                and states
                and states[-1][1] == "Loss"
            ):
                expiries += 1
            last_rto = v
            rtos.append(v)
    return {
        "fast_recoveries": int(f["fast_recoveries"]),
        "loss_entries": int(f["timeouts"]),
        "retransmissions": int(f["retransmissions"]),
        "delivered_packets": int(f["rx_bytes_total"]) // 960,
        "states": states,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns3-python", default=os.environ.get("NS3_PYTHON", "python3"))
    ap.add_argument("--ns3-json", help="saved ns-3 output (skip running ns-3)")
    ap.add_argument("--json", help="write both sides' results here")
    ap.add_argument(
        "--limited-transmit",
        action="store_true",
        help="run ecnsim with RFC 3042 Limited Transmit (ns-3 has it off but sends by pipe)",
    )
    ap.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        default="sack",
        help="sack (ecnsim sack, ns-3 Sack true) or newreno (ecnsim newreno, ns-3 Sack false); "
        "ns-3 runs TcpNewReno with TcpClassicRecovery in both",
    )
    ap.add_argument("--save-ns3", help="write ns-3's output here (state changes only)")
    ap.add_argument("--sweep", type=int, default=0, help="add this many random drop patterns")
    ap.add_argument("--differ", action="store_true", help="print only the patterns that differ")
    a = ap.parse_args()
    patterns = {**PATTERNS, **sweep_patterns(a.sweep)}
    if a.ns3_json:
        with open(a.ns3_json) as fh:
            ns3_raw = json.load(fh)
    else:
        p = subprocess.run(
            [a.ns3_python, os.path.join(HERE, "ns3_dumbbell.py"), "-"],
            input=json.dumps(ns3_configs(patterns, a.variant)),
            capture_output=True,
            text=True,
            check=True,
        )
        ns3_raw = json.loads(p.stdout)
    if a.save_ns3:
        for r in ns3_raw:
            for f in r["flows"]:
                f["trace"] = [e for e in f.get("trace", []) if e[1] in ("state", "rto")]
        with open(a.save_ns3, "w") as fh:
            json.dump(ns3_raw, fh)
    rows = []
    print(
        "| pattern (dropped data packets) | ecnsim FR / RTO / rexmit "
        "| ns-3 FR / Loss / rexmit | ns-3 states |"
    )
    print("|---|---|---|---|")
    differ = 0
    for (name, drops), raw in zip(patterns.items(), ns3_raw, strict=True):
        e = run_ecnsim(drops, a.limited_transmit, a.variant)
        n = ns3_summary(raw)
        rows.append({"pattern": name, "drops": drops, "ecnsim": e, "ns3": n, "ns3_raw": raw})
        same = (e["fast_recoveries"], e["timeouts"]) == (n["fast_recoveries"], n["loss_entries"])
        differ += not same
        if a.differ and same:
            continue
        seq = " ".join(f"{s}@{t}" for t, s in n["states"])
        print(
            f"| {name} ({' '.join(map(str, drops))}) | {e['fast_recoveries']} / {e['timeouts']} / "
            f"{e['retransmissions']} | {n['fast_recoveries']} / {n['loss_entries']} / "
            f"{n['retransmissions']} | {seq} |"
        )
    print(f"\n{differ} of {len(patterns)} patterns differ in fast recoveries or timeouts")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
