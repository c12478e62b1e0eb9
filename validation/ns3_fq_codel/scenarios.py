"""Scenarios and tolerance bands of the FQ-CoDel cross-check against ns-3's FqCoDelQueueDisc.

Shared by ``ns3_fq_codel.py`` (the ns-3 side, run with ns-3's Python) and
``compare.py`` (the ecnsim side and the table). Everything here was written
and committed before the first comparison was run; the bands are not to be
widened after seeing results (a result outside its band is a FAIL).

Topology (as ``validation/ns3_aqm``): senders ``s_i --(1 Gb/s, d_i)-- r1
--(10 Mb/s, 10 ms)-- r2 --(1 Gb/s, 1 ms)-- c_i``, FQ-CoDel on r1 -> r2.

Three groups:

``rtt``: two NewReno flows with ECN, sender access delays 1 ms and 31 ms (base
RTTs 24 ms and 84 ms), 60 s with the first 10 s discarded, seeds 1-3 (start
pattern ``starts(seed, 2)`` on both sides).

``udp``: two NewReno flows with ECN (access delays 1 ms and 11 ms: RTTs 24 and
44 ms) and a UDP CBR of 1000-byte IP packets at 12 Mb/s of wire bytes from a
third sender (access 1 ms), 60 s, first 10 s discarded, seeds 1-3.

``mixed``: two UDP CBR flows of different packet sizes (1000-byte and 200-byte
IP packets), each at 8 Mb/s of wire bytes, 20 s, first 5 s discarded: DRR in
bytes should split the link evenly in bytes whatever the sizes. No randomness
on either side (one run).
"""

from __future__ import annotations

from typing import Any

# --- FQ-CoDel, set explicitly and identically on both sides ------------------------
# ns-3 FqCoDelQueueDisc: MaxSize 10240p, Flows 1024, DropBatchSize 64, Quantum 1500
# (the device MTU, what ns-3 takes when none is set; IP bytes), Target 5 ms, Interval
# 100 ms, UseEcn true, CeThreshold off, UseL4s false, Perturbation 0,
# EnableSetAssociativeHash false; each flow's CoDelQueueDisc keeps its default
# MinBytes 1500 ("GetNBytes() < m_minBytes" on the flow's own queue).
# ecnsim fq_codel(): limit_packets 10240, flows 1024, drop_batch 64, quantum 1502
# (1500 IP bytes + the 2-byte PPP header ecnsim counts), target, interval, ecn,
# max_packet 1502 with max_packet_backlog "ns3" (flow queue, strict: "< 1500 IP
# bytes" is "< 1502 wire bytes" for every packet size used here), overflow_count
# "ns3", memory_limit 32 MiB (never reached), perturbation from the seed.
FQ = {
    "limit": 10240,
    "flows": 1024,
    "drop_batch": 64,
    "quantum_ip": 1500,
    "target": 0.005,
    "interval": 0.100,
    "min_bytes_ip": 1500,
}

BOTTLENECK = {"rate": 10e6, "delay": 0.010}
ACCESS_RATE = 1e9
RECEIVER_DELAY = 0.001

TCP_SEGMENT = 1460  # IP packet 1500 B, 1502 B on the PPP wire
UDP_SIZES = {"large": 972, "small": 172}  # UDP payloads: 1000- and 200-byte IP packets

GROUPS: dict[str, dict[str, Any]] = {
    "rtt": {
        "tcp_delays": [0.001, 0.031],
        "udp": [],
        "duration": 60.0,
        "warmup": 10.0,
        "seeds": [1, 2, 3],
    },
    "udp": {
        "tcp_delays": [0.001, 0.011],
        "udp": [{"payload": UDP_SIZES["large"], "rate": 12e6, "delay": 0.001}],
        "duration": 60.0,
        "warmup": 10.0,
        "seeds": [1, 2, 3],
    },
    "mixed": {
        "tcp_delays": [],
        "udp": [
            {"payload": UDP_SIZES["large"], "rate": 8e6, "delay": 0.001},
            {"payload": UDP_SIZES["small"], "rate": 8e6, "delay": 0.001},
        ],
        "duration": 20.0,
        "warmup": 5.0,
        "seeds": [1],
    },
}


