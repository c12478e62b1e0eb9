"""``ecnsim sweep`` and ``ecnsim runs``: parameter sweeps and the results store."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from ecnsim.cli._common import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from ecnsim.cli.run import check_out_path, prepare_out

# ---------------------------------------------------------------------------
# ecnsim sweep, ecnsim runs
# ---------------------------------------------------------------------------

EXIT_RUNS_FAILED = 1
#: Exit code when the machine cannot emulate (as ``ecnsim emulate``).
EXIT_UNAVAILABLE = 3

#: Catalog columns `ecnsim runs` shows unless --all-columns (besides the parameters).
RUNS_SHOWN = ("sweep", "point", "seed", "key", "digest", "wall_s")


def cmd_sweep(args: argparse.Namespace) -> int:
    # Imported here: sweeps need duckdb (and Dask for --dask), which `run` does not.
    from ecnsim.analysis.aggregate import DEFAULT_METRICS, summary_table
    from ecnsim.sweep import Sweep, SweepInterrupted, SweepProgressBar, run_sweep
    from ecnsim.sweep.store import Store, default_store_path

    path = Path(args.sweep)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sweep = Sweep.from_toml(path)
    except OSError as e:
        print(f"error: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.jobs is not None and args.jobs < 1:
        print(f"error: --jobs must be >= 1, got {args.jobs}", file=sys.stderr)
        return EXIT_USAGE
    if args.series:
        sweep.series = True
    if args.emulate:
        if args.dask is not None or (args.jobs is not None and args.jobs > 1):
            print(
                "error: --emulate runs one run at a time in real time (runs side by side would "
                "delay each other's packets); drop --jobs/--dask",
                file=sys.stderr,
            )
            return EXIT_USAGE
        from ecnsim.emulation import NamespaceError, check_environment

        try:
            check_environment()
        except NamespaceError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
    plan = sweep.plan(mode="emulation" if args.emulate else "simulation")
    store = Store(args.out or sweep.store or default_store_path())
    # Checked before any run, so a bad store path is one line, not a traceback after the runs.
    option = "--out" if args.out else ("the sweep's store" if sweep.store else "the store")
    if args.dry_run:
        check_out_path(option, store.root)
    else:
        prepare_out(option, store.root)
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
        # Failed runs are listed below and make the exit code 1.
        result = run_sweep(
            plan,
            store,
            jobs=args.jobs,
            dask=args.dask,
            progress=progress,
            raise_if_all_failed=False,
        )
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
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = summary_table(result.aggregate(list(DEFAULT_METRICS)), by)
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
        print(f"\nmean ± 95% CI half-width over {len(sweep.seeds)} seed(s):")
        print(table.to_string(index=False))
    return EXIT_OK


def duckdb_error_lines(error: Exception, option: str | None) -> list[str]:
    """A DuckDB error as one ``error:`` line (its first, naming ``option``) and at most one
    ``hint:`` (its suggestion: the candidate columns, "did you mean"); the echo of the query
    with its caret is left out (docs/cli.md: one ``error: ...`` line)."""
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    head = lines[0] if lines else type(error).__name__
    out = [f"error: {option}: {head}" if option else f"error: {head}"]
    hints = [ln for ln in lines[1:] if not ln.startswith("LINE ") and set(ln) != {"^"}]
    if hints:
        out.append(f"hint: {hints[0]}")
    return out


def cmd_runs(args: argparse.Namespace) -> int:
    import duckdb

    from ecnsim.sweep.store import RUN_COLUMNS, Store, default_store_path

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
                shown = list(RUNS_SHOWN)
                if (df["run_mode"] != "simulation").any():
                    # A store with emulated runs says which run is which.
                    shown.insert(shown.index("seed") + 1, "run_mode")
                df = df[[*shown, *params]].copy()
                df["key"] = df["key"].str.slice(0, 12)
                df["digest"] = [f"{int(d):016x}" for d in df["digest"]]
    except duckdb.Error as e:
        option = "--sql" if args.sql and not args.sweeps else "--where" if args.where else None
        for line in duckdb_error_lines(e, option):
            print(line, file=sys.stderr)
        return EXIT_USAGE
    for key, why in store.damaged():
        print(
            f"warning: run {key[:12]} left out: {why} (the next sweep that needs it reruns it)",
            file=sys.stderr,
        )
    if args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(df.to_json(orient="records", indent=1) + "\n")
    else:
        with_rows = "" if args.sweeps or args.sql else f"{len(df)} runs\n"
        sys.stdout.write(with_rows + df.to_string(index=False) + "\n")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim sweep`` and ``ecnsim runs``."""
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
    sweep.add_argument(
        "--emulate",
        action="store_true",
        help="run every point with real Linux TCP endpoints in network namespaces through "
        "ecnsim's links and queues, in real time, one run at a time (root; "
        "docs/emulation.md); stored apart from simulated runs",
    )
    sweep.add_argument(
        "--series",
        action="store_true",
        help="store the runs' time series too (as the sweep file's series = true)",
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
