"""``dctcp``: Data Center TCP against TCP on one datacenter switch (STUDIES.md §6).

Source: M. Alizadeh, A. Greenberg, D. Maltz, J. Padhye, P. Patel, B.
Prabhakar, S. Sengupta, M. Sridharan, "Data Center TCP (DCTCP)", ACM
SIGCOMM 2010: a testbed of 1 and 10 Gb/s hosts on shared-buffer switches,
with an ns-2 check of the analysis of §3.3. Every experiment here runs on
one switch with every host one hop away (round trip about 100 µs).

Experiments (STUDIES.md §6 ids; ``docs/studies/dctcp.md``):

- ``D13``: N long DCTCP flows into one 10 Gb/s port marking at K = 40: the
  simulated queue against the §3.3 model (``ecnsim.models.dctcp``): its
  maximum, amplitude and period;
- ``D1``, ``D2``: two long flows into one receiver at 1 Gb/s (K = 20) and
  10 Gb/s (K = 65), DCTCP against TCP (NewReno with SACK) over DropTail on
  the shared buffer; the queue sampled every 125 ms; throughput against K;
- ``D6``: incast with a static 100-packet buffer per port: 1 MB / n from
  each of n servers, 1000 queries, RTO min 300 ms and 10 ms;
- ``D7``: the same with the shared buffer, RTO min 10 ms;
- ``D8``: all-to-all incast on the shared buffer (every host asks 25 KB of
  each other host at once);
- ``D9``: queue buildup: 20 KB transfers beside two long flows;
- ``D3``: DCTCP against TCP with RED (ECN) at 10 Gb/s;
- ``D4``: convergence: one long flow, four more started and then stopped
  one by one, 30 s apart (per-flow goodput, Jain's index per phase);
- ``D4m``: D4's many-flow repetition: 10, 30 and 90 long flows together,
  Jain's index per interval;
- ``D10``: buffer pressure: a 10:1 incast with and without 66 long flows on
  the other ports of the same shared buffer.

D5 (multi-hop) and D11/D12 (the benchmark traffic) are not in this study
(``docs/studies/dctcp.md`` says why and how D11/D12 would be added).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from ecnsim.models.dctcp import ROUND_TRIPS, DctcpAnalysis
from ecnsim.scenario.spec import Scenario, droptail, red, threshold
from ecnsim.scenario.workloads import incast
from ecnsim.studies._base import (
    Choice,
    Figures,
    JobSpec,
    Study,
    StudyData,
    StudyParams,
    StudyTable,
    pivot,
    select_rows,
)
from ecnsim.studies.findings import ALMOST_ALL, Alternative, Cell, Finding, Reading

__all__ = ["EXPERIMENTS", "DctcpParams", "DctcpStudy", "analysis_rtt_s", "sawtooth_stats"]

Experiment = Literal["D13", "D1", "D2", "D6", "D7", "D8", "D9", "D3", "D4", "D4m", "D10"]
#: The incast experiments whose runs draw nothing at random: every seed repeats one run.
INCAST_WITHOUT_RANDOMNESS = ("D6", "D7", "D8")

#: The experiments, in the order the task lays them out (STUDIES.md §6 ids).
EXPERIMENTS: tuple[Experiment, ...] = (
    "D13",
    "D1",
    "D2",
    "D6",
    "D7",
    "D8",
    "D9",
    "D3",
    "D4",
    "D4m",
    "D10",
)

#: Scheme labels (the ``scheme`` axis).
DCTCP = "DCTCP"
TCP = "TCP"

#: TCP/IP header bytes of a data packet (1500-byte packets carry 1460 bytes).
HEADER_BYTES = 40
#: Bytes of a pure ACK on the wire.
ACK_BYTES = 40

#: The host's own egress queue (its NIC): deep enough never to drop, as a host's qdisc
#: backpressures the socket instead of dropping (an assumption: docs/studies/dctcp.md).
HOST_QUEUE_PACKETS = 10_000
#: D13's figure shows at least this much of the simulated queue (several of its cycles).
EXCERPT_S = 2e-3
#: The seed of D10's random background pattern (fixed: the same pairs in every run and seed).
D10_PAIRS_SEED = 2010
#: When the short transfers of D9 and D10 start (the long flows start at 0).
SHORT_START_S = 0.1
#: Time allowed per query beyond four times its bytes at the link's rate (D9, D10 bounds).
QUERY_SLACK_S = 0.015
#: The experiments the host-burstiness reading applies to: those whose findings are about K
#: (d1, d2a, d2b: throughput and queue against K; d7: the §3.3 model's queue at K = 40).
BURSTY_EXPERIMENTS = ("D1", "D2", "D13")
#: A switch port's own limit when the shared buffer decides (above what the buffer allows).
UNLIMITED_PACKETS = 1_000_000


@dataclass(frozen=True)
class DctcpParams(StudyParams):
    """Alizadeh et al. 2010's setups (STUDIES.md §6) as defaults; every ambiguity is a field."""

    experiments: tuple[Experiment, ...] = EXPERIMENTS
    packet_bytes: int = 1500
    #: One-way propagation of each host's link to the switch: a host-to-host round trip
    #: crosses four of them (2 x 2 x 25 µs = 100 µs, STUDIES.md §6's "about 100 µs").
    hop_delay_us: float = 25.0
    #: DCTCP's g = 1 / 2^g_shift (§3.1 and RFC 8257 §4.2: 1/16).
    g_shift: int = 4
    #: Where the switch compares the queue with K: on arrival (§3.1) or at departure.
    mark_at: Literal["arrival", "departure"] = "arrival"
    #: The hosts' burstiness in the K experiments (D1, D2, D13; the host-burstiness reading):
    #: "none", each segment leaves as the windows allow (ecnsim's TCP, as ns-2's), or "tso",
    #: segmentation offload (`tcp.tso_segments`: new data waits for a frame of
    #: ``tso_segments`` or a third of the window while an ACK is due, Linux's
    #: tcp_tso_should_defer()), DCTCP and TCP alike.
    host_burstiness: Literal["none", "tso"] = "none"
    #: Segments per offload frame: a 64 KB large-send frame (the paper's era, before Linux
    #: 3.12 sized frames by the pacing rate) holds 44 segments of 1460 B.
    tso_segments: int = 44
    #: Long flows open at a random time in [0, start_jitter_ms) (seeds differ only by it).
    start_jitter_ms: float = 1.0
    k_1g: float = 20.0
    k_10g: float = 65.0
    #: RTO min of the long-flow experiments (D1-D4, D13: production stacks, 300 ms) and of
    #: the experiments from incast on (D7-D10: 10 ms).
    min_rto_long_ms: float = 300.0
    min_rto_short_ms: float = 10.0
    #: The switch's buffer in D1, D2, D3, D9 and D13: the shared buffer (the paper's switches
    #: by default) or the static per-port buffer of D6.
    long_buffer: Literal["shared", "static"] = "shared"
    shared_buffer_bytes: float = 4_000_000.0
    #: Choudhury-Hahne alpha: 700 KB to one busy port of 4 MB (docs/models/shared_buffer.md).
    shared_alpha: float = 7.0 / 33.0
    static_buffer_packets: int = 100
    # -- D1, D2 -------------------------------------------------------------------------
    long_flows: int = 2
    long_duration_s: float = 10.0
    long_warmup_s: float = 1.0
    queue_sample_ms: float = 125.0
    k_sweep_1g: tuple[float, ...] = (5.0, 10.0, 15.0, 20.0, 30.0, 40.0)
    k_sweep_10g: tuple[float, ...] = (10.0, 20.0, 35.0, 50.0, 65.0, 80.0, 100.0)
    # -- D13 ----------------------------------------------------------------------------
    d13_n: tuple[int, ...] = (2, 10, 40)
    d13_k: float = 40.0
    d13_duration_s: float = 0.3
    d13_warmup_s: float = 0.1
    d13_sample_us: float = 2.0
    #: The clock of the model's sawtooth drawn on the simulated queue (ecnsim.models.dctcp):
    #: "base" (the paper's, one window step per RTT) or "queued" (RTT + Q/C).
    d13_clock: Literal["base", "queued"] = "base"
    # -- D6, D7, D8, D10 ----------------------------------------------------------------
    incast_n: tuple[int, ...] = (1, 5, 10, 15, 20, 25, 30, 35, 40)
    incast_total_bytes: int = 1_000_000
    incast_queries: int = 1000
    incast_rto_ms: tuple[float, ...] = (300.0, 10.0)
    #: The query's request to each server (the paper does not give it).
    request_bytes: int = 100
    d7_n: tuple[int, ...] = (5, 10, 15, 20, 25, 30, 35, 40)
    d8_hosts: int = 41
    d8_bytes: int = 25_000
    #: Queries per host in D8 (the paper: "at once"; repeated for a mean and percentiles).
    d8_queries: int = 20
    d10_fan_in: int = 10
    d10_response_bytes: int = 100_000
    #: The paper runs 10,000 queries; the default is fewer (time; a parameter).
    d10_queries: int = 100
    d10_background_hosts: int = 33
    #: Who sends to whom among the background hosts (``background_pairs``).
    d10_pattern: Literal["random", "ring"] = "random"
    # -- D9 -----------------------------------------------------------------------------
    d9_chunk_bytes: int = 20_000
    d9_transfers: int = 1000
    # -- D3 -----------------------------------------------------------------------------
    red_max_p: float = 0.1
    #: RED's weight exponent: w_q = 2^-red_weight.
    red_weight: int = 9
    red_min_th: float = 50.0
    red_max_th: float = 150.0
    red_raised_min_th: float = 150.0
    #: The paper raises min_th to 150; max_th must exceed it: 3 x min_th, the ratio of 50/150.
    red_raised_max_th: float = 450.0
    # -- D4 -----------------------------------------------------------------------------
    #: One long flow, then the others started one by one and stopped one by one (first
    #: started, first stopped), ``d4_step_s`` apart: 2 x senders - 1 phases.
    d4_senders: int = 5
    d4_step_s: float = 30.0
    #: D4m, "repeated with up to 90 flows": that many long flows start together (within
    #: ``start_jitter_ms``); Jain's index of their goodput over each ``d4m_interval_s`` after
    #: ``d4m_warmup_s``.
    d4m_flows: tuple[int, ...] = (10, 30, 90)
    d4m_duration_s: float = 10.0
    d4m_warmup_s: float = 2.0
    d4m_interval_s: float = 1.0

    def check(self) -> None:
        if self.packet_bytes <= HEADER_BYTES:
            raise ValueError(f"packet_bytes must exceed {HEADER_BYTES}, got {self.packet_bytes}")
        if not self.start_jitter_ms >= 0:
            raise ValueError(f"start_jitter_ms must be >= 0, got {self.start_jitter_ms}")
        if not self.hop_delay_us > 0:
            raise ValueError(f"hop_delay_us must be > 0, got {self.hop_delay_us}")
        if self.host_burstiness not in ("none", "tso"):
            raise ValueError(
                f"host_burstiness must be 'none' or 'tso', got {self.host_burstiness!r}"
            )
        if not 1 <= self.tso_segments <= 256:
            raise ValueError(f"tso_segments must be in 1..256, got {self.tso_segments}")
        if not 1 <= self.g_shift <= 10:
            raise ValueError(f"g_shift must be in 1..10 (g = 1/2^g_shift), got {self.g_shift}")
        ks = (self.k_1g, self.k_10g, self.d13_k, *self.k_sweep_1g, *self.k_sweep_10g)
        if any(not k >= 0 for k in ks):
            raise ValueError("K values (k_1g, k_10g, d13_k, k_sweep_*) must be >= 0 packets")
        if not 0 <= self.long_warmup_s < self.long_duration_s:
            raise ValueError("need 0 <= long_warmup_s < long_duration_s")
        if not 0 <= self.d13_warmup_s < self.d13_duration_s:
            raise ValueError("need 0 <= d13_warmup_s < d13_duration_s")
        if self.long_flows < 1 or self.d4_senders < 1:
            raise ValueError("long_flows and d4_senders must be >= 1")
        if any(n < 1 for n in (*self.d13_n, *self.incast_n, *self.d7_n)):
            raise ValueError("d13_n, incast_n and d7_n must be >= 1")
        if min(self.incast_queries, self.d8_queries, self.d10_queries, self.d9_transfers) < 1:
            raise ValueError("query and transfer counts must be >= 1")
        if self.d8_hosts < 2 or self.d10_fan_in < 1 or self.d10_background_hosts < 3:
            raise ValueError("need d8_hosts >= 2, d10_fan_in >= 1, d10_background_hosts >= 3")
        if not (self.shared_alpha > 0 and self.shared_buffer_bytes > 0):
            raise ValueError("shared_alpha and shared_buffer_bytes must be > 0")
        if not self.red_min_th < self.red_max_th or not (
            self.red_raised_min_th < self.red_raised_max_th
        ):
            raise ValueError("RED needs min_th < max_th (red_min_th/max_th, red_raised_*)")
        if not 0 < self.red_max_p <= 1:
            raise ValueError(f"red_max_p must be in (0, 1], got {self.red_max_p}")
        if self.d13_clock not in ROUND_TRIPS:
            raise ValueError(f"d13_clock must be one of {', '.join(ROUND_TRIPS)}")
        if not self.queue_sample_ms > 0 or not self.d13_sample_us > 0 or not self.d4_step_s > 0:
            raise ValueError("queue_sample_ms, d13_sample_us and d4_step_s must be > 0")
        if any(n < 1 for n in self.d4m_flows):
            raise ValueError("d4m_flows must be >= 1")
        if not (
            self.d4m_interval_s > 0
            and self.d4m_warmup_s >= 0
            and self.d4m_warmup_s + self.d4m_interval_s <= self.d4m_duration_s
        ):
            raise ValueError(
                "need d4m_interval_s > 0 and 0 <= d4m_warmup_s <= d4m_duration_s - d4m_interval_s"
            )


