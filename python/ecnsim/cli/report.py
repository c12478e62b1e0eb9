"""``ecnsim report``: a self-contained HTML report of a run, a stored run, or a sweep."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ecnsim.cli._common import EXIT_OK, EXIT_USAGE, ProgressBar, UsageError

# ---------------------------------------------------------------------------
# ecnsim report
# ---------------------------------------------------------------------------


def _run_scenario(args: argparse.Namespace, scenario: Path) -> Path:
    """Run ``scenario`` (with ``--set``) into ``--out`` (default ``<stem>-results/``)."""
    from ecnsim.cli.run import apply_sets, prepare_out, read_text_file, scenario_dict
    from ecnsim.simulation import Simulation

    out = prepare_out("--out", args.out or str(scenario.with_name(f"{scenario.stem}-results")))
    assert out is not None
    data = apply_sets(scenario_dict(read_text_file(scenario)), args.set or [])
    sim = Simulation(data)
    for warning in sim.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    progress = None if args.quiet else ProgressBar(sys.stderr)
    try:
        results = sim.run(progress=progress)
    finally:
        if progress is not None:
            progress.close()
    results.write_parquet(out)
    print(f"results written to {out}")
    return out


def cmd_report(args: argparse.Namespace) -> int:
    # Imported here: the report needs matplotlib, which `run` and `bench` do not.
    try:
        from ecnsim.output.report import write_report, write_sweep_report
        from ecnsim.output.seeds_report import is_seeds_folder, write_seeds_report
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    source = Path(args.results_dir)
    is_scenario = source.is_file() and source.suffix in (".toml", ".json")
    if args.set and not is_scenario:
        raise UsageError(
            "--set: applies to a scenario file (ecnsim report SCENARIO.toml --set ...)"
        )
    if args.sweep is not None and args.run is not None:
        raise UsageError("--sweep and --run: give one")
    metrics = None
    if args.metrics is not None:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    try:
        if args.sweep is not None:
            path = write_sweep_report(
                source, args.sweep, args.output, metrics=metrics, title=args.title
            )
        elif args.run is None and is_seeds_folder(source):
            path = write_seeds_report(source, args.output, title=args.title, lockout_s=args.lockout)
        else:
            if is_scenario:
                source = _run_scenario(args, source)
            path = write_report(
                source, args.output, title=args.title, lockout_s=args.lockout, run=args.run
            )
    except (FileNotFoundError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as e:  # an unknown metric name
        print(f"error: --metrics: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"report written to {path}")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim report``."""
    from ecnsim.cli.run import set_arg

    report = sub.add_parser(
        "report", help="write a self-contained HTML report of a run, a stored run or a sweep"
    )
    report.add_argument(
        "results_dir",
        metavar="SOURCE",
        help="a results directory (`run --out DIR`), a `run --seeds --out DIR` folder (mean "
        "and CI across the seeds, and a report per seed), a run directory in a store, a store "
        "(with --run KEY or --sweep NAME), or a scenario file to run first",
    )
    report.add_argument(
        "-o", "--output", metavar="FILE", help="HTML file (default SOURCE/report.html)"
    )
    report.add_argument("--title", help="page title (default: the scenario's name)")
    report.add_argument("--run", metavar="KEY", help="the store's run with this key (or prefix)")
    report.add_argument(
        "--sweep", metavar="NAME", help="a sweep report: each metric against each parameter"
    )
    report.add_argument(
        "--metrics",
        metavar="M,N",
        help="sweep report metrics (default goodput_bps,jain,drops,marks,utilization)",
    )
    report.add_argument(
        "--set",
        action="append",
        type=set_arg,
        metavar="PATH=VALUE",
        help="with a scenario file: change a field before running it (as `ecnsim run --set`)",
    )
    report.add_argument("--out", metavar="DIR", help="with a scenario file: where its results go")
    report.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    report.add_argument(
        "--lockout",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="shortest delivery gap reported as lockout (default 1)",
    )
    report.set_defaults(func=cmd_report)
