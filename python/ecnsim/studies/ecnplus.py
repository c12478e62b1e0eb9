"""``ecnplus``: ECN on SYN-ACKs with web traffic (STUDIES.md §5).

Source: A. Kuzmanovic, "The Power of Explicit Congestion Notification",
ACM SIGCOMM 2005 (ns-2 and a Linux testbed); RFC 5562 (ECN+ as
standardised). Web clients fetch objects from servers across a 100 Mb/s
bottleneck congested in the server -> client direction; RTTs 10 to 150
ms; Feldmann et al. 1999 web sessions with heavy-tailed object sizes.

Experiments (each a set of points; ``docs/studies/ecnplus.md``):

- ``main``: AQM (RED, RED*, REM, PI, threshold marker) x endpoints (none,
  ECN, ECN+, RFC 5562) x offered load (90 %, 105 %);
- ``deployment``: every server ECN+, 5 / 50 / 95 % of the clients
  ECN-capable, 98 % load; ECN and non-ECN clients apart;
- ``mixes``: heavier-tailed object sizes (the largest objects carry about
  90 % of the bytes), 90 % and 105 %;
- ``testbed``: 10 Mb/s, RED*, the web demand that loads a 100 Mb/s link
  with 15 Mb/s;
- ``model``: P(queueing delay > 5 ms) against utilization at 100, 155 and
  622 Mb/s: the M[X]/M/1 model (``ecnsim.models``) beside FIFO simulations
  of the same workload.

Response times count unfinished objects (censored, Kaplan-Meier); an
overloaded open-loop workload has no steady state, and the report says so
point by point (``ecnsim.analysis.steady_state``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from ecnsim import analysis
from ecnsim.scenario.distributions import Distribution, workload_defaults
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
from ecnsim.studies.findings import ALMOST_ALL, MOST, Alternative, Cell, Delta, Finding, Reading

__all__ = ["AQMS", "ENDPOINTS", "EXPERIMENTS", "EcnplusParams", "EcnplusStudy"]

Experiment = Literal["main", "uncongested", "deployment", "mixes", "testbed", "model"]
Aqm = Literal["RED", "RED*", "REM", "PI", "threshold"]
Endpoint = Literal["none", "ECN", "ECN+", "RFC5562"]

#: The experiments, in the paper's order.
EXPERIMENTS: tuple[Experiment, ...] = (
    "main",
    "uncongested",
    "deployment",
    "mixes",
    "testbed",
    "model",
)
#: The ``aqm`` axis value of the uncongested reference (a row of the main tables).
UNCONGESTED = "uncongested (1 Gb/s DropTail)"
#: The AQMs of STUDIES.md §5.
AQMS: tuple[Aqm, ...] = ("RED", "RED*", "REM", "PI", "threshold")
#: Endpoints: ``(tcp.ecn, tcp.ecn_synack)`` of each (``docs/models/tcp.md``).
ENDPOINTS: dict[Endpoint, tuple[str, str]] = {
    "none": ("off", "off"),
    "ECN": ("request", "off"),
    "ECN+": ("request", "ecnplus"),
    "RFC5562": ("request", "rfc5562"),
}

#: Response times at which each run's (Kaplan-Meier) CDF is kept: 10 ms to 1000 s.
GRID_S = np.geomspace(1e-2, 1e3, 201)

#: TCP/IP header bytes of a data packet.
HEADER_BYTES = 40


@dataclass(frozen=True)
class EcnplusParams(StudyParams):
    """Kuzmanovic 2005's setup (STUDIES.md §5) as defaults; every ambiguity is a field."""

    experiments: tuple[Experiment, ...] = EXPERIMENTS
    aqms: tuple[Aqm, ...] = AQMS
    endpoints: tuple[Endpoint, ...] = tuple(ENDPOINTS)
    #: Offered load, percent of the bottleneck (response bytes on the wire).
    loads_percent: tuple[float, ...] = (90.0, 105.0)
    bottleneck_mbps: float = 100.0
    bottleneck_delay_ms: float = 2.5
    #: Hosts' access links (servers and clients).
    access_mbps: float = 1000.0
    server_delay_ms: float = 1.0
    clients: int = 100
    servers: int = 20
    #: Clients' round-trip times are spread evenly over [rtt_min_ms, rtt_max_ms].
    rtt_min_ms: float = 10.0
    rtt_max_ms: float = 150.0
    #: The bottleneck buffer, in milliseconds of the link (packets of packet_bytes).
    buffer_ms: float = 60.0
    #: The AQMs' target queueing delay (Adaptive RED's; PI's q_ref, REM's b*, the marker's K).
    target_delay_ms: float = 5.0
    #: Data packets on the wire: MSS + 40 B of headers.
    packet_bytes: int = 1500
    initial_window: int = 2
    cc: Literal["reno", "newreno", "sack"] = "newreno"
    profile: str = "rfc"
    #: The testbed experiment's profile (None: ``profile``); the paper's testbed ran Linux.
    testbed_profile: str | None = None
    #: What an ECN-Echo does at a one-segment window (``tcp.ecn_one_segment``; None: the
    #: profile's own rule, RFC 3168 §6.1.2's under ``rfc``).
    ecn_one_segment: Literal["rfc3168", "ns2", "linux"] | None = None
    #: The RTO before the first RTT sample (SYN, SYN-ACK): RFC 2988's 3 s, in force in 2005.
    initial_rto_s: float = 3.0
    red_gentle: bool = False
    rem_gamma: float = 0.001
    rem_phi: float = 1.001
    rem_alpha: float = 0.1
    rem_update_ms: float = 2.0
    pi_w_hz: float = 160.0
    #: PI's design N^- (None: the connections open at once, by Little's law).
    pi_design_flows: float | None = None
    duration_s: float = 100.0
    warmup_s: float = 20.0
    #: The uncongested reference: the main experiment's sessions (the same bytes per second)
    #: over a DropTail bottleneck of this rate, endpoints without ECN.
    uncongested_mbps: float = 1000.0
    deployment_shares: tuple[float, ...] = (0.05, 0.5, 0.95)
    deployment_load_percent: float = 98.0
    deployment_aqms: tuple[Aqm, ...] = ("RED", "RED*")
    #: The heavier-tailed mix: bounded Pareto object sizes.
    mix_shape: float = 0.85
    mix_min_bytes: float = 346.0
    mix_max_bytes: float = 10_000_000.0
    mix_aqms: tuple[Aqm, ...] = AQMS
    mix_endpoints: tuple[Endpoint, ...] = ("none", "ECN", "ECN+")
    testbed_mbps: float = 10.0
    #: The testbed's demand: what the workload offers a link of testbed_reference_mbps.
    testbed_demand_mbps: float = 15.0
    testbed_aqm: Aqm = "RED*"
    testbed_endpoints: tuple[Endpoint, ...] = tuple(ENDPOINTS)
    model_links_mbps: tuple[float, ...] = (100.0, 155.0, 622.0)
    model_utilizations: tuple[float, ...] = (0.3, 0.5, 0.7, 0.8, 0.9)
    model_delay_ms: float = 5.0
    model_measure: Literal["queue", "system", "packet"] = "queue"
    model_duration_s: float = 40.0
    model_warmup_s: float = 10.0
    model_sample_ms: float = 1.0
    model_buffer_ms: float = 1000.0

    def check(self) -> None:
        if self.clients < 1 or self.servers < 1:
            raise ValueError(
                f"clients and servers must be >= 1, got {self.clients}, {self.servers}"
            )
        fixed = 2.0 * (self.server_delay_ms + self.bottleneck_delay_ms)
        if not fixed <= self.rtt_min_ms <= self.rtt_max_ms:
            raise ValueError(
                f"need 2 (server_delay_ms + bottleneck_delay_ms) = {fixed:g} <= rtt_min_ms "
                f"<= rtt_max_ms, got {self.rtt_min_ms:g}, {self.rtt_max_ms:g}"
            )
        if not 0 <= self.warmup_s < self.duration_s:
            raise ValueError("need 0 <= warmup_s < duration_s")
        if not 0 <= self.model_warmup_s < self.model_duration_s:
            raise ValueError("need 0 <= model_warmup_s < model_duration_s")
        if any(not 0 < s < 1 for s in self.deployment_shares):
            raise ValueError(f"deployment_shares must be in (0, 1), got {self.deployment_shares}")
        if any(not 0 < u < 1 for u in self.model_utilizations):
            raise ValueError(
                f"model_utilizations must be in (0, 1) (the model needs a stable queue), got "
                f"{self.model_utilizations}"
            )
        if any(x <= 0 for x in (*self.loads_percent, self.deployment_load_percent)):
            raise ValueError("loads must be > 0 percent")
        if self.packet_bytes <= HEADER_BYTES:
            raise ValueError(f"packet_bytes must exceed {HEADER_BYTES}, got {self.packet_bytes}")
        if not self.mix_max_bytes > self.mix_min_bytes > 0:
            raise ValueError("need 0 < mix_min_bytes < mix_max_bytes")
        if self.pi_design_flows is not None and not self.pi_design_flows > 0:
            raise ValueError(f"pi_design_flows must be > 0, got {self.pi_design_flows}")


# ---------------------------------------------------------------------------
# The workload and the derived design inputs
# ---------------------------------------------------------------------------


