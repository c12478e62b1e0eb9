"""``ecnsim emulate``: run a scenario's network in real time between real Linux hosts."""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecnsim._system import deferred_sigint
from ecnsim.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    format_table,
    print_summary,
    printable,
)
from ecnsim.cli.run import prepare_out, read_text_file, scenario_dict, seed_arg

if TYPE_CHECKING:
    from ecnsim.results import Results

#: A traffic program that begins later than this after its start time is reported, s.
LATE_START_S = 0.01

#: Exit code when the machine cannot emulate (not root, no namespaces, no TUN).
EXIT_UNAVAILABLE = 3


def print_emulation_report(results: Results, stream: Any) -> None:
    """The driver's own measurements: scheduling error, falling behind, the TCP mapping."""
    e = results.tables["emulation"]
    us = 1e-3

    def v(col: str) -> Any:
        return e[col][0]

    stream.write(
        f"\nemulation: {int(v('departures'))} packets delivered to hosts; departure error "
        f"p50 {v('departure_error_p50_ns') * us:.0f} us, "
        f"p99 {v('departure_error_p99_ns') * us:.0f} us, "
        f"max {v('departure_error_max_ns') * us:.0f} us; timer wake-up error p99 "
        f"{v('wakeup_error_p99_ns') * us:.0f} us; buffers used {int(v('pool_high_water'))} of "
        f"{int(v('pool_packets'))}\n"
    )
    late = int(v("late_departures"))
    if late:
        frac = late / max(1, int(v("departures")))
        stream.write(
            f"WARNING: the emulation fell behind: {late} departures ({100 * frac:.2f} %) "
            "were written "
            f"more than {v('late_threshold_ns') * us:.0f} us after their simulated time. The "
            "experiment was not changed (no packet was dropped or re-timed to catch up), but its "
            "timing is that much less exact; see docs/emulation.md (limits).\n"
        )
    if int(v("pool_exhausted")):
        stream.write(
            f"WARNING: {int(v('pool_exhausted'))} packets were lost because every buffer "
            "was in use "
            "(raise --pool-packets)\n"
        )
    flows = results.tables["flows"]
    for i, delay in enumerate(flows.columns.get("start_delay_s", [])):
        if delay > LATE_START_S:
            stream.write(
                f"WARNING: the traffic program of {flows['flow'][i]} began {delay * 1e3:.0f} ms "
                "after its start time (the machine was busy); its connection started that much "
                "later than the scenario says\n"
            )
    for i, kind in enumerate(flows.columns.get("kind", [])):
        if kind != "bulk":
            stream.write(
                f"{flows['flow'][i]} ({kind}, {flows['src'][i]} -> {flows['dst'][i]}): "
                f"{int(flows['transactions'][i])} transactions after the warm-up, "
                f"{flows['transactions_per_s'][i]:.2f} per second\n"
            )
    ports = results.tables["emu_ports"]
    unroutable = int(sum(ports["rx_unroutable"]))
    if unroutable:
        stream.write(f"note: {unroutable} packets to no emulated host were not carried\n")
    rt_error = e["realtime_error"][0]
    if rt_error:
        stream.write(f"note: the driver ran under normal scheduling ({rt_error})\n")
    start, end = results.meta.get("loadavg_start"), results.meta.get("loadavg_end")
    if start or end:
        stream.write(f"machine load (/proc/loadavg) at the start: {start}; at the end: {end}\n")
    mapping = results.tables["tcp_mapping"]
    for status, text in (
        ("not mapped", "not mapped onto Linux (its defaults apply)"),
        ("approximate", "mapped onto Linux only approximately"),
    ):
        rows = [i for i, s in enumerate(mapping["status"]) if s == status]
        if rows:
            params = sorted({mapping["parameter"][i] for i in rows})
            stream.write(f"{text}: {', '.join(params)}; the tcp_mapping table has the reasons\n")


