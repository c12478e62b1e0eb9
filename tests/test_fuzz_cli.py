"""A fuzzer where users type (issue 35 item 3): the ``ecnsim`` command line.

``tests/test_fuzz.py`` fuzzes the scenario schema through the Python API; this
one drives ``ecnsim`` itself (in this process, through ``ecnsim.cli.main``)
with hostile command lines: scenario files in TOML (the examples, mutated line
by line) and JSON (``test_fuzz``'s mutated documents), ``--set`` paths and
values, sweep files (``sweep --dry-run``), study parameters (``study show``),
``emulate``'s refusals (``emulate --dry-run``), ``bench``, ``report`` and the
options of each.

Every input must end in exit code 0, 2 (with an ``error:`` line) or 3
(``emulate`` on a machine that cannot), without a traceback, within
:data:`PER_INPUT_S` seconds (a hang fails instead of stalling CI). The CI
profile tries :data:`CI_EXAMPLES` inputs (seconds in all;
``ECNSIM_FUZZ_CLI_EXAMPLES`` changes it); a failing input is shrunk and saved
to ``tests/fuzz_corpus/cli/`` as a regression case, which :func:`test_corpus`
then runs every time (commit it with the fix).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecnsim.cli import main

from .conftest import ROOT
from .test_fuzz import documents

EXAMPLES = ROOT / "examples"
CORPUS_DIR = Path(__file__).parent / "fuzz_corpus" / "cli"

#: Wall-clock limit of one input; past it the input counts as a hang and fails.
PER_INPUT_S = 30.0

#: Inputs per CI run.
CI_EXAMPLES = 60

#: Exit codes an input may end with: success, bad input, machine cannot emulate.
ALLOWED_CODES = {0, 2, 3}


class Hang(BaseException):
    """Raised in the input's thread when it runs past :data:`PER_INPUT_S`."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this thread after ``seconds`` of wall time (SIGALRM; the
    core checks for signals while it runs, so a simulation is stopped too)."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------------
# What an input is: argv with placeholders, and the files it names
# ---------------------------------------------------------------------------

#: Placeholders in argv: ``{tmp}`` is the input's own empty directory, ``{file}`` an
#: existing regular file, ``{examples}`` the examples directory. Files of the input
#: (``files``: name -> text) are written into ``{tmp}`` first.


def materialize(case: dict[str, Any], tmp: Path) -> list[str]:
    """Write ``case``'s files into ``tmp`` and return its argv with placeholders filled."""
    (tmp / "a-file").write_text("not a directory\n")
    for name, text in case.get("files", {}).items():
        (tmp / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    subs = {"{tmp}": str(tmp), "{file}": str(tmp / "a-file"), "{examples}": str(EXAMPLES)}
    argv = []
    for arg in case["argv"]:
        for key, value in subs.items():
            arg = arg.replace(key, value)
        argv.append(arg)
    return argv


def exercise(case: dict[str, Any], tmp: Path) -> str:
    """Run one input; its outcome (``"ok"``, ``"refused"``, ``"unavailable"``).

    Raises AssertionError (or :class:`Hang`) when it breaks a rule above.
    """
    argv = materialize(case, tmp)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp)  # so that defaults such as ./ecnsim-store land in the input's directory
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            time_limit(PER_INPUT_S),
        ):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse's usage errors
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        os.chdir(cwd)
    stderr = err.getvalue()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code in ALLOWED_CODES, f"exit {code}: {stderr[-2000:]}"
    if code == 2:
        assert "error:" in stderr, f"exit 2 without an error line: {stderr[-2000:]}"
    # The last of an option given twice is the one that counts.
    last = dict(itertools.pairwise(case["argv"]))
    bad = [o for o in OUT_OPTIONS if last.get(o) in BAD_PATHS]
    if last.get("--trace-ns2") == "{file}":  # a file option: an existing file is overwritten
        bad.remove("--trace-ns2")
    argv = case["argv"]
    assert not (bad and code == 0), f"{bad[0]} in {argv}: cannot be written, and was accepted"
    return {0: "ok", 2: "refused", 3: "unavailable"}[code]


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


def _short(text: str) -> str:
    """An example's text with every run shortened to 1 s (and no warm-up)."""
    text = re.sub(r'(duration"? = )"[^"]*"', r'\1"1s"', text)
    return re.sub(r'(warmup"? = )"[^"]*"', r'\1"0s"', text)


SCENARIOS = {
    p.name: _short(p.read_text())
    for p in sorted(EXAMPLES.glob("*.toml"))
    if not p.name.startswith("sweep_")
}
SWEEPS = {p.name: _short(p.read_text()) for p in sorted(EXAMPLES.glob("sweep_*.toml"))}

