"""``ecnsim run``: run one scenario, print a summary, write Parquet."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ecnsim.cli._common import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, ProgressBar, print_summary
from ecnsim.simulation import Simulation

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


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim run``."""
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
