"""Packet traces: the ns-2 trace format and pcap, written from per-event records.

The core reports one *record* per packet event on a link. This module turns
records into files that older tools read:

- :func:`write_ns2_trace` / :class:`Ns2TraceWriter`: ns-2's wired trace
  format (``+ - r d`` lines with ns-2's flags field, ECN bits included), so
  ns-2 post-processing scripts (awk, perl, xgraph pipelines) work unchanged;
- :func:`write_pcap` / :class:`PcapWriter`: pcap with real IPv4 and TCP
  (or UDP) headers, ``LINKTYPE_RAW``: ECN field, ECE/CWR flags, SACK
  option, valid IP and TCP checksums; tcpdump, tshark, Wireshark and
  tcptrace read it.

Records
-------

Records are a numpy structured array (:data:`TRACE_DTYPE` or any subset of
its fields), a pandas DataFrame, or a mapping of column name to array, with
one entry per event, in the order the events happened. Columns
(:data:`TRACE_COLUMNS` lists them with their dtypes and defaults):

========================= ======== ==================================================
column                    dtype    meaning
========================= ======== ==================================================
``time_s``                f8       event time in seconds (or ``time_ns``, u8, exact)
``event``                 str      ``"+"`` enqueue, ``"-"`` dequeue (transmission
                                   starts), ``"r"`` received at ``to_node``,
                                   ``"d"`` dropped
``from_node``/``to_node`` u4       the link direction the event happened on
``flow_id``               u4       the flow (ns-2's ``fid``)
``uid``                   u8       packet id, the same on every hop
``size``                  u4       bytes on the wire as the simulator counts them
                                   (headers included; ns-2's size field)
``src_node``/``dst_node`` u4       the packet's source and destination hosts
``ecn``                   u1       IP ECN field: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
``tcp_flags``             u1       FIN=1 SYN=2 RST=4 PSH=8 ACK=16 URG=32 ECE=64 CWR=128
``seq``/``ack``           u8       TCP sequence and acknowledgement numbers (bytes;
                                   written modulo 2^32 in pcap)
``payload``               u4       payload bytes
``window``                u4       advertised receive window, bytes (default 65535)
``sack_blocks``           u1       SACK blocks carried, 0-3 (default 0)
``sack_left_i``,          u8       SACK block i = 1..3: ``[left, right)`` edges
``sack_right_i``
``src_port``/``dst_port`` u2       ports (default: both ``1024 + flow_id % 64512``)
``proto``                 u1       IP protocol: 6 TCP (default), 17 UDP
``seqno``                 i8       the number ns-2 prints as "seq" (default ``seq``;
                                   set it to ns-2's packet number to mimic Agent/TCP)
``mss``                   u2       MSS option on SYN segments (0: none; default 0)
``sack_permitted``        u1       SACK-permitted option on SYN segments (default 0)
========================= ======== ==================================================

Nothing here needs the simulator: the writers can be tested on synthetic
records, and the core's trace hooks only have to produce these columns.
"""

from __future__ import annotations

import math
import os
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

import numpy as np
import pandas as pd

__all__ = [
    "ACK",
    "CWR",
    "ECE",
    "FIN",
    "LINKTYPE_RAW",
    "PSH",
    "RST",
    "SYN",
    "TRACE_COLUMNS",
    "TRACE_DTYPE",
    "URG",
    "Ns2TraceWriter",
    "PcapDirectoryWriter",
    "PcapWriter",
    "filter_records",
    "internet_checksum",
    "node_address",
    "ns2_flags",
    "ns2_line",
    "pcap_file_name",
    "read_ns2_trace",
    "to_frame",
    "write_ns2_trace",
    "write_pcap",
]

# TCP header flag bits (RFC 9293 §3.1; ECE and CWR: RFC 3168 §6.1).
FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80

#: pcap link type of raw IPv4/IPv6 packets with no link-layer header
#: (tcpdump.org link-layer header types: LINKTYPE_RAW = 101).
LINKTYPE_RAW = 101