#: TOML values that a user might type, or a fuzzer would.
TOML_VALUES = [
    '""', '"x"', "0", "-1", "1e400", "nan", "inf", "-inf", "9223372036854775807",
    "-9223372036854775808", "[]", "{}", "[[]]", "true", '"10Gbps"', '"-5ms"', '"1e-30s"',
    '"\\u0000"', '"\\u202e"', '"é"', '"[*]"', "[1, 2, 3]", '{ type = "red" }', "1979-05-27",
    '"' + "x" * 300 + '"', "[" * 40 + "]" * 40,
]  # fmt: skip
TOML_LINES = [
    "[grid]", "[set]", "[[flows]]", "[simulation]", "x = 1", 'seeds = "1-3"', "seeds = []",
    'base = "/nonexistent.toml"', 'base = "{file}"', '"tcp.cc" = []', '"a..b" = [1]',
    'store = "{file}"', "repetitions = 0", "repetitions = -1", "[tcp]", "=", "[", "\x00",
    'name = "\x1b[31m"', '"links[99].rate" = ["1Mbps"]',
]  # fmt: skip


@st.composite
def toml_text(draw: st.DrawFn, base: str) -> str:
    """``base`` with a few line-level mutations: a value replaced, a line deleted,
    duplicated or inserted."""
    lines = base.splitlines()
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["value", "delete", "duplicate", "insert"]))
        if op == "value" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = f"{key}= {draw(st.sampled_from(TOML_VALUES))}"
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        else:
            lines.insert(i, draw(st.sampled_from(TOML_LINES)))
    return "\n".join(lines) + "\n"


PATH_PARTS = [
    "tcp", "cc", "mss", "links", "queue", "max_p", "limit_packets", "rate", "simulation",
    "duration", "seed", "topology", "senders", "type", "flows", "flow_groups", "count",
    "name", "nodes", "apps", "model", "x", "é", "queue_ab", "initial_window",
]  # fmt: skip
PATH_INDICES = [
    "[0]", "[1]", "[*]", "[name=bottleneck]", "[group=bulk]", "[99]", "[-1]", "[",
    "]", "[]", "[name=]", "[99999999999999999999]", "",
]  # fmt: skip
SET_VALUES = [
    "newreno", "reno", "cubic", "0", "-1", "0.2", "1e308", "nan", "NaN", "Infinity",
    "[]", "{}", '{"type": "red"}', "[1,2]", "true", "null", "10Mbps", "-5ms", "",
    '"x"', "\x00", "é" * 5, "[" * 70 + "]" * 70, "9" * 40, "300ms",
]  # fmt: skip


@st.composite
def set_paths(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(PATH_PARTS)) + draw(st.sampled_from(PATH_INDICES)))
    sep = draw(st.sampled_from([".", ".", ".", "..", ""]))
    return sep.join(parts)


@st.composite
def assignment(draw: st.DrawFn) -> str:
    long_path = st.builds(lambda n: "a." * n + "b", st.sampled_from(DEPTHS))
    path = draw(st.one_of(set_paths(), st.text(max_size=12), long_path))
    deep = st.builds(lambda n: "[" * n + "]" * n, st.sampled_from(DEPTHS))
    value = draw(st.one_of(st.sampled_from(SET_VALUES), st.text(max_size=8), deep))
    return f"{path}{draw(st.sampled_from(['=', '=', '==', ' = ', '']))}{value}"


#: Paths that cannot be made into a directory or written; an option that writes there
#: must be refused, even in a dry run.
BAD_PATHS = ["{file}", "{file}/sub", "/proc/ecnsim-no-such-dir"]
#: The options that name where output goes.
OUT_OPTIONS = ("--out", "--pcap", "--trace-ns2", "--pcap-dir")
#: Deeply nested values: what the core takes, and what Python's recursion does not.
DEPTHS = [3, 70, 1000, 100_000]
NUMBERS = [
    "0",
    "1",
    "-1",
    "2",
    "1.5",
    "nan",
    "inf",
    "1e30",
    "",
    "x",
    "0x10",
    "18446744073709551616",
]
PATHS = ["{tmp}/out", *BAD_PATHS, "", "{tmp}", "-"]
BENCH = "dumbbell-100"
SEEDS = ["1-3", "3-1", "1,1", "", "-", "1-", "0-20000", "x", "1,,2", "2**64", "1-2,2-3"]

