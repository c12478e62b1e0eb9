"""The profile-guided build (build_backend/ecnsim_build.py) and what the package says of it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import ecnsim
from ecnsim import Simulation, _core

ROOT = Path(__file__).resolve().parents[1]
NO_BACKEND = "built without ecnsim's build backend (maturin or cargo directly)"


@pytest.fixture(scope="module")
def backend() -> Iterator[ModuleType]:
    """The backend module, imported from its file as pip's build front end does."""
    spec = importlib.util.spec_from_file_location(
        "ecnsim_build", ROOT / "build_backend" / "ecnsim_build.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs: its dataclass looks its own module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


# -- the training list -------------------------------------------------------------


def test_training_list_names_scenarios_that_run(backend: ModuleType) -> None:
    runs = backend.read_training()
    assert len(runs) >= 10
    assert any(r.trace for r in runs)
    for run in runs:
        # The build's own driver on the installed extension, to two seconds at most.
        until = "2.0" if run.until_s is None else repr(min(2.0, run.until_s))
        script = backend.TRAIN_SCRIPT + "\nassert sim.perf()['packet_hops'] > 0\n"
        cmd = [sys.executable, "-c", script, _core.__file__, str(run.scenario), until]
        proc = subprocess.run([*cmd, "1" if run.trace else "0"], capture_output=True, text=True)
        assert proc.returncode == 0, (run.scenario, proc.stderr)


def test_training_list_leaves_out_the_benchmarks(backend: ModuleType) -> None:
    names = {r.scenario.name for r in backend.read_training()}
    # `ecnsim bench` and bench/ns3/side_by_side.py build theirs in code, not from files: no
    # file of the benchmarks' own can be in the list; and none of the list is one of them.
    assert not any(n.startswith(("hetero-", "dumbbell-100", "web-")) for n in names)


def test_training_list_has_every_example_or_says_why_not(backend: ModuleType) -> None:
    # What users run first is what the profile should know: each scenario in examples/ is a
    # training run, or is named on a "# not trained: FILE (why)" line of the list.
    trained = {r.scenario.resolve() for r in backend.read_training()}
    text = (ROOT / "build_backend" / "pgo_training.txt").read_text(encoding="utf-8")
    prefix = "# not trained: "
    excused = {}
    for line in text.splitlines():
        if line.startswith(prefix):
            name, _, why = line[len(prefix) :].partition(" ")
            assert why.startswith("("), line
            assert why.endswith(")"), line
            excused[(ROOT / name).resolve()] = why
    assert not trained & set(excused)
    for path in excused:
        assert path.is_file(), f"{path} is named as not trained but does not exist"
    examples = {p.resolve() for p in (ROOT / "examples").glob("*.toml")}
    missing = sorted(p.name for p in examples - trained - set(excused))
    assert not missing, f"examples neither trained on nor excused in pgo_training.txt: {missing}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("examples/nonexistent.toml", "no scenario file"),
        ("examples/dumbbell.toml ten", "UNTIL_S must be a number"),
        ("examples/dumbbell.toml -1", "UNTIL_S must be positive"),
        ("examples/dumbbell.toml 1 2", "expected SCENARIO [UNTIL_S] [--trace]"),
        ("# only a comment", "no training runs"),
    ],
)
def test_training_list_bad_lines(
    backend: ModuleType, tmp_path: Path, line: str, message: str
) -> None:
    listing = tmp_path / "training.txt"
    listing.write_text(line + "\n")
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        backend.read_training(listing, ROOT)


def test_training_line_to_digest_arguments(backend: ModuleType, tmp_path: Path) -> None:
    listing = tmp_path / "training.txt"
    listing.write_text("examples/dumbbell.toml 2.5 --trace  # a comment\nexamples/udp.toml\n")
    a, b = backend.read_training(listing, ROOT)
    assert a.args() == [str(ROOT / "examples/dumbbell.toml"), "2.5", "--trace"]
    assert b.args() == [str(ROOT / "examples/udp.toml")]


# -- when PGO is used ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "editable", "wanted"),
    [
        ("", False, True),
        ("", True, False),
        ("0", False, False),
        ("0", True, False),
        ("1", True, True),
    ],
)
def test_ecnsim_pgo_is_honoured(
    backend: ModuleType, value: str, editable: bool, wanted: bool
) -> None:
    environ = {"ECNSIM_PGO": value} if value else {}
    assert backend.pgo_wanted(editable, environ) is wanted


def test_ecnsim_pgo_other_values_are_refused(backend: ModuleType) -> None:
    with pytest.raises(ValueError, match="ECNSIM_PGO must be 0 or 1"):
        backend.pgo_wanted(False, {"ECNSIM_PGO": "yes"})