_PCAP_MAGIC_US = 0xA1B2C3D4
_PCAP_MAGIC_NS = 0xA1B23C4D

IPPROTO_TCP = 6
IPPROTO_UDP = 17


@dataclass(frozen=True)
class _Col:
    dtype: str
    default: Any  # None: required
    doc: str


#: Record columns: dtype, default (``None`` for required) and meaning.
TRACE_COLUMNS: dict[str, _Col] = {
    "time_s": _Col("<f8", None, "event time, seconds"),
    "event": _Col("S1", None, "'+' enqueue, '-' dequeue, 'r' receive, 'd' drop"),
    "from_node": _Col("<u4", None, "link direction: transmitting node"),
    "to_node": _Col("<u4", None, "link direction: receiving node"),
    "flow_id": _Col("<u4", None, "flow"),
    "uid": _Col("<u8", None, "packet id, same on every hop"),
    "size": _Col("<u4", None, "bytes on the wire (headers included)"),
    "src_node": _Col("<u4", None, "packet source host"),
    "dst_node": _Col("<u4", None, "packet destination host"),
    "ecn": _Col("u1", 0, "IP ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE)"),
    "tcp_flags": _Col("u1", 0, "TCP flags (FIN=1 SYN=2 RST=4 PSH=8 ACK=16 ECE=64 CWR=128)"),
    "seq": _Col("<u8", 0, "TCP sequence number"),
    "ack": _Col("<u8", 0, "TCP acknowledgement number"),
    "payload": _Col("<u4", 0, "payload bytes"),
    "window": _Col("<u4", 65535, "advertised receive window, bytes"),
    "sack_blocks": _Col("u1", 0, "SACK blocks carried (0-3)"),
    "sack_left_1": _Col("<u8", 0, "SACK block 1 left edge"),
    "sack_right_1": _Col("<u8", 0, "SACK block 1 right edge"),
    "sack_left_2": _Col("<u8", 0, "SACK block 2 left edge"),
    "sack_right_2": _Col("<u8", 0, "SACK block 2 right edge"),
    "sack_left_3": _Col("<u8", 0, "SACK block 3 left edge"),
    "sack_right_3": _Col("<u8", 0, "SACK block 3 right edge"),
    "src_port": _Col("<u2", -1, "source port (default 1024 + flow_id % 64512)"),
    "dst_port": _Col("<u2", -1, "destination port (default 1024 + flow_id % 64512)"),
    "proto": _Col("u1", IPPROTO_TCP, "IP protocol (6 TCP, 17 UDP)"),
    "seqno": _Col("<i8", -1, "ns-2 'seq' field (default: seq)"),
    "mss": _Col("<u2", 0, "MSS option on SYN segments (0: none)"),
    "sack_permitted": _Col("u1", 0, "SACK-permitted option on SYN segments"),
}

#: A structured dtype with every record column (``event`` as one byte).
TRACE_DTYPE = np.dtype([(name, col.dtype) for name, col in TRACE_COLUMNS.items()])

_EVENTS = ("+", "-", "r", "d")

Records = np.ndarray | pd.DataFrame | Mapping[str, Any]


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


