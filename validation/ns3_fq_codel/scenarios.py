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
