"""ecnsim.output.trace: ns-2 trace lines parsed back; pcap read back by an independent parser."""

from __future__ import annotations

import io
import re
import socket
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecnsim.output import trace
from ecnsim.output.trace import ACK, CWR, ECE, FIN, PSH, SYN

dpkt = pytest.importorskip("dpkt", reason="pcap read-back needs dpkt (the test extra)")

MSS = 1000


def _records() -> pd.DataFrame:
    """A small two-way TCP exchange over links 0 -> 2 -> 3, plus a drop and a UDP packet."""
    rows: list[dict[str, Any]] = [
        # SYN (RFC 3168 §6.1.1: ECN-setup SYN has ECE and CWR), options MSS + SACK-permitted.
        dict(time_s=0.1, event="+", from_node=0, to_node=2, flow_id=1, uid=1, size=40,
             src_node=0, dst_node=3, ecn=0, tcp_flags=SYN | ECE | CWR, seq=100, ack=0,
             payload=0, mss=1460, sack_permitted=1),
        # SYN-ACK (ECN-setup SYN-ACK: ECE only), in the reverse direction.
        dict(time_s=0.2, event="r", from_node=2, to_node=0, flow_id=1, uid=2, size=40,
             src_node=3, dst_node=0, ecn=0, tcp_flags=SYN | ACK | ECE, seq=5000, ack=101,
             payload=0, mss=1460, sack_permitted=1),
        # The brief's example line: + 1.84375 0 2 tcp 1040 ------- 1 0.0 3.0 29 199
        dict(time_s=1.84375, event="+", from_node=0, to_node=2, flow_id=1, uid=199, size=1040,
             src_node=0, dst_node=3, ecn=0, tcp_flags=ACK, seq=101 + 29 * MSS, ack=5001,
             payload=MSS, seqno=29),
        # ECT(0) data packet leaving the queue.
        dict(time_s=1.9, event="-", from_node=0, to_node=2, flow_id=1, uid=200, size=1040,
             src_node=0, dst_node=3, ecn=2, tcp_flags=ACK | PSH, seq=101 + 30 * MSS,
             ack=5001, payload=MSS, seqno=30),
        # CE-marked packet arriving at the next hop.
        dict(time_s=2.000001, event="r", from_node=2, to_node=3, flow_id=1, uid=200, size=1040,
             src_node=0, dst_node=3, ecn=3, tcp_flags=ACK | PSH, seq=101 + 30 * MSS,
             ack=5001, payload=MSS, seqno=30),
        # ACK echoing congestion with two SACK blocks.
        dict(time_s=2.05, event="-", from_node=3, to_node=2, flow_id=1, uid=201, size=40,
             src_node=3, dst_node=0, ecn=0, tcp_flags=ACK | ECE, seq=5001,
             ack=101 + 29 * MSS, payload=0, window=20000, sack_blocks=2,
             sack_left_1=101 + 30 * MSS, sack_right_1=101 + 31 * MSS,
             sack_left_2=101 + 33 * MSS, sack_right_2=101 + 35 * MSS, seqno=29),
        # Data with CWR after the reduction, ECT(1) for variety; a window over 64 KiB.
        dict(time_s=2.1, event="-", from_node=0, to_node=2, flow_id=1, uid=202, size=1040,
             src_node=0, dst_node=3, ecn=1, tcp_flags=ACK | CWR, seq=2**32 + 7, ack=5001,
             payload=MSS, window=10**6, seqno=31),
        # A drop (not in the default pcap, which has "-" events only).
        dict(time_s=2.2, event="d", from_node=0, to_node=2, flow_id=1, uid=203, size=1040,
             src_node=0, dst_node=3, ecn=2, tcp_flags=ACK, seq=101 + 32 * MSS, ack=5001,
             payload=MSS, seqno=32),
        # FIN, odd payload length.
        dict(time_s=3.0, event="-", from_node=0, to_node=2, flow_id=1, uid=204, size=41,
             src_node=0, dst_node=3, ecn=0, tcp_flags=ACK | FIN, seq=101 + 40 * MSS,
             ack=5001, payload=1, seqno=40),
        # A UDP packet of another flow.
        dict(time_s=3.5, event="-", from_node=0, to_node=2, flow_id=9, uid=300, size=228,
             src_node=0, dst_node=3, ecn=2, tcp_flags=0, seq=0, ack=0, payload=200, proto=17),
    ]  # fmt: skip
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# ns-2
# ---------------------------------------------------------------------------

