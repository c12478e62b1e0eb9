"""ecnsim's PEP 517 build backend: maturin, with profile-guided optimisation (PGO).

`pip install .` builds the extension in three steps, as pydantic-core and polars build
their release wheels:

1. maturin builds the extension with the workspace's release profile (fat LTO, one codegen
   unit) and `-Cprofile-generate`, in a target directory of its own;
2. a driver loads that instrumented module and runs the training workload on it
   (`pgo_training.txt` beside this file: the examples/ scenarios, none of the benchmarks);
   the raw profiles are merged with the `llvm-profdata` of rustc's own LLVM;
3. maturin builds the extension again with `-Cprofile-use` (through `RUSTFLAGS`), in a
   target directory of its own as well, so that plain `cargo` builds keep theirs.

The extension is trained, not a separate Rust binary: the `digest` example's profile,
applied to the extension, bought it a fraction of what it bought the example
(docs/performance.md, "Profile-guided builds").

`ECNSIM_PGO=0` builds without PGO, `ECNSIM_PGO=1` with it; unset, wheels (`pip install .`)
use PGO and editable installs (`pip install -e .`, rebuilt often) do not. When rustc's
`llvm-profdata` is missing and `rustup component add llvm-tools` cannot add it, the build
goes on without PGO and says so (a warning here, and `ecnsim._core.build_info()` in the
built package). Every other hook is maturin's own.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The PEP 517 hooks this backend leaves to maturin, looked up on first use (PEP 562) so
# that this module imports without maturin, as the tests import it.
_MATURIN_HOOKS = (
    "build_sdist",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
)


def __getattr__(name: str) -> Any:
    if name in _MATURIN_HOOKS:
        return getattr(importlib.import_module("maturin"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ROOT = Path(__file__).resolve().parent.parent
TRAINING = Path(__file__).resolve().parent / "pgo_training.txt"

# Read by crates/ecnsim-py/src/lib.rs (`option_env!`) for `build_info()`: whether the
# extension was built with a profile, and the one-line reason or the training set.
ENV_PGO = "ECNSIM_BUILD_PGO"
ENV_NOTE = "ECNSIM_BUILD_PGO_NOTE"


class PgoUnavailableError(Exception):
    """PGO cannot be done here (a missing tool); the build goes on without it."""


@dataclass(frozen=True)
class TrainingRun:
    """One line of the training list: a scenario, how far to run it, whether to trace."""

    scenario: Path
    until_s: float | None = None
    trace: bool = False

    def args(self) -> list[str]:
        """The `digest` example's arguments for this run."""
        out = [str(self.scenario)]
        if self.until_s is not None:
            out.append(repr(self.until_s))
        if self.trace:
            out.append("--trace")
        return out


def read_training(path: Path = TRAINING, root: Path = ROOT) -> list[TrainingRun]:
    """Parse the training list: `SCENARIO [UNTIL_S] [--trace]` a line, `#` comments."""
    runs = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{path.name}:{number}"
        scenario, rest = root / words[0], words[1:]
        if not scenario.is_file():
            raise ValueError(f"{where}: no scenario file {words[0]}")
        trace = "--trace" in rest
        rest = [w for w in rest if w != "--trace"]
        if len(rest) > 1:
            raise ValueError(f"{where}: expected SCENARIO [UNTIL_S] [--trace], got {raw!r}")
        try:
            until_s = float(rest[0]) if rest else None
        except ValueError:
            raise ValueError(f"{where}: UNTIL_S must be a number, got {rest[0]!r}") from None
        if until_s is not None and not until_s > 0:
            raise ValueError(f"{where}: UNTIL_S must be positive, got {rest[0]!r}")
        runs.append(TrainingRun(scenario, until_s, trace))
    if not runs:
        raise ValueError(f"{path.name}: no training runs")
    return runs


def pgo_wanted(editable: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """`ECNSIM_PGO` if set (0 or 1), else PGO for wheels and none for editable installs."""
    value = environ.get("ECNSIM_PGO", "").strip()
    if value == "":
        return not editable
    if value in {"0", "1"}:
        return value == "1"
    raise ValueError(f"ECNSIM_PGO must be 0 or 1, got {value!r}")


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, text=True, check=False, **kwargs)


