#!/usr/bin/env python3
"""Explanatory variant for the RED `udp` FAILs (docs/validation.md, "AQM: PIE and RED on the
FQ-CoDel scenarios"): ecnsim's TCP with `ecn_one_segment = "linux"` (an ECN-Echo at a one-
segment window still lets one segment go per round trip) instead of the default `"rfc3168"`
(reset the timer and wait for it, RFC 3168 §6.1.2), the only change, against ns-3's recorded
runs with the same bands. Not a model change.

    .venv/bin/python validation/ns3_fq_codel/experiment_one_segment.py      # ~1 min
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402


def main() -> int:
    import ecnsim.scenario.spec as spec

    original = spec.tcp

    def tcp(**kw: Any) -> dict[str, Any]:
        return original(**{**kw, "ecn_one_segment": "linux"})

    spec.tcp = tcp  # compare.ecnsim_scenario looks it up at call time
    with open(os.path.join(HERE, "results", "ns3_pie_red.json")) as fh:
        ns3 = [r for r in json.load(fh) if r["config"]["id"] == "udp"]
    n = compare.summarise("udp", [r for r in ns3 if r["config"]["disc"] == "red"])
    e = compare.summarise("udp", [compare.run_ecnsim("udp", s, "red") for s in (1, 2, 3)])
    print("| group | metric | ecnsim (one segment: linux) | ns-3 | band | result |")
    print("|---|---|---|---|---|---|")
    for name, ev, nv, band, ok in compare.checks_aqm("udp", e, n):
        print(f"| udp | {name} | {ev:.4g} | {nv:.4g} | {band} | {'pass' if ok else 'FAIL'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
