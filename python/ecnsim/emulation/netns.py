"""Network namespaces for emulated hosts: create, configure, run in, tear down.

Every namespace the emulation makes is named ``ecnsim-<pid>-<host>`` (``<pid>``
is the emulating process), so that ``ecnsim emulate --cleanup`` can find
leftovers of processes that no longer exist, and never touches a namespace of
a run still going. Only addresses in :data:`ADDRESS_PREFIX` are used, and only
inside these namespaces: nothing here changes the host's own interfaces,
routes or sysctls.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ADDRESS_PREFIX",
    "MARKER_DIR",
    "NETNS_DIR",
    "NamespaceError",
    "check_environment",
    "cleanup_leftovers",
    "host_address",
    "namespace_name",
    "remove_orphans",
]

#: The private range every emulated host's address comes from (10.201.0.0/16).
ADDRESS_PREFIX = "10.201"
#: Where ``ip netns`` binds named namespaces.
NETNS_DIR = Path("/run/netns")
#: Where ecnsim marks the namespaces it made: ``<name>.owner`` holds the emulating
#: process's pid and start time (``/proc/<pid>/stat``), so that a namespace is known to be
#: ecnsim's by more than its name, and its owner's death is told from a reused pid.
MARKER_DIR = Path("/run/ecnsim/netns")
#: Namespace names: ``ecnsim-<pid>-<host>``.
_NAME_RE = re.compile(r"^ecnsim-(\d+)-[A-Za-z0-9_.-]+$")
#: Interface-name limit (IFNAMSIZ - 1).
_IFNAMSIZ = 15


class NamespaceError(RuntimeError):
    """The machine cannot run an emulation, or a namespace step failed."""


def host_address(index: int) -> str:
    """The address of the ``index``-th emulated host (0-based): ``10.201.<index+1>.2``."""
    if not 0 <= index < 250:
        raise NamespaceError(f"at most 250 emulated hosts, got host index {index}")
    return f"{ADDRESS_PREFIX}.{index + 1}.2"


def namespace_name(pid: int, host: str) -> str:
    """``ecnsim-<pid>-<host>``, with characters ``ip netns`` dislikes replaced."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host)
    return f"ecnsim-{pid}-{safe}"


def check_environment() -> None:
    """Raise :class:`NamespaceError` saying what is missing and what to do, unless
    this process can create network namespaces and TUN devices."""
    problems: list[str] = []
    if os.geteuid() != 0:
        problems.append("not root: run as root (e.g. sudo ecnsim emulate ...)")
    if shutil.which("ip") is None:
        problems.append("the 'ip' command (iproute2) is not installed: apt-get install iproute2")
    if not Path("/dev/net/tun").exists():
        problems.append(
            "/dev/net/tun is missing: modprobe tun (in a container: --device /dev/net/tun)"
        )
    if not Path("/proc/self/ns/net").exists():
        problems.append("this kernel has no network namespaces (CONFIG_NET_NS)")
    if problems:
        raise NamespaceError("cannot emulate here: " + "; ".join(problems))
    # A namespace can be created and removed (a container may forbid it).
    probe = f"ecnsim-{os.getpid()}-probe"
    try:
        _ip(["netns", "add", probe])
    except NamespaceError as e:
        raise NamespaceError(
            f"cannot emulate here: creating a network namespace failed ({e}); "
            "a container needs CAP_SYS_ADMIN (docker run --privileged or --cap-add SYS_ADMIN)"
        ) from None
    _ip(["netns", "del", probe])


