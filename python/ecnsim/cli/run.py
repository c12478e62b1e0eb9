"""``ecnsim run``: run one scenario, print a summary, write Parquet."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ecnsim import _core
from ecnsim._system import deferred_sigint, parse_bytes
from ecnsim.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    ProgressBar,
    UsageError,
    print_summary,
    printable,
)
from ecnsim.exceptions import ResourceError, SimulationError
from ecnsim.results import Results
from ecnsim.scenario.paths import parse_assignment, set_path
from ecnsim.simulation import Simulation

# ---------------------------------------------------------------------------
# ecnsim run
# ---------------------------------------------------------------------------


def _str_list(text: str | None) -> list[str] | None:
    return None if text is None else [x.strip() for x in text.split(",") if x.strip()]


def seed_arg(text: str) -> int:
    """``--seed``: an integer in 0..2^64-1 (an argparse type)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(
            f"must be from 0 to 2^64-1 (18446744073709551615), got {text}"
        )
    return value


def size_arg(text: str) -> int:
    """``--max-memory``: a size such as ``8GB`` (an argparse type)."""
    try:
        return parse_bytes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _index_list(text: str) -> list[int]:
    """``--trace-links``: comma-separated link indices (an argparse type)."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    try:
        values = [int(x) for x in items]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected link indices like 0,2, got {text!r}") from None
    bad = [v for v in values if v < 0]
    if bad or not values:
        raise argparse.ArgumentTypeError(
            f"expected link indices (integers >= 0) like 0,2, got {text!r}"
        )
    return values


def prepare_out(option: str, value: str | None) -> Path | None:
    """Create the output directory ``value`` now, and check that it can be written.

    Done before a run, so results are never lost to a bad path; raises
    :class:`UsageError` naming ``option``.
    """
    if value is None:
        return None
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option}: {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".ecnsim-write-test-"):
            pass
    except OSError as e:
        raise UsageError(f"{option}: cannot write into {out}: {e.strerror or e}") from None
    return out


def read_text_file(path: Path) -> str:
    """A scenario file's text; :class:`UsageError` if it cannot be read or is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(
            f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
        ) from None


