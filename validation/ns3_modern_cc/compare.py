#!/usr/bin/env python3
"""Cross-check ecnsim's CUBIC and DCTCP against ns-3 3.44's TcpCubic and TcpDctcp.

Run with ecnsim's Python, from the repository root::

    .venv/bin/python validation/ns3_modern_cc/compare.py --save-ns3 F.json   # both simulators
    .venv/bin/python validation/ns3_modern_cc/compare.py --ns3-json F.json   # reuse ns-3's output
    .venv/bin/python validation/ns3_modern_cc/compare.py --ecnsim-only       # no ns-3, no checks
    .venv/bin/python validation/ns3_modern_cc/compare.py --only cubic-10M-20ms-1 --variant hystart

Scenarios and bands: ``scenarios.py`` (committed before the first comparison).
ns-3 runs through ``validation/ns3/ns3_dumbbell.py`` in $NS3_PYTHON (``--jobs``
processes). Prints a Markdown table; exit status 1 if a banded check fails.
``--variant`` runs an explanatory ns-3 variant (not banded): ``hystart`` (ns-3's
HyStart on, its default).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402  (what the harnesses share)
import scenarios  # noqa: E402

NS3_SCRIPT = os.path.join(HERE, "..", "ns3", "ns3_dumbbell.py")
NS3_PYTHON = os.environ.get("NS3_PYTHON", "python3")
MSS = 1460
#: --ecnsim-tcp overrides (explanatory variants only).
ECNSIM_TCP: dict[str, Any] = {}
#: --profile: the ecnsim side's profile (an explanatory variant; None: the Scenario's default,
#: the checked setting). The harness's explicit TCP settings still apply under it.
PROFILE: list[str | None] = [None]
#: --variant's choices: explanatory ns-3 variants that ``ns3_config`` knows (a harness that
#: loads this one with its own ``ns3_config`` replaces them).
VARIANTS = ["hystart"]


def ecnsim_scenario(sc: dict[str, Any]) -> Any:
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, tcp, threshold

    s = ecnsim.Scenario(
        scenarios.DURATION,
        name=sc["id"],
        warmup=scenarios.WARMUP,
        seed=scenarios.SEED,
        sample_interval=scenarios.SAMPLE,
        profile=PROFILE[0],
    )
    s.router("r1", "r2")
    if sc["algo"] == "cubic":
        q = droptail(limit_packets=sc["buffer"])
    else:
        # RED with min_th = max_th = K, w_q = 1, marking at and above K is the step marker
        # at arrival with k = K - 1 (docs/models/step.md, tested packet by packet there);
        # ecnsim's RED itself refuses max_th = min_th.
        q = threshold(limit_packets=sc["buffer"], k=sc["k"] - 1, mark_at="arrival", non_ect="drop")
    s.link(
        "r1",
        "r2",
        rate=round(sc["rate"]),
        delay=sc["bottleneck_delay"],
        queue_ab=q,
        queue_ba=droptail(limit_packets=100000),
    )
    common = dict(
        mss=MSS,
        header_bytes=42,  # IPv4 20 + TCP 20 + PPP 2: ns-3's 1502-byte frame
        initial_window=10,
        rcv_window=2**30,
        initial_rto=1.0,
        min_rto=0.2,
        max_rto=60.0,
        clock_granularity=0.001,
        delayed_ack=False,
        limited_transmit=False,
        recovery="sack",
    )
    if sc["algo"] == "cubic":
        t = tcp(
            cc="cubic",
            ecn="off",
            cubic_beta=0.7,
            cubic_c=0.4,
            cubic_fast_convergence=True,
            # ns-3 TcpCubic::GetSsThresh() reduces from cwnd, as Linux does (issue 32 item 1).
            cubic_timeout="linux",
            **common,
        )
    else:
        t = tcp(cc="dctcp", ecn="request", dctcp_shift_g=4, dctcp_fraction="bytes", **common)
    s.tcp(**{**t, **ECNSIM_TCP})
    for i, start in enumerate(sc["starts"]):
        s.host(f"s{i}", f"c{i}")
        s.link(
            f"s{i}",
            "r1",
            rate=round(scenarios.ACCESS_RATE),
            delay=sc.get("access_delay", scenarios.ACCESS_DELAY),
            queue=droptail(limit_packets=100000),
        )
        s.link(
            "r2",
            f"c{i}",
            rate=round(scenarios.ACCESS_RATE),
            delay=sc.get("access_delay", scenarios.ACCESS_DELAY),
            queue=droptail(limit_packets=100000),
        )
        s.flow(f"s{i}", f"c{i}", app=bulk(), start=start, name=f"f{i}")
    return s


def run_ecnsim(sc: dict[str, Any]) -> dict[str, Any]:
    import ecnsim

    sim = ecnsim.Simulation(ecnsim_scenario(sc))
    sim.run()
    r = sim.results
    f = r.flows
    q = r.queues
    qi = int(np.flatnonzero(q["queue"].to_numpy() == "r1->r2")[0])
    fs = r.flow_series
    qs = r.queue_series
    qs = qs[qs["queue"] == "r1->r2"]
    n = sc["n"]
    cw = [
        (fs[fs["flow"] == f"f{i}"].set_index("time_s")["cwnd_bytes"] / MSS).to_dict()
        for i in range(n)
    ]
    return {
        "goodput": [float(x) for x in f["goodput_bps"][:n]],
        "retx": int(f["packets_retransmitted"][:n].sum()),
        "recoveries": int(f["fast_retransmits"][:n].sum()),
        "timeouts": int(f["rto_count"][:n].sum()),
        "ecn_reductions": int(f["ecn_reductions"][:n].sum()),
        "marks": int(q["marks"][qi]),
        "drops": int(q["drops"][qi]),
        "queue_series": dict(zip(qs["time_s"].round(6), qs["packets"].astype(float), strict=True)),
        "cwnd_series": [{round(t, 6): v for t, v in c.items()} for c in cw],
    }


def ns3_config(sc: dict[str, Any], variant: str | None = None) -> dict[str, Any]:
    cubic = sc["algo"] == "cubic"
    cfg: dict[str, Any] = {
        "name": sc["id"],
        "n_flows": sc["n"],
        "bottleneck_rate": sc["rate"],
        "bottleneck_delay": sc["bottleneck_delay"],
        "access_rate": scenarios.ACCESS_RATE,
        "access_delay": sc.get("access_delay", scenarios.ACCESS_DELAY),
        "queue_packets": sc["buffer"],
        "access_queue_packets": 100000,
        "duration": scenarios.DURATION,
        "warmup": scenarios.WARMUP,
        "start": sc["starts"],
        "sample_interval": scenarios.SAMPLE,
        "tcp": {
            "cc": "Cubic" if cubic else "Dctcp",
            "ecn": not cubic,
            "segment_size": MSS,
            "initial_cwnd": 10,
            "initial_rto": 1.0,
            "min_rto": 0.2,
            "clock_granularity": 0.001,
            "sack": True,
            "recovery": "classic",
        },
        "ns3_defaults": {},
    }
    if cubic:
        cfg["ns3_defaults"] = {
            "ns3::TcpCubic::HyStart": "false" if variant != "hystart" else "true",
            "ns3::TcpCubic::Beta": "0.7",
            "ns3::TcpCubic::C": "0.4",
            "ns3::TcpCubic::FastConvergence": "true",
        }
    else:
        k = sc["k"]
        cfg["queue"] = {
            "type": "red",
            "limit": sc["buffer"],
            "min_th": k,
            "max_th": k,
            "w_q": 1.0,
            "max_p": 0.1,
            "ecn": True,
            "hard_drop": False,
            "gentle": False,
            "wait": True,
            "mean_pktsize": 1500,
        }
        cfg["ns3_defaults"] = {
            "ns3::TcpDctcp::DctcpShiftG": "0.0625",
            "ns3::TcpDctcp::DctcpAlphaOnInit": "1",
        }
    return cfg


def from_ns3(sc: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    dt = scenarios.SAMPLE
    fl = out["flows"]
    return {
        "goodput": [float(x["goodput_bps"]) for x in fl],
        "retx": sum(int(x["retransmissions"]) for x in fl),
        "recoveries": sum(int(x["fast_recoveries"]) for x in fl),
        "timeouts": sum(int(x["timeouts"]) for x in fl),
        "ecn_reductions": sum(int(x["ecn_reductions"]) for x in fl),
        "marks": int(out["bottleneck"]["marks"]),
        "drops": int(out["bottleneck"]["drops"]),
        "queue_series": {round(k * dt, 6): float(v) for k, v in enumerate(out["queue_series"])},
        "cwnd_series": [
            {round(k * dt, 6): v / MSS for k, v in enumerate(x["cwnd_series"])} for x in fl
        ],
    }


def metrics(sc: dict[str, Any], m: dict[str, Any]) -> dict[str, float]:
    span = scenarios.DURATION - scenarios.WARMUP
    w = scenarios.WARMUP - 1e-9
    g = np.array(m["goodput"])
    out = {
        "goodput": float(g.sum()),
        "retx_per_s": m["retx"] / span,
        "marks_per_s": m["marks"] / span,
        "drops": float(m["drops"]),
    }
    if sc["n"] > 1:
        out["jain"] = float(g.sum() ** 2 / (len(g) * (g**2).sum()))
    if sc["algo"] == "cubic":
        out["events_per_s"] = (m["recoveries"] + m["timeouts"]) / span
    else:
        out["events_per_s"] = m["ecn_reductions"] / span
    qv = [v for t, v in m["queue_series"].items() if t >= w]
    out["queue_mean"] = float(np.mean(qv))
    times = sorted(t for t in m["cwnd_series"][0] if t >= w)
    total = [sum(c.get(t, 0.0) for c in m["cwnd_series"]) for t in times]
    out["cwnd_total"] = float(np.mean(total))
    swings = []
    for c in m["cwnd_series"]:
        v = np.array([c[t] for t in times if t in c])
        swings.append(float(np.percentile(v, 95) - np.percentile(v, 5)))
    out["cwnd_swing"] = float(np.mean(swings))
    return out


def run_ns3_batch(cfgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    p = subprocess.run(
        [NS3_PYTHON, NS3_SCRIPT, "-"], input=json.dumps(cfgs), capture_output=True, text=True
    )
    if p.returncode != 0:
        raise SystemExit(f"ns-3 failed:\n{p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    return res if isinstance(res, list) else [res]


def run_ns3(cfgs: list[dict[str, Any]], jobs: int) -> list[dict[str, Any]]:
    batches = [cfgs[i::jobs] for i in range(jobs)]
    with ThreadPoolExecutor(jobs) as ex:
        outs = list(ex.map(run_ns3_batch, [b for b in batches if b]))
    by_name = {o["config"]["name"]: o for out in outs for o in out}
    return [by_name[c["name"]] for c in cfgs]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns3-json", help="ns-3 output saved by --save-ns3 (skip ns-3)")
    ap.add_argument("--save-ns3", help="write ns-3's output here")
    ap.add_argument("--only", action="append", help="scenario id (repeatable) or prefix")
    ap.add_argument("--ecnsim-only", action="store_true", help="ecnsim's metrics alone")
    ap.add_argument("--variant", choices=VARIANTS, help="explanatory ns-3 variant, no bands")
    ap.add_argument("--jobs", type=int, default=2, help="parallel ns-3 processes")
    ap.add_argument(
        "--profile",
        choices=["rfc", "linux", "linux-6.x"],
        help="explanatory variant: the ecnsim side under this profile (the harness's explicit "
        "TCP settings, e.g. recovery, MSS, delayed ACKs, still apply); the table is then not a "
        "verdict",
    )
    common.add_ecnsim_tcp_option(ap, "reduction_basis='\"ns2_window\"'")
    a = ap.parse_args(argv[1:])
    PROFILE[0] = a.profile
    ECNSIM_TCP.update(common.tcp_overrides(a.ecnsim_tcp))
    scs = scenarios.scenarios()
    if a.only:
        scs = [s for s in scs if any(s["id"].startswith(o) for o in a.only)]
    if a.ecnsim_only:
        # DCTCP's metrics are all of them; a grid without DCTCP (ns3_bbr) has its own.
        bands = scenarios.BANDS.get("dctcp") or next(iter(scenarios.BANDS.values()))
        names = [*bands, *getattr(scenarios, "INFO", ())]
        print("| scenario | " + " | ".join(names) + " |")
        for sc in scs:
            e = metrics(sc, run_ecnsim(sc))
            cells = [f"{e.get(k, float('nan')):.4g}" for k in names]
            print(f"| {sc['id']} | " + " | ".join(cells) + " |")
        return 0
    if a.ns3_json:
        with open(a.ns3_json) as fh:
            saved = {o["config"]["name"]: o for o in json.load(fh)}
        missing = [s["id"] for s in scs if s["id"] not in saved]
        if missing:
            script = os.path.relpath(os.path.abspath(argv[0]))
            them = "it" if len(missing) == 1 else "them"
            raise SystemExit(
                f"{a.ns3_json} has no recorded ns-3 run for {', '.join(missing)} "
                f"(it has {', '.join(sorted(saved)) or 'none'}). "
                f"Record {them} with the ns-3 wheel:\n"
                f"    NS3_PYTHON=/path/to/ns3-venv/bin/python {sys.executable} {script} "
                + " ".join(f"--only {m}" for m in missing)
                + " --save-ns3 NEW.json\n"
                f"then add NEW.json's entries to {a.ns3_json} (a JSON list, one object per row), "
                "or leave those rows out with --only."
            )
        ns3_out = [saved[s["id"]] for s in scs]
    else:
        ns3_out = run_ns3([ns3_config(s, a.variant) for s in scs], a.jobs)
    if a.save_ns3:
        with open(a.save_ns3, "w") as fh:
            json.dump(ns3_out, fh)
    failed = total = 0
    variant = (
        a.variant
        or (", ".join(a.ecnsim_tcp) if a.ecnsim_tcp else None)
        or (f"profile {a.profile}" if a.profile else None)
    )
    common.table_header(["scenario"], "ns-3")
    for sc, out in zip(scs, ns3_out, strict=True):
        e = metrics(sc, run_ecnsim(sc))
        n = metrics(sc, from_ns3(sc, out))
        t, f = common.banded_rows(
            [sc["id"]], e, n, scenarios.BANDS[sc["algo"]], verdict=variant is None
        )
        total, failed = total + t, failed + f
        # metrics shown without a band (a grid's INFO; ns3_bbr's many-flow rows)
        info = [k for k in getattr(scenarios, "INFO", ()) if k in e and k in n]
        common.info_rows([sc["id"]], e, n, info)
    if variant is None:
        common.print_summary(total, failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
