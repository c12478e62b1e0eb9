#!/usr/bin/env python3
"""Cross-check ecnsim's FQ-CoDel, PIE and RED against ns-3's queue discs, same scenarios.

Run with ecnsim's Python, from the repository root::

    .venv/bin/python validation/ns3_fq_codel/compare.py                     # both simulators
    .venv/bin/python validation/ns3_fq_codel/compare.py --save-ns3 F.json   # keep ns-3's output
    .venv/bin/python validation/ns3_fq_codel/compare.py --ns3-json F.json   # reuse it (ecnsim only)
    .venv/bin/python validation/ns3_fq_codel/compare.py --ecnsim-only       # no ns-3, no checks
    .venv/bin/python validation/ns3_fq_codel/compare.py --disc pie          # PieQueueDisc / pie
    .venv/bin/python validation/ns3_fq_codel/compare.py --disc red          # RedQueueDisc / red
    .venv/bin/python validation/ns3_fq_codel/compare.py --disc fq_pie       # FqPieQueueDisc

The scenarios and bands are in ``scenarios.py`` (committed before the first
comparison). ns-3 runs through ``ns3_fq_codel.py`` in $NS3_PYTHON. Prints a
Markdown table; exit status 1 if a banded check is out of band.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import scenarios  # noqa: E402
from common import ecnsim_pie_settings  # noqa: E402

NS3_PYTHON = os.environ.get("NS3_PYTHON", "python3")


def ecnsim_disc(disc: str) -> dict[str, Any]:
    """The bottleneck queue: every parameter as ``scenarios.py`` sets it on both sides."""
    from ecnsim.scenario.spec import fq_codel, fq_pie, pie, red

    if disc == "fq_pie":
        q = scenarios.FQ_PIE
        return fq_pie(
            limit_packets=q["limit"],
            flows=q["flows"],
            drop_batch=q["drop_batch"],
            quantum=q["quantum_ip"] + 2,  # ecnsim counts the 2-byte PPP header
            **ecnsim_pie_settings(q),
            overflow="ns3",
        )
    if disc == "pie":
        p = scenarios.PIE
        return pie(limit_packets=p["limit"], **ecnsim_pie_settings(p))
    if disc == "red":
        r = scenarios.RED
        return red(
            limit_packets=r["limit"],
            min_th=r["min_th"],
            max_th=r["max_th"],
            w_q=r["w_q"],
            max_p=r["max_p"],
            mean_pktsize=r["mean_pktsize_ip"] + 2,
            wait=True,
            gentle=True,
            ecn="rfc3168",
            backlog_gate=True,
            idle_start="tx_end",
            drop_spacing="uniform",
            victim="tail",
        )
    f = scenarios.FQ
    return fq_codel(
        limit_packets=f["limit"],
        flows=f["flows"],
        drop_batch=f["drop_batch"],
        quantum=f["quantum_ip"] + 2,  # ecnsim counts the 2-byte PPP header
        target=f["target"],
        interval=f["interval"],
        ecn=True,
        max_packet=f["min_bytes_ip"] + 2,  # ns-3: flow bytes < MinBytes (IP); here < 1502 (wire)
        max_packet_backlog="ns3",
        overflow_count="ns3",
    )


def ecnsim_scenario(gid: str, seed: int, disc: str = "fq_codel") -> Any:
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, tcp
    from ecnsim.scenario.workloads import cbr

    g = scenarios.GROUPS[gid]
    q = ecnsim_disc(disc)
    name = "fq" if disc == "fq_codel" else disc
    sc = ecnsim.Scenario(g["duration"], name=f"{name}-{gid}", warmup=g["warmup"], seed=seed)
    sc.router("r1", "r2")
    b = scenarios.BOTTLENECK
    sc.link("r1", "r2", rate=round(b["rate"]), delay=b["delay"], queue_ab=q,
            queue_ba=droptail(limit_packets=10000))  # fmt: skip
    delays = list(g["tcp_delays"]) + [u["delay"] for u in g["udp"]]
    for i, d in enumerate(delays):
        sc.host(f"s{i}", f"c{i}")
        sc.link(f"s{i}", "r1", rate=round(scenarios.ACCESS_RATE), delay=d,
                queue=droptail(limit_packets=10000))  # fmt: skip
        sc.link("r2", f"c{i}", rate=round(scenarios.ACCESS_RATE), delay=scenarios.RECEIVER_DELAY,
                queue=droptail(limit_packets=10000))  # fmt: skip
    n_tcp = len(g["tcp_delays"])
    if n_tcp:
        sc.tcp(
            **tcp(
                cc="newreno",
                mss=scenarios.TCP_SEGMENT,
                header_bytes=42,  # IP 20 + TCP 20 + PPP 2: ns-3's 1502-byte frame
                initial_window=3,
                rcv_window=2**30,
                initial_rto=1.0,
                min_rto=1.0,
                max_rto=60.0,
                clock_granularity=0.001,
                delayed_ack=False,
                ecn="request",
                limited_transmit=False,
                ca_increase="per_ack_truncated",
            )
        )
        for i, start in enumerate(scenarios.starts(seed, n_tcp)):
            sc.flow(f"s{i}", f"c{i}", app=bulk(), start=start, name=f"f{i}")
    for k, u in enumerate(g["udp"]):
        i = n_tcp + k
        # cbr's rate counts packet_size + 28 bytes: payload + 2 stands for the PPP header.
        sc.app(cbr(round(u["rate"]), packet_size=u["payload"] + 2), clients=f"s{i}",
               servers=f"c{i}", name=f"u{k}")  # fmt: skip
    return sc


def bottleneck_leaves(sim: Any, g: dict[str, Any]) -> Iterator[tuple[str, int, int]]:
    """Run ``sim`` to the end, tracing the bottleneck (r1 -> r2): each packet that left its
    queue after the warm-up, ``("-", enqueued_ns, left_ns)`` when it departed and
    ``("d", ...)`` when it was dropped from the queue (arrivals dropped at once: equal times)."""
    names = [nd["name"] for nd in sim.spec["nodes"]]
    r1 = names.index("r1")
    sim.trace(links=[0])  # the first link added: r1 - r2
    enq: dict[int, int] = {}
    t = 0.0
    while t < g["duration"]:
        t = min(g["duration"], t + 5.0)
        sim.run_until(t)
        df = sim.drain_trace()
        df = df[df.from_node == r1]
        for tn, ev, uid in zip(df.time_ns, df.event, df.uid, strict=True):
            if ev == "+":
                enq[uid] = tn
            elif ev in "-d":
                t0 = enq.pop(uid, None)
                if t0 is not None and tn / 1e9 >= g["warmup"]:
                    yield ev, t0, tn
    sim.close_trace()


def sojourn_trace(sim: Any, g: dict[str, Any]) -> tuple[float, float, dict[str, float]]:
    """Run ``sim`` to the end, tracing the bottleneck: the sum and count of the sojourn
    times of packets that departed after the warm-up ('+' to '-' at r1 -> r2) and their
    histogram in ``scenarios.SOJOURN_BIN`` bins (as ns-3's SojournTime trace)."""
    total = count = 0.0
    hist: dict[str, float] = {}
    last = scenarios.SOJOURN_BINS - 1
    for ev, t0, tn in bottleneck_leaves(sim, g):
        if ev != "-":
            continue
        w = (tn - t0) / 1e9
        total += w
        count += 1
        k = str(min(int(w / scenarios.SOJOURN_BIN), last))
        hist[k] = hist.get(k, 0.0) + 1
    return total, count, hist


def run_ecnsim(gid: str, seed: int, disc: str = "fq_codel") -> dict[str, Any]:
    import ecnsim

    g = scenarios.GROUPS[gid]
    sim = ecnsim.Simulation(ecnsim_scenario(gid, seed, disc))
    if disc == "fq_codel":
        sim.run()
        hist = None
    else:
        soj_sum, soj_n, hist = sojourn_trace(sim, g)
    r = sim.results
    qt = r.table("queues")
    qi = list(qt["queue"]).index("r1->r2")
    span = g["duration"] - g["warmup"]
    departures = int(qt["departures"][qi])
    ft = r.table("flows")
    rt = r.table("records")
    n_tcp = len(g["tcp_delays"])
    per_src = [{"drops": int(ft["drops"][i]), "marks": int(ft["marks"][i])} for i in range(n_tcp)]
    udp = []
    if "kind" in rt.columns:
        for i, kind in enumerate(rt["kind"]):
            if kind == "udp":
                udp.append({"received": int(rt["packets_received"][i])})
                per_src.append({"drops_all": int(rt["drops"][i])})
    if hist is None:
        # FQ-CoDel's committed check: Little's law over [warmup, end], backlog / departures.
        sojourn = {"sum": float(qt["avg_packets"][qi]) * span, "n": float(departures)}
    else:  # PIE, RED: departed packets, as ns-3's SojournTime trace
        sojourn = {"sum": soj_sum, "n": soj_n}
    return {
        "simulator": "ecnsim",
        "disc": {c: int(qt[c][qi]) for c in ("arrivals", "drops", "marks")},
        "per_src": per_src,
        "sojourn": sojourn,
        "sojourn_hist": hist,
        "tcp": [{"goodput_bps": float(x)} for x in ft["goodput_bps"][:n_tcp]],
        "udp": udp,
    }


def run_ns3(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    p = subprocess.run(
        [NS3_PYTHON, os.path.join(HERE, "ns3_fq_codel.py"), json.dumps(jobs)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(p.stdout.strip().splitlines()[-1])


def mean(xs: list[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def summarise(gid: str, runs: list[dict[str, Any]]) -> dict[str, float]:
    """Means over seeds of the metrics the bands name."""
    g = scenarios.GROUPS[gid]
    span = g["duration"] - g["warmup"]
    n_tcp = len(g["tcp_delays"])
    s: dict[str, float] = {}
    for i in range(n_tcp):
        s[f"tcp{i}_goodput"] = mean([r["tcp"][i]["goodput_bps"] for r in runs])
        s[f"tcp{i}_marks_per_s"] = mean([r["per_src"][i]["marks"] / span for r in runs])
        s[f"tcp{i}_drops"] = mean([r["per_src"][i]["drops"] for r in runs])
    if n_tcp:
        s["total_goodput"] = sum(s[f"tcp{i}_goodput"] for i in range(n_tcp))
        s["marks_per_s"] = sum(s[f"tcp{i}_marks_per_s"] for i in range(n_tcp))
        s["drops"] = sum(s[f"tcp{i}_drops"] for i in range(n_tcp))
    for k, u in enumerate(g["udp"]):
        recv = mean([r["udp"][k]["received"] for r in runs])
        s[f"udp{k}_bytes"] = recv * (u["payload"] + 28)
        s[f"udp{k}_goodput"] = recv * u["payload"] * 8 / g["duration"]
        s[f"udp{k}_drops"] = mean([r["per_src"][n_tcp + k]["drops_all"] for r in runs])
    s["sojourn_ms"] = 1e3 * mean([r["sojourn"]["sum"] / max(r["sojourn"]["n"], 1) for r in runs])
    hists = [r.get("sojourn_hist") for r in runs]
    if all(h is not None for h in hists):  # PIE, RED: percentiles of the seeds' pooled histogram
        pooled: dict[int, float] = {}
        for h in hists:
            for k, c in h.items():
                pooled[int(k)] = pooled.get(int(k), 0.0) + c
        for q in (50, 90, 99):
            s[f"sojourn_p{q}_ms"] = 1e3 * percentile(pooled, q / 100)
    return s


def percentile(hist: dict[int, float], q: float) -> float:
    """The ``q`` quantile of a histogram of ``scenarios.SOJOURN_BIN`` bins: its bin's midpoint."""
    total = sum(hist.values())
    seen = 0.0
    for k in sorted(hist):
        seen += hist[k]
        if seen >= q * total:
            return (k + 0.5) * scenarios.SOJOURN_BIN
    return float("nan")


def rel_ok(a: float, b: float, rel: float, absolute: float = 0.0) -> bool:
    return abs(a - b) <= max(rel * abs(b), absolute)


def checks(
    gid: str, e: dict[str, float], n: dict[str, float]
) -> list[tuple[str, float, float, str, bool]]:
    """(metric, ecnsim, ns-3, band, pass) for every banded check of group ``gid``."""
    b = scenarios.BANDS[gid]
    g = scenarios.GROUPS[gid]
    out = []
    n_tcp = len(g["tcp_delays"])

    def add(name: str, ok: bool, band: str) -> None:
        out.append((name, e[name], n[name], band, ok))

    if "total_goodput_rel" in b:
        add("total_goodput", rel_ok(e["total_goodput"], n["total_goodput"], b["total_goodput_rel"]),
            f"±{b['total_goodput_rel']:.0%}")  # fmt: skip
    if "flow_goodput_rel" in b:
        for i in range(n_tcp):
            k = f"tcp{i}_goodput"
            add(k, rel_ok(e[k], n[k], b["flow_goodput_rel"]), f"±{b['flow_goodput_rel']:.0%}")
    if "ratio_rel" in b:
        e["ratio"], n["ratio"] = (
            e["tcp0_goodput"] / e["tcp1_goodput"],
            n["tcp0_goodput"] / n["tcp1_goodput"],
        )
        add("ratio", rel_ok(e["ratio"], n["ratio"], b["ratio_rel"]), f"±{b['ratio_rel']:.0%}")
    if "marks_per_s_rel" in b:
        add("marks_per_s", rel_ok(e["marks_per_s"], n["marks_per_s"], b["marks_per_s_rel"]),
            f"±{b['marks_per_s_rel']:.0%}")  # fmt: skip
    if "drops_abs" in b:
        add("drops", abs(e["drops"] - n["drops"]) <= b["drops_abs"], f"±{b['drops_abs']}")
    if "tcp_drops" in b:
        rel, ab = b["tcp_drops"]
        add("drops", rel_ok(e["drops"], n["drops"], rel, ab), f"±{rel:.0%} or {ab}")
    if "udp_goodput_rel" in b:
        add("udp0_goodput", rel_ok(e["udp0_goodput"], n["udp0_goodput"], b["udp_goodput_rel"]),
            f"±{b['udp_goodput_rel']:.0%}")  # fmt: skip
    if "udp_drops_rel" in b:
        add("udp0_drops", rel_ok(e["udp0_drops"], n["udp0_drops"], b["udp_drops_rel"]),
            f"±{b['udp_drops_rel']:.0%}")  # fmt: skip
    if "flow_bytes_rel" in b:
        for k in range(len(g["udp"])):
            name = f"udp{k}_bytes"
            add(name, rel_ok(e[name], n[name], b["flow_bytes_rel"]), f"±{b['flow_bytes_rel']:.0%}")
            name = f"udp{k}_drops"
            add(name, rel_ok(e[name], n[name], b["flow_drops_rel"]), f"±{b['flow_drops_rel']:.0%}")
    if "ratio_abs" in b:
        e["bytes_ratio"], n["bytes_ratio"] = (
            e["udp0_bytes"] / e["udp1_bytes"],
            n["udp0_bytes"] / n["udp1_bytes"],
        )
        add(
            "bytes_ratio",
            abs(e["bytes_ratio"] - n["bytes_ratio"]) <= b["ratio_abs"],
            f"±{b['ratio_abs']}",
        )
    if "sojourn" in b:
        rel, ab = b["sojourn"]
        add(
            "sojourn_ms",
            rel_ok(e["sojourn_ms"], n["sojourn_ms"], rel, ab * 1e3),
            f"±{rel:.0%} or {ab * 1e3:g} ms",
        )
    return out


def checks_aqm(
    gid: str, e: dict[str, float], n: dict[str, float], disc: str = "pie"
) -> list[tuple[str, float, float, str, bool]]:
    """PIE, RED and FQ-PIE: (metric, ecnsim, ns-3, band, pass) for ``scenarios.AQM_BANDS[gid]``
    (``scenarios.FQ_PIE_BANDS[gid]`` for FQ-PIE)."""
    b = (scenarios.FQ_PIE_BANDS if disc == "fq_pie" else scenarios.AQM_BANDS)[gid]
    g = scenarios.GROUPS[gid]
    n_tcp = len(g["tcp_delays"])
    out = []

    def add(name: str, rel: float, ab: float = 0.0, unit: str = "", scale: float = 1.0) -> None:
        ok = rel_ok(e[name], n[name], rel, ab)
        band = f"±{rel:.0%}" + (f" or {ab * scale:g}{unit}" if ab else "")
        out.append((name, e[name], n[name], band, ok))

    if "total_goodput_rel" in b:
        add("total_goodput", b["total_goodput_rel"])
    if "flow_goodput" in b:
        rel, ab = b["flow_goodput"]
        for i in range(n_tcp):
            add(f"tcp{i}_goodput", rel, ab, " Mb/s", 1e-6)
    if "ratio_rel" in b:
        for d in (e, n):
            d["ratio"] = d["tcp0_goodput"] / d["tcp1_goodput"]
        add("ratio", b["ratio_rel"])
    if "marks_per_s_rel" in b:
        add("marks_per_s", b["marks_per_s_rel"])
    if "drops" in b:
        add("drops", *b["drops"])
    if "udp_goodput_rel" in b:
        add("udp0_goodput", b["udp_goodput_rel"])
    if "udp_drops_rel" in b:
        add("udp0_drops", b["udp_drops_rel"])
    if "tcp_total_goodput" in b:
        rel, ab = b["tcp_total_goodput"]
        add("total_goodput", rel, ab, " Mb/s", 1e-6)
    if "tcp_signals" in b:
        for d in (e, n):
            d["tcp_signals"] = d["drops"] + d["marks_per_s"] * (g["duration"] - g["warmup"])
        add("tcp_signals", *b["tcp_signals"])
    if "flow_bytes_rel" in b:
        for k in range(len(g["udp"])):
            add(f"udp{k}_bytes", b["flow_bytes_rel"])
            add(f"udp{k}_drops", b["flow_drops_rel"])
    if "ratio_abs" in b:
        for d in (e, n):
            d["bytes_ratio"] = d["udp0_bytes"] / d["udp1_bytes"]
        ok = abs(e["bytes_ratio"] - n["bytes_ratio"]) <= b["ratio_abs"]
        out.append(("bytes_ratio", e["bytes_ratio"], n["bytes_ratio"], f"±{b['ratio_abs']}", ok))
    for stat, (rel, ab) in b["sojourn_pct"].items():
        name = "sojourn_ms" if stat == "mean" else f"sojourn_{stat}_ms"
        add(name, rel, ab * 1e3, " ms")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns3-json", help="ns-3 output saved by --save-ns3 (skip ns-3)")
    ap.add_argument("--save-ns3", help="write ns-3's output here")
    ap.add_argument("--only", choices=list(scenarios.GROUPS), help="one group")
    ap.add_argument("--ecnsim-only", action="store_true", help="ecnsim's metrics alone, no check")
    ap.add_argument("--disc", choices=scenarios.DISCS, default="fq_codel", help="the AQM")
    a = ap.parse_args(argv[1:])
    disc = a.disc
    groups = [a.only] if a.only else list(scenarios.GROUPS)
    if a.ecnsim_only:
        print("| group | metric | ecnsim (mean over seeds) |")
        print("|---|---|---|")
        for gid in groups:
            e = summarise(gid, [run_ecnsim(gid, s, disc) for s in scenarios.GROUPS[gid]["seeds"]])
            for name, v in e.items():
                print(f"| {gid} | {name} | {v:.4g} |")
        return 0
    jobs = [
        {"id": gid, "seed": s, "disc": disc}
        for gid in groups
        for s in scenarios.GROUPS[gid]["seeds"]
    ]
    if a.ns3_json:
        with open(a.ns3_json) as fh:
            ns3_all = json.load(fh)
    else:
        ns3_all = run_ns3(jobs)
    if a.save_ns3:
        with open(a.save_ns3, "w") as fh:
            json.dump(ns3_all, fh)
    failed = 0
    print("| group | metric | ecnsim | ns-3 | band | result |")
    print("|---|---|---|---|---|---|")
    for gid in groups:
        nruns = [
            r
            for r in ns3_all
            if r["config"]["id"] == gid and r["config"].get("disc", "fq_codel") == disc
        ]
        eruns = [run_ecnsim(gid, s, disc) for s in scenarios.GROUPS[gid]["seeds"]]
        e, n = summarise(gid, eruns), summarise(gid, nruns)
        out = checks(gid, e, n) if disc == "fq_codel" else checks_aqm(gid, e, n, disc)
        for name, ev, nv, band, ok in out:
            failed += not ok
            print(f"| {gid} | {name} | {ev:.4g} | {nv:.4g} | {band} | {'pass' if ok else 'FAIL'} |")
        if disc not in ("fq_codel", "fq_pie"):
            continue
        classes = sorted({r["classes"] for r in nruns})
        g = scenarios.GROUPS[gid]
        flows = len(g["tcp_delays"]) + len(g["udp"])
        print(f"| {gid} | ns-3 flow queues created | | {classes} | (flows: {flows}) | |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
