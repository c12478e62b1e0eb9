"""Bad input at the command line (issue 35 item 2): one ``error:`` line and exit code 2.

Each case here was a Python traceback (exit 1) or a silent success before; each
runs ``ecnsim`` in this process, so the whole file takes about a second.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ecnsim.cli import main

from .conftest import ROOT

SWEEP = ROOT / "examples" / "sweep_buffers.toml"
SCENARIO = ROOT / "examples" / "single_flow.toml"


def run_main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """``ecnsim ARGS`` in this process: exit code, stdout, stderr (argparse's exits included)."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error(code: int, err: str, *words: str) -> None:
    """Exit 2 with an ``error:`` line naming ``words``, and no traceback."""
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], err


@pytest.mark.parametrize("dry_run", [False, True])
def test_sweep_out_that_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: bool
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    code, _, err = run_main(capsys, "sweep", SWEEP, "--out", afile, *(["--dry-run"] * dry_run))
    assert_one_error(code, err, "--out", "not a directory")


def test_sweep_dry_run_out_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    code, _, err = run_main(capsys, "sweep", SWEEP, "--out", afile / "store", "--dry-run")
    assert_one_error(code, err, "--out", "not a directory")
    assert not (afile / "store").exists()


def test_sweep_out_unwritable(capsys: pytest.CaptureFixture[str]) -> None:
    # /proc refuses new directories, even to root.
    code, _, err = run_main(capsys, "sweep", SWEEP, "--out", "/proc/ecnsim-no-such-dir")
    assert_one_error(code, err, "--out", "cannot write")


def test_sweep_store_from_the_environment_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    monkeypatch.setenv("ECNSIM_STORE", str(afile))
    code, _, err = run_main(capsys, "sweep", SWEEP)
    assert_one_error(code, err, "store", "not a directory")


def test_study_out_unwritable(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(
        capsys, "study", "run", "aecn", "--quick", "--out", "/proc/ecnsim-no-such-dir"
    )
    assert_one_error(code, err, "--out", "cannot write")


@pytest.mark.parametrize("only", ["", " ", ";"])
def test_study_only_empty_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], only: str
) -> None:
    out = tmp_path / "study"
    code, _, err = run_main(capsys, "study", "run", "aecn", "--quick", "--out", out, "--only", only)
    assert_one_error(code, err, "--only", "empty")
    assert not (out / "store").exists()


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 500 + "1" + "}" * 500])
def test_deep_json_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(text)
    for extra in ([], ["--print-resolved"]):
        code, _, err = run_main(capsys, "run", path, *extra)
        assert_one_error(code, err, "deep.json", "nested")


@pytest.mark.parametrize(
    "assignment",
    [
        "a." * 10_000 + "b=1",
        "tcp.cc=" + "[" * 900 + "]" * 900,
        "tcp.cc=" + "[" * 100_000 + "]" * 100_000,
    ],
    ids=["path-10k-deep", "value-900-deep", "value-100k-deep"],
)
def test_deep_set(capsys: pytest.CaptureFixture[str], assignment: str) -> None:
    code, _, err = run_main(capsys, "run", SCENARIO, "--set", assignment)
    assert_one_error(code, err, "--set")
    assert len(err.splitlines()[-1]) < 400, "the error echoes the whole input"


@pytest.mark.parametrize("until", ["-1", "nan", "inf", "-inf", "x"])
def test_bench_until(capsys: pytest.CaptureFixture[str], until: str) -> None:
    code, _, err = run_main(capsys, "bench", "--until", until)
    assert_one_error(code, err, "--until")


