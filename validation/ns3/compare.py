#!/usr/bin/env python3
"""Cross-check ecnsim's TCP Reno over DropTail against ns-3 (NewReno).

Run with a Python that can ``import ecnsim``; ns-3 runs in a separate
interpreter (its own virtual environment), started as a subprocess::

    .venv/bin/python validation/ns3/compare.py \
        --ns3-python "$NS3_PYTHON"

Every scenario is described once, as the JSON that ``ns3_dumbbell.py``
reads, and translated here into an ecnsim scenario (``ecnsim.dumbbell``).
The printed table gives, per metric, ecnsim's value, ns-3's value with
``TcpClassicRecovery`` (the reference named in README.md), the difference,
the tolerance band and the verdict; for the lossy groups (c, d) it also
gives ns-3 with its default ``TcpPrrRecovery``, for information only.

See README.md for what is compared, the bands and why.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NS3_SCRIPT = HERE / "ns3_dumbbell.py"

MSS = 1460
# ns-3's point-to-point links carry 20 B IPv4 + 20 B TCP (no options once
# SACK and timestamps are off) + 2 B PPP = 42 B per segment; ecnsim is told
# the same, so both serialise 1502-byte data packets and 42-byte ACKs.
HEADER_BYTES = 42
BOTTLENECK_RATE = 10_000_000
BOTTLENECK_DELAY = 0.010
ACCESS_RATE = 1_000_000_000
ACCESS_DELAY = 0.001
RTT = 2 * (2 * ACCESS_DELAY + BOTTLENECK_DELAY)  # 24 ms without queueing
BDP_PACKETS = BOTTLENECK_RATE * RTT / ((MSS + HEADER_BYTES) * 8)  # ~19.97
LINK_GOODPUT = BOTTLENECK_RATE * MSS / (MSS + HEADER_BYTES)  # 9.7204 Mb/s


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


@dataclass
class Check:
    """One compared quantity: how to read it from each result, and its band."""

    metric: str
    ecnsim: Callable[[dict[str, Any]], float]
    ns3: Callable[[dict[str, Any]], float]
    rel: float | None = None  # pass if |rel diff| <= rel ...
    abs_: float | None = None  # ... or |diff| <= abs_
    unit: str = ""
    scale: float = 1.0  # display scale (e.g. 1e3 for ms)
    band_text: str = ""
    fmt: str | None = None  # format of the values, e.g. "{:.4f}"

    def verdict(self, e: float, n: float) -> str:
        if self.rel is None and self.abs_ is None:
            return "info"
        if any(isinstance(x, float) and math.isnan(x) for x in (e, n)):
            return "FAIL"
        d = e - n
        ok = False
        if self.abs_ is not None and abs(d) <= self.abs_ + 1e-12:
            ok = True
        if self.rel is not None and n != 0 and abs(d / n) <= self.rel + 1e-12:
            ok = True
        return "pass" if ok else "FAIL"


@dataclass
class Scenario:
    sid: str
    group: str
    title: str
    cfg: dict[str, Any]
    checks: list[Check]
    with_prr: bool = False
    results: dict[str, Any] = field(default_factory=dict)


def _flow(res: dict[str, Any], i: int, key: str) -> float:
    v = res["flows"][i][key]
    return math.nan if v is None else float(v)


def _sum(res: dict[str, Any], key: str) -> float:
    return float(sum((f[key] or 0) for f in res["flows"]))


def jain(xs: list[float]) -> float:
    """Jain, Chiu & Hawe 1984: (sum x)^2 / (n sum x^2)."""
    s = sum(xs)
    q = sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else math.nan


def _jain(res: dict[str, Any]) -> float:
    return jain([f["goodput_bps"] for f in res["flows"]])


def base_cfg(**kw: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "n_flows": 1,
        "bottleneck_rate": BOTTLENECK_RATE,
        "bottleneck_delay": BOTTLENECK_DELAY,
        "access_rate": ACCESS_RATE,
        "access_delay": ACCESS_DELAY,
        "queue_packets": 100,
        "access_queue_packets": 10000,
        "duration": 10.0,
        "warmup": 0.0,
        "max_bytes": None,
        "start": 0.0,
        "tcp": {
            "segment_size": MSS,
            "initial_cwnd": 3,
            "initial_rto": 1.0,
            "min_rto": 1.0,
            "clock_granularity": 0.001,
            "rcv_window": 2**30,
        },
    }
    tcp = kw.pop("tcp", {})
    cfg.update(kw)
    cfg["tcp"].update(tcp)
    return cfg


def scenarios(groups: str) -> list[Scenario]:
    out: list[Scenario] = []

    # (a) Lossless slow start: completion time of k segments, IW 1 and 3.
    if "a" in groups:
        for iw in (1, 3):
            for k in (1, 2, 5, 10, 50, 100):
                cfg = base_cfg(
                    queue_packets=1000, duration=3.0, max_bytes=k * MSS, tcp={"initial_cwnd": iw}
                )
                out.append(
                    Scenario(
                        f"a-iw{iw}-{k}seg",
                        "a",
                        f"lossless slow start, IW {iw}, {k} segment(s)",
                        cfg,
                        [
                            Check(
                                "completion time",
                                lambda r: _flow(r, 0, "completion_time_s"),
                                lambda r: _flow(r, 0, "completion_time_s"),
                                rel=0.02,
                                abs_=0.001,
                                unit="ms",
                                scale=1e3,
                                band_text="1 ms or 2%",
                            ),
                            Check(
                                "retransmissions",
                                lambda r: _flow(r, 0, "retransmissions"),
                                lambda r: _flow(r, 0, "retransmissions"),
                                abs_=0,
                                band_text="equal",
                            ),
                        ],
                    )
                )

    # (b) One long flow limited by a 64 000-byte receive window (43 segments
    # in flight: BDP ~20 + at most ~24 queued < 100): no loss, full link.
    if "b" in groups:
        cfg = base_cfg(duration=20.0, warmup=2.0, tcp={"rcv_window": 64000})
        out.append(
            Scenario(
                "b-rwnd64k",
                "b",
                "one long flow, rwnd 64000 B, 100-packet buffer",
                cfg,
                [
                    Check(
                        "goodput",
                        lambda r: _flow(r, 0, "goodput_bps"),
                        lambda r: _flow(r, 0, "goodput_bps"),
                        rel=0.01,
                        unit="Mb/s",
                        scale=1e-6,
                        band_text="1%",
                    ),
                    Check(
                        "bottleneck drops",
                        lambda r: float(r["bottleneck"]["drops"]),
                        lambda r: float(r["bottleneck"]["drops"]),
                        abs_=0,
                        band_text="equal (0)",
                    ),
                ],
            )
        )

    # (c) One long flow, DropTail of 1 BDP (20 packets) and 0.25 BDP (5).
    if "c" in groups:
        for label, q in (("1bdp", round(BDP_PACKETS)), ("0.25bdp", round(BDP_PACKETS / 4))):
            cfg = base_cfg(queue_packets=q, duration=60.0, warmup=10.0)
            out.append(
                Scenario(
                    f"c-{label}",
                    "c",
                    f"one long flow, DropTail {q} packets ({label.replace('bdp', ' BDP')}), "
                    "60 s, warm-up 10 s",
                    cfg,
                    [
                        Check(
                            "goodput",
                            lambda r: _flow(r, 0, "goodput_bps"),
                            lambda r: _flow(r, 0, "goodput_bps"),
                            rel=0.02,
                            unit="Mb/s",
                            scale=1e-6,
                            band_text="2%",
                        ),
                        Check(
                            "bottleneck drops",
                            lambda r: float(r["bottleneck"]["drops"]),
                            lambda r: float(r["bottleneck"]["drops"]),
                            rel=0.10,
                            band_text="10%",
                        ),
                        Check(
                            "retransmissions",
                            lambda r: _flow(r, 0, "retransmissions"),
                            lambda r: _flow(r, 0, "retransmissions"),
                        ),
                        Check(
                            "timeouts",
                            lambda r: _flow(r, 0, "timeouts"),
                            lambda r: _flow(r, 0, "timeouts"),
                        ),
                    ],
                    with_prr=True,
                )
            )

    # (d) 2 and 10 flows, staggered starts, DropTail 50 packets (2.5 BDP), 100 s.
    if "d" in groups:
        starts10 = [0.0, 0.21, 0.43, 0.61, 0.87, 1.03, 1.29, 1.47, 1.71, 1.93]
        for n in (2, 10):
            starts = starts10[:: 10 // n][:n] if n < 10 else starts10
            cfg = base_cfg(n_flows=n, queue_packets=50, duration=100.0, warmup=10.0, start=starts)
            out.append(
                Scenario(
                    f"d-{n}flows",
                    "d",
                    f"{n} long flows, DropTail 50 packets, 100 s, warm-up 10 s",
                    cfg,
                    [
                        Check(
                            "aggregate goodput",
                            lambda r: _sum(r, "goodput_bps"),
                            lambda r: _sum(r, "goodput_bps"),
                            rel=0.02,
                            unit="Mb/s",
                            scale=1e-6,
                            band_text="2%",
                        ),
                        Check(
                            "Jain's index", _jain, _jain, abs_=0.05, band_text="±0.05", fmt="{:.4f}"
                        ),
                        Check(
                            "bottleneck drops",
                            lambda r: float(r["bottleneck"]["drops"]),
                            lambda r: float(r["bottleneck"]["drops"]),
                            rel=0.25,
                            band_text="25%",
                        ),
                        Check(
                            "retransmissions",
                            lambda r: _sum(r, "retransmissions"),
                            lambda r: _sum(r, "retransmissions"),
                        ),
                        Check(
                            "timeouts",
                            lambda r: _sum(r, "timeouts"),
                            lambda r: _sum(r, "timeouts"),
                        ),
                    ],
                    with_prr=True,
                )
            )
    return out


# ---------------------------------------------------------------------------
# ecnsim side
# ---------------------------------------------------------------------------


def run_ecnsim(cfg: dict[str, Any], cc: str = "reno") -> dict[str, Any]:
    """Run the scenario in ecnsim; return results in ns3_dumbbell.py's shape."""
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail, tcp

    t = cfg["tcp"]
    n = cfg["n_flows"]
    starts = cfg["start"] if isinstance(cfg["start"], list) else [cfg["start"]] * n
    sc = ecnsim.dumbbell(
        n,
        bottleneck_rate=int(cfg["bottleneck_rate"]),
        bottleneck_delay=cfg["bottleneck_delay"],
        access_rate=int(cfg["access_rate"]),
        access_delay=cfg["access_delay"],
        duration=cfg["duration"],
        warmup=cfg["warmup"] or None,
        queue=droptail(limit_packets=cfg["queue_packets"]),
        access_queue=droptail(limit_packets=cfg["access_queue_packets"]),
        app=bulk(cfg["max_bytes"]) if cfg["max_bytes"] else bulk(),
        start=starts,
        seed=1,
        tcp=tcp(
            cc=cc,
            mss=t["segment_size"],
            header_bytes=HEADER_BYTES,
            initial_window=t["initial_cwnd"],
            rcv_window=t["rcv_window"],
            initial_rto=t["initial_rto"],
            min_rto=t["min_rto"],
            max_rto=60.0,
            clock_granularity=t["clock_granularity"],
            delayed_ack=False,
            # As ns-3: no Limited Transmit (off there),
            # TcpNewReno's whole-byte congestion avoidance.
            limited_transmit=False,
            ca_increase="per_ack_truncated",
        ),
    )
    res = ecnsim.Simulation(sc).run()
    flows_t = res.table("flows")
    queues_t = res.table("queues")
    names = list(queues_t["queue"])
    qi = names.index("r1->r2")
    flows = []
    for i in range(n):

        def col(c: str, i: int = i) -> float:
            return float(flows_t[c][i])

        flows.append(
            {
                "flow": flows_t["flow"][i],
                "rx_bytes": int(col("bytes_delivered")),
                "goodput_bps": col("goodput_bps"),
                "completion_time_s": None
                if math.isnan(col("completion_time_s"))
                else col("completion_time_s"),
                "connect_time_s": col("connect_time_s"),
                "data_segments_sent": int(col("packets_sent")),
                "retransmissions": int(col("packets_retransmitted")),
                "fast_recoveries": int(col("fast_retransmits")),
                "timeouts": int(col("rto_count")),
                "drops": int(col("drops")),
            }
        )
    return {
        "simulator": "ecnsim",
        "ecnsim_version": ecnsim.__version__,
        "flows": flows,
        "bottleneck": {
            "drops": int(queues_t["drops"][qi]),
            "arrivals": int(queues_t["arrivals"][qi]),
            "utilization": float(queues_t["utilization"][qi]),
        },
    }


