#!/usr/bin/env python3
"""Cross-check ecnsim's RED (drop and RFC 3168 ECN) against ns-3's RedQueueDisc
on the ``hetero`` scenario of STUDIES.md §3 (issue 4, item 11).

Run with ecnsim's Python, from the repository root::

    .venv/bin/python validation/ns3_red/compare.py            # runs both simulators
    .venv/bin/python validation/ns3_red/compare.py --ns3-json a.json b.json   # reuse ns-3 results

ns-3 runs in $NS3_PYTHON's venv through ns3_hetero.py (a subprocess per N, mode
and RngRun; two at a time). Prints a Markdown table; exit status 1 if a check is out of band.
The bands are fixed below, before any result was looked at.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
NS3_PYTHON = os.environ.get("NS3_PYTHON", "python3")
DELAYS = (0.145, 0.045, 0.005)
GROUPS = ("fragile", "average", "robust")
NS_LIST = (30, 120)
MODES = ("red", "ecn")
# The study's 100 s with the first 20 s discarded (``--short``: 40 s / 10 s).
DURATION = 100.0
WARMUP = 20.0
SEEDS = (1, 2, 3, 4)  # ecnsim seeds (their spread is the run-to-run noise reference)
NS3_SEEDS = (1, 2)  # ns-3 RngRun values

# --- tolerance bands (set before looking at results) ---------------------------
# goodput: both saturate a 10 Mb/s link with RED keeping a standing queue ->
#   relative difference <= 3 %.
# Jain's index over per-flow goodputs: absolute difference <= 0.05.
# per-group share of goodput (fragile / average / robust): abs. diff <= 0.05.
# drop + mark count (congestion signals per second): relative diff <= 25 %
#   (RED's signal rate scales with 1/window^2; NewReno vs Reno, one extra
#   device-queue slot and random-number streams move it).
# early/forced split: reported, not banded (sensitive to avg near max_th).
BANDS = {"goodput_rel": 0.03, "jain_abs": 0.05, "share_abs": 0.05, "signals_rel": 0.25}


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 > 0 else float("nan")


def ecnsim_scenario(
    n: int,
    mode: str,
    seed: int,
    cc: str = "reno",
    red_overrides: dict[str, Any] | None = None,
    tcp_overrides: dict[str, Any] | None = None,
) -> Any:
    """The ecnsim scenario matched to ns3_hetero.py (also bench/ns3/side_by_side.py's)."""
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, red, tcp

    sc = ecnsim.Scenario(DURATION, name=f"hetero_n{n}_{mode}", warmup=WARMUP, seed=seed)
    sc.router("r")
    sc.host("sink")
    sc.tcp(
        **tcp(
            cc=cc,
            mss=960,
            header_bytes=42,  # IP 20 + TCP 20 + PPP 2: ns-3's 1002-byte frame
            initial_window=1,
            max_cwnd=64,
            rcv_window=64 * 960,
            initial_rto=1.0,
            min_rto=1.0,
            max_rto=60.0,
            clock_granularity=0.001,
            delayed_ack=False,
            ecn="request" if mode == "ecn" else "off",
            # As ns-3: no Limited Transmit (off there),
            # TcpNewReno's whole-byte congestion avoidance.
            limited_transmit=False,
            ca_increase="per_ack_truncated",
        )
    )
    if tcp_overrides:
        sc.tcp(**tcp_overrides)
    q = red(
        limit_packets=120,
        min_th=10,
        max_th=30,
        w_q=0.002,
        max_p=0.1,
        mean_pktsize=1000,
        measure="packets",
        byte_mode=False,
        wait=True,
        gentle=False,
        drop_spacing="uniform",
        backlog_gate=True,  # ns-3's nQueued > 1
        idle_start="tx_end",
        victim="tail",
        ecn="rfc3168" if mode == "ecn" else "none",
        mark_target="arriving",
        adaptive="none",
    )
    q.update(red_overrides or {})
    sc.link(
        "r",
        "sink",
        rate=10_000_000,
        delay=0.005,
        queue_ab=q,
        queue_ba=droptail(limit_packets=10000),
    )
    for i in range(n):
        g = (3 * i) // n
        s = f"s{i}"
        sc.host(s)
        sc.link(s, "r", rate=round(300e6 / n), delay=DELAYS[g], queue=droptail(limit_packets=10000))
        start = 0.0 if i % (n // 3) < n // 6 else 2.0
        sc.flow(s, "sink", app=bulk(), start=start, name=f"f{i}")
    return sc


def run_ecnsim(
    n: int,
    mode: str,
    seed: int,
    cc: str = "reno",
    red_overrides: dict[str, Any] | None = None,
    tcp_overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ecnsim run; ``cc``, ``red_overrides`` and ``tcp_overrides`` serve item10.py."""
    import ecnsim

    sc = ecnsim_scenario(n, mode, seed, cc, red_overrides, tcp_overrides)
    res = ecnsim.Simulation(sc).run()
    ft = res.table("flows")
    qt = res.table("queues")
    qi = list(qt["queue"]).index("r->sink")
    cols = set(qt.column_names) if hasattr(qt, "column_names") else set(qt.keys())
    bn = {c: int(qt[c][qi]) for c in cols if c.startswith(("drops", "marks", "arrivals"))}
    span = DURATION - WARMUP
    flows = [
        {
            "group": GROUPS[(3 * i) // n],
            "rx_bytes": int(ft["bytes_delivered"][i]),
            "goodput_bps": int(ft["bytes_delivered"][i]) * 8 / span,
            "timeouts": int(ft["rto_count"][i]),
            "fast_retransmits": int(ft["fast_retransmits"][i]),
            "data_segments_sent": int(ft["packets_sent"][i]),
            "retransmissions": int(ft["packets_retransmitted"][i]),
        }
        for i in range(n)
    ]
    # RED's idle periods as its average saw them (item 10 point 3) and the link's busy share.
    idle = {
        c: float(qt[c][qi])
        for c in ("aqm_idle_periods", "aqm_idle_decays", "aqm_idle_s", "utilization")
    }
    return {
        "simulator": "ecnsim",
        "n": n,
        "mode": mode,
        "seed": seed,
        "flows": flows,
        "bottleneck": bn,
        "idle": idle,
    }


def run_ns3(job: tuple[int, str, int]) -> list[dict[str, Any]]:
    n, m, seed = job
    cfg = [{"n": n, "mode": m, "seed": seed, "duration": DURATION, "warmup": WARMUP}]
    out = subprocess.run(
        [NS3_PYTHON, os.path.join(HERE, "ns3_hetero.py"), json.dumps(cfg)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def summary(r: dict[str, Any]) -> dict[str, float]:
    gp = [f["goodput_bps"] for f in r["flows"]]
    tot = sum(gp)
    b = r["bottleneck"]
    out = {"goodput": tot, "jain": jain(gp), "drops": b.get("drops", 0), "marks": b.get("marks", 0)}
    for g in GROUPS:
        out[f"share_{g}"] = sum(f["goodput_bps"] for f in r["flows"] if f["group"] == g) / tot
    for k in (
        "drops_early",
        "drops_forced",
        "drops_overflow",
        "marks_early",
        "marks_forced",
        "arrivals",
    ):
        if k in b:
            out[k] = b[k]
    out["signals"] = out["drops"] + out["marks"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns3-json", nargs="*", help="reuse ns3_hetero.py outputs (lists)")
    ap.add_argument("--short", action="store_true", help="40 s, first 10 s discarded")
    args = ap.parse_args()
    global DURATION, WARMUP
    if args.short:
        DURATION, WARMUP = 40.0, 10.0
    t0 = time.time()
    if args.ns3_json:
        ns3 = []
        for p in args.ns3_json:
            with open(p) as f:
                r = json.load(f)
            ns3 += r if isinstance(r, list) else [r]
        for r in ns3:  # the ecnsim side must use the same times
            c = r["config"]
            assert (c["duration"], c["warmup"]) == (DURATION, WARMUP), (
                p,
                c["duration"],
                c["warmup"],
            )
    else:
        jobs = [(n, m, s) for n in NS_LIST for m in MODES for s in NS3_SEEDS]
        with ThreadPoolExecutor(2) as ex:
            ns3 = [r for rs in ex.map(run_ns3, jobs) for r in rs]
    eco = {(n, m): [run_ecnsim(n, m, s) for s in SEEDS] for n in NS_LIST for m in MODES}
    bad = 0
    lines = [
        "| N | mode | metric | ecnsim mean ± sd (4 seeds) | ns-3 (RngRun 1 / 2) "
        "| diff of means | band | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    details = {}
    by_key: dict[tuple[int, str], list[dict[str, float]]] = {}
    for r3 in ns3:
        by_key.setdefault((r3["n"], r3["mode"]), []).append(summary(r3))
    for (n, m), s3s in sorted(by_key.items()):
        se = [summary(r) for r in eco[(n, m)]]
        details[f"{n}_{m}"] = {"ns3": s3s, "ecnsim": se}
        mean = {k: sum(s[k] for s in se) / len(se) for k in se[0]}
        s3 = {k: sum(s[k] for s in s3s) / len(s3s) for k in s3s[0]}

        def row(
            metric: str,
            key: str,
            kind: str,
            band: float | None,
            fmt: str,
            scale: float = 1.0,
            *,
            n: int = n,
            m: str = m,
            mean: dict[str, float] = mean,
            s3: dict[str, float] = s3,
            se: list[dict[str, float]] = se,
            s3s: list[dict[str, float]] = s3s,
        ) -> None:
            # The loop's values are bound as defaults: `row` serves this (n, mode) only.
            nonlocal bad
            e, v = mean[key], s3[key]
            if kind == "rel":
                d = (e - v) / v if v else float("nan")
                ds = f"{d:+.1%}"
            else:
                d = e - v
                ds = f"{d:+.3f}"
            if band is None:
                verdict, bs = "(reported)", "-"
            else:
                ok = abs(d) <= band
                bad += not ok
                verdict = "ok" if ok else "**OUT**"
                bs = f"±{band:.0%}" if kind == "rel" else f"±{band}"
            sd = statistics.pstdev(s[key] for s in se)
            es = f"{format(e / scale, fmt)} ± {format(sd / scale, fmt)}"
            ns3s = " / ".join(format(s[key] / scale, fmt) for s in s3s)
            lines.append(f"| {n} | {m} | {metric} | {es} | {ns3s} | {ds} | {bs} | {verdict} |")

        row("goodput Mb/s", "goodput", "rel", BANDS["goodput_rel"], ".3f", 1e6)
        row("Jain index", "jain", "abs", BANDS["jain_abs"], ".3f")
        for g in GROUPS:
            row(f"{g} share", f"share_{g}", "abs", BANDS["share_abs"], ".3f")
        row("drops + marks", "signals", "rel", BANDS["signals_rel"], ".0f")
        for k in (
            "drops",
            "drops_early",
            "drops_forced",
            "drops_overflow",
            "marks",
            "marks_early",
            "marks_forced",
            "arrivals",
        ):
            if k in mean and k in s3:
                row(k.replace("_", " "), k, "rel", None, ".0f")
    print("\n".join(lines))
    print(f"\n{bad} check(s) out of band; {time.time() - t0:.0f} s")
    with open(os.path.join(HERE, "last_results.json"), "w") as f:
        json.dump(details, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
