"""Measure the emulation driver's limits on this machine (root; docs/emulation.md).

For each bottleneck rate, one window-limited Reno bulk flow crosses

    s0 --(10 x rate), 1 ms-- r1 ==rate, 10 ms, DropTail== r2 --(10 x rate), 1 ms-- c0

(every queue holds twice the receive window, so no packet is lost) for
``--duration`` seconds of real time, with the driver under SCHED_FIFO and
under normal scheduling. Recorded per run: goodput against the payload rate
(rate x 1460 / 1500), the departure error (how late each packet is written to
its host against its simulated time: p50, p99, max), the share of departures
later than one packet's serialisation time at that rate, and the machine's
load average at the start and the end.

A rate is **kept exact** when goodput is within 1 % of the payload rate and
the p99 departure error is below one 1500 B packet's serialisation time at
that rate (packets leave in the simulated order and spacing to within one
packet). Criterion fixed before the measurements.

    sudo python docs/scripts/emulation_limits.py --rates 10,20,50,100,200,500

writes ``docs/img/emulation_limits.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from ecnsim.emulation import Emulation


def scenario(rate_mbps: float, duration: float) -> dict[str, Any]:
    # Window: 2 x the bandwidth-delay product (RTT 24 ms), at most 64 MB; buffer above it.
    bdp = rate_mbps * 1e6 / 8 * 0.024
    window = int(max(64_000, 2 * bdp))
    # Room for the whole window in every queue: Linux sends a window's worth of packets at
    # once (no pacing for Reno), and they enter the access link's queue as they are read.
    buffer = 2 * int(window / 1448) + 100
    return {
        "name": f"limits-{rate_mbps:g}",
        "simulation": {"duration": f"{duration}s", "warmup": "1s", "seed": 1},
        "tcp": {"cc": "reno", "rcv_window": f"{window}B", "initial_window": 10},
        "nodes": [
            {"name": "s0", "kind": "host"},
            {"name": "c0", "kind": "host"},
            {"name": "r1", "kind": "router"},
            {"name": "r2", "kind": "router"},
        ],
        "links": [
            {
                "a": "r1",
                "b": "r2",
                "rate": f"{rate_mbps}Mbps",
                "delay": "10ms",
                "queue": {"type": "droptail", "limit_packets": buffer},
            },
            {
                "a": "s0",
                "b": "r1",
                "rate": f"{10 * rate_mbps}Mbps",
                "delay": "1ms",
                "queue": {"type": "droptail", "limit_packets": buffer},
            },
            {
                "a": "r2",
                "b": "c0",
                "rate": f"{10 * rate_mbps}Mbps",
                "delay": "1ms",
                "queue": {"type": "droptail", "limit_packets": buffer},
            },
        ],
        "flows": [{"name": "bulk", "src": "s0", "dst": "c0"}],
    }


def measure(rate: float, duration: float, realtime: bool) -> dict[str, Any]:
    emu = Emulation(
        scenario(rate, duration),
        realtime_priority=10 if realtime else None,
        pool_packets=65536,
    )
    res = emu.run()
    e = res.tables["emulation"].to_pandas().iloc[0]
    f = res.tables["flows"].to_pandas().iloc[0]
    payload_rate = rate * 1e6 * 1460 / 1500
    packet_time_ns = 1500 * 8 / (rate * 1e6) * 1e9
    p99 = float(e["departure_error_p99_ns"])
    goodput = float(f["goodput_bps"])
    return {
        "rate_mbps": rate,
        "realtime": realtime,
        "goodput_ratio": goodput / payload_rate,
        "departures": int(e["departures"]),
        "departure_error_p50_us": float(e["departure_error_p50_ns"]) / 1e3,
        "departure_error_p99_us": p99 / 1e3,
        "departure_error_max_us": float(e["departure_error_max_ns"]) / 1e3,
        "wakeup_error_p99_us": float(e["wakeup_error_p99_ns"]) / 1e3,
        "packet_time_us": packet_time_ns / 1e3,
        "late_over_1ms": int(e["late_departures"]),
        "exact": abs(goodput / payload_rate - 1) <= 0.01 and p99 < packet_time_ns,
        "loadavg_start": res.meta.get("loadavg_start"),
        "loadavg_end": res.meta.get("loadavg_end"),
        "realtime_error": str(e["realtime_error"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="10,20,50,100,200,500", help="Mb/s, comma-separated")
    ap.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    ap.add_argument(
        "--out", default=str(Path(__file__).parent.parent / "img" / "emulation_limits.json")
    )
    ap.add_argument("--label", default="", help="free text stored with the results (e.g. 'quiet')")
    args = ap.parse_args()
    rows = []
    for rate in (float(r) for r in args.rates.split(",")):
        for realtime in (True, False):
            row = measure(rate, args.duration, realtime)
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = Path(args.out)
    previous = json.loads(out.read_text()) if out.exists() else {"sessions": []}
    previous["sessions"].append(
        {
            "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "label": args.label,
            "machine": f"{platform.node()} {os.cpu_count()} CPUs, kernel {platform.release()}",
            "rows": rows,
        }
    )
    out.write_text(json.dumps(previous, indent=1) + "\n")


if __name__ == "__main__":
    main()