# An independent small parser of ns-2's normal wired trace line (ns-2 manual,
# "Trace and Monitoring Support": %c %g %d %d %s %d %s %d %d.%d %d.%d %d %d).
_LINE = re.compile(
    r"^([-+rd]) (\S+) (\d+) (\d+) (\w+) (\d+) ([-A-Z]{7}) (\d+) (\d+)\.(\d+) (\d+)\.(\d+) "
    r"(-?\d+) (\d+)((?: \S+){4})?$"
)


def _parse(line: str) -> dict[str, Any]:
    m = _LINE.match(line)
    assert m is not None, f"not an ns-2 trace line: {line!r}"
    g = m.groups()
    out = {
        "event": g[0],
        "time": float(g[1]),
        "from": int(g[2]),
        "to": int(g[3]),
        "ptype": g[4],
        "size": int(g[5]),
        "flags": g[6],
        "fid": int(g[7]),
        "src": (int(g[8]), int(g[9])),
        "dst": (int(g[10]), int(g[11])),
        "seq": int(g[12]),
        "uid": int(g[13]),
    }
    if g[14]:
        ack, flags, hlen, sa = g[14].split()
        out.update(ack=int(ack), tcp_flags=int(flags, 16), hlen=int(hlen), sa_length=int(sa))
    return out


def test_ns2_example_line_is_byte_exact(tmp_path: Path) -> None:
    path = tmp_path / "out.tr"
    n = trace.write_ns2_trace(_records(), path)
    lines = path.read_text(encoding="ascii").splitlines()
    assert n == len(lines) == len(_records())
    assert lines[2] == "+ 1.84375 0 2 tcp 1040 ------- 1 0.0 3.0 29 199"


@pytest.mark.parametrize(
    ("ecn", "flags", "expected"),
    [
        (0, 0, "-------"),
        (2, ACK, "------N"),  # ECT(0): ecn_capable_
        (1, ACK, "------N"),  # ECT(1)
        (3, ACK, "----E-N"),  # CE: ecn_to_echo_ set by the router, still ECN-capable
        (0, ACK | ECE, "C------"),  # ECN-Echo on an ACK: ecn_
        (2, ACK | CWR, "---A--N"),  # CWR: cong_action_
        (3, ACK | ECE | CWR, "C--AE-N"),
    ],
)
def test_ns2_flags(ecn: int, flags: int, expected: str) -> None:
    assert trace.ns2_flags(ecn, flags) == expected


def test_ns2_lines_parse_back() -> None:
    records = _records()
    buf = io.StringIO()
    trace.write_ns2_trace(records, buf)
    parsed = [_parse(line) for line in buf.getvalue().splitlines()]
    for rec, p in zip(records.to_dict("records"), parsed, strict=True):
        assert p["event"] == rec["event"]
        assert p["time"] == pytest.approx(rec["time_s"], abs=5e-7)
        assert (p["from"], p["to"]) == (rec["from_node"], rec["to_node"])
        assert p["size"] == rec["size"]
        assert p["fid"] == rec["flow_id"]
        assert p["uid"] == rec["uid"]
        assert p["src"] == (rec["src_node"], 0)
        assert p["dst"] == (rec["dst_node"], 0)
        seqno = rec["seqno"] if not pd.isna(rec.get("seqno")) else rec["seq"]
        assert p["seq"] == seqno
        assert p["flags"] == trace.ns2_flags(int(rec["ecn"]), int(rec["tcp_flags"]))
    assert [p["ptype"] for p in parsed] == [
        "tcp", "tcp", "tcp", "tcp", "tcp", "ack", "tcp", "tcp", "tcp", "udp",
    ]  # fmt: skip
    assert parsed[4]["flags"] == "----E-N"
    assert parsed[5]["flags"] == "C------"
    # ns-2 rounds the time to microseconds and prints it with %.15g.
    assert buf.getvalue().splitlines()[4].split()[1] == "2.000001"


def test_ns2_time_format() -> None:
    assert trace.ns2_line("r", 0.1234567, 0, 1, "tcp", 1, "-------", 0, (0, 0), (1, 0), 0, 0) == (
        "r 0.123457 0 1 tcp 1 ------- 0 0.0 1.0 0 0"
    )
    line = trace.ns2_line("d", 12.0, 5, 6, "ack", 40, "-------", 3, (6, 1), (5, 2), -1, 77)
    assert line == "d 12 5 6 ack 40 ------- 3 6.1 5.2 -1 77"


