"""The Python half of ``make lint`` as a test, so that CI keeps the package type-checked
and formatted: ruff (lint and format) on every Python tree, mypy (strict) on the package.
The checkers come with the ``test`` extra, pinned, so that a new release of one cannot
fail the suite on unchanged code; without them these tests are skipped."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys

import pytest

from .conftest import ROOT

TREES = ["python", "tests", "validation", "bench", "build_backend"]


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(not _installed("ruff"), reason="ruff is not installed")
def test_ruff_finds_nothing() -> None:
    check = _run("ruff", "check", *TREES)
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _run("ruff", "format", "--check", *TREES)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@pytest.mark.skipif(
    not (_installed("mypy") and _installed("pandas-stubs")),
    reason="mypy and pandas-stubs (the test extra, Python 3.11+) are not installed",
)
def test_mypy_strict_finds_nothing() -> None:
    # pyproject.toml's [tool.mypy]: strict, on python/ecnsim.
    proc = _run("mypy", "--no-incremental")
    assert proc.returncode == 0, proc.stdout + proc.stderr
