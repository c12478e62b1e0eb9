"""Scenarios and tolerance bands of the BBR cross-check against ns-3 3.44's TcpBbr.

ecnsim's ``bbr`` (BBR v1, docs/models/bbr.md) against ns-3's ``TcpBbr`` (BBR v1
after Linux 4.x and the 2017 draft, NITK) over DropTail (issue 32 item 7). The
network, the TCP settings and the metrics are ``validation/ns3_modern_cc``'s
(whose ``compare.py`` runs both sides): ``s_i --(1 Gb/s, 1 ms)-- r1 --(C, d)--
r2 --(1 Gb/s, 1 ms)-- c_i``, base RTT = 2 d + 4 ms, 1502-byte frames (MSS 1460),
no delayed ACKs, no timestamps, SACK on both sides (ns-3 ``Sack`` with classic
recovery, ecnsim ``recovery = "sack"``), IW 10, minimum RTO 200 ms, clock 1 ms;
C in {10, 100} Mb/s, base RTT in {20, 100} ms, N in {1, 2, 4} flows (starts
0.2 s apart plus a seed-dependent 0-40 ms); DropTail of one BDP; 60 s, the first
20 s discarded; cwnd and queue sampled every 10 ms. ns-3: ``TcpBbr`` with
``TcpSocketState::EnablePacing`` true (``TcpBbr`` turns it on itself; said
explicitly), ``PaceInitialWindow`` false (its default; Linux and ecnsim do not
pace the first 10 segments either). Everything here was written and committed
before the first comparison ran; the bands are not to be widened after seeing
results.

Differences known from reading both sides' sources, which the bands allow for:
(1) ns-3's TcpBbr keeps the bandwidth in ``DataRate`` (bit/s, doubles for the
    gains) and the round count from its own ``TcpRateOps``; ecnsim follows Linux's
    integer gains (739/256, 88/256) on bytes per second. Equal to < 1 %.
(2) Both pace at 99 % of gain x bw (ns-3 ``m_pacingMargin`` 0.01, Linux's
    ``bbr_pacing_margin_percent``) and add an ACK-aggregation allowance to the
    window (ns-3 ``m_extraAcked*``, Linux ``bbr_extra_acked*``); ns-3's send
    quantum and ecnsim's quanta (3 x max(2, 1 ms of pacing)) may differ by a few
    segments of window.
(3) ns-3 paces with one timer per socket at each segment's time, as ecnsim
    (no TSO, no timer slack on either side).
(4) Loss: ns-3 runs its classic SACK recovery with BBR's ``CongControl`` setting
    cwnd (packet conservation on entering recovery, restore on leaving it); ecnsim
    the same rules (Linux's) on RFC 6675 SACK recovery. With one BDP of buffer and
    several flows BBR overfills the queue in its 5/4 phases and loses: loss events
    and retransmissions get wide bands.
(5) ProbeBW's random start phase and ProbeRTT's timing differ (each side's own
    random stream): with several flows, who probes when differs; fairness gets a
    wide band, the aggregates narrow ones.

Metrics over [WARMUP, DURATION] (``validation/ns3_modern_cc/compare.py``):
``goodput``, ``jain`` (N > 1), ``retx_per_s``, ``events_per_s`` (fast recoveries +
timeouts per second), ``queue_mean``, ``cwnd_total``, ``cwnd_swing``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bands import band_text, within  # noqa: F401  (the harnesses' shared bands)

WIRE = 1502  # bytes per data packet on the PPP wire
ACCESS_RATE = 1e9
ACCESS_DELAY = 0.001
DURATION = 60.0
WARMUP = 20.0
SAMPLE = 0.01  # s: cwnd and queue length sampled every 10 ms on both sides
SEED = 1

RATES = [10e6, 100e6]
RTTS = [0.020, 0.100]
FLOWS = [1, 2, 4]
ALGOS = ["bbr"]

# The many-flow rows (many_flow_rows): (bottleneck rate, flows); dumbbell-100's network.
MANY = [(20e6, 20), (100e6, 100)]
MANY_ACCESS_DELAY = 0.005  # s, each access link (sender - r1 and r2 - receiver)
MANY_BOTTLENECK_DELAY = 0.040  # s
MANY_SPACING = 0.010  # s between consecutive flows' starts (dumbbell-100: 1 s / 100)
#: ns-3's send buffer per socket (``TcpSocket::SndBufSize``) in the many-flow rows: 4 MiB
#: (2,873 segments). ns3_dumbbell.py's default, 1 GiB, is filled by BulkSendApplication at
#: once, ~0.2 GB of packet objects per socket: 100 sockets passed this machine's 23 GB (the
#: first run of bbr-many-100M-100ms-100 was stopped at 19 GB and growing). With 16 MiB that
#: run crawled (6.3 simulated seconds after 20 min of CPU, in TcpTxBuffer's list walks):
#: ns-3 3.44's TcpBbr sets cwnd to 4294967295 (its never-set ssthresh) for up to seconds
#: after some recoveries, and the send buffer alone then bounds what is in flight. 4 MiB
#: binds only then: a sane BBR window here is at most 2 x BDP + quanta + ACK aggregation
#: (the grid's largest ns-3 window at 100 Mb/s, 100 ms: 2,411 segments, bbr-100M-100ms-1).
MANY_NS3_SND_BUF = 2**22
#: Metrics printed for the many-flow rows beside the banded ones, with no band and no
#: verdict (information): drops at the bottleneck per second, and the per-flow spread of
#: goodput (smallest, median, largest flow, bit/s).
INFO = ("drops_per_s", "flow_min", "flow_median", "flow_max")


def bdp_packets(rate: float, rtt: float) -> int:
    return max(1, round(rate * rtt / (8 * WIRE)))


def starts(seed: int, n: int) -> list[float]:
    """Start times: 0.2 s apart plus a seed-dependent 0-40 ms (as validation/ns3_aqm)."""
    return [round(0.2 * i + 0.01 * ((7 * seed + 3 * i) % 5), 3) for i in range(n)]


def many_flow_rows() -> list[dict[str, Any]]:
    """The many-flow rows: the ``dumbbell-100`` benchmark's network (``ecnsim bench
    dumbbell-100 --write-scenario``: access links 1 Gb/s 5 ms, bottleneck 40 ms, base RTT
    2 x (5 + 40 + 5) = 100 ms, DropTail of one BDP in 1500-byte packets, 833 at 100 Mb/s,
    flows starting 10 ms apart from 0) with 100 flows at 100 Mb/s, and the same network
    with 20 flows at 20 Mb/s (167 packets), which runs faster. The harness's TCP settings,
    duration (60 s, the first 20 s discarded) and sampling as the grid's rows."""
    out = []
    for rate, n in MANY:
        rtt = 2 * (MANY_ACCESS_DELAY + MANY_BOTTLENECK_DELAY + MANY_ACCESS_DELAY)
        out.append(
            {
                "id": f"bbr-many-{round(rate / 1e6)}M-{round(rtt * 1e3)}ms-{n}",
                "algo": "bbr",
                "many": True,
                "rate": rate,
                "rtt": round(rtt, 6),
                "n": n,
                "bottleneck_delay": MANY_BOTTLENECK_DELAY,
                "access_delay": MANY_ACCESS_DELAY,
                # dumbbell-100's rule: rate x RTT over 1500-byte packets (833 at 100 Mb/s);
                # bdp_packets' 1502-byte frames would give 832 (and 166 for 167).
                "buffer": round(rate * rtt / (8 * 1500)),
                "k": None,
                "starts": [round(MANY_SPACING * i, 6) for i in range(n)],
                "ns3_snd_buf": MANY_NS3_SND_BUF,
            }
        )
    return out