def set_arg(text: str) -> tuple[str, Any]:
    """``--set PATH=VALUE`` (an argparse type): the sweep's path syntax, value as JSON or text."""
    try:
        return parse_assignment(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def scenario_dict(text: str) -> dict[str, Any]:
    """A TOML scenario as the data it holds, parsed by the core (errors name the field)."""
    data: dict[str, Any] = json.loads(_core.toml_to_json(text))
    return data


def apply_sets(scenario: dict[str, Any], sets: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """``scenario`` with each ``--set`` applied in order (``set_path``: the sweep's code).

    A path that does not fit the scenario (an index beyond the list, a
    selector that matches nothing) is a :class:`UsageError` naming the
    ``--set``; a value the scenario does not allow is reported by the core
    at its field path when the simulation is built.
    """
    for path, value in sets:
        try:
            set_path(scenario, path, value)
        except ValueError as e:
            raise UsageError(f"--set {path}: {e}") from None
    return scenario


def _write_results(results: Results, out: Path, *, partial: bool) -> None:
    """Write ``results`` into ``out``, holding Ctrl-C off until every file is written."""
    if partial:
        with deferred_sigint(f"still writing partial results to {out}; please wait", reraise=False):
            results.write_parquet(out)
    else:
        with deferred_sigint(f"writing results to {out}; please wait"):
            results.write_parquet(out)


def cmd_run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    text = read_text_file(path)
    out = prepare_out("--out", args.out)
    if args.pcap is not None:
        if args.pcap.endswith(".pcap") and not Path(args.pcap).is_dir():
            raise UsageError(
                f"--pcap: takes a directory, got {args.pcap!r}: one capture file per link "
                "direction is written into it (<link>-<from>-<to>.pcap)"
            )
        prepare_out("--pcap", args.pcap)
    if args.set:
        scenario = apply_sets(scenario_dict(text), args.set)
        sim = Simulation(scenario, seed=args.seed, max_memory=args.max_memory)
    else:
        sim = Simulation.from_toml_str(text, seed=args.seed, max_memory=args.max_memory)
    for warning in sim.warnings:
        print(f"warning: {printable(warning)}", file=sys.stderr)
    if args.pcap_drops and args.pcap is None:
        raise UsageError("--pcap-drops: needs --pcap DIR")
    if args.trace_ns2 or args.pcap:
        try:
            sim.trace(
                ns2=args.trace_ns2,
                pcap=args.pcap,
                pcap_drops=args.pcap_drops,
                links=args.trace_links,
                nodes=_str_list(args.trace_nodes),
                flows=_str_list(args.trace_flows),
            )
        except OSError as e:
            option = "--trace-ns2" if e.filename == args.trace_ns2 else "--pcap"
            raise UsageError(f"{option}: cannot write {e.filename}: {e.strerror or e}") from None
    progress = None if args.quiet else ProgressBar(sys.stderr)
    started = time.perf_counter()
    stopped: str | None = None
    code = EXIT_OK
    try:
        sim.run(progress=progress)
    except KeyboardInterrupt:
        stopped, code = "interrupted", EXIT_INTERRUPTED
    except (SimulationError, ResourceError) as e:
        stopped, code = f"error: {e}", EXIT_USAGE
    finally:
        if progress is not None:
            progress.close()
    wall = time.perf_counter() - started
    if stopped is not None:
        print(
            f"{stopped}\nstopped at {sim.now:g} s of {sim.duration:g} s simulated "
            f"(after {wall:.1f} s)",
            file=sys.stderr,
        )
        if out is not None:
            _write_results(sim.results, out, partial=True)
            print(f"partial results (finished=false) written to {out}", file=sys.stderr)
        return code
    results = sim.results
    # Results first: printing may fail (a closed pipe), writing must not be skipped.
    if out is not None:
        _write_results(results, out, partial=False)
    perf = sim.perf()
    print(
        f"{path.name}: {sim.duration:g} s simulated in {wall:.2f} s wall, seed "
        f"{results.meta.get('seed', '?')}, {perf['events']} events, "
        f"{perf['packet_hops']} packet-hops, digest {results.digest:016x}"
    )
    print_summary(results, sys.stdout)
    if out is not None:
        print(f"\nresults written to {out}")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim run``."""
    run = sub.add_parser("run", help="run a TOML scenario and print a summary")
    run.add_argument("scenario", metavar="SCENARIO.toml", help="scenario file")
    run.add_argument("--out", metavar="DIR", help="write <table>.parquet and meta.json into DIR")
    run.add_argument("--seed", type=seed_arg, help="seed, 0 to 2^64-1 (overrides the scenario's)")
    run.add_argument(
        "--max-memory",
        type=size_arg,
        metavar="SIZE",
        help="refuse or stop a run needing more memory than SIZE (e.g. 8GB; default: 90%% of "
        "the memory available)",
    )
    run.add_argument(
        "--set",
        action="append",
        type=set_arg,
        metavar="PATH=VALUE",
        help="change one scenario field before the run, with a sweep's path syntax "
        "(tcp.cc=newreno, links[0].queue.max_p=0.2, links[name=bottleneck].rate=5Mbps, "
        "flows[group=fragile].tcp.cc=reno); repeatable, applied in order",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    run.add_argument("--trace-ns2", metavar="FILE", help="stream link events to FILE (ns-2 format)")
    run.add_argument(
        "--pcap",
        "--trace-pcap",
        dest="pcap",
        metavar="DIR",
        help="capture every traced link direction into DIR/<link>-<from>-<to>.pcap (packets as "
        "they start onto the link, once each)",
    )
    run.add_argument(
        "--pcap-drops",
        action="store_true",
        help="with --pcap: also write each direction's dropped packets to <link>-<from>-<to>"
        ".drops.pcap",
    )
    run.add_argument(
        "--trace-links",
        type=_index_list,
        metavar="I,J",
        help="trace only these links ([[links]] indices)",
    )
    run.add_argument(
        "--trace-nodes", metavar="A,B", help="trace only link directions at these nodes"
    )
    run.add_argument("--trace-flows", metavar="F,G", help="trace only these flows or apps (names)")
    run.set_defaults(func=cmd_run)
