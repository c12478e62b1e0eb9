"""bench/ns3/side_by_side.py's bookkeeping (the runs themselves need ns-3: bench/ns3/README.md)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sbs() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "side_by_side", ROOT / "bench/ns3/side_by_side.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["side_by_side"] = module
    spec.loader.exec_module(module)
    return module


def _run(scenario: str, ours: float, release: float) -> dict[str, object]:
    return {
        "scenario": scenario,
        "ecnsim": {"run_cpu_s": ours, "packet_hops": 1_000_000},
        "ns3_release": {"run_cpu_s": release},
    }


def test_repeats_are_summarised_by_best_and_median(sbs: ModuleType) -> None:
    runs = [_run("a", 0.05, 5.0), _run("a", 0.07, 5.2), _run("a", 0.30, 5.1), _run("b", 0.1, 9.0)]
    rows = {line.split(" | ")[0]: line for line in sbs.repeat_summary(runs).splitlines()}
    # Three runs of "a": best 0.05, median 0.07 (the 0.30 outlier moves neither), 70 ns per
    # hop, and the release build's median over ecnsim's: 5.1 / 0.07 = 73x.
    assert rows["| a"].split(" | ")[1:] == [
        "3",
        "0.05 / 0.07 s",
        "-",
        "5 / 5.1 s",
        "70.0",
        "-",
        "73x |",
    ]
    assert rows["| b"].split(" | ")[1:4] == ["1", "0.1 / 0.1 s", "-"]


def test_single_runs_have_no_summary(sbs: ModuleType) -> None:
    assert sbs.repeat_summary([_run("a", 0.05, 5.0), _run("b", 0.1, 9.0)]) == ""


def test_the_commit_is_the_imported_packages_checkout(sbs: ModuleType, tmp_path: Path) -> None:
    # This checkout's own package: its HEAD (with "+dirty" if its code has local changes).
    assert re.fullmatch(r"[0-9a-f]{7,}(\+dirty)?", sbs._ecnsim_commit(ROOT / "python" / "ecnsim"))
    # A copy outside any ecnsim checkout (an installed wheel) is not labelled with a commit.
    copy = tmp_path / "site-packages" / "ecnsim"
    copy.mkdir(parents=True)
    assert sbs._ecnsim_commit(copy) == "installed"