def _ip(args: Sequence[str], *, netns: str | None = None) -> str:
    cmd = ["ip", *(["-n", netns] if netns else []), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise NamespaceError(f"{' '.join(cmd)}: {r.stderr.strip() or f'exit {r.returncode}'}")
    return r.stdout


def _sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


@dataclass
class Namespace:
    """One emulated host's namespace."""

    name: str
    host: str
    address: str
    ifname: str = "ecn0"

    @property
    def path(self) -> Path:
        """The bound namespace file (what ``setns`` opens)."""
        return NETNS_DIR / self.name

    def create(self) -> None:
        """Create the namespace with its loopback up and IPv6 off (so the device
        carries only the IPv4 packets the emulation routes), and mark it as this
        process's (:data:`MARKER_DIR`)."""
        _write_marker(self.name)
        _ip(["netns", "add", self.name])
        _ip(["link", "set", "lo", "up"], netns=self.name)
        self.sysctl("net.ipv6.conf.all.disable_ipv6", "1")
        self.sysctl("net.ipv6.conf.default.disable_ipv6", "1")

    def sysctl(self, key: str, value: str) -> None:
        """Set ``key`` inside this namespace (net.* sysctls are per namespace)."""
        self.exec(["sh", "-c", f"echo {value} > {_sysctl_path(key)}"])

    def read_sysctl(self, key: str) -> str:
        """The value of ``key`` inside this namespace."""
        return self.exec(["cat", _sysctl_path(key)]).strip()

    def configure_device(self, mtu: int, route_options: Sequence[str]) -> None:
        """Address, MTU and the route to every other emulated host, once the
        driver has created the TUN device."""
        _ip(["addr", "add", f"{self.address}/32", "dev", self.ifname], netns=self.name)
        _ip(["link", "set", self.ifname, "mtu", str(mtu), "up"], netns=self.name)
        _ip(
            ["route", "add", f"{ADDRESS_PREFIX}.0.0/16", "dev", self.ifname, *route_options],
            netns=self.name,
        )

    def exec(self, cmd: Sequence[str]) -> str:
        """Run ``cmd`` in this namespace; its output."""
        full = ["ip", "netns", "exec", self.name, *cmd]
        r = subprocess.run(full, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise NamespaceError(f"{' '.join(full)}: {r.stderr.strip() or f'exit {r.returncode}'}")
        return r.stdout

    def popen(self, cmd: Sequence[str], **kwargs: object) -> subprocess.Popen[str]:
        """Start ``cmd`` in this namespace, in its own process group."""
        return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
            ["ip", "netns", "exec", self.name, *cmd],
            text=True,
            start_new_session=True,
            **kwargs,
        )

    def tcp_counters(self) -> dict[str, int]:
        """This namespace's TCP counters (``/proc/net/netstat`` TcpExt and ``/proc/net/snmp``
        Tcp, as ``nstat`` names them: ``TcpExtTCPTimeouts``, ``TcpRetransSegs``, ...)."""
        out: dict[str, int] = {}
        text = self.exec(["cat", "/proc/net/netstat", "/proc/net/snmp"])
        lines = text.splitlines()
        for names, values in zip(lines[::2], lines[1::2], strict=False):
            prefix, _, keys = names.partition(":")
            if prefix not in ("TcpExt", "Tcp") or not values.startswith(prefix + ":"):
                continue
            for k, v in zip(keys.split(), values.partition(":")[2].split(), strict=False):
                with contextlib.suppress(ValueError):
                    out[prefix + k] = int(v)
        return out

    def pids(self) -> list[int]:
        """Processes still running in this namespace."""
        with contextlib.suppress(NamespaceError):
            out = _ip(["netns", "pids", self.name])
            return [int(x) for x in out.split()]
        return []

    def destroy(self) -> None:
        """Kill what still runs in the namespace, then delete it (idempotent)."""
        kill_namespace_processes(self.name)
        with contextlib.suppress(NamespaceError):
            _ip(["netns", "del", self.name])
        with contextlib.suppress(OSError):
            (MARKER_DIR / f"{self.name}.owner").unlink()


def kill_namespace_processes(name: str) -> None:
    """SIGKILL every process whose network namespace is ``name`` (by pid, one at a time)."""
    with contextlib.suppress(NamespaceError):
        for pid in (int(x) for x in _ip(["netns", "pids", name]).split()):
            if pid != os.getpid():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (``/proc/<pid>/stat`` field 22, in clock ticks
    since boot), or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    return stat[stat.rindex(")") + 2 :].split()[19]


def _write_marker(name: str) -> None:
    MARKER_DIR.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    # Written whole under another name, then renamed into place: a sweep reading it at the same
    # time (another emulate's :func:`remove_orphans`) finds no marker or the whole one, never a
    # part whose start time would not be this process's.
    tmp = MARKER_DIR / f".{name}.owner.{pid}"
    tmp.write_text(f"{pid} {_start_time(pid)}\n")
    os.replace(tmp, MARKER_DIR / f"{name}.owner")


def _marked_owner_gone(name: str) -> bool:
    """Whether ``name`` carries ecnsim's marker and the process that made it is gone (dead,
    or its pid now another process's).

    Never true for a running emulation: its marker names its own pid and start time, which
    ``/proc`` still shows. A marker that cannot be read whole, or whose pid is not the one in
    the namespace's name (made by another process under that name), is not judged: such a
    namespace is never removed here (``ecnsim emulate --cleanup`` goes by the name alone)."""
    try:
        pid_text, start = (MARKER_DIR / f"{name}.owner").read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    m = _NAME_RE.match(name)
    if m is None or int(m.group(1)) != pid:
        return False
    return _start_time(pid) != start


def remove_orphans() -> list[str]:
    """Delete the namespaces ecnsim marked (:data:`MARKER_DIR`) whose emulating process is
    gone (killed with SIGKILL, say), and the traffic programs still running in them, as
    ``ecnsim emulate`` does before each run. Returns the names removed.

    A running emulation's namespaces and markers are never touched, even while it is making
    them (its marker is written before its namespace exists): only what
    :func:`_marked_owner_gone` judges gone is removed."""
    removed = []
    for name in list_namespaces():
        if _marked_owner_gone(name):
            Namespace(name=name, host="", address="").destroy()
            removed.append(name)
    # Markers without a namespace whose owner is gone (killed between deleting its namespace
    # and its marker). A live owner's marker stays: it may be about to create the namespace.
    if MARKER_DIR.is_dir():
        present = set(list_namespaces())
        for marker in MARKER_DIR.glob("*.owner"):
            name = marker.name.removesuffix(".owner")
            if name not in present and _marked_owner_gone(name):
                with contextlib.suppress(OSError):
                    marker.unlink()
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_namespaces() -> list[str]:
    """Names of the ``ecnsim-<pid>-*`` namespaces on this machine."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir() if _NAME_RE.match(p.name))


def cleanup_leftovers(*, include_live: bool = False, pids: Iterable[int] = ()) -> list[str]:
    """Delete emulation namespaces whose emulating process is gone (or, with
    ``include_live``, every one; with ``pids``, those of these processes).
    Returns the names removed. Processes still inside them are killed first."""
    wanted = set(pids)
    removed = []
    for name in list_namespaces():
        m = _NAME_RE.match(name)
        assert m is not None
        owner = int(m.group(1))
        if include_live or owner in wanted or not _pid_alive(owner):
            Namespace(name=name, host="", address="").destroy()
            removed.append(name)
    return removed


def interface_name(i: int) -> str:
    """The TUN device name in every namespace (one device per host)."""
    name = "ecn0" if i == 0 else f"ecn{i}"
    assert len(name) <= _IFNAMSIZ
    return name
