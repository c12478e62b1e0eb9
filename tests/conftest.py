"""Shared fixtures: small scenarios, a long-running scenario, CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from ecnsim import Scenario, bulk, droptail, dumbbell, red, tcp

ROOT = Path(__file__).resolve().parent.parent
#: Example scenarios; ``examples/sweep_*.toml`` are sweep files (docs/sweeps.md), not scenarios.
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.toml") if not p.name.startswith("sweep_"))
SWEEP_EXAMPLES = sorted((ROOT / "examples").glob("sweep_*.toml"))

settings.register_profile("fast", max_examples=40, deadline=None)
settings.register_profile("slow", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def cpu_seconds(proc: subprocess.Popen[str]) -> float | None:
    """CPU time the running child has used so far (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # Fields 14 and 15 of proc(5): utime and stime, in clock ticks.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_cpu(proc: subprocess.Popen[str], seconds: float, timeout: float = 120) -> None:
    """Wait until the child process has used ``seconds`` of CPU time.

    Tests that signal a child must not signal it before it is past its imports.
    A wall-clock sleep does that only on an idle machine; the child's own CPU
    time measures its progress on a loaded one too (Linux /proc; elsewhere, or
    once the child has ended, a plain sleep / an immediate return).
    """
    if cpu_seconds(proc) is None:
        time.sleep(seconds)
        return
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        used = cpu_seconds(proc)
        if used is None or used >= seconds:
            return
        time.sleep(0.02)


def small_scenario(
    duration: str = "2s", seed: int | None = 1, start_jitter: str | None = None
) -> Scenario:
    """Two Reno flows (one finite, one unlimited) over a 10 Mb/s dumbbell, sampled every 100 ms.

    With ``start_jitter``, each flow starts a random time (from the seed) later.
    """
    sc = dumbbell(
        2,
        bottleneck_rate="10Mbps",
        bottleneck_delay="10ms",
        access_rate="100Mbps",
        access_delay="1ms",
        queue=droptail(limit_packets=20),
        duration=duration,
        start=["0s", "200ms"],
        start_jitter=start_jitter,
        seed=seed,
        sample_interval="100ms",
    )
    data = sc.to_dict()
    data["flows"][0]["app"] = bulk(bytes="200KB")
    return Scenario.from_dict(data)


def red_ecn_dumbbell() -> Scenario:
    """Four ECN flows over a 10 Mb/s RED (ECN marking) dumbbell for 3 s, sampled every 50 ms."""
    return dumbbell(
        4,
        bottleneck_rate="10Mbps",
        bottleneck_delay="20ms",
        access_rate="100Mbps",
        access_delay="1ms",
        duration="3s",
        queue=red(min_th=5, max_th=15, limit_packets=60, ecn="rfc3168"),
        sample_interval="50ms",
        tcp=tcp(ecn="request"),
    )


#: A scenario that takes about a minute of wall time: used to interrupt runs.
#: A run long enough to interrupt: 3,000 s of it take about 3.6 s of CPU (2026-11-24), and
#: the tests that signal a child wait for up to 2 s of its CPU first, so the whole run is
#: ten times that.
LONG_TOML = """\
name = "long"
simulation = { duration = "30000s", seed = 1 }
nodes = [
  { name = "a", kind = "host" },
  { name = "b", kind = "host" },
  { name = "r", kind = "router" },
]
flows = [
  { src = "a", dst = "b" },
  { src = "a", dst = "b", start = "1s" },
]

[[links]]
a = "a"
b = "r"
rate = "10Gbps"
delay = "1ms"

[[links]]
a = "r"
b = "b"
rate = "1Gbps"
delay = "5ms"
queue = { type = "droptail", limit_packets = 1000 }
"""


@pytest.fixture
def long_toml(tmp_path: Path) -> Path:
    path = tmp_path / "long.toml"
    path.write_text(LONG_TOML, encoding="utf-8")
    return path


def run_cli(
    *args: str | os.PathLike[str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m ecnsim ARGS`` (the ``ecnsim`` command) and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "ecnsim", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli
