#!/usr/bin/env python3
"""Issue 13 item 10: explanatory ecnsim variants on hetero N = 120 (not models).

Each variant copies one ns-3 behaviour found in the scripted-loss dialogues into a
throwaway build of ecnsim (``item10_experiment.patch``, applied to a copy of the tree;
the behaviours are selected per run by the bits of the environment variable ``ECNSIM_EXP``):

1. the RTO backoff cleared by any ACK of new data (ns-3 ``TcpSocketBase::NewAck`` recomputes
   ``m_rto`` from the estimator; RFC 6298 §5 keeps the backoff until a new RTT sample);
2. ssthresh from pipe at a SACK fast retransmit (ns-3 ``GetSsThresh(tcb, BytesInFlight())``;
   RFC 6675 §5 step 4.2 halves FlightSize);
4. the SACK scoreboard kept across a timeout, SACKed data skipped (ns-3's CA_LOSS; RFC 2018 §8
   clears it);
8. without SACK, ssthresh from FlightSize less one segment (ns-3's ``BytesInFlight()`` leaves out
   the segment it marks lost; the 0.5-segment-lower ssthresh of NewReno's dialogues).

Run from a copy of the tree with the patch applied and built (``patch -p1 <
validation/ns3_red/item10_experiment.patch``; ``pip install -e .`` into that copy's venv)::

    .venv/bin/python validation/ns3_red/item10_experiment.py

The findings are in docs/validation.md ("Item 10 ... the remaining gap").
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

#: (label, cc, TCP overrides, ECNSIM_EXP bits)
VARIANTS = [
    ("sack, LT", "sack", {"limited_transmit": True}, 0),
    ("sack, LT, backoff cleared by new ACKs (1)", "sack", {"limited_transmit": True}, 1),
    ("sack, LT, ssthresh from pipe (2)", "sack", {"limited_transmit": True}, 2),
    ("sack, LT, scoreboard kept after a timeout (4)", "sack", {"limited_transmit": True}, 4),
    ("sack, LT, 1 + 2 + 4", "sack", {"limited_transmit": True}, 7),
    ("newreno", "newreno", {}, 0),
    ("newreno, backoff cleared by new ACKs (1)", "newreno", {}, 1),
    ("newreno, ssthresh from FlightSize - 1 segment (8)", "newreno", {}, 8),
    ("newreno, 1 + 8", "newreno", {}, 9),
]
SEEDS = (1, 2, 3, 4)

CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import compare
cc, tcp, seed = json.loads(sys.argv[1])
r = compare.run_ecnsim(120, "red", seed, cc=cc, tcp_overrides=tcp)
b, f = r["bottleneck"], r["flows"]
s = compare.summary(r)
print(json.dumps({{
    "signals": b["drops"] + b["marks"], "early": b["drops_early"], "forced": b["drops_forced"],
    "arrivals": b["arrivals"], "retx": sum(x["retransmissions"] for x in f),
    "fr": sum(x["fast_retransmits"] for x in f), "rto": sum(x["timeouts"] for x in f),
    "goodput": s["goodput"] / 1e6, "fragile": s["share_fragile"], "robust": s["share_robust"],
}}))
"""


def main() -> int:
    import json

    print(
        "| N = 120, RED, ecnsim variant | ECNSIM_EXP | drops + marks | early / forced | arrivals "
        "| retransmitted | fast retransmits | timer expiries | goodput Mb/s | fragile / robust |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    for label, cc, tcp, bits in VARIANTS:
        runs = []
        for seed in SEEDS:
            out = subprocess.run(
                [sys.executable, "-c", CHILD.format(here=HERE), json.dumps([cc, tcp, seed])],
                env={**os.environ, "ECNSIM_EXP": str(bits)},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs.append(json.loads(out))

        def m(k: str, fmt: str = ".0f", runs: list[dict] = runs) -> str:
            return format(statistics.fmean(r[k] for r in runs), fmt)

        print(
            f"| {label} | {bits} | {m('signals')} | {m('early')} / {m('forced')} | {m('arrivals')} "
            f"| {m('retx')} | {m('fr')} | {m('rto')} | {m('goodput', '.3f')} "
            f"| {m('fragile', '.3f')} / {m('robust', '.3f')} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