def scenarios() -> list[dict[str, Any]]:
    """The issue's grid (12 rows), then the many-flow rows (``many_flow_rows``)."""
    out = []
    for rate in RATES:
        for rtt in RTTS:
            for n in FLOWS:
                out.append(
                    {
                        "id": f"bbr-{round(rate / 1e6)}M-{round(rtt * 1e3)}ms-{n}",
                        "algo": "bbr",
                        "rate": rate,
                        "rtt": rtt,
                        "n": n,
                        "bottleneck_delay": round((rtt - 4 * ACCESS_DELAY) / 2, 6),
                        "buffer": bdp_packets(rate, rtt),
                        "k": None,
                        "starts": starts(SEED, n),
                    }
                )
    return out + many_flow_rows()


# --- tolerance bands (fixed before any comparison was run) -------------------------
# The many-flow rows (added later, written and committed before either side of them ran)
# take BANDS["bbr"] unchanged: the same metrics, computed the same way, so the same bands.
# Their differences from the grid's rows, which the bands do not widen for: (6) with 100
# flows each flow's share of BDP + buffer is ~17 packets (20 flows at 20 Mb/s: ~17 too),
# so fast recovery often lacks three duplicate ACKs or SACKed segments and timeouts are
# likelier on both sides; (7) which flows win is each side's own start-up race (no
# start jitter: 10 ms apart exactly, as dumbbell-100), so Jain's index and the per-flow
# spread compare the distribution, not flow by flow.
BANDS: dict[str, dict[str, Any]] = {
    "bbr": {
        "goodput": ("rel", 0.03),
        "jain": ("abs", 0.15),
        "retx_per_s": ("rel_or_abs", 0.50, 2.0),
        "events_per_s": ("rel_or_abs", 0.50, 0.2),
        "queue_mean": ("rel_or_abs", 0.30, 2.0),
        "cwnd_total": ("rel_or_abs", 0.15, 3.0),
        "cwnd_swing": ("rel_or_abs", 0.35, 3.0),
    },
}
