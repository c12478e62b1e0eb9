#!/usr/bin/env python3
"""Explanatory variant for the FQ-PIE `udp` sojourn FAILs (docs/validation.md, "AQM: FQ-PIE
against ns-3's FqPieQueueDisc"): ecnsim's FQ-PIE with `max_burst = 0` (no burst allowance)
instead of 150 ms, the only change, against ns-3's recorded runs with the same bands, and
the UDP flow queue's sojourn per seed with either value. RFC 8033 §4.4 and Linux
(`pie_calculate_probability` calls `pie_vars_init` once the queue is calm) give a queue its
allowance back whenever its probability has decayed to 0; ns-3's three-state burst machine
re-arms it only after 1.5 s of calm. Not a model change.

    .venv/bin/python validation/ns3_fq_codel/experiment_fq_pie_burst.py      # ~1 min
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
    original = compare.ecnsim_disc

    def no_burst(disc: str) -> dict[str, Any]:
        return {**original(disc), "max_burst": 0.0}

    with open(os.path.join(HERE, "results", "ns3_fq_pie.json")) as fh:
        ns3 = [r for r in json.load(fh) if r["config"]["id"] == "udp"]
    print("| max_burst | seed | ecnsim mean / p90 / p99 sojourn, ms (all flows) |")
    print("|---|---|---|")
    runs: dict[float, list[dict[str, Any]]] = {}
    for burst, disc in ((0.150, original), (0.0, no_burst)):
        compare.ecnsim_disc = disc  # compare.ecnsim_scenario looks it up at call time
        runs[burst] = [compare.run_ecnsim("udp", s, "fq_pie") for s in (1, 2, 3)]
        for s, r in zip((1, 2, 3), runs[burst], strict=True):
            x = compare.summarise("udp", [r])
            keys = ("sojourn_ms", "sojourn_p90_ms", "sojourn_p99_ms")
            stats = " / ".join(f"{x[k]:.1f}" for k in keys)
            print(f"| {burst * 1e3:g} ms | {s} | {stats} |")
    compare.ecnsim_disc = original
    n = compare.summarise("udp", ns3)
    e = compare.summarise("udp", runs[0.0])
    print()
    print("| group | metric | ecnsim (max_burst 0) | ns-3 | band | result |")
    print("|---|---|---|---|---|---|")
    for name, ev, nv, band, ok in compare.checks_aqm("udp", e, n, "fq_pie"):
        print(f"| udp | {name} | {ev:.4g} | {nv:.4g} | {band} | {'pass' if ok else 'FAIL'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