def test_ecnsim_pgo_0_builds_without_looking_for_tools(
    backend: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECNSIM_PGO", "0")
    monkeypatch.setattr(
        backend, "find_llvm_profdata", lambda: pytest.fail("looked for llvm-profdata")
    )
    assert backend.pgo_environment(editable=False) == {
        "ECNSIM_BUILD_PGO": "0",
        "ECNSIM_BUILD_PGO_NOTE": "ECNSIM_PGO=0",
    }


def test_pgo_build_uses_the_profile_in_a_target_directory_of_its_own(
    backend: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Training stubbed: what matters is what maturin's second build gets. In `target` the
    # profiled artifacts would replace the plain ones and the next `cargo test` rebuild all.
    monkeypatch.delenv("ECNSIM_PGO", raising=False)
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    monkeypatch.setenv("RUSTFLAGS", "-Ctarget-cpu=native")
    monkeypatch.setattr(backend, "find_llvm_profdata", lambda: tmp_path / "llvm-profdata")
    monkeypatch.setattr(backend, "train", lambda runs, tool: tmp_path / "merged.profdata")
    env = backend.pgo_environment(editable=False)
    assert env["RUSTFLAGS"] == f"-Ctarget-cpu=native -Cprofile-use={tmp_path / 'merged.profdata'}"
    assert env["CARGO_TARGET_DIR"] == str(tmp_path / "target" / "pgo" / "optimised")
    assert env["ECNSIM_BUILD_PGO"] == "1"
    runs = len(backend.read_training())
    note = f"trained on build_backend/pgo_training.txt ({runs} runs)"
    assert env["ECNSIM_BUILD_PGO_NOTE"] == note


def _fake_tool(directory: Path, name: str, llvm_version: str) -> Path:
    tool = directory / name
    tool.write_text(
        f"#!/bin/sh\necho 'LLVM (http://llvm.org/):'\necho '  LLVM version {llvm_version}'\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool


def test_missing_llvm_profdata_warns_and_builds_without_pgo(
    backend: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Neither the toolchain's (no rustup to add it) nor one of rustc's LLVM on PATH:
    # Debian's LLVM 14 beside rustc's LLVM 22 cannot read the profiles.
    _fake_tool(tmp_path, "llvm-profdata", "14.0.6")
    with pytest.raises(backend.PgoUnavailableError, match="rustup component add llvm-tools"):
        backend.pick_llvm_profdata(tmp_path / "missing", "22", None, str(tmp_path))

    def unavailable() -> Path:
        raise backend.PgoUnavailableError("no llvm-profdata for rustc's LLVM 22")

    monkeypatch.delenv("ECNSIM_PGO", raising=False)
    monkeypatch.setattr(backend, "find_llvm_profdata", unavailable)
    monkeypatch.setattr(backend, "train", lambda *_: pytest.fail("trained without llvm-profdata"))
    env = backend.pgo_environment(editable=False)
    assert env == {
        "ECNSIM_BUILD_PGO": "0",
        "ECNSIM_BUILD_PGO_NOTE": "no llvm-profdata for rustc's LLVM 22",
    }
    assert "RUSTFLAGS" not in env
    assert (
        "WARNING: ecnsim build: building WITHOUT profile-guided optimisation"
        in capsys.readouterr().err
    )


def test_llvm_profdata_of_rustcs_llvm_on_path_is_taken(backend: ModuleType, tmp_path: Path) -> None:
    _fake_tool(tmp_path, "llvm-profdata", "14.0.6")
    right = _fake_tool(tmp_path, "llvm-profdata-22", "22.1.2")
    assert backend.pick_llvm_profdata(tmp_path / "missing", "22", None, str(tmp_path)) == right
    own = _fake_tool(tmp_path, "own-llvm-profdata", "22.1.2")
    assert backend.pick_llvm_profdata(own, "22", None, str(tmp_path)) == own


def test_rustflags_keep_the_users(backend: ModuleType) -> None:
    assert backend._rustflags({}, "-Cprofile-use=x") == "-Cprofile-use=x"
    assert backend._rustflags({"RUSTFLAGS": "-Ctarget-cpu=native"}, "-Cprofile-use=x") == (
        "-Ctarget-cpu=native -Cprofile-use=x"
    )


# -- what the installed package says -------------------------------------------------


def _editable() -> bool:
    return Path(ecnsim.__file__).resolve().parent == (ROOT / "python" / "ecnsim").resolve()


def test_build_info_says_how_the_extension_was_built(backend: ModuleType) -> None:
    info = _core.build_info()
    assert set(info) == {"pgo", "pgo_note", "debug_assertions"}
    if info["pgo"]:
        assert info["pgo_note"].startswith("trained on build_backend/pgo_training.txt")
        return
    if info["pgo_note"] in {"ECNSIM_PGO=0", "editable install", NO_BACKEND}:
        # A development build, or PGO switched off: only a wheel built by the backend
        # (`pip install .`, as .ci/run does) must have used it.
        assert _editable() or info["pgo_note"] == "ECNSIM_PGO=0"
        return
    # Built without PGO for want of llvm-profdata: then it must still be missing.
    assert "llvm-profdata" in info["pgo_note"]
    with pytest.raises(backend.PgoUnavailableError):
        backend.find_llvm_profdata()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
def test_package_gives_the_plain_builds_digests() -> None:
    """The installed extension (built with PGO by `pip install .`) and the `digest` example
    built without it give the same results digests: optimisation changes no result."""
    subprocess.run(
        # The test profile's build (the README's `cargo test` built it already in CI).
        ["cargo", "build", "--profile", "release-test", "-p", "ecnsim-core", "--example", "digest"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if k != "RUSTFLAGS"},
    )
    digest = ROOT / "target" / "release-test" / "examples" / "digest"
    for name in ("dumbbell.toml", "hetero_rtt.toml", "websessions.toml", "parking_lot.toml"):
        scenario = ROOT / "examples" / name
        line = subprocess.run(
            [str(digest), str(scenario)], check=True, capture_output=True, text=True
        )
        plain = line.stdout.split()[3]
        assert f"{Simulation.from_toml(scenario).run().digest:016x}" == plain, name
    # A file the core cannot read (a sweep's Python-only fields) is an error line, not a panic.
    bad = subprocess.run(
        [str(digest), str(ROOT / "examples" / "sweep_buffers.toml")], capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: ")
    assert "panicked" not in bad.stderr