def _rustc_info() -> dict[str, str]:
    """`rustc -vV` as a dict (`host`, `LLVM version`, ...), with the repository's toolchain."""
    proc = _run(["rustc", "-vV"], capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"rustc -vV failed:\n{proc.stderr}")
    return dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)


def _llvm_major(version_text: str) -> str | None:
    match = re.search(r"LLVM version:? (\d+)", version_text)
    return match.group(1) if match else None


def find_llvm_profdata(environ: Mapping[str, str] = os.environ) -> Path:
    """The `llvm-profdata` that reads rustc's profiles: rustc's LLVM major version.

    In order: `$ECNSIM_LLVM_PROFDATA`; the toolchain's own (the rustup component
    `llvm-tools`, added with `rustup component add llvm-tools` if missing and rustup is
    there); one on `PATH` of the same LLVM major version. Raises `PgoUnavailableError`
    saying how to fix it.
    """
    given = environ.get("ECNSIM_LLVM_PROFDATA")
    if given:
        if not Path(given).is_file():
            raise PgoUnavailableError(f"ECNSIM_LLVM_PROFDATA={given} is not a file")
        return Path(given)
    info = _rustc_info()
    sysroot = _run(["rustc", "--print", "sysroot"], capture_output=True).stdout.strip()
    return pick_llvm_profdata(
        own=Path(sysroot, "lib", "rustlib", info["host"], "bin", "llvm-profdata"),
        llvm_major=_llvm_major(f"LLVM version: {info.get('LLVM version', '')}"),
        rustup=shutil.which("rustup", path=environ.get("PATH")),
        path=environ.get("PATH", ""),
    )


def pick_llvm_profdata(own: Path, llvm_major: str | None, rustup: str | None, path: str) -> Path:
    """`own` (the toolchain's, added by `rustup` if missing), else one on `path` whose
    LLVM major version is `llvm_major`. An older LLVM's tool cannot read the raw profiles:
    Debian's `llvm-profdata` (LLVM 14) beside rustc 1.95 (LLVM 22) fails."""
    if not own.is_file() and rustup:
        print("ecnsim build: rustup component add llvm-tools (llvm-profdata)", file=sys.stderr)
        _run([rustup, "component", "add", "llvm-tools"])
    if own.is_file():
        return own
    for name in (f"llvm-profdata-{llvm_major}", "llvm-profdata"):
        found = shutil.which(name, path=path)
        if found:
            version = _run([found, "--version"], capture_output=True).stdout
            if llvm_major is not None and _llvm_major(version) == llvm_major:
                return Path(found)
    raise PgoUnavailableError(
        f"no llvm-profdata for rustc's LLVM {llvm_major} (the rustup component llvm-tools: "
        "`rustup component add llvm-tools`, or set ECNSIM_LLVM_PROFDATA)"
    )


def _rustflags(environ: Mapping[str, str], flag: str) -> str:
    """The user's `RUSTFLAGS` with ours after them."""
    return " ".join(f for f in (environ.get("RUSTFLAGS", "").strip(), flag) if f)


def _target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()


