"""Issue 16 goal 1: the ``ecnsim`` command imports only what it uses.

``ecnsim --help`` loads no scenario, simulation or results module, and the run
and output path (``ecnsim run --out``; ``-q`` prints no summary tables) imports
none of numpy, pandas and pyarrow: the Parquet files are written in Rust.
Each check runs in a fresh interpreter and reads ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from ecnsim import Simulation

from .conftest import red_ecn_dumbbell

HEAVY = ("numpy", "pandas", "pyarrow")


def _imports_after(tmp_path: Path, argv: list[str]) -> tuple[int, set[str], str]:
    """Run ``ecnsim ARGV`` in a fresh interpreter: its exit code, the top-level modules
    it imported, and its stdout."""
    code = (
        "import sys\n"
        "from ecnsim.cli import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules} | "
        "{m for m in sys.modules if m.startswith('ecnsim.')})))\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES"))
    return proc.returncode, set(line.split()[1:]), proc.stdout


def _scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(Simulation(red_ecn_dumbbell()).spec))
    return path


def test_help_loads_no_model_code(tmp_path: Path) -> None:
    code, modules, _ = _imports_after(tmp_path, ["--help"])
    assert code == 0
    assert not modules & set(HEAVY), modules
    for name in ("ecnsim.scenario.spec", "ecnsim.simulation", "ecnsim.results", "ecnsim.analysis"):
        assert name not in modules, name


def test_run_out_quiet_imports_no_numpy_pandas_or_pyarrow(tmp_path: Path) -> None:
    path = _scenario_file(tmp_path)
    out = tmp_path / "out"
    code, modules, stdout = _imports_after(tmp_path, ["run", str(path), "-q", "--out", str(out)])
    assert code == 0, stdout
    assert not modules & set(HEAVY), modules & set(HEAVY)
    # -q: the one-line result, no tables.
    assert "digest" in stdout
    assert "flows (" not in stdout
    assert pq.read_table(out / "flow_series.parquet").num_rows > 0
    assert json.loads((out / "meta.json").read_text())["finished"] is True


def test_run_out_with_its_summary_imports_no_pandas_or_pyarrow(tmp_path: Path) -> None:
    """The summary tables of bulk flows and queues are formatted in plain Python."""
    path = _scenario_file(tmp_path)
    code, modules, stdout = _imports_after(tmp_path, ["run", str(path), "--out", "out"])
    assert code == 0, stdout
    assert not modules & set(HEAVY), modules & set(HEAVY)
    assert "flows (4 rows)" in stdout
    assert "queues (" in stdout