def _mss(p: EcnplusParams) -> int:
    return p.packet_bytes - HEADER_BYTES


def _packets_per_s(p: EcnplusParams, mbps: float) -> float:
    return mbps * 1e6 / (8.0 * p.packet_bytes)


def _target_packets(p: EcnplusParams, mbps: float) -> float:
    return p.target_delay_ms / 1e3 * _packets_per_s(p, mbps)


def _buffer_packets(p: EcnplusParams, mbps: float, ms: float) -> int:
    return max(1, round(ms / 1e3 * _packets_per_s(p, mbps)))


def _client_rtts_ms(p: EcnplusParams) -> list[float]:
    n = p.clients
    return [p.rtt_min_ms + (p.rtt_max_ms - p.rtt_min_ms) * i / max(n - 1, 1) for i in range(n)]


def _object_size(p: EcnplusParams, mix: bool) -> Distribution:
    if mix:
        return Distribution(
            {
                "type": "bounded_pareto",
                "shape": p.mix_shape,
                "min": p.mix_min_bytes,
                "max": p.mix_max_bytes,
            }
        )
    return workload_defaults("websessions")["object_size"]


def _rcv_window() -> Distribution:
    return workload_defaults("websessions")["rcv_window"]


def pi_design_flows(p: EcnplusParams, mbps: float, load_percent: float, mix: bool = False) -> float:
    """PI's N^-: the connections open at once at this load, by Little's law.

    Objects per second ``lambda = load C / (8 E[object on the wire])``; each
    connection lasts about ``2 + E[bursts per flow]`` round trips (handshake,
    request, one round trip per slow-start burst; ``ecnsim.models``) of the
    mean RTT.
    """
    from ecnsim import models

    if p.pi_design_flows is not None:
        return p.pi_design_flows
    size = _object_size(p, mix)
    mean = size.mean
    assert mean is not None
    wire = mean * p.packet_bytes / _mss(p)
    rate = load_percent / 100.0 * mbps * 1e6 / (8.0 * wire)
    bursts = models.burst_sizes(
        size, rcv_window=_rcv_window(), iw=p.initial_window, mss=_mss(p)
    ).bursts_per_flow
    mean_rtt = float(np.mean(_client_rtts_ms(p))) / 1e3
    return rate * (2.0 + bursts) * mean_rtt


def _queue(p: EcnplusParams, aqm: str, mbps: float, load: float, mix: bool) -> dict[str, Any]:
    limit = _buffer_packets(p, mbps, p.buffer_ms)
    target = _target_packets(p, mbps)
    if aqm in ("RED", "RED*"):
        # FGS01 §5: thresholds and weight from the link and a target delay; max_p adapted.
        return {
            "type": "red",
            "limit_packets": limit,
            "mean_pktsize": p.packet_bytes,
            "adaptive": "floyd",
            "min_th": "auto",
            "max_th": "auto",
            "target_delay": f"{p.target_delay_ms:g}ms",
            "w_q": "auto",
            "gentle": p.red_gentle,
            # RFC 3168 §7: drop above max_th (RED); RED*: mark ECT packets there too (Linux).
            "ecn": "rfc3168" if aqm == "RED" else "mark_above_max",
        }
    if aqm == "REM":
        return {
            "type": "rem",
            "limit_packets": limit,
            "mean_pktsize": p.packet_bytes,
            "gamma": p.rem_gamma,
            "phi": p.rem_phi,
            "alpha": p.rem_alpha,
            "b_ref": target,
            "update_interval": f"{p.rem_update_ms:g}ms",
            "ecn": True,
            "non_ect": "drop",
        }
    if aqm == "PI":
        rtt = p.rtt_max_ms + p.target_delay_ms
        return {
            "type": "pi",
            "limit_packets": limit,
            "mean_pktsize": p.packet_bytes,
            "a": "auto",
            "b": "auto",
            "design_flows": pi_design_flows(p, mbps, load, mix),
            "design_rtt": f"{rtt:g}ms",
            "w": p.pi_w_hz,
            "qref": target,
            "ecn": True,
            "non_ect": "drop",
        }
    if aqm == "threshold":
        return {"type": "threshold", "limit_packets": limit, "k": target, "non_ect": "drop"}
    raise ValueError(f"unknown AQM {aqm!r}; AQMs: {', '.join(AQMS)}")


def _deployment_clients(p: EcnplusParams, share: float) -> list[int]:
    """The ECN-capable clients: ``round(share n)`` of them, spread evenly over the RTT range."""
    n = p.clients
    k = min(n, max(1, round(share * n)))
    return sorted({min(n - 1, math.floor((j + 0.5) * n / k)) for j in range(k)})


def web_scenario(
    p: EcnplusParams,
    *,
    name: str,
    mbps: float,
    load_percent: float,
    queue: dict[str, Any],
    endpoint: Endpoint,
    duration_s: float,
    warmup_s: float,
    mix: bool = False,
    ecn_clients: Sequence[int] | None = None,
    sample_ms: float | None = None,
    profile: str | None = None,
) -> dict[str, Any]:
    """Servers s<i> -- r2 ==bottleneck== r1 -- clients c<i>, web sessions from clients to servers.

    The bottleneck (``links[0]``, r2 -> r1) carries the responses. With
    ``ecn_clients`` (indices), those clients are ECN-capable hosts and the
    others are not; every server then runs ``endpoint``.
    """
    ecn, synack = ENDPOINTS[endpoint]
    nodes: list[dict[str, Any]] = [
        {"name": "r1", "kind": "router"},
        {"name": "r2", "kind": "router"},
    ]
    links: list[dict[str, Any]] = [
        {
            "a": "r2",
            "b": "r1",
            "rate": f"{mbps:g}Mbps",
            "delay": f"{p.bottleneck_delay_ms:g}ms",
            "queue": queue,
        }
    ]
    big = {"type": "droptail", "limit_packets": 10_000}
    for i in range(p.servers):
        node: dict[str, Any] = {"name": f"s{i}", "kind": "host"}
        if ecn_clients is not None:
            node["ecn"] = "request"
        nodes.append(node)
        links.append(
            {
                "a": f"s{i}",
                "b": "r2",
                "rate": f"{p.access_mbps:g}Mbps",
                "delay": f"{p.server_delay_ms:g}ms",
                "queue": big,
            }
        )
    capable = set(ecn_clients or ())
    for i, rtt in enumerate(_client_rtts_ms(p)):
        # RTT = 2 (server delay + bottleneck delay + client delay).
        d_us = round((rtt / 2 - p.server_delay_ms - p.bottleneck_delay_ms) * 1000)
        node = {"name": f"c{i}", "kind": "host"}
        if ecn_clients is not None:
            node["ecn"] = "request" if i in capable else "off"
        nodes.append(node)
        links.append(
            {
                "a": f"c{i}",
                "b": "r1",
                "rate": f"{p.access_mbps:g}Mbps",
                "delay": f"{d_us}us",
                "queue": big,
            }
        )
    model: dict[str, Any] = {
        "type": "websessions",
        "offered_load": {"link": 0, "percent": load_percent},
    }
    if mix:
        model["object_size"] = _object_size(p, True).spec
    simulation: dict[str, Any] = {
        "duration": f"{duration_s:g}s",
        "warmup": f"{warmup_s:g}s",
        "seed": 1,
        "profile": profile if profile is not None else p.profile,
    }
    if sample_ms is not None:
        # The bottleneck's queues only: a fine series of every access link would be large.
        simulation["sample_interval"] = f"{sample_ms:g}ms"
        simulation["sample_flows"] = []
        simulation["sample_queues"] = [0]
    tcp: dict[str, Any] = {
        "cc": p.cc,
        "mss": _mss(p),
        "header_bytes": HEADER_BYTES,
        "initial_window": p.initial_window,
        "initial_rto": f"{p.initial_rto_s:g}s",
        "ecn": ecn,
        "ecn_synack": synack,
    }
    if p.ecn_one_segment is not None:
        tcp["ecn_one_segment"] = p.ecn_one_segment
    return {
        "name": name,
        "simulation": simulation,
        "tcp": tcp,
        "nodes": nodes,
        "links": links,
        "apps": [
            {
                "name": "web",
                "clients": [f"c{i}" for i in range(p.clients)],
                "servers": [f"s{i}" for i in range(p.servers)],
                "model": model,
            }
        ],
    }


# ---------------------------------------------------------------------------
# Per-run metrics (in the worker)
# ---------------------------------------------------------------------------