# ---------------------------------------------------------------------------
# The switch and its hosts
# ---------------------------------------------------------------------------


def background_pairs(p: DctcpParams) -> list[tuple[int, int]]:
    """D10's long flows ``(sender, receiver)`` among the background hosts ``0 .. H-1``: each
    host sends to two others, in a ring (``j -> j+1, j+2``: every port receives two flows,
    and the senders' NICs are as loaded as the switch's ports) or at random (two distinct
    others per host, drawn once from the fixed stream ``D10_PAIRS_SEED``: some ports receive
    more flows than others, and their queues build at the switch)."""
    h = p.d10_background_hosts
    if p.d10_pattern == "ring":
        return [(j, (j + step) % h) for j in range(h) for step in (1, 2)]
    rng = np.random.default_rng(D10_PAIRS_SEED)
    out = []
    for j in range(h):
        others = [i for i in range(h) if i != j]
        out += [(j, int(d)) for d in sorted(rng.choice(others, size=2, replace=False))]
    return out


def analysis_rtt_s(p: DctcpParams, rate_bps: float) -> float:
    """The round trip the §3.3 model calls RTT: a data packet's and its ACK's, without queueing.

    Four propagation delays (host -> switch -> host and back), a data packet's
    serialisation at the sender's NIC and at the switch port, an ACK's at both.
    """
    prop = 4.0 * p.hop_delay_us * 1e-6
    ser = 2.0 * (p.packet_bytes + ACK_BYTES) * 8.0 / rate_bps
    return prop + ser


def _tcp(p: DctcpParams, scheme: str, min_rto_ms: float) -> dict[str, Any]:
    """The TCP defaults of a scheme: DCTCP (SACK recovery, g, ECN) or NewReno with SACK."""
    common: dict[str, Any] = {
        "mss": p.packet_bytes - HEADER_BYTES,
        "header_bytes": HEADER_BYTES,
        "min_rto": f"{min_rto_ms:g}ms",
        # Large windows: datacenter hosts' receive buffers do not limit a 10 Gb/s flow.
        "rcv_window": 16_000_000,
    }
    if scheme == DCTCP:
        return {
            **common,
            "cc": "dctcp",
            "recovery": "sack",
            "ecn": "request",
            "dctcp_shift_g": p.g_shift,
        }
    if scheme.startswith("TCP-RED"):
        # RED marks ECN-capable TCP (RFC 3168 halving): the TCP of D3's comparison.
        return {**common, "cc": "sack", "ecn": "request"}
    return {**common, "cc": "sack", "ecn": "off"}


def _jitter(p: DctcpParams) -> str | None:
    """Each long flow opens at a uniform random time in ``[0, start_jitter_ms)`` (its own
    stream): without it every seed of a point would run the same packets."""
    return f"{p.start_jitter_ms:g}ms" if p.start_jitter_ms > 0 else None


def _switch_queue(
    p: DctcpParams, scheme: str, k: float, buffer: str, red_th: tuple[float, float] | None = None
) -> dict[str, Any]:
    """A switch port's queue: step marking at K for DCTCP, RED for TCP-RED, DropTail for TCP."""
    limit = p.static_buffer_packets if buffer == "static" else UNLIMITED_PACKETS
    if scheme == DCTCP:
        return threshold(k=k, mark_at=p.mark_at, limit_packets=limit)
    if red_th is not None:
        return red(
            limit_packets=limit,
            min_th=red_th[0],
            max_th=red_th[1],
            w_q=2.0**-p.red_weight,
            max_p=p.red_max_p,
            gentle=False,
            ecn="rfc3168",
        )
    return droptail(limit_packets=limit)


def star(
    p: DctcpParams,
    *,
    hosts: int,
    gbps: float,
    queue: Mapping[str, Any],
    buffer: str,
    duration_s: float,
    warmup_s: float = 0.0,
    tcp: Mapping[str, Any],
    name: str,
) -> Scenario:
    """``hosts`` hosts ``h0`` .. on one switch ``sw`` at ``gbps``; link ``i`` is ``h<i>``'s.

    Every switch port (``sw -> h<i>``, queue ``2 i + 1``) has ``queue``;
    with ``buffer = "shared"`` the switch's ports share one buffer
    (Choudhury-Hahne dynamic thresholds). Hosts' own queues never drop.
    """
    sc = Scenario(
        duration=f"{duration_s:g}s",
        name=name,
        warmup=f"{warmup_s:g}s" if warmup_s > 0 else None,
    ).tcp(**tcp)
    shared = (
        {"bytes": int(p.shared_buffer_bytes), "alpha": p.shared_alpha}
        if buffer == "shared"
        else None
    )
    sc.router("sw", shared_buffer=shared)
    nic = droptail(limit_packets=HOST_QUEUE_PACKETS)
    for i in range(hosts):
        sc.host(f"h{i}").link(
            f"h{i}",
            "sw",
            rate=f"{gbps:g}Gbps",
            delay=f"{p.hop_delay_us:g}us",
            queue_ab=nic,
            queue_ba=dict(queue),
        )
    return sc


def _sampling(sc: Scenario, interval_s: float, links: Sequence[int]) -> Scenario:
    """``sc`` with the queues of ``links`` sampled every ``interval_s``, and no flow."""
    d = sc.to_dict()
    d["simulation"]["sample_interval"] = f"{interval_s * 1e6:.6g}us"
    d["simulation"]["sample_queues"] = list(links)
    # The flows' series would be sampled as often (40 flows every 2 µs is GBs): none.
    d["simulation"]["sample_flows"] = []
    return Scenario.from_dict(d)


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------


def sawtooth_stats(q: np.ndarray, dt_s: float) -> dict[str, float]:
    """Period, maximum and amplitude of a sampled queue oscillation (packets, seconds).

    A cycle starts each time the queue rises through its mean after having
    been below ``mean - std / 4`` (the hysteresis keeps the ripples of a
    staircase queue, one step per round trip, from counting as cycles); the
    period is the median time between cycle starts, and ``q_max`` /
    ``amplitude`` are the medians over the whole cycles of each cycle's
    maximum and of its maximum minus minimum. NaN when fewer than two whole
    cycles are in the series.
    """
    x = np.asarray(q, dtype=float)
    nan = {"period_s": math.nan, "q_max": math.nan, "amplitude": math.nan}
    if len(x) < 8 or float(np.std(x)) == 0.0:
        return nan
    mean, low = float(x.mean()), float(x.mean() - 0.25 * x.std())
    starts = []
    armed = False
    for i, v in enumerate(x.tolist()):
        if v < low:
            armed = True
        elif armed and v >= mean:
            starts.append(i)
            armed = False
    if len(starts) < 3:
        return nan
    cycles = [x[a:b] for a, b in itertools.pairwise(starts)]
    return {
        "period_s": float(np.median(np.diff(starts))) * dt_s,
        "q_max": float(np.median([c.max() for c in cycles])),
        "amplitude": float(np.median([c.max() - c.min() for c in cycles])),
    }