# The training driver: loads the instrumented extension module from its file (the build
# environment has maturin, not numpy or the rest of the package) and runs each scenario as
# `ecnsim.Simulation` would: from TOML, in half-second chunks, then the result tables.
TRAIN_SCRIPT = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("_core", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
scenario, until_s, trace = sys.argv[2], sys.argv[3], sys.argv[4] == "1"
sim = core.PySimulation.from_toml(open(scenario, encoding="utf-8").read())
if trace:
    sim.enable_trace()
end = sim.end_ns if until_s == "-" else round(float(until_s) * 1e9)
sim.run_until(end, 500_000_000)
if trace:
    sim.drain_trace()
sim.results()
"""


def train(runs: list[TrainingRun], profdata_tool: Path) -> Path:
    """Steps 1 and 2: the instrumented extension, the training runs, the merged profile.

    The extension itself is instrumented and trained, not a separate Rust binary: the
    profile of the `digest` example, applied to the extension, bought a fraction of what it
    buys the example (docs/performance.md, "Profile-guided builds")."""
    work = _target_dir() / "pgo"
    raw = work / "raw"
    print("ecnsim build: PGO 1/3: the extension, instrumented (maturin)", file=sys.stderr)
    # A target directory of its own: the instrumented build would otherwise replace the
    # plain one's artifacts (the flags differ) and each build would redo the other's.
    instrumented = {
        "RUSTFLAGS": _rustflags(os.environ, f"-Cprofile-generate={raw}"),
        "CARGO_TARGET_DIR": str(work / "instrumented"),
        ENV_PGO: "0",
        ENV_NOTE: "instrumented for PGO training",
    }
    wheels = work / "instrumented-wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    with _environment(instrumented):
        wheel = importlib.import_module("maturin").build_wheel(str(wheels))
    with zipfile.ZipFile(wheels / wheel) as zf:
        member = next(n for n in zf.namelist() if re.fullmatch(r"ecnsim/_core\..*so", n))
        module = Path(zf.extract(member, work / "instrumented-module"))
    # Build scripts and proc macros ran instrumented during the build: only the training
    # runs' profiles count.
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    print(f"ecnsim build: PGO 2/3: {len(runs)} training runs ({TRAINING.name})", file=sys.stderr)
    for run in runs:
        until = "-" if run.until_s is None else repr(run.until_s)
        cmd = [sys.executable, "-c", TRAIN_SCRIPT, str(module), str(run.scenario), until]
        proc = _run([*cmd, "1" if run.trace else "0"], capture_output=True)
        if proc.returncode != 0:
            raise RuntimeError(f"training run {' '.join(run.args())} failed:\n{proc.stderr}")
    merged = work / "ecnsim.profdata"
    profiles = [str(p) for p in sorted(raw.glob("*.profraw"))]
    if not profiles:
        raise RuntimeError(f"the training runs wrote no profile in {raw}")
    proc = _run([str(profdata_tool), "merge", "-o", str(merged), *profiles])
    if proc.returncode != 0:
        raise RuntimeError(f"{profdata_tool} merge failed")
    return merged


@contextmanager
def _environment(changes: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def pgo_environment(editable: bool) -> dict[str, str]:
    """What maturin's build gets: `RUSTFLAGS` with the profile, and the build-info notes."""
    if not pgo_wanted(editable):
        why = "ECNSIM_PGO=0" if os.environ.get("ECNSIM_PGO") else "editable install"
        print(f"ecnsim build: without PGO ({why})", file=sys.stderr)
        return {ENV_PGO: "0", ENV_NOTE: why}
    try:
        tool = find_llvm_profdata()
    except PgoUnavailableError as e:
        why = str(e)
        print(
            f"WARNING: ecnsim build: building WITHOUT profile-guided optimisation: {why}. "
            "The simulator will be about 10 % slower per packet.",
            file=sys.stderr,
        )
        return {ENV_PGO: "0", ENV_NOTE: why}
    runs = read_training()
    merged = train(runs, tool)
    print(f"ecnsim build: PGO 3/3: maturin with -Cprofile-use={merged}", file=sys.stderr)
    return {
        "RUSTFLAGS": _rustflags(os.environ, f"-Cprofile-use={merged}"),
        # A target directory of its own too: built in `target`, the profiled artifacts would
        # replace the plain ones there (the flags differ), so that the next `cargo test` or
        # `cargo build` rebuilt everything, and the next `pip install .` too.
        "CARGO_TARGET_DIR": str(_target_dir() / "pgo" / "optimised"),
        ENV_PGO: "1",
        ENV_NOTE: f"trained on build_backend/{TRAINING.name} ({len(runs)} runs)",
    }


def _maturin_build(hook: str, editable: bool, *args: Any) -> str:
    """maturin's `hook` (`build_wheel` or `build_editable`) in `pgo_environment(editable)`."""
    with _environment(pgo_environment(editable)):
        wheel: str = getattr(importlib.import_module("maturin"), hook)(*args)
    return wheel


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 517: maturin's wheel, with PGO unless `ECNSIM_PGO=0`."""
    return _maturin_build(
        "build_wheel", False, wheel_directory, config_settings, metadata_directory
    )


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 660: maturin's editable wheel, without PGO unless `ECNSIM_PGO=1`."""
    return _maturin_build(
        "build_editable", True, wheel_directory, config_settings, metadata_directory
    )
