#!/usr/bin/env python3
"""Cross-check ecnsim's HyStart (``slow_start_exit = "hystart"``) against Linux's tcp_cubic.

Run as root with ecnsim's Python, from the repository root::

    .venv/bin/python validation/linux_hystart/compare.py --save-linux F.json   # emulate + simulate
    .venv/bin/python validation/linux_hystart/compare.py --linux-json F.json   # reuse Linux's side
    .venv/bin/python validation/linux_hystart/compare.py --sim-only            # ecnsim alone

The emulation runs in real time (30 s). Scenario and bands: ``scenarios.py`` (committed
before the first run). Prints a Markdown table; exit status 1 if a banded check fails.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402  (what the harnesses share)
import scenarios  # noqa: E402

#: --ecnsim-tcp overrides (explanatory variants only; the simulated side).
ECNSIM_TCP: dict[str, Any] = {}
#: --linux-sysctl overrides (explanatory variants only; every emulated host's namespace).
LINUX_SYSCTL: dict[str, str] = {}


def scenario_dict() -> dict[str, Any]:
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, tcp

    sc = scenarios.SCENARIO
    s = ecnsim.Scenario(
        scenarios.DURATION,
        name=sc["id"],
        seed=scenarios.SEED,
        sample_interval=scenarios.SAMPLE,
        profile="linux-6.x",
    )
    s.router("r1", "r2")
    s.tcp(**{**tcp(cc="cubic", ecn="off"), **ECNSIM_TCP})
    s.link(
        "r1",
        "r2",
        rate=round(sc["rate"]),
        delay=sc["bottleneck_delay"],
        queue_ab=droptail(limit_packets=sc["buffer"]),
        queue_ba=droptail(limit_packets=10000),
    )
    s.host("s0", "c0")
    for a, b in (("s0", "r1"), ("r2", "c0")):
        s.link(
            a,
            b,
            rate=1_000_000_000,
            delay=scenarios.ACCESS_DELAY,
            queue=droptail(limit_packets=10000),
        )
    s.flow("s0", "c0", app=bulk(), start=0.0, name="f0")
    return s.to_dict()


def side(results: Any) -> dict[str, Any]:
    """The flow's series and goodput from one run (simulated or emulated)."""
    fs = results.flow_series
    part = fs[fs["flow"] == "f0"]
    times = [float(t) for t in part["time_s"]]
    cwnd = [float(c) / scenarios.MSS for c in part["cwnd_bytes"]]
    ss = [float(x) / scenarios.MSS for x in part["ssthresh_bytes"]]
    delivered = [float(x) for x in part["bytes_delivered"]]
    return {"time": times, "cwnd": cwnd, "ssthresh": ss, "delivered": delivered}


def metrics(m: dict[str, Any]) -> dict[str, float]:
    t, cwnd, ss, dl = m["time"], m["cwnd"], m["ssthresh"], m["delivered"]
    nan = float("nan")
    out = dict.fromkeys(scenarios.BANDS, nan)
    # Goodput over [GOODPUT_FROM, end]: delivered bytes between the two samples.
    i0 = next((i for i, x in enumerate(t) if x >= scenarios.GOODPUT_FROM - 1e-9), None)
    if i0 is not None and len(t) - 1 > i0:
        out["goodput"] = 8 * (dl[-1] - dl[i0]) / (t[-1] - t[i0])
    k = next((i for i, x in enumerate(ss) if math.isfinite(x)), None)
    if k is None:
        return out
    out["exit_cwnd"] = ss[k]
    out["exit_time"] = t[k]
    out["exit_ratio"] = ss[k] / cwnd[k] if cwnd[k] else nan
    j = next((i for i in range(k + 1, len(ss)) if abs(ss[i] - ss[k]) > 0.5), None)
    if j is not None:
        out["first_loss_time"] = t[j]
        out["loss_ssthresh"] = ss[j]
    return out


def run_sim() -> dict[str, Any]:
    import ecnsim

    sim = ecnsim.Simulation(ecnsim.Scenario.from_dict(scenario_dict()))
    sim.run()
    return side(sim.results)


def run_linux() -> dict[str, Any]:
    return common.linux_side(
        scenario_dict(),
        side,
        sysctls=LINUX_SYSCTL,
        flow_columns=("flow", "busy_s", "rwnd_limited_s", "sndbuf_limited_s", "max_rwnd_bytes"),
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--linux-json", help="Linux's side saved by --save-linux (no emulation)")
    ap.add_argument("--save-linux", help="write Linux's side here")
    ap.add_argument("--sim-only", action="store_true", help="ecnsim's metrics alone")
    common.add_ecnsim_tcp_option(ap)
    common.add_linux_sysctl_option(
        ap, "the harness's own net.ipv4.tcp_wmem back at Linux's default"
    )
    a = ap.parse_args(argv[1:])
    LINUX_SYSCTL.update(common.sysctl_overrides(a.linux_sysctl))
    ECNSIM_TCP.update(common.tcp_overrides(a.ecnsim_tcp))
    e = metrics(run_sim())
    if a.sim_only:
        for name, v in e.items():
            print(f"{name}: {v:.4g}")
        return 0
    if a.linux_json:
        with open(a.linux_json) as fh:
            linux = json.load(fh)
    else:
        linux = run_linux()
        if a.save_linux:
            with open(a.save_linux, "w") as fh:
                json.dump(linux, fh)
    n = metrics(linux)
    common.table_header([], "Linux")
    total, failed = common.banded_rows([], e, n, scenarios.BANDS)
    common.print_summary(total, failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
