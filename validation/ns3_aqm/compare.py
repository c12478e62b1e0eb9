#!/usr/bin/env python3
"""Cross-check ecnsim's CoDel and PIE against ns-3's CoDelQueueDisc and PieQueueDisc.

Run with ecnsim's Python, from the repository root::

    .venv/bin/python validation/ns3_aqm/compare.py                    # both simulators
    .venv/bin/python validation/ns3_aqm/compare.py --ns3-json F.json  # reuse saved ns-3 output
    .venv/bin/python validation/ns3_aqm/compare.py --only u           # only the UDP group (u or t)

The scenarios and bands are in ``scenarios.py`` (committed before the first
comparison). ns-3 runs through ``ns3_aqm.py`` in $NS3_PYTHON (two processes).
Prints Markdown tables; exit status 1 if a banded check is out of band.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenarios  # noqa: E402

NS3_PYTHON = os.environ.get("NS3_PYTHON", "python3")
BIN = 0.5


# --- ecnsim side -------------------------------------------------------------------


def ecnsim_scenario(cfg: dict[str, Any], seed: int) -> Any:
    import ecnsim
    from ecnsim.scenario.spec import bulk, codel, droptail, pie, tcp
    from ecnsim.scenario.workloads import cbr

    udp = cfg["kind"] == "udp"
    n = 1 if udp else scenarios.TCP_FLOWS
    wire = scenarios.UDP_PAYLOAD + 30 if udp else scenarios.TCP_SEGMENT + 42
    ecn = bool(cfg.get("ecn", False))
    if cfg["aqm"] == "codel":
        c = scenarios.CODEL
        # ns-3 resets below MinBytes IP bytes (strict); ecnsim at or below max_packet
        # wire bytes (RFC 8289): 1500 IP bytes "<" is 1501 wire bytes "<=" (scenarios.py).
        q = codel(
            limit_packets=c["limit"],
            target=c["target"],
            interval=c["interval"],
            max_packet=c["min_bytes_ip"] + 2 - 1,
            ecn=ecn,
        )
    else:
        p = scenarios.PIE
        q = pie(
            limit_packets=p["limit"],
            target=p["target"],
            t_update=p["t_update"],
            alpha=p["alpha"],
            beta=p["beta"],
            max_burst=cfg.get("max_burst", p["max_burst"]),
            ecn=ecn,
            mark_ecn_threshold=p["mark_ecn_threshold"],
            byte_mode=False,
            mean_pktsize=wire,  # "2 packets" in bytes
            delay_estimator=cfg.get("estimator", "timestamp"),
            dq_threshold=p["dq_threshold"],
            cap_drop_adjustment=p["cap_drop_adjustment"],
            derandomize=p["derandomize"],
        )
    duration = scenarios.UDP_DURATION if udp else scenarios.TCP_DURATION
    warmup = 0.0 if udp else scenarios.TCP_WARMUP
    sc = ecnsim.Scenario(duration, name=cfg["id"], warmup=warmup, seed=seed)
    sc.router("r1", "r2")
    b, a = scenarios.BOTTLENECK, scenarios.ACCESS
    sc.link(
        "r1",
        "r2",
        rate=round(b["rate"]),
        delay=b["delay"],
        queue_ab=q,
        queue_ba=droptail(limit_packets=10000),
    )
    for i in range(n):
        sc.host(f"s{i}", f"c{i}")
        sc.link(
            f"s{i}",
            "r1",
            rate=round(a["rate"]),
            delay=a["delay"],
            queue=droptail(limit_packets=10000),
        )
        sc.link(
            "r2",
            f"c{i}",
            rate=round(a["rate"]),
            delay=a["delay"],
            queue=droptail(limit_packets=10000),
        )
    if udp:
        # cbr's rate counts packet_size + 28 bytes: payload + 2 stands for the PPP header.
        sc.app(
            cbr(round(cfg["rate"]), packet_size=scenarios.UDP_PAYLOAD + 2),
            clients="s0",
            servers="c0",
        )
        return sc
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
            ecn="request" if ecn else "off",
            limited_transmit=False,
            ca_increase="per_ack_truncated",  # TcpNewReno's whole-byte congestion avoidance
        )
    )
    for i, start in enumerate(scenarios.tcp_starts(seed)):
        sc.flow(f"s{i}", f"c{i}", app=bulk(), start=start, name=f"f{i}")
    return sc


def run_ecnsim(cfg: dict[str, Any], seed: int) -> dict[str, Any]:
    """One ecnsim run, reduced to ns3_aqm.py's output format."""
    import numpy as np

    import ecnsim

    udp = cfg["kind"] == "udp"
    duration = scenarios.UDP_DURATION if udp else scenarios.TCP_DURATION
    warmup = 0.0 if udp else scenarios.TCP_WARMUP
    sc = ecnsim_scenario(cfg, seed)
    sim = ecnsim.Simulation(sc)
    names = [nd["name"] for nd in sim.spec["nodes"]]
    r1 = names.index("r1")
    src_flow = {names.index(f"s{i}"): i for i in range(scenarios.TCP_FLOWS if not udp else 1)}
    sim.trace(links=[0])
    nb = int(duration / BIN + 1e-9) + 1
    arrivals = np.zeros(nb)
    soj_sum = np.zeros(nb)
    soj_n = np.zeros(nb)
    enq: dict[int, int] = {}
    drops: list[tuple[float, str, int]] = []
    tot_sum = tot_n = 0.0
    t = 0.0
    while t < duration:
        t = min(duration, t + 5.0)
        sim.run_until(t)
        df = sim.drain_trace()
        df = df[df.from_node == r1]
        for tn, ev, uid, src in zip(df.time_ns, df.event, df.uid, df.src_node, strict=True):
            ts = tn / 1e9
            k = int(ts / BIN)
            if ev == "+":
                enq[uid] = tn
                arrivals[k] += 1
            elif ev in "-d":
                t0 = enq.pop(uid, None)
                if ev == "d":
                    # A drop at the enqueue instant is a drop on arrival (PIE's early drop,
                    # or an overflow); a later one is CoDel's drop at dequeue.
                    kind = "arrival" if t0 == tn else "dequeue"
                    drops.append((ts, kind, src_flow.get(int(src), -1)))
                    if t0 == tn:
                        continue
                if t0 is not None:
                    s = (tn - t0) / 1e9
                    soj_sum[k] += s
                    soj_n[k] += 1
                    if ts >= warmup:
                        tot_sum += s
                        tot_n += 1
    sim.close_trace()
    res = sim.results
    qt = res.table("queues")
    qi = list(qt["queue"]).index("r1->r2")
    disc = {
        c: int(qt[c][qi]) for c in ("arrivals", "drops", "drops_early", "drops_overflow", "marks")
    }
    out: dict[str, Any] = {
        "simulator": "ecnsim",
        "config": {**cfg, "seed": seed},
        "disc": disc,
        "drops": drops,
        "bins": {
            "width": BIN,
            "arrivals": arrivals.tolist(),
            "sojourn_sum": soj_sum.tolist(),
            "sojourn_n": soj_n.tolist(),
        },
        "sojourn": {"sum": tot_sum, "n": tot_n},
    }
    if not udp:
        ft = res.table("flows")
        out["flows"] = [
            {
                "goodput_bps": float(ft["goodput_bps"][i]),
                "drops": int(ft["drops"][i]),
                "marks": int(ft["marks"][i]),
            }
            for i in range(scenarios.TCP_FLOWS)
        ]
    return out