#: ``ecnsim run`` options and the values tried for each (no value: a flag).
RUN_OPTIONS: dict[str, list[str] | None] = {
    "--seed": NUMBERS,
    "--print-resolved": None,
    "--defaults": None,
    "--format": ["toml", "json", "yaml", ""],
    "--quiet": None,
    "--trace-links": ["0", "0,1", "-1", "x", "", "99", "bottleneck", "0,,1"],
    "--trace-nodes": ["h1", "", "nope"],
    "--trace-flows": ["f0", "", "nope"],
    "--trace-ns2": ["{tmp}/t.tr", *BAD_PATHS],
    "--pcap": [*PATHS, "{tmp}/x.pcap"],
    "--pcap-drops": None,
    "--max-memory": ["1GB", "0", "-1", "1", "x", "1e30GB", ""],
    "--out": PATHS,
    "--jobs": NUMBERS,
    "--seeds": SEEDS,
    "--set": None,  # drawn from `assignment()`
}
STUDIES = ["hetero", "aecn", "ecnplus", "rfc2415", "rfc2884", "nope", ""]
STUDY_SETS = [
    "seeds=0", "seeds=-1", "seeds=x", "variant=nope", "variant=", "n_values=", "n_values=0",
    "max_p_values=nan", "max_p_values=0.1,0.5", "duration=-1s", "duration=1e40s", "x=1",
    "=", "tcp.min_rto=1s", "tcp.min_rto=-1s", "links[0].rate=0", "quick=1",
]  # fmt: skip


def _options(draw: st.DrawFn, options: dict[str, list[str] | None]) -> list[str]:
    argv: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from(sorted(options)))
        values = options[name]
        if name == "--set":
            argv += ["--set", draw(assignment())]
        elif values is None:
            argv.append(name)
        else:
            argv += [name, draw(st.sampled_from(values))]
    return argv


@st.composite
def run_case(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(SCENARIOS)))
        files = {"s.toml": draw(toml_text(SCENARIOS[name]))}
        scenario = "{tmp}/s.toml"
    else:
        text = json.dumps(draw(documents()), default=str)
        if draw(st.integers(0, 4)) == 0:
            n = draw(st.sampled_from(DEPTHS))
            text = text.replace('"name": ', '"name": ' + "[" * n + "1" + "]" * n + ', "x": ', 1)
        files = {"s.json": text}
        scenario = "{tmp}/s.json"
    argv = ["run", scenario, *_options(draw, RUN_OPTIONS)]
    if "--seeds" in argv and "--print-resolved" not in argv:
        # Several seeds start a process pool: too slow per input, and argparse checks the
        # list before it. The list is fuzzed; the runs are left to test_cli.
        argv.append("--print-resolved")
    return {"argv": argv, "files": files}


@st.composite
def sweep_case(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(SWEEPS)))
    files = {"sw.toml": draw(toml_text(SWEEPS[name]))}
    # A base file beside it, as in examples/, shortened.
    files.update((n, t) for n, t in SCENARIOS.items() if f'"{n}"' in files["sw.toml"])
    opts = {"--jobs": NUMBERS, "--series": None, "--quiet": None}
    argv = ["sweep", "{tmp}/sw.toml", *_options(draw, opts)]
    out = draw(st.sampled_from([None, *PATHS]))
    if out is not None:
        argv += ["--out", out]
    if out not in BAD_PATHS or draw(st.booleans()):
        # A sweep that would run is only planned (runs are too slow for a fuzzer); one
        # with a store that cannot be written must be refused before any run.
        argv.append("--dry-run")
    return {"argv": argv, "files": files}


@st.composite
def study_case(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.integers(0, 3)) == 0:
        # `study run` only with a filter or output that must be refused before any run.
        bad = [["--only", ""], ["--only", ";"], ["--only", " "]]
        bad += [["--out", p] for p in BAD_PATHS]
        name = draw(st.sampled_from(STUDIES[:-2]))
        return {"argv": ["study", "run", name, "--quick", *draw(st.sampled_from(bad))]}
    argv = ["study", "show", draw(st.sampled_from(STUDIES))]
    for _ in range(draw(st.integers(0, 3))):
        argv += ["--set", draw(st.one_of(st.sampled_from(STUDY_SETS), assignment()))]
    if draw(st.booleans()):
        argv += ["--seeds", draw(st.sampled_from(NUMBERS + SEEDS))]
    if draw(st.booleans()):
        argv.append("--quick")
    return {"argv": argv}


@st.composite
def emulate_case(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(SCENARIOS)))
    opts: dict[str, list[str] | None] = {
        "--seed": NUMBERS,
        "--late-threshold-us": NUMBERS,
        "--pool-packets": NUMBERS,
        "--realtime-priority": NUMBERS,
        "--out": PATHS,
        "--quiet": None,
    }
    argv = ["emulate", "{tmp}/s.toml", "--dry-run", *_options(draw, opts)]
    return {"argv": argv, "files": {"s.toml": draw(toml_text(SCENARIOS[name]))}}


