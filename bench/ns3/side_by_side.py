#!/usr/bin/env python3
"""ecnsim beside the ns-3 PyPI wheel on the same scenarios, whole process, one after the other.

Run with ecnsim's Python from the repository root; ns-3 runs in its own
virtual environment (``pip install ns3`` there; never a dependency of
ecnsim), named by ``--ns3-python`` or ``$NS3_PYTHON``::

    .venv/bin/python bench/ns3/side_by_side.py      # hetero N = 30, 120; dumbbell 100 flows
    .venv/bin/python bench/ns3/side_by_side.py --n 30 120 600 --dumbbell --repeat 2

Scenarios:

* the ``hetero`` star of STUDIES.md §3 in RED mode, 100 s simulated (first
  20 s discarded for goodput), built for ecnsim by
  ``validation/ns3_red/compare.py`` (``ecnsim_scenario``) and for ns-3 by
  ``validation/ns3_red/ns3_hetero.py``, whose settings are matched item by
  item (``validation/ns3_red/README.md``);
* a dumbbell of ``--dumbbell`` flows (100 by default) with RED and ECN on the
  bottleneck, 60 s simulated (first 10 s discarded): the ``dumbbell-100``
  benchmark's topology (100 Mb/s, 40 ms bottleneck; 1 Gb/s, 5 ms access
  links; starts spread over the first second) with NewReno and ECN at both
  ends, written for ns-3 as ``validation/ns3/ns3_dumbbell.py`` reads it and
  for ecnsim with the RED settings ``validation/ns3/compare_tcp_ecn.py``
  matches to ns-3's ``RedQueueDisc`` (``validation/ns3/README.md``).

Each run is a fresh process, timed as a
whole (interpreter start-up, imports, build, simulation and output: ecnsim
writes its Parquet tables, ns-3 its JSON), with its CPU time and peak
memory from ``wait4``. Aggregate goodput is printed beside, so that like is
compared with like. Wall-clock figures depend on the load of the machine:
the 1-minute load average is recorded before and after each run.

Writes ``bench/ns3/results/<date>.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NS3_SCRIPT = ROOT / "validation" / "ns3_red" / "ns3_hetero.py"
NS3_DUMBBELL = ROOT / "validation" / "ns3" / "ns3_dumbbell.py"
DURATION = 100.0
WARMUP = 20.0
DUMBBELL_DURATION = 60.0
DUMBBELL_WARMUP = 10.0
#: The bottleneck's RED of the dumbbell (ns3_dumbbell.py's ``queue`` keys): a buffer of one
#: bandwidth-delay product (100 Mb/s * 100 ms / 1500 B = 833 packets), thresholds at a tenth and
#: three tenths of it, ns-2's w_q and max_p, ECN marking between the thresholds.
DUMBBELL_RED: dict[str, Any] = {
    "type": "red",
    "limit": 833,
    "min_th": 83.0,
    "max_th": 250.0,
    "w_q": 0.002,
    "max_p": 0.1,
    "ecn": True,
    "gentle": False,
    "wait": True,
    "mean_pktsize": 1500,
}

#: The ecnsim side: a whole process that reads the scenario, runs it and writes Parquet.
ECNSIM_RUN = """
import json, sys
import ecnsim
sc = ecnsim.Scenario.from_dict(json.load(open(sys.argv[1])))
sim = ecnsim.Simulation(sc)
res = sim.run()
res.write_parquet(sys.argv[2])
flows = res.table("flows")
print(json.dumps({"rx_bytes": [int(x) for x in flows["bytes_delivered"]], **sim.perf()}))
"""


def _run_measured(cmd: list[str]) -> dict[str, Any]:
    """Run ``cmd`` under GNU time: wall time, CPU time (user + system), peak RSS, stdout."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as f:
        load_before = os.getloadavg()[0]
        proc = subprocess.run(
            ["/usr/bin/time", "-o", f.name, "-f", "%e %U %S %M", *cmd],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[:3]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        wall, user, system, rss_kib = f.read().split()[-4:]
    return {
        "wall_s": float(wall),
        "cpu_s": float(user) + float(system),
        "peak_rss_mib": int(rss_kib) / 1024,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "stdout": proc.stdout,
    }


def run_pair(n: int, ns3_python: str, workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "validation" / "ns3_red"))
    from compare import ecnsim_scenario  # type: ignore[import-not-found]

    spec = workdir / f"hetero-{n}.json"
    spec.write_text(json.dumps(ecnsim_scenario(n, "red", 1).to_dict()))
    ours = _run_measured([sys.executable, "-c", ECNSIM_RUN, str(spec), str(workdir / f"out-{n}")])
    ours_out = json.loads(ours.pop("stdout").strip().splitlines()[-1])
    cfg = {"n": n, "mode": "red", "seed": 1, "duration": DURATION, "warmup": WARMUP}
    theirs = _run_measured([ns3_python, str(NS3_SCRIPT), json.dumps(cfg)])
    ns3_out = json.loads(theirs.pop("stdout").strip().splitlines()[-1])
    span = DURATION - WARMUP
    # ecnsim's bytes_delivered counts from the warm-up (the scenario sets it), as ns-3's rx does.
    ours["goodput_mbps"] = sum(ours_out["rx_bytes"]) * 8 / span / 1e6
    ours["packet_hops"] = ours_out["packet_hops"]
    ours["events"] = ours_out["events"]
    theirs["goodput_mbps"] = sum(f["rx_bytes"] for f in ns3_out["flows"]) * 8 / span / 1e6
    return {"scenario": f"hetero N = {n}, RED, 100 s", "n": n, "ecnsim": ours, "ns3": theirs}