# --- ns-3 side -----------------------------------------------------------------------


def run_ns3(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = subprocess.run(
        [NS3_PYTHON, os.path.join(HERE, "ns3_aqm.py"), json.dumps(jobs)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


# --- metrics ---------------------------------------------------------------------------


def early_drop_times(r: dict[str, Any]) -> list[float]:
    if r["simulator"] == "ns-3":
        return [t for t, k, _ in r["drops"] if k == "early"]
    return [t for t, k, _ in r["drops"] if k == "dequeue"]  # CoDel drops at dequeue


def bin_sums(r: dict[str, Any], lo: float, hi: float) -> tuple[float, float, float, float]:
    """(arrivals, drops (any reason), sojourn sum, sojourn samples) over bins in [lo, hi)."""
    b = r["bins"]
    k0, k1 = round(lo / BIN), round(hi / BIN)
    arr = sum(b["arrivals"][k0:k1])
    ss = sum(b["sojourn_sum"][k0:k1])
    sn = sum(b["sojourn_n"][k0:k1])
    dr = sum(1 for t, _, _ in r["drops"] if lo <= t < hi)
    return arr, dr, ss, sn


def codel_udp_metrics(r: dict[str, Any]) -> dict[str, Any]:
    times = early_drop_times(r)
    episodes = 1 + sum(
        1 for a, b in itertools.pairwise(times) if b - a > 1.1 * scenarios.CODEL["interval"]
    )
    d = r["disc"]
    early = len(times)
    _, _, ss, sn = bin_sums(r, 2.0, scenarios.UDP_DURATION)
    return {
        "first_drop_s": times[0] if times else float("nan"),
        "drop_times": times[:10],
        "drops_total": d["drops"],
        "drops_early": early,
        "drops_overflow": d["drops"] - early,
        "episodes": episodes if times else 0,
        "sojourn_s": ss / sn if sn else float("nan"),
    }


def pie_udp_metrics(r: dict[str, Any]) -> dict[str, Any]:
    arr, dr, ss, sn = bin_sums(r, 5.0, scenarios.UDP_DURATION)
    bins = []
    soj = []
    for k in range(int(scenarios.UDP_DURATION / BIN)):
        a, dd, s1, n1 = bin_sums(r, k * BIN, (k + 1) * BIN)
        if k * BIN < 5.0:
            bins.append(dd / a if a else 0.0)
        soj.append(s1 / n1 if n1 else 0.0)
    return {"sojourn_s": ss / sn, "drop_frac": dr / arr, "bin_drop_frac": bins, "bin_sojourn": soj}


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 else float("nan")


def tcp_metrics(r: dict[str, Any]) -> dict[str, Any]:
    gp = [f["goodput_bps"] for f in r["flows"]]
    span = scenarios.TCP_DURATION - scenarios.TCP_WARMUP
    if r["simulator"] == "ns-3":
        per_drops = [
            sum(1 for t, _, f in r["drops"] if f == i and t >= scenarios.TCP_WARMUP)
            for i in range(scenarios.TCP_FLOWS)
        ]
        per_marks = [
            sum(1 for t, _, f in r["marks"] if f == i and t >= scenarios.TCP_WARMUP)
            for i in range(scenarios.TCP_FLOWS)
        ]
    else:
        per_drops = [f["drops"] for f in r["flows"]]
        per_marks = [f["marks"] for f in r["flows"]]
    d = r["disc"]
    return {
        "goodput": sum(gp),
        "jain": jain(gp),
        # Both sides from the 0.5 s bins over [warm-up, end] (ns-3's probe sums the whole run).
        "sojourn_s": bin_sums(r, scenarios.TCP_WARMUP, scenarios.TCP_DURATION)[2]
        / bin_sums(r, scenarios.TCP_WARMUP, scenarios.TCP_DURATION)[3],
        "signals_per_s": (d["drops"] + d["marks"]) / span,
        "drops": d["drops"],
        "marks": d["marks"],
        "per_flow_drops": per_drops,
        "per_flow_marks": per_marks,
    }


# --- table -------------------------------------------------------------------------------

ROWS: list[str] = []
BAD = 0


def check(
    sid: str, metric: str, e: float, v: float, band: Any, fmt: str, unit: str = "", *, kind: str
) -> None:
    """One row: ``kind`` "abs" (band = max |e - v|), "rel" (|e - v| / |v|), "relabs"
    (band = (rel, abs): within either), or "info" (reported, no band)."""
    global BAD
    d = e - v
    if kind == "abs":
        ok, bs, ds = abs(d) <= band, f"±{band:g}{unit}", f"{d:+{fmt}}{unit}"
    elif kind == "rel":
        rel = d / v if v else float("inf") if d else 0.0
        ok, bs, ds = abs(rel) <= band, f"±{band:.0%}", f"{rel:+.1%}"
    elif kind == "relabs":
        rel = d / v if v else float("inf") if d else 0.0
        ok = abs(rel) <= band[0] or abs(d) <= band[1]
        bs, ds = f"±{band[0]:.0%} or ±{band[1]:g}{unit}", f"{rel:+.1%} ({d:+{fmt}}{unit})"
    else:
        ok, bs, ds = True, "-", f"{d:+{fmt}}{unit}"
    verdict = "(reported)" if kind == "info" else ("pass" if ok else "**FAIL**")
    BAD += not ok
    ROWS.append(
        f"| {sid} | {metric} | {e:{fmt}}{unit} | {v:{fmt}}{unit} | {ds} | {bs} | {verdict} |"
    )


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def report(
    scn: dict[str, Any], eco: list[dict[str, Any]], ns3: list[dict[str, Any]]
) -> dict[str, Any]:
    sid = scn["id"]
    if scn["kind"] == "udp" and scn["aqm"] == "codel":
        bands = scenarios.BANDS["u-codel"]
        e, v = codel_udp_metrics(eco[0]), codel_udp_metrics(ns3[0])
        check(
            sid,
            "first CoDel drop",
            e["first_drop_s"] * 1e3,
            v["first_drop_s"] * 1e3,
            bands["first_drop_abs_s"] * 1e3,
            ".3f",
            " ms",
            kind="abs",
        )
        k = min(len(e["drop_times"]), len(v["drop_times"]))
        worst = max(range(k), key=lambda j: abs(e["drop_times"][j] - v["drop_times"][j]))
        check(
            sid,
            f"drops 1-{k}: worst (drop {worst + 1})",
            e["drop_times"][worst] * 1e3,
            v["drop_times"][worst] * 1e3,
            bands["drop_times_abs_s"] * 1e3,
            ".3f",
            " ms",
            kind="abs",
        )
        check(
            sid,
            "drops, all reasons",
            e["drops_total"],
            v["drops_total"],
            bands["drops_total_rel"],
            ".0f",
            kind="rel",
        )
        check(
            sid,
            "CoDel drops (target exceeded)",
            e["drops_early"],
            v["drops_early"],
            bands["drops_early_rel"],
            ".0f",
            kind="rel",
        )
        check(
            sid,
            "overflow drops",
            e["drops_overflow"],
            v["drops_overflow"],
            bands["drops_overflow"],
            ".0f",
            kind="relabs",
        )
        check(
            sid,
            "dropping episodes",
            e["episodes"],
            v["episodes"],
            bands["episodes"],
            ".0f",
            kind="relabs",
        )
        check(
            sid,
            "mean sojourn [2 s, 20 s]",
            e["sojourn_s"] * 1e3,
            v["sojourn_s"] * 1e3,
            bands["sojourn_rel"],
            ".2f",
            " ms",
            kind="rel",
        )
        return {"ecnsim": e, "ns3": v}
    if scn["kind"] == "udp":
        bands = scenarios.BANDS["u-pie"]
        es, vs = [pie_udp_metrics(r) for r in eco], [pie_udp_metrics(r) for r in ns3]
        e = {k: mean([m[k] for m in es]) for k in ("sojourn_s", "drop_frac")}
        v = {k: mean([m[k] for m in vs]) for k in ("sojourn_s", "drop_frac")}
        check(
            sid,
            "mean sojourn [5 s, 20 s]",
            e["sojourn_s"] * 1e3,
            v["sojourn_s"] * 1e3,
            bands["sojourn_abs_s"] * 1e3,
            ".2f",
            " ms",
            kind="abs",
        )
        check(
            sid,
            "drop fraction [5 s, 20 s]",
            e["drop_frac"],
            v["drop_frac"],
            bands["drop_frac_abs"],
            ".4f",
            kind="abs",
        )
        eb = [mean(col) for col in zip(*[m["bin_drop_frac"] for m in es], strict=True)]
        vb = [mean(col) for col in zip(*[m["bin_drop_frac"] for m in vs], strict=True)]
        j = max(range(len(eb)), key=lambda i: abs(eb[i] - vb[i]))
        check(
            sid,
            f"drop fraction per 0.5 s over [0, 5 s]: worst ({j * BIN:g} s)",
            eb[j],
            vb[j],
            bands["bin_drop_frac_abs"],
            ".4f",
            kind="abs",
        )
        esj = [mean(col) for col in zip(*[m["bin_sojourn"] for m in es], strict=True)]
        vsj = [mean(col) for col in zip(*[m["bin_sojourn"] for m in vs], strict=True)]
        check(
            sid,
            f"peak 0.5 s sojourn (ecnsim at {esj.index(max(esj)) * BIN:g} s, ns-3 at "
            f"{vsj.index(max(vsj)) * BIN:g} s)",
            max(esj) * 1e3,
            max(vsj) * 1e3,
            bands["peak_sojourn_rel"],
            ".2f",
            " ms",
            kind="rel",
        )
        return {
            "ecnsim": {**e, "bins": eb, "sojourn_bins": esj},
            "ns3": {**v, "bins": vb, "sojourn_bins": vsj},
        }
    bands = scenarios.BANDS["t"]
    es, vs = [tcp_metrics(r) for r in eco], [tcp_metrics(r) for r in ns3]
    keys = ("goodput", "jain", "sojourn_s", "signals_per_s", "drops", "marks")
    e = {k: mean([m[k] for m in es]) for k in keys}
    v = {k: mean([m[k] for m in vs]) for k in keys}
    check(
        sid,
        "goodput",
        e["goodput"] / 1e6,
        v["goodput"] / 1e6,
        bands["goodput_rel"],
        ".3f",
        " Mb/s",
        kind="rel",
    )
    check(sid, "Jain's index", e["jain"], v["jain"], bands["jain_abs"], ".3f", kind="abs")
    check(
        sid,
        "mean sojourn [10 s, 60 s]",
        e["sojourn_s"] * 1e3,
        v["sojourn_s"] * 1e3,
        (bands["sojourn"][0], bands["sojourn"][1] * 1e3),
        ".2f",
        " ms",
        kind="relabs",
    )
    check(
        sid,
        "drops + marks per s",
        e["signals_per_s"],
        v["signals_per_s"],
        bands["signals_rel"],
        ".2f",
        kind="rel",
    )
    check(sid, "drops", e["drops"], v["drops"], None, ".1f", kind="info")
    check(sid, "marks", e["marks"], v["marks"], None, ".1f", kind="info")
    sd = {k: statistics.pstdev([m[k] for m in es]) for k in keys}
    return {
        "ecnsim": {**e, "sd": sd, "per_seed": es},
        "ns3": {
            **v,
            "sd": {k: statistics.pstdev([m[k] for m in vs]) for k in keys},
            "per_seed": vs,
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns3-json", help="reuse saved ns3_aqm.py output (a list)")
    ap.add_argument("--save-ns3", help="write the ns-3 output here")
    ap.add_argument("--only", choices=("u", "t"), help="only the UDP (u) or TCP (t) group")
    ap.add_argument("--json-out", default=os.path.join(HERE, "last_results.json"))
    args = ap.parse_args()
    t0 = time.time()
    scns = [
        s
        for s in scenarios.udp_scenarios() + scenarios.tcp_scenarios()
        if not args.only or s["id"][0] == args.only
    ]
    jobs = [{**s, "seed": seed} for s in scns for seed in s["seeds"]]
    if args.ns3_json:
        with open(args.ns3_json) as f:
            ns3_all = json.load(f)
    else:
        halves = [jobs[0::2], jobs[1::2]]
        with ThreadPoolExecutor(2) as ex:
            parts = list(ex.map(run_ns3, [h for h in halves if h]))
        ns3_all = [r for p in parts for r in p]
        if args.save_ns3:
            with open(args.save_ns3, "w") as f:
                json.dump(ns3_all, f)
    t_ns3 = time.time() - t0
    ROWS.extend(
        [
            "| scenario | metric | ecnsim | ns-3 | ecnsim - ns-3 | band | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
    )
    details = {}
    for s in scns:
        ns3 = [r for r in ns3_all if r["config"]["id"] == s["id"]]
        ns3.sort(key=lambda r: r["config"]["seed"])
        eco = [run_ecnsim(s, seed) for seed in s["seeds"]]
        details[s["id"]] = report(s, eco, ns3)
    print("\n".join(ROWS))
    print(f"\n{BAD} check(s) out of band; ns-3 {t_ns3:.0f} s, total {time.time() - t0:.0f} s")
    with open(args.json_out, "w") as f:
        json.dump(details, f, indent=1)
    return 1 if BAD else 0


if __name__ == "__main__":
    sys.exit(main())