def _columns(records: Records) -> dict[str, np.ndarray]:
    """The records as a dict of numpy columns, defaults filled, events as ``str``."""
    if isinstance(records, np.ndarray):
        if records.dtype.names is None:
            raise TypeError("records: a numpy array must be a structured array")
        raw = {name: records[name] for name in records.dtype.names}
    elif isinstance(records, pd.DataFrame):
        raw = {str(c): records[c].to_numpy() for c in records.columns}
    elif isinstance(records, Mapping):
        raw = {str(k): np.asarray(v) for k, v in records.items()}
    else:
        raise TypeError(
            "records must be a structured array, DataFrame or mapping, "
            f"got {type(records).__name__}"
        )
    if "time_s" not in raw and "time_ns" in raw:
        raw["time_s"] = raw["time_ns"].astype(np.float64) / 1e9
    lengths = {len(v) for v in raw.values()}
    if len(lengths) > 1:
        raise ValueError(f"records: columns have different lengths {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    cols: dict[str, np.ndarray] = {}
    for name, spec in TRACE_COLUMNS.items():
        if name in raw:
            values = raw[name]
            if values.dtype.kind in "fO" and name not in ("time_s", "event"):
                missing = pd.isna(values)
                if missing.any():
                    if spec.default is None:
                        raise ValueError(f"records: column {name!r} has missing values")
                    values = np.where(missing, spec.default, values)
                values = values.astype(np.int64)
            cols[name] = values
        elif spec.default is None:
            raise KeyError(f"records: missing required column {name!r}")
        else:
            cols[name] = np.full(n, spec.default, dtype=np.int64)
    ev = cols["event"]
    if ev.dtype.kind == "S":
        ev = np.char.decode(ev, "ascii")
    cols["event"] = ev.astype(str)
    bad = ~np.isin(cols["event"], _EVENTS)
    if bad.any():
        raise ValueError(f"records: unknown event {cols['event'][bad][0]!r}; events are + - r d")
    fid = cols["flow_id"].astype(np.int64)
    default_port = 1024 + fid % 64512
    for p in ("src_port", "dst_port"):
        v = cols[p].astype(np.int64)
        cols[p] = np.where(v < 0, default_port, v)
    seqno = cols["seqno"].astype(np.int64)
    cols["seqno"] = np.where(seqno < 0, cols["seq"].astype(np.int64), seqno)
    if "time_ns" in raw:
        cols["time_ns"] = raw["time_ns"].astype(np.int64)
    else:
        cols["time_ns"] = np.round(cols["time_s"].astype(np.float64) * 1e9).astype(np.int64)
    return cols


def to_frame(records: Records) -> pd.DataFrame:
    """The records as a DataFrame with every column of :data:`TRACE_COLUMNS`, defaults filled."""
    return cast(pd.DataFrame, pd.DataFrame(_columns(records)))


def filter_records(
    records: Records,
    *,
    link: tuple[int, int] | None = None,
    node: int | None = None,
    flow: int | Iterable[int] | None = None,
    events: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """The records of one link direction, node, flow (or flows) and event types.

    ``link=(a, b)`` keeps events on the direction a -> b; ``node=n`` keeps
    events on links from or to ``n``; ``events="+-"`` or ``["r"]`` keeps
    those event types.
    """
    df = to_frame(records)
    keep = np.ones(len(df), dtype=bool)
    if link is not None:
        keep &= (df["from_node"].to_numpy() == link[0]) & (df["to_node"].to_numpy() == link[1])
    if node is not None:
        keep &= (df["from_node"].to_numpy() == node) | (df["to_node"].to_numpy() == node)
    if flow is not None:
        flows = [flow] if isinstance(flow, int) else list(flow)
        keep &= np.isin(df["flow_id"].to_numpy(), flows)
    if events is not None:
        keep &= np.isin(df["event"].to_numpy(), list(events))
    return cast(pd.DataFrame, df.loc[keep].reset_index(drop=True))


# ---------------------------------------------------------------------------
# ns-2
# ---------------------------------------------------------------------------


def ns2_flags(ecn: int, tcp_flags: int) -> str:
    """ns-2's 7-character flags field for a packet.

    ns-2 (``trace/trace.cc``, ``Trace::format``) prints one character per
    slot, ``-`` when unset, from the packet's ``hdr_flags``:

    ====  ====  ===================================  ======================
    slot  char  ns-2 field                           from
    ====  ====  ===================================  ======================
    1     C     ``ecn_``: ECN-Echo                   TCP ECE flag
    2     P     ``pri_``: priority (unused)          never
    3     -     unused                               never
    4     A     ``cong_action_``: congestion action  TCP CWR flag
    5     E     ``ecn_to_echo_``: CE, set by a router IP ECN field = CE
    6     F     ``fs_``: TCP fast start              never
    7     N     ``ecn_capable_``: ECN-capable        IP ECN field != Not-ECT
    ====  ====  ===================================  ======================

    A CE-marked packet is ECN-capable too, so ns-2 prints ``----E-N`` for
    it; an ECN-capable data packet is ``------N``; a pure ACK echoing
    congestion is ``C------``.
    """
    return "".join(
        (
            "C" if tcp_flags & ECE else "-",
            "-",
            "-",
            "A" if tcp_flags & CWR else "-",
            "E" if ecn == 3 else "-",
            "-",
            "N" if ecn != 0 else "-",
        )
    )


def _ns2_time(t: float) -> str:
    # ns-2 basetrace.h: TIME_FORMAT "%.15g" of round(t) = floor(t * 1e6 + 0.5) / 1e6.
    return "%.15g" % (math.floor(t * 1e6 + 0.5) / 1e6)


def _ptype(proto: int, payload: int, tcp_flags: int) -> str:
    if proto == IPPROTO_UDP:
        return "udp"
    if payload > 0 or tcp_flags & (SYN | FIN | RST):
        return "tcp"
    return "ack"


def _tcp_options_len(flags: int, sack_blocks: int, mss: int, sack_permitted: int) -> int:
    n = 0
    if sack_blocks:
        n += 4 + 8 * sack_blocks  # NOP NOP kind len blocks
    if flags & SYN:
        if mss:
            n += 4
        if sack_permitted:
            n += 4  # NOP NOP kind len
    return n


def ns2_line(
    event: str,
    time_s: float,
    from_node: int,
    to_node: int,
    ptype: str,
    size: int,
    flags: str,
    flow_id: int,
    src: tuple[int, int],
    dst: tuple[int, int],
    seqno: int,
    uid: int,
    tcp: tuple[int, int, int, int] | None = None,
) -> str:
    """One ns-2 trace line (no newline).

    ``trace.cc``: ``"%c %.15g %d %d %s %d %s %d %s.%s %s.%s %d %d"`` (event,
    time, link from and to node, packet type, size, flags, flow id,
    source and destination ``node.port``, sequence number, unique id), and
    with ``show_tcphdr_`` `` %d 0x%x %d %d`` (ack number, TCP flags, header
    length, number of SACK blocks).
    """
    line = (
        f"{event} {_ns2_time(time_s)} {from_node} {to_node} {ptype} {size} {flags} {flow_id} "
        f"{src[0]}.{src[1]} {dst[0]}.{dst[1]} {seqno} {uid}"
    )
    if tcp is not None:
        ack, tflags, hlen, sa_length = tcp
        line += f" {ack} 0x{tflags:x} {hlen} {sa_length}"
    return line


class Ns2TraceWriter:
    """Streams records to an ns-2 trace file; :meth:`write` may be called many times.

    ``tcp_header=True`` appends the ``show_tcphdr_`` fields (ack number, TCP
    flags in hex, IP+TCP header length, SACK blocks). ``ports``: print the
    records' ``src_port``/``dst_port`` as ns-2's port addresses (default
    ``False``: port 0, as ns-2 prints a node's first agent, ``0.0 3.0``).
    """

    def __init__(self, file: IO[str], *, tcp_header: bool = False, ports: bool = False) -> None:
        self.file = file
        self.tcp_header = tcp_header
        self.ports = ports
        self.lines = 0

    def write(self, records: Records) -> int:
        """Write one line per record; returns the number written."""
        c = _columns(records)
        ptypes: list[str] | None = None
        if isinstance(records, pd.DataFrame) and "ptype" in records.columns:
            ptypes = [str(p) for p in records["ptype"].to_numpy()]
        n = len(c["event"])
        out = []
        lists = {k: v.tolist() for k, v in c.items()}
        for i in range(n):
            flags = int(lists["tcp_flags"][i])
            proto = int(lists["proto"][i])
            payload = int(lists["payload"][i])
            sack = int(lists["sack_blocks"][i])
            ptype = ptypes[i] if ptypes is not None else _ptype(proto, payload, flags)
            sport = int(lists["src_port"][i]) if self.ports else 0
            dport = int(lists["dst_port"][i]) if self.ports else 0
            tcp = None
            if self.tcp_header:
                hlen = 20 + (
                    20
                    + _tcp_options_len(
                        flags, sack, int(lists["mss"][i]), int(lists["sack_permitted"][i])
                    )
                    if proto == IPPROTO_TCP
                    else 8
                )
                tcp = (int(lists["ack"][i]), flags, hlen, sack)
            out.append(
                ns2_line(
                    lists["event"][i],
                    float(lists["time_s"][i]),
                    int(lists["from_node"][i]),
                    int(lists["to_node"][i]),
                    ptype,
                    int(lists["size"][i]),
                    ns2_flags(int(lists["ecn"][i]), flags),
                    int(lists["flow_id"][i]),
                    (int(lists["src_node"][i]), sport),
                    (int(lists["dst_node"][i]), dport),
                    int(lists["seqno"][i]),
                    int(lists["uid"][i]),
                    tcp,
                )
            )
        if out:
            self.file.write("\n".join(out) + "\n")
        self.lines += n
        return n


def _open(file: str | os.PathLike[str] | IO[Any], mode: str) -> tuple[IO[Any], bool]:
    if isinstance(file, (str, os.PathLike)):
        if "b" in mode:
            return open(file, mode), True
        return open(file, mode, encoding="ascii", newline="\n"), True
    return file, False


def write_ns2_trace(
    records: Records,
    file: str | os.PathLike[str] | IO[str],
    *,
    tcp_header: bool = False,
    ports: bool = False,
) -> int:
    """Write ``records`` as an ns-2 trace to ``file`` (path or text file); returns lines written.

    Example line: ``+ 1.84375 0 2 tcp 1040 ------- 1 0.0 3.0 29 199``. See
    :class:`Ns2TraceWriter` for the options and :func:`ns2_flags` for the
    flags field.
    """
    f, close = _open(file, "w")
    try:
        return Ns2TraceWriter(f, tcp_header=tcp_header, ports=ports).write(records)
    finally:
        if close:
            f.close()


_NS2_LINE = re.compile(
    r"^(?P<event>[-+rd]) (?P<time>\S+) (?P<from_node>-?\d+) (?P<to_node>-?\d+) (?P<ptype>\S+) "
    r"(?P<size>\d+) (?P<flags>\S+) (?P<flow_id>-?\d+) (?P<src_node>-?\d+)\.(?P<src_port>-?\d+) "
    r"(?P<dst_node>-?\d+)\.(?P<dst_port>-?\d+) (?P<seqno>-?\d+) (?P<uid>\d+)"
    r"(?: (?P<ack>-?\d+) 0x(?P<tcp_flags>[0-9a-fA-F]+) (?P<hlen>\d+) (?P<sa_length>\d+))?\s*$"
)


def read_ns2_trace(file: str | os.PathLike[str] | IO[str]) -> pd.DataFrame:
    """Parse an ns-2 wired trace (ours or ns-2's) into a DataFrame.

    Columns: ``event, time_s, from_node, to_node, ptype, size, flags,
    flow_id, src_node, src_port, dst_node, dst_port, seqno, uid`` and, for
    lines with the ``show_tcphdr_`` fields, ``ack, tcp_flags, hlen,
    sa_length`` (NaN elsewhere); plus ``ecn_echo, cwr, ce, ect`` decoded
    from the flags field. Lines that are not packet events (``v``
    annotations, variable traces) are skipped.
    """
    f, close = _open(file, "r")
    try:
        rows = []
        for line in f:
            m = _NS2_LINE.match(line)
            if m is None:
                continue
            d: dict[str, Any] = m.groupdict()
            rows.append(d)
    finally:
        if close:
            f.close()
    df = pd.DataFrame(
        rows,
        columns=list(_NS2_LINE.groupindex),
    )
    for col in (
        "from_node",
        "to_node",
        "size",
        "flow_id",
        "src_node",
        "src_port",
        "dst_node",
        "dst_port",
        "seqno",
        "uid",
    ):
        df[col] = df[col].astype(np.int64)
    df["time_s"] = df.pop("time").astype(float)
    df["tcp_flags"] = df["tcp_flags"].map(lambda s: int(s, 16) if isinstance(s, str) else np.nan)
    for col in ("ack", "hlen", "sa_length"):
        df[col] = pd.to_numeric(df[col])
    flags = df["flags"].astype(str)
    df["ecn_echo"] = flags.str[0] == "C"
    df["cwr"] = flags.str[3] == "A"
    df["ce"] = flags.str[4] == "E"
    df["ect"] = flags.str[6] == "N"
    order = ["event", "time_s", *[c for c in df.columns if c not in ("event", "time_s")]]
    return cast(pd.DataFrame, df[order])


# ---------------------------------------------------------------------------
# pcap
# ---------------------------------------------------------------------------


def internet_checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071): the one's complement of the one's complement sum
    of the 16-bit words of ``data`` (padded with a zero byte to an even length)."""
    if len(data) % 2:
        data += b"\x00"
    total = int(sum(struct.unpack(f"!{len(data) // 2}H", data)))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def node_address(node: int) -> bytes:
    """The IPv4 address of node ``node`` in pcap files: 10.0.0.0 + node + 1 (node 0 is 10.0.0.1)."""
    value = 0x0A000000 + node + 1
    if value > 0x0AFFFFFE:
        raise ValueError(f"node {node} does not fit in 10.0.0.0/8")
    return value.to_bytes(4, "big")


def _tcp_options(
    flags: int, sack: Sequence[tuple[int, int]], mss: int, sack_permitted: int
) -> bytes:
    opts = b""
    if flags & SYN:
        if mss:
            opts += struct.pack("!BBH", 2, 4, mss)  # RFC 9293 §3.2: MSS, kind 2, length 4
        if sack_permitted:
            opts += b"\x01\x01\x04\x02"  # RFC 2018 §2: SACK-permitted, kind 4, length 2
    if sack:
        # RFC 2018 §3: SACK option, kind 5, length 2 + 8n, preceded by two NOPs for alignment.
        opts += b"\x01\x01" + struct.pack("!BB", 5, 2 + 8 * len(sack))
        for left, right in sack:
            opts += struct.pack("!II", left & 0xFFFFFFFF, right & 0xFFFFFFFF)
    return opts


class PcapWriter:
    """Streams records to a pcap file (``LINKTYPE_RAW``: each packet is an IPv4 datagram).

    Each record becomes one packet: an IPv4 header (RFC 791; the ECN field
    in the low two bits of the old TOS byte, RFC 3168 §5; identification =
    ``uid`` mod 2^16; DF set; TTL 64) and a TCP header (RFC 9293; ECE and
    CWR flags, RFC 3168 §6.1; SACK option, RFC 2018; MSS and
    SACK-permitted options on SYNs when the records ask for them) or a UDP
    header (RFC 768), then ``payload`` zero bytes. The IP total length is
    the real header length plus ``payload``: it can differ from ``size``
    when the simulator counts a fixed header overhead. Both checksums are
    valid for the zero-filled payload (RFC 1071; the TCP/UDP checksum
    covers the pseudo-header). The window field is ``min(window, 65535)``
    (no window-scale option is written).

    ``snaplen`` truncates the captured bytes (the checksums stay those of the
    whole packet, as a capture with ``tcpdump -s`` would have);
    ``nanosecond=True`` writes the nanosecond-resolution pcap variant
    (magic ``0xa1b23c4d``) instead of microseconds. Addresses: see
    :func:`node_address`.
    """

    def __init__(
        self,
        file: IO[bytes],
        *,
        snaplen: int | None = None,
        nanosecond: bool = False,
        header: bool = True,
    ) -> None:
        self.file = file
        self.snaplen = snaplen
        self.nanosecond = nanosecond
        self.packets = 0
        if header:  # False: appending to a file that already has its header
            magic = _PCAP_MAGIC_NS if nanosecond else _PCAP_MAGIC_US
            # pcap file header: magic, version 2.4, thiszone, sigfigs, snaplen, link type.
            file.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, snaplen or 262144, LINKTYPE_RAW))

    def packet(self, cols: Mapping[str, list[Any]], i: int) -> bytes:
        """The IPv4 packet of record ``i`` (``cols`` as from the records' columns, as lists)."""
        proto = int(cols["proto"][i])
        flags = int(cols["tcp_flags"][i])
        payload = int(cols["payload"][i])
        src = node_address(int(cols["src_node"][i]))
        dst = node_address(int(cols["dst_node"][i]))
        sport, dport = int(cols["src_port"][i]), int(cols["dst_port"][i])
        body = bytes(payload)
        if proto == IPPROTO_TCP:
            n_sack = min(int(cols["sack_blocks"][i]), 3)
            sack = [
                (int(cols[f"sack_left_{k}"][i]), int(cols[f"sack_right_{k}"][i]))
                for k in range(1, n_sack + 1)
            ]
            opts = _tcp_options(flags, sack, int(cols["mss"][i]), int(cols["sack_permitted"][i]))
            doff = (20 + len(opts)) // 4
            header = (
                struct.pack(
                    "!HHIIBBHHH",
                    sport,
                    dport,
                    int(cols["seq"][i]) & 0xFFFFFFFF,
                    int(cols["ack"][i]) & 0xFFFFFFFF,
                    doff << 4,
                    flags,
                    min(int(cols["window"][i]), 0xFFFF),
                    0,
                    0,
                )
                + opts
            )
        elif proto == IPPROTO_UDP:
            header = struct.pack("!HHHH", sport, dport, 8 + payload, 0)
        else:
            raise ValueError(f"record {i}: protocol {proto} is neither TCP (6) nor UDP (17)")
        l4_len = len(header) + payload
        pseudo = src + dst + struct.pack("!BBH", 0, proto, l4_len)
        csum = internet_checksum(pseudo + header)  # the zero payload adds nothing to the sum
        if proto == IPPROTO_UDP and csum == 0:
            csum = 0xFFFF  # RFC 768: a computed zero is sent as all ones
        offset = 16 if proto == IPPROTO_TCP else 6
        header = header[:offset] + struct.pack("!H", csum) + header[offset + 2 :]
        total = 20 + l4_len
        if total > 0xFFFF:
            raise ValueError(f"record {i}: IPv4 packet of {total} bytes is too large")
        ecn = int(cols["ecn"][i]) & 0x3
        ip = struct.pack(
            "!BBHHHBBH4s4s",
            0x45,
            ecn,
            total,
            int(cols["uid"][i]) & 0xFFFF,
            0x4000,
            64,
            proto,
            0,
            src,
            dst,
        )
        ip = ip[:10] + struct.pack("!H", internet_checksum(ip)) + ip[12:]
        return ip + header + body

    def write(self, records: Records) -> int:
        """Write one packet per record; returns the number written."""
        c = _columns(records)
        lists = {k: v.tolist() for k, v in c.items()}
        n = len(lists["event"])
        chunks = []
        for i in range(n):
            pkt = self.packet(lists, i)
            captured = pkt if self.snaplen is None else pkt[: self.snaplen]
            t_ns = int(lists["time_ns"][i])
            sec, frac = divmod(t_ns, 1_000_000_000)
            if not self.nanosecond:
                frac //= 1000
            chunks.append(struct.pack("<IIII", sec, frac, len(captured), len(pkt)))
            chunks.append(captured)
        self.file.write(b"".join(chunks))
        self.packets += n
        return n


def pcap_file_name(link: str, from_node: str, to_node: str, *, drops: bool = False) -> str:
    """The file name of one captured link direction: ``<link>-<from>-<to>.pcap``.

    ``drops=True``: ``<link>-<from>-<to>.drops.pcap``. Characters that are
    unsafe in file names (path separators, shell metacharacters, spaces)
    become ``_``.
    """

    def safe(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.+=@%-]", "_", text).lstrip(".") or "_"

    stem = f"{safe(link)}-{safe(from_node)}-{safe(to_node)}"
    return f"{stem}.drops.pcap" if drops else f"{stem}.pcap"


class PcapDirectoryWriter:
    """One pcap file per captured link direction, as ns-3's ``EnablePcapAll`` writes one per device.

    A pcap is a capture at one point: each file holds the packets sent on
    one link direction, each packet once, stamped when its transmission
    starts (``-`` records: the queue released it to the link), as tcpdump
    on the sending interface would see them. Files are named by
    ``names[(from_node, to_node)]`` (see :func:`pcap_file_name`); a
    direction with no packets gets no file. With ``drops=True`` the packets
    the direction's queue dropped (``d`` records) go to a separate
    ``.drops.pcap`` file beside it; otherwise they are not written.

    Files are opened in append mode for each batch and closed again, so a
    run with thousands of link directions never holds thousands of open
    files. :attr:`files` maps each written path to its packet count.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        names: Mapping[tuple[int, int], str],
        *,
        drops: bool = False,
        snaplen: int | None = None,
        nanosecond: bool = False,
    ) -> None:
        self.directory = os.fspath(directory)
        self.names = dict(names)
        self.drops = drops
        self.snaplen = snaplen
        self.nanosecond = nanosecond
        self.packets = 0
        #: Packets written per file path, in the order the files were created.
        self.files: dict[str, int] = {}

    def _path(self, from_node: int, to_node: int, drops: bool) -> str:
        name = self.names.get((from_node, to_node))
        if name is None:
            name = pcap_file_name(f"link{from_node}_{to_node}", str(from_node), str(to_node))
        if drops:
            name = name.removesuffix(".pcap") + ".drops.pcap"
        return os.path.join(self.directory, name)

    def write(self, records: Records) -> int:
        """Write the batch's ``-`` (and with ``drops``, ``d``) records; returns packets written."""
        c = _columns(records)
        events = c["event"]
        written = 0
        for event, is_drop in (("-", False), ("d", True)):
            if is_drop and not self.drops:
                continue
            keep = events == event
            if not keep.any():
                continue
            pairs = np.stack([c["from_node"][keep], c["to_node"][keep]], axis=1).astype(np.int64)
            for a, b in np.unique(pairs, axis=0).tolist():
                sel = keep & (c["from_node"] == a) & (c["to_node"] == b)
                batch = {k: v[sel] for k, v in c.items()}
                path = self._path(int(a), int(b), is_drop)
                new = path not in self.files
                with open(path, "wb" if new else "ab") as f:
                    writer = PcapWriter(
                        f, snaplen=self.snaplen, nanosecond=self.nanosecond, header=new
                    )
                    n = writer.write(batch)
                self.files[path] = self.files.get(path, 0) + n
                written += n
        self.packets += written
        return written


def write_pcap(
    records: Records,
    file: str | os.PathLike[str] | IO[bytes],
    *,
    events: str | Iterable[str] | None = "-",
    link: tuple[int, int] | None = None,
    node: int | None = None,
    flow: int | Iterable[int] | None = None,
    snaplen: int | None = None,
    nanosecond: bool = False,
) -> int:
    """Write ``records`` as a pcap file of IPv4 packets; returns the number of packets.

    A record is one packet event on one link, so a packet crossing three
    links has several records. By default only ``"-"`` events are written
    (a packet as its transmission onto a link starts, as ``tcpdump`` on the
    sending interface stamps it); pass ``link=(a, b)`` to capture one link
    direction as a sniffer on it would, ``events="r"`` for arrival times,
    or ``events=None`` for every record. ``node`` and ``flow`` filter as in
    :func:`filter_records`. See :class:`PcapWriter` for the packets.
    """
    selected: Records = records
    if events is not None or link is not None or node is not None or flow is not None:
        selected = filter_records(records, link=link, node=node, flow=flow, events=events)
    f, close = _open(file, "wb")
    try:
        return PcapWriter(f, snaplen=snaplen, nanosecond=nanosecond).write(selected)
    finally:
        if close:
            f.close()
