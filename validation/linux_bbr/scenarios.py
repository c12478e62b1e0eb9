"""Scenarios and tolerance bands of the BBR cross-check against Linux's ``tcp_bbr``.

ecnsim's ``bbr`` (BBR v1, docs/models/bbr.md) under the ``linux`` profile, run by
``ecnsim run``, against the same network under ``ecnsim emulate`` with the hosts'
own Linux 6.x TCP and ``TCP_CONGESTION = bbr`` per socket (docs/emulation.md).
Issue 32 item 7. Everything here was written and committed before the first
comparison ran; the bands are not to be widened after seeing results (a result
outside its band is a FAIL, explained in docs/validation.md).

The network and the metrics are ``validation/linux_cubic``'s (its ``compare.py``
runs both sides, with ``tcp.cc = "bbr"``): ``s_i --(1 Gb/s, 1 ms)-- r1 --(C,
d)-- r2 --(1 Gb/s, 1 ms)-- c_i``, base RTT = 2 d + 4 ms; C in {10, 100} Mb/s,
base RTT in {20, 100} ms, N in {1, 2, 4} bulk flows (starts 0.2 s apart plus
the seed's jitter); DropTail of one BDP (issue 32 asks BBR over DropTail only:
BBR v1 does not answer ECN); 40 s, the first 10 s discarded; cwnd and queue
sampled every 50 ms (Linux: ``TCP_INFO`` ``tcpi_snd_cwnd``). TCP: the
``linux`` profile's defaults on both sides (IW 10, SACK, delayed ACKs, minimum
RTO 200 ms, MSS 1448), ECN off. (Correction, 2026-12-03: the ``linux`` profile's MSS is 1460
with 40-byte headers, as on the emulated hosts; ``compare.py`` counts windows in each run's own
MSS since then.)

Expected differences (read from Linux and ecnsim before any run; the bands
allow for them):
(1) Pacing granularity and TSO: Linux paces with the same earliest departure
    times but releases through an hrtimer (no ``fq`` qdisc in the namespaces),
    late by timer slack and softirq latency, and sends GSO bursts of up to the
    quanta (2-3 segments at 10-100 Mb/s) back to back; ecnsim releases each
    segment at its exact departure time. Linux's queue is burstier.
(2) Rate samples: Linux takes delivery-rate samples from SACKed segments and
    counts SACKed segments as delivered; ecnsim counts one segment per duplicate
    ACK and takes no sample from a SACK block (docs/models/bbr.md, DEVIATION).
    Matters in recovery only.
(3) Loss recovery: Linux detects losses with RACK-TLP and recovers with its own
    state machine under BBR's packet conservation; ecnsim's ``linux`` profile
    runs RFC 6675 SACK recovery. With one BDP of buffer and several flows BBR v1
    overfills the queue in its 5/4 phases and loses: retransmission counts get
    wide bands.
(4) Linux v1's long-term (policer) bandwidth estimator (``bbr_lt_bw_sampling``)
    is not modelled; it engages only under heavy, steady loss.
(5) Real time on a shared, loaded machine: the emulation's late packets look like
    queueing delay (and raise Linux's min RTT), and BBR's model is its min RTT.
(6) Random ProbeBW start phases differ (Linux's ``prandom``, ecnsim's seeded
    stream); with 10 s ProbeRTT intervals the 30 s window holds 3 ProbeRTTs on
    each side, not in the same places.
(7) cwnd: Linux in packets, ecnsim in bytes, compared in segments.

RACK-TLP check (``compare.py --profile linux-6.x``; written and committed 2026-12-02,
before it ran): ecnsim's side under the ``linux-6.x`` profile (RACK-TLP, PRR, quick-ACK
mode, Linux's RTO, the 16 MiB window; BBR is every flow's ``tcp.cc`` either way) against
the recorded Linux runs (``results/linux.json``; Linux runs RACK-TLP, ``tcp_recovery =
1``), the bands above plus ``RACK_BANDS``: ``rto_per_s``, retransmission timeouts per
second summed over the flows, ±50 % or ±0.1/s (3 over the 30 s), as
``validation/linux_cubic``'s. Expected: fewer timeouts than under ``linux`` (44 against
Linux's 0 in 40 s at 10 Mb/s, 20 ms, 2 flows: difference (3)), so fewer go-back-N
resends (``retx_per_s``) and the shares nearer Linux's (``jain``); but BBR with RACK-TLP
retransmits too much against ns-3 (docs/validation.md, "RACK-TLP"), so the count of
checks passing may also fall. A result either way is recorded, not re-banded.

Many-flow rows (written and committed 2026-12-02, fifteenth session, before either side
ran; ids renamed ``bbr-many-*`` after the first runs, so that a grid row's id is no prefix of
theirs): ``bbr-many-10M-100ms-10`` (10 flows at 10 Mb/s, base RTT 100 ms, one BDP = 83 packets:
the per-flow operating point of the ``dumbbell-100`` benchmark, 1 Mb/s and 8.3 packets of
BDP a flow) and ``bbr-many-100M-100ms-20`` (20 flows at 100 Mb/s, 5 Mb/s a flow), the same
network, metrics and ``BANDS`` as the grid (no band of their own), starts 0.2 s apart as
the grid's. What was known when they were written: ecnsim's BBR on ``dumbbell-100`` (100
flows, 20 s) under ``linux-6.x`` gives Jain 0.07 and drops 45 % of what it sends (one flow
34 of 95 Mb/s); under ``linux`` Jain 0.60 and 70 Mb/s; no Linux or ns-3 run of many BBR
flows existed here. Expected differences beyond (1)-(7): at a few packets of BDP per flow,
BBR's window floor (4 packets) and quantization allowance (3 x ``bbr_tso_segs_goal``, 1-2
segments below and above ``bbr_min_tso_rate`` = 1.2 Mb/s) are a large part of each
flow's window, and Linux's GSO bursts (1) are few segments: ``cwnd_total`` may differ by
more than the grid's rows do. Recorded, not re-banded, whatever they give.

Metrics (``validation/linux_cubic/compare.py``): ``goodput``, ``jain``,
``retx_per_s``, ``signals_per_s`` (drops at the bottleneck per second),
``queue_mean``, ``cwnd_total``, ``cwnd_swing``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bands import band_text, within  # noqa: F401  (the harnesses' shared bands)

ACCESS_DELAY = 0.001
DURATION = 40.0
WARMUP = 10.0
SAMPLE = 0.05
SEED = 1
WIRE = 1500  # bytes per full data packet: the linux profile's MSS 1460 + 40 B of headers

RATES = [10e6, 100e6]
RTTS = [0.020, 0.100]
FLOWS = [1, 2, 4]
QUEUES = ["droptail"]


def bdp_packets(rate: float, rtt: float) -> int:
    return max(1, round(rate * rtt / (8 * WIRE)))


#: The many-flow rows (rate, base RTT, flows), outside the grid (see above).
MANY = [(10e6, 0.100, 10), (100e6, 0.100, 20)]


def _row(rate: float, rtt: float, n: int, many: bool = False) -> dict[str, Any]:
    # The many-flow rows' ids start "bbr-many-": `--only bbr-10M-100ms-1` selects no other row.
    kind = "bbr-many" if many else "bbr"
    return {
        "id": f"{kind}-{round(rate / 1e6)}M-{round(rtt * 1e3)}ms-{n}",
        "many": many,
        "queue": "droptail",
        "rate": rate,
        "rtt": rtt,
        "n": n,
        "bottleneck_delay": round((rtt - 4 * ACCESS_DELAY) / 2, 6),
        "buffer": bdp_packets(rate, rtt),
        "red": None,
    }


def scenarios() -> list[dict[str, Any]]:
    out = [_row(rate, rtt, n) for rate in RATES for rtt in RTTS for n in FLOWS]
    return out + [_row(rate, rtt, n, many=True) for rate, rtt, n in MANY]


# --- tolerance bands (fixed before any comparison was run) -------------------------
# Goodput: BBR fills the link on both sides (narrow). Fairness: BBR v1 flows converge
# through ProbeBW's shared min RTT, but each side's random phases differ (6): ±0.15.
# Retransmissions and drops: (1)-(4), wide. Queue: BBR's standing queue is set by its
# 2 BDP window and the ACK-aggregation allowance; Linux's bursts (1) and the real-time
# jitter (5) add to it: ±35 % or ±3 packets. Window: cwnd_gain x BDP + quanta on both
# sides: ±20 % or ±4 segments; its swing (ProbeRTT's dips, recovery) ±40 % or ±4.
BANDS: dict[str, tuple[Any, ...]] = {
    "goodput": ("rel", 0.05),
    "jain": ("abs", 0.15),
    "retx_per_s": ("rel_or_abs", 0.60, 3.0),
    "signals_per_s": ("rel_or_abs", 0.60, 3.0),
    "queue_mean": ("rel_or_abs", 0.35, 3.0),
    "cwnd_total": ("rel_or_abs", 0.20, 4.0),
    "cwnd_swing": ("rel_or_abs", 0.40, 4.0),
}

#: The RACK-TLP check's extra band (``--profile linux-6.x``), fixed before it ran.
RACK_BANDS: dict[str, tuple[Any, ...]] = {
    "rto_per_s": ("rel_or_abs", 0.50, 0.1),
}
