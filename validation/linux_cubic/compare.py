#!/usr/bin/env python3
"""Cross-check ecnsim's CUBIC against Linux's tcp_cubic through ``ecnsim emulate``.

Run as root with ecnsim's Python, from the repository root::

    .venv/bin/python validation/linux_cubic/compare.py --save-linux F.json   # emulate + simulate
    .venv/bin/python validation/linux_cubic/compare.py --linux-json F.json   # reuse Linux's side
    .venv/bin/python validation/linux_cubic/compare.py --sim-only            # ecnsim alone
    .venv/bin/python validation/linux_cubic/compare.py --only droptail-10M-20ms-1

Every scenario runs in real time for its duration (40 s) under ``ecnsim emulate``.
Scenarios and bands: ``scenarios.py`` (committed before the first run). Prints a
Markdown table; exit status 1 if a banded check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402  (what the harnesses share)
import scenarios  # noqa: E402

#: The simulated side's profile (``--profile``): ``linux``, or ``linux-6.x`` for the RACK-TLP check.
PROFILE = ["linux"]
#: --ecnsim-tcp overrides (explanatory variants only; the simulated side).
ECNSIM_TCP: dict[str, Any] = {}
#: --linux-sysctl overrides (explanatory variants only; every emulated host's namespace).
LINUX_SYSCTL: dict[str, str] = {}


def scenario_dict(sc: dict[str, Any]) -> dict[str, Any]:
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, red, tcp

    s = ecnsim.Scenario(
        scenarios.DURATION,
        name=sc["id"],
        warmup=scenarios.WARMUP,
        seed=scenarios.SEED,
        sample_interval=scenarios.SAMPLE,
        profile=PROFILE[0],
    )
    s.router("r1", "r2")
    if sc["queue"] == "droptail":
        q = droptail(limit_packets=sc["buffer"])
        s.tcp(**{**tcp(cc="cubic", ecn="off"), **ECNSIM_TCP})
    else:
        r = sc["red"]
        q = red(
            limit_packets=r["limit"],
            min_th=r["min_th"],
            max_th=r["max_th"],
            max_p=0.1,
            w_q=0.002,
            gentle=True,
            ecn="rfc3168",
        )
        s.tcp(**{**tcp(cc="cubic", ecn="request"), **ECNSIM_TCP})
    s.link(
        "r1",
        "r2",
        rate=round(sc["rate"]),
        delay=sc["bottleneck_delay"],
        queue_ab=q,
        queue_ba=droptail(limit_packets=10000),
    )
    for i, start in enumerate(scenarios_starts(sc["n"])):
        s.host(f"s{i}", f"c{i}")
        s.link(
            f"s{i}",
            "r1",
            rate=1_000_000_000,
            delay=scenarios.ACCESS_DELAY,
            queue=droptail(limit_packets=10000),
        )
        s.link(
            "r2",
            f"c{i}",
            rate=1_000_000_000,
            delay=scenarios.ACCESS_DELAY,
            queue=droptail(limit_packets=10000),
        )
        s.flow(f"s{i}", f"c{i}", app=bulk(), start=start, name=f"f{i}")
    return s.to_dict()


def scenarios_starts(n: int) -> list[float]:
    seed = scenarios.SEED
    return [round(0.2 * i + 0.01 * ((7 * seed + 3 * i) % 5), 3) for i in range(n)]


#: A recorded side without ``cwnd_mss`` (every Linux side saved before 2026-12-03's fix) had its
#: windows divided by 1448 B, though its emulated hosts ran the ``linux`` profile's MSS of 1460
#: (``net.ipv4.tcp_timestamps = 0`` and ``advmss 1460`` from its 40-byte headers; ``ss`` shows
#: ``mss:1460``): ``_keys_to_float`` rescales such windows by 1448 / 1460.
LEGACY_CWND_DIVISOR = 1448
LEGACY_CWND_MSS = 1460


def flow_mss(results: Any, n: int) -> list[int]:
    """Each flow's MSS from the run's resolved scenario (``meta["resolved_spec"]``, which the
    simulation and the emulation both keep; the emulated hosts take it as ``advmss``): the
    ``linux`` profile's is 1460 with 40-byte headers, ``linux-6.x``'s 1448 with 52."""
    spec = results.meta["resolved_spec"]
    spec = json.loads(spec) if isinstance(spec, str) else spec
    by_name = {fl["name"]: int(fl["tcp"]["mss"]) for fl in spec["flows"]}
    return [by_name[f"f{i}"] for i in range(n)]


def side(results: Any, n: int) -> dict[str, Any]:
    """What the metrics need from one run (simulated or emulated); windows in segments of each
    flow's own MSS (``cwnd_mss``)."""
    mss = flow_mss(results, n)
    f = results.flows
    q = results.queues
    qi = int(np.flatnonzero(q["queue"].to_numpy() == "r1->r2")[0])
    fs = results.flow_series
    qs = results.queue_series
    qs = qs[qs["queue"] == "r1->r2"]
    cw = []
    for i in range(n):
        part = fs[fs["flow"] == f"f{i}"]
        cw.append(
            {
                round(float(t), 6): float(c) / mss[i]
                for t, c in zip(part["time_s"], part["cwnd_bytes"], strict=True)
            }
        )
    return {
        "goodput": [float(x) for x in f["goodput_bps"][:n]],
        "retx": int(f["packets_retransmitted"][:n].sum()),
        "drops": int(q["drops"][qi]),
        "marks": int(q["marks"][qi]),
        "queue_series": {
            round(float(t), 6): float(v) for t, v in zip(qs["time_s"], qs["packets"], strict=True)
        },
        "cwnd_series": cw,
        "cwnd_mss": mss,
        "rto": [float(x) for x in f["rto_count"][:n]],
    }