def starts(seed: int, n: int) -> list[float]:
    """TCP start times for ``seed``: 0.2 s apart plus a seed-dependent 0-40 ms."""
    return [round(0.2 * i + 0.01 * ((7 * seed + 3 * i) % 5), 3) for i in range(n)]


def scenarios() -> list[dict[str, Any]]:
    return [{"id": g, **spec} for g, spec in GROUPS.items()]


# --- tolerance bands (fixed before any comparison was run) -------------------------
#
# Known, mechanism-level differences the bands allow for (from reading both sources):
# (1) ns-3's disc sits on a 1-packet device queue (flow control on), as in
#     validation/ns3_aqm: one packet waits outside the disc, and a packet's sojourn in
#     the disc is one packet time (1.2 ms at 1502 B) shorter for the same backlog.
# (2) CoDel per flow: ns-3's Newton step for 1/sqrt(count) (ecnsim exact), its
#     1.024 us time unit, and ns-3 restarting drop_next from `now` after a mark (ecnsim,
#     as Linux, advances it from drop_next) - docs/models/fq_codel.md, codel.md.
# (3) Flow hashing: ns-3 hashes the 5-tuple (murmur3, perturbation 0), ecnsim the flow
#     identity with a seeded mix; with 2-3 flows in 1024 queues a collision is unlikely
#     on either side (ns3_fq_codel.py reports how many flow queues ns-3 created).
# (4) TCP: the two NewReno implementations answer marks and losses alike in the main
#     (validation/ns3), but closed loops amplify small differences: goodput shares and
#     mark rates get wider bands than the open-loop UDP checks.
BANDS: dict[str, dict[str, Any]] = {
    # rtt (means over the seeds per side): total goodput within 3 %; each flow's
    # goodput within 15 % of ns-3's; the short/long goodput ratio within 20 % of
    # ns-3's; CE marks per second within 30 %; drops: both ECN-capable, so within
    # 10 packets; mean sojourn at the disc within 30 % or 1 ms ((1)).
    "rtt": {
        "total_goodput_rel": 0.03,
        "flow_goodput_rel": 0.15,
        "ratio_rel": 0.20,
        "marks_per_s_rel": 0.30,
        "drops_abs": 10,
        "sojourn": (0.30, 0.001),
    },
    # udp: each TCP flow's goodput within 15 %; the UDP flow's received rate within
    # 5 % (it gets what the TCP flows leave); UDP drops within 5 %; TCP marks per
    # second within 30 %; TCP drops within 30 % or 10 packets; total goodput within 3 %.
    "udp": {
        "total_goodput_rel": 0.03,
        "flow_goodput_rel": 0.15,
        "udp_goodput_rel": 0.05,
        "udp_drops_rel": 0.05,
        "marks_per_s_rel": 0.30,
        "tcp_drops": (0.30, 10),
    },
    # mixed (open loop, no randomness): each flow's received bytes within 2 % of
    # ns-3's (the quantum is one 1500-IP-byte packet on both sides); each flow's drops
    # within 3 %; the large/small byte ratio within 0.03 of ns-3's; mean sojourn at the
    # disc within 15 % or 1.2 ms ((1)).
    "mixed": {
        "flow_bytes_rel": 0.02,
        "flow_drops_rel": 0.03,
        "ratio_abs": 0.03,
        "sojourn": (0.15, 0.0012),
    },
}


