#!/usr/bin/env python3
"""Issue 13 item 10, follow-up: what each sender sends, and RED's idle periods, on hetero N = 120.

Beside ``item10.py``'s table: data segments sent and retransmitted (ns-3: the sockets' ``Tx``
and ``Retransmission`` traces), fast retransmits, every timer expiry, and the bottleneck's idle
periods: ecnsim's RED counts its own (queues table ``aqm_idle_periods``, ``aqm_idle_decays``,
``aqm_idle_s``); for ns-3, ``ns3_hetero.py`` records the link's idle periods (``PhyTxEnd`` to the
next ``PhyTxBegin``) and the RED disc's empty periods (``PacketsInQueue`` back from 0).

    .venv/bin/python validation/ns3_red/item10_followup.py [NS3_JSON ...]

ns-3 runs (saved): ``"$NS3_PYTHON" validation/ns3_red/ns3_hetero.py '[{"n": 120, "mode": "red",
"seed": 1}, {"n": 120, "mode": "red", "seed": 1, "sack": true}]'`` (about 5 min here), in
``results/item10_idle/``. ecnsim: 4 seeds per variant, a few seconds.
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import compare  # noqa: E402

N = 120
SEEDS = (1, 2, 3, 4)
#: (label, cc, TCP overrides)
ECNSIM = [
    ("ecnsim newreno", "newreno", {}),
    ("ecnsim sack", "sack", {}),
    ("ecnsim sack, `limited_transmit = true`", "sack", {"limited_transmit": True}),
]


def totals(r: dict[str, Any]) -> dict[str, float]:
    b = r["bottleneck"]
    f = r["flows"]
    out = {
        "signals": b.get("drops", 0) + b.get("marks", 0),
        "early": b.get("drops_early", 0),
        "forced": b.get("drops_forced", 0),
        "arrivals": b.get("arrivals", 0),
        "sent": sum(x["data_segments_sent"] for x in f),
        "retx": sum(x["retransmissions"] for x in f),
        "fr": sum(x.get("fast_retransmits", x.get("recovery_entries", 0)) for x in f),
        "rto": sum(x.get("rto_expiries", x.get("timeouts", 0)) for x in f),
    }
    i = r["idle"]
    if "aqm_idle_periods" in i:
        out.update(
            periods=i["aqm_idle_periods"],
            long=i["aqm_idle_decays"],
            idle_s=i["aqm_idle_s"],
            busy=i["utilization"],
        )
    else:
        span = r["config"]["duration"] - r["config"]["warmup"]
        out.update(
            periods=i["link_idle_periods"],
            long=i["link_idle_periods_long"],
            idle_s=i["link_idle_s"],
            busy=1 - i["link_idle_s"] / span,
            disc_periods=i["disc_empty_periods"],
            disc_long=i["disc_empty_periods_long"],
            disc_s=i["disc_empty_s"],
        )
    return out


def row(label: str, runs: list[dict[str, Any]]) -> str:
    t = [totals(r) for r in runs]

    def m(k: str, fmt: str = ".0f") -> str:
        xs = [x[k] for x in t if k in x]
        return format(statistics.fmean(xs), fmt) if xs else "-"

    disc = f" (disc empty: {m('disc_periods')} / {m('disc_long')} / {m('disc_s', '.2f')})"
    return (
        f"| {label} | {len(runs)} | {m('signals')} | {m('early')} / {m('forced')} "
        f"| {m('arrivals')} | {m('sent')} | {m('retx')} | {m('fr')} | {m('rto')} "
        f"| {m('periods')} / {m('long')} / {m('idle_s', '.2f')}{disc if 'disc_s' in t[0] else ''} "
        f"| {m('busy', '.4f')} |"
    )


def main() -> int:
    paths = sys.argv[1:] or sorted(
        glob.glob(os.path.join(HERE, "results", "item10_idle", "*.json"))
    )
    ns3: list[dict[str, Any]] = []
    for p in paths:
        with open(p) as f:
            r = json.load(f)
        ns3 += r if isinstance(r, list) else [r]
    print(
        "| N = 120, RED | seeds | drops + marks | early / forced | arrivals | data segments sent "
        "| retransmitted | fast retransmits | timer expiries "
        "| idle periods / of at least one mean-packet time / idle s | link busy |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|"
    )
    for label, cc, tcp in ECNSIM:
        runs = [compare.run_ecnsim(N, "red", s, cc=cc, tcp_overrides=tcp) for s in SEEDS]
        print(row(label, runs))
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in ns3:
        if r["n"] == N and r["mode"] == "red":
            label = "ns-3 " + ("SACK" if r["config"].get("sack") else "NewReno, classic recovery")
            groups.setdefault(label, []).append(r)
    for label, runs in sorted(groups.items()):
        print(row(label, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
