#!/usr/bin/env python3
"""Issue 13 item 10: packet traces of one scripted-loss dialogue, ecnsim beside ns-3.

For drop patterns of ``sack_dialogue.py`` (by name, e.g. ``"random 39"``, or as a
list of packet indices), runs both simulators with packet traces and prints, for
each dropped packet, which segment it carried on each side (``R`` = a
retransmission), then both senders' timelines: every data segment sent (segment
number = (seq - first data byte) / 960; ``R`` retransmission, ``X`` dropped at the
bottleneck), the duplicate ACKs, and ns-3's state changes and ecnsim's timeouts
and recoveries (read off the sender's packets: a retransmission of SND.UNA after
a 1 s gap is a timeout).

    .venv/bin/python validation/ns3/dialogue_trace.py --ns3-python "$NS3_PYTHON" --sweep 200 \\
        [--variant sack|newreno] [--limited-transmit] [--timeline] "random 39" ...

ns-3's side is rerun (packet traces are not saved); about 15 s per call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sack_dialogue as sd  # noqa: E402

MSS = 960


def ecnsim_trace(drops: list[int], limited_transmit: bool, variant: str) -> list[tuple]:
    """(time, kind, ...): ("tx", segment, retransmitted, dropped) per data packet the sender
    sends, ("ack", ack segment) per ACK it receives."""
    import ecnsim

    sim = ecnsim.Simulation(sd.ecnsim_scenario(drops, limited_transmit, variant))
    sim.trace()
    sim.run()
    tr = sim.drain_trace()
    names = {n["name"]: i for i, n in enumerate(sim.spec["nodes"])}
    s, r1, r2 = names["s"], names["r1"], names["r2"]
    out: list[tuple] = []
    highest = -1
    # Data packets as the sender puts them on its link ("+" at s -> r1); the script queue at
    # r1 drops on arrival ("d" at r1 -> r2).
    dropped_uids = set(tr[(tr.event == "d") & (tr.from_node == r1) & (tr.to_node == r2)].uid)
    for row in tr.itertuples():
        if row.event == "+" and row.from_node == s and row.to_node == r1 and row.payload > 0:
            seg = (int(row.seq) - 1) // MSS
            rexmit = seg <= highest
            highest = max(highest, seg)
            out.append((row.time_ns / 1e9, "tx", seg, rexmit, row.uid in dropped_uids))
        elif row.event == "r" and row.to_node == s and row.from_node == r1 and row.payload == 0:
            out.append((row.time_ns / 1e9, "ack", (int(row.ack) - 1) // MSS))
    return out


def ns3_trace(raw: dict[str, Any], drops: list[int]) -> list[tuple]:
    f = raw["flows"][0]
    out: list[tuple] = []
    highest = -1
    n = 0
    for t, kind, v in f["trace"]:
        if kind == "tx":
            n += 1
            seg = (int(v) - 1) // MSS
            rexmit = seg <= highest
            highest = max(highest, seg)
            out.append((t, "tx", seg, rexmit, n in drops))
        elif kind == "ack":
            out.append((t, "ack", (int(v) - 1) // MSS))
        elif kind == "state":
            out.append((t, "state", sd.STATE.get(int(v), str(v))))
        elif kind in ("cwnd", "ssthresh"):
            out.append((t, kind, v / MSS))
    return out


def lost(trace: list[tuple]) -> list[str]:
    return [f"{e[2]}{'R' if e[3] else ''}" for e in trace if e[1] == "tx" and e[4]]


def timeline(trace: list[tuple], since: float, until: float) -> list[tuple[float, str]]:
    """(time, text): data sent, ACKs (duplicates numbered), state, cwnd and ssthresh changes."""
    lines: list[tuple[float, str]] = []
    last_ack = None
    dup = 0
    for e in trace:
        if e[0] > until:
            break
        if e[1] == "tx":
            mark = ("R" if e[3] else "") + ("X" if e[4] else "")
            lines.append((e[0], f"tx {e[2]}{mark}"))
        elif e[1] == "ack":
            if e[2] == last_ack:
                dup += 1
                lines.append((e[0], f"dupack {e[2]} #{dup}"))
            else:
                dup = 0
                last_ack = e[2]
                lines.append((e[0], f"ack {e[2]}"))
        elif e[1] == "state":
            lines.append((e[0], f"state {e[2]}"))
        elif e[1] in ("cwnd", "ssthresh"):
            lines.append((e[0], f"{e[1]} {e[2]:.2f}"))
    return [x for x in lines if x[0] >= since]


def side_by_side(left: list[tuple[float, str]], right: list[tuple[float, str]]) -> list[str]:
    """One line per event, in time order: ecnsim's on the left, ns-3's on the right."""
    merged = sorted(
        [(t, 0, x) for t, x in left] + [(t, 1, x) for t, x in right], key=lambda r: (r[0], r[1])
    )
    return [
        f"{t:9.5f}  {x if side == 0 else '':<22}| {x if side == 1 else ''}" for t, side, x in merged
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("patterns", nargs="+", help='pattern names ("random 39") or "40,44,48"')
    ap.add_argument("--ns3-python", default=os.environ.get("NS3_PYTHON", "python3"))
    ap.add_argument("--sweep", type=int, default=200)
    ap.add_argument("--variant", choices=sorted(sd.VARIANTS), default="sack")
    ap.add_argument("--limited-transmit", action="store_true")
    ap.add_argument("--timeline", action="store_true", help="print both timelines side by side")
    ap.add_argument("--since", type=float, default=0.0, help="timeline start, seconds")
    ap.add_argument("--until", type=float, default=4.0, help="timeline end, seconds")
    a = ap.parse_args()
    known = {**sd.PATTERNS, **sd.sweep_patterns(a.sweep)}
    pats = {p: (known[p] if p in known else [int(x) for x in p.split(",")]) for p in a.patterns}
    p = subprocess.run(
        [a.ns3_python, os.path.join(HERE, "ns3_dumbbell.py"), "-"],
        input=json.dumps(sd.ns3_configs(pats, a.variant, trace="packets")),
        capture_output=True,
        text=True,
        check=True,
    )
    for (name, drops), raw in zip(pats.items(), json.loads(p.stdout), strict=True):
        e = ecnsim_trace(drops, a.limited_transmit, a.variant)
        n = ns3_trace(raw, drops)
        print(f"## {name}: drops {drops}")
        print(f"ecnsim lost segments: {' '.join(lost(e))}")
        print(f"ns-3   lost segments: {' '.join(lost(n))}")
        if a.timeline:
            print(f"{'time s':>9}  {'ecnsim':<22}| ns-3")
            print(
                "\n".join(
                    side_by_side(timeline(e, a.since, a.until), timeline(n, a.since, a.until))
                )
            )
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
