#!/usr/bin/env python3
"""Cross-check ecnsim's NewReno and ECN endpoints over DropTail and RED against ns-3.

Issue 3, item 7. Run with a Python that can ``import ecnsim``::

    .venv/bin/python validation/ns3/compare_tcp_ecn.py \
        --ns3-python "$NS3_PYTHON" --plot docs/img/validation_cwnd_tcp_ecn.png

Same common model as ``compare.py`` (README.md): 10 Mb/s / 10 ms bottleneck,
1 Gb/s / 1 ms access links, 1502-byte packets, IW 3, no delayed ACK, no SACK,
no timestamps, 1 s minimum and initial RTO. ecnsim runs ``cc = "newreno"``;
ns-3 runs ``TcpNewReno`` + ``TcpClassicRecovery`` (the reference) and, for
information, ``TcpPrrRecovery`` (ns-3.44's default). The bands below were
fixed before the first run and are not to be changed after looking.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import (
    BDP_PACKETS,
    HEADER_BYTES,
    Check,
    Scenario,
    _flow,
    base_cfg,
    report,
    run_ns3_all,
)

DURATION = 60.0
WARMUP = 10.0
SAMPLE = 0.01  # cwnd sampling interval, s
RED = {
    "type": "red",
    "limit": 50,
    "min_th": 5.0,
    "max_th": 15.0,
    "w_q": 0.002,
    "max_p": 0.1,
    "gentle": False,
    "wait": True,
    "mean_pktsize": 1500,
}


def cwnd_window(res: dict[str, Any]) -> list[float]:
    s = res["flows"][0]["cwnd_series"]
    k0 = round(WARMUP / SAMPLE)
    return [float(x) for x in s[k0:]]


def cwnd_mean(res: dict[str, Any]) -> float:
    w = cwnd_window(res)
    return sum(w) / len(w)


def cwnd_sd(res: dict[str, Any]) -> float:
    w = cwnd_window(res)
    m = sum(w) / len(w)
    return math.sqrt(sum((x - m) ** 2 for x in w) / len(w))


def reductions(res: dict[str, Any]) -> float:
    f = res["flows"][0]
    return float(f["fast_recoveries"] + f["timeouts"] + f.get("ecn_reductions", 0))


def scenarios() -> list[Scenario]:
    out = []
    specs = [
        ("t-nr-dt-1bdp", "NewReno, DropTail 20 p (1 BDP)", {"queue_packets": 20}, False),
        ("t-nr-dt-0.25bdp", "NewReno, DropTail 5 p (0.25 BDP)", {"queue_packets": 5}, False),
        ("t-ecn-red", "ECN NewReno, RED 5/15, ECN", {"queue": {**RED, "ecn": True}}, True),
        ("t-nr-red", "NewReno, RED 5/15, drops", {"queue": {**RED, "ecn": False}}, False),
        ("t-ecn-dt-1bdp", "ECN NewReno, DropTail 20 p (control)", {"queue_packets": 20}, True),
    ]
    for sid, title, q, ecn in specs:
        cfg = base_cfg(
            duration=DURATION, warmup=WARMUP, sample_interval=SAMPLE, tcp={"ecn": ecn}, **q
        )
        is_red = "queue" in cfg
        checks = [
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
                "retransmissions",
                lambda r: _flow(r, 0, "retransmissions"),
                lambda r: _flow(r, 0, "retransmissions"),
                rel=0.10 if not (is_red and ecn) else None,
                abs_=3 if not (is_red and ecn) else None,
                band_text="10% or 3" if not (is_red and ecn) else "",
            ),
            Check("timeouts", lambda r: _flow(r, 0, "timeouts"), lambda r: _flow(r, 0, "timeouts")),
            Check(
                "bottleneck drops",
                lambda r: float(r["bottleneck"]["drops"]),
                lambda r: float(r["bottleneck"]["drops"]),
                rel=0.15 if is_red else 0.10,
                abs_=3,
                band_text=("15%" if is_red else "10%") + " or 3",
            ),
        ]
        if is_red and ecn:
            checks += [
                Check(
                    "marks",
                    lambda r: float(r["bottleneck"]["marks"]),
                    lambda r: float(r["bottleneck"]["marks"]),
                    rel=0.15,
                    band_text="15%",
                ),
                Check(
                    "ECN reductions",
                    lambda r: _flow(r, 0, "ecn_reductions"),
                    lambda r: _flow(r, 0, "ecn_reductions"),
                    rel=0.15,
                    band_text="15%",
                ),
            ]
        checks += [
            Check(
                "window reductions",
                reductions,
                reductions,
                rel=0.15 if is_red else 0.10,
                band_text="15%" if is_red else "10%",
            ),
            Check(
                "mean cwnd",
                cwnd_mean,
                cwnd_mean,
                rel=0.10 if is_red else 0.05,
                unit="kB",
                scale=1e-3,
                band_text="10%" if is_red else "5%",
            ),
            Check("sd of cwnd", cwnd_sd, cwnd_sd, unit="kB", scale=1e-3),
        ]
        out.append(Scenario(sid, "t", title, cfg, checks, with_prr=True))
    return out


def ecnsim_scenario(
    cfg: dict[str, Any], *, n_flows: int = 1, sample_interval: float | None = SAMPLE
) -> Any:
    """The ecnsim scenario of ``cfg`` (``ns3_dumbbell.py``'s keys) with ``n_flows`` flows."""
    import ecnsim
    from ecnsim.scenario.spec import droptail, red, tcp

    t = cfg["tcp"]
    qc = cfg.get("queue")
    if qc:
        queue = red(
            limit_packets=qc["limit"],
            min_th=qc["min_th"],
            max_th=qc["max_th"],
            w_q=qc["w_q"],
            max_p=qc["max_p"],
            gentle=qc["gentle"],
            wait=qc["wait"],
            mean_pktsize=qc["mean_pktsize"],
            measure="packets",
            byte_mode=False,
            drop_spacing="uniform",
            backlog_gate=True,
            idle_start="tx_end",
            victim="tail",
            ecn="rfc3168" if qc["ecn"] else "none",
            adaptive="none",
        )
    else:
        queue = droptail(limit_packets=cfg["queue_packets"])
    return ecnsim.dumbbell(
        n_flows,
        bottleneck_rate=int(cfg["bottleneck_rate"]),
        bottleneck_delay=cfg["bottleneck_delay"],
        access_rate=int(cfg["access_rate"]),
        access_delay=cfg["access_delay"],
        duration=cfg["duration"],
        warmup=cfg["warmup"],
        queue=queue,
        access_queue=droptail(limit_packets=cfg["access_queue_packets"]),
        start=cfg.get("start"),
        seed=1,
        sample_interval=sample_interval,
        tcp=tcp(
            cc="newreno",
            mss=t["segment_size"],
            header_bytes=HEADER_BYTES,
            initial_window=t["initial_cwnd"],
            rcv_window=t["rcv_window"],
            initial_rto=t["initial_rto"],
            min_rto=t["min_rto"],
            max_rto=60.0,
            clock_granularity=t["clock_granularity"],
            delayed_ack=False,
            ecn="request" if t.get("ecn") else "off",
            # As ns-3: no Limited Transmit (off there),
            # TcpNewReno's whole-byte congestion avoidance.
            limited_transmit=False,
            ca_increase="per_ack_truncated",
        ),
    )


def run_ecnsim(cfg: dict[str, Any]) -> dict[str, Any]:
    import ecnsim

    res = ecnsim.Simulation(ecnsim_scenario(cfg)).run()
    f = res.table("flows")
    qt = res.table("queues")
    qi = list(qt["queue"]).index("r1->r2")
    fs = res.table("flow_series")
    times = [float(x) for x in fs["time_s"]]
    cw = [float(x) for x in fs["cwnd_bytes"]]
    n = int(DURATION / SAMPLE + 1e-9) + 1
    series, j, cur = [], 0, 0.0
    for k in range(n):  # align on k * SAMPLE, last value at or before
        tk = k * SAMPLE
        while j < len(times) and times[j] <= tk + 1e-9:
            cur = cw[j]
            j += 1
        series.append(cur)

    def col(c: str) -> float:
        return float(f[c][0])

    return {
        "simulator": "ecnsim",
        "flows": [
            {
                "goodput_bps": col("goodput_bps"),
                "retransmissions": int(col("packets_retransmitted")),
                "fast_recoveries": int(col("fast_retransmits")),
                "timeouts": int(col("rto_count")),
                "ecn_reductions": int(col("ecn_reductions")),
                "cwnd_series": series,
            }
        ],
        "bottleneck": {
            "drops": int(qt["drops"][qi]),
            "marks": int(qt["marks"][qi]),
            "arrivals": int(qt["arrivals"][qi]),
        },
    }


def corr(a: list[float], b: list[float]) -> float:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    ma, mb = sum(a) / n, sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
    sa = math.sqrt(sum((x - ma) ** 2 for x in a))
    sb = math.sqrt(sum((y - mb) ** 2 for y in b))
    return sab / (sa * sb) if sa > 0 and sb > 0 else math.nan


def plot(scs: list[Scenario], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(scs), 1, figsize=(9, 2.2 * len(scs)), sharex=True)
    t0, t1 = 10.0, 20.0
    k0, k1 = int(t0 / SAMPLE), int(t1 / SAMPLE)
    ts = [k * SAMPLE for k in range(k0, k1)]
    for ax, sc in zip(axes, scs, strict=True):
        for key, label, style in (
            ("ecnsim", "ecnsim NewReno", "-"),
            ("ns3", "ns-3 NewReno+classic", "--"),
            ("ns3_prr", "ns-3 NewReno+PRR", ":"),
        ):
            s = sc.results[key]["flows"][0]["cwnd_series"][k0:k1]
            ax.plot(ts, [x / 1502 for x in s], style, label=label, lw=1)
        ax.set_title(sc.title, fontsize=9)
        ax.set_ylabel("cwnd [1502 B pkts]", fontsize=8)
    axes[0].legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ns3-python", default=os.environ.get("NS3_PYTHON", "python3"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--plot", type=Path)
    args = ap.parse_args()
    t0 = time.monotonic()
    scs = scenarios()
    jobs = []
    for sc in scs:
        for rec in ("classic", "prr"):
            jobs.append((f"{sc.sid}|{rec}", {**sc.cfg, "tcp": {**sc.cfg["tcp"], "recovery": rec}}))
    import concurrent.futures as cf

    with cf.ThreadPoolExecutor(max_workers=1) as bg:
        fut = bg.submit(run_ns3_all, args.ns3_python, jobs, args.jobs)
        for sc in scs:
            sc.results["ecnsim"] = run_ecnsim(sc.cfg)
        ns3 = fut.result()
    for sc in scs:
        sc.results["ns3"] = ns3[f"{sc.sid}|classic"]
        sc.results["ns3_prr"] = ns3[f"{sc.sid}|prr"]
    table, n_pass, n_fail = report(scs, "newreno")
    print(table)
    print()
    print(f"{n_pass} pass, {n_fail} FAIL.")
    print(
        "\ncwnd correlation over [warm-up, end] (info): "
        "scenario | ecnsim~ns3 classic | ecnsim~ns3 PRR"
    )
    for sc in scs:
        e = cwnd_window(sc.results["ecnsim"])
        print(
            f"{sc.sid} | {corr(e, cwnd_window(sc.results['ns3'])):.3f} | "
            f"{corr(e, cwnd_window(sc.results['ns3_prr'])):.3f}"
        )
    print(f"\nBDP {BDP_PACKETS:.2f} packets; everything took {time.monotonic() - t0:.0f} s.")
    if args.plot:
        plot(scs, args.plot)
    if args.json_out:
        args.json_out.write_text(
            json.dumps([{"id": sc.sid, "config": sc.cfg, "results": sc.results} for sc in scs])
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
