"""The built-in traffic programs of ``ecnsim emulate``, run inside the hosts'
namespaces with the hosts' own Linux TCP:

- ``server --mode sink``: accepts connections and reads until EOF (bulk receiver);
- ``server --mode crr|rr``: answers each ``--request``-byte request with
  ``--response`` bytes (netperf TCP_CRR closes after one transaction, TCP_RR
  keeps the connection);
- ``client --mode bulk``: connects and sends ``--bytes`` bytes (or until the end);
- ``client --mode crr|rr``: runs transactions back to back until the end.

Times on the command line (``--start-at``, ``--end-at``, ``--warmup-at``) are
nanoseconds after simulated time zero. Each program sets itself up (a
server listens), prints ``ready`` on stderr, then reads simulated time zero
from stdin: one line, a ``CLOCK_MONOTONIC`` instant in nanoseconds
(``time.monotonic_ns()``, the clock of the emulation driver, the same in
every namespace). The runner picks that instant only once every program is
ready, so a slow start on a loaded machine delays the whole experiment
instead of shifting one program against the others. Each program prints
one JSON object on stdout when it ends (at ``--end-at``, on EOF, or on
SIGTERM), with Linux's ``TCP_INFO`` of its sockets.

The module imports the standard library only, and the runner starts it by
path (``python -I -S .../ecnsim/emulation/traffic.py {server,client} ...``),
so it starts in tenths of a second even on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

CHUNK = 65536

#: ``struct tcp_info`` (include/uapi/linux/tcp.h): the fields read, with their byte offsets.
_TCP_INFO_FIELDS = {
    "state": (0, "B"),
    "ca_state": (1, "B"),
    "options": (5, "B"),
    "snd_mss": (16, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),
    "bytes_received": (128, "Q"),
    "notsent_bytes": (144, "I"),
    "segs_out": (136, "I"),
    "segs_in": (140, "I"),
    "data_segs_in": (152, "I"),
    "data_segs_out": (156, "I"),
    # Time (µs) the connection was sending, and limited by the receive window or the send buffer
    # (tcp_get_info(): chrono_stat; `ss -ti` busy / rwnd_limited / sndbuf_limited).
    "busy_time": (168, "Q"),
    "rwnd_limited": (176, "Q"),
    "sndbuf_limited": (184, "Q"),
    "delivered": (192, "I"),
    "delivered_ce": (196, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
    # Linux 6.7 and later: retransmission timeouts of this socket (SYN ones included).
    "total_rto": (240, "H"),
}
#: Fields older kernels lack: left out (not 0) when the kernel's struct is shorter.
_TCP_INFO_OPTIONAL = {"total_rto"}
_TCP_INFO_LEN = 248
#: tcpi_options bits.
TCPI_OPT_SACK = 2
TCPI_OPT_ECN = 8
TCPI_OPT_ECN_SEEN = 16


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The ``TCP_INFO`` fields of ``sock`` that the emulation records (missing ones as 0)."""
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LEN)
    except OSError:
        return {}
    out = {}
    for name, (offset, fmt) in _TCP_INFO_FIELDS.items():
        size = struct.calcsize(fmt)
        if len(raw) >= offset + size:
            out[name] = struct.unpack_from("=" + fmt, raw, offset)[0]
        elif name not in _TCP_INFO_OPTIONAL:
            out[name] = 0
    return out


def _await_time_zero(a: argparse.Namespace) -> None:
    """Say ``ready``, read simulated time zero from stdin, make the times absolute."""
    print("ready", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    try:
        t0 = int(line)
    except ValueError:
        got = line.strip()
        raise SystemExit(f"expected simulated time zero (ns) on stdin, got {got!r}") from None
    a.t0 = t0
    a.end_at += t0
    a.warmup_at += t0
    if getattr(a, "start_at", None) is not None:
        a.start_at += t0


def _sleep_until(t_ns: int) -> None:
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(min(left / 1e9, 0.05))


def _set_cc(sock: socket.socket, cc: str | None) -> None:
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def _clamp_window(sock: socket.socket, window: int | None) -> None:
    """Ask Linux to advertise at most ``window`` bytes (TCP_WINDOW_CLAMP). Below 64 KB at
    the SYN this also turns window scaling off; beyond that, see docs/emulation.md: the
    kernel's receive-buffer autotuning may advertise more."""
    if window:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, window)


def _recv_exact(sock: socket.socket, n: int, deadline_ns: int) -> int:
    got = 0
    while got < n:
        if time.monotonic_ns() >= deadline_ns:
            break
        data = sock.recv(min(CHUNK, n - got))
        if not data:
            break
        got += len(data)
    return got


class _Stop:
    def __init__(self) -> None:
        self.event = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: self.event.set())


# ---------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------


