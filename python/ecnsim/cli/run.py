"""``ecnsim run``: run one scenario, print a summary, write Parquet."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecnsim import _core
from ecnsim._system import HeldInterrupts, deferred_sigint, hold_sigint_after_first, parse_bytes
from ecnsim.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    ProgressBar,
    UsageError,
    cc_seed_metrics,
    print_summary,
    printable,
)
from ecnsim.exceptions import ResourceError, SimulationError, SpecError

if TYPE_CHECKING:
    # Imported where used, so `ecnsim --help` loads none of them.
    from ecnsim.results import Results
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


def seeds_arg(text: str) -> list[int]:
    """``--seeds``: seeds and ranges such as ``1-8`` or ``1,3,10-12`` (an argparse type)."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        lo, dash, hi = part.partition("-")
        try:
            first = seed_arg(lo.strip())
            last = seed_arg(hi.strip()) if dash else first
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected seeds like 1-8 or 1,3,10-12 (integers 0 to 2^64-1), got {text!r}"
            ) from None
        if last < first:
            raise argparse.ArgumentTypeError(f"range {part!r} ends before it starts")
        if last - first >= MAX_SEEDS or len(seeds) + last - first >= MAX_SEEDS:
            raise argparse.ArgumentTypeError(f"at most {MAX_SEEDS} seeds, got {text!r}")
        seeds.extend(range(first, last + 1))
    seen: set[int] = set()
    for seed in seeds:
        if seed in seen:
            raise argparse.ArgumentTypeError(f"seed {seed} is given twice in {text!r}")
        seen.add(seed)
    return seeds


def jobs_arg(text: str) -> int:
    """``--jobs``: a positive integer (an argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


#: Most seeds one ``ecnsim run --seeds`` takes (a sweep is the tool beyond that).
MAX_SEEDS = 10_000


def size_arg(text: str) -> int:
    """``--max-memory``: a size such as ``8GB`` (an argparse type)."""
    try:
        return parse_bytes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _link_list(text: str) -> list[int | str]:
    """``--trace-links``: comma-separated link indices or names (an argparse type)."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise argparse.ArgumentTypeError(
            f"expected link indices or names like 0,2 or bottleneck, got {text!r}"
        )
    values: list[int | str] = []
    for item in items:
        try:
            index = int(item)
        except ValueError:
            values.append(item)
            continue
        if index < 0:
            raise argparse.ArgumentTypeError(
                f"expected link indices (integers >= 0) or names, got {text!r}"
            )
        values.append(index)
    return values


def link_indices(links: Sequence[int | str], spec: dict[str, Any]) -> list[int]:
    """``--trace-links``' names and indices as ``[[links]]`` indices of the scenario as it
    runs (templates expanded; an unnamed link is ``link<i>``); a :class:`UsageError`
    names an unknown link and lists the names there are."""
    given = [x.get("name") if isinstance(x, dict) else None for x in spec.get("links") or []]
    names = {str(n) if n else f"link{i}": i for i, n in enumerate(given)}
    out = []
    for link in links:
        if isinstance(link, int):
            out.append(link)
        elif link in names:
            out.append(names[link])
        else:
            shown = ", ".join(list(names)[:20]) + (", ..." if len(names) > 20 else "")
            raise UsageError(f"--trace-links: no link named {link!r}; the links are {shown}")
    return out


def prepare_out(option: str, value: str | os.PathLike[str] | None) -> Path | None:
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


def check_out_path(option: str, value: str | os.PathLike[str]) -> Path:
    """For a dry run: ``value`` is a directory, or could be made one; nothing is created.

    Raises :class:`UsageError` naming ``option`` if it is a file, or lies under one, or
    under a directory that cannot be written.
    """
    out = Path(value)
    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe == out and out.exists() and not out.is_dir():
        raise UsageError(f"{option}: {out} exists and is not a directory")
    if probe.exists() and not probe.is_dir():
        raise UsageError(f"{option}: cannot make {out}: {probe} is not a directory")
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{option}: cannot write into {probe}: permission denied")
    return out