def dumbbell_cfg(n: int) -> dict[str, Any]:
    """The RED+ECN dumbbell of ``n`` flows as ``validation/ns3/ns3_dumbbell.py`` reads it."""
    return {
        "n_flows": n,
        "bottleneck_rate": 100e6,
        "bottleneck_delay": 0.040,
        "access_rate": 1e9,
        "access_delay": 0.005,
        "queue_packets": DUMBBELL_RED["limit"],
        "access_queue_packets": 10000,
        "duration": DUMBBELL_DURATION,
        "warmup": DUMBBELL_WARMUP,
        "max_bytes": None,
        # Starts spread over the first second, 1 s / n apart (as the dumbbell benchmarks).
        "start": [i / n for i in range(n)],
        "queue": dict(DUMBBELL_RED),
        "tcp": {
            "segment_size": 1460,
            "initial_cwnd": 3,
            "initial_rto": 1.0,
            "min_rto": 1.0,
            "clock_granularity": 0.001,
            "rcv_window": 2**30,
            # 4 MiB, not ns3_dumbbell.py's 1 GiB: ns-3 holds what BulkSend writes ahead in
            # 512-byte items (a 1 GiB buffer per flow ran the 100 flows out of 24 GB of memory).
            # No window here exceeds the buffers and pipe all flows share (1,666 packets, 2.4 MB).
            "snd_buf": 2**22,
            "ecn": True,
        },
    }


def run_dumbbell_pair(n: int, ns3_python: str, workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "validation" / "ns3"))
    from compare_tcp_ecn import ecnsim_scenario as dumbbell_scenario  # type: ignore[import-not-found]

    cfg = dumbbell_cfg(n)
    spec = workdir / f"dumbbell-{n}.json"
    sc = dumbbell_scenario(cfg, n_flows=n, sample_interval=None)
    spec.write_text(json.dumps(sc.to_dict()))
    ours = _run_measured([sys.executable, "-c", ECNSIM_RUN, str(spec), str(workdir / f"db-{n}")])
    ours_out = json.loads(ours.pop("stdout").strip().splitlines()[-1])
    theirs = _run_measured([ns3_python, str(NS3_DUMBBELL), json.dumps(cfg)])
    ns3_out = json.loads(theirs.pop("stdout").strip().splitlines()[-1])
    span = DUMBBELL_DURATION - DUMBBELL_WARMUP
    ours["goodput_mbps"] = sum(ours_out["rx_bytes"]) * 8 / span / 1e6
    ours["packet_hops"] = ours_out["packet_hops"]
    ours["events"] = ours_out["events"]
    theirs["goodput_mbps"] = sum(f["rx_bytes"] for f in ns3_out["flows"]) * 8 / span / 1e6
    return {
        "scenario": f"dumbbell {n} flows, RED+ECN, {DUMBBELL_DURATION:.0f} s",
        "n": n,
        "ecnsim": ours,
        "ns3": theirs,
    }


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def table(records: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | ecnsim whole process (wall / CPU) | ns-3 wheel (wall / CPU) | speed-up (CPU) "
        "| goodput ecnsim / ns-3 (Mb/s) | peak memory ecnsim / ns-3 (MiB) | load (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        e, t = r["ecnsim"], r["ns3"]

        lines.append(
            f"| {r['scenario']} | {e['wall_s']:.2f} s / {e['cpu_s']:.2f} s "
            f"| {t['wall_s']:.1f} s / {t['cpu_s']:.1f} s | {t['cpu_s'] / e['cpu_s']:.0f}x "
            f"| {e['goodput_mbps']:.2f} / {t['goodput_mbps']:.2f} "
            f"| {e['peak_rss_mib']:.0f} / {t['peak_rss_mib']:.0f} "
            f"| {e['load_before']:.1f}-{t['load_after']:.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--n", type=int, nargs="*", default=[30, 120], help="numbers of hetero sources (none: skip)"
    )
    ap.add_argument(
        "--dumbbell",
        type=int,
        nargs="*",
        default=[100],
        help="flow counts of the RED+ECN dumbbell (none: skip it)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs of each pair")
    ap.add_argument(
        "--ns3-python",
        default=os.environ.get("NS3_PYTHON", "/work/ns3venv/bin/python"),
        help="the Python of the ns-3 virtual environment",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "ns3" / "results")
    args = ap.parse_args()
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            for _ in range(args.repeat):
                r = run_pair(n, args.ns3_python, Path(tmp))
                records.append(r)
                print(table([r]).splitlines()[-1], flush=True)
        for n in args.dumbbell:
            for _ in range(args.repeat):
                r = run_dumbbell_pair(n, args.ns3_python, Path(tmp))
                records.append(r)
                print(table([r]).splitlines()[-1], flush=True)
    now = dt.datetime.now(dt.timezone.utc)
    doc = {"date": now.isoformat(timespec="seconds"), "machine": machine(), "runs": records}
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{now:%Y-%m-%dT%H%M}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\n{doc['date']}, {doc['machine']['cpu']} ({doc['machine']['cpus']} CPUs)\n")
    print(table(records))
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
