"""The ``ecnsim`` command.

::

    ecnsim run SCENARIO.toml [--out DIR] [--seed N] [--quiet]
    ecnsim bench [NAME ...] [--json] [--list]
    ecnsim report RESULTS_DIR [-o report.html] [--title TEXT] [--lockout SECONDS]
    ecnsim sweep SWEEP.toml [--jobs N] [--dask ADDRESS|local] [--out DIR] [--dry-run]
    ecnsim runs [--out DIR] [--sweep NAME] [--where SQL] [--sql QUERY] [--format F]
    ecnsim --version

Exit codes: 0 success, 1 internal failure, 2 bad scenario or usage,
130 interrupted (Ctrl-C; partial results are written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ecnsim import __version__
from ecnsim.exceptions import EcnsimError
from ecnsim.results import Results, Table
from ecnsim.simulation import Simulation
from ecnsim.spec import Scenario, droptail
from ecnsim.topology import dumbbell

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# ---------------------------------------------------------------------------
# Progress bar
# ---------------------------------------------------------------------------


class ProgressBar:
    """A one-line progress bar on a terminal, shown once a run takes over ``delay`` s.

    On a stream that is not a terminal it prints a plain line every
    ``log_every`` seconds instead (nothing for short runs).
    """

    WIDTH = 30

    def __init__(self, stream: TextIO, *, delay: float = 1.0, log_every: float = 30.0) -> None:
        self.stream = stream
        self.is_tty = stream.isatty()
        self.delay = delay
        self.log_every = log_every
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.shown = False

    def __call__(self, now_ns: int, end_ns: int) -> None:
        t = time.monotonic()
        elapsed = t - self.started
        if elapsed < self.delay:
            return
        fraction = now_ns / end_ns if end_ns else 1.0
        if self.is_tty:
            if t - self.last_draw < 0.1 and fraction < 1.0:
                return
            filled = int(self.WIDTH * fraction)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            eta = elapsed * (1 - fraction) / fraction if fraction > 0 else math.inf
            eta_text = f"{eta:5.0f}s" if math.isfinite(eta) else "    ?"
            self.stream.write(
                f"\r[{bar}] {100 * fraction:5.1f}%  sim {now_ns / 1e9:8.2f}/{end_ns / 1e9:g} s"
                f"  wall {elapsed:6.1f} s  eta {eta_text}"
            )
            self.stream.flush()
            self.shown = True
        elif t - self.last_draw >= self.log_every:
            self.stream.write(
                f"progress: {100 * fraction:5.1f}%  sim {now_ns / 1e9:.2f}/{end_ns / 1e9:g} s"
                f"  wall {elapsed:.1f} s\n"
            )
            self.stream.flush()
        else:
            return
        self.last_draw = t

    def close(self) -> None:
        """Erase the bar, if one was drawn."""
        if self.shown:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
            self.shown = False


# ---------------------------------------------------------------------------
# Summary tables
# ---------------------------------------------------------------------------

#: Columns the summary prefers, in order, when the table has them.
PREFERRED_COLUMNS: dict[str, list[str]] = {
    "flows": [
        "flow",
        "name",
        "src",
        "dst",
        "bytes_delivered",
        "goodput_bps",
        "throughput_bps",
        "packets_sent",
        "packets_retransmitted",
        "fast_retransmits",
        "rto_count",
        "completion_time_s",
    ],
    "queues": [
        "queue",
        "link",
        "from",
        "to",
        "arrivals",
        "departures",
        "drops",
        "marks",
        "avg_packets",
        "max_packets",
    ],
}

#: Tables the summary prints, in order.
SUMMARY_TABLES = ("flows", "queues")

MAX_SUMMARY_ROWS = 40


def _format_value(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "-"
        return f"{value:.4g}"
    return str(value)


def format_table(table: Table, preferred: Sequence[str] = ()) -> str:
    """``table`` as aligned plain text; only the ``preferred`` columns if it has any of them.

    Columns in bit/s (``*_bps``) are shown in Mbit/s.
    """
    names = [c for c in preferred if c in table] or table.column_names
    headers: list[str] = []
    columns: list[list[str]] = []
    numeric: list[bool] = []
    for name in names:
        values = table[name]
        if isinstance(values, np.ndarray):
            if name.endswith("_bps"):
                headers.append(name[: -len("_bps")] + "_Mbps")
                values = values / 1e6
            else:
                headers.append(name)
            columns.append([_format_value(v) for v in values.tolist()])
            numeric.append(True)
        else:
            headers.append(name)
            columns.append([str(v) for v in values])
            numeric.append(False)
    rows = list(zip(*columns, strict=True)) if columns else []
    if len(rows) > MAX_SUMMARY_ROWS:
        half = MAX_SUMMARY_ROWS // 2
        skipped = len(rows) - 2 * half
        rows = [*rows[:half], tuple("..." for _ in names), *rows[-half:]]
        footer = f"({skipped} rows not shown; --out writes them all)"
    else:
        footer = ""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    if footer:
        out.append(footer)
    return "\n".join(out)


def print_summary(results: Results, stream: TextIO) -> None:
    """Print the flow and queue tables (whatever columns they have)."""
    for name in SUMMARY_TABLES:
        if name not in results.tables:
            continue
        table = results.tables[name]
        stream.write(f"\n{name} ({len(table)} rows)\n")
        stream.write(format_table(table, PREFERRED_COLUMNS.get(name, ())) + "\n")


# ---------------------------------------------------------------------------
# ecnsim run
# ---------------------------------------------------------------------------


def _str_list(text: str | None) -> list[str] | None:
    return None if text is None else [x.strip() for x in text.split(",") if x.strip()]


def _int_list(text: str | None) -> list[int] | None:
    items = _str_list(text)
    if items is None:
        return None
    try:
        return [int(x) for x in items]
    except ValueError:
        msg = f"error: --trace-links: expected link indices like 0,2, got {text!r}"
        raise SystemExit(msg) from None


def cmd_run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        print(f"error: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    sim = Simulation.from_toml_str(text, seed=args.seed)
    if args.trace_ns2 or args.trace_pcap:
        sim.trace(
            ns2=args.trace_ns2,
            pcap=args.trace_pcap,
            links=_int_list(args.trace_links),
            nodes=_str_list(args.trace_nodes),
            flows=_str_list(args.trace_flows),
        )
    progress = None if args.quiet else ProgressBar(sys.stderr)
    started = time.perf_counter()
    try:
        sim.run(progress=progress)
    except KeyboardInterrupt:
        if progress is not None:
            progress.close()
        results = sim.results
        print(
            f"interrupted at {sim.now:g} s of {sim.duration:g} s simulated "
            f"(after {time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
        if args.out is not None:
            results.write_parquet(args.out)
            print(f"partial results (finished=false) written to {args.out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    wall = time.perf_counter() - started
    if progress is not None:
        progress.close()
    results = sim.results
    perf = sim.perf()
    print(
        f"{path.name}: {sim.duration:g} s simulated in {wall:.2f} s wall, seed "
        f"{results.meta.get('seed', '?')}, {perf['events']} events, "
        f"{perf['packet_hops']} packet-hops, digest {results.digest:016x}"
    )
    print_summary(results, sys.stdout)
    if args.out is not None:
        results.write_parquet(args.out)
        print(f"\nresults written to {args.out}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# ecnsim bench
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    """A named benchmark scenario."""

    name: str
    description: str
    n_flows: int
    build: Callable[[], Scenario]


def _dumbbell_bench(n_flows: int, duration_s: int) -> Scenario:
    # 100 Mb/s bottleneck, 100 ms RTT: 2 * (5 ms + 40 ms + 5 ms).
    # DropTail sized to the bandwidth-delay product: 100 Mb/s * 100 ms / 1500 B = 833 packets.
    return dumbbell(
        n_flows,
        bottleneck_rate="100Mbps",
        bottleneck_delay="40ms",
        access_rate="1Gbps",
        access_delay="5ms",
        queue=droptail(limit_packets=833),
        duration=f"{duration_s}s",
        # Starts spread over the first second, 1 s / n_flows apart.
        start=[f"{i * 1_000_000 // n_flows}us" for i in range(n_flows)],
        tcp={"cc": "reno"},
        name=f"dumbbell-{n_flows}",
        seed=1,
    )


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in [
        Benchmark(
            "dumbbell-100",
            "100 Reno bulk flows, 100 Mb/s bottleneck, 100 ms RTT, BDP DropTail, 60 s",
            100,
            lambda: _dumbbell_bench(100, 60),
        ),
        Benchmark(
            "dumbbell-10",
            "10 Reno bulk flows, 100 Mb/s bottleneck, 100 ms RTT, BDP DropTail, 10 s (smoke test)",
            10,
            lambda: _dumbbell_bench(10, 10),
        ),
    ]
}


def _maxrss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return int(rss) if sys.platform == "darwin" else int(rss) * 1024


def run_benchmark(bench: Benchmark) -> dict[str, Any]:
    """Build and run ``bench`` in this process; wall time counts the run only."""
    rss_before = _maxrss_bytes()
    t0 = time.perf_counter()
    sim = Simulation(bench.build())
    build_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    sim.run()
    wall_s = time.perf_counter() - t1
    perf = sim.perf()
    peak = _maxrss_bytes()
    return {
        "name": bench.name,
        "description": bench.description,
        "flows": bench.n_flows,
        "simulated_s": sim.duration,
        "wall_s": wall_s,
        "build_s": build_s,
        "events": perf["events"],
        "packet_hops": perf["packet_hops"],
        "packet_hops_per_s": perf["packet_hops"] / wall_s if wall_s > 0 else math.inf,
        "events_per_s": perf["events"] / wall_s if wall_s > 0 else math.inf,
        "peak_rss_bytes": peak,
        "bytes_per_flow": max(peak - rss_before, 0) / bench.n_flows,
        "ecnsim_version": __version__,
    }


def _run_benchmark_in_child(name: str) -> dict[str, Any]:
    """Run one benchmark in a fresh interpreter, so peak memory is its own."""
    proc = subprocess.run(
        [sys.executable, "-m", "ecnsim", "bench", name, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {name} failed (exit {proc.returncode}):\n{proc.stderr}")
    record: dict[str, Any] = json.loads(proc.stdout)[0]
    return record


def _si(value: float) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}"
    return f"{value:.2f} "


def _format_benchmark(r: dict[str, Any]) -> str:
    speed = r["simulated_s"] / r["wall_s"] if r["wall_s"] > 0 else math.inf
    return "\n".join(
        [
            f"{r['name']}: {r['description']}",
            f"  packet-hops/s  {_si(r['packet_hops_per_s'])}hops/s ({r['packet_hops']} hops)",
            f"  events/s       {_si(r['events_per_s'])}events/s ({r['events']} events)",
            f"  wall time      {r['wall_s']:.3f} s run, {r['build_s']:.3f} s build "
            f"({speed:.1f}x real time)",
            f"  peak memory    {r['peak_rss_bytes'] / 2**20:.1f} MiB RSS, "
            f"{r['bytes_per_flow'] / 2**10:.1f} KiB per flow",
        ]
    )


def cmd_bench(args: argparse.Namespace) -> int:
    if args.list:
        width = max(len(n) for n in BENCHMARKS)
        for b in BENCHMARKS.values():
            print(f"{b.name.ljust(width)}  {b.description}")
        return EXIT_OK
    names = args.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(
            f"error: unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    records = []
    for name in names:
        if len(names) == 1:
            record = run_benchmark(BENCHMARKS[name])
        else:
            record = _run_benchmark_in_child(name)
        records.append(record)
        if not args.json:
            print(_format_benchmark(record), flush=True)
    if args.json:
        print(json.dumps(records, indent=2))
    return EXIT_OK


# ---------------------------------------------------------------------------
# ecnsim report
# ---------------------------------------------------------------------------


def cmd_report(args: argparse.Namespace) -> int:
    # Imported here: the report needs matplotlib, which `run` and `bench` do not.
    try:
        from ecnsim.report import write_report
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        path = write_report(args.results_dir, args.output, title=args.title, lockout_s=args.lockout)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"report written to {path}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# ecnsim sweep, ecnsim runs
# ---------------------------------------------------------------------------

EXIT_RUNS_FAILED = 1

#: Catalog columns `ecnsim runs` shows unless --all-columns (besides the parameters).
RUNS_SHOWN = ("sweep", "point", "seed", "key", "digest", "wall_s")


def cmd_sweep(args: argparse.Namespace) -> int:
    # Imported here: sweeps need duckdb (and Dask for --dask), which `run` does not.
    from ecnsim.aggregate import DEFAULT_METRICS, summary_table
    from ecnsim.store import Store, default_store_path
    from ecnsim.sweep import Sweep, SweepInterrupted, SweepProgressBar, run_sweep

    path = Path(args.sweep)
    try:
        sweep = Sweep.from_toml(path)
    except OSError as e:
        print(f"error: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    if args.jobs is not None and args.jobs < 1:
        print(f"error: --jobs must be >= 1, got {args.jobs}", file=sys.stderr)
        return EXIT_USAGE
    plan = sweep.plan()
    store = Store(args.out or sweep.store or default_store_path())
    tasks = plan.tasks()
    print(
        f"sweep {plan.name}: {len(plan.points)} points x {len(sweep.seeds)} seeds = "
        f"{len(tasks)} runs; store {store.root}",
        file=sys.stderr,
    )
    if args.dry_run:
        import pandas as pd

        stored = {t.key for t in tasks if store.has(t.key)}
        rows = [
            {
                "point": r.point,
                "seed": r.seed,
                **r.params,
                "key": r.key[:12],
                "stored": r.key in stored,
            }
            for r in plan.runs
        ]
        print(pd.DataFrame(rows).to_string(index=False))
        print(f"{len(stored)} of {len(tasks)} runs already in the store")
        return EXIT_OK
    progress = None if args.quiet else SweepProgressBar(sys.stderr)
    try:
        result = run_sweep(plan, store, jobs=args.jobs, dask=args.dask, progress=progress)
    except SweepInterrupted as e:
        r = e.result
        print(
            f"interrupted: {r.ran} runs finished and stored ({r.skipped} were stored before); "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    finally:
        if progress is not None:
            progress.close()
    where = f"Dask ({args.dask})" if result.executor == "dask" else f"{result.workers} worker(s)"
    print(
        f"{plan.name}: {len(tasks)} runs: {result.ran} run now, {result.skipped} already stored, "
        f"{len(result.failures)} failed; {result.wall_s:.1f} s wall on {where}"
    )
    for check in result.corrupt:
        print(f"rerun {check.key[:12]}: {check.reason}", file=sys.stderr)
    for _, message in result.failures:
        print(f"failed: {message}", file=sys.stderr)
    if result.failures:
        return EXIT_RUNS_FAILED
    if not args.no_summary:
        by = sweep.params
        table = summary_table(result.aggregate(list(DEFAULT_METRICS)), by)
        print(f"\nmean ± 95% CI half-width over {len(sweep.seeds)} seed(s):")
        print(table.to_string(index=False))
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    import duckdb

    from ecnsim.store import RUN_COLUMNS, Store, default_store_path

    store = Store(args.out or default_store_path())
    if not store.root.is_dir():
        print(f"error: no store at {store.root} (give --out DIR)", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.sweeps:
            df = store.query("SELECT * FROM sweeps ORDER BY name")
        elif args.sql:
            df = store.query(args.sql)
        else:
            df = store.runs(sweep=args.sweep, where=args.where)
            if args.format == "table" and not args.all_columns:
                params = [c for c in df.columns if c not in RUN_COLUMNS]
                df = df[[*RUNS_SHOWN, *params]].copy()
                df["key"] = df["key"].str.slice(0, 12)
                df["digest"] = [f"{int(d):016x}" for d in df["digest"]]
    except duckdb.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(df.to_json(orient="records", indent=1) + "\n")
    else:
        with_rows = "" if args.sweeps or args.sql else f"{len(df)} runs\n"
        sys.stdout.write(with_rows + df.to_string(index=False) + "\n")
    return EXIT_OK


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ecnsim",
        description="Packet-level discrete-event network simulator (TCP, AQM, ECN).",
    )
    parser.add_argument("--version", action="version", version=f"ecnsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run a TOML scenario and print a summary")
    run.add_argument("scenario", metavar="SCENARIO.toml", help="scenario file")
    run.add_argument("--out", metavar="DIR", help="write <table>.parquet and meta.json into DIR")
    run.add_argument("--seed", type=int, help="seed (overrides the scenario's)")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    run.add_argument("--trace-ns2", metavar="FILE", help="stream link events to FILE (ns-2 format)")
    run.add_argument("--trace-pcap", metavar="FILE", help="stream link events to FILE as pcap")
    run.add_argument(
        "--trace-links", metavar="I,J", help="trace only these links ([[links]] indices)"
    )
    run.add_argument(
        "--trace-nodes", metavar="A,B", help="trace only link directions at these nodes"
    )
    run.add_argument("--trace-flows", metavar="F,G", help="trace only these flows or apps (names)")
    run.set_defaults(func=cmd_run)

    bench = sub.add_parser("bench", help="run named benchmark scenarios")
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    bench.add_argument("--json", action="store_true", help="print results as JSON")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")
    bench.set_defaults(func=cmd_bench)

    report = sub.add_parser("report", help="write a self-contained HTML report of a run")
    report.add_argument("results_dir", metavar="RESULTS_DIR", help="directory from `run --out`")
    report.add_argument(
        "-o", "--output", metavar="FILE", help="HTML file (default RESULTS_DIR/report.html)"
    )
    report.add_argument("--title", help="page title (default: the scenario's name)")
    report.add_argument(
        "--lockout",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="shortest delivery gap reported as lockout (default 1)",
    )
    report.set_defaults(func=cmd_report)

    sweep = sub.add_parser("sweep", help="run a parameter sweep (docs/sweeps.md)")
    sweep.add_argument("sweep", metavar="SWEEP.toml", help="sweep file")
    sweep.add_argument(
        "--jobs", "-j", type=int, metavar="N", help="local workers (default: one per core)"
    )
    sweep.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address (tcp://host:8786), or `local` "
        "for a LocalCluster of --jobs workers",
    )
    sweep.add_argument(
        "--out",
        metavar="DIR",
        help="results store (default: the sweep's `store`, else "
        "$ECNSIM_STORE, else ./ecnsim-store)",
    )
    sweep.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    sweep.add_argument(
        "--dry-run", action="store_true", help="check every run and list them; run nothing"
    )
    sweep.add_argument(
        "--no-summary", action="store_true", help="do not print the per-point summary"
    )
    sweep.set_defaults(func=cmd_sweep)

    runs = sub.add_parser("runs", help="list and query the runs in a results store")
    runs.add_argument(
        "--out", metavar="DIR", help="results store (default: $ECNSIM_STORE, else ./ecnsim-store)"
    )
    runs.add_argument("--sweep", metavar="NAME", help="only the runs of this sweep")
    runs.add_argument(
        "--where",
        metavar="SQL",
        help="""SQL condition on the runs table, e.g. '"tcp.cc" = 'reno' AND seed < 3'""",
    )
    runs.add_argument(
        "--sql", metavar="QUERY", help="any SQL query (tables runs, sweeps, flows, queues, ...)"
    )
    runs.add_argument("--sweeps", action="store_true", help="list the sweeps instead")
    runs.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format"
    )
    runs.add_argument(
        "--all-columns", action="store_true", help="show every catalog column (table format)"
    )
    runs.set_defaults(func=cmd_runs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except EcnsimError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into a program that stopped reading (`ecnsim run x | head`).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    return code


if __name__ == "__main__":
    raise SystemExit(main())