# === PIE and RED on the same scenarios (issue 33 item 6) ===========================
#
# The same three groups, topology, TCP and UDP sources, with a single-queue PIE or RED
# disc in FQ-CoDel's place (``compare.py --disc pie|red``; ns-3 ``PieQueueDisc`` /
# ``RedQueueDisc``). Written and committed, with the bands below, before either disc was
# run on these scenarios on either side.
#
# PIE, set explicitly on both sides (validation/ns3_aqm's mapping): ns-3 PieQueueDisc
# MaxSize 1000p, QueueDelayReference 15 ms, Tupdate 15 ms, Supdate 0, A 0.125, B 1.25,
# MaxBurstAllowance 150 ms, UseDequeueRateEstimator false (timestamps), UseCapDropAdjustment
# true, UseDerandomization false, UseEcn true, MarkEcnThreshold 0.1, ActiveThreshold off,
# UseL4s false; AssignStreams(1000 + seed). ecnsim pie(): the same values, ecn, byte_mode
# off, delay_estimator "timestamp", mean_pktsize 1502 (the "2 packets" safeguard in bytes
# for 1500-byte IP packets).
PIE = {
    "limit": 1000,
    "target": 0.015,
    "t_update": 0.015,
    "alpha": 0.125,
    "beta": 1.25,
    "max_burst": 0.150,
    "mark_ecn_threshold": 0.1,
    "cap_drop_adjustment": True,
    "derandomize": False,
    "mean_pktsize_ip": 1500,
}

# RED, set explicitly on both sides (validation/ns3_red's mapping, with gentle on): ns-3
# RedQueueDisc MaxSize 1000p, MinTh 5, MaxTh 15, QW 0.002, LInterm 10, MeanPktSize 1500,
# LinkBandwidth 10 Mb/s, LinkDelay 10 ms, Wait true, Gentle true, UseEcn true,
# UseHardDrop true; AssignStreams(1000 + seed). ecnsim red(): limit_packets 1000, min_th 5,
# max_th 15, w_q 0.002, max_p 0.1, mean_pktsize 1502, wait, gentle, ecn "rfc3168" (mark
# below max_th, drop above: ns-3's UseHardDrop), backlog_gate, idle_start "tx_end",
# drop_spacing "uniform", victim "tail" (ns-3's behaviours, docs/models/red.md).
RED = {
    "limit": 1000,
    "min_th": 5,
    "max_th": 15,
    "w_q": 0.002,
    "max_p": 0.1,
    "mean_pktsize_ip": 1500,
}

DISCS = ("fq_codel", "pie", "red", "fq_pie")  # fq_pie: the last section

# Sojourn-time distribution: both sides bin each departed packet's time in the disc
# (ns-3: the SojournTime trace; ecnsim: '+' to '-' at the bottleneck in the packet trace,
# departures after the warm-up) into 0.1 ms bins; a percentile is its bin's midpoint.
SOJOURN_BIN = 1e-4
SOJOURN_BINS = 40000  # 4 s; later packets go to the last bin

