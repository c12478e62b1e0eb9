"""The ``ecnsim`` command.

::

    ecnsim run SCENARIO.toml [--out DIR] [--seed N] [--quiet]
    ecnsim emulate SCENARIO.toml [--out DIR] [--pcap-dir DIR] | --cleanup   (root)
    ecnsim bench [NAME ...] [--json] [--list]
    ecnsim report RESULTS_DIR [-o report.html] [--title TEXT] [--lockout SECONDS]
    ecnsim study list | show NAME | run NAME [--quick] [--out DIR] [--jobs N] [--dask ADDR]
                 [--seeds K] [--set PATH=VALUE ...] [--only AXIS=V1,V2 ...]
    ecnsim sweep SWEEP.toml [--jobs N] [--dask ADDRESS|local] [--out DIR] [--dry-run]
    ecnsim runs [--out DIR] [--sweep NAME] [--where SQL] [--sql QUERY] [--format F]
    ecnsim --version

Exit codes: 0 success, 1 internal failure, 2 bad scenario or usage,
130 interrupted (Ctrl-C; partial results are written to ``--out``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import typing
from collections.abc import Sequence

from ecnsim import __version__
from ecnsim.cli import bench, emulate, report, run, study, sweep
from ecnsim.cli._common import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageError, printable
from ecnsim.exceptions import EcnsimError

__all__ = ["build_parser", "main"]

#: The subcommand modules, in the order ``ecnsim --help`` lists them. Each has
#: ``add_parsers(sub)``, which registers its subcommands with their handlers.
COMMANDS = (run, emulate, study, sweep, report, bench)


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad argument reported as docs/cli.md promises: one ``error: ...``
    line naming the option (``error: --jobs: must be at least 1, got 0``) and one ``hint:``
    line, exit 2; not argparse's usage block and ``PROG: error:`` line. Subcommand parsers
    are made of this class too (``add_subparsers`` uses the parent's class)."""

    def error(self, message: str) -> typing.NoReturn:
        # argparse says "argument --jobs/-j: ..." (or "argument SCENARIO.toml: ...").
        message = re.sub(r"^argument ([^\s/:]+)(?:/[^\s:]+)?: ", r"\1: ", message)
        print(f"error: {printable(message)}", file=sys.stderr)
        print(f"hint: {self.prog} --help lists the arguments", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    """The ``ecnsim`` argument parser with every subcommand."""
    parser = ArgumentParser(
        prog="ecnsim",
        description="Packet-level discrete-event network simulator (TCP, AQM, ECN).",
    )
    parser.add_argument("--version", action="version", version=f"ecnsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except (EcnsimError, UsageError) as e:
        print(f"error: {printable(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into a program that stopped reading (`ecnsim run x | head`).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    if code == EXIT_INTERRUPTED and argv is None:
        # The command is ending after Ctrl-C, its partial results written: a
        # second Ctrl-C must not turn exit code 130 into death by signal. One that
        # lands before SIGINT is ignored (it did, once in a CI run, inside the
        # `suppress` below) is dropped and the ignoring tried again.
        while True:
            try:
                with contextlib.suppress(ValueError):
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                break
            except KeyboardInterrupt:
                continue
    return code


if __name__ == "__main__":
    raise SystemExit(main())