@st.composite
def other_case(draw: st.DrawFn) -> dict[str, Any]:
    until = ["-1", "nan", "inf", "-inf", "x", "1"]
    refused = ["-1", "nan", "-inf", "x"]
    return draw(
        st.sampled_from(
            [{"argv": ["report", p]} for p in ["{file}", "{tmp}", "/proc/x", ""]]
            + [
                {"argv": ["bench", "--until", u, "--write-scenario", "{tmp}/b.json", BENCH]}
                for u in until
            ]
            # Without --write-scenario a benchmark runs: only values that must be refused.
            + [{"argv": ["bench", "--until", u, BENCH]} for u in refused]
            + [{"argv": ["runs", "--out", p]} for p in ["{file}", "{tmp}", "/proc/x"]]
            + [{"argv": [c]} for c in ["", "nope", "-x", "--version"]]
        )
    )


cases = st.one_of(run_case(), run_case(), sweep_case(), study_case(), emulate_case(), other_case())


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def _corpus() -> list[Path]:
    return sorted(CORPUS_DIR.glob("*.json"))


def save(case: dict[str, Any]) -> Path:
    """Keep a failing input as a regression case (named by its content)."""
    text = json.dumps(case, indent=1, ensure_ascii=False, sort_keys=True)
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    path = CORPUS_DIR / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("path", _corpus(), ids=[p.stem for p in _corpus()])
def test_corpus(path: Path, tmp_path: Path) -> None:
    exercise(json.loads(path.read_text(encoding="utf-8")), tmp_path)


def test_a_hang_fails(tmp_path: Path) -> None:
    """The time limit holds a simulation that would run for long."""
    slow = SCENARIOS["dumbbell.toml"].replace('duration = "1s"', 'duration = "3000s"')
    case = {"argv": ["run", "{tmp}/s.toml", "-q"], "files": {"s.toml": slow}}
    global PER_INPUT_S
    saved, PER_INPUT_S = PER_INPUT_S, 0.5
    try:
        with pytest.raises(Hang):
            exercise(case, tmp_path)
    finally:
        PER_INPUT_S = saved


def _signature(error: BaseException) -> str:
    """A failure's kind, to group failures by: its last line without numbers and paths."""
    last = (str(error).strip().splitlines() or [type(error).__name__])[-1]
    last = re.sub(r"/\S+", "PATH", last)
    return f"{type(error).__name__}: {re.sub(r'[0-9]+', 'N', last)[:160]}"


def _fuzz(examples: int, tmp_root: Path) -> Counter[str]:
    """Try ``examples`` inputs; the counts of their outcomes.

    With ``ECNSIM_FUZZ_CLI_SURVEY=1`` failures are not raised but counted by kind, and
    the first input of each kind is saved to the corpus: how the list of tracebacks
    in issue 35 is re-derived (run it on the commit before the fixes).
    """
    counts: Counter[str] = Counter()
    failing: list[dict[str, Any]] = []
    survey = os.environ.get("ECNSIM_FUZZ_CLI_SURVEY") == "1"
    kinds: dict[str, dict[str, Any]] = {}
    n = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases)
    def one(case: dict[str, Any]) -> None:
        nonlocal n
        n += 1
        tmp = tmp_root / f"in{n}"
        tmp.mkdir()
        command = case["argv"][0] if case["argv"] else "-"
        try:
            counts[f"{command}: {exercise(case, tmp)}"] += 1
        except (AssertionError, Hang, Exception) as e:
            if survey:
                kind = f"{command}: FAILED {_signature(e)}"
                counts[kind] += 1
                kinds.setdefault(kind, case)
                return
            failing.append(case)
            raise

    try:
        one()
    except BaseException:
        if failing:
            # Hypothesis replays the shrunk input last.
            print(f"failing input saved as {save(failing[-1])}; commit it with the fix")
        raise
    for kind, case in sorted(kinds.items()):
        print(f"{kind}\n  saved as {save(case)}")
    return counts


def test_fuzz_cli_ci_profile(tmp_path: Path) -> None:
    started = time.monotonic()
    counts = _fuzz(int(os.environ.get("ECNSIM_FUZZ_CLI_EXAMPLES", str(CI_EXAMPLES))), tmp_path)
    print(f"fuzz cli: {sum(counts.values())} inputs in {time.monotonic() - started:.1f} s:")
    for key, count in sorted(counts.items()):
        print(f"  {key}: {count}")
    assert any(k.endswith(": refused") for k in counts)
    assert any(k.endswith(": ok") for k in counts)


@pytest.mark.fuzz
def test_fuzz_cli_long_profile(tmp_path: Path) -> None:
    if os.environ.get("ECNSIM_FUZZ") != "long":
        pytest.skip("the long profile: ECNSIM_FUZZ=long pytest -m fuzz tests/test_fuzz_cli.py -s")
    started = time.monotonic()
    counts = _fuzz(int(os.environ.get("ECNSIM_FUZZ_CLI_EXAMPLES", "2000")), tmp_path)
    print(f"fuzz cli: {sum(counts.values())} inputs in {time.monotonic() - started:.1f} s:")
    for key, count in sorted(counts.items()):
        print(f"  {key}: {count}")