def load_json_object(path: Path, text: str) -> dict[str, Any]:
    """A JSON scenario file's object; :class:`UsageError` if it is not JSON, is nested
    beyond what the parser takes, or is not an object."""
    from ecnsim.scenario.paths import MAX_NESTING, nesting_depth

    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not valid JSON: {e}") from None
    except RecursionError:
        raise UsageError(
            f"{path}: nested more than {MAX_NESTING} arrays or tables deep (a scenario is a "
            "few tables deep)"
        ) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a JSON scenario is an object, got {type(data).__name__}")
    if nesting_depth(data) > MAX_NESTING:
        raise UsageError(
            f"{path}: nested more than {MAX_NESTING} arrays or tables deep (a scenario is a "
            "few tables deep)"
        )
    return data


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
    from ecnsim.scenario.paths import parse_assignment

    try:
        return parse_assignment(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def scenario_dict(text: str) -> dict[str, Any]:
    """A TOML scenario as the data it holds, parsed by the core (errors name the field).

    The core writes a field the file leaves out as ``null``; TOML has no null, so each
    is dropped: the data is the file, and reads back as the file does (a ``null`` is
    not accepted everywhere an absent field is, e.g. a crr model's ``think_time``).
    """
    data: dict[str, Any] = _without_nulls(json.loads(_core.toml_to_json(text)))
    return data


def _without_nulls(value: Any) -> Any:
    """``value`` without the ``None`` entries of its tables, at every depth."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def apply_sets(scenario: dict[str, Any], sets: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """``scenario`` with each ``--set`` applied in order (``set_paths``: the sweep's code;
    on a scenario with templates, paths into ``topology``/``flow_groups`` first, then
    the others in the expanded scenario).

    A path that does not fit the scenario (an index beyond the list, a
    selector that matches nothing) is a :class:`UsageError` naming the
    ``--set``; a value the scenario does not allow is reported by the core
    at its field path when the simulation is built.
    """
    from ecnsim.scenario.paths import TEMPLATE_KEYS, PathError, parse_path, set_paths

    if scenario.get("topology") or scenario.get("flow_groups"):
        # Paths into the templates are set before the scenario is expanded, the others
        # after: one into the templates after one into what they make cannot be applied
        # in the order given, and would be overridden by it without a word.
        expanded: str | None = None
        for path, _ in sets:
            first = parse_path(path)[0]
            if first in ("nodes", "links", "flows") and expanded is None:
                expanded = path
            elif first in TEMPLATE_KEYS and expanded is not None:
                keys = " and ".join(TEMPLATE_KEYS)
                raise UsageError(
                    f"--set {path}: given after --set {expanded}; paths into the templates "
                    f"({keys}) are applied before the scenario is expanded and the others "
                    "after it, so this one could not be applied in the order given (the "
                    f"earlier one would win without a word): give the {keys} paths first"
                )
    try:
        set_paths(scenario, sets)
    except PathError as e:
        raise UsageError(f"--set {e.path}: {e}") from None
    return scenario


#: Tables of time series: after Ctrl-C they are written last (at a 1 ms interval they
#: can take far longer than the rest), and a second Ctrl-C leaves them out.
SERIES_TABLES = ("flow_series", "queue_series")

#: After Ctrl-C, at most this much time-series column data is written (8 bytes a cell):
#: what a Ctrl-C waits for is bounded by size, not left to the series (a 1 ms queue series
#: of 6 M rows, ~370 MiB, took 15 s to write). Larger series are left out and named.
PARTIAL_SERIES_MAX_BYTES = 64 * 2**20


def _column_bytes(table: Any) -> int:
    """A table's column data in bytes, as the Parquet writer reads it (8 bytes a cell)."""
    return len(table) * len(table.columns) * 8


def _write_results(results: Results, out: Path) -> None:
    """Write ``results`` into ``out``, holding Ctrl-C off until every file is written."""
    with deferred_sigint(f"writing results to {out}; please wait"):
        results.write_parquet(out)


def _write_partial(
    sim: Simulation, out: Path, stopped: str = "interrupted", held: HeldInterrupts | None = None
) -> None:
    """After Ctrl-C (or an error part-way): the results so far into ``out``; first every
    table but the time series and ``meta.json`` (with ``stopped``: why the run ended early),
    with Ctrl-C held off (what finished is never lost to a second Ctrl-C), then each series,
    within ``PARTIAL_SERIES_MAX_BYTES`` together; a second Ctrl-C leaves the rest out. Every
    series left out is named. ``held``: the run's Ctrl-C handler, which has held any Ctrl-C
    after the first until now (such a one counts as a second)."""
    message = f"still writing partial results to {out}; the time series will be left out"
    with deferred_sigint(message, reraise=False) as received:
        results = sim.results
        results.meta["stopped"] = stopped
        written = [n for n in results.tables if n not in SERIES_TABLES]
        results.write_parquet(out, tables=written)
        all_series = [n for n in results.tables if n in SERIES_TABLES]
    again = bool(received) or (held is not None and held.again)
    if held is not None:
        held.release()  # a Ctrl-C from here stops the series' writes
    announced = False
    # From here a second Ctrl-C may land anywhere (between two prints as well as inside a
    # write): whatever series it leaves unwritten are named below, always.
    try:
        series = []
        budget = PARTIAL_SERIES_MAX_BYTES
        for name in all_series:
            size = _column_bytes(results.tables[name])
            if size <= budget:
                series.append(name)
                budget -= size
            else:
                print(
                    f"{name}: {size / 2**20:.0f} MiB, over the "
                    f"{PARTIAL_SERIES_MAX_BYTES // 2**20} MiB of time series written after "
                    "Ctrl-C; run to the end for it, or sample less (simulation.sample_interval, "
                    "sample_queues)",
                    file=sys.stderr,
                )
        if series and not again:
            print(
                f"partial results (finished=false) written to {out}; writing its time series "
                f"({', '.join(series)}; Ctrl-C again leaves them out)",
                file=sys.stderr,
            )
            announced = True
            for name in series:
                # The file first, then meta.json listing it: a Ctrl-C between them leaves a
                # file that meta.json does not list, never a listed one that is missing.
                results.write_parquet(out, tables=[name], meta_tables=[*written, name])
                written.append(name)
    except KeyboardInterrupt:
        pass
    if not announced:
        print(f"partial results (finished=false) written to {out}", file=sys.stderr)
    # What meta.json lists is what was written: a Ctrl-C inside a write, after meta.json took
    # the series but before the loop noted it, must not name a written series as left out.
    try:
        listed = set(json.loads((out / "meta.json").read_text(encoding="utf-8"))["tables"])
    except (OSError, ValueError, KeyError, TypeError):
        listed = set(written)
    left = [n for n in all_series if n not in listed]
    if left:
        print(f"time series left out: {', '.join(left)}", file=sys.stderr)


def build_simulation(
    path: Path,
    text: str,
    *,
    seed: int | None,
    max_memory: int | None,
    sets: Sequence[tuple[str, Any]] = (),
) -> Simulation:
    """The simulation of a scenario file: TOML, or JSON (same schema) if it ends in ``.json``;
    ``sets`` (``--set``) applied first."""
    try:
        return _build_simulation(path, text, seed=seed, max_memory=max_memory, sets=sets)
    except SpecError as e:
        raise _sweep_file_hint(path, e) or e from None


def _sweep_file_hint(path: Path, error: SpecError) -> UsageError | None:
    """The error of a sweep file given where a scenario belongs, saying so: its first key
    the scenario schema lacks (``base``, ``grid``, ...) is otherwise reported as a mere
    unknown field, and the user is left to guess which command reads the file."""
    from ecnsim.sweep.spec import _TOP_LEVEL_KEYS as SWEEP_KEYS

    key, sep, rest = str(error).partition(": ")
    if not sep or key not in SWEEP_KEYS or not rest.startswith(f"unknown field `{key}`"):
        return None
    return UsageError(
        f"{error}; {path} looks like a sweep file (it has `{key}`): run it with "
        f"`ecnsim sweep {path}`"
    )


def _build_simulation(
    path: Path,
    text: str,
    *,
    seed: int | None,
    max_memory: int | None,
    sets: Sequence[tuple[str, Any]],
) -> Simulation:
    from ecnsim.simulation import Simulation

    if path.suffix.lower() == ".json":
        data = load_json_object(path, text)
        if sets:
            text = json.dumps(apply_sets(data, sets))
        # A file: every non-zero time and rate needs its unit, as in TOML.
        return Simulation.from_json_str(text, seed=seed, max_memory=max_memory)
    if sets:
        # The changed scenario is checked as a file is (units required), through the JSON path.
        text = json.dumps(apply_sets(scenario_dict(text), sets))
        return Simulation.from_json_str(text, seed=seed, max_memory=max_memory)
    return Simulation.from_toml_str(text, seed=seed, max_memory=max_memory)


def resolved_scenario(
    path: Path, text: str, *, seed: int | None, sets: Sequence[tuple[str, Any]] = ()
) -> dict[str, Any]:
    """The scenario file ``text`` (of ``path``) as it would run: ``sets`` applied, templates
    expanded, ``seed`` (if given) written in; every field checked by the core."""
    from ecnsim.scenario.spec import Scenario

    if path.suffix.lower() == ".json":
        data = load_json_object(path, text)
        # A file: every non-zero time and rate needs its unit, as in TOML.
        _core.check_file_json(json.dumps(data))
    else:
        data = scenario_dict(text)
    apply_sets(data, sets)
    # As a run checks it: a file's rules (units) on the scenario with --set applied.
    _core.check_file_json(json.dumps(data))
    if seed is not None:
        data.setdefault("simulation", {})["seed"] = seed
    # Checked before expanding, so an error is reported at the template's field.
    return Scenario.from_dict(data).check().expanded().to_dict()


def with_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (an expanded scenario) with every value the core would take written out: the
    profile's TCP and queue defaults per flow and per link direction, as a run's ``meta.json``
    has them (``resolved_spec``). The core builds the simulation (nothing runs) and says."""
    from ecnsim.scenario.spec import Scenario
    from ecnsim.simulation import Simulation

    resolved: dict[str, Any] = _without_nulls(Simulation(Scenario.from_dict(data)).results.spec)
    return _common_tcp_hoisted(resolved)


def _common_tcp_hoisted(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with each TCP value that every connection's table shares moved to the
    scenario's ``[tcp]`` table (which gives each flow and app its defaults), so that a flow's
    or app's own table keeps only what sets it apart. Every connection resolves as before:
    a value is moved only when every ``tcp`` table of a flow or app has it, equal, and the
    scenario's table has no other value for it."""
    owners = [e for key in ("flows", "apps") for e in spec.get(key, []) if "tcp" in e]
    if not owners:
        return spec
    top = spec.setdefault("tcp", {})
    first = owners[0]["tcp"]
    common = {
        k: v
        for k, v in first.items()
        if all(k in o["tcp"] and o["tcp"][k] == v for o in owners[1:]) and top.get(k, v) == v
    }
    top.update(common)
    for o in owners:
        o["tcp"] = {k: v for k, v in o["tcp"].items() if k not in common}
        if not o["tcp"]:
            del o["tcp"]
    return spec


def print_resolved(args: argparse.Namespace, path: Path, text: str) -> int:
    """``ecnsim run --print-resolved``: the expanded scenario on stdout, nothing run."""
    for option, given in (
        ("--out", args.out),
        ("--seeds", args.seeds),
        ("--pcap", args.pcap),
        ("--trace-ns2", args.trace_ns2),
    ):
        if given is not None:
            raise UsageError(f"{option}: --print-resolved prints the scenario and runs nothing")
    data = resolved_scenario(path, text, seed=args.seed, sets=args.set or ())
    from ecnsim.scenario.spec import Scenario

    if args.defaults:
        data = with_defaults(data)
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(Scenario.from_dict(data).to_toml())
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    text = read_text_file(path)
    if args.format is not None and not args.print_resolved:
        raise UsageError("--format: chooses the output of --print-resolved; give that too")
    if args.defaults and not args.print_resolved:
        raise UsageError(
            "--defaults: writes out the defaults in --print-resolved's output; give that too"
        )
    if args.print_resolved:
        return print_resolved(args, path, text)
    if args.seeds is not None:
        return _run_seeds(args, path, text)
    out = prepare_out("--out", args.out)
    if args.pcap is not None:
        if args.pcap.endswith(".pcap") and not Path(args.pcap).is_dir():
            raise UsageError(
                f"--pcap: takes a directory, got {args.pcap!r}: one capture file per link "
                "direction is written into it (<link>-<from>-<to>.pcap)"
            )
        prepare_out("--pcap", args.pcap)
    sim = build_simulation(
        path, text, seed=args.seed, max_memory=args.max_memory, sets=args.set or ()
    )
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
                links=None
                if args.trace_links is None
                else link_indices(args.trace_links, sim.spec),
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
    # After the first Ctrl-C, later ones are held until the partial results' tables are
    # written: one landing before `_write_partial` takes over would leave `--out` empty.
    with hold_sigint_after_first() as interrupts:
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
                _write_partial(sim, out, stopped, interrupts)
            return code
    results = sim.results
    # Results first: printing may fail (a closed pipe), writing must not be skipped.
    if out is not None:
        _write_results(results, out)
    perf = sim.perf()
    print(
        f"{path.name}: {sim.duration:g} s simulated in {wall:.2f} s wall, seed "
        f"{results.meta.get('seed', '?')}, {perf['events']} events, "
        f"{perf['packet_hops']} packet-hops, digest {results.digest:016x}"
    )
    if not args.quiet:
        print_summary(results, sys.stdout)
    if out is not None:
        print(f"{'' if args.quiet else chr(10)}results written to {out}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# ecnsim run --seeds: one scenario, several seeds, in parallel
# ---------------------------------------------------------------------------


def _run_one_seed(
    path: Path,
    text: str,
    seed: int,
    max_memory: int | None,
    out: str | None,
    sets: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any]:
    """Run the scenario ``text`` (of file ``path``, ``sets`` applied) with ``seed`` in this
    (worker) process; write its results to ``out`` if given. Returns what the parent prints,
    and the checksum of the tables that tells seeds that changed nothing."""
    from ecnsim.analysis.aggregate import summary_metrics
    from ecnsim.sweep.execute import tables_checksum

    sim = build_simulation(path, text, seed=seed, max_memory=max_memory, sets=sets)
    started = time.perf_counter()
    error = None
    try:
        sim.run()
    except (SimulationError, ResourceError) as e:
        error = str(e)
    wall = time.perf_counter() - started
    results = sim.results
    if out is not None:
        results.write_parquet(out)
    perf = sim.perf()
    return {
        "seed": seed,
        "digest": results.digest,
        "tables_checksum": tables_checksum(results),
        # As a sweep's worker keeps them: the summary metrics, for the table across seeds.
        "metrics": summary_metrics(results),
        # A mix's flows grouped by tcp.cc (None for one algorithm), for the table across seeds.
        "by_cc": cc_seed_metrics(results),
        "finished": results.finished,
        "error": error,
        "now": sim.now,
        "duration": sim.duration,
        "events": perf["events"],
        "packet_hops": perf["packet_hops"],
        "wall_s": wall,
        "warnings": sim.warnings,
    }


def _run_seeds(args: argparse.Namespace, path: Path, text: str) -> int:
    """``ecnsim run --seeds``: every seed in its own process, ``--jobs`` at a time.

    Each seed's run is the run ``--seed`` gives (same digest, same tables): a
    run depends on its scenario and seed alone, not on what runs beside it.
    """
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    from ecnsim._system import default_max_memory
    from ecnsim.sweep.execute import (
        _stop_pool,
        _worker_init,
        default_jobs,
        identical_seeds_message,
        same_for_every_seed,
    )

    if args.seed is not None:
        raise UsageError("give --seed or --seeds, not both")
    if args.trace_ns2 or args.pcap:
        raise UsageError("--trace-ns2/--pcap trace one run: use --seed, not --seeds")
    seeds: list[int] = args.seeds
    out = prepare_out("--out", args.out)
    # Check the scenario once, here, so a bad one is one error, not one per seed.
    sets = args.set or ()
    build_simulation(path, text, seed=seeds[0], max_memory=args.max_memory, sets=sets)
    jobs = max(1, min(args.jobs or default_jobs(), len(seeds)))
    # Runs side by side: each gets its share of the memory limit.
    total = args.max_memory or default_max_memory()
    share = None if total is None else max(total // jobs, 1)
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(), None)
    )
    futures: dict[int, Future[dict[str, Any]]] = {}
    started = time.perf_counter()
    try:
        for seed in seeds:
            seed_out = None if out is None else str(out / f"seed-{seed}")
            futures[seed] = pool.submit(_run_one_seed, path, text, seed, share, seed_out, sets)
        done = {seed: f.result() for seed, f in futures.items()}
    except KeyboardInterrupt:
        _stop_pool(pool)
        finished = [s for s, f in futures.items() if f.done() and not f.cancelled()]
        print(f"interrupted; {len(finished)} of {len(seeds)} seeds finished", file=sys.stderr)
        if out is not None and finished:
            print(f"their results are in {out}/seed-<N>", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    wall = time.perf_counter() - started
    code = EXIT_OK
    print(
        f"{path.name}: {len(seeds)} seeds, {jobs} at a time, {wall:.2f} s wall "
        f"({sum(r['wall_s'] for r in done.values()):.2f} s of runs)"
    )
    for warning in done[seeds[0]]["warnings"]:
        print(f"warning: {printable(warning)}", file=sys.stderr)
    print(f"{'seed':>6}  {'digest':16}  {'events':>12}  {'packet-hops':>12}  {'wall_s':>7}")
    for seed in seeds:
        r = done[seed]
        print(
            f"{seed:>6}  {r['digest']:016x}  {r['events']:>12}  {r['packet_hops']:>12}  "
            f"{r['wall_s']:>7.2f}"
        )
        if r["error"] is not None:
            code = EXIT_USAGE
            print(
                f"seed {seed}: error: {printable(r['error'])}\nstopped at {r['now']:g} s of "
                f"{r['duration']:g} s simulated",
                file=sys.stderr,
            )
    # As a sweep warns of its points: seeds that changed nothing are not repetitions.
    finished = [r["tables_checksum"] for r in done.values() if r["error"] is None]
    if len(finished) == len(seeds) and same_for_every_seed((0, c) for c in finished):
        message = identical_seeds_message(f"{path.name}: the runs", len(seeds))
        print(f"warning: {message}", file=sys.stderr)
    if not args.quiet:
        print_seed_summary([done[s] for s in seeds if done[s]["error"] is None])
    if out is not None:
        print(f"\nresults written to {out}/seed-<N> (one directory per seed)")
    return code


def print_seed_summary(runs: Sequence[dict[str, Any]]) -> None:
    """The summary metrics across the seeds' runs, mean ± 95 % CI half-width, as a sweep
    prints them per point (the same aggregation: :func:`ecnsim.analysis.aggregate.aggregate`
    and :func:`~ecnsim.analysis.aggregate.summary_table`); for a mix of congestion controls,
    the same across seeds per ``tcp.cc`` (as one run's summary groups its flows)."""
    import warnings

    import pandas as pd

    from ecnsim.analysis.aggregate import DEFAULT_METRICS, aggregate, summary_table
    from ecnsim.cli._common import cc_seed_table

    if not runs:
        return
    per_run = pd.DataFrame(
        [{"key": str(r["seed"]), **{m: r["metrics"][m] for m in DEFAULT_METRICS}} for r in runs]
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = summary_table(aggregate(per_run, [], list(DEFAULT_METRICS)), [])
        cc_table = cc_seed_table([(str(r["seed"]), r.get("by_cc")) for r in runs])
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    print(f"\nmean ± 95% CI half-width over {len(runs)} seed(s):")
    print(table.to_string(index=False))
    if cc_table is not None:
        over = f"mean ± 95% CI half-width over {len(runs)} seed(s)"
        print(f"\nby congestion control (tcp.cc), {over}:")
        print(cc_table.to_string(index=False))


def add_parsers(sub: Any) -> None:
    """Register ``ecnsim run``."""
    run = sub.add_parser("run", help="run a TOML scenario and print a summary")
    run.add_argument(
        "scenario",
        metavar="SCENARIO.toml",
        help="scenario file (TOML; or JSON of the same schema, if it ends in .json)",
    )
    run.add_argument("--out", metavar="DIR", help="write <table>.parquet and meta.json into DIR")
    run.add_argument("--seed", type=seed_arg, help="seed, 0 to 2^64-1 (overrides the scenario's)")
    run.add_argument(
        "--seeds",
        type=seeds_arg,
        metavar="LIST",
        help="run once per seed (e.g. 1-8 or 1,3,10-12), in parallel, each as --seed would; "
        "--out DIR gets DIR/seed-<N> per seed",
    )
    run.add_argument(
        "--jobs",
        "-j",
        type=jobs_arg,
        metavar="N",
        help="with --seeds: runs at a time (default: one per CPU)",
    )
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
    run.add_argument(
        "--print-resolved",
        action="store_true",
        help="print the scenario as it would run (templates and flow groups expanded, --set and "
        "--seed applied, every field checked) and run nothing; it runs as the file would",
    )
    run.add_argument(
        "--format",
        choices=("toml", "json"),
        help="with --print-resolved: TOML (the default) or JSON",
    )
    run.add_argument(
        "--defaults",
        action="store_true",
        help="with --print-resolved: write out every value the profile supplies (each flow's "
        "TCP parameters, each link direction's queue), as a run's meta.json resolved_spec",
    )
    run.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress bar and no summary tables: the one-line result and warnings only",
    )
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
        type=_link_list,
        metavar="L,M",
        help="trace only these links ([[links]] names, or indices)",
    )
    run.add_argument(
        "--trace-nodes", metavar="A,B", help="trace only link directions at these nodes"
    )
    run.add_argument("--trace-flows", metavar="F,G", help="trace only these flows or apps (names)")
    run.set_defaults(func=cmd_run)