def _keys_to_float(m: dict[str, Any]) -> dict[str, Any]:
    """JSON turns the series' float keys (times) into strings: back to floats. A side recorded
    before ``cwnd_mss`` existed gets its windows rescaled (``LEGACY_CWND_DIVISOR``)."""
    k = 1.0 if "cwnd_mss" in m else LEGACY_CWND_DIVISOR / LEGACY_CWND_MSS
    return {
        **m,
        "queue_series": {float(t): v for t, v in m["queue_series"].items()},
        "cwnd_series": [{float(t): v * k for t, v in c.items()} for c in m["cwnd_series"]],
    }


def metrics(sc: dict[str, Any], m: dict[str, Any]) -> dict[str, float]:
    m = _keys_to_float(m)
    span = scenarios.DURATION - scenarios.WARMUP
    w = scenarios.WARMUP - 1e-9
    g = np.array(m["goodput"])
    out = {
        "goodput": float(g.sum()),
        "retx_per_s": m["retx"] / span,
        "signals_per_s": (m["drops"] + m["marks"]) / span,
    }
    if PROFILE[0] != "linux":
        # The RACK-TLP check (scenarios.RACK_BANDS): timeouts per second, all flows.
        out["rto_per_s"] = float(sum(m["rto"])) / span
    if sc["n"] > 1:
        out["jain"] = float(g.sum() ** 2 / (len(g) * (g**2).sum()))
    qv = [v for t, v in m["queue_series"].items() if t >= w]
    out["queue_mean"] = float(np.mean(qv)) if qv else float("nan")
    times = sorted({t for c in m["cwnd_series"] for t in c if t >= w})
    if times:
        total = [sum(c.get(t, 0.0) for c in m["cwnd_series"]) for t in times]
        out["cwnd_total"] = float(np.mean(total))
        swings = []
        for c in m["cwnd_series"]:
            v = np.array([c[t] for t in times if t in c])
            swings.append(float(np.percentile(v, 95) - np.percentile(v, 5)) if len(v) else 0.0)
        out["cwnd_swing"] = float(np.mean(swings))
    else:
        out["cwnd_total"] = out["cwnd_swing"] = float("nan")
    return out


def run_sim(sc: dict[str, Any]) -> dict[str, Any]:
    import ecnsim

    sim = ecnsim.Simulation(ecnsim.Scenario.from_dict(scenario_dict(sc)))
    sim.run()
    return side(sim.results, sc["n"])


def run_linux(sc: dict[str, Any]) -> dict[str, Any]:
    return common.linux_side(
        scenario_dict(sc), lambda res: side(res, sc["n"]), sysctls=LINUX_SYSCTL or None
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--linux-json", help="Linux's side saved by --save-linux (no emulation)")
    ap.add_argument("--save-linux", help="write Linux's side here (after each scenario)")
    ap.add_argument("--only", action="append", help="scenario id prefix (repeatable)")
    ap.add_argument("--sim-only", action="store_true", help="ecnsim's metrics alone")
    ap.add_argument(
        "--profile",
        default="linux",
        choices=["linux", "linux-6.x"],
        help="the simulated side's profile (linux-6.x: the RACK-TLP check, scenarios.RACK_BANDS)",
    )
    common.add_ecnsim_tcp_option(ap, "reduction_basis='\"ns2_window\"'")
    common.add_linux_sysctl_option(
        ap,
        "net.ipv4.tcp_wmem back at Linux's default, as the emulation had it before 348a391",
    )
    a = ap.parse_args(argv[1:])
    LINUX_SYSCTL.update(common.sysctl_overrides(a.linux_sysctl))
    PROFILE[0] = a.profile
    ECNSIM_TCP.update(common.tcp_overrides(a.ecnsim_tcp))
    scs = scenarios.scenarios()
    if a.only:
        scs = [s for s in scs if any(s["id"].startswith(o) for o in a.only)]
    names = list(scenarios.BANDS)
    if a.sim_only:
        print("| scenario | " + " | ".join(names) + " |")
        for sc in scs:
            e = metrics(sc, run_sim(sc))
            print(
                f"| {sc['id']} | "
                + " | ".join(f"{e.get(k, float('nan')):.4g}" for k in names)
                + " |"
            )
        return 0
    linux: dict[str, Any] = {}
    if a.linux_json:
        with open(a.linux_json) as fh:
            linux = json.load(fh)
    for sc in scs:
        if sc["id"] not in linux:
            print(f"emulating {sc['id']} ...", file=sys.stderr, flush=True)
            linux[sc["id"]] = run_linux(sc)
            if a.save_linux:
                with open(a.save_linux, "w") as fh:
                    json.dump(linux, fh)
    failed = total = 0
    common.table_header(["scenario"], "Linux")
    for sc in scs:
        e = metrics(sc, run_sim(sc))
        n = metrics(sc, linux[sc["id"]])
        bands = (
            scenarios.BANDS
            if PROFILE[0] == "linux"
            else {**scenarios.BANDS, **scenarios.RACK_BANDS}
        )
        t, f = common.banded_rows([sc["id"]], e, n, bands)
        total, failed = total + t, failed + f
    common.print_summary(total, failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