def cmd_emulate(args: argparse.Namespace) -> int:
    # Imported here: every other subcommand starts without the emulation's modules.
    from ecnsim.emulation import (
        Emulation,
        EmulationError,
        NamespaceError,
        PlanError,
        check_environment,
        cleanup_leftovers,
        remove_orphans,
    )

    if args.cleanup:
        removed = cleanup_leftovers(include_live=args.all)
        print(f"removed {len(removed)} namespaces" + (": " + ", ".join(removed) if removed else ""))
        return EXIT_OK
    if args.scenario is None:
        print("error: SCENARIO.toml is required (or --cleanup)", file=sys.stderr)
        return EXIT_USAGE
    path = Path(args.scenario)
    text = read_text_file(path)
    try:
        check_environment()
    except NamespaceError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    # An emulation killed outright (SIGKILL, a crash) cannot clean up after itself.
    orphans = remove_orphans()
    if orphans:
        print(
            f"removed {len(orphans)} network namespaces left by an emulation that was killed "
            f"(and the programs still running in them): {', '.join(orphans)}",
            file=sys.stderr,
        )
    scenario = scenario_dict(text)
    # Checked before the experiment, so its results are never lost to a bad path.
    out = prepare_out("--out", args.out)
    emu = Emulation(
        scenario,
        seed=args.seed,
        pcap_dir=args.pcap_dir or (out / "pcap" if out else None),
        late_threshold_s=args.late_threshold_us * 1e-6,
        pool_packets=args.pool_packets,
        realtime_priority=None if args.no_realtime else args.realtime_priority,
        log=(lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr)),
    )
    try:
        plan = emu.make_plan()
    except PlanError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    for warning in emu.warnings:
        print(f"warning: {printable(warning)}", file=sys.stderr)
    if args.dry_run:
        for m in plan.mapping:
            print(f"{m.host:8} {m.parameter:20} {m.value:14} {m.linux:40} {m.status} {m.note}")
        return EXIT_OK
    started = time.monotonic()
    try:
        results = emu.run()
    except KeyboardInterrupt:
        print(
            f"interrupted after {time.monotonic() - started:.1f} s; namespaces, devices and "
            "programs removed",
            file=sys.stderr,
        )
        if out is not None:
            # As `ecnsim run`: the tables and meta.json of what ran (finished = false).
            if emu.partial is None:
                print(
                    f"no results written to {out}: the traffic had not started, or its "
                    "results could not be read",
                    file=sys.stderr,
                )
            else:
                emu.partial.meta["stopped"] = "interrupted"
                with deferred_sigint(f"writing partial results to {out}; please wait"):
                    emu.partial.write_parquet(out)
                reached = emu.partial.meta.get("end_time_s", 0.0)
                print(
                    f"partial results (finished=false, {reached:g} s of {plan.duration_s:g} s) "
                    f"written to {out}",
                    file=sys.stderr,
                )
        return EXIT_INTERRUPTED
    except (EmulationError, NamespaceError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(
        f"{path.name}: {plan.duration_s:g} s emulated in real time with {len(plan.hosts)} Linux "
        f"hosts ({', '.join(h.name for h in plan.hosts)}), kernel {results.meta.get('kernel', '?')}"
    )
    if args.quiet:
        # As `ecnsim run -q`: the one-line result and the warnings only.
        report = io.StringIO()
        print_emulation_report(results, report)
        for line in report.getvalue().splitlines():
            if line.startswith("WARNING"):
                print(line)
    else:
        print_summary(results, sys.stdout)
        print_emulation_report(results, sys.stdout)
    if args.verbose:
        print("\ntcp_mapping")
        print(format_table(results.tables["tcp_mapping"]))
    if out is not None:
        with deferred_sigint(f"writing results to {out}; please wait"):
            results.write_parquet(out)
        print(f"\nresults written to {out}")
    return EXIT_OK


def _positive_float(text: str) -> float:
    """A number > 0 (an argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _int_in(lo: int, hi: int) -> Any:
    """An argparse type: an integer from ``lo`` to ``hi``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be from {lo} to {hi}, got {value}")
        return value

    return parse


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim emulate``."""
    p = sub.add_parser(
        "emulate",
        help="run a scenario's network in real time between real Linux hosts (root)",
        description=(
            "Hosts become network namespaces with their own Linux TCP; routers, links and queue "
            "disciplines run in ecnsim's core in real time, joined to the hosts by TUN devices."
        ),
    )
    p.add_argument("scenario", metavar="SCENARIO.toml", nargs="?", help="scenario file")
    p.add_argument(
        "--out", metavar="DIR", help="write <table>.parquet, meta.json and pcap/ into DIR"
    )
    p.add_argument(
        "--pcap-dir",
        metavar="DIR",
        help="one capture per host device (default DIR/pcap with --out)",
    )
    p.add_argument("--seed", type=seed_arg, help="seed, 0 to 2^64-1 (overrides the scenario's)")
    p.add_argument(
        "--late-threshold-us",
        type=_positive_float,
        default=1000.0,
        help="count a packet written later than this after its simulated time as late "
        "(default 1000)",
    )
    p.add_argument(
        "--pool-packets",
        type=_int_in(1, 1 << 24),
        default=16384,
        help="packet buffers, 1 to 16777216 (default 16384)",
    )
    p.add_argument(
        "--realtime-priority",
        type=_int_in(1, 99),
        default=10,
        help="SCHED_FIFO priority of the driver thread (1-99, default 10)",
    )
    p.add_argument(
        "--no-realtime", action="store_true", help="run the driver under normal scheduling"
    )
    p.add_argument("--dry-run", action="store_true", help="print the TCP mapping and exit")
    p.add_argument("--verbose", "-v", action="store_true", help="also print the TCP mapping")
    p.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress lines and no summary tables: the one-line result and warnings only",
    )
    p.add_argument(
        "--cleanup",
        action="store_true",
        help="remove namespaces left by emulations whose process is gone, and exit",
    )
    p.add_argument(
        "--all", action="store_true", help="with --cleanup: also those of running emulations"
    )
    p.set_defaults(func=cmd_emulate)
