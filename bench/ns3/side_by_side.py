#!/usr/bin/env python3
"""ecnsim beside ns-3 (the PyPI wheel and a release build) on the same scenarios.

Run with ecnsim's Python from the repository root; ns-3 runs in its own
virtual environment (``pip install ns3`` there; never a dependency of
ecnsim), named by ``--ns3-python`` or ``$NS3_PYTHON``, and, with
``--ns3-release DIR``, as the C++ program ``cpp/scenarios.cc`` compiled
against the optimized ns-3 build in ``DIR`` (an ns-3 source tree built with
``./ns3 configure -d optimized``; see README.md)::

    .venv/bin/python bench/ns3/side_by_side.py      # hetero N = 30, 120; dumbbell 100 flows
    .venv/bin/python bench/ns3/side_by_side.py --n 30 120 600 --dumbbell --repeat 2
    .venv/bin/python bench/ns3/side_by_side.py --ns3-release "$NS3_RELEASE"   # all three sides
    .venv/bin/python bench/ns3/side_by_side.py --sides release --ns3-release DIR   # one side only
    .venv/bin/python bench/ns3/side_by_side.py --merge results/a.json results/b.json

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
whole (interpreter or program start-up, imports, build, simulation and
output: ecnsim writes its Parquet tables, ns-3 its JSON), with its CPU time
and peak memory from GNU time, and each side also reports the CPU time of
the simulation alone (``run_cpu_s``: ecnsim's ``Simulation.run``, ns-3's
``Simulator::Run`` calls). Aggregate goodput and packet-hops are printed
beside, so that like is compared with like. Wall-clock figures depend on
the load of the machine: the 1-minute load average is recorded before and
after each run.

Writes ``bench/ns3/results/<date>.json`` and prints two Markdown tables (CPU
time; like for like). ``--merge`` combines the sides of several result files
(say, the wheel measured in one session and the release build in another)
into one file and its tables.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NS3_SCRIPT = ROOT / "validation" / "ns3_red" / "ns3_hetero.py"
NS3_DUMBBELL = ROOT / "validation" / "ns3" / "ns3_dumbbell.py"
NS3_CPP = Path(__file__).resolve().parent / "cpp" / "scenarios.cc"
NS3_DEFAULTS_CPP = Path(__file__).resolve().parent / "cpp" / "ns3_defaults.cc"
NS3_DEFAULTS_PY = Path(__file__).resolve().parent / "ns3_defaults.py"
#: The sides a run can measure: ecnsim, the ns-3 wheel (Python bindings), the release C++ build.
SIDES = ("ecnsim", "wheel", "release")
#: The per-flow sender counters of the ns-3 scripts (hetero; dumbbell) the results sum up.
SENDER_COUNTERS = (
    "loss_entries",
    "recovery_entries",
    "rto_expiries",
    "data_segments_sent",
    "retransmissions",
    "fast_recoveries",
    "timeouts",
    "ecn_reductions",
)
#: Result keys of each side (the wheel's is "ns3", as in the result files before the release build).
SIDE_KEY = {"ecnsim": "ecnsim", "wheel": "ns3", "release": "ns3_release"}
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
import json, os, sys, time
import ecnsim
sc = ecnsim.Scenario.from_dict(json.load(open(sys.argv[1])))
sim = ecnsim.Simulation(sc)
t0 = time.process_time()
res = sim.run()
run_cpu_s = time.process_time() - t0
res.write_parquet(sys.argv[2])
# Read as Python ints (Table.to_pylist): the check of the run imports no numpy either.
rx = res.table("flows").to_pylist("bytes_delivered")
package = os.path.dirname(os.path.abspath(ecnsim.__file__))
# With or without profile-guided optimisation (None: a package from before build_info).
build = getattr(ecnsim._core, "build_info", lambda: None)()
print(json.dumps({"rx_bytes": rx, "run_cpu_s": run_cpu_s, "package": package, "build": build,
                  **sim.perf()}))
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


def _validation_module(subdir: str, name: str) -> Any:
    """Import ``validation/<subdir>/<name>.py``, whose ecnsim scenarios the side by side runs.

    Both validation directories have a ``compare.py`` (and ``compare_tcp_ecn`` imports its
    own), so the one cached from the other directory is dropped first.
    """
    sys.modules.pop("compare", None)
    path = str(ROOT / "validation" / subdir)
    sys.path.insert(0, path)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(path)


def _ecnsim_side(spec: Path, out: Path, span: float) -> dict[str, Any]:
    """ecnsim as a whole process: read the scenario, run it, write Parquet."""
    ours = _run_measured([sys.executable, "-c", ECNSIM_RUN, str(spec), str(out)])
    res = json.loads(ours.pop("stdout").strip().splitlines()[-1])
    # ecnsim's bytes_delivered counts from the warm-up (the scenario sets it), as ns-3's rx does.
    ours["goodput_mbps"] = sum(res["rx_bytes"]) * 8 / span / 1e6
    for key in ("run_cpu_s", "packet_hops", "events"):
        ours[key] = res[key]
    # The package the interpreter imported (another worktree's, an installed copy) and the
    # commit of the checkout it lives in: not necessarily this script's.
    ours["package"] = res["package"]
    ours["commit"] = _ecnsim_commit(Path(res["package"]))
    ours["build"] = res["build"]
    return ours


def _wheel_side(script: Path, cfg: dict[str, Any], ns3_python: str, span: float) -> dict[str, Any]:
    """The ns-3 wheel as a whole process: one of the validation scripts, through its bindings."""
    theirs = _run_measured([ns3_python, str(script), json.dumps(cfg)])
    res = json.loads(theirs.pop("stdout").strip().splitlines()[-1])
    theirs["goodput_mbps"] = sum(f["rx_bytes"] for f in res["flows"]) * 8 / span / 1e6
    for key in ("run_cpu_s", "packet_hops", "events"):
        theirs[key] = res.get(key)
    theirs["bottleneck"] = res["bottleneck"]
    # The senders' probe counters over [warmup, end], summed over the flows (as scenarios.cc).
    theirs["senders"] = {
        key: sum(f[key] for f in res["flows"]) for key in SENDER_COUNTERS if key in res["flows"][0]
    }
    return theirs


def _release_side(exe: Path, args: list[str], span: float) -> dict[str, Any]:
    """Release ns-3 as a whole process: ``cpp/scenarios.cc`` built against the optimized build."""
    rel = _run_measured([str(exe), *args])
    res = json.loads(rel.pop("stdout").strip().splitlines()[-1])
    rel["goodput_mbps"] = sum(res["rx_bytes"]) * 8 / span / 1e6
    for key in ("run_cpu_s", "packet_hops", "events", "bottleneck", "senders", "simulator"):
        rel[key] = res[key]
    return rel


def run_pair(
    n: int, sides: list[str], ns3_python: str, exe: Path | None, workdir: Path
) -> dict[str, Any]:
    """The hetero star of ``n`` sources (RED, 100 s) on each of ``sides``."""
    span = DURATION - WARMUP
    record: dict[str, Any] = {"scenario": f"hetero N = {n}, RED, 100 s", "n": n}
    if "ecnsim" in sides:
        compare = _validation_module("ns3_red", "compare")
        spec = workdir / f"hetero-{n}.json"
        spec.write_text(json.dumps(compare.ecnsim_scenario(n, "red", 1).to_dict()))
        record["ecnsim"] = _ecnsim_side(spec, workdir / f"out-{n}", span)
    if "wheel" in sides:
        cfg = {"n": n, "mode": "red", "seed": 1, "duration": DURATION, "warmup": WARMUP}
        record["ns3"] = _wheel_side(NS3_SCRIPT, cfg, ns3_python, span)
    if "release" in sides and exe is not None:
        args = ["--scenario=hetero", f"--n={n}", "--seed=1", f"--duration={DURATION:g}"]
        record["ns3_release"] = _release_side(exe, [*args, f"--warmup={WARMUP:g}"], span)
    return record


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


def run_dumbbell_pair(
    n: int, sides: list[str], ns3_python: str, exe: Path | None, workdir: Path
) -> dict[str, Any]:
    """The RED+ECN dumbbell of ``n`` flows (60 s) on each of ``sides``."""
    cfg = dumbbell_cfg(n)
    span = DUMBBELL_DURATION - DUMBBELL_WARMUP
    record: dict[str, Any] = {
        "scenario": f"dumbbell {n} flows, RED+ECN, {DUMBBELL_DURATION:.0f} s",
        "n": n,
    }
    if "ecnsim" in sides:
        compare_tcp_ecn = _validation_module("ns3", "compare_tcp_ecn")
        spec = workdir / f"dumbbell-{n}.json"
        sc = compare_tcp_ecn.ecnsim_scenario(cfg, n_flows=n, sample_interval=None)
        spec.write_text(json.dumps(sc.to_dict()))
        record["ecnsim"] = _ecnsim_side(spec, workdir / f"db-{n}", span)
    if "wheel" in sides:
        record["ns3"] = _wheel_side(NS3_DUMBBELL, cfg, ns3_python, span)
    if "release" in sides and exe is not None:
        # scenarios.cc holds dumbbell_cfg()'s settings; only the flow count and times vary.
        args = ["--scenario=dumbbell", f"--n={n}", f"--duration={DUMBBELL_DURATION:g}"]
        record["ns3_release"] = _release_side(exe, [*args, f"--warmup={DUMBBELL_WARMUP:g}"], span)
    return record


def build_release(tree: Path) -> tuple[Path, dict[str, Any]]:
    """Compile ``cpp/scenarios.cc`` against the optimized ns-3 build in ``tree``.

    ``tree`` is an ns-3 source tree configured with ``-d optimized`` and built: its
    ``build/lib`` holds ``libns<version>-<module>-optimized.so``. The program goes to
    ``tree/build/ecnsim-bench/`` (outside this repository) and is rebuilt when the source
    is newer. Compiled with the flags ns-3's optimized profile uses for its own programs.
    """
    tree = tree.resolve()
    version_file = tree / "VERSION"
    if not version_file.is_file():
        raise SystemExit(f"--ns3-release {tree}: no VERSION file; expected an ns-3 source tree")
    version = version_file.read_text().strip()
    lib_dir = tree / "build" / "lib"
    libs = sorted(lib_dir.glob(f"libns{version}-*-optimized.so"))
    if not libs:
        raise SystemExit(
            f"--ns3-release {tree}: no libns{version}-*-optimized.so in {lib_dir}; configure "
            "with ./ns3 configure -d optimized and build first (bench/ns3/README.md)"
        )
    out_dir = tree / "build" / "ecnsim-bench"
    compiles = {}
    for source in (NS3_CPP, NS3_DEFAULTS_CPP):
        exe = out_dir / source.stem
        cmd = [
            shutil.which("g++") or "g++",
            "-std=gnu++17",
            "-O3",
            "-DNDEBUG",
            "-march=native",
            "-mtune=native",
            "-DNS3_BUILD_PROFILE_OPTIMIZED",
            f'-DECNSIM_NS3_VERSION="{version}"',
            f"-I{tree / 'build' / 'include'}",
            str(source),
            "-o",
            str(exe),
            f"-L{lib_dir}",
            f"-Wl,-rpath,{lib_dir}",
            # Every module's library is loaded, so every TypeId is registered (ns3_defaults).
            "-Wl,--no-as-needed",
            *[f"-l{lib.name[3:-3]}" for lib in libs],
        ]
        if not exe.exists() or exe.stat().st_mtime < source.stat().st_mtime:
            out_dir.mkdir(parents=True, exist_ok=True)
            print(f"compiling {source.name} against ns-3 {version} (optimized) ...", flush=True)
            subprocess.run(cmd, check=True)
        compiles[source.stem] = cmd
    exe = out_dir / NS3_CPP.stem
    info = {"tree": str(tree), "version": version, "profile": "optimized", "compile": compiles}
    return exe, info


def defaults_diff(release_exe_dir: Path, ns3_python: str) -> dict[str, Any]:
    """Every attribute default and global value that differs between the wheel and release ns-3.

    Both sides print their ``TypeId`` attribute defaults before any ``Config::SetDefault``
    (``ns3_defaults.py`` through the wheel's bindings, ``cpp/ns3_defaults.cc`` linked against
    the release build). Only the types the release build registers (its modules) are compared.
    """

    def listing(cmd: list[str]) -> dict[str, str]:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        pairs = (line.partition(" = ") for line in out.splitlines())
        return {key: value for key, _, value in pairs}

    release = listing([str(release_exe_dir / NS3_DEFAULTS_CPP.stem)])
    wheel = listing([ns3_python, str(NS3_DEFAULTS_PY)])
    types = {key.rsplit("::", 1)[0] for key in release}
    wheel = {k: v for k, v in wheel.items() if k.rsplit("::", 1)[0] in types}
    return {
        "compared": len(release.keys() & wheel.keys()),
        "differ": {
            k: {"release": release[k], "wheel": wheel[k]}
            for k in sorted(release.keys() & wheel.keys())
            if release[k] != wheel[k]
        },
        "release_only": {k: release[k] for k in sorted(release.keys() - wheel.keys())},
        "wheel_only": {k: wheel[k] for k in sorted(wheel.keys() - release.keys())},
    }


def _ecnsim_commit(package: Path) -> str:
    """The commit measured: ``HEAD`` of the checkout the imported ``package`` lives in (an
    editable install), ``+dirty`` if ecnsim's code there has local changes; for a package
    installed outside any checkout, ``installed`` (its path is recorded beside).

    Not the last commit that changed the code: with merged branches that is a matter of
    commit dates, and named a branch's tip without the other branches merged beside it.
    """
    code = ["crates", "python", "Cargo.toml", "Cargo.lock", "pyproject.toml"]
    try:
        top = subprocess.run(
            ["git", "-C", str(package), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
        root = top.stdout.strip()
        # An ecnsim checkout's own package (an editable install), not a copy that happens to
        # sit inside some other repository (pyenv's tree is one).
        if top.returncode != 0 or Path(root, "python", "ecnsim").resolve() != package.resolve():
            return "installed"
        rev = subprocess.run(
            ["git", "-C", root, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--", *code],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("+dirty" if dirty else "")


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


def _cpu(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    run = side.get("run_cpu_s")
    return f"{side['cpu_s']:.2f} s / " + (f"{run:.2f} s" if run is not None else "-")


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.0f}x" if a and b else "-"


def _three(r: dict[str, Any], key: str, fmt: str) -> str:
    vals = [r.get(SIDE_KEY[s], {}).get(key) for s in SIDES]
    return " / ".join("-" if v is None else format(v, fmt) for v in vals)


def table(records: list[dict[str, Any]]) -> str:
    """Two Markdown tables: CPU time and speed-ups; like for like (goodput, hops, memory)."""
    lines = [
        "| scenario | ecnsim CPU: whole / simulation | ns-3 wheel CPU: whole / simulation "
        "| release ns-3 CPU: whole / simulation | wheel / ecnsim, whole "
        "| release / ecnsim, simulation | wheel / ecnsim, simulation | release / ecnsim, whole "
        "| load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        e, w, rel = (r.get(SIDE_KEY[s]) for s in SIDES)
        present = [x for x in (e, w, rel) if x]
        loads = [x["load_before"] for x in present] + [x["load_after"] for x in present]
        lines.append(
            f"| {r['scenario']} | {_cpu(e)} | {_cpu(w)} | {_cpu(rel)} "
            f"| {_ratio(w and w['cpu_s'], e and e['cpu_s'])} "
            f"| {_ratio(rel and rel.get('run_cpu_s'), e and e.get('run_cpu_s'))} "
            f"| {_ratio(w and w.get('run_cpu_s'), e and e.get('run_cpu_s'))} "
            f"| {_ratio(rel and rel['cpu_s'], e and e['cpu_s'])} "
            f"| {min(loads):.1f}-{max(loads):.1f} |"
        )
    lines += [
        "",
        "| scenario | goodput ecnsim / wheel / release (Mb/s) "
        "| packet-hops ecnsim / wheel / release | peak memory ecnsim / wheel / release (MiB) |",
        "|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['scenario']} | {_three(r, 'goodput_mbps', '.2f')} "
            f"| {_three(r, 'packet_hops', ',')} | {_three(r, 'peak_rss_mib', '.0f')} |"
        )
    summary = repeat_summary(records)
    return "\n".join(lines + (["", summary] if summary else []))


def repeat_summary(records: list[dict[str, Any]]) -> str:
    """With a scenario run more than once (``--repeat``): each side's simulation CPU, best and
    median of the runs, and the speed-ups of the medians. A single run on a shared machine can
    be far off (a run 40 % slower than its repeats has been seen), so a figure worth quoting is
    the median; "" when every scenario ran once."""
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_scenario.setdefault(r["scenario"], []).append(r)
    if all(len(rs) == 1 for rs in by_scenario.values()):
        return ""

    def runs(rs: list[dict[str, Any]], side: str) -> list[float]:
        return [x["run_cpu_s"] for r in rs if (x := r.get(SIDE_KEY[side])) and x.get("run_cpu_s")]

    def best_median(values: list[float]) -> str:
        return f"{min(values):.4g} / {statistics.median(values):.4g} s" if values else "-"

    lines = [
        "| scenario | runs | ecnsim simulation: best / median | ns-3 wheel | release ns-3 "
        "| ecnsim ns per hop, median | wheel / ecnsim, medians | release / ecnsim, medians |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for scenario, rs in by_scenario.items():
        ours, wheel, release = (runs(rs, side) for side in SIDES)
        hops = next((x["packet_hops"] for r in rs if (x := r.get(SIDE_KEY["ecnsim"]))), None)
        med = {
            name: statistics.median(v) if v else None
            for name, v in (("ecnsim", ours), ("wheel", wheel), ("release", release))
        }
        per_hop = f"{med['ecnsim'] / hops * 1e9:.1f}" if med["ecnsim"] and hops else "-"
        lines.append(
            f"| {scenario} | {len(rs)} | {best_median(ours)} | {best_median(wheel)} "
            f"| {best_median(release)} | {per_hop} | {_ratio(med['wheel'], med['ecnsim'])} "
            f"| {_ratio(med['release'], med['ecnsim'])} |"
        )
    return "\n".join(lines)


def merge(paths: list[Path]) -> dict[str, Any]:
    """Combine the sides of several result files: the k-th run of a scenario in each file."""
    docs = [json.loads(p.read_text()) for p in paths]
    runs: list[dict[str, Any]] = []
    for doc in docs:
        seen: dict[str, int] = {}
        for r in doc["runs"]:
            k = seen.get(r["scenario"], 0)
            seen[r["scenario"]] = k + 1
            match = [x for x in runs if x["scenario"] == r["scenario"]]
            if k < len(match):
                for side in SIDE_KEY.values():
                    if side in r and side not in match[k]:
                        match[k][side] = r[side]
            else:
                runs.append(dict(r))
    return {
        "date": max(d["date"] for d in docs),
        "merged_from": [
            {"file": p.name, "date": d["date"]} for p, d in zip(paths, docs, strict=True)
        ],
        "machine": docs[-1]["machine"],
        **(
            {"ns3_release": d["ns3_release"]}
            if (d := next((x for x in docs if "ns3_release" in x), None))
            else {}
        ),
        "runs": runs,
    }


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
    ap.add_argument(
        "--ns3-release",
        type=Path,
        metavar="DIR",
        help="an ns-3 source tree built with ./ns3 configure -d optimized: also run the scenarios "
        "as cpp/scenarios.cc compiled against it",
    )
    ap.add_argument(
        "--sides",
        nargs="+",
        choices=SIDES,
        help="what to run (default: ecnsim and the wheel, and release with --ns3-release)",
    )
    ap.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="run nothing: combine the sides of these result files into one",
    )
    ap.add_argument(
        "--defaults-diff",
        action="store_true",
        help="with the wheel and --ns3-release: also record every attribute default that "
        "differs between the two ns-3 versions",
    )
    ap.add_argument(
        "--table", type=Path, metavar="JSON", help="run nothing: print the tables of a result file"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "ns3" / "results")
    args = ap.parse_args()
    if args.table:
        doc = json.loads(args.table.read_text())
        print(f"{doc['date']}, {doc['machine']['cpu']} ({doc['machine']['cpus']} CPUs)\n")
        print(table(doc["runs"]))
        return 0
    if args.merge:
        doc = merge(args.merge)
    else:
        sides = args.sides or ["ecnsim", "wheel", *(["release"] if args.ns3_release else [])]
        if "release" in sides and args.ns3_release is None:
            ap.error("--sides release needs --ns3-release DIR")
        if args.defaults_diff and "release" not in sides:
            ap.error("--defaults-diff needs the release side (--ns3-release DIR)")
        exe, release_info = build_release(args.ns3_release) if "release" in sides else (None, None)
        records = []
        with tempfile.TemporaryDirectory() as tmp:
            jobs = [(run_pair, n) for n in args.n] + [(run_dumbbell_pair, n) for n in args.dumbbell]
            for run, n in jobs:
                for _ in range(args.repeat):
                    r = run(n, sides, args.ns3_python, exe, Path(tmp))
                    records.append(r)
                    print(
                        r["scenario"],
                        json.dumps({k: v for k, v in r.items() if k in SIDE_KEY.values()}),
                        flush=True,
                    )
        now = dt.datetime.now(dt.timezone.utc)
        doc = {"date": now.isoformat(timespec="seconds"), "machine": machine(), "sides": sides}
        if release_info:
            doc["ns3_release"] = release_info
        if args.defaults_diff and exe is not None:
            diff = defaults_diff(exe.parent, args.ns3_python)
            doc["ns3_defaults_diff"] = diff
            print(f"\nns-3 defaults: {diff['compared']} attributes compared; differing:")
            for key, v in diff["differ"].items():
                print(f"  {key}: release {v['release']!r}, wheel {v['wheel']!r}")
            for side in ("release_only", "wheel_only"):
                for key, v in diff[side].items():
                    print(f"  {key} = {v!r} ({side.replace('_', ' ')})")
        doc["runs"] = records
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.fromisoformat(doc["date"])
    path = args.out / f"{stamp:%Y-%m-%dT%H%M}{'-merged' if args.merge else ''}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\n{doc['date']}, {doc['machine']['cpu']} ({doc['machine']['cpus']} CPUs)\n")
    print(table(doc["runs"]))
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
