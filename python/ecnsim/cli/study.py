"""``ecnsim study``: the reference studies as one command each.

::

    ecnsim study list
    ecnsim study show NAME [--quick] [--emulate] [--set PATH=VALUE ...]
    ecnsim study run NAME [--quick] [--emulate] [--robustness] [--svg] [--out DIR] [--jobs N]
                          [--dask ADDR|local] [--seeds K] [--set PATH=VALUE ...]
                          [--only AXIS=V1,V2 ...]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from ecnsim.cli._common import EXIT_INTERRUPTED, EXIT_OK
from ecnsim.cli.run import jobs_arg, prepare_out, seeds_arg

EXIT_RUNS_FAILED = 1
#: Exit code when the machine cannot emulate (as ``ecnsim emulate``).
EXIT_UNAVAILABLE = 3


def study_seeds_arg(text: str) -> int:
    """``study --seeds``: a count K (seeds 1..K), or the list form ``ecnsim run --seeds``
    takes when it lists the same seeds (``1-8``, ``1,2,3``) (an argparse type)."""
    try:
        return int(text)
    except ValueError:
        pass
    seeds = seeds_arg(text)
    if seeds != list(range(1, len(seeds) + 1)):
        raise argparse.ArgumentTypeError(f"a study runs seeds 1 to K: give K or 1-K, got {text!r}")
    return len(seeds)


def _resolve(args: argparse.Namespace) -> tuple[Any, Any]:
    from ecnsim import studies

    study = studies.get(args.name)
    params = studies.resolve_params(
        study,
        args.set or [],
        quick=args.quick,
        seeds=getattr(args, "seeds", None),
        emulate=args.emulate,
    )
    return study, params


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _short_source(source: str, width: int = 48) -> str:
    """The source's first citation up to its first sentence end (not an initial's period)."""
    first = re.split(r"(?<=[a-z0-9)-]{3})\. ", source.split(";")[0])[0]
    return first if len(first) <= width else first[: width - 3].rstrip(" ,") + "..."


def cmd_list(args: argparse.Namespace) -> int:
    from ecnsim import studies
    from ecnsim.studies._base import format_seconds, pilot_runs

    rows = []
    for name in studies.names():
        study = studies.get(name)
        params = study.Params()
        quick = study.quick(params)
        runs = len(study.grid(params)) * params.seeds + pilot_runs(study, params)
        rows.append(
            [
                name,
                study.title,
                _short_source(study.source),
                f"{runs} ({len(study.grid(quick)) * quick.seeds} quick)",
                f"~{format_seconds(studies.estimate_wall_s(study, params, 2))} on 2 cores",
            ]
        )
    print(_table(rows, ["study", "what", "reproduces", "runs", "estimated wall time"]))
    print("\necnsim study show NAME: the setup and every choice; ecnsim study run NAME [--quick]")
    print(
        "add --emulate (root) to run a study's points with real Linux TCP endpoints as well; "
        "ecnsim study show NAME --emulate says which points can be"
    )
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from ecnsim import studies
    from ecnsim.studies._base import format_seconds, params_dict, pilot_runs

    study, params = _resolve(args)
    print(f"{study.name}: {study.title}")
    print(f"source: {study.source}\n")
    print(_table([[k, v] for k, v in study.setup(params)], ["setup", "value"]))
    print("\nChoices where the source is ambiguous:")
    for i, c in enumerate(study.choices(params), start=1):
        knob = f" [parameter: {c.parameter}]" if c.parameter else ""
        print(f"  {i}. {c.topic}: {c.choice}{knob}\n     why: {c.reason}")
    from ecnsim.studies.findings import show_lines

    for line in show_lines(study, params):
        print(line)
    if study.variants:
        print(f"\nvariants (--set variant=NAME): {', '.join(study.variants)}")
    print(
        "\nparameters (--set NAME=VALUE; a scenario path such as tcp.min_rto=1s is set in "
        "every point):"
    )
    for k, v in params_dict(params).items():
        print(f"  {k} = {v}")
    points = study.grid(params)
    est = studies.estimate_wall_s(study, params, 1)
    pilot = pilot_runs(study, params)
    pilot_text = f" after {pilot} calibration runs" if pilot else ""
    print(
        f"\n{len(points)} points x {params.seeds} seeds = {len(points) * params.seeds} runs"
        f"{pilot_text}; estimated {format_seconds(est)} on 1 core, {format_seconds(est / 2)} on 2"
    )
    if args.emulate:
        _show_emulation(study, params)
    return EXIT_OK


def _show_emulation(study: Any, params: Any) -> None:
    """``study show --emulate``: how the points run with real hosts, what is refused, real time."""
    from ecnsim.studies._base import format_seconds
    from ecnsim.studies.emulated import SETUP_S, emulated_seconds, emulation_mapping

    print("\nWith --emulate (real Linux hosts in network namespaces, root; docs/emulation.md):")
    for i, c in enumerate(study.emulation_notes(params), start=1):
        knob = f" [parameter: {c.parameter}]" if c.parameter else ""
        print(f"  {i}. {c.topic}: {c.choice}{knob}\n     why: {c.reason}")
    mapping, refused = emulation_mapping(study, params)
    if not mapping.empty:
        print("\nTCP parameters on the real hosts (every point; docs/emulation.md):")
        rows = [
            [str(r[c]) for c in ("host", "parameter", "scenario", "linux", "status", "points")]
            for r in mapping.to_dict("records")
        ]
        print(_table(rows, ["host", "parameter", "scenario", "linux", "status", "points"]))
        notes = {
            str(r["parameter"]): str(r["note"])
            for r in mapping.to_dict("records")
            if r["status"] != "applied" and r["note"]
        }
        for param, note in notes.items():
            print(f"  {param}: {note}")
    for point, why in refused:
        label = ", ".join(f"{k}={v}" for k, v in point.items())
        print(f"cannot be emulated: {label}: {why}")
    refused_points = [p for p, _why in refused]
    emulable = [p for p in study.grid(params) if p not in refused_points]
    real = emulated_seconds(study, params, emulable)
    print(
        f"\nemulated runs: {len(emulable) * params.seeds}, "
        f"one at a time in real time: about {format_seconds(real)} (each run's duration plus "
        f"~{SETUP_S:g} s to set up), after the simulated runs; the pilot runs stay simulated"
    )


def cmd_run(args: argparse.Namespace) -> int:
    from ecnsim import studies
    from ecnsim.sweep import SweepInterrupted, SweepProgressBar

    study, params = _resolve(args)
    out = args.out or os.path.join("ecnsim-studies", study.name + ("-quick" if args.quick else ""))
    if args.emulate:
        # Before --out is made: a machine that cannot emulate leaves nothing behind.
        from ecnsim.emulation import NamespaceError, check_environment

        try:
            check_environment()
        except NamespaceError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
    prepare_out("--out", out)
    only = studies.parse_only(args.only or [])
    dask = args.dask
    bar = SweepProgressBar(sys.stderr)
    if args.emulate:
        from ecnsim.studies._base import format_seconds
        from ecnsim.studies.emulated import emulated_seconds

        print(
            f"study {study.name}: --emulate: every point runs simulated, then with real Linux "
            "hosts one at a time in real time (about "
            f"{format_seconds(emulated_seconds(study, params))}); the pilots stay simulated",
            file=sys.stderr,
        )
    print(f"study {study.name}: planning (every scenario is checked first) ...", file=sys.stderr)
    try:
        run = studies.run_study(
            study,
            params,
            out,
            workers=args.jobs,
            dask=dask,
            only=only,
            progress=bar,
            emulate=args.emulate,
            robustness=args.robustness,
            svg=args.svg,
        )
    except SweepInterrupted as e:
        r = e.result
        print(
            f"interrupted: {r.ran} runs finished and are kept in {out}/store; run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    sweep = run.sweep
    cal = run.calibration
    pilot_text = (
        f" after {len(cal.plan.tasks())} calibration runs ({cal.sweep.ran} run now, "
        f"{cal.sweep.skipped} already in the store, {cal.sweep.wall_s:.1f} s)"
        if cal is not None
        else ""
    )
    print(
        f"study {study.name}: {len(run.plan.tasks())} runs ({sweep.ran} run now, "
        f"{sweep.skipped} already in the store, {len(sweep.failures)} failed) in "
        f"{sweep.wall_s:.1f} s{pilot_text}; rendered in {run.render_s:.1f} s",
        file=sys.stderr,
    )
    for _task, message in sweep.failures[:10]:
        print(f"  failed: {message}", file=sys.stderr)
    robust_failed = False
    for rr in run.robustness or []:
        print(
            f"study {study.name}: robustness, {rr.reading.id} = {rr.alternative.name}: "
            f"{len(rr.plan.tasks())} runs ({rr.sweep.ran} run now, {rr.sweep.skipped} already "
            f"in the store, {len(rr.sweep.failures)} failed)",
            file=sys.stderr,
        )
        for _task, message in rr.sweep.failures[:10]:
            robust_failed = True
            print(f"  failed: {message}", file=sys.stderr)
    if run.robustness_missing:
        print(
            "WARNING: the defaults judged these findings, but an alternative has no data for "
            f"them (failed runs, or a metric it does not produce): "
            f"{'; '.join(run.robustness_missing)}",
            file=sys.stderr,
        )
    emu = run.emulated
    if emu is not None:
        from ecnsim.studies.emulated import fell_behind

        behind = fell_behind(emu.sweep.store, emu.plan.tasks())
        print(
            f"study {study.name}: {len(emu.plan.tasks())} emulated runs ({emu.sweep.ran} run "
            f"now, {emu.sweep.skipped} already in the store, {len(emu.sweep.failures)} failed) "
            f"in {emu.sweep.wall_s:.1f} s of real time",
            file=sys.stderr,
        )
        if behind:
            print(
                f"WARNING: the emulation driver fell behind in {behind} of them (departures "
                "later than 1 ms; nothing was dropped or re-timed); the report lists each "
                "run's timing error and the machine's load",
                file=sys.stderr,
            )
        for _task, message in emu.sweep.failures[:10]:
            print(f"  failed (emulated): {message}", file=sys.stderr)
    print(f"report:  {run.report}")
    print(f"tables:  {os.path.join(out, 'tables')}/ ({len(run.tables)} CSV files)")
    formats = "PNG and SVG" if args.svg else "PNG; --svg adds SVG"
    print(f"figures: {os.path.join(out, 'figures')}/ ({len(run.figures)} figures, {formats})")
    failed = sweep.failures or robust_failed or (emu is not None and emu.sweep.failures)
    return EXIT_RUNS_FAILED if failed else EXIT_OK


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the study (ecnsim study list)")
    p.add_argument(
        "--quick", action="store_true", help="the reduced grid (< 1 min on one core, one seed)"
    )
    p.add_argument(
        "--emulate",
        action="store_true",
        help="also run every point with real Linux TCP endpoints in network namespaces "
        "through ecnsim's links and queues, in real time, one run at a time (root; "
        "docs/emulation.md); the report shows both side by side",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="PATH=VALUE",
        help="a study parameter (max_p_values=0.1,0.5; variant=icn2001) or a scenario path set "
        "in every point (tcp.min_rto=1s); repeatable",
    )


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim study list|show|run``."""
    study = sub.add_parser("study", help="run a reference study (one command per study)")
    ssub = study.add_subparsers(dest="study_command", metavar="COMMAND")
    ssub.required = True
    lst = ssub.add_parser("list", help="the studies, their size and estimated wall time")
    lst.set_defaults(func=cmd_list)
    show = ssub.add_parser("show", help="a study's setup and every choice made, with reasons")
    _add_common(show)
    show.add_argument(
        "--seeds", type=study_seeds_arg, metavar="K", help="seeds per point (1..K; or 1-K)"
    )
    show.set_defaults(func=cmd_show)
    run = ssub.add_parser("run", help="run a study and write its report, tables and figures")
    _add_common(run)
    run.add_argument("--out", metavar="DIR", help="output directory (default ecnsim-studies/NAME)")
    run.add_argument(
        "--jobs",
        "-j",
        type=jobs_arg,
        metavar="N",
        help="runs at a time, each in its own process (default: one per core; 1 runs in "
        "this process)",
    )
    # The name `study run` had before it took `ecnsim run`'s and `ecnsim sweep`'s --jobs:
    # kept so that scripts and notes keep working, and left out of the help.
    run.add_argument("--workers", dest="jobs", type=jobs_arg, help=argparse.SUPPRESS)
    run.add_argument("--dask", metavar="ADDR|local", help="run on a Dask cluster (or a local one)")
    run.add_argument(
        "--seeds", type=study_seeds_arg, metavar="K", help="seeds per point (1..K; or 1-K)"
    )
    run.add_argument(
        "--robustness",
        action="store_true",
        help="also judge every finding under each alternative of each reading, one reading "
        "at a time: the findings' points run again for parameter readings (same store, "
        "resumable); the report adds a robustness table",
    )
    run.add_argument(
        "--svg",
        action="store_true",
        help="write each figure as SVG too, beside its PNG (a second drawing of each figure; "
        "on a finished study's --out it only renders)",
    )
    run.add_argument(
        "--only",
        action="append",
        metavar="AXIS=V1,V2",
        help="run only the points with these values (n=30,60; mode=ECN); repeatable",
    )
    run.set_defaults(func=cmd_run)