def test_prepare_out_names_the_option(tmp_path: Path) -> None:
    from ecnsim.cli._common import UsageError
    from ecnsim.cli.run import check_out_path

    assert check_out_path("--out", tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(UsageError, match="--out: cannot write"):
            check_out_path("--out", ro / "x")


def test_error_texts_name_the_right_thing() -> None:
    """A deleted ``topology.type`` is reported there with the topology types; a bad
    ``initial_window`` says what is allowed, not a Rust type's name (issue 35 item 2)."""
    import copy

    from ecnsim import EcnsimError, Simulation

    from .test_fuzz import BASE, TEMPLATE_BASE

    data = copy.deepcopy(TEMPLATE_BASE)
    del data["topology"]["type"]
    with pytest.raises(EcnsimError) as info:
        Simulation(data)
    assert str(info.value).startswith("topology: missing field `type`; allowed: `dumbbell`")
    for bad in ["x", 1.5, [1], True, 2**64 - 1]:
        data = copy.deepcopy(BASE)
        data["flows"][0]["tcp"]["initial_window"] = bad
        with pytest.raises(EcnsimError) as info:
            Simulation(data)
        text = str(info.value)
        assert text.startswith("flows[0].tcp.initial_window: "), text
        assert 'a number of segments (an integer) or "rfc3390"' in text, text
        assert "enum" not in text, text
        assert "InitialWindowSpec" not in text, text


def test_set_into_templates_after_one_into_what_they_make_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--set`` is applied in order, or refused by name where it cannot be: a template
    path after a path into the expanded links (issue 35 item 1)."""
    dumbbell = ROOT / "examples" / "dumbbell.toml"
    late = ["--set", "links[name=bottleneck].rate=5Mbps", "--set", "topology.bottleneck_rate=7Mbps"]
    code, _, err = run_main(capsys, "run", dumbbell, "--print-resolved", *late)
    assert_one_error(code, err, "--set topology.bottleneck_rate", "links[name=bottleneck].rate")
    # In the order they can be applied: both hold, the later one on the bottleneck.
    code, out, err = run_main(capsys, "run", dumbbell, "--print-resolved", *late[2:], *late[:2])
    assert code == 0, err
    assert 'rate = "5Mbps"' in out
    assert 'rate = "7Mbps"' not in out


def test_trace_links_takes_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--trace-links`` takes the links' names as well as indices (issue 35 item 1)."""
    hetero = ROOT / "examples" / "hetero_rtt.toml"
    short = ["--set", "simulation.duration=1.5s", "--set", "simulation.warmup=0s", "-q"]
    for links, out in (("bottleneck,fragile0", "by-name"), ("0,1", "by-index")):
        code, _, err = run_main(
            capsys, "run", hetero, *short, "--pcap", tmp_path / out, "--trace-links", links
        )
        assert code == 0, err
    by_name = sorted(p.name for p in (tmp_path / "by-name").iterdir())
    assert by_name == sorted(p.name for p in (tmp_path / "by-index").iterdir())
    assert "bottleneck-r-sink.pcap" in by_name
    code, _, err = run_main(capsys, "run", hetero, *short, "--pcap", tmp_path / "x",
                            "--trace-links", "nope")  # fmt: skip
    assert_one_error(code, err, "--trace-links", "'nope'", "bottleneck")


@pytest.mark.parametrize(("seeds", "count"), [("3", 3), ("1-3", 3), ("1,2", 2)])
def test_study_seeds_takes_the_list_form(
    capsys: pytest.CaptureFixture[str], seeds: str, count: int
) -> None:
    """``study --seeds`` takes ``run --seeds``' list form when it names seeds 1..K."""
    code, out, err = run_main(capsys, "study", "show", "aecn", "--quick", "--seeds", seeds)
    assert code == 0, err
    assert f"  seeds = {count}\n" in out


@pytest.mark.parametrize("seeds", ["2-4", "1,3", "x"])
def test_study_seeds_other_lists_refused(capsys: pytest.CaptureFixture[str], seeds: str) -> None:
    code, _, err = run_main(capsys, "study", "show", "aecn", "--quick", "--seeds", seeds)
    assert_one_error(code, err, "--seeds")


def test_double_ctrl_c_still_writes_what_finished(tmp_path: Path) -> None:
    """A second Ctrl-C while partial results are written leaves the time series out but
    keeps every other table and ``meta.json`` (issue 35 item 2: it left ``--out`` empty)."""
    import json
    import signal
    import subprocess
    import sys
    import time

    out, trace = tmp_path / "out", tmp_path / "t.tr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecnsim", "run", str(ROOT / "examples" / "dumbbell.toml"),
         "--set", "simulation.duration=2000s", "--set", "simulation.sample_interval=1ms",
         "--out", str(out), "-q", "--trace-ns2", str(trace), "--trace-links", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal sends it, even where the test runner ignores SIGINT.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (trace.exists() and trace.stat().st_size > 0):
        time.sleep(0.05)
    time.sleep(0.5)  # the run is under way
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["finished"] is False
    # The tables come first, whenever the second Ctrl-C arrives; how many of the time series
    # were written before it depends on timing, and those not written are named.
    assert meta["tables"][:4] == ["flows", "apps", "queues", "records"]
    for name in meta["tables"]:
        assert (out / f"{name}.parquet").is_file()
    series = {"flow_series", "queue_series"}
    left_out = series - set(meta["tables"])
    if left_out:
        line = next(x for x in err.splitlines() if x.startswith("time series left out: "))
        assert set(line.removeprefix("time series left out: ").split(", ")) == left_out, err


@pytest.mark.parametrize("cap", ["none", "flow_series", "all"])
def test_single_ctrl_c_writes_a_bounded_amount_of_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cap: str
) -> None:
    """Issue 35 item 2: after one Ctrl-C the time series are written only within
    PARTIAL_SERIES_MAX_BYTES together (a 1 ms series took ~16 s to write); each one over it
    is left out and named, and meta.json lists exactly the tables written."""
    import json

    from ecnsim.cli import run as cli_run

    path = ROOT / "examples" / "dumbbell.toml"
    sim = cli_run.build_simulation(
        path, path.read_text(), seed=1, max_memory=None,
        sets=[("simulation.sample_interval", "1ms")],
    )  # fmt: skip
    sim.run_until(3.0)  # stopped part-way, as by Ctrl-C
    tables = sim.results.tables
    size = {n: cli_run._column_bytes(tables[n]) for n in cli_run.SERIES_TABLES}
    assert 0 < size["flow_series"] < size["queue_series"]
    budget = {"none": 0, "flow_series": size["flow_series"], "all": sum(size.values())}[cap]
    monkeypatch.setattr(cli_run, "PARTIAL_SERIES_MAX_BYTES", budget)
    cli_run._write_partial(sim, tmp_path)
    err = capsys.readouterr().err
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["finished"] is False
    assert meta["stopped"] == "interrupted"
    expected = {"none": [], "flow_series": ["flow_series"], "all": list(size)}[cap]
    assert meta["tables"] == ["flows", "apps", "queues", "records", *expected]
    written = sum(size[n] for n in expected)
    assert written <= budget
    for name in meta["tables"]:
        assert (tmp_path / f"{name}.parquet").is_file()
    left = [n for n in size if n not in expected]
    for name in left:
        assert not (tmp_path / f"{name}.parquet").exists()
        assert f"{name}: " in err, err
        assert "over the" in err, err
    if left:
        assert f"time series left out: {', '.join(left)}" in err, err
    else:
        assert "left out" not in err, err