def test_ns2_tcp_header_fields_and_ports() -> None:
    buf = io.StringIO()
    trace.write_ns2_trace(_records(), buf, tcp_header=True, ports=True)
    parsed = [_parse(line) for line in buf.getvalue().splitlines()]
    syn, sack_ack = parsed[0], parsed[5]
    assert syn["tcp_flags"] == SYN | ECE | CWR
    assert syn["hlen"] == 20 + 20 + 4 + 4  # MSS and SACK-permitted options
    assert sack_ack["ack"] == 101 + 29 * MSS
    assert sack_ack["tcp_flags"] == ACK | ECE
    assert sack_ack["sa_length"] == 2
    assert sack_ack["hlen"] == 20 + 20 + 4 + 16
    assert syn["src"] == (0, 1025)  # default port: 1024 + flow id
    assert parsed[-1]["hlen"] == 28  # UDP


def test_read_ns2_trace_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "x.tr"
    records = _records()
    trace.write_ns2_trace(records, path, tcp_header=True)
    with path.open("a", encoding="ascii") as f:
        f.write("v 3.6 eval {set sim_annotation {not a packet}}\n")
    df = trace.read_ns2_trace(path)
    assert len(df) == len(records)
    assert df["uid"].to_list() == records["uid"].to_list()
    assert df["event"].to_list() == records["event"].to_list()
    assert df["ce"].to_list() == (records["ecn"] == 3).to_list()
    assert df["ect"].to_list() == (records["ecn"] != 0).to_list()
    assert df["ecn_echo"].to_list() == ((records["tcp_flags"] & ECE) != 0).to_list()
    assert df["cwr"].to_list() == ((records["tcp_flags"] & CWR) != 0).to_list()
    assert df["tcp_flags"].to_list() == records["tcp_flags"].to_list()


def test_structured_array_input() -> None:
    frame = trace.to_frame(_records())
    arr = np.zeros(len(frame), dtype=trace.TRACE_DTYPE)
    for name in trace.TRACE_DTYPE.names or ():
        values = frame[name].to_numpy()
        arr[name] = np.char.encode(values.astype(str), "ascii") if name == "event" else values
    a, b = io.StringIO(), io.StringIO()
    trace.write_ns2_trace(arr, a)
    trace.write_ns2_trace(_records(), b)
    assert a.getvalue() == b.getvalue()


def test_bad_records() -> None:
    with pytest.raises(KeyError, match="uid"):
        trace.write_ns2_trace(_records().drop(columns=["uid"]), io.StringIO())
    with pytest.raises(ValueError, match="unknown event"):
        trace.write_ns2_trace(_records().assign(event="x"), io.StringIO())


def test_filter_records() -> None:
    r = _records()
    assert trace.filter_records(r, link=(0, 2))["uid"].to_list() == [
        1,
        199,
        200,
        202,
        203,
        204,
        300,
    ]
    assert trace.filter_records(r, node=3)["uid"].to_list() == [200, 201]
    assert trace.filter_records(r, flow=9)["uid"].to_list() == [300]
    assert trace.filter_records(r, events="rd")["uid"].to_list() == [2, 200, 203]
    assert len(trace.filter_records(r, flow=[1, 9], events=["-"])) == 5


# ---------------------------------------------------------------------------
# pcap
# ---------------------------------------------------------------------------


def _ones_complement_sum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = 0
    for (word,) in struct.iter_unpack("!H", data):
        total += word
        total = (total & 0xFFFF) + (total >> 16)
    return total


def _read_pcap(data: bytes) -> tuple[Any, list[tuple[float, bytes]]]:
    reader = dpkt.pcap.Reader(io.BytesIO(data))
    return reader, list(reader)


def test_pcap_read_back_by_dpkt(tmp_path: Path) -> None:
    records = _records()
    path = tmp_path / "x.pcap"
    n = trace.write_pcap(records, path)
    expected = records.loc[records["event"] == "-"].reset_index(drop=True)
    assert n == len(expected) == 5
    reader, packets = _read_pcap(path.read_bytes())
    assert reader.datalink() == trace.LINKTYPE_RAW == 101
    assert len(packets) == n
    for (ts, buf), rec in zip(packets, expected.to_dict("records"), strict=True):
        assert ts == pytest.approx(rec["time_s"], abs=1e-6)
        ip = dpkt.ip.IP(buf)
        assert ip.v == 4
        assert ip.tos & 0x3 == rec["ecn"]
        assert ip.id == rec["uid"] & 0xFFFF
        assert socket.inet_ntoa(ip.src) == f"10.0.0.{rec['src_node'] + 1}"
        assert socket.inet_ntoa(ip.dst) == f"10.0.0.{rec['dst_node'] + 1}"
        assert ip.len == len(buf)
        # IP header checksum: the one's complement sum of the header is 0xffff.
        assert _ones_complement_sum(buf[: ip.hl * 4]) == 0xFFFF
        l4 = bytes(ip.data)
        pseudo = ip.src + ip.dst + struct.pack("!BBH", 0, ip.p, len(l4))
        assert _ones_complement_sum(pseudo + l4) == 0xFFFF
        # dpkt recomputes both checksums from scratch: the same bytes.
        again = dpkt.ip.IP(buf)
        again.sum = 0
        again.data.sum = 0
        assert bytes(again) == buf
        if rec["proto"] == 17 if not pd.isna(rec.get("proto")) else False:
            udp = ip.data
            assert isinstance(udp, dpkt.udp.UDP)
            assert len(udp.data) == rec["payload"]
            continue
        tcp = ip.data
        assert isinstance(tcp, dpkt.tcp.TCP)
        assert tcp.sport == tcp.dport == 1024 + rec["flow_id"]
        assert tcp.seq == rec["seq"] % 2**32
        assert tcp.ack == rec["ack"]
        assert tcp.flags == rec["tcp_flags"]
        assert len(tcp.data) == rec["payload"]
        window = 65535 if pd.isna(rec.get("window")) else int(rec["window"])
        assert tcp.win == min(window, 65535)