def _bulk_throughput_bps(results: Any) -> float:
    """The long flows' goodput summed (payload delivered in order after the warm-up)."""
    flows = results.flows
    return float(flows["goodput_bps"].sum()) if len(flows) else 0.0


def _port_throughput_bps(row: Any) -> float:
    """What the port sent after the warm-up, headers included (its busy fraction x rate):
    the flows' goodput can count, in the window, data queued before it."""
    return float(row["utilization"]) * float(row["rate_bps"])


def _queue_row(results: Any, qid: int) -> Any:
    q = results.queues
    return q[q["queue_id"] == qid].iloc[0]


def _queue_samples(results: Any, qid: int, warmup_s: float) -> np.ndarray:
    qs = results.queue_series
    part = qs[(qs["queue_id"] == qid) & (qs["time_s"] >= warmup_s - 1e-12)]
    out: np.ndarray = part["packets"].to_numpy(dtype=float)
    return out


#: Quantiles kept of each run's sampled queue and of its transfer times (for the CDFs).
QUANTILES = np.round(np.linspace(0.0, 1.0, 41), 3)


def _derive_long(results: Any, ctx: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    qid = int(ctx["queue_id"])
    row = _queue_row(results, qid)
    samples = _queue_samples(results, qid, float(ctx["warmup_s"]))
    metrics: dict[str, float] = {
        "throughput_gbps": _port_throughput_bps(row) / 1e9,
        # The port's busy fraction after the warm-up (headers included).
        "utilization": float(row["utilization"]),
        "q_mean": float(row["avg_packets"]),
        "q_max_pk": float(row["max_packets"]),
        "q_p50": float(np.median(samples)) if len(samples) else math.nan,
        "q_p95": float(np.quantile(samples, 0.95)) if len(samples) else math.nan,
        "q_std": float(np.std(samples)) if len(samples) else math.nan,
        "drops": float(row["drops"]),
        "marks": float(row["marks"]),
        "samples": float(len(samples)),
        "rtos": float(results.flows["rto_count"].sum()),
    }
    out = {"metrics": pd.DataFrame([metrics])}
    if len(samples):
        out["queue_cdf"] = pd.DataFrame(
            {"quantile": QUANTILES, "packets": np.quantile(samples, QUANTILES)}
        )
    return out


def _derive_d13(results: Any, ctx: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    qid = int(ctx["queue_id"])
    dt = float(ctx["sample_s"])
    samples = _queue_samples(results, qid, float(ctx["warmup_s"]))
    stats = sawtooth_stats(samples, dt)
    row = _queue_row(results, qid)
    metrics = {
        "throughput_gbps": _port_throughput_bps(row) / 1e9,
        "utilization": float(row["utilization"]),
        "q_mean": float(row["avg_packets"]),
        "q_max_pk": float(row["max_packets"]),
        "sim_q_max": stats["q_max"],
        "sim_amplitude": stats["amplitude"],
        "sim_period_us": stats["period_s"] * 1e6,
        # d7's measures: how far the simulated maximum and amplitude are from the model's.
        "q_max_err": abs(stats["q_max"] - float(ctx["model_q_max"])) / float(ctx["model_q_max"]),
        "amp_log2_err": abs(math.log2(stats["amplitude"] / float(ctx["model_amplitude"])))
        if stats["amplitude"] > 0
        else math.nan,
        "drops": float(row["drops"]),
        "marks": float(row["marks"]),
    }
    # An excerpt for the figure: 4 model periods, at least EXCERPT_S, from the warm-up on.
    keep = int(max(EXCERPT_S, 4.0 * float(ctx["model_period_s"])) / dt)
    excerpt = samples[:keep]
    return {
        "metrics": pd.DataFrame([metrics]),
        "trace": pd.DataFrame({"t_us": np.arange(len(excerpt)) * dt * 1e6, "packets": excerpt}),
    }


def _derive_queries(results: Any, ctx: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    rec = results.records
    rec = rec[rec["app"] == ctx["app"]] if len(rec) else rec
    t = rec["response_time_s"].to_numpy(dtype=float) if len(rec) else np.array([])
    done = (rec["state"] == "completed").to_numpy() if len(rec) else np.array([], dtype=bool)
    metrics = {
        "queries": float(len(rec)),
        "completed": float(done.sum()),
        "qct_mean_ms": float(t.mean() * 1e3) if len(t) else math.nan,
        "qct_p95_ms": float(np.quantile(t, 0.95) * 1e3) if len(t) else math.nan,
        "qct_p99_ms": float(np.quantile(t, 0.99) * 1e3) if len(t) else math.nan,
        "timeout_fraction": float((rec["rto_count"] > 0).mean()) if len(rec) else math.nan,
        "throughput_gbps": _bulk_throughput_bps(results) / 1e9,
    }
    out = {"metrics": pd.DataFrame([metrics])}
    if len(t):
        out["qct_cdf"] = pd.DataFrame(
            {"quantile": QUANTILES, "ms": np.quantile(t, QUANTILES) * 1e3}
        )
    return out


def _jain(x: np.ndarray) -> float:
    s = float(np.sum(x))
    return s * s / (len(x) * float(np.sum(x * x))) if len(x) and s > 0 else math.nan


def d4_phases(senders: int) -> list[list[int]]:
    """The flows (1-based) active in each of D4's ``2 senders - 1`` phases: flow ``k`` starts
    at phase ``k``; flows ``2 .. senders`` then stop in the order they started, one a phase."""
    up = [list(range(1, k + 1)) for k in range(1, senders + 1)]
    down = [[1, *range(j + 1, senders + 1)] for j in range(2, senders + 1)]
    return up + down


def _goodputs(results: Any, names: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each flow's goodput (bit/s) over each sampling interval, at the interval's end."""
    fs = results.flow_series
    rates: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in names:
        part = fs[fs["flow"] == name].sort_values("time_s")
        t = part["time_s"].to_numpy(dtype=float)
        b = part["bytes_delivered"].to_numpy(dtype=float)
        # Goodput over each sampling interval (bytes_delivered is cumulative).
        rates[name] = (t[1:], np.diff(b) * 8.0 / np.maximum(np.diff(t), 1e-12))
    return rates


def _mean_in(t: np.ndarray, r: np.ndarray, lo: float, hi: float) -> float:
    sel = (t > lo) & (t <= hi + 1e-9)
    return float(r[sel].mean()) if np.any(sel) else 0.0


def _derive_d4(results: Any, ctx: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    step = float(ctx["step_s"])
    names = list(ctx["flows"])
    rates = _goodputs(results, names)
    jains = []
    for k, active in enumerate(d4_phases(len(names))):
        # The second half of phase k: past a new flow's slow start, or a stopped flow's last
        # packets.
        lo, hi = (k + 0.5) * step, (k + 1) * step
        per = [_mean_in(*rates[names[i - 1]], lo, hi) for i in active]
        jains.append(_jain(np.array(per)))
    series = pd.concat(
        [
            pd.DataFrame({"flow": name, "time_s": t, "mbps": r / 1e6})
            for name, (t, r) in rates.items()
        ],
        ignore_index=True,
    )
    # jain_all: the phase with every flow running.
    metrics = {"jain_min": float(np.nanmin(jains)), "jain_all": jains[len(names) - 1]}
    metrics.update({f"jain_{k + 1}": j for k, j in enumerate(jains)})
    return {"metrics": pd.DataFrame([metrics]), "series": series}


def _derive_d4m(results: Any, ctx: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    names = list(ctx["flows"])
    rates = _goodputs(results, names)
    lo, dt, end = float(ctx["warmup_s"]), float(ctx["interval_s"]), float(ctx["duration_s"])
    jains = []
    while lo + dt <= end + 1e-9:
        jains.append(_jain(np.array([_mean_in(*rates[n], lo, lo + dt) for n in names])))
        lo += dt
    # Over the whole measured span too (long-term fairness, beside the per-interval one).
    whole = _jain(np.array([_mean_in(*rates[n], float(ctx["warmup_s"]), end) for n in names]))
    metrics = {
        "jain_min": float(np.nanmin(jains)),
        "jain_mean": float(np.nanmean(jains)),
        "jain_whole": whole,
    }
    return {"metrics": pd.DataFrame([metrics])}


def derive(
    results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
) -> dict[str, pd.DataFrame]:
    """One run's metrics, by the experiment's kind (``context["kind"]``)."""
    kind = context["kind"]
    if kind == "d13":
        return _derive_d13(results, context)
    if kind == "queries":
        return _derive_queries(results, context)
    if kind == "d4":
        return _derive_d4(results, context)
    if kind == "d4m":
        return _derive_d4m(results, context)
    return _derive_long(results, context)


# ---------------------------------------------------------------------------
# The paper's findings and the readings they depend on
# ---------------------------------------------------------------------------


def pt(
    experiment: str,
    scheme: str,
    *,
    n: int = 0,
    k: float = 0.0,
    rto_ms: float = 0.0,
    background: str = "none",
) -> dict[str, Any]:
    """A point of the grid (every point has every axis; unused ones are 0 or "none")."""
    return {
        "experiment": experiment,
        "scheme": scheme,
        "n": n,
        "k": float(k),
        "rto_ms": float(rto_ms),
        "background": background,
    }


def dctcp_findings(p: DctcpParams) -> list[Finding]:
    """The paper's qualitative findings (STUDIES.md §6, d1-d7) as cells over the grid."""
    # Each cell list is built from the parameters it is judged under (a reading's alternative
    # changes them), never from the defaults': K, RTO min and the flows come from ``q``.
    return [
        Finding(
            "d1",
            "DCTCP gets the same throughput as TCP (both above 95 % of the link) with a far "
            "smaller queue (median sampled queue below half of TCP's)",
            "§4.1 (D1, D2)",
            lambda q: [
                c
                for exp, k in (("D1", q.k_1g), ("D2", q.k_10g))
                for c in (
                    Cell(
                        "utilization",
                        pt(exp, DCTCP, n=q.long_flows, k=k, rto_ms=q.min_rto_long_ms),
                        0.95,
                    ),
                    Cell(
                        "utilization", pt(exp, TCP, n=q.long_flows, rto_ms=q.min_rto_long_ms), 0.95
                    ),
                    Cell(
                        "q_p50",
                        pt(exp, DCTCP, n=q.long_flows, k=k, rto_ms=q.min_rto_long_ms),
                        pt(exp, TCP, n=q.long_flows, rto_ms=q.min_rto_long_ms),
                        higher=False,
                        factor=0.5,
                    ),
                )
            ],
            note="'The same throughput' read as both above 95 % of the link (our threshold).",
        ),
        Finding(
            "d2a",
            "At 1 Gb/s DCTCP's throughput holds down to small K (above 95 % of the link at "
            "every K of the sweep from 5 up)",
            "§4.1 (D1)",
            lambda q: [
                Cell(
                    "utilization",
                    pt("D1", DCTCP, n=q.long_flows, k=k, rto_ms=q.min_rto_long_ms),
                    0.95,
                )
                for k in sorted({*q.k_sweep_1g, q.k_1g})
            ],
        ),
        Finding(
            "d2b",
            "At 10 Gb/s DCTCP's throughput falls once K is well below the chosen value "
            "(K at a third of it or less gets less throughput than at the chosen K)",
            "§4.1 (D2)",
            lambda q: [
                Cell(
                    "utilization",
                    pt("D2", DCTCP, n=q.long_flows, k=k, rto_ms=q.min_rto_long_ms),
                    pt("D2", DCTCP, n=q.long_flows, k=q.k_10g, rto_ms=q.min_rto_long_ms),
                    higher=False,
                )
                for k in q.k_sweep_10g
                if k <= q.k_10g / 3.0
            ],
            note="The paper blames host burstiness (TSO, interrupt moderation) for the gap "
            "between its K guideline and the K it used; by default ecnsim's hosts send no "
            "bursts beyond their windows (the host_burstiness reading runs it with offload).",
        ),
        Finding(
            "d3",
            "TCP with RED keeps a much larger (mean over twice DCTCP's) and more variable "
            "(standard deviation of the sampled queue) queue than DCTCP",
            "§4.1 (D3)",
            lambda q: [
                c
                for th in _red_labels(q)
                for c in (
                    Cell(
                        "q_mean",
                        pt("D3", th, n=q.long_flows, rto_ms=q.min_rto_long_ms),
                        pt("D3", DCTCP, n=q.long_flows, k=q.k_10g, rto_ms=q.min_rto_long_ms),
                        factor=2.0,
                    ),
                    Cell(
                        "q_std",
                        pt("D3", th, n=q.long_flows, rto_ms=q.min_rto_long_ms),
                        pt("D3", DCTCP, n=q.long_flows, k=q.k_10g, rto_ms=q.min_rto_long_ms),
                    ),
                )
            ],
        ),
        Finding(
            "d4",
            "DCTCP converges to fair shares (Jain's index above 0.9 in every phase of D4; "
            "with the most flows of D4m, its least fair interval fairer than TCP's)",
            "§4.1 (D4)",
            lambda q: [
                Cell(
                    "jain_min",
                    pt("D4", DCTCP, n=q.d4_senders, k=q.k_1g, rto_ms=q.min_rto_long_ms),
                    0.9,
                ),
                *(
                    [
                        Cell(
                            "jain_min",
                            pt(
                                "D4m",
                                DCTCP,
                                n=max(q.d4m_flows),
                                k=q.k_1g,
                                rto_ms=q.min_rto_long_ms,
                            ),
                            pt("D4m", TCP, n=max(q.d4m_flows), k=0.0, rto_ms=q.min_rto_long_ms),
                        )
                    ]
                    if "D4m" in q.experiments
                    else []
                ),
            ],
            note="D4: Jain's index over the second half of each phase (flows started, then "
            "stopped), 0.9 our threshold. D4m: the least of Jain's indices over the intervals, "
            "against TCP's in the same setup (an ordering: 90 flows of one RTT and one "
            "rate are fair on average whatever the scheme, so a fixed bound such as 0.9 on "
            "the mean could hardly fail).",
        ),
        Finding(
            "d5",
            "In incast DCTCP suffers fewer timeouts than TCP (fraction of queries with a "
            "timeout), up to a number of servers that depends on the buffer",
            "§4.2.1 (D6-D8)",
            lambda q: [
                Cell(
                    "timeout_fraction",
                    pt(exp, DCTCP, n=n, k=q.k_1g, rto_ms=rto),
                    pt(exp, TCP, n=n, rto_ms=rto),
                    higher=False,
                )
                for exp, ns, rtos in (
                    ("D6", q.incast_n, q.incast_rto_ms),
                    ("D7", q.d7_n, (q.min_rto_short_ms,)),
                    ("D8", (q.d8_hosts - 1,), (q.min_rto_short_ms,)),
                )
                for n in ns
                if n >= 10
                for rto in rtos
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="Cells at 10 servers and more (fewer do not overflow a 100-packet port); "
            "'up to a number of servers' read as most cells, not every one.",
        ),
        Finding(
            "d6",
            "DCTCP's 20 KB transfers beside long flows finish much faster than TCP's "
            "(median and 99th percentile below half of TCP's)",
            "§4.2.2 (D9)",
            lambda q: [
                Cell(
                    metric,
                    pt("D9", DCTCP, n=2, k=q.k_1g, rto_ms=q.min_rto_short_ms),
                    pt("D9", TCP, n=2, rto_ms=q.min_rto_short_ms),
                    higher=False,
                    factor=0.5,
                )
                for metric in ("qct_mean_ms", "qct_p99_ms")
            ],
        ),
        Finding(
            "d7",
            "The simulated queue follows the analysis: its maximum within 15 % of K + N and "
            "its amplitude within a factor 2 of the model's",
            "§3.3 (D13)",
            lambda q: [
                c
                for n in q.d13_n
                for c in (
                    Cell(
                        "q_max_err",
                        pt("D13", DCTCP, n=n, k=q.d13_k, rto_ms=q.min_rto_long_ms),
                        0.15,
                        False,
                    ),
                    Cell(
                        "amp_log2_err",
                        pt("D13", DCTCP, n=n, k=q.d13_k, rto_ms=q.min_rto_long_ms),
                        1.0,
                        False,
                    ),
                )
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="q_max_err = |simulated - model| / model; amp_log2_err = |log2(simulated / "
            "model)|: bands chosen before the runs. The period is tabulated, not judged (no "
            "band was set for it before the runs).",
        ),
    ]


def dctcp_readings(p: DctcpParams) -> list[Reading]:
    """The paper's ambiguities that can move a finding, with each alternative's evidence."""
    other_buffer = "static" if p.long_buffer == "shared" else "shared"
    return [
        Reading(
            "buffer",
            "The switch buffer of the long-flow experiments: shared (dynamic thresholds) or a "
            "static 100 packets per port?",
            (
                Alternative(
                    p.long_buffer,
                    "§4: the switches' 4 MB is shared by all ports, dynamic by default",
                    settings={"long_buffer": p.long_buffer},
                ),
                Alternative(
                    other_buffer,
                    "§4.2.1: one experiment runs a static 100-packet buffer per port",
                    settings={"long_buffer": other_buffer},
                ),
            ),
        ),
        Reading(
            "rto_min",
            "RTO min of the long-flow experiments: 300 ms (production stacks) or 10 ms?",
            (
                Alternative(
                    f"{p.min_rto_long_ms:g} ms",
                    "§4: production stacks' 300 ms until the incast experiments",
                    settings={"min_rto_long_ms": p.min_rto_long_ms},
                ),
                Alternative(
                    "10 ms",
                    "§4.2.1: 10 ms from the incast experiments on",
                    settings={"min_rto_long_ms": 10.0},
                ),
            ),
        ),
        Reading(
            "g",
            "DCTCP's g: the paper's 1/16, or a slower 1/32 (still inside eq. 15's bound)?",
            (
                Alternative(
                    f"1/{2**p.g_shift}",
                    "§3.1/§4: g = 1/16",
                    settings={"g_shift": p.g_shift},
                ),
                Alternative(
                    f"1/{2 ** (p.g_shift + 1)}",
                    "§3.4 eq. 15: any g below 1.386 / sqrt(2 (C RTT + K)) averages over a cycle",
                    settings={"g_shift": p.g_shift + 1},
                ),
            ),
        ),
        Reading(
            "host_burstiness",
            "Do the hosts send each segment as the windows allow, or in the bursts of "
            "segmentation offload the paper blames for its K at 10 Gb/s?",
            (
                Alternative(
                    "none",
                    "§3.4: the K guideline (K > C RTT / 7) is derived for hosts that send as "
                    "the window allows; ecnsim's TCP (as ns-2's, whose check of the analysis the "
                    "paper reports) sends so",
                    settings={"host_burstiness": "none"},
                ),
                Alternative(
                    f"tso ({p.tso_segments} segments)",
                    "§3.4, §4: the paper's 10 Gb/s hosts send bursts (large send offload, "
                    "interrupt moderation), the reason given for K = 65 rather than the "
                    "guideline's; 64 KB frames, deferred as Linux's tcp_tso_should_defer()",
                    settings={"host_burstiness": "tso"},
                ),
            ),
        ),
        Reading(
            "mark_at",
            "Does the switch compare the queue with K on arrival (§3.1) or at departure?",
            (
                Alternative(
                    p.mark_at,
                    "§3.1: marked on arrival when the instantaneous queue exceeds K",
                    settings={"mark_at": p.mark_at},
                ),
                Alternative(
                    "departure" if p.mark_at == "arrival" else "arrival",
                    "commodity switches can mark at dequeue (RFC 8257 §3.1 leaves it open)",
                    settings={"mark_at": "departure" if p.mark_at == "arrival" else "arrival"},
                ),
            ),
        ),
    ]


def _red_labels(p: DctcpParams) -> list[str]:
    return [
        f"TCP-RED {p.red_min_th:g}/{p.red_max_th:g}",
        f"TCP-RED {p.red_raised_min_th:g}/{p.red_raised_max_th:g}",
    ]


# ---------------------------------------------------------------------------
# The study
# ---------------------------------------------------------------------------

_TITLES = {
    "D13": "D13: the queue against the analysis (10 Gb/s, K = {k:g})",
    "D1": "D1: two long flows at 1 Gb/s",
    "D2": "D2: two long flows at 10 Gb/s",
    "D6": "D6: incast, static 100-packet buffer per port",
    "D7": "D7: incast, shared buffer",
    "D8": "D8: all-to-all incast, shared buffer",
    "D9": "D9: queue buildup, 20 KB transfers beside two long flows",
    "D3": "D3: DCTCP against TCP with RED, 10 Gb/s",
    "D4": "D4: convergence, flows started and stopped one by one",
    "D4m": "D4m: fairness of many long flows (D4 repeated with up to 90)",
    "D10": "D10: buffer pressure, 10:1 incast with and without background flows",
}


class DctcpStudy(Study):
    name: ClassVar[str] = "dctcp"
    title: ClassVar[str] = (
        "DCTCP against TCP on a datacenter switch: queue, throughput, incast, the §3.3 analysis"
    )
    source: ClassVar[str] = (
        "M. Alizadeh et al., 'Data Center TCP (DCTCP)', ACM SIGCOMM 2010, §3.3-3.4 and §4"
    )
    Params: ClassVar[type[StudyParams]] = DctcpParams
    derive_version: ClassVar[int] = 2
    axis_parameters: ClassVar[Mapping[str, str]] = {
        "rto_ms": "min_rto_long_ms, min_rto_short_ms or incast_rto_ms (its rto_ms axis)",
    }
    # Measured 2026-12-02 (`ecnsim study run dctcp --jobs 2` from an empty store):
    # PGO wheels of main bede5e1 (shared machine, top priority) and of main 2172e3c
    # (idle); each value covers the larger of the two, then scaled by the render's
    # estimated wall time after branch render2 over before (its CPU measured before and
    # after on copies of the idle store; docs/performance.md, "Study run times").
    render_cost_s: ClassVar[float] = 5.0
    run_cost_scale: ClassVar[float] = 1.35
    plan_cost_s_per_run: ClassVar[float] = 0.007

    def quick(self, p: DctcpParams) -> DctcpParams:
        return dataclasses.replace(
            p,
            seeds=1,
            long_duration_s=1.0,
            long_warmup_s=0.25,
            k_sweep_1g=(5.0, p.k_1g),
            k_sweep_10g=(20.0, p.k_10g),
            d13_duration_s=0.1,
            d13_warmup_s=0.04,
            incast_n=(5, 20, 40),
            incast_queries=100,
            d7_n=(20, 40),
            d8_queries=5,
            d9_transfers=100,
            d4_step_s=1.0,
            d4m_flows=(90,),
            d4m_duration_s=2.0,
            d4m_warmup_s=1.0,
            d4m_interval_s=0.5,
            d10_queries=5,
        )

    def setup(self, p: DctcpParams) -> list[tuple[str, str]]:
        return [
            ("topology", "one switch, every host one link away (1 or 10 Gb/s)"),
            ("round trip", f"4 x {p.hop_delay_us:g} µs of propagation, plus serialisation"),
            ("packets", f"{p.packet_bytes} B on the wire ({p.packet_bytes - HEADER_BYTES} B MSS)"),
            ("DCTCP", f"g = 1/{2**p.g_shift}, SACK recovery, ECN; delayed ACKs (m = 2)"),
            ("TCP", "NewReno with SACK (cc = sack), no ECN; DropTail at the switch"),
            ("marking", f"step on {p.mark_at}: K = {p.k_1g:g} at 1 Gb/s, {p.k_10g:g} at 10 Gb/s"),
            (
                "shared buffer",
                f"{p.shared_buffer_bytes / 1e6:g} MB, dynamic thresholds alpha = "
                f"{p.shared_alpha:.4f} (D3, D7, D8, D10, D13; D1, D2, D4 and D9: "
                f"long_buffer = {p.long_buffer})",
            ),
            ("static buffer", f"{p.static_buffer_packets} packets per port (D6)"),
            (
                "RTO min",
                f"{p.min_rto_long_ms:g} ms (D1-D4, D13), {p.min_rto_short_ms:g} ms (D7-D10); "
                f"D6: {', '.join(f'{r:g}' for r in p.incast_rto_ms)} ms",
            ),
            (
                "D1, D2",
                f"{p.long_flows} long flows, {p.long_duration_s:g} s ({p.long_warmup_s:g} s "
                f"warm-up), queue sampled every {p.queue_sample_ms:g} ms; K swept "
                f"{list(p.k_sweep_1g)} (1 Gb/s), {list(p.k_sweep_10g)} (10 Gb/s)",
            ),
            (
                "D13",
                f"N = {list(p.d13_n)}, K = {p.d13_k:g}, 10 Gb/s, {p.d13_duration_s:g} s "
                f"({p.d13_warmup_s:g} s warm-up), queue sampled every {p.d13_sample_us:g} µs",
            ),
            (
                "D6",
                f"n = {list(p.incast_n)} servers, {p.incast_total_bytes / 1e6:g} MB / n each, "
                f"{p.incast_queries} queries, {p.request_bytes} B requests",
            ),
            ("D7", f"n = {list(p.d7_n)}, shared buffer, RTO min {p.min_rto_short_ms:g} ms"),
            (
                "D8",
                f"{p.d8_hosts} hosts, each asks {p.d8_bytes / 1e3:g} KB of every other, "
                f"{p.d8_queries} queries each",
            ),
            (
                "D9",
                f"2 long flows + {p.d9_transfers} transfers of {p.d9_chunk_bytes / 1e3:g} KB "
                "back to back on one connection",
            ),
            (
                "D3",
                f"10 Gb/s, RED max_p {p.red_max_p:g}, w_q 2^-{p.red_weight}, "
                f"{p.red_min_th:g}/{p.red_max_th:g} and "
                f"{p.red_raised_min_th:g}/{p.red_raised_max_th:g} packets, ECN",
            ),
            (
                "D4",
                f"{p.d4_senders} senders started, then stopped, {p.d4_step_s:g} s apart, 1 Gb/s",
            ),
            (
                "D4m",
                f"{', '.join(str(n) for n in p.d4m_flows)} long flows together, "
                f"{p.d4m_duration_s:g} s, 1 Gb/s",
            ),
            (
                "D10",
                f"{p.d10_fan_in}:1 incast of {p.d10_response_bytes / 1e3:g} KB each, "
                f"{p.d10_queries} queries; background: {2 * p.d10_background_hosts} long flows "
                f"among {p.d10_background_hosts} hosts ({p.d10_pattern})",
            ),
        ]

    def choices(self, p: DctcpParams) -> list[Choice]:
        return [
            Choice(
                "round trip",
                f"{p.hop_delay_us:g} µs per host link (4 crossings = 100 µs of propagation); "
                "the model's RTT adds a data packet's and an ACK's serialisation at both hops",
                "STUDIES.md §6: 'RTT about 100 µs within a rack (no queueing)'",
                "hop_delay_us",
            ),
            Choice(
                "switch buffer (long flows)",
                f"{p.long_buffer}: D1, D2, D4 and D9 run on the {p.long_buffer} buffer (D3 and "
                "D13 always on the shared one: RED's max_th of 150 and the model's queue need "
                "more than 100 packets)",
                "§4: dynamic allocation is the switches' default; a reading",
                "long_buffer",
            ),
            Choice(
                "shared buffer alpha",
                f"{p.shared_alpha:.4f}: one busy port gets 700 KB of 4 MB (Choudhury-Hahne)",
                "the chip's alpha is not published; docs/models/shared_buffer.md",
                "shared_alpha",
            ),
            Choice(
                "host burstiness",
                (
                    "none: hosts send what their windows allow, segment by segment"
                    if p.host_burstiness == "none"
                    else f"tso: segmentation offload in frames of {p.tso_segments} segments "
                    "(tcp.tso_segments)"
                )
                + f" in {', '.join(BURSTY_EXPERIMENTS)}; no interrupt moderation at receivers",
                "the paper blames bursty hosts for needing K = 65 at 10 Gb/s rather than "
                "C RTT / 7; a reading (host_burstiness)",
                "host_burstiness",
            ),
            Choice(
                "TCP in D3",
                "NewReno with SACK and ECN, RED marking (not dropping) ECN-capable packets",
                "STUDIES.md §6: 'TCP with RED marking (ECN)'",
                None,
            ),
            Choice(
                "RED with min_th raised",
                f"min_th {p.red_raised_min_th:g}, max_th {p.red_raised_max_th:g} (max_th must "
                "exceed min_th; 3 x min_th, the ratio of 50/150)",
                "the paper raises min_th to 150 without a max_th",
                "red_raised_max_th",
            ),
            Choice(
                "incast request",
                f"{p.request_bytes} B to each server",
                "the paper does not give the request size",
                "request_bytes",
            ),
            Choice(
                "D8 repetitions",
                f"{p.d8_queries} all-to-all rounds per host, each the next after all answers",
                "the paper: every machine requests at once; repeated for percentiles",
                "d8_queries",
            ),
            Choice(
                "D9's connection",
                "open before the transfers (no handshake; its RTO starts at RTO min, as an "
                "open connection's would after its RTT samples)",
                "STUDIES.md §6: 'over a persistent connection'; a SYN lost behind TCP's full "
                "queue would add the 1-s initial RTO to the first transfer",
                None,
            ),
            Choice(
                "D10 queries",
                f"{p.d10_queries} queries (the paper: 10,000)",
                "66 background flows make each simulated second 33 Gb/s of packets; "
                "--set d10_queries=10000 runs the paper's count",
                "d10_queries",
            ),
            Choice(
                "D10 background pattern",
                f"{p.d10_pattern}: each background host sends to two others "
                + (
                    "drawn at random once (a fixed stream)"
                    if p.d10_pattern == "random"
                    else "in a ring (j+1, j+2)"
                ),
                "the paper: 'each host sends to two others'; in a ring every port receives "
                "exactly two flows and the senders' NICs are the bottleneck as much as the "
                "switch (the queues build in the hosts), at random some ports receive more",
                "d10_pattern",
            ),
            Choice(
                "D4 stops",
                f"flows start {p.d4_step_s:g} s apart, then flows 2..{p.d4_senders} stop in the "
                "order they started, as ns-2's `$ftp stop`: the sender offers nothing past what "
                "it has sent, which is still delivered",
                "the paper says 'one by one' but not in which order; ns-3's stop (closing the "
                "socket) would also send what its send buffer holds",
                None,
            ),
            Choice(
                "D4m",
                f"{', '.join(str(n) for n in p.d4m_flows)} flows start together (within the "
                f"start jitter); Jain's index per {p.d4m_interval_s:g} s after "
                f"{p.d4m_warmup_s:g} s of {p.d4m_duration_s:g} s",
                "the paper repeats D4 'with up to 90 flows' without its layout; 90 flows "
                "started 30 s apart would be 90 minutes of simulated time",
                "d4m_flows",
            ),
            Choice(
                "D13 clock",
                f"the model's sawtooth is drawn on the {p.d13_clock!r} clock",
                "'base': the paper's (one window step per RTT); 'queued' (RTT + Q/C) is in "
                "the table beside it",
                "d13_clock",
            ),
            Choice(
                "start times",
                f"each long flow opens at a random time in [0, {p.start_jitter_ms:g} ms); the "
                "incast queries have nothing random (their seeds run the same packets)",
                "the paper does not say; without it every seed of a long-flow point is the same "
                "run",
                "start_jitter_ms",
            ),
            Choice(
                "hosts' queues",
                f"{HOST_QUEUE_PACKETS} packets (never drop)",
                "a host's qdisc backpressures the socket rather than drop",
                None,
            ),
        ]

    def findings(self, p: DctcpParams) -> list[Finding]:
        return dctcp_findings(p)

    def readings(self, p: DctcpParams) -> list[Reading]:
        return dctcp_readings(p)

    def grid(self, p: DctcpParams) -> list[dict[str, Any]]:
        lr, sr, lf = p.min_rto_long_ms, p.min_rto_short_ms, p.long_flows
        out: list[dict[str, Any]] = []
        for exp in p.experiments:
            if exp == "D13":
                out += [pt("D13", DCTCP, n=n, k=p.d13_k, rto_ms=lr) for n in p.d13_n]
            elif exp in ("D1", "D2"):
                ks = sorted({*(p.k_sweep_1g if exp == "D1" else p.k_sweep_10g)})
                chosen = p.k_1g if exp == "D1" else p.k_10g
                ks = sorted({*ks, chosen})
                out.append(pt(exp, TCP, n=lf, rto_ms=lr))
                out += [pt(exp, DCTCP, n=lf, k=k, rto_ms=lr) for k in ks]
            elif exp == "D3":
                out.append(pt("D3", DCTCP, n=lf, k=p.k_10g, rto_ms=lr))
                out += [pt("D3", lab, n=lf, rto_ms=lr) for lab in _red_labels(p)]
            elif exp == "D6":
                out += [
                    pt("D6", s, n=n, k=p.k_1g if s == DCTCP else 0.0, rto_ms=rto)
                    for rto in p.incast_rto_ms
                    for n in p.incast_n
                    for s in (DCTCP, TCP)
                ]
            elif exp == "D7":
                out += [
                    pt("D7", s, n=n, k=p.k_1g if s == DCTCP else 0.0, rto_ms=sr)
                    for n in p.d7_n
                    for s in (DCTCP, TCP)
                ]
            elif exp == "D8":
                out += [
                    pt("D8", s, n=p.d8_hosts - 1, k=p.k_1g if s == DCTCP else 0.0, rto_ms=sr)
                    for s in (DCTCP, TCP)
                ]
            elif exp == "D9":
                out += [
                    pt("D9", s, n=2, k=p.k_1g if s == DCTCP else 0.0, rto_ms=sr)
                    for s in (DCTCP, TCP)
                ]
            elif exp == "D4":
                out += [
                    pt("D4", s, n=p.d4_senders, k=p.k_1g if s == DCTCP else 0.0, rto_ms=lr)
                    for s in (DCTCP, TCP)
                ]
            elif exp == "D4m":
                out += [
                    pt("D4m", s, n=n, k=p.k_1g if s == DCTCP else 0.0, rto_ms=lr)
                    for n in p.d4m_flows
                    for s in (DCTCP, TCP)
                ]
            elif exp == "D10":
                out += [
                    pt(
                        "D10",
                        s,
                        n=p.d10_fan_in,
                        k=p.k_1g if s == DCTCP else 0.0,
                        rto_ms=sr,
                        background=bg,
                    )
                    for bg in ("none", f"{2 * p.d10_background_hosts} flows")
                    for s in (DCTCP, TCP)
                ]
        return out

    # -- scenarios --------------------------------------------------------------------

    def _gbps(self, point: Mapping[str, Any]) -> float:
        return 10.0 if point["experiment"] in ("D2", "D3", "D13") else 1.0

    def _red_th(self, p: DctcpParams, scheme: str) -> tuple[float, float] | None:
        labels = _red_labels(p)
        if scheme == labels[0]:
            return (p.red_min_th, p.red_max_th)
        if scheme == labels[1]:
            return (p.red_raised_min_th, p.red_raised_max_th)
        return None

    def scenario(self, p: DctcpParams, point: Mapping[str, Any]) -> Scenario:
        exp = str(point["experiment"])
        scheme = str(point["scheme"])
        n = int(point["n"])
        k = float(point["k"])
        rto = float(point["rto_ms"])
        gbps = self._gbps(point)
        tcp = _tcp(p, scheme, rto)
        if p.host_burstiness == "tso" and exp in BURSTY_EXPERIMENTS:
            tcp["tso_segments"] = p.tso_segments
        name = f"dctcp-{exp}-{scheme}-n{n}-k{k:g}-rto{rto:g}"
        if exp in ("D1", "D2", "D3", "D13"):
            long = exp != "D13"
            # D3's RED needs room above max_th, and D13 the model's queue: the shared buffer.
            buffer = p.long_buffer if exp in ("D1", "D2") else "shared"
            q = _switch_queue(p, scheme, k, buffer, self._red_th(p, scheme))
            sc = star(
                p,
                hosts=n + 1,
                gbps=gbps,
                queue=q,
                buffer=buffer,
                duration_s=p.long_duration_s if long else p.d13_duration_s,
                warmup_s=p.long_warmup_s if long else p.d13_warmup_s,
                tcp=tcp,
                name=name,
            )
            for i in range(1, n + 1):
                sc.flow(f"h{i}", "h0", name=f"long{i}", start_jitter=_jitter(p))
            interval = p.queue_sample_ms / 1e3 if long else p.d13_sample_us / 1e6
            return _sampling(sc, interval, [0])  # link 0 (h0's): its queue 1 is sw -> h0
        if exp in ("D6", "D7"):
            buffer = "static" if exp == "D6" else "shared"
            q = _switch_queue(p, scheme, k, buffer)
            sc = star(
                p,
                hosts=n + 1,
                gbps=gbps,
                queue=q,
                buffer=buffer,
                duration_s=3600.0,
                tcp=tcp,
                name=name,
            )
            return sc.app(
                incast(
                    response=p.incast_total_bytes // n,
                    request=p.request_bytes,
                    queries=p.incast_queries,
                ),
                clients="h0",
                servers=[f"h{i}" for i in range(1, n + 1)],
                name="query",
            )
        if exp == "D8":
            q = _switch_queue(p, scheme, k, "shared")
            hosts = [f"h{i}" for i in range(p.d8_hosts)]
            sc = star(
                p,
                hosts=p.d8_hosts,
                gbps=gbps,
                queue=q,
                buffer="shared",
                duration_s=3600.0,
                tcp=tcp,
                name=name,
            )
            return sc.app(
                incast(response=p.d8_bytes, request=p.request_bytes, queries=p.d8_queries),
                clients=hosts,
                servers=hosts,
                name="query",
            )
        if exp == "D9":
            q = _switch_queue(p, scheme, k, p.long_buffer)
            # h0 receives; h1 and h2 send it long flows; h3 answers h0's 20 KB requests.
            sc = star(
                p,
                hosts=4,
                gbps=gbps,
                queue=q,
                buffer=p.long_buffer,
                duration_s=self._d9_duration_s(p),
                tcp=tcp,
                name=name,
            )
            for i in (1, 2):
                sc.flow(f"h{i}", "h0", name=f"long{i}", start_jitter=_jitter(p))
            return sc.app(
                incast(response=p.d9_chunk_bytes, request=p.request_bytes, queries=p.d9_transfers),
                clients="h0",
                servers="h3",
                name="query",
                start=f"{SHORT_START_S:g}s",
                # The paper's persistent connection is open before the transfers: no handshake
                # (a SYN lost behind TCP's full queue would cost the 1-s initial RTO), and an
                # RTO already at its minimum (an open connection has its RTT samples).
                tcp={"handshake": False, "initial_rto": f"{rto:g}ms"},
            )
        if exp == "D4":
            q = _switch_queue(p, scheme, k, p.long_buffer)
            sc = star(
                p,
                hosts=n + 1,
                gbps=gbps,
                queue=q,
                buffer=p.long_buffer,
                duration_s=(2 * n - 1) * p.d4_step_s,
                tcp=tcp,
                name=name,
            )
            for i in range(1, n + 1):
                # Flow i starts at phase i; flows 2.. stop in the order they started, after
                # the phase with every flow (flow 2 at phase n + 1): ns-2's `$ftp stop`.
                stop = f"{(n + i - 2) * p.d4_step_s:g}s" if i > 1 else None
                sc.flow(
                    f"h{i}",
                    "h0",
                    name=f"long{i}",
                    start=f"{(i - 1) * p.d4_step_s:g}s",
                    start_jitter=_jitter(p),
                    stop=stop,
                )
            d = sc.to_dict()
            d["simulation"]["sample_interval"] = f"{p.d4_step_s / 30.0:g}s"
            d["simulation"]["sample_flows"] = [f"long{i}" for i in range(1, n + 1)]
            return Scenario.from_dict(d)
        if exp == "D4m":
            q = _switch_queue(p, scheme, k, p.long_buffer)
            sc = star(
                p,
                hosts=n + 1,
                gbps=gbps,
                queue=q,
                buffer=p.long_buffer,
                duration_s=p.d4m_duration_s,
                tcp=tcp,
                name=name,
            )
            for i in range(1, n + 1):
                sc.flow(f"h{i}", "h0", name=f"long{i}", start_jitter=_jitter(p))
            d = sc.to_dict()
            d["simulation"]["sample_interval"] = f"{p.d4m_interval_s / 10.0:g}s"
            d["simulation"]["sample_flows"] = [f"long{i}" for i in range(1, n + 1)]
            return Scenario.from_dict(d)
        if exp == "D10":
            fan = p.d10_fan_in
            bg = p.d10_background_hosts if point["background"] != "none" else 0
            q = _switch_queue(p, scheme, k, "shared")
            sc = star(
                p,
                hosts=fan + 1 + p.d10_background_hosts,
                gbps=gbps,
                queue=q,
                buffer="shared",
                duration_s=3600.0,
                tcp=tcp,
                name=name,
            )
            sc.app(
                incast(
                    response=p.d10_response_bytes, request=p.request_bytes, queries=p.d10_queries
                ),
                clients="h0",
                servers=[f"h{i}" for i in range(1, fan + 1)],
                name="query",
                start=f"{SHORT_START_S:g}s",
            )
            base = fan + 1
            for j, dst in background_pairs(p) if bg else ():
                sc.flow(
                    f"h{base + j}", f"h{base + dst}", name=f"bg{j}-{dst}", start_jitter=_jitter(p)
                )
            if bg:
                # Endless background flows: the run ends at a bound (_d10_duration_s).
                d = sc.to_dict()
                d["simulation"]["duration"] = f"{self._d10_duration_s(p):.6g}s"
                return Scenario.from_dict(d)
            return sc
        raise ValueError(f"unknown experiment {exp!r}")

    @staticmethod
    def _d9_duration_s(p: DctcpParams) -> float:
        """D9 runs with endless long flows: long enough for every transfer to take its time
        at the link's rate four times over plus 15 ms (a timeout's worth); the report warns
        if some did not finish (``warnings``)."""
        per = 4.0 * p.d9_chunk_bytes * 8.0 / 1e9 + QUERY_SLACK_S
        return SHORT_START_S + p.d9_transfers * per + 0.1

    @staticmethod
    def _d10_duration_s(p: DctcpParams) -> float:
        """D10 with background flows: as D9, for queries of fan-in x response bytes."""
        per = 4.0 * p.d10_fan_in * p.d10_response_bytes * 8.0 / 1e9 + QUERY_SLACK_S
        return SHORT_START_S + p.d10_queries * per + 0.1

    def job(self, p: DctcpParams, point: Mapping[str, Any]) -> JobSpec:
        exp = str(point["experiment"])
        rate = self._gbps(point) * 1e9
        if exp == "D13":
            model = DctcpAnalysis.from_link(
                rate,
                analysis_rtt_s(p, rate),
                p.d13_k,
                int(point["n"]),
                packet_bytes=p.packet_bytes,
            )
            ctx: dict[str, Any] = {
                "kind": "d13",
                "queue_id": 1,
                "warmup_s": p.d13_warmup_s,
                "sample_s": p.d13_sample_us / 1e6,
                "rate_bps": rate,
                "model_period_s": model.period_s(p.d13_clock),
                "model_q_max": model.q_max,
                "model_amplitude": model.queue_amplitude,
            }
            return JobSpec(context=ctx, keep_tables=("queues",))
        if exp in ("D1", "D2", "D3"):
            return JobSpec(
                context={
                    "kind": "long",
                    "queue_id": 1,
                    "warmup_s": p.long_warmup_s,
                    "rate_bps": rate,
                },
                keep_tables=("queues",),
            )
        if exp == "D4":
            flows = [f"long{i}" for i in range(1, int(point["n"]) + 1)]
            return JobSpec(
                context={"kind": "d4", "step_s": p.d4_step_s, "flows": flows},
                keep_tables=("flows",),
            )
        if exp == "D4m":
            flows = [f"long{i}" for i in range(1, int(point["n"]) + 1)]
            return JobSpec(
                context={
                    "kind": "d4m",
                    "flows": flows,
                    "warmup_s": p.d4m_warmup_s,
                    "interval_s": p.d4m_interval_s,
                    "duration_s": p.d4m_duration_s,
                },
                keep_tables=("flows",),
            )
        return JobSpec(context={"kind": "queries", "app": "query"}, keep_tables=("queues",))

    @staticmethod
    def derive(
        results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
    ) -> dict[str, pd.DataFrame]:
        return derive(results, trace, context)

    def estimate_seconds(self, p: DctcpParams, point: Mapping[str, Any]) -> float:
        # Measured (CPU of one run, one core, docs/studies/dctcp.md "Timing"): about 0.3 µs
        # per packet the busy ports carry (a 1500-byte packet is 12 µs of a 1 Gb/s link);
        # D13 with N (more marks and ACKs) and its 2-µs samples, D8 with its connections, D10's
        # 66 background flows cost 0.75 µs per packet.
        exp = str(point["experiment"])
        gbps = self._gbps(point)
        pps = gbps * 1e9 / (8.0 * p.packet_bytes)
        cost = 0.3e-6
        if exp in ("D1", "D2", "D3"):
            return 0.03 + p.long_duration_s * pps * cost
        if exp == "D13":
            return 0.03 + (0.3 + 0.005 * int(point["n"])) * p.d13_duration_s
        if exp == "D4":
            return 0.03 + (2 * int(point["n"]) - 1) * p.d4_step_s * pps * cost
        if exp == "D4m":
            # Not measured yet: the packets, and the flows' ACKs and samples as D13's N.
            return 0.03 + p.d4m_duration_s * pps * cost * (1.0 + 0.005 * int(point["n"]))
        if exp in ("D6", "D7"):
            return 0.03 + p.incast_queries * p.incast_total_bytes / p.packet_bytes * cost
        if exp == "D8":
            return 0.03 + p.d8_queries * 0.055 * (p.d8_hosts / 41.0) ** 2
        if exp == "D9":
            return 0.03 + self._d9_duration_s(p) * pps * cost
        if point["background"] == "none":  # D10
            return 0.03 + p.d10_queries * p.d10_fan_in * p.d10_response_bytes / 1500 * cost
        # Every background receiver's port busy: 33 links' worth of packets.
        return 0.03 + self._d10_duration_s(p) * pps * 0.75e-6 * p.d10_background_hosts

    def warnings(self, p: DctcpParams, data: StudyData) -> list[str]:
        out = []
        m = data.frame("metrics")
        if "completed" in m.columns and "queries" in m.columns:
            short = m[(m["completed"] < m["queries"]) & m["queries"].notna()]
            for _, r in short.iterrows():
                out.append(
                    f"{r['experiment']} {r['scheme']} n={r['n']} seed {r['seed']}: "
                    f"{int(r['completed'])} of {int(r['queries'])} queries completed"
                )
        return out

    # -- rendering ----------------------------------------------------------------------

    def _model(self, p: DctcpParams, n: int) -> DctcpAnalysis:
        rate = 10e9
        return DctcpAnalysis.from_link(
            rate, analysis_rtt_s(p, rate), p.d13_k, n, packet_bytes=p.packet_bytes
        )

    def tables(self, p: DctcpParams, data: StudyData) -> dict[str, StudyTable]:
        out: dict[str, StudyTable] = {}
        order = data.order()
        frame = data.frame("metrics")
        agg = data.aggregate(
            "metrics",
            [
                m
                for m in [
                    "throughput_gbps",
                    "utilization",
                    "q_mean",
                    "q_p50",
                    "q_p95",
                    "q_std",
                    "q_max_pk",
                    "drops",
                    "sim_q_max",
                    "sim_amplitude",
                    "sim_period_us",
                    "qct_mean_ms",
                    "qct_p95_ms",
                    "qct_p99_ms",
                    "timeout_fraction",
                    "jain_min",
                    "jain_all",
                    "jain_mean",
                    "jain_whole",
                ]
                if m in frame.columns
            ],
        )
        d13 = self._d13_table(p, agg)
        if d13 is not None:
            out["d13_analysis"] = d13
        for exp in ("D1", "D2", "D3"):
            part = select_rows(agg, {"experiment": exp})
            if part.empty:
                continue
            part = part.assign(
                row=part["scheme"]
                + np.where(part["scheme"] == DCTCP, " K=" + part["k"].map("{:g}".format), "")
            )
            metrics = ["throughput_gbps", "q_mean", "q_p50", "q_p95", "q_std", "q_max_pk", "drops"]
            mean = part[part["metric"].isin(metrics)].pivot_table(
                index="row", columns="metric", values="mean", sort=False
            )[metrics]
            ci = (
                part[part["metric"].isin(metrics)]
                .pivot_table(index="row", columns="metric", values="ci", sort=False, dropna=False)
                .reindex_like(mean)
            )
            out[f"{exp.lower()}_queue"] = StudyTable(
                _TITLES[exp],
                mean,
                ci,
                "",
                "Throughput in Gb/s (what the port sent after the warm-up, headers "
                "included); the queue in packets: time-average (q_mean), and the median, "
                "95th percentile and "
                f"standard deviation of samples every {p.queue_sample_ms:g} ms; q_max_pk the "
                "largest; drops at the port.",
            )
        for exp in ("D6", "D7", "D8", "D9", "D10"):
            part = select_rows(agg, {"experiment": exp})
            if part.empty:
                continue
            idx = ["rto_ms", "n"] if exp == "D6" else (["background"] if exp == "D10" else ["n"])
            tabs = {}
            for metric in ("qct_mean_ms", "qct_p95_ms", "qct_p99_ms", "timeout_fraction"):
                mean, ci = pivot(part, metric, index=idx, columns="scheme", order=order)
                tabs[metric] = (mean, ci)
            mean = pd.concat({m: t[0] for m, t in tabs.items()}, axis=1)
            ci = pd.concat({m: t[1] for m, t in tabs.items()}, axis=1)
            same_runs = (
                f" {exp} draws nothing at random (the queries start together, the servers "
                "answer at once, every host runs the same stack): each seed repeats the same "
                "run, so its half-widths are zero by construction, not a sign of precision."
                if exp in INCAST_WITHOUT_RANDOMNESS
                else ""
            )
            out[f"{exp.lower()}_queries"] = StudyTable(
                _TITLES[exp],
                mean,
                ci,
                "",
                "Query (or transfer) completion time in ms: mean, 95th and 99th percentiles; "
                "the fraction of queries with at least one retransmission timeout." + same_runs,
            )
        part = select_rows(agg, {"experiment": "D4"})
        if not part.empty:
            m2 = part[part["metric"].isin(["jain_min", "jain_all"])].pivot_table(
                index="scheme", columns="metric", values="mean"
            )
            c2 = (
                part[part["metric"].isin(["jain_min", "jain_all"])]
                .pivot_table(index="scheme", columns="metric", values="ci", dropna=False)
                .reindex_like(m2)
            )
            out["d4_jain"] = StudyTable(
                _TITLES["D4"],
                m2,
                c2,
                "",
                "Jain's index of the active flows' goodput over the second half of each "
                "phase (flows started one by one, then stopped one by one): the smallest over "
                "the phases, and the phase with every flow running.",
            )
        part = select_rows(agg, {"experiment": "D4m"})
        if not part.empty:
            cols = ["jain_min", "jain_mean", "jain_whole"]
            sel = part[part["metric"].isin(cols)]
            m3 = sel.pivot_table(index=["scheme", "n"], columns="metric", values="mean")
            c3 = sel.pivot_table(
                index=["scheme", "n"], columns="metric", values="ci", dropna=False
            ).reindex_like(m3)
            out["d4m_jain"] = StudyTable(
                _TITLES["D4m"],
                m3,
                c3,
                "",
                f"Jain's index of the flows' goodput over each {p.d4m_interval_s:g}-s interval "
                f"after {p.d4m_warmup_s:g} s (the smallest and the mean over the intervals), and "
                "over the whole span.",
            )
        return out

    def _d13_table(self, p: DctcpParams, agg: pd.DataFrame) -> StudyTable | None:
        part = select_rows(agg, {"experiment": "D13"})
        if part.empty:
            return None
        rows = []
        cis = []
        for n in sorted(set(part["n"].astype(int))):
            sub = part[part["n"] == n]

            def val(metric: str, sub: pd.DataFrame = sub) -> tuple[float, float]:
                r = sub[sub["metric"] == metric]
                if r.empty:
                    return math.nan, math.nan
                return float(r["mean"].iloc[0]), float(r["ci"].iloc[0])

            m = self._model(p, n)
            qmax, qmax_ci = val("sim_q_max")
            amp, amp_ci = val("sim_amplitude")
            per, per_ci = val("sim_period_us")
            util, util_ci = val("utilization")
            rows.append(
                {
                    "N": n,
                    "Q_max sim": qmax,
                    "Q_max model": m.q_max,
                    "amplitude sim": amp,
                    "amplitude model": m.queue_amplitude,
                    "amplitude approx (eq. 9)": m.queue_amplitude_approx,
                    "period sim (µs)": per,
                    "period model base (µs)": m.period_s("base") * 1e6,
                    "period model queued (µs)": m.period_s("queued") * 1e6,
                    "utilization": util,
                    "model empties": float(m.empties),
                }
            )
            cis.append(
                {
                    "N": n,
                    "Q_max sim": qmax_ci,
                    "amplitude sim": amp_ci,
                    "period sim (µs)": per_ci,
                    "utilization": util_ci,
                }
            )
        mean = pd.DataFrame(rows).set_index("N")
        ci = pd.DataFrame(cis).set_index("N").reindex(columns=mean.columns)
        return StudyTable(
            _TITLES["D13"].format(k=p.d13_k),
            mean,
            ci,
            "",
            "Simulated queue (packets) at the port against ecnsim.models.dctcp (eq. 6 solved "
            "exactly): Q_max = K + N, amplitude A = N (W* + 1) alpha / 2, period T_C = D round "
            "trips on the 'base' clock (RTT) and the 'queued' one (RTT + Q/C). Simulated: "
            "medians over cycles of the per-cycle maximum and max - min; the period from the "
            "autocorrelation (ecnsim.studies.dctcp.sawtooth_stats).",
        )

    def figures(self, p: DctcpParams, data: StudyData) -> Figures:
        from ecnsim.output.plot import _figure

        def subplots(w: float, h: float, rows: int = 1, cols: int = 1) -> tuple[Any, Any]:
            fig = _figure(w, h)
            return fig, fig.subplots(rows, cols, squeeze=False)

        figs: Figures = {}
        trace = data.frame("trace")
        if not trace.empty:
            ns = sorted(set(trace["n"].astype(int)))
            fig, axes = subplots(7, 2.2 * len(ns), len(ns))
            for ax, n in zip(axes[:, 0], ns, strict=True):
                part = trace[(trace["n"] == n) & (trace["seed"] == trace["seed"].min())]
                t = part["t_us"].to_numpy(dtype=float)
                q = part["packets"].to_numpy(dtype=float)
                ax.plot(t, q, lw=0.8, label="simulated")
                m = self._model(p, n)
                # Phase: a cut at the first simulated maximum of the excerpt.
                t0 = float(t[int(np.argmax(q))]) if len(q) else 0.0
                ax.plot(
                    t,
                    m.sawtooth(t * 1e-6, t0_s=t0 * 1e-6, round_trip=p.d13_clock),
                    lw=0.8,
                    ls="--",
                    label=f"model ({p.d13_clock} clock)",
                )
                ax.axhline(m.q_max, color="k", lw=0.6, ls=":", label="model Q_max = K + N")
                ax.axhline(m.q_min, color="grey", lw=0.6, ls=":", label="model Q_max - A")
                ax.set_ylabel(f"N = {n}: packets")
            axes[-1, 0].set_xlabel("µs after the warm-up")
            axes[0, 0].legend(fontsize=7, loc="upper right")
            figs["d13_sawtooth"] = (
                fig,
                f"D13: the simulated queue at the 10 Gb/s port (K = {p.d13_k:g}) and the "
                f"§3.3 sawtooth on the {p.d13_clock!r} clock, its phase set at the excerpt's "
                "highest sample; dotted: the model's Q_max and Q_max - A.",
            )
        cdf = data.frame("queue_cdf")
        for exp in ("D1", "D2", "D3"):
            part = select_rows(cdf, {"experiment": exp})
            if part.empty:
                continue
            fig, axs = subplots(6, 3.5)
            ax = axs[0, 0]
            chosen = {"D1": p.k_1g, "D2": p.k_10g, "D3": p.k_10g}[exp]
            for scheme in dict.fromkeys(part["scheme"]):
                sub = part[part["scheme"] == scheme]
                if scheme == DCTCP:
                    sub = sub[np.isclose(sub["k"].astype(float), chosen)]
                if sub.empty:
                    continue
                c = sub.groupby("quantile")["packets"].mean()
                ax.plot(
                    c.to_numpy(),
                    c.index.to_numpy(),
                    drawstyle="steps-post",
                    label=scheme if scheme != DCTCP else f"DCTCP K={chosen:g}",
                )
            ax.set_xlabel("queue (packets)")
            ax.set_ylabel("CDF")
            ax.legend(fontsize=8)
            figs[f"{exp.lower()}_queue_cdf"] = (
                fig,
                f"{_TITLES[exp]}: CDF of the queue sampled every {p.queue_sample_ms:g} ms "
                "(mean over seeds of each quantile).",
            )
        runs = data.frame("metrics")
        for exp, chosen in (("D1", p.k_1g), ("D2", p.k_10g)):
            part = select_rows(runs, {"experiment": exp, "scheme": DCTCP})
            if part.empty or "throughput_gbps" not in part:
                continue
            thr = part.groupby("k")["throughput_gbps"].mean()
            fig, axs = subplots(5, 3)
            ax = axs[0, 0]
            ax.plot(thr.index.to_numpy(dtype=float), thr.to_numpy(), marker="o")
            ax.axvline(chosen, color="grey", ls=":", lw=0.8)
            ax.set_xlabel("K (packets)")
            ax.set_ylabel("throughput (Gb/s)")
            figs[f"{exp.lower()}_throughput_vs_k"] = (
                fig,
                f"{_TITLES[exp]}: DCTCP's throughput against K (dotted: the chosen K).",
            )
        for exp in ("D6", "D7"):
            part = select_rows(runs, {"experiment": exp})
            if part.empty or "timeout_fraction" not in part:
                continue
            fig, axs = subplots(9, 3.2, 1, 2)
            axes = axs[0]
            for (scheme, rto), sub in part.groupby(["scheme", "rto_ms"]):
                g = sub.groupby("n")[["qct_mean_ms", "timeout_fraction"]].mean()
                lab = f"{scheme}, RTO min {rto:g} ms"
                axes[0].plot(g.index, g["qct_mean_ms"], marker="o", label=lab)
                axes[1].plot(g.index, g["timeout_fraction"], marker="o", label=lab)
            axes[0].set_ylabel("mean query time (ms)")
            axes[1].set_ylabel("queries with a timeout")
            for ax in axes:
                ax.set_xlabel("servers")
            axes[0].legend(fontsize=7)
            figs[f"{exp.lower()}_incast"] = (fig, f"{_TITLES[exp]}: against the servers.")
        series = data.frame("series")
        if not series.empty:
            schemes = list(dict.fromkeys(series["scheme"]))
            fig, axes = subplots(7, 2.4 * len(schemes), len(schemes))
            for ax, scheme in zip(axes[:, 0], schemes, strict=True):
                sub = series[
                    (series["scheme"] == scheme) & (series["seed"] == series["seed"].min())
                ]
                for flow, f in sub.groupby("flow", sort=False):
                    ax.plot(f["time_s"], f["mbps"], lw=0.8, label=str(flow))
                ax.set_ylabel(f"{scheme}: Mb/s")
            axes[-1, 0].set_xlabel("s")
            axes[0, 0].legend(fontsize=7, ncol=3)
            figs["d4_convergence"] = (fig, f"{_TITLES['D4']}: each flow's goodput over time.")
        cdf = data.frame("qct_cdf")
        part = select_rows(cdf, {"experiment": "D9"})
        if not part.empty:
            fig, axs = subplots(5, 3)
            ax = axs[0, 0]
            for scheme, sub in part.groupby("scheme", sort=False):
                c = sub.groupby("quantile")["ms"].mean()
                ax.plot(c.to_numpy(), c.index.to_numpy(), drawstyle="steps-post", label=scheme)
            ax.set_xscale("log")
            ax.set_xlabel("20 KB completion time (ms)")
            ax.set_ylabel("CDF")
            ax.legend(fontsize=8)
            figs["d9_cdf"] = (fig, f"{_TITLES['D9']}: CDF of the transfer times.")
        return figs