def run_server(a: argparse.Namespace) -> dict[str, Any]:
    stop = _Stop()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    _set_cc(lsock, a.cc)
    _clamp_window(lsock, a.window_clamp)
    lsock.bind((a.bind, a.port))
    lsock.listen(128)
    lsock.settimeout(0.05)
    _await_time_zero(a)
    lock = threading.Lock()
    conns: list[dict[str, Any]] = []
    threads = []

    def sink(sock: socket.socket, rec: dict[str, Any]) -> None:
        sock.settimeout(0.05)
        while not stop.event.is_set():
            try:
                data = sock.recv(CHUNK)
            except TimeoutError:
                continue
            except OSError:
                break
            now = time.monotonic_ns()
            if not data:
                rec["eof_ns"] = now
                break
            if rec["first_byte_ns"] is None:
                rec["first_byte_ns"] = now
            if now < a.warmup_at:
                rec["bytes_before_warmup"] += len(data)
            if now <= a.end_at:
                rec["bytes_by_end"] += len(data)
            rec["bytes"] += len(data)
            rec["last_byte_ns"] = now
        rec["tcp_info"] = tcp_info(sock)
        sock.close()

    def answer(sock: socket.socket, rec: dict[str, Any]) -> None:
        sock.settimeout(0.05)
        pending = 0
        response = b"r" * a.response
        while not stop.event.is_set():
            try:
                data = sock.recv(CHUNK)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            pending += len(data)
            rec["bytes"] += len(data)
            while pending >= a.request:
                pending -= a.request
                try:
                    sock.sendall(response)
                except OSError:
                    pending = -1
                    break
                rec["transactions"] += 1
                if a.mode == "crr":
                    break
            if pending < 0 or (a.mode == "crr" and rec["transactions"]):
                break
        rec["tcp_info"] = tcp_info(sock)
        sock.close()

    while not stop.event.is_set() and time.monotonic_ns() < a.end_at + a.grace_ns:
        try:
            sock, peer = lsock.accept()
        except TimeoutError:
            continue
        # Set again on the connection: a listener's clamp reaches only its SYN-ACK.
        _clamp_window(sock, a.window_clamp)
        rec: dict[str, Any] = {
            "accepted_ns": time.monotonic_ns(),
            "peer": f"{peer[0]}:{peer[1]}",
            "bytes": 0,
            "bytes_before_warmup": 0,
            "bytes_by_end": 0,
            "first_byte_ns": None,
            "last_byte_ns": None,
            "eof_ns": None,
            "transactions": 0,
        }
        with lock:
            conns.append(rec)
        t = threading.Thread(target=sink if a.mode == "sink" else answer, args=(sock, rec))
        t.daemon = True
        t.start()
        threads.append(t)
        if a.mode == "sink" and a.once:
            break
    for t in threads:
        t.join(timeout=max(0.0, (a.end_at + a.grace_ns - time.monotonic_ns()) / 1e9))
    stop.event.set()
    for t in threads:
        t.join(timeout=1.0)
    lsock.close()
    with lock:
        return {"role": "server", "mode": a.mode, "port": a.port, "connections": conns}


# ---------------------------------------------------------------------------
# Client
# ---------------------------------------------------------------------------


def _connect(a: argparse.Namespace) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    _set_cc(sock, a.cc)
    _clamp_window(sock, a.window_clamp)
    sock.settimeout(max(0.05, (a.end_at - time.monotonic_ns()) / 1e9))
    sock.connect((a.dst, a.port))
    return sock