# Known, mechanism-level differences the PIE/RED bands allow for (read in the sources
# before any run):
# (1) as for FQ-CoDel, ns-3's 1-packet device queue: a packet's time in ns-3's disc is up
#     to one packet time (1.2 ms at 1502 B, 0.16 ms at 202 B) shorter for the same backlog,
#     and the disc sees one packet fewer; the sojourn bands carry an absolute floor for it.
# (2) PIE: ns-3 holds the drop probability at 0 while burst allowance remains (the first
#     150 ms of a burst; RFC 8033 and ecnsim keep updating it): a transient, inside the
#     warm-up of every group here. The "2 packets" safeguard: ns-3 counts packets, ecnsim
#     bytes (3004), different only in `mixed` and only with a nearly empty queue.
# (3) RED: ecnsim draws U < p, ns-3 u <= p; ns-3's idle decay uses its LinkBandwidth
#     attribute (set to the link's rate here).
# (4) TCP through one shared queue: unequal RTTs make the long flow's share sensitive to
#     loss/mark timing and (drops) to the retransmission timer, where ns-3 collapses the
#     RTO on any new ACK (validation/ns3/README.md): per-flow shares get wide bands.
# (5) `udp` (a 12 Mb/s unresponsive flow into 10 Mb/s): a single queue must drop at least
#     1/6 of all arrivals, so PIE (probability above MarkEcnThreshold) and RED (gentle
#     region) drop TCP packets too and the TCP flows live in loss recovery and timeouts:
#     their goodput is small and timer-dominated ((4)); the bands on it are loose, those on
#     the UDP flow (what the disc lets through) tight.
AQM_BANDS: dict[str, dict[str, Any]] = {
    # rtt: total goodput within 3 %; each flow's goodput within 25 % or 0.3 Mb/s; the
    # short/long ratio within 30 %; CE marks per second within 30 %; drops within 30 % or
    # 20 packets; sojourn mean, median and 90th percentile within 25 % or 1.5 ms, 99th
    # percentile within 35 % or 2 ms.
    "rtt": {
        "total_goodput_rel": 0.03,
        "flow_goodput": (0.25, 0.3e6),
        "ratio_rel": 0.30,
        "marks_per_s_rel": 0.30,
        "drops": (0.30, 20),
        "sojourn_pct": {
            "mean": (0.25, 0.0015),
            "p50": (0.25, 0.0015),
            "p90": (0.25, 0.0015),
            "p99": (0.35, 0.002),
        },
    },
    # udp: the UDP flow's goodput within 5 % and its drops within 10 %; total TCP goodput
    # within 50 % or 0.3 Mb/s ((5)); TCP drops + marks within 50 % or 20; sojourn mean and
    # median within 25 % or 1.5 ms, 90th and 99th percentiles within 35 % or 2 ms.
    "udp": {
        "udp_goodput_rel": 0.05,
        "udp_drops_rel": 0.10,
        "tcp_total_goodput": (0.50, 0.3e6),
        "tcp_signals": (0.50, 20),
        "sojourn_pct": {
            "mean": (0.25, 0.0015),
            "p50": (0.25, 0.0015),
            "p90": (0.35, 0.002),
            "p99": (0.35, 0.002),
        },
    },
    # mixed (open loop; one queue drops both flows' packets with the same probability, so
    # each flow keeps the same fraction of its packets): each flow's received bytes within
    # 3 %; drops within 5 %; the large/small byte ratio within 0.05; sojourn mean and
    # median within 20 % or 1.2 ms, 90th and 99th percentiles within 30 % or 2 ms.
    "mixed": {
        "flow_bytes_rel": 0.03,
        "flow_drops_rel": 0.05,
        "ratio_abs": 0.05,
        "sojourn_pct": {
            "mean": (0.20, 0.0012),
            "p50": (0.20, 0.0012),
            "p90": (0.30, 0.002),
            "p99": (0.30, 0.002),
        },
    },
}


# === FQ-PIE on the same scenarios (issue 33 item 4) =================================
#
# The same three groups, topology, TCP and UDP sources, with FQ-PIE in FQ-CoDel's place
# (``compare.py --disc fq_pie``; ns-3 ``FqPieQueueDisc``). Written and committed, with the
# bands below, before FQ-PIE was run on these scenarios on either side.
#
# FQ-PIE, set explicitly on both sides: ns-3 FqPieQueueDisc MaxSize 10240p, Flows 1024,
# DropBatchSize 64, quantum 1500 (SetQuantum: IP bytes; the device MTU ns-3 would take),
# QueueDelayReference 15 ms, Tupdate 15 ms, Supdate 0, A 0.125, B 1.25, MaxBurstAllowance
# 150 ms, UseDequeueRateEstimator false (timestamps), UseCapDropAdjustment true,
# UseDerandomization false, UseEcn true, MarkEcnThreshold 0.1, CeThreshold off, UseL4s
# false, MeanPktSize 1500, Perturbation 0, EnableSetAssociativeHash false. ecnsim fq_pie():
# limit_packets 10240, flows 1024, drop_batch 64, quantum 1502 (the 2-byte PPP header),
# the same PIE values, ecn, byte_mode off, delay_estimator "timestamp", derandomize off,
# overflow "ns3" (ns-3's FqPieDrop), mean_pktsize 1502 ("2 packets" in bytes), perturbation
# from the seed.
FQ_PIE = {
    "limit": 10240,
    "flows": 1024,
    "drop_batch": 64,
    "quantum_ip": 1500,
    "target": 0.015,
    "t_update": 0.015,
    "alpha": 0.125,
    "beta": 1.25,
    "max_burst": 0.150,
    "mark_ecn_threshold": 0.1,
    "cap_drop_adjustment": True,
    "derandomize": False,
    "mean_pktsize_ip": 1500,
}