def test_pcap_ecn_bits_and_sack_option() -> None:
    records = _records()
    buf = io.BytesIO()
    trace.write_pcap(records, buf, events=None)
    _, packets = _read_pcap(buf.getvalue())
    assert len(packets) == len(records)
    ips = [dpkt.ip.IP(b) for _, b in packets]
    # CE and ECT codepoints in the IP header (RFC 3168 §5).
    assert [ip.tos & 3 for ip in ips] == records["ecn"].to_list()
    # ECE / CWR in the TCP header (RFC 3168 §6.1).
    syn = ips[0].data
    assert syn.flags & dpkt.tcp.TH_SYN
    assert syn.flags & dpkt.tcp.TH_ECE
    assert syn.flags & dpkt.tcp.TH_CWR
    opts = dict(dpkt.tcp.parse_opts(syn.opts))
    assert struct.unpack("!H", opts[dpkt.tcp.TCP_OPT_MSS]) == (1460,)
    assert dpkt.tcp.TCP_OPT_SACKOK in opts
    synack = ips[1].data
    assert synack.flags & dpkt.tcp.TH_ECE
    assert not synack.flags & dpkt.tcp.TH_CWR
    sack_ack = ips[5].data
    assert sack_ack.flags & dpkt.tcp.TH_ECE
    sack = dict(dpkt.tcp.parse_opts(sack_ack.opts))[dpkt.tcp.TCP_OPT_SACK]
    blocks = [struct.unpack("!II", sack[i : i + 8]) for i in range(0, len(sack), 8)]
    assert blocks == [(101 + 30 * MSS, 101 + 31 * MSS), (101 + 33 * MSS, 101 + 35 * MSS)]
    assert sack_ack.off * 4 == 20 + 4 + 16
    cwr = ips[6].data
    assert cwr.flags & dpkt.tcp.TH_CWR
    assert cwr.seq == 7  # 2^32 + 7 modulo 2^32
    assert cwr.win == 65535  # 10^6 clamped
    # A data segment without options has a 20-byte header.
    assert ips[3].data.off == 5


def test_pcap_snaplen_and_nanoseconds() -> None:
    records = _records()
    buf = io.BytesIO()
    trace.write_pcap(records, buf, events="-", snaplen=60, nanosecond=True)
    raw = buf.getvalue()
    assert struct.unpack("<I", raw[:4])[0] == 0xA1B23C4D
    # Per-record header: ts_sec, ts_nsec, incl_len, orig_len.
    sec, nsec, incl, orig = struct.unpack("<IIII", raw[24:40])
    assert (sec, nsec) == (1, 900_000_000)
    assert incl == 60
    assert orig == 20 + 20 + MSS
    reader = dpkt.pcap.Reader(io.BytesIO(raw))
    stamps = [float(ts) for ts, _ in reader]
    assert stamps[0] == pytest.approx(1.9, abs=1e-9)


def test_pcap_link_filter() -> None:
    buf = io.BytesIO()
    n = trace.write_pcap(_records(), buf, events="r", link=(2, 3))
    assert n == 1
    _, packets = _read_pcap(buf.getvalue())
    assert dpkt.ip.IP(packets[0][1]).tos & 3 == 3  # the CE-marked arrival


def test_internet_checksum_rfc1071_example() -> None:
    # RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to 0xddf2 (one's complement).
    data = bytes.fromhex("0001f203f4f5f6f7")
    assert trace.internet_checksum(data) == (~0xDDF2) & 0xFFFF


def test_node_address() -> None:
    assert trace.node_address(0) == bytes([10, 0, 0, 1])
    assert trace.node_address(300) == bytes([10, 0, 1, 45])
    with pytest.raises(ValueError, match="does not fit"):
        trace.node_address(2**24)
