"""``ecnsim bench``'s child processes die with it (issue 35, noticed: a killed bench left its
valgrind children running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")


def _children(pid: int) -> list[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_dies_when_the_bench_process_is_killed() -> None:
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ecnsim.cli.bench import _run_child; _run_child(['sleep', '60'])",
        ]
    )
    try:
        deadline = time.monotonic() + 60
        kids: list[int] = []
        while not kids and time.monotonic() < deadline:
            time.sleep(0.1)
            kids = _children(parent.pid)
        assert kids, "the bench process never started its child"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while any(_alive(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(k) for k in kids), "the child outlived the killed bench process"
    finally:
        if parent.poll() is None:
            parent.kill()
