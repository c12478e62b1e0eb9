"""``ecnsim report``: a self-contained HTML report of a run."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ecnsim.cli._common import EXIT_OK, EXIT_USAGE

# ---------------------------------------------------------------------------
# ecnsim report
# ---------------------------------------------------------------------------


def cmd_report(args: argparse.Namespace) -> int:
    # Imported here: the report needs matplotlib, which `run` and `bench` do not.
    try:
        from ecnsim.output.report import write_report
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


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim report``."""
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