# Known, mechanism-level differences the FQ-PIE bands allow for (read in both sources before
# any run):
# (1) as for the others, ns-3's 1-packet device queue (one packet time, 1.2 ms at 1502 B,
#     shorter in ns-3's disc for the same backlog); sojourn bands carry an absolute floor.
# (2) ns-3 builds a PieQueueDisc per flow queue when the queue's first packet arrives, each
#     with its own update timer from then (Supdate 0); ecnsim's flow queues share one clock
#     (Linux fq_pie_timer), so updates fall up to one Tupdate apart. ns-3's PIE also holds
#     the probability at 0 while burst allowance remains (per flow, the first 150 ms).
# (3) the "2 packets" safeguard: ns-3 counts the flow queue's packets, ecnsim its bytes
#     (3004): different only for the 200-byte flow of `mixed`, and only near an empty queue.
# (4) flow hashing as for FQ-CoDel (ns3_fq_codel.py reports the flow queues ns-3 created).
# (5) each TCP flow has its own PIE: its marks depend on its own queue only, as in FQ-CoDel,
#     so per-flow bands are FQ-CoDel's; the UDP flow's queue in `udp` is held near the
#     15 ms target by drops at enqueue (Not-ECT), open loop: tight bands on what it gets.
FQ_PIE_BANDS: dict[str, dict[str, Any]] = {
    # rtt: total goodput within 3 %; each flow's goodput within 15 % or 0.3 Mb/s; the
    # short/long ratio within 20 %; CE marks per second within 30 %; drops (both flows
    # ECN-capable, probability below 10 %: few) within 30 % or 20 packets; sojourn mean,
    # median and 90th percentile within 25 % or 1.5 ms, 99th within 35 % or 2 ms.
    "rtt": {
        "total_goodput_rel": 0.03,
        "flow_goodput": (0.15, 0.3e6),
        "ratio_rel": 0.20,
        "marks_per_s_rel": 0.30,
        "drops": (0.30, 20),
        "sojourn_pct": {
            "mean": (0.25, 0.0015),
            "p50": (0.25, 0.0015),
            "p90": (0.25, 0.0015),
            "p99": (0.35, 0.002),
        },
    },
    # udp: each TCP flow's goodput within 15 % or 0.3 Mb/s; total TCP goodput within 10 %
    # or 0.3 Mb/s; TCP marks per second within 30 %; TCP drops within 30 % or 20; the UDP
    # flow's goodput within 5 %, its drops within 10 %; sojourn (all flows pooled) mean and
    # median within 25 % or 1.5 ms, 90th and 99th percentiles within 35 % or 2 ms.
    "udp": {
        "flow_goodput": (0.15, 0.3e6),
        "tcp_total_goodput": (0.10, 0.3e6),
        "marks_per_s_rel": 0.30,
        "drops": (0.30, 20),
        "udp_goodput_rel": 0.05,
        "udp_drops_rel": 0.10,
        "sojourn_pct": {
            "mean": (0.25, 0.0015),
            "p50": (0.25, 0.0015),
            "p90": (0.35, 0.002),
            "p99": (0.35, 0.002),
        },
    },
    # mixed (open loop, a queue per flow: DRR splits the link evenly in bytes, each queue's
    # PIE drops what its flow sends beyond its share): each flow's received bytes within 3 %;
    # drops within 5 %; the large/small byte ratio within 0.05; sojourn mean and median
    # within 20 % or 1.2 ms, 90th and 99th percentiles within 30 % or 2 ms.
    "mixed": {
        "flow_bytes_rel": 0.03,
        "flow_drops_rel": 0.05,
        "ratio_abs": 0.05,
        "sojourn_pct": {
            "mean": (0.20, 0.0012),
            "p50": (0.20, 0.0012),
            "p90": (0.30, 0.002),
            "p99": (0.30, 0.002),
        },
    },
}
