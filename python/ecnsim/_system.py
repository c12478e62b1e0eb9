"""What the machine allows this process: memory left, and SIGINT handling around writes.

Kept apart from the core (which does no I/O): :func:`available_memory` reads
``/proc`` and the resource limits; :func:`deferred_sigint` holds Ctrl-C off
while results or traces are being written, so a second Ctrl-C cannot leave
them half written.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

__all__ = ["available_memory", "deferred_sigint", "parse_bytes"]

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def parse_bytes(text: str) -> int:
    """``"2GB"``, ``"512MiB"``, ``"1.5e9"`` -> bytes.

    KB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024.
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise ValueError(
            f"expected a size such as 2GB or 512MiB (units: B, KB, MB, GB, TB, KiB, MiB, GiB, "
            f"TiB), got {text!r}"
        )
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not 0 < value < 2**63:
        raise ValueError(f"must be > 0 and < 2^63 bytes, got {text!r}")
    return int(value)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_available() -> int | None:
    """cgroup v2: ``memory.max - memory.current`` of this process's group (and its parents)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    rel = next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), None)
    if rel is None:
        return None
    best: int | None = None
    d = Path("/sys/fs/cgroup") / rel.lstrip("/")
    root = Path("/sys/fs/cgroup")
    while True:
        limit, used = _read_int(d / "memory.max"), _read_int(d / "memory.current")
        if limit is not None and used is not None:
            left = max(0, limit - used)
            best = left if best is None else min(best, left)
        if d == root or root not in d.parents:
            break
        d = d.parent
    return best


def _rlimit_available() -> int | None:
    """The address-space and data-segment limits (``ulimit -v`` / ``-d``) less what is in use."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    best: int | None = None
    for which, field in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft, _ = resource.getrlimit(which)
        if soft == resource.RLIM_INFINITY:
            continue
        used = 0
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    used = int(line.split()[1]) * 1024
        left = max(0, soft - used)
        best = left if best is None else min(best, left)
    return best


def available_memory() -> int | None:
    """Bytes this process can still allocate, or None if unknown.

    The smallest of the system's available memory (``MemAvailable``), the
    cgroup's limit less its usage, and the address-space and data limits
    (``ulimit -v``, ``ulimit -d``) less what this process already uses.
    """
    values = [v for v in (_meminfo_available(), _cgroup_available(), _rlimit_available()) if v]
    return min(values) if values else None


@contextlib.contextmanager
def deferred_sigint(message: str | None = None, *, reraise: bool = True) -> Iterator[list[int]]:
    """Hold Ctrl-C (SIGINT) off while the block runs; only in the main thread.

    A SIGINT during the block prints ``message`` (once) to stderr and is
    remembered; with ``reraise``, :class:`KeyboardInterrupt` is raised when the
    block ends, otherwise the signal is dropped (the caller is already
    handling an interrupt). Inside another such block, the signal is passed on
    to it when the inner block ends. The block gets the list of signals received
    (``with deferred_sigint() as received``).
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, frame: object) -> None:
        if not received and message:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(message + "\n")
                sys.stderr.flush()
        received.append(signum)

    handler.ecnsim_deferral = True  # type: ignore[attr-defined]
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # pragma: no cover - not the main interpreter
        yield received
        return
    try:
        yield received
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and getattr(previous, "ecnsim_deferral", False):
            # Nested in another deferral: the outer one decides.
            forward = cast("Callable[[int, object], None]", previous)
            forward(received[0], None)
        elif received and reraise and previous is not signal.SIG_IGN:
            raise KeyboardInterrupt


class HeldInterrupts:
    """Ctrl-C (SIGINT) during a run whose partial results are written after it: the first
    raises :class:`KeyboardInterrupt` as usual; from then on each is counted and held, not
    raised, until :meth:`release`, so that none lands between catching the first and
    writing what finished (there a second one would have left no results at all)."""

    def __init__(self) -> None:
        self.count = 0
        self.holding = False

    def __call__(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.holding:
            return
        self.holding = True
        raise KeyboardInterrupt

    @property
    def again(self) -> bool:
        """A Ctrl-C came after the first."""
        return self.count > 1

    def release(self) -> None:
        """The next Ctrl-C raises again (the writer can now be stopped part-way)."""
        self.holding = False


@contextlib.contextmanager
def hold_sigint_after_first() -> Iterator[HeldInterrupts]:
    """The block with SIGINT handled by a :class:`HeldInterrupts` (only in the main thread,
    and not where SIGINT is ignored); the previous handler comes back when it ends."""
    held = HeldInterrupts()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    try:
        previous = signal.signal(signal.SIGINT, held)
    except ValueError:  # pragma: no cover - not the main interpreter
        yield held
        return
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, previous)
        yield held
        return
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)


def default_max_memory() -> int | None:
    """The memory limit a simulation gets by default: 90% of :func:`available_memory`.

    ``ECNSIM_MAX_MEMORY`` (a size such as ``8GB``) overrides it.
    """
    env = os.environ.get("ECNSIM_MAX_MEMORY")
    if env:
        return parse_bytes(env)
    avail = available_memory()
    return None if avail is None else int(avail * 0.9)