# ---------------------------------------------------------------------------
# ns-3 side
# ---------------------------------------------------------------------------


def run_ns3_batch(python: str, cfgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run several descriptions in one ns-3 process (importing ns-3 takes ~10 s)."""
    proc = subprocess.run(
        [python, str(NS3_SCRIPT), "-"],
        input=json.dumps(cfgs),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-30:])
        raise RuntimeError(f"ns-3 run failed (exit {proc.returncode}):\n{tail}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    if not lines:
        raise RuntimeError(f"ns-3 produced no JSON:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    out: list[dict[str, Any]] = json.loads(lines[-1])
    return out


def _cost(cfg: dict[str, Any]) -> float:
    """Rough ns-3 wall-time weight: simulated packets ~ duration (all at link rate)."""
    duration = float(cfg["duration"])
    return 0.3 + duration * (1 + 0.3 * int(cfg["n_flows"])) / 10


def run_ns3_all(
    python: str, jobs: list[tuple[str, dict[str, Any]]], workers: int
) -> dict[str, dict[str, Any]]:
    """Spread the (key, cfg) jobs over `workers` ns-3 processes, balancing cost."""
    bins: list[list[tuple[str, dict[str, Any]]]] = [[] for _ in range(max(1, workers))]
    loads = [0.0] * len(bins)
    for key, cfg in sorted(jobs, key=lambda j: -_cost(j[1])):
        k = loads.index(min(loads))
        bins[k].append((key, cfg))
        loads[k] += _cost(cfg)
    results: dict[str, dict[str, Any]] = {}
    with cf.ThreadPoolExecutor(max_workers=len(bins)) as pool:
        futs = {pool.submit(run_ns3_batch, python, [c for _, c in b]): b for b in bins if b}
        for fut in cf.as_completed(futs):
            b = futs[fut]
            for (key, _), res in zip(b, fut.result(), strict=True):
                results[key] = res
    return results


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _fmt(x: float, scale: float, fmt: str | None = None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    v = x * scale
    if fmt:
        return fmt.format(v)
    if abs(v) >= 100 or v == int(v):
        return f"{v:.0f}" if v == int(v) or abs(v) >= 1000 else f"{v:.1f}"
    return f"{v:.4g}" if abs(v) < 10 else f"{v:.3f}"


def _diff(e: float, n: float, c: Check) -> str:
    if any(x is None or math.isnan(x) for x in (e, n)):
        return "n/a"
    d = e - n
    if c.unit == "ms":
        return f"{d * 1e3:+.3f} ms ({100 * d / n:+.1f}%)"
    if c.fmt:  # a dimensionless index: the band is absolute
        return c.fmt.replace(":", ":+").format(d)
    if n == 0:
        return "0" if d == 0 else f"{d:+g}"
    return f"{100 * d / n:+.1f}%"


def report(scs: list[Scenario], cc: str = "reno") -> tuple[str, int, int]:
    name = {"reno": "Reno", "newreno": "NewReno"}.get(cc, cc)
    head = (
        f"| scenario | metric | ecnsim ({name}) | ns-3 NewReno+classic | Δ | band | verdict "
        "| ns-3 NewReno+PRR | Δ (PRR) |\n|---|---|---|---|---|---|---|---|---|"
    )
    rows = [head]
    n_pass = n_fail = 0
    for sc in scs:
        e, n3, prr = sc.results["ecnsim"], sc.results["ns3"], sc.results.get("ns3_prr")
        for c in sc.checks:
            ev, nv = c.ecnsim(e), c.ns3(n3)
            v = c.verdict(ev, nv)
            if v == "pass":
                n_pass += 1
            elif v == "FAIL":
                n_fail += 1
            unit = f" [{c.unit}]" if c.unit else ""
            prr_v = prr_d = ""
            if prr is not None:
                pv = c.ns3(prr)
                prr_v = _fmt(pv, c.scale, c.fmt)
                prr_d = _diff(ev, pv, c) + ("" if c.verdict(ev, pv) in ("pass", "info") else " ✗")
            rows.append(
                f"| {sc.sid} | {c.metric}{unit} | {_fmt(ev, c.scale, c.fmt)} "
                f"| {_fmt(nv, c.scale, c.fmt)} "
                f"| {_diff(ev, nv, c)} | {c.band_text or '—'} | {v} | {prr_v} | {prr_d} |"
            )
    return "\n".join(rows), n_pass, n_fail


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--ns3-python",
        default=os.environ.get("NS3_PYTHON", "python3"),
        help="Python of the ns-3 virtual environment (default: $NS3_PYTHON, else python3)",
    )
    ap.add_argument(
        "--groups", default="abcd", help="scenario groups to run, e.g. 'ab' (default: abcd)"
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=max(1, min(4, os.cpu_count() or 1)),
        help="parallel ns-3 processes",
    )
    ap.add_argument("--no-prr", action="store_true", help="skip the informational ns-3 PRR runs")
    ap.add_argument("--json-out", type=Path, help="write every raw result to this JSON file")
    ap.add_argument(
        "--ecnsim-cc",
        default="reno",
        help="ecnsim's tcp.cc (default reno; 'newreno' compares like with like "
        "once the core offers it)",
    )
    args = ap.parse_args()

    t0 = time.monotonic()
    scs = scenarios(args.groups)
    jobs: list[tuple[str, dict[str, Any]]] = []
    for sc in scs:
        jobs.append(
            (f"{sc.sid}|classic", {**sc.cfg, "tcp": {**sc.cfg["tcp"], "recovery": "classic"}})
        )
        if sc.with_prr and not args.no_prr:
            jobs.append((f"{sc.sid}|prr", {**sc.cfg, "tcp": {**sc.cfg["tcp"], "recovery": "prr"}}))

    with cf.ThreadPoolExecutor(max_workers=1) as bg:
        ns3_future = bg.submit(run_ns3_all, args.ns3_python, jobs, args.jobs)
        t_e = time.monotonic()
        for sc in scs:
            sc.results["ecnsim"] = run_ecnsim(sc.cfg, args.ecnsim_cc)
        t_e = time.monotonic() - t_e
        ns3 = ns3_future.result()
    for sc in scs:
        sc.results["ns3"] = ns3[f"{sc.sid}|classic"]
        if f"{sc.sid}|prr" in ns3:
            sc.results["ns3_prr"] = ns3[f"{sc.sid}|prr"]

    table, n_pass, n_fail = report(scs, args.ecnsim_cc)
    print(table)
    print()
    print(f"{n_pass} pass, {n_fail} FAIL (rows with a band; 'info' rows have none).")
    print(
        f"RTT {RTT * 1e3:.0f} ms, BDP {BDP_PACKETS:.2f} packets of {MSS + HEADER_BYTES} B, "
        f"link goodput {LINK_GOODPUT / 1e6:.4f} Mb/s. ecnsim took {t_e:.1f} s; "
        f"everything took {time.monotonic() - t0:.0f} s."
    )
    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                [
                    {"id": sc.sid, "title": sc.title, "config": sc.cfg, "results": sc.results}
                    for sc in scs
                ],
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