def _km_at(km: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """A Kaplan-Meier CDF (a step function) at the grid's times."""
    x = km["x"].to_numpy(dtype=float)
    cdf = km["cdf"].to_numpy(dtype=float)
    i = np.searchsorted(x, grid, side="right") - 1
    return np.where(i >= 0, cdf[np.clip(i, 0, None)] if len(cdf) else 0.0, 0.0)


def _delivered_bytes(results: Any) -> float:
    """Payload the clients received over [warm-up, end] (warm-up adjusted by the core)."""
    return float(results.apps["reverse_bytes_delivered"].sum())


def _object_metrics(obj: pd.DataFrame) -> dict[str, float]:
    """Response-time summaries of a set of object records (unfinished ones counted)."""
    st = obj["state"].to_numpy(dtype=object)
    done = st == "completed"
    rt = obj["response_time_s"].to_numpy(dtype=float)
    n = len(obj)
    out: dict[str, float] = {
        "objects": float(n),
        "completed": float(done.sum()),
        "in_progress": float((st == "in_progress").sum()),
        "failed": float((st == "failed").sum()),
        "unfinished_share": float((~done).sum() / n) if n else math.nan,
        "mean_response_time_s": float(rt[done].mean()) if done.any() else math.nan,
    }
    km = analysis.kaplan_meier(rt, done, never=st == "failed")
    for q in (0.5, 0.9, 0.99):
        cdf = km["cdf"].to_numpy()
        i = int(np.searchsorted(cdf, q - 1e-12, side="left"))
        out[f"p{round(q * 100)}_response_time_s"] = (
            float(km["x"].to_numpy()[i]) if i < len(cdf) else math.nan
        )
    syn = obj["syn_retransmits"].to_numpy(dtype=float)
    synack = obj["synack_retransmits"].to_numpy(dtype=float)
    out["syn_retransmits_per_1000"] = 1000.0 * float(syn.sum()) / n if n else math.nan
    out["synack_retransmits_per_1000"] = 1000.0 * float(synack.sum()) / n if n else math.nan
    out["handshake_loss_share"] = float(((syn + synack) > 0).sum() / n) if n else math.nan
    ecn = obj["ecn_negotiated"].to_numpy(dtype=float)
    out["ecn_negotiated_share"] = float(ecn.mean()) if n else math.nan
    return out


def _derive_web(results: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    warmup, end = float(context["warmup_s"]), float(context["end_s"])
    span = end - warmup
    capacity = float(context["capacity_bps"])
    rec = results.table("records").to_pandas()
    obj = rec[rec["kind"] == "object"]
    # The objects requested after the warm-up: their response times, finished or not.
    started = obj[obj["start_s"] >= warmup]
    q = results.queues.iloc[0]
    steady = analysis.steady_state(obj, warmup_s=warmup)
    metrics: dict[str, Any] = {
        **_object_metrics(started),
        "normalized_throughput": _delivered_bytes(results) * 8.0 / (capacity * span),
        "utilization": float(q["utilization"]),
        "queue_packets": float(q["avg_packets"]),
        "queue_delay_ms": float(q["avg_bytes"]) * 8.0 / float(q["rate_bps"]) * 1e3,
        "drops_per_s": float(q["drops"]) / span,
        "marks_per_s": float(q["marks"]) / span,
        "overflow_drops_per_s": float(q["drops_overflow"]) / span,
        "steady": 1.0 if steady["steady"] else 0.0,
        "backlog_growth": float(steady["growth"]),
        "backlog_first": float(steady["window_means"][0]) if steady["window_means"] else math.nan,
        "backlog_last": float(steady["window_means"][-1]) if steady["window_means"] else math.nan,
    }
    groups: dict[str, pd.DataFrame] = {"all": started}
    ecn_clients = context.get("ecn_clients")
    if ecn_clients is not None:
        capable = started["client"].isin(list(ecn_clients))
        groups["ECN clients"] = started[capable]
        groups["non-ECN clients"] = started[~capable]
    group_rows = []
    cdf_rows = []
    for name, g in groups.items():
        group_rows.append({"group": name, **_object_metrics(g)})
        st = g["state"].to_numpy(dtype=object)
        km = analysis.kaplan_meier(
            g["response_time_s"].to_numpy(dtype=float), st == "completed", never=st == "failed"
        )
        cdf = _km_at(km, GRID_S)
        cdf_rows.append(pd.DataFrame({"group": name, "x_s": GRID_S, "cdf": cdf, "ccdf": 1.0 - cdf}))
    backlog = analysis.open_backlog(obj, points=200)
    return {
        "metrics": pd.DataFrame([metrics]),
        "groups": pd.DataFrame(group_rows),
        "cdf": pd.concat(cdf_rows, ignore_index=True),
        "backlog": backlog,
    }


def _derive_model(results: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    warmup = float(context["warmup_s"])
    d = float(context["delay_s"])
    queues = results.queues
    qs = results.table("queue_series").to_pandas()
    q = queues.iloc[0]
    delays = np.array([d])
    p = analysis.queueing_delay_exceeds(qs, queues, 0, delays, warmup_s=warmup)
    metrics = {
        "utilization": float(q["utilization"]),
        "p_exceed": float(np.asarray(p)[0]),
        "queue_delay_ms": float(q["avg_bytes"]) * 8.0 / float(q["rate_bps"]) * 1e3,
        "drops": float(q["drops"]),
        "samples": float((qs["queue_id"] == 0).sum()),
    }
    return {"metrics": pd.DataFrame([metrics])}


def derive(
    results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
) -> dict[str, pd.DataFrame]:
    """One run's metrics: the model experiment's queueing delays, or the web metrics."""
    if context["experiment"] == "model":
        return _derive_model(results, context)
    return _derive_web(results, context)


# ---------------------------------------------------------------------------
# The paper's findings and the readings they depend on (issue 31)
# ---------------------------------------------------------------------------

#: k1c: "close to the uncongested case", ours: a median at most this many times the reference's.
CLOSE = 1.25
#: k2b: "by much more", ours: an improvement more than this many times the other's.
MUCH_MORE = 2.0

#: The findings' response-time metric: the median over every object requested after the
#: warm-up (Kaplan-Meier: unfinished objects counted, where the mean of completed ones is
#: only a lower bound); the paper compares response-time CDFs.
RESPONSE = "p50_response_time_s"


def _main(aqm: str, endpoint: str, load: float, experiment: str = "main") -> dict[str, Any]:
    return {"experiment": experiment, "aqm": aqm, "endpoint": endpoint, "load": load}


def ecnplus_findings(p: EcnplusParams) -> list[Finding]:
    """The paper's findings (STUDIES.md §5, k1-k5) as cells over the grid: directions only."""
    loads = p.loads_percent
    over = [x for x in loads if x > 100.0]
    return [
        Finding(
            "k1a",
            "RED* with ECN but without ECN+ makes response times worse than no ECN at 90 % load",
            "simulations, Fig. 3 (STUDIES.md §5, k1)",
            lambda p: [
                Cell(RESPONSE, _main("RED*", "ECN", x), _main("RED*", "none", x))
                for x in loads
                if x <= 90.0
            ],
            note="Median response time (every object requested after the warm-up).",
        ),
        Finding(
            "k1b",
            "With ECN+, RED*'s response times move toward the uncongested case: below no "
            "ECN's and ECN's",
            "simulations, Fig. 3 (STUDIES.md §5, k1)",
            lambda p: [
                Cell(RESPONSE, _main("RED*", "ECN+", x), _main("RED*", other, x), higher=False)
                for x in loads
                for other in ("none", "ECN")
            ],
            note="The direction only; k1c judges the distance to the uncongested reference.",
        ),
        Finding(
            "k1c",
            "With ECN+, RED*'s response times come close to the uncongested case: the median "
            "within 25 % of the same sessions' over the uncongested link, at 90 % load",
            "simulations, Fig. 3 (STUDIES.md §5, k1)",
            lambda p: [
                Cell(
                    RESPONSE,
                    _main("RED*", "ECN+", x),
                    {
                        "experiment": "uncongested",
                        "aqm": UNCONGESTED,
                        "endpoint": "none",
                        "load": x,
                    },
                    higher=False,
                    factor=CLOSE,
                )
                for x in loads
                if x <= 90.0
            ],
            note="'Close' is ours: a ratio bound, median at most 1.25 x the uncongested "
            "reference's (same load, paired by seed), set before any full run was seen; at 90 % "
            "load as k1a (under persistent overload nothing is close to an idle link).",
        ),
        Finding(
            "k2",
            "ECN+ improves on ECN (lower response times) for PI, RED, REM and RED*",
            "simulations (STUDIES.md §5, k2)",
            lambda p: [
                Cell(RESPONSE, _main(a, "ECN+", x), _main(a, "ECN", x), higher=False)
                for a in ("PI", "RED", "REM", "RED*")
                for x in loads
            ],
            quantifier=MOST,
            quantifier_text="more than half of the cells ('by a little' for PI, RED, REM)",
        ),
        Finding(
            "k2b",
            "ECN+'s improvement on ECN is much larger for RED* than for PI, RED and REM: more "
            "than twice as large, at every load",
            "simulations (STUDIES.md §5, k2)",
            lambda p: [
                Cell(
                    RESPONSE,
                    Delta(_main("RED*", "ECN", x), _main("RED*", "ECN+", x)),
                    Delta(_main(a, "ECN", x), _main(a, "ECN+", x)),
                    factor=MUCH_MORE,
                )
                for a in ("PI", "RED", "REM")
                for x in loads
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="A comparison of changes: per seed, the median response time under ECN minus "
            "under ECN+ for RED* against twice the same improvement for the other AQM ('by much "
            "more' read as more than twice: ours).",
        ),
        Finding(
            "k2c",
            "ECN+'s improvement on ECN is largest under persistent congestion: larger at each "
            "load above 100 % than at each load below",
            "simulations (STUDIES.md §5, k2)",
            lambda p: [
                Cell(
                    RESPONSE,
                    Delta(_main(a, "ECN", hi), _main(a, "ECN+", hi)),
                    Delta(_main(a, "ECN", lo), _main(a, "ECN+", lo)),
                )
                for a in ("PI", "RED", "REM", "RED*")
                for hi in over
                for lo in loads
                if lo <= 100.0
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="A comparison of changes: per seed and AQM, ECN's median minus ECN+'s at the "
            "overload against the same at the lighter load.",
        ),
        Finding(
            "k3",
            "Under persistent overload PI keeps a higher normalized throughput than the "
            "threshold marker, in the main mix and in the heavier-tailed one",
            "simulations (STUDIES.md §5, k3)",
            lambda p: [
                Cell("throughput", _main("PI", e, x, exp), _main("threshold", e, x, exp))
                for exp, ends in (("main", p.endpoints), ("mixes", p.mix_endpoints))
                for e in ends
                for x in over
            ],
        ),
        Finding(
            "k4",
            "On the testbed, normalized throughput rises and the mean response time falls "
            "from no ECN to ECN to ECN+",
            "testbed (STUDIES.md §5, k4)",
            lambda p: [
                c
                for lo_e, hi_e in (("none", "ECN"), ("ECN", "ECN+"))
                for c in (
                    Cell(
                        "throughput",
                        {"experiment": "testbed", "endpoint": hi_e},
                        {"experiment": "testbed", "endpoint": lo_e},
                    ),
                    Cell(
                        "mean_response_time_s",
                        {"experiment": "testbed", "endpoint": hi_e},
                        {"experiment": "testbed", "endpoint": lo_e},
                        higher=False,
                    ),
                )
            ],
        ),
        Finding(
            "k5",
            "P(queueing delay > 5 ms) is smaller on faster links at the same utilization",
            "analytic model (STUDIES.md §5, k5)",
            lambda p: [
                Cell(
                    "p_exceed",
                    {"experiment": "model", "link_mbps": fast, "offered_utilization": u},
                    {"experiment": "model", "link_mbps": slow, "offered_utilization": u},
                    higher=False,
                )
                for slow, fast in zip(
                    sorted(p.model_links_mbps), sorted(p.model_links_mbps)[1:], strict=False
                )
                for u in p.model_utilizations
            ],
            quantifier=MOST,
            quantifier_text="more than half of the cells (at light load both are near 0)",
            note="FIFO simulation beside the model; the model's own curve is exact, so the "
            "finding is judged on the simulated points.",
        ),
    ]


_ONE_SEGMENT = {
    "rfc3168": "RFC 3168 §6.1.2: with cwnd at one segment the sender 'MUST reset the "
    "retransmit timer' and sends again only when it expires",
    "ns2": "the paper's simulations ran ns-2 (STUDIES.md §5), whose rule is cwnd_ = 0 and "
    "a doubled timer backoff from the second echo in a row (docs/models/tcp.md)",
    "linux": "the paper's testbed ran Linux (STUDIES.md §5): cwnd never below one segment "
    "and no timer wait (docs/models/tcp.md)",
}


#: Each profile's own one-segment rule (what ``ecn_one_segment = None`` runs).
_PROFILE_RULE = {"rfc": "rfc3168", "ns2-2001": "ns2", "linux": "linux", "linux-2.4": "linux"}


def ecnplus_readings(p: EcnplusParams) -> list[Reading]:
    """The choices of the setup that can change a finding, each with the source's evidence."""
    # None runs the profile's own rule (crates/ecnsim-core/src/profile.rs).
    rule = p.ecn_one_segment or _PROFILE_RULE.get(p.profile, "rfc3168")
    name = rule if p.ecn_one_segment else f"{rule} (the {p.profile} profile's rule)"
    one_segment = (
        Alternative(name, _ONE_SEGMENT[rule], settings={"ecn_one_segment": p.ecn_one_segment}),
        *(
            Alternative(k, v, settings={"ecn_one_segment": k})
            for k, v in _ONE_SEGMENT.items()
            if k != rule
        ),
    )
    sim_other = "ns2-2001" if p.profile != "ns2-2001" else "rfc"
    testbed = p.testbed_profile or p.profile
    testbed_other = "linux-2.4" if testbed != "linux-2.4" else "linux"
    return [
        Reading(
            "ecn_one_segment",
            "What an ECN-Echo does at a one-segment window: RFC 3168's timer wait, ns-2's, or "
            "Linux's?",
            one_segment,
        ),
        Reading(
            "profile",
            "The simulations' TCP details: the standards' (rfc), or ns-2's of the time?",
            (
                Alternative(
                    p.profile,
                    "STUDIES.md §5 defines the endpoints by the standards (ECN: RFC 3168; "
                    "ECN+: RFC 5562's form of it), whatever simulator ran them",
                    settings={"profile": p.profile},
                ),
                Alternative(
                    sim_other,
                    "STUDIES.md §5: 'The paper's simulations ran ns-2'",
                    settings={"profile": sim_other},
                ),
            ),
        ),
        Reading(
            "testbed_profile",
            "The testbed experiment's endpoints: the simulations' profile, or a Linux one?",
            (
                Alternative(
                    testbed,
                    "the same endpoints as the simulations, so the testbed differs by its "
                    "link and load only",
                    settings={"testbed_profile": p.testbed_profile},
                ),
                Alternative(
                    testbed_other,
                    "STUDIES.md §5: 'its testbed ran Linux' (a 2.4/2.6 kernel of 2005)",
                    settings={"testbed_profile": testbed_other},
                ),
            ),
        ),
        Reading(
            "throughput",
            "Normalized throughput: payload delivered over capacity, or the bottleneck's "
            "utilization?",
            (
                Alternative(
                    "payload / capacity",
                    "STUDIES.md §5: 'normalized throughput (delivered / capacity)'",
                    metrics={"throughput": "normalized_throughput"},
                ),
                Alternative(
                    "utilization",
                    "payload cannot exceed 1460/1500 of capacity, where the paper's table "
                    "reads like the link's busy share (issue 31): bytes on the wire / capacity",
                    metrics={"throughput": "utilization"},
                ),
            ),
        ),
    ]


# ---------------------------------------------------------------------------
# The study
# ---------------------------------------------------------------------------

_TITLES = {
    "main": "AQMs x endpoints",
    "uncongested": "Uncongested reference",
    "deployment": "Incremental deployment",
    "mixes": "Heavier-tailed mix",
    "testbed": "Testbed",
    "model": "M[X]/M/1 model and FIFO simulation",
}

#: (metric, title, unit, digits) of the web experiments' tables.
_WEB_TABLES = (
    ("mean_response_time_s", "Mean response time of completed objects", "s", 4),
    ("p50_response_time_s", "Median response time (unfinished objects counted)", "s", 4),
    ("p90_response_time_s", "90th percentile of the response time", "s", 4),
    ("p99_response_time_s", "99th percentile of the response time", "s", 4),
    (
        "normalized_throughput",
        "Normalized throughput, payload: payload delivered / capacity",
        "",
        4,
    ),
    ("unfinished_share", "Objects unfinished at the end (in progress or failed)", "share", 3),
    (
        "handshake_loss_share",
        "Objects whose handshake timed out (SYN, SYN-ACK or third ACK lost)",
        "share",
        3,
    ),
    (
        "synack_retransmits_per_1000",
        "SYN-ACKs resent on the server's timer (lost SYN-ACKs or third ACKs)",
        "per 1000 objects",
        4,
    ),
    ("queue_delay_ms", "Mean queueing delay at the bottleneck", "ms", 4),
    ("drops_per_s", "Drops at the bottleneck", "packets/s", 4),
    ("marks_per_s", "Marks at the bottleneck", "packets/s", 4),
    (
        "utilization",
        "Normalized throughput, utilization: bytes on the wire / capacity (the bottleneck's busy "
        "time)",
        "",
        4,
    ),
    ("steady", "Runs with a steady backlog of open connections", "share of seeds", 3),
    ("backlog_growth", "Open connections, last tenth of the run / first tenth", "ratio", 3),
)

_UNFINISHED_NOTE = (
    "Response times count every object requested after the warm-up: objects still in "
    "progress at the end are censored at the time they had waited, failed ones never "
    "complete (Kaplan-Meier). The mean is over completed objects only, so it is a lower "
    "bound where objects are unfinished."
)


def _label_load(v: Any) -> str:
    return f"{float(v):g} %"


class EcnplusStudy(Study):
    name = "ecnplus"
    title = "ECN on SYN-ACKs (ECN+, RFC 5562) with web traffic, five AQMs"
    source = (
        "A. Kuzmanovic, 'The Power of Explicit Congestion Notification', ACM SIGCOMM 2005 "
        "(ns-2, Linux testbed); RFC 5562. STUDIES.md §5."
    )
    Params = EcnplusParams
    # Measured 2026-12-02 (`ecnsim study run ecnplus --jobs 2` from an empty store):
    # PGO wheels of main bede5e1 (shared machine, top priority) and of main 2172e3c
    # (idle); each value covers the larger of the two, then scaled by the render's
    # estimated wall time after branch render2 over before (its CPU measured before and
    # after on copies of the idle store; docs/performance.md, "Study run times").
    render_cost_s: ClassVar[float] = 16.0
    run_cost_scale: ClassVar[float] = 1.4
    plan_cost_s_per_run: ClassVar[float] = 0.011
    variants: ClassVar[Mapping[str, Mapping[str, Any]]] = {"paper": {}}
    derive_version = 1
    # The share of objects that negotiated ECN was stored as `ecn_share`, the name of the
    # deployment experiment's axis (the share of ECN-capable clients).
    derived_renames: ClassVar[Mapping[str, str]] = {"ecn_share": "ecn_negotiated_share"}
    derive = staticmethod(derive)

    # -- parameters -------------------------------------------------------------------

    def quick(self, params: EcnplusParams) -> EcnplusParams:
        return dataclasses.replace(
            params,
            # One deployment point: its tables group by an axis (ecn_share) of their own.
            experiments=("main", "deployment", "model"),
            deployment_aqms=("RED*",),
            deployment_shares=(0.5,),
            aqms=("RED*", "PI"),
            endpoints=("ECN", "ECN+"),
            duration_s=14.0,
            warmup_s=4.0,
            model_links_mbps=(100.0,),
            model_utilizations=(0.5, 0.8),
            model_duration_s=10.0,
            model_warmup_s=4.0,
            seeds=1,
        )

    def setup(self, p: EcnplusParams) -> list[tuple[str, str]]:
        rtts = _client_rtts_ms(p)
        mbps = p.bottleneck_mbps
        return [
            ("experiments", ", ".join(p.experiments)),
            (
                "topology",
                f"{p.servers} servers -- r2 == {mbps:g} Mb/s, {p.bottleneck_delay_ms:g} ms == "
                f"r1 -- {p.clients} clients; responses cross r2 -> r1 (the congested direction)",
            ),
            (
                "round-trip times",
                f"{rtts[0]:g} to {rtts[-1]:g} ms, evenly spread over the clients "
                f"(servers {p.server_delay_ms:g} ms from r2, access links {p.access_mbps:g} Mb/s)",
            ),
            (
                "web workload",
                "Feldmann et al. 1999 web sessions (ecnsim's websessions defaults): Poisson "
                "sessions of pages, Pareto inter-page times, one connection per object "
                "(HTTP/1.0); object sizes bounded Pareto 0.9 on [760 B, 1 MB] (mean 7.2 KB, 78 % "
                "of the bytes in the largest 15 %); client receive windows 8 / 16 / 64 KB w.p. "
                "35 / 20 / 45 %",
            ),
            ("offered load", ", ".join(f"{x:g} %" for x in p.loads_percent) + " of the bottleneck"),
            (
                "TCP",
                f"{p.cc}, IW {p.initial_window}, MSS {_mss(p)} B ({p.packet_bytes} B packets), "
                f"initial RTO {p.initial_rto_s:g} s, profile {p.profile} (testbed: "
                f"{p.testbed_profile or p.profile}), ECN-Echo at one segment: "
                + (p.ecn_one_segment or "the profile's rule"),
            ),
            (
                "endpoints",
                "none (no ECN); ECN (RFC 3168: SYN-ACK not ECT); ECN+ (ECT SYN-ACK, the "
                "client proceeds, the server starts with IW 1); RFC5562 (ECT SYN-ACK; a "
                "marked one is answered with a new non-ECT SYN-ACK, then IW 1)",
            ),
            (
                "AQMs",
                f"RED and RED* (Adaptive RED, target {p.target_delay_ms:g} ms: min_th "
                f"{max(5.0, _target_packets(p, mbps) / 2):.1f}, max_th "
                f"{3 * max(5.0, _target_packets(p, mbps) / 2):.1f} packets at {mbps:g} Mb/s; "
                "RED drops above max_th, RED* marks ECT packets there); REM (b* = "
                f"{_target_packets(p, mbps):.1f} packets, gamma {p.rem_gamma:g}, phi "
                f"{p.rem_phi:g}, alpha {p.rem_alpha:g}, {p.rem_update_ms:g} ms); PI (q_ref "
                f"{_target_packets(p, mbps):.1f} packets, {p.pi_w_hz:g} Hz, gains by "
                "Hollot et al.'s design rule); threshold marker (K = "
                f"{_target_packets(p, mbps):.1f} packets)",
            ),
            (
                "buffer",
                f"{p.buffer_ms:g} ms of the link ({_buffer_packets(p, mbps, p.buffer_ms)} packets "
                f"at {mbps:g} Mb/s)",
            ),
            (
                "simulated",
                f"{p.duration_s:g} s, objects requested in the first {p.warmup_s:g} s left out",
            ),
            (
                "incremental deployment",
                f"every server ECN+, {', '.join(f'{s:.0%}' for s in p.deployment_shares)} of the "
                f"clients ECN-capable, {p.deployment_load_percent:g} % load, AQMs "
                f"{', '.join(p.deployment_aqms)}",
            ),
            (
                "heavier-tailed mix",
                f"object sizes bounded Pareto {p.mix_shape:g} on [{p.mix_min_bytes:g} B, "
                f"{p.mix_max_bytes:g} B] (mean {_object_size(p, True).mean:.0f} B, "
                f"{_object_size(p, True).top_share(0.15):.0%} of the bytes in the largest 15 %); "
                f"AQMs {', '.join(p.mix_aqms)}; endpoints {', '.join(p.mix_endpoints)}",
            ),
            (
                "testbed",
                f"{p.testbed_mbps:g} Mb/s bottleneck, {p.testbed_aqm}, the web demand of "
                f"{p.testbed_demand_mbps:g} Mb/s (offered load "
                f"{100 * p.testbed_demand_mbps / p.testbed_mbps:g} %)",
            ),
            (
                "model",
                f"P(queueing delay > {p.model_delay_ms:g} ms) against utilization at "
                f"{', '.join(f'{r:g}' for r in p.model_links_mbps)} Mb/s: M[X]/M/1 "
                f"(ecnsim.models, measure {p.model_measure!r}) beside FIFO runs at utilizations "
                f"{', '.join(f'{u:g}' for u in p.model_utilizations)} ({p.model_duration_s:g} s, "
                f"first {p.model_warmup_s:g} s left out, queue sampled every "
                f"{p.model_sample_ms:g} ms, DropTail of {p.model_buffer_ms:g} ms)",
            ),
            ("seeds per point", str(p.seeds)),
        ]

    def choices(self, p: EcnplusParams) -> list[Choice]:
        n90 = pi_design_flows(p, p.bottleneck_mbps, p.loads_percent[0])
        return [
            Choice(
                "Round-trip times",
                f"{p.clients} clients whose RTTs are spread evenly from {p.rtt_min_ms:g} to "
                f"{p.rtt_max_ms:g} ms; sessions pick clients uniformly",
                "The source gives the range only; an even spread covers it without weighting "
                "any part of it.",
                "clients, rtt_min_ms, rtt_max_ms",
            ),
            Choice(
                "Number of servers",
                f"{p.servers}, each {p.server_delay_ms:g} ms from the router, 1 Gb/s",
                "Not given; enough that no server's access link is a second bottleneck.",
                "servers, server_delay_ms, access_mbps",
            ),
            Choice(
                "Buffer",
                f"{p.buffer_ms:g} ms of the bottleneck",
                "Not given; large enough that the AQM, not the buffer, sets the queue (Adaptive "
                "RED's forced region ends at 2 max_th), and scaled with the link.",
                "buffer_ms",
            ),
            Choice(
                "RED's gentle mode",
                "on" if p.red_gentle else "off",
                "STUDIES.md defines RED and RED* by what they do above max_th (drop, mark); "
                "with gentle_ the region above max_th is a ramp to 2 max_th. Linux's RED, RED*'s "
                "reference, has no gentle mode.",
                "red_gentle",
            ),
            Choice(
                "Adaptive RED",
                f"target delay {p.target_delay_ms:g} ms: min_th = max(5, target C / 2), "
                "max_th = 3 min_th, w_q = 1 - exp(-1/C), max_p adapted every 0.5 s in "
                "[0.01, 0.5] (FGS01 §5)",
                "Adaptive RED's recommendations; the other RED fields are the profile's.",
                "target_delay_ms",
            ),
            Choice(
                "REM",
                f"b* = the target delay's packets, gamma {p.rem_gamma:g}, phi {p.rem_phi:g}, "
                f"alpha {p.rem_alpha:g}, update every {p.rem_update_ms:g} ms, mean packet "
                f"{p.packet_bytes} B",
                "The REM paper's values (also ns-2's); its price counts packets per update "
                "interval against the link's own capacity, so the mismatch term follows the "
                "link; the target backlog is set to the same 5 ms as the other AQMs.",
                "rem_gamma, rem_phi, rem_alpha, rem_update_ms, target_delay_ms",
            ),
            Choice(
                "PI's gains",
                f'Hollot et al. 2001 §IV\'s rule (a = b = "auto") for the link, with R+ = '
                f"{p.rtt_max_ms + p.target_delay_ms:g} ms (the longest RTT plus the target delay) "
                f"and N- = the connections open at once (Little's law: objects per second x "
                f"(2 + bursts per flow) x mean RTT; {n90:.0f} at {p.loads_percent[0]:g} %), "
                f"{p.pi_w_hz:g} Hz",
                "The paper's example gains are for 15 Mb/s and 60 flows; at 100 Mb/s they react "
                "far too slowly. Most web connections are in slow start, not the congestion "
                "avoidance the design's TCP model describes, so N- is a parameter.",
                "pi_design_flows, pi_w_hz",
            ),
            Choice(
                "Threshold marker",
                "K = the target delay's packets; Not-ECT packets above K dropped",
                "The source gives no K; the same 5 ms as the other AQMs. Above K a "
                "non-ECN packet's congestion signal is a drop.",
                "target_delay_ms",
            ),
            Choice(
                "TCP",
                f"{p.cc}, initial RTO {p.initial_rto_s:g} s, profile {p.profile}",
                "The paper ran ns-2's FullTcp; RFC 2988's 3 s initial RTO (a lost SYN or SYN-ACK "
                "costs it) was the standard in 2005; RFC 6298's 1 s came in 2011.",
                "cc, initial_rto_s, profile",
            ),
            Choice(
                "Profile (the endpoints' defaults)",
                f"{p.profile} for the simulations, "
                f"{p.testbed_profile or p.profile} for the testbed experiment",
                "STUDIES.md §5: 'The paper's simulations ran ns-2; its testbed ran Linux.' "
                "Readings: 'rfc' (the standards' behaviour, the study's default), 'ns2-2001' "
                "(ns-2's own TCP of the early 2000s, the paper's simulator) and, for the "
                "testbed, 'linux' (today's Linux defaults; the paper's kernel was a 2.4/2.6 "
                "one). No default follows the published numbers; each is a --set away.",
                "profile, testbed_profile",
            ),
            Choice(
                "ECN-Echo at a one-segment window",
                "the profile's rule"
                if p.ecn_one_segment is None
                else f"{p.ecn_one_segment!r} for every connection",
                "RFC 3168 §6.1.2 ('rfc3168', the rfc profile's): with cwnd at one segment the "
                "sender 'MUST reset the retransmit timer' and sends again only when it "
                "expires. ns-2 ('ns2', the paper's simulator): cwnd_ = int(0.5) = 0 and, from "
                "the second echo in a row, a doubled timer backoff. Linux ('linux', the paper's "
                "testbed): cwnd never below one segment and no timer wait "
                "(docs/models/tcp.md). Under RED*'s persistent marking the rule decides how "
                "long a marked web connection waits, so it changes finding k1 (issue 31).",
                "ecn_one_segment",
            ),
            Choice(
                "Incremental deployment",
                f"AQMs {', '.join(p.deployment_aqms)}; the ECN-capable clients spread evenly over "
                "the RTT range",
                "The source does not name the AQM; RED (drops above max_th) and RED* (marks "
                "there) are where ECN and non-ECN clients are treated differently. Spreading "
                "the clients keeps RTT out of the comparison.",
                "deployment_aqms",
            ),
            Choice(
                "Heavier-tailed mix",
                f"bounded Pareto {p.mix_shape:g} on [{p.mix_min_bytes:g} B, "
                f"{p.mix_max_bytes:g} B]: the same 7.2 KB mean, "
                f"{_object_size(p, True).top_share(0.15):.0%} of the bytes in the largest 15 %",
                "'Long flows carry about 90 % of the bytes', with the same definition of long "
                "(the largest 15 %) and the same mean as the default mix.",
                "mix_shape, mix_min_bytes, mix_max_bytes",
            ),
            Choice(
                "Testbed demand",
                f"{p.testbed_demand_mbps:g} Mb/s of responses offered to the {p.testbed_mbps:g} "
                "Mb/s link",
                "'A workload that produces 15 Mb/s of demand when the bottleneck is 100 Mb/s': "
                "on an uncongested link the offered load is what is carried.",
                "testbed_demand_mbps",
            ),
            Choice(
                "Queueing delay in the model figure",
                f"measure {p.model_measure!r}: the time to send the packets waiting, as a time "
                f"average, sampled every {p.model_sample_ms:g} ms",
                "What ecnsim measures (analysis.queueing_delay_exceeds); docs/models/mx_m1.md "
                "gives the other readings.",
                "model_measure, model_sample_ms",
            ),
            Choice(
                "Unfinished objects",
                "counted: in progress = censored, failed = never complete (Kaplan-Meier); "
                "overloaded runs are flagged when their backlog of open connections grows",
                "Dropping them biases response times towards short ones exactly where the AQMs "
                "differ most.",
            ),
        ]

    # -- runs -------------------------------------------------------------------------

    def findings(self, p: EcnplusParams) -> list[Finding]:
        return ecnplus_findings(p)

    def readings(self, p: EcnplusParams) -> list[Reading]:
        return ecnplus_readings(p)

    def grid(self, p: EcnplusParams) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for exp in p.experiments:
            if exp == "main":
                out += [
                    {"experiment": exp, "aqm": a, "endpoint": e, "load": load}
                    for load in p.loads_percent
                    for a in p.aqms
                    for e in p.endpoints
                ]
            elif exp == "uncongested":
                out += [
                    {"experiment": exp, "aqm": UNCONGESTED, "endpoint": "none", "load": load}
                    for load in p.loads_percent
                ]
            elif exp == "deployment":
                out += [
                    {
                        "experiment": exp,
                        "aqm": a,
                        "ecn_share": s,
                        "load": p.deployment_load_percent,
                    }
                    for a in p.deployment_aqms
                    for s in p.deployment_shares
                ]
            elif exp == "mixes":
                out += [
                    {"experiment": exp, "aqm": a, "endpoint": e, "load": load}
                    for load in p.loads_percent
                    for a in p.mix_aqms
                    for e in p.mix_endpoints
                ]
            elif exp == "testbed":
                out += [
                    {
                        "experiment": exp,
                        "aqm": p.testbed_aqm,
                        "endpoint": e,
                        "load": 100.0 * p.testbed_demand_mbps / p.testbed_mbps,
                    }
                    for e in p.testbed_endpoints
                ]
            elif exp == "model":
                out += [
                    {"experiment": exp, "link_mbps": r, "offered_utilization": u}
                    for r in p.model_links_mbps
                    for u in p.model_utilizations
                ]
        return out

    def scenario(self, p: EcnplusParams, point: Mapping[str, Any]) -> dict[str, Any]:
        exp = str(point["experiment"])
        if exp == "model":
            mbps, u = float(point["link_mbps"]), float(point["offered_utilization"])
            queue = {
                "type": "droptail",
                "limit_packets": _buffer_packets(p, mbps, p.model_buffer_ms),
            }
            return web_scenario(
                p,
                name=f"ecnplus-model-{mbps:g}M-u{u:g}",
                mbps=mbps,
                load_percent=100.0 * u,
                queue=queue,
                endpoint="none",
                duration_s=p.model_duration_s,
                warmup_s=p.model_warmup_s,
                sample_ms=p.model_sample_ms,
            )
        if exp == "uncongested":
            # The main experiment's sessions: the same bytes per second, so a load of the
            # reference link scaled by the two rates.
            load = float(point["load"])
            mbps = p.uncongested_mbps
            return web_scenario(
                p,
                name=f"ecnplus-uncongested-{mbps:g}M-load{load:g}",
                mbps=mbps,
                load_percent=load * p.bottleneck_mbps / mbps,
                queue={
                    "type": "droptail",
                    "limit_packets": _buffer_packets(p, mbps, p.buffer_ms),
                },
                endpoint="none",
                duration_s=p.duration_s,
                warmup_s=p.warmup_s,
            )
        mbps = p.testbed_mbps if exp == "testbed" else p.bottleneck_mbps
        load = float(point["load"])
        aqm = str(point["aqm"])
        mix = exp == "mixes"
        queue = _queue(p, aqm, mbps, load, mix)
        if exp == "deployment":
            share = float(point["ecn_share"])
            return web_scenario(
                p,
                name=f"ecnplus-deployment-{aqm}-ecn{share:g}",
                mbps=mbps,
                load_percent=load,
                queue=queue,
                endpoint="ECN+",
                duration_s=p.duration_s,
                warmup_s=p.warmup_s,
                ecn_clients=_deployment_clients(p, share),
            )
        endpoint: Endpoint = point["endpoint"]
        return web_scenario(
            p,
            name=f"ecnplus-{exp}-{aqm}-{endpoint}-load{load:g}",
            mbps=mbps,
            load_percent=load,
            queue=queue,
            endpoint=endpoint,
            duration_s=p.duration_s,
            warmup_s=p.warmup_s,
            mix=mix,
            profile=p.testbed_profile if exp == "testbed" else None,
        )

    def job(self, p: EcnplusParams, point: Mapping[str, Any]) -> JobSpec:
        exp = str(point["experiment"])
        if exp == "model":
            context: dict[str, Any] = {
                "experiment": exp,
                "warmup_s": p.model_warmup_s,
                "end_s": p.model_duration_s,
                "delay_s": p.model_delay_ms / 1e3,
            }
            return JobSpec(context=context, keep_tables=("queues",))
        mbps = p.testbed_mbps if exp == "testbed" else p.bottleneck_mbps
        context = {
            "experiment": exp,
            "warmup_s": p.warmup_s,
            "end_s": p.duration_s,
            # The uncongested reference is normalized by the main bottleneck's capacity (its
            # sessions are the main experiment's), not by its own 1 Gb/s.
            "capacity_bps": mbps * 1e6,
        }
        if exp == "deployment":
            context["ecn_clients"] = [
                f"c{i}" for i in _deployment_clients(p, float(point["ecn_share"]))
            ]
        return JobSpec(context=context, keep_tables=("queues",))

    def estimate_seconds(self, p: EcnplusParams, point: Mapping[str, Any]) -> float:
        # Measured with bench/study_timings.py (docs/performance.md, "Study run times"):
        # 0.13 s per run and 13 ms per simulated second of a 100 Mb/s link at 90 % load, in
        # proportion to the packets carried; the model's runs grow faster than their packets
        # (their many short connections at 622 Mb/s), fitted as work ** 1.5.
        exp = str(point["experiment"])
        if exp == "model":
            work = float(point["link_mbps"]) / 100.0 * float(point["offered_utilization"]) / 0.9
            return 0.13 + p.model_duration_s * 7.5e-3 * math.pow(work, 1.5)
        mbps = p.testbed_mbps if exp == "testbed" else p.bottleneck_mbps
        load = min(float(point["load"]), 110.0)
        # The uncongested reference carries the main experiment's packets (at 1 Gb/s).
        return 0.13 + p.duration_s * 0.013 * mbps / 100.0 * load / 90.0

    def warnings(self, p: EcnplusParams, data: StudyData) -> list[str]:
        """One warning for every point whose backlog of open connections kept growing in at
        least one seed (no steady state), with the points listed."""
        m = data.frame("metrics")
        if m.empty or "steady" not in m.columns:
            return []
        axes = [a for a in data.axes if a in m.columns]
        points, unsteady_points, seeds_unsteady, seeds_all = 0, [], 0, 0
        for key, g in m.groupby(axes, sort=False, dropna=False):
            if g["steady"].isna().all():
                continue  # the model experiment's runs: no backlog of open connections
            points += 1
            seeds_all += len(g)
            unsteady = g[g["steady"] < 0.5]
            if unsteady.empty:
                continue
            seeds_unsteady += len(unsteady)
            keys = key if isinstance(key, tuple) else (key,)
            label = " ".join(
                f"{v:g} %" if a == "load" else (f"{a} {v:g}" if isinstance(v, float) else str(v))
                for a, v in zip(axes, keys, strict=True)
                if not (isinstance(v, float) and math.isnan(v))
            )
            first = float(unsteady["backlog_first"].mean())
            last = float(unsteady["backlog_last"].mean())
            unsteady_points.append(
                f"{label} ({len(unsteady)}/{len(g)} seeds, {first:.0f} -> {last:.0f})"
            )
        if not unsteady_points:
            return []
        return [
            f"No steady state at {len(unsteady_points)} of {points} web points "
            f"({seeds_unsteady} of {seeds_all} runs): there the open connections kept growing "
            "from the first to the last tenth of the run, so response times, unfinished shares "
            f"and throughput depend on the run length (duration_s = {p.duration_s:g} s). The "
            "table 'Runs with a steady backlog of open connections' gives the share per point. "
            "Points (seeds without a steady state / seeds, open connections first -> last "
            "tenth): " + "; ".join(unsteady_points) + "."
        ]

    # -- rendering --------------------------------------------------------------------

    def tables(self, p: EcnplusParams, data: StudyData) -> dict[str, StudyTable]:
        out: dict[str, StudyTable] = {}
        order = data.order()
        metrics = [m for m, *_ in _WEB_TABLES]
        for exp in ("main", "mixes", "testbed"):
            if exp not in p.experiments:
                continue
            agg = select_rows(data.aggregate("metrics", metrics), {"experiment": exp})
            if exp == "main" and "uncongested" in p.experiments:
                agg = pd.concat([agg, self._uncongested_rows(p, data, metrics)], ignore_index=True)
            rows = "endpoint" if exp == "testbed" else "aqm"
            cols: list[str] = ["aqm"] if exp == "testbed" else ["load", "endpoint"]
            note = (
                "Rows: endpoints; column: the AQM."
                if exp == "testbed"
                else "Rows: AQM; columns: offered load (%) and endpoints."
            )
            if exp == "main" and "uncongested" in p.experiments:
                note += (
                    f" Last row: the same sessions over a {p.uncongested_mbps:g} Mb/s DropTail "
                    f"bottleneck without ECN (the uncongested reference), its throughputs "
                    f"normalized by the {p.bottleneck_mbps:g} Mb/s of the others."
                )
            for metric, ttl, unit, digits in _WEB_TABLES:
                if agg.empty:
                    continue
                mean, ci = pivot(agg, metric, index=rows, columns=cols, order=order)
                extra = f" {_UNFINISHED_NOTE}" if "response" in metric else ""
                if metric == "steady":
                    extra = (
                        " 1 = every seed's backlog of open connections stayed steady; below 1, "
                        "the backlog kept growing in that share of seeds (no steady state)."
                    )
                out[f"{exp}_{metric}"] = StudyTable(
                    f"{_TITLES[exp]}: {ttl}", mean, ci, unit, note + extra, digits
                )
        if "deployment" in p.experiments:
            group_metrics = [
                "mean_response_time_s",
                "p50_response_time_s",
                "p90_response_time_s",
                "unfinished_share",
                "handshake_loss_share",
                "ecn_negotiated_share",
            ]
            agg = select_rows(
                data.aggregate("groups", group_metrics, by=[*data.axes, "group"]),
                {"experiment": "deployment"},
            )
            titles = {m: t for m, t, *_ in _WEB_TABLES}
            titles["ecn_negotiated_share"] = "Objects whose connection negotiated ECN"
            units = {m: u for m, _, u, _ in _WEB_TABLES}
            units["ecn_negotiated_share"] = "share"
            group_order = {**order, "group": ["ECN clients", "non-ECN clients", "all"]}
            for metric in group_metrics:
                if agg.empty:
                    continue
                mean, ci = pivot(
                    agg, metric, index=["aqm", "ecn_share"], columns="group", order=group_order
                )
                out[f"deployment_{metric}"] = StudyTable(
                    f"{_TITLES['deployment']}: {titles[metric]}",
                    mean,
                    ci,
                    units[metric],
                    "Rows: AQM and the share of ECN-capable clients; columns: client group "
                    f"(every server ECN+, {p.deployment_load_percent:g} % load)."
                    + (f" {_UNFINISHED_NOTE}" if "response" in metric else ""),
                )
        if "model" in p.experiments:
            out.update(self._model_tables(p, data))
        return out

    def _uncongested_rows(
        self, p: EcnplusParams, data: StudyData, metrics: Sequence[str]
    ) -> pd.DataFrame:
        """The uncongested reference's aggregated metrics, its utilization (busy time of its
        own fast link) rescaled to bytes on the wire over the main bottleneck's capacity."""
        agg: pd.DataFrame = select_rows(
            data.aggregate("metrics", metrics), {"experiment": "uncongested"}
        ).copy()
        if agg.empty:
            return agg
        scale = p.uncongested_mbps / p.bottleneck_mbps
        util = agg["metric"] == "utilization"
        cols = [c for c in ("mean", "std", "sem", "ci_low", "ci_high", "ci") if c in agg]
        agg.loc[util, cols] = agg.loc[util, cols] * scale
        return agg

    def _model_curve(
        self, p: EcnplusParams, utilizations: Sequence[float] | np.ndarray
    ) -> pd.DataFrame:
        from ecnsim import models

        web = workload_defaults("websessions")
        bursts = models.burst_sizes(
            web["object_size"], rcv_window=web["rcv_window"], iw=p.initial_window, mss=_mss(p)
        )
        return models.delay_exceedance_curve(
            bursts,
            [u for u in utilizations if 0 < u < 1],
            [r * 1e6 for r in p.model_links_mbps],
            delay_s=p.model_delay_ms / 1e3,
            packet_bytes=p.packet_bytes,
            measure=p.model_measure,
        )

    def _model_points(self, data: StudyData) -> pd.DataFrame:
        agg = select_rows(
            data.aggregate("metrics", ["utilization", "p_exceed", "queue_delay_ms"]),
            {"experiment": "model"},
        )
        if agg.empty:
            return agg
        wide = agg.pivot_table(
            index=["link_mbps", "offered_utilization"], columns="metric", values=["mean", "ci"]
        )
        wide.columns = [f"{m}_{stat}" for stat, m in wide.columns]
        flat: pd.DataFrame = wide.reset_index()
        return flat

    def _model_tables(self, p: EcnplusParams, data: StudyData) -> dict[str, StudyTable]:
        pts = self._model_points(data)
        if pts.empty:
            return {}
        measured = pts["utilization_mean"].to_numpy(dtype=float)
        curve = self._model_curve(p, sorted(set(np.round(measured, 6))))
        rows = []
        for _, r in pts.iterrows():
            u = float(r["utilization_mean"])
            m = curve[
                np.isclose(curve["link_rate_bps"], float(r["link_mbps"]) * 1e6)
                & np.isclose(curve["utilization"], round(u, 6))
            ]
            rows.append(
                {
                    "offered utilization": float(r["offered_utilization"]),
                    "link (Mb/s)": float(r["link_mbps"]),
                    "measured utilization": u,
                    "simulation": float(r["p_exceed_mean"]),
                    "simulation ci": float(r.get("p_exceed_ci", math.nan)),
                    "M[X]/M/1": float(m["p_exceed"].iloc[0]) if not m.empty else math.nan,
                }
            )
        df = pd.DataFrame(rows)
        mean = df.pivot_table(
            index="offered utilization",
            columns="link (Mb/s)",
            values=["measured utilization", "simulation", "M[X]/M/1"],
        )
        mean = mean.reorder_levels([1, 0], axis=1).sort_index(axis=1)
        ci = mean * np.nan
        sim_ci = df.pivot_table(
            index="offered utilization", columns="link (Mb/s)", values="simulation ci"
        )
        for link in sim_ci.columns:
            ci[(link, "simulation")] = sim_ci[link]
        return {
            "model_delay_exceedance": StudyTable(
                f"{_TITLES['model']}: P(queueing delay > {p.model_delay_ms:g} ms)",
                mean,
                ci,
                "",
                "Rows: the utilization offered; per link, the measured utilization, the "
                "simulated probability (FIFO, the same web workload) and the model's at the "
                f"measured utilization (measure {p.model_measure!r}).",
                4,
            )
        }

    def figures(self, p: EcnplusParams, data: StudyData) -> Figures:
        figs: Figures = {}
        cdf = data.frame("cdf")
        for exp in ("main", "mixes"):
            if exp not in p.experiments:
                continue
            loads = p.loads_percent
            aqms = p.aqms if exp == "main" else p.mix_aqms
            endpoints = p.endpoints if exp == "main" else p.mix_endpoints
            for load in loads:
                part = select_rows(cdf, {"experiment": exp, "load": float(load), "group": "all"})
                if part.empty:
                    continue
                reference = None
                if exp == "main":
                    reference = select_rows(
                        cdf, {"experiment": "uncongested", "load": float(load), "group": "all"}
                    )
                with_ref = reference is not None and not reference.empty
                figs[f"{exp}_cdf_load{load:g}"] = (
                    _cdf_panels(
                        part, "aqm", list(aqms), "endpoint", list(endpoints), reference=reference
                    ),
                    f"{_TITLES[exp]}, {load:g} % load: response-time CDF (top) and CCDF "
                    "(bottom) per AQM, one line per endpoint (mean over seeds of each run's "
                    "Kaplan-Meier estimate; unfinished objects counted)"
                    + (
                        f"; dashed: the same sessions over a {p.uncongested_mbps:g} Mb/s DropTail "
                        "bottleneck (the uncongested reference)."
                        if with_ref
                        else "."
                    ),
                )
            backlog = data.frame("backlog")
            for load in loads:
                part = select_rows(backlog, {"experiment": exp, "load": float(load)})
                if part.empty:
                    continue
                figs[f"{exp}_backlog_load{load:g}"] = (
                    _backlog_panels(part, "aqm", list(aqms), "endpoint", list(endpoints)),
                    f"{_TITLES[exp]}, {load:g} % load: objects open (requested, not finished) "
                    "over time, first seed. A backlog that keeps growing means no steady state.",
                )
        if "deployment" in p.experiments:
            for aqm in p.deployment_aqms:
                part = select_rows(cdf, {"experiment": "deployment", "aqm": aqm})
                part = part[part["group"] != "all"] if not part.empty else part
                if part.empty:
                    continue
                # "RED*" -> "REDstar": RED's and RED*'s figures get files of their own.
                figs[f"deployment_cdf_{aqm.replace('*', 'star')}"] = (
                    _cdf_panels(
                        part,
                        "ecn_share",
                        list(p.deployment_shares),
                        "group",
                        ["ECN clients", "non-ECN clients"],
                        panel_label=lambda v: f"{float(v):.0%} ECN clients",
                    ),
                    f"{_TITLES['deployment']}, {aqm}, {p.deployment_load_percent:g} % load: "
                    "response-time CDF and CCDF of ECN and non-ECN clients, every server ECN+.",
                )
        if "testbed" in p.experiments:
            part = select_rows(cdf, {"experiment": "testbed", "group": "all"})
            if not part.empty:
                figs["testbed_cdf"] = (
                    _cdf_panels(
                        part, "aqm", [p.testbed_aqm], "endpoint", list(p.testbed_endpoints)
                    ),
                    f"{_TITLES['testbed']}: {p.testbed_mbps:g} Mb/s, {p.testbed_aqm}, "
                    f"{p.testbed_demand_mbps:g} Mb/s of web demand: response-time CDF and CCDF "
                    "per endpoint.",
                )
        if "model" in p.experiments:
            pts = self._model_points(data)
            if not pts.empty:
                from ecnsim.output import plot

                grid = np.round(np.arange(0.02, 0.99, 0.02), 2)
                curve = self._model_curve(p, grid)
                sim = pd.DataFrame(
                    {
                        "link_rate_bps": pts["link_mbps"].to_numpy(dtype=float) * 1e6,
                        "utilization": pts["utilization_mean"].to_numpy(dtype=float),
                        "p_exceed": pts["p_exceed_mean"].to_numpy(dtype=float),
                        "ci": pts.get("p_exceed_ci", pd.Series(np.nan, index=pts.index))
                        .fillna(0.0)
                        .to_numpy(dtype=float),
                    }
                )
                ymin = 10 ** math.floor(
                    math.log10(max(1e-6, float(np.nanmin(np.r_[sim["p_exceed"], 1.0])) / 2 or 1e-6))
                )
                figs["model_delay_exceedance"] = (
                    plot.plot_delay_exceedance(curve, sim, ymin=min(1e-4, ymin)),
                    f"P(queueing delay > {p.model_delay_ms:g} ms) against utilization: the "
                    "M[X]/M/1 model (lines) and FIFO simulations of the same web workload "
                    "(points at their measured utilization, mean over seeds with 95 % CI).",
                )
        return figs


def _cdf_panels(
    frame: pd.DataFrame,
    panel: str,
    panels: list[Any],
    curve: str,
    curves: list[Any],
    *,
    panel_label: Any = None,
    reference: pd.DataFrame | None = None,
) -> Any:
    """CDF (top row) and CCDF (bottom row, log-log) per ``panel`` value, one line per ``curve``;
    ``reference`` (a CDF frame), if given, dashed in every panel."""
    from ecnsim.output.plot import _figure

    present = [v for v in panels if not select_rows(frame, {panel: v}).empty]
    ncols = max(1, len(present))
    fig = _figure(3.4 * ncols + 0.8, 6.4)
    axes = np.atleast_2d(fig.subplots(2, ncols, squeeze=False))
    for j, value in enumerate(present):
        part = select_rows(frame, {panel: value})
        ax_cdf, ax_ccdf = axes[0, j], axes[1, j]
        lines: list[tuple[str, pd.DataFrame, dict[str, Any]]] = [
            (str(c), select_rows(part, {curve: c}), {}) for c in curves
        ]
        if reference is not None and not reference.empty:
            lines.append(("uncongested", reference, {"color": "0.3", "ls": "--"}))
        for label, line, style in lines:
            if line.empty:
                continue
            mean = line.groupby("x_s", sort=True)[["cdf", "ccdf"]].mean()
            x = mean.index.to_numpy(dtype=float)
            ax_cdf.plot(x, mean["cdf"], drawstyle="steps-post", label=label, lw=1.2, **style)
            keep = mean["ccdf"].to_numpy() > 0
            ax_ccdf.plot(
                x[keep], mean["ccdf"].to_numpy()[keep], drawstyle="steps-post", lw=1.2, **style
            )
        label = panel_label(value) if panel_label else f"{value}"
        ax_cdf.set_title(label, fontsize="medium")
        ax_cdf.set_xscale("log")
        ax_cdf.set_ylim(0, 1.02)
        ax_ccdf.set_xscale("log")
        ax_ccdf.set_yscale("log")
        ax_ccdf.set_ylim(1e-5, 1.5)
        ax_ccdf.set_xlabel("response time (s)")
        for ax in (ax_cdf, ax_ccdf):
            ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("P(response time <= x)")
    axes[1, 0].set_ylabel("P(response time > x)")
    axes[0, 0].legend(fontsize="small")
    return fig


def _backlog_panels(
    frame: pd.DataFrame, panel: str, panels: list[Any], curve: str, curves: list[Any]
) -> Any:
    from ecnsim.output.plot import _figure

    present = [v for v in panels if not select_rows(frame, {panel: v}).empty]
    ncols = max(1, len(present))
    fig = _figure(3.4 * ncols + 0.8, 3.4)
    axes = np.atleast_1d(fig.subplots(1, ncols, squeeze=False)).ravel()
    for ax, value in zip(axes, present, strict=False):
        part = select_rows(frame, {panel: value})
        for c in curves:
            line = select_rows(part, {curve: c})
            if line.empty:
                continue
            line = line[line["seed"] == line["seed"].min()]
            ax.plot(line["time_s"], line["open"], label=str(c), lw=1.0)
        ax.set_title(str(value), fontsize="medium")
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("objects open")
    axes[0].legend(fontsize="small")
    return fig