def _sample_tcp_info(
    sock: socket.socket, a: argparse.Namespace, stop: _Stop, rows: list[list[int]]
) -> None:
    """Every ``--sample-ns`` from simulated time zero to the end: [ns after time zero,
    snd_cwnd, snd_ssthresh, snd_mss, rtt_us, total_retrans, bytes_sent, bytes_acked] of
    ``sock`` (the ``flow_series`` of an emulated run)."""
    k = max(0, -(-(time.monotonic_ns() - a.t0) // a.sample_ns))
    while not stop.event.is_set():
        t = a.t0 + k * a.sample_ns
        if t > a.end_at:
            return
        _sleep_until(t)
        info = tcp_info(sock)
        if not info:
            return
        rows.append(
            [t - a.t0]
            + [
                info.get(f, 0)
                for f in (
                    "snd_cwnd",
                    "snd_ssthresh",
                    "snd_mss",
                    "rtt_us",
                    "total_retrans",
                    "bytes_sent",
                    "bytes_acked",
                )
            ]
        )
        k += 1


def run_bulk_client(a: argparse.Namespace, stop: _Stop) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "client", "mode": "bulk", "start_ns": time.monotonic_ns()}
    try:
        sock = _connect(a)
    except OSError as e:
        out["error"] = f"connect: {e}"
        return out
    out["connected_ns"] = time.monotonic_ns()
    samples: list[list[int]] = []
    sampler = None
    if a.sample_ns:
        sampler = threading.Thread(
            target=_sample_tcp_info, args=(sock, a, stop, samples), daemon=True
        )
        sampler.start()
    payload = b"x" * CHUNK
    sent = 0
    warm_info = None
    sock.settimeout(0.05)
    limit = a.bytes if a.bytes is not None else None
    while not stop.event.is_set():
        now = time.monotonic_ns()
        if now >= a.end_at:
            break
        if warm_info is None and now >= a.warmup_at:
            warm_info = tcp_info(sock)
        n = CHUNK if limit is None else min(CHUNK, limit - sent)
        if n <= 0:
            break
        try:
            sent += sock.send(payload[:n])
        except TimeoutError:
            continue
        except OSError as e:
            out["error"] = f"send: {e}"
            break
    out["bytes_written"] = sent
    out["all_written_ns"] = time.monotonic_ns() if limit is not None and sent >= limit else None
    if limit is not None and sent >= limit:
        # Half-close, then wait for the sink to close: every byte was delivered and acknowledged.
        sock.shutdown(socket.SHUT_WR)
        while not stop.event.is_set() and time.monotonic_ns() < a.end_at:
            try:
                if not sock.recv(CHUNK):
                    out["closed_ns"] = time.monotonic_ns()
                    break
            except TimeoutError:
                continue
            except OSError:
                break
    out["tcp_info"] = tcp_info(sock)
    out["tcp_info_warmup"] = warm_info
    if sampler is not None:
        stop.event.set()
        sampler.join(timeout=1.0)
        out["samples"] = list(samples)
    sock.close()
    return out


def run_transactions(a: argparse.Namespace, stop: _Stop) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "client", "mode": a.mode, "start_ns": time.monotonic_ns()}
    request = b"q" * a.request
    # [start ns, end ns, connection set-up ns (-1: none), state]
    records: list[list[float | str]] = []
    retrans = 0
    ecn = 0
    errors = 0
    sock = None
    while not stop.event.is_set() and time.monotonic_ns() < a.end_at:
        t0 = time.monotonic_ns()
        setup = None
        try:
            if sock is None:
                sock = _connect(a)
                setup = time.monotonic_ns() - t0
            sock.settimeout(max(0.01, (a.end_at - time.monotonic_ns()) / 1e9))
            sock.sendall(request)
            got = _recv_exact(sock, a.response, a.end_at)
        except OSError:
            errors += 1
            got = -1
        t1 = time.monotonic_ns()
        # As the simulator's records: completed; under way at the end; or given up on an error.
        if got == a.response:
            state = "completed"
        elif t1 >= a.end_at:
            state = "in_progress"
        else:
            state = "failed"
        records.append([t0, t1, setup if setup is not None else -1, state])
        if sock is not None and (a.mode == "crr" or got != a.response):
            info = tcp_info(sock)
            retrans += info.get("total_retrans", 0)
            ecn |= int(bool(info.get("options", 0) & TCPI_OPT_ECN))
            sock.close()
            sock = None
    if sock is not None:
        info = tcp_info(sock)
        retrans += info.get("total_retrans", 0)
        ecn |= int(bool(info.get("options", 0) & TCPI_OPT_ECN))
        sock.close()
    out.update(records=records, retransmits=retrans, ecn=ecn, errors=errors)
    return out


def run_client(a: argparse.Namespace) -> dict[str, Any]:
    stop = _Stop()
    _await_time_zero(a)
    _sleep_until(a.start_at)
    if a.mode == "bulk":
        return run_bulk_client(a, stop)
    return run_transactions(a, stop)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="traffic.py", description="Times are ns after simulated time zero (read from stdin)."
    )
    sub = p.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--mode", choices=("sink", "crr", "rr"), required=True)
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--once", action="store_true", help="sink: one connection only")
    c = sub.add_parser("client")
    c.add_argument("--mode", choices=("bulk", "crr", "rr"), required=True)
    c.add_argument("--dst", required=True)
    c.add_argument("--start-at", type=int, required=True)
    c.add_argument("--bytes", type=int)
    c.add_argument(
        "--sample-ns", type=int, default=0, help="bulk: sample TCP_INFO every N ns (0: never)"
    )
    for q in (s, c):
        q.add_argument("--port", type=int, required=True)
        q.add_argument("--end-at", type=int, required=True)
        q.add_argument("--warmup-at", type=int, default=0)
        q.add_argument("--grace-ns", type=int, default=0)
        q.add_argument("--request", type=int, default=1)
        q.add_argument("--response", type=int, default=1)
        q.add_argument("--cc")
        q.add_argument("--window-clamp", type=int)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    result = run_server(a) if a.role == "server" else run_client(a)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