@pytest.mark.parametrize("where", ["sizing", "announcing", "writing", "after_a_write"])
def test_a_second_ctrl_c_anywhere_after_the_tables_names_the_series_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A second Ctrl-C may land between two steps of writing the partial results, not only
    inside a write (CI once caught it between them: the series were left out and not named);
    wherever it lands, the tables and meta.json are there and every series left out is named."""
    import builtins
    import json

    from ecnsim.cli import run as cli_run

    path = ROOT / "examples" / "dumbbell.toml"
    sim = cli_run.build_simulation(path, path.read_text(), seed=1, max_memory=None)
    sim.run_until(3.0)

    def interrupt(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    if where == "sizing":
        monkeypatch.setattr(cli_run, "_column_bytes", interrupt)
    elif where == "announcing":
        real_print = builtins.print

        def print_(*args: object, **kwargs: object) -> None:
            if args and "writing its time series" in str(args[0]):
                raise KeyboardInterrupt
            real_print(*args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr(builtins, "print", print_)
    else:
        real_write = type(sim.results).write_parquet
        calls = []

        def write(self: object, out: Path, **kwargs: object) -> None:
            calls.append(kwargs.get("tables"))
            if where == "writing" and len(calls) > 1:  # the tables are written, no series
                raise KeyboardInterrupt
            real_write(self, out, **kwargs)  # type: ignore[arg-type]
            if len(calls) == 2:  # the first series and meta.json listing it are written
                raise KeyboardInterrupt

        monkeypatch.setattr(type(sim.results), "write_parquet", write)
    monkeypatch.setattr(cli_run, "PARTIAL_SERIES_MAX_BYTES", 1 << 40)
    cli_run._write_partial(sim, tmp_path)
    err = capsys.readouterr().err
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["finished"] is False
    first = [n for n in sim.results.tables if n in cli_run.SERIES_TABLES][:1]
    written = first if where == "after_a_write" else []
    assert meta["tables"] == ["flows", "apps", "queues", "records", *written]
    assert "partial results (finished=false) written to" in err, err
    line = next(x for x in err.splitlines() if x.startswith("time series left out: "))
    left = set(cli_run.SERIES_TABLES) - set(written)
    assert set(line.removeprefix("time series left out: ").split(", ")) == left, err


def test_a_second_ctrl_c_before_the_partial_write_is_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second Ctrl-C right after the first, before the partial results' writer has taken
    Ctrl-C over (while the first is caught, the progress bar closed, the stop reported), is
    held, not raised: the tables and meta.json are written and the series are left out and
    named, as for any second Ctrl-C (it used to escape and leave ``--out`` empty)."""
    import json
    import signal

    from ecnsim._system import hold_sigint_after_first
    from ecnsim.cli import run as cli_run

    path = ROOT / "examples" / "dumbbell.toml"
    sim = cli_run.build_simulation(
        path, path.read_text(), seed=1, max_memory=None,
        sets=[("simulation.sample_interval", "10ms")],
    )  # fmt: skip
    sim.run_until(3.0)
    before = signal.getsignal(signal.SIGINT)
    with hold_sigint_after_first() as held:
        handler = signal.getsignal(signal.SIGINT)
        assert callable(handler)
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, None)  # the first Ctrl-C stops the run
        handler(signal.SIGINT, None)  # the second, at once: held
        assert held.again
        cli_run._write_partial(sim, tmp_path, "interrupted", held)
        # Released once the tables are written: a Ctrl-C now would stop a series' write.
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, None)
    assert signal.getsignal(signal.SIGINT) is before
    err = capsys.readouterr().err
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["finished"] is False
    assert meta["tables"] == ["flows", "apps", "queues", "records"]
    line = next(x for x in err.splitlines() if x.startswith("time series left out: "))
    left = set(line.removeprefix("time series left out: ").split(", "))
    assert left == set(cli_run.SERIES_TABLES)
