"""Scenarios and tolerance bands of the CUBIC cross-check against Linux's ``tcp_cubic``.

One scenario file per case, run twice: ``ecnsim run`` (ecnsim's CUBIC under the
``linux`` profile) and ``ecnsim emulate`` (the same network in the core, the
hosts' own Linux 6.x TCP with ``TCP_CONGESTION = cubic`` per socket,
docs/emulation.md). Issue 32 item 7. Everything here was written and committed
before the first comparison ran; the bands are not to be widened after seeing
results (a result outside its band is a FAIL, explained in docs/validation.md).

Topology: ``s_i --(1 Gb/s, 1 ms)-- r1 --(C, d)-- r2 --(1 Gb/s, 1 ms)-- c_i``,
base RTT = 2 d + 4 ms. Grid: C in {10, 100} Mb/s, base RTT in {20, 100} ms, N
in {1, 2, 4} bulk flows (starts 0.2 s apart plus the seed's jitter), queue
``droptail`` (one BDP of packets) or ``red`` with ECN (``min_th`` =
max(5, BDP / 4), ``max_th`` = 3 ``min_th``, ``max_p`` 0.1, ``w_q`` 0.002,
gentle, buffer max(BDP, 4 ``max_th``); flows ``ecn = "request"``). 40 s, the
first 10 s discarded; cwnd and queue sampled every 50 ms (Linux: ``TCP_INFO``
``tcpi_snd_cwnd`` read in the sender's namespace by the bulk sender).
TCP: the ``linux`` profile's defaults (IW 10, SACK, delayed ACKs, minimum RTO
200 ms, MSS 1448 with timestamps' 12 bytes) on both sides; ``cc = "cubic"``.
(Correction, 2026-12-03: the ``linux`` profile's MSS is 1460 with 40-byte headers and no
timestamps, and the emulated hosts run the same, ``advmss 1460`` with ``tcp_timestamps = 0``;
``compare.py`` counts windows in each run's own MSS since then.)

Expected differences (read from Linux and ecnsim before any run; the bands
allow for them, docs/validation.md explains any result outside them):
(1) HyStart: Linux's ``tcp_cubic`` leaves slow start on delay increase or ACK
    trains (``hystart = 1`` by default); ecnsim's CUBIC has no HyStart, so its
    first slow start overshoots further. Mostly inside the warm-up.
(2) Loss recovery: Linux reduces through PRR (RFC 6937) and detects losses with
    RACK-TLP (RFC 8985), ecnsim's ``linux`` profile uses RFC 6675 SACK recovery:
    retransmission counts differ most.
(3) Segmentation offload and pacing: the emulation's host devices carry what the
    kernel sends (GSO/TSO bursts are segmented before the core's queues, but they
    leave back to back); Linux CUBIC is not paced without the fq qdisc. Queues
    may be burstier on the Linux side.
(4) Timers and real time: Linux's clock is jiffies/hrtimers, delayed ACK
    40-200 ms with quick-ack; the emulation runs in real time on a shared, loaded
    machine (late packets recorded in the ``emulation`` table): small extra
    delays look like queueing to the senders.
(5) Linux counts cwnd in packets (``snd_cwnd``); ecnsim in bytes. Compared in
    segments (ecnsim's bytes / MSS).

RACK-TLP check (issue 32 item 5; written and committed before it ran): the same grid's
DropTail rows with ecnsim's side under the ``linux-6.x`` profile (``compare.py --profile
linux-6.x``: RACK-TLP, PRR, HyStart, quick-ACK mode, Linux's RTO, the 16 MiB window)
against the recorded Linux runs (``results/linux.json``; Linux runs RACK-TLP,
``tcp_recovery = 1``). Bands: ``RACK_BANDS`` (``retx_per_s`` as above; ``rto_per_s``,
retransmission timeouts per second summed over the flows, ±50 % or ±0.1/s, i.e. 3 over the
30 s). Expected: more of the 12 DropTail rows pass ``retx_per_s`` than the 8 of 12 under
``linux`` (``results/table.md``), since difference (2) is what RACK-TLP and PRR remove; the
other metrics keep the bands above.

Metrics over [WARMUP, DURATION]: ``goodput`` (total, b/s), ``jain`` (N > 1),
``retx_per_s`` (retransmitted packets per second; Linux ``tcpi_total_retrans``),
``signals_per_s`` (drops + CE marks at the bottleneck per second),
``queue_mean`` (packets, the core's ``queue_series`` on both sides),
``cwnd_total`` (mean of the summed cwnd, segments), ``cwnd_swing`` (mean over
flows of the 95th - 5th percentile of the flow's cwnd, segments).
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
QUEUES = ["droptail", "red"]


def bdp_packets(rate: float, rtt: float) -> int:
    return max(1, round(rate * rtt / (8 * WIRE)))


def red_params(rate: float, rtt: float) -> dict[str, Any]:
    bdp = bdp_packets(rate, rtt)
    lo = max(5, round(bdp / 4))
    return {"min_th": lo, "max_th": 3 * lo, "limit": max(bdp, 12 * lo)}


def scenarios() -> list[dict[str, Any]]:
    out = []
    for q in QUEUES:
        for rate in RATES:
            for rtt in RTTS:
                for n in FLOWS:
                    out.append(
                        {
                            "id": f"{q}-{round(rate / 1e6)}M-{round(rtt * 1e3)}ms-{n}",
                            "queue": q,
                            "rate": rate,
                            "rtt": rtt,
                            "n": n,
                            "bottleneck_delay": round((rtt - 4 * ACCESS_DELAY) / 2, 6),
                            "buffer": bdp_packets(rate, rtt),
                            "red": red_params(rate, rtt) if q == "red" else None,
                        }
                    )
    return out


# --- tolerance bands (fixed before any comparison was run) -------------------------
BANDS: dict[str, tuple[Any, ...]] = {
    "goodput": ("rel", 0.05),
    "jain": ("abs", 0.15),
    "retx_per_s": ("rel_or_abs", 0.50, 2.0),
    "signals_per_s": ("rel_or_abs", 0.40, 1.0),
    "queue_mean": ("rel_or_abs", 0.30, 2.0),
    "cwnd_total": ("rel_or_abs", 0.20, 3.0),
    "cwnd_swing": ("rel_or_abs", 0.40, 4.0),
}

#: The RACK-TLP check's extra band (``--profile linux-6.x``), fixed before it ran.
RACK_BANDS: dict[str, tuple[Any, ...]] = {
    "rto_per_s": ("rel_or_abs", 0.50, 0.1),
}
