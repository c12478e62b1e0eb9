"""``rfc2884``: ECN on a Linux testbed (STUDIES.md §1).

Source: J. Hadi Salim, U. Ahmed, "Performance Evaluation of Explicit
Congestion Notification (ECN) in IP Networks", RFC 2884, July 2000.

A server sends to three clients over a 1.5 Mb/s bottleneck behind a RED
queue at router R1 (the testbed shaped a 10 Mb/s Ethernet with CBQ); R2
adds the path delay. "C" pulls the background (congesting) FTP flows,
"ECN-ON" and "ECN-OFF" the measured ones. Three experiments:

- **fairness**: 2 background flows from 0 s and 2 competing flows from 20 s,
  all ECN or all non-ECN; Jain's index over the four flows' goodputs, and the
  packets dropped (non-ECN) against the packets marked (ECN);
- **bulk**: 2 / 5 / 10 non-ECN background flows; at 20 s one 20 MB transfer
  to ECN-ON and one to ECN-OFF; goodput, relative ECN advantage,
  retransmissions and timeouts;
- **transactional**: netperf TCP_CRR clients on ECN-ON and ECN-OFF from 20 s
  for 3 minutes (1 KB request, 5 / 10 / 20 KB response, no think time);
  transactions per second and their relative advantage.

RFC 2884 gives RED's parameters only as a rule: keep the average queue
between min_th and max_th. The study applies that rule as a calibration
stage (:meth:`Rfc2884Study.calibration`): pilot runs per congestion level
that pick the thresholds and the buffer from the time the average spends in
the RED region, never from the experiments' results.
``docs/studies/rfc2884.md``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from ecnsim import analysis
from ecnsim.analysis.aggregate import aggregate
from ecnsim.scenario.spec import Scenario, bulk, red
from ecnsim.scenario.workloads import crr
from ecnsim.studies._base import (
    Calibration,
    Choice,
    Figures,
    JobSpec,
    Study,
    StudyData,
    StudyParams,
    StudyTable,
)
from ecnsim.studies.findings import ALMOST_ALL, Alternative, Cell, Finding, Reading

__all__ = [
    "EXPERIMENTS",
    "LEVEL_NAMES",
    "Rfc2884Params",
    "Rfc2884Study",
    "choose_red_setting",
    "percent_decrease",
    "relative_advantage",
]

Experiment = Literal["fairness", "bulk", "transactional"]
#: The experiments, in the RFC's order.
EXPERIMENTS: tuple[str, ...] = ("fairness", "bulk", "transactional")
#: RFC 2884's names of the congestion levels (background FTP flows).
LEVEL_NAMES: dict[int, str] = {2: "low", 5: "moderate", 10: "high"}
#: The two measured sides.
SIDES: tuple[str, ...] = ("ECN", "non-ECN")

#: Bytes per KB and MB (STUDIES.md: KB = 1000 bytes).
KB = 1000
MB = 1000 * KB


@dataclass(frozen=True)
class Rfc2884Params(StudyParams):
    """RFC 2884's setup as defaults; every reading of an ambiguity is a field (``choices``)."""

    seeds: int = 10
    experiments: tuple[Experiment, ...] = ("fairness", "bulk", "transactional")
    ccs: tuple[Literal["reno", "newreno", "sack"], ...] = ("reno", "newreno", "sack")
    #: Background (congesting) FTP flows: low, moderate, high congestion.
    congestion_levels: tuple[int, ...] = (2, 5, 10)
    #: max_p of the bulk and transactional experiments.
    max_p_values: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
    #: max_p of the fairness experiment.
    fairness_max_p: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2)
    fairness_background: int = 2
    fairness_modes: tuple[Literal["ECN", "non-ECN"], ...] = ("ECN", "non-ECN")
    fairness_duration_s: float = 120.0
    #: The competing flows and the transaction clients start here.
    competing_start_s: float = 20.0
    bulk_bytes: int = 20 * MB
    #: A bulk run lasts start + this x (bulk_bytes at the fair share of the bottleneck).
    bulk_time_factor: float = 3.0
    request_bytes: int = 1 * KB
    response_kb: tuple[float, ...] = (5.0, 10.0, 20.0)
    transaction_s: float = 180.0
    #: Background flows start at 0 s plus U[0, this).
    background_jitter_s: float = 1.0
    bottleneck_mbps: float = 1.5
    access_mbps: float = 10.0
    #: The path delay R2 adds ("the latency of the link ... 20 ms").
    path_delay_ms: float = 20.0
    path_delay_is: Literal["one_way", "round_trip"] = "one_way"
    access_delay_ms: float = 0.1
    #: RED at R1: what it does to ECT packets above max_th.
    red_ecn: Literal["mark_above_max", "rfc3168"] = "mark_above_max"
    w_q: float = 0.002
    #: ``(level, min_th, max_th, buffer)`` per congestion level; levels left out are calibrated.
    red_settings: tuple[tuple[float, ...], ...] = ()
    #: Candidate min_th (packets) of the calibration; max_th and the buffer follow from it.
    calibration_min_th: tuple[float, ...] = (5.0, 8.0, 12.0, 20.0, 30.0, 45.0)
    calibration_max_over_min: float = 3.0
    calibration_buffer_over_max: float = 2.0
    #: Share of the time the average must stay in [min_th, max_th) at every pilot max_p.
    calibration_target: float = 0.9
    #: Largest share of the time the average may spend above max_th at any pilot max_p
    #: (RFC 2884 §4.4: the average "maintained between minth and maxth", else "the queue
    #: acts like a Tail Drop queue"); 1: no bound (the rule before issue 31).
    calibration_max_above: float = 0.01
    calibration_duration_s: float = 100.0
    calibration_warmup_s: float = 20.0
    calibration_cc: Literal["reno", "newreno", "sack"] = "reno"
    calibration_seeds: int = 1
    profile: str = "linux-2.4"
    sample_interval_s: float = 0.1

    def check(self) -> None:
        if not self.experiments:
            raise ValueError("experiments: name at least one of fairness, bulk, transactional")
        if any(n < 1 for n in self.congestion_levels) or self.fairness_background < 1:
            raise ValueError(
                f"congestion_levels and fairness_background must be >= 1 flow, got "
                f"{self.congestion_levels}, {self.fairness_background}"
            )
        for name in ("max_p_values", "fairness_max_p"):
            values = getattr(self, name)
            if not values or any(not 0 < p <= 1 for p in values):
                raise ValueError(f"{name} must be in (0, 1], got {values}")
        if self.seeds < 1 or self.calibration_seeds < 1:
            raise ValueError("seeds and calibration_seeds must be >= 1")
        if not 0 < self.competing_start_s < min(self.fairness_duration_s, 1e6):
            raise ValueError(
                f"need 0 < competing_start_s < fairness_duration_s, got "
                f"{self.competing_start_s}, {self.fairness_duration_s}"
            )
        if self.bulk_bytes < 1 or self.request_bytes < 1 or any(r <= 0 for r in self.response_kb):
            raise ValueError("bulk_bytes, request_bytes and response_kb must be > 0")
        if self.bulk_time_factor < 1:
            raise ValueError(f"bulk_time_factor must be >= 1, got {self.bulk_time_factor}")
        if not 0 <= self.calibration_warmup_s < self.calibration_duration_s:
            raise ValueError("need 0 <= calibration_warmup_s < calibration_duration_s")
        if not self.calibration_min_th or any(m <= 0 for m in self.calibration_min_th):
            raise ValueError(f"calibration_min_th must be > 0, got {self.calibration_min_th}")
        if self.calibration_max_over_min <= 1 or self.calibration_buffer_over_max < 1:
            raise ValueError(
                "need calibration_max_over_min > 1 and calibration_buffer_over_max >= 1"
            )
        if not 0 < self.calibration_target <= 1:
            raise ValueError(f"calibration_target must be in (0, 1], got {self.calibration_target}")
        if not 0 <= self.calibration_max_above <= 1:
            raise ValueError(
                f"calibration_max_above must be in [0, 1], got {self.calibration_max_above}"
            )
        for s in self.red_settings:
            if len(s) != 4:
                raise ValueError(
                    f"red_settings: each entry is (level, min_th, max_th, buffer), got {list(s)}"
                )
            level, lo, hi, buf = s
            if level != int(level) or level < 1 or not 0 <= lo < hi <= buf or buf != int(buf):
                raise ValueError(
                    f"red_settings: need an integer level >= 1 and 0 <= min_th < max_th <= buffer "
                    f"(an integer), got {list(s)}"
                )

    # -- derived values -------------------------------------------------------------

    def levels_needed(self) -> list[int]:
        """Congestion levels whose RED setting the experiments use."""
        out: list[int] = []
        if "fairness" in self.experiments:
            out.append(self.fairness_background)
        if "bulk" in self.experiments or "transactional" in self.experiments:
            out.extend(self.congestion_levels)
        return sorted(set(out))

    def setting(self, level: int) -> tuple[float, float, int] | None:
        """``(min_th, max_th, buffer)`` of ``level``, if set or calibrated."""
        for s in self.red_settings:
            if int(s[0]) == level:
                return float(s[1]), float(s[2]), int(s[3])
        return None

    def pilot_max_p(self, level: int) -> list[float]:
        """The smallest and largest max_p the experiments run at ``level``."""
        values: list[float] = []
        if "fairness" in self.experiments and level == self.fairness_background:
            values.extend(self.fairness_max_p)
        if ("bulk" in self.experiments or "transactional" in self.experiments) and (
            level in self.congestion_levels
        ):
            values.extend(self.max_p_values)
        return sorted({min(values), max(values)})

    def one_way_delay_s(self) -> float:
        d = self.path_delay_ms / 1e3
        return d if self.path_delay_is == "one_way" else d / 2

    def bulk_duration_s(self, level: int) -> float:
        """Bulk run length: start + factor x the time of ``bulk_bytes`` at the fair share."""
        share = self.bottleneck_mbps * 1e6 / (level + 2)
        return self.competing_start_s + self.bulk_time_factor * self.bulk_bytes * 8 / share


# ---------------------------------------------------------------------------
# The rules: relative advantage, % decrease, the calibration's choice
# ---------------------------------------------------------------------------


def relative_advantage(ecn: float, non_ecn: float) -> float:
    """RFC 2884's relative advantage of ECN: ``(ECN - nonECN) / nonECN`` (NaN if nonECN is 0)."""
    if not (math.isfinite(ecn) and math.isfinite(non_ecn)) or non_ecn == 0:
        return math.nan
    return (ecn - non_ecn) / non_ecn


def percent_decrease(ecn: float, non_ecn: float) -> float:
    """By how many % ECN lowers a count: ``100 (nonECN - ECN) / nonECN`` (NaN if nonECN is 0)."""
    adv = relative_advantage(ecn, non_ecn)
    return -100.0 * adv if math.isfinite(adv) else math.nan


def choose_red_setting(
    pilots: pd.DataFrame, *, target: float, max_above: float = 1.0
) -> dict[str, Any]:
    """The calibration rule: pick one candidate RED setting from its pilot runs.

    ``pilots`` has a row per pilot run with ``min_th``, ``max_th``,
    ``buffer``, ``max_p``, ``inside`` (the share of time the average
    spent in ``[min_th, max_th)``) and, with ``max_above`` < 1, ``above``
    (the share above ``max_th``). Per candidate the worst shares over the
    pilot max_p values count (each seed's runs averaged first): the smallest
    ``inside``, the largest ``above``. The choice: the candidate with the
    smallest ``min_th`` whose worst ``inside`` reaches ``target`` and whose
    worst ``above`` is at most ``max_above``; if none does, of the candidates
    within ``max_above`` the one with the largest worst ``inside``, and if
    none is within it, the one with the smallest worst ``above`` (the smaller
    ``min_th`` on a tie). Smaller thresholds mean less queueing delay, which
    is RED's purpose; the rule reads nothing but the queue.

    RFC 2884 §4.4 names the failure the bound on ``above`` guards against:
    with more congesting flows "the RED queue degenerates into a simple Tail
    Drop queue, i.e. the average queue exceeds the maximum threshold most of
    the times", so the authors "fine-tuned the RED parameters such that the
    average queue zones around the RED region before running the experiment
    proper".

    Returns the chosen ``min_th``, ``max_th``, ``buffer``, its ``worst``
    inside share and ``worst_above`` share, ``met`` (whether it met both
    bounds) and ``candidates``: a frame of every candidate's worst shares.
    """
    need = {"min_th", "max_th", "buffer", "max_p", "inside"}
    if max_above < 1.0:
        need.add("above")
    missing = need - set(pilots.columns)
    if missing:
        raise ValueError(f"pilot runs lack columns {sorted(missing)}")
    if pilots.empty:
        raise ValueError("no pilot run to choose from")
    keys = ["min_th", "max_th", "buffer"]
    shares = ["inside", "above"] if "above" in pilots.columns else ["inside"]
    per_p = pilots.groupby([*keys, "max_p"], as_index=False)[shares].mean()
    how = {"worst": ("inside", "min")}
    if "above" in shares:
        how["worst_above"] = ("above", "max")
    cand = per_p.groupby(keys, as_index=False).agg(**how)
    if "worst_above" not in cand.columns:
        cand["worst_above"] = np.nan
    cand = cand.sort_values("min_th", kind="stable").reset_index(drop=True)
    worst = np.nan_to_num(cand["worst"].to_numpy(dtype=float), nan=-1.0)
    above = np.nan_to_num(cand["worst_above"].to_numpy(dtype=float), nan=0.0)
    within = above <= max_above
    ok = (worst >= target) & within
    if ok.any():
        i = int(np.flatnonzero(ok)[0])
    elif within.any():
        # The first of the largest worst inside shares among those within the bound.
        i = int(np.argmax(np.where(within, worst, -np.inf)))
    else:
        i = int(np.argmin(above))
    row = cand.iloc[i]
    return {
        "min_th": float(row["min_th"]),
        "max_th": float(row["max_th"]),
        "buffer": int(row["buffer"]),
        "worst": float(row["worst"]),
        "worst_above": float(row["worst_above"]),
        "met": bool(ok[i]),
        "candidates": cand,
    }


def _candidates(p: Rfc2884Params) -> list[tuple[float, float, int]]:
    out = []
    for lo in p.calibration_min_th:
        hi = lo * p.calibration_max_over_min
        buf = math.ceil(hi * p.calibration_buffer_over_max)
        out.append((float(lo), float(hi), buf))
    return out


# ---------------------------------------------------------------------------
# The testbed
# ---------------------------------------------------------------------------

#: The hosts: the server, the two measured clients and "C" (background).
SERVER, CLIENT_ON, CLIENT_OFF, CLIENT_C = "server", "ecn_on", "ecn_off", "c"


def testbed(
    p: Rfc2884Params,
    *,
    name: str,
    duration_s: float,
    warmup_s: float,
    cc: str,
    max_p: float,
    red_setting: tuple[float, float, int],
    ecn_clients: Mapping[str, bool],
) -> Scenario:
    """RFC 2884's testbed: server -- R1 == 1.5 Mb/s == R2 -- ECN-ON, ECN-OFF, C.

    ``links[0]`` is the bottleneck R1 -> R2 with the RED queue at R1; the
    other direction (ACKs, requests) has the profile's DropTail. The server
    is ECN-capable; each client is as ``ecn_clients`` says.
    """
    min_th, max_th, buffer = red_setting
    sc = Scenario(
        duration_s,
        name=name,
        warmup=warmup_s if warmup_s > 0 else None,
        sample_interval=p.sample_interval_s,
        sample_flows=[],
        profile=p.profile,
    )
    sc.tcp(cc=cc)
    # RFC 2884 §3: "The server is always ECN capable".
    sc.host(SERVER, ecn="request")
    for host in (CLIENT_ON, CLIENT_OFF, CLIENT_C):
        sc.host(host, ecn="request" if ecn_clients.get(host, False) else "off")
    sc.router("r1", "r2")
    queue = red(
        limit_packets=buffer,
        measure="packets",
        min_th=min_th,
        max_th=max_th,
        w_q=p.w_q,
        max_p=max_p,
        ecn=p.red_ecn,
    )
    sc.link(
        "r1",
        "r2",
        rate=p.bottleneck_mbps * 1e6,
        delay=p.one_way_delay_s(),
        queue_ab=queue,
    )
    rate, delay = p.access_mbps * 1e6, p.access_delay_ms / 1e3
    sc.link(SERVER, "r1", rate=rate, delay=delay)
    for host in (CLIENT_ON, CLIENT_OFF, CLIENT_C):
        sc.link("r2", host, rate=rate, delay=delay)
    return sc


def _background(sc: Scenario, p: Rfc2884Params, n: int) -> None:
    for i in range(n):
        sc.flow(
            SERVER,
            CLIENT_C,
            name=f"bg{i}",
            app=bulk(),
            start=0.0,
            start_jitter=p.background_jitter_s if p.background_jitter_s > 0 else None,
        )


# ---------------------------------------------------------------------------
# Per-run metrics
# ---------------------------------------------------------------------------


def _region(results: Any, context: Mapping[str, Any], t0: float, t1: float) -> dict[str, float]:
    q = results.table("queue_series").to_pandas()
    q = q[(q["time_s"] >= t0) & (q["time_s"] <= t1)]
    r = analysis.red_region_share(
        q, 0, min_th=float(context["min_th"]), max_th=float(context["max_th"])
    )
    return {"red_below": r["below"], "red_inside": r["inside"], "red_above": r["above"]}


def _bottleneck(results: Any) -> pd.Series:
    queues = results.queues
    row: pd.Series = queues.loc[queues["queue_id"] == 0].iloc[0]
    return row


def _derive_pilot(results: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    t0, t1 = float(context["warmup_s"]), float(context["end_s"])
    bq = _bottleneck(results)
    row = {
        **_region(results, context, t0, t1),
        "queue_avg_packets": float(bq["avg_packets"]),
        "utilization": float(bq["utilization"]),
    }
    return {"metrics": pd.DataFrame([row])}


def _derive_fairness(results: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    t0, t1 = float(context["warmup_s"]), float(context["end_s"])
    flows = results.flows
    rates = analysis.flow_rates(flows, end_s=t1, warmup_s=t0)
    goodput = rates["goodput_bps"].to_numpy(dtype=float)
    bq = _bottleneck(results)
    row = {
        "jain": analysis.jain_index(goodput),
        "goodput_mbps": float(np.nansum(goodput)) / 1e6,
        "drops": float(flows["drops"].sum()),
        "marks": float(flows["marks"].sum()),
        "queue_drops": float(bq["drops"]),
        "queue_marks": float(bq["marks"]),
        "utilization": float(bq["utilization"]),
        **_region(results, context, t0, t1),
    }
    per_flow = pd.DataFrame(
        {
            "flow": flows["flow"].astype(str).to_numpy(),
            "goodput_bps": goodput,
            "drops": flows["drops"].to_numpy(dtype=np.int64),
            "marks": flows["marks"].to_numpy(dtype=np.int64),
        }
    )
    return {"metrics": pd.DataFrame([row]), "flows": per_flow}


def bulk_side_metrics(flows: pd.DataFrame, name: str, *, end_s: float) -> dict[str, float]:
    """One measured bulk transfer: goodput (retransmissions excluded), retransmissions, timeouts.

    Goodput is the payload the receiver delivered in order over the time from
    the flow's start to its completion (or to ``end_s``, if it did not
    complete: ``complete`` is then 0). Retransmissions are the data segments
    sent again (``packets_retransmitted``); timeouts are the retransmission
    timeouts with data outstanding (``rto_count``): the retransmissions not
    caused by three duplicate ACKs start there, one per expiry.
    """
    row = flows.loc[flows["flow"].astype(str) == name]
    if row.empty:
        raise KeyError(f"no flow {name!r} in the run")
    f = row.iloc[0]
    done = math.isfinite(float(f["completion_time_s"]))
    elapsed = float(f["completion_time_s"]) if done else end_s - float(f["start_s"])
    delivered = float(f["bytes_delivered"])
    return {
        "goodput_kbps": delivered * 8 / elapsed / 1e3 if elapsed > 0 else math.nan,
        "complete": 1.0 if done else 0.0,
        "completion_s": elapsed,
        "retransmits": float(f["packets_retransmitted"]),
        "timeouts": float(f["rto_count"]),
        "fast_retransmits": float(f["fast_retransmits"]),
        "drops": float(f["drops"]),
        "marks": float(f["marks"]),
    }


def retransmit_pct(flows: pd.DataFrame, name: str) -> float:
    """A transfer's retransmissions per data packet sent, in %.

    100 x ``packets_retransmitted`` / ``packets_sent`` of flow ``name`` in a run's flows
    table: the share of the data packets the sender put on the wire that were sent again
    (retransmissions are among the packets sent, so it is at most 100; NaN if none was sent).
    """
    names = flows["flow"].to_numpy(dtype=object)
    hit = np.flatnonzero(names == name)
    if hit.size == 0:
        raise KeyError(f"no flow {name!r} in the run")
    sent = float(flows["packets_sent"].to_numpy()[hit[0]])
    again = float(flows["packets_retransmitted"].to_numpy()[hit[0]])
    return 100.0 * again / sent if sent > 0 else math.nan


def _derive_bulk(results: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    flows = results.flows
    end = float(context["end_s"])
    ecn = bulk_side_metrics(flows, "ECN-ON", end_s=end)
    non = bulk_side_metrics(flows, "ECN-OFF", end_s=end)
    start = float(context["start_s"])
    last = start + max(ecn["completion_s"], non["completion_s"])
    row: dict[str, float] = {}
    for side, m in (("ecn", ecn), ("nonecn", non)):
        row.update({f"{k}_{side}": v for k, v in m.items()})
    row["advantage"] = relative_advantage(ecn["goodput_kbps"], non["goodput_kbps"])
    row.update(_region(results, context, start, min(last, end)))
    return {"metrics": pd.DataFrame([row])}


def _derive_transactional(results: Any, context: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    t0, t1 = float(context["start_s"]), float(context["end_s"])
    records = results.table("records").to_pandas()
    m = analysis.record_metrics(records, kind="transaction", by="group", interval_s=(t0, t1))
    row: dict[str, float] = {}
    for group, side in (("ECN-ON", "ecn"), ("ECN-OFF", "nonecn")):
        part = m[m["group"] == group]
        if part.empty:
            # No transaction of this client started in the window: none completed.
            row.update({f"tps_{side}": 0.0, f"failed_{side}": 0.0, f"in_progress_{side}": 0.0})
            row[f"p50_s_{side}"] = math.nan
            continue
        first = part.iloc[0]
        row[f"tps_{side}"] = float(first["per_second"])
        row[f"failed_{side}"] = float(first["failed"])
        row[f"in_progress_{side}"] = float(first["in_progress"])
        row[f"p50_s_{side}"] = float(first["p50_response_time_s"])
    row["advantage"] = relative_advantage(row["tps_ecn"], row["tps_nonecn"])
    row.update(_region(results, context, t0, t1))
    return {"metrics": pd.DataFrame([row])}


# ---------------------------------------------------------------------------
# The RFC's findings and the readings they depend on (issue 31)
# ---------------------------------------------------------------------------


def _bk(cc: str, level: int, max_p: float) -> dict[str, Any]:
    return {"experiment": "bulk", "cc": cc, "level": level, "max_p": max_p}


def _tr(cc: str, resp: float, level: int, max_p: float) -> dict[str, Any]:
    return {
        "experiment": "transactional",
        "cc": cc,
        "response_kb": resp,
        "level": level,
        "max_p": max_p,
    }


#: The flows table's columns ``retransmit_pct`` reads.
RETRANSMIT_COLUMNS = ("flow", "packets_sent", "packets_retransmitted")

#: r2e: "hardly any retransmissions", ours: under this % of a transfer's data packets.
HARDLY_ANY_PCT = 1.0


def rfc2884_findings(p: Rfc2884Params) -> list[Finding]:
    """RFC 2884's findings (STUDIES.md §1, r1-r3) as cells over the grid: directions only."""
    ccs, levels, mps, resps = p.ccs, p.congestion_levels, p.max_p_values, p.response_kb
    lo, hi = min(levels), max(levels)
    mlo, mhi = min(mps), max(mps)
    rlo, rhi = min(resps), max(resps)
    tr_cells = [(cc, r, lv, m) for cc in ccs for r in resps for lv in levels for m in mps]
    general = "3 of 4 cells or more (a general statement)"
    return [
        Finding(
            "r1",
            "ECN and non-ECN flows share the link about equally fairly: Jain's index with "
            "every flow ECN-capable is not below (by 5 %) the index with none",
            "§5.1",
            lambda p: [
                Cell(
                    "jain",
                    {"experiment": "fairness", "cc": cc, "max_p": m, "mode": "ECN"},
                    {"experiment": "fairness", "cc": cc, "max_p": m, "mode": "non-ECN"},
                    factor=0.95,
                )
                for cc in ccs
                for m in p.fairness_max_p
            ],
            note="'About equally' is ours: a 5 % tolerance on the paired index "
            "(the RFC states the direction only).",
        ),
        Finding(
            "r2a",
            "ECN improves bulk goodput over non-ECN (relative advantage above 0)",
            "Abstract, §5.2",
            lambda p: [
                Cell("advantage", _bk(cc, lv, m), 0.0) for cc in ccs for lv in levels for m in mps
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r2b",
            "ECN's bulk goodput advantage grows with congestion (high against low)",
            "§5.2",
            lambda p: [
                Cell("advantage", _bk(cc, hi, m), _bk(cc, lo, m))
                for cc in ccs
                for m in mps
                if hi != lo
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r2c",
            "ECN's bulk goodput advantage grows with max_p (largest against smallest)",
            "§5.2",
            lambda p: [
                Cell("advantage", _bk(cc, lv, mhi), _bk(cc, lv, mlo))
                for cc in ccs
                for lv in levels
                if mhi != mlo
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r2d",
            "ECN's bulk goodput advantage is smaller with SACK than with Reno",
            "§5.2",
            lambda p: [
                Cell("advantage", _bk("sack", lv, m), _bk("reno", lv, m), higher=False)
                for lv in levels
                for m in mps
                if "sack" in ccs and "reno" in ccs
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r2e",
            "ECN flows see hardly any retransmissions in bulk transfers: fewer than 1 % of the "
            "data packets an ECN transfer sends are retransmissions",
            "§5.2",
            lambda p: [
                Cell("retransmit_pct_ecn", _bk(cc, lv, m), HARDLY_ANY_PCT, higher=False)
                for cc in ccs
                for lv in levels
                for m in mps
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
            note="'Hardly any' is ours: under 1 % of the transfer's data packets "
            "(retransmit_pct_ecn = 100 x packets_retransmitted / packets_sent of the ECN-ON "
            "flow, from the run's flows table). 'Non-ECN flows few timeouts' is not judged: "
            "'few' has no reference to compare with.",
        ),
        Finding(
            "r3a",
            "ECN improves the transaction rate (TCP_CRR) over non-ECN (advantage above 0)",
            "Abstract, §5.3",
            lambda p: [Cell("advantage", _tr(*c), 0.0) for c in tr_cells],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r3b",
            "ECN's transaction-rate advantage grows with congestion (high against low)",
            "§5.3",
            lambda p: [
                Cell("advantage", _tr(cc, r, hi, m), _tr(cc, r, lo, m))
                for cc in ccs
                for r in resps
                for m in mps
                if hi != lo
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r3c",
            "ECN's transaction-rate advantage grows with max_p (largest against smallest)",
            "§5.3",
            lambda p: [
                Cell("advantage", _tr(cc, r, lv, mhi), _tr(cc, r, lv, mlo))
                for cc in ccs
                for r in resps
                for lv in levels
                if mhi != mlo
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
        Finding(
            "r3d",
            "ECN's transaction-rate advantage shrinks as transactions get larger "
            "(largest response against smallest)",
            "§5.3",
            lambda p: [
                Cell("advantage", _tr(cc, rhi, lv, m), _tr(cc, rlo, lv, m), higher=False)
                for cc in ccs
                for lv in levels
                for m in mps
                if rhi != rlo
            ],
            quantifier=ALMOST_ALL,
            quantifier_text=general,
        ),
    ]


def rfc2884_readings(p: Rfc2884Params) -> list[Reading]:
    """The choices of the setup that can change a finding, each with the RFC's evidence."""
    linux = Alternative(
        "mark_above_max",
        "R1 ran the authors' ECN-patched Linux RED (§4: 'modified the code in the 2.1, 2.2 "
        "and 2.3 cases for the router portion'); Linux's sch_red marks ECT packets above "
        "max_th too",
        settings={"red_ecn": "mark_above_max"},
    )
    text = Alternative(
        "rfc3168",
        "§1: marks 'when the average queue size is between minth and maxth; above maxth "
        "arriving packets are dropped as before'; §3.1 likewise",
        settings={"red_ecn": "rfc3168"},
    )
    bounded = Alternative(
        f"above max_th at most {p.calibration_max_above:.0%}"
        if p.calibration_max_above < 1
        else "above max_th at most 1%",
        "§4.4: the average must be 'maintained between minth and maxth. If this is not "
        "maintained, then the queue acts like a Tail Drop queue'; the failure it names is "
        "the average exceeding max_th",
        settings={"calibration_max_above": p.calibration_max_above}
        if p.calibration_max_above < 1
        else {"calibration_max_above": 0.01},
    )
    unbounded = Alternative(
        "no bound above max_th",
        "§4.4: the authors 'fine-tuned the RED parameters such that the average queue zones "
        "around the RED region': the share of time inside (calibration_target) alone",
        settings={"calibration_max_above": 1.0},
    )
    other = "rfc" if p.profile != "rfc" else "linux-2.4"
    return [
        Reading(
            "red_ecn",
            "RED's action on ECN-capable packets above max_th: mark (Linux) or drop (RFC text)?",
            (linux, text) if p.red_ecn == "mark_above_max" else (text, linux),
        ),
        Reading(
            "calibration",
            "The calibration target: time inside [min_th, max_th) alone, or also a bound on "
            "the time above max_th?",
            (bounded, unbounded) if p.calibration_max_above < 1 else (unbounded, bounded),
        ),
        Reading(
            "profile",
            "The endpoints' TCP details: the testbed's Linux 2.4, or the RFCs'?",
            (
                Alternative(
                    p.profile,
                    "§4: the testbed ran Linux 2.2/2.4 with the authors' ECN patches "
                    "(docs/profiles.md sources each linux-2.4 value)",
                    settings={"profile": p.profile},
                ),
                Alternative(
                    other,
                    "no text of the source asks for it: a control, showing which findings "
                    "rest on Linux's implementation details",
                    settings={"profile": other},
                ),
            ),
        ),
    ]


# ---------------------------------------------------------------------------
# The study
# ---------------------------------------------------------------------------


def _max_p_axis(ax: Any, values: Sequence[float]) -> None:
    """max_p on a log axis (the RFC's values span 0.02 to 0.5) ticked at ``values``; a zero line."""
    ax.axhline(0, color="0.5", lw=0.6)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(list(values))
    ax.set_xticklabels([f"{v:g}" for v in values])
    ax.set_xlabel("max_p")
    ax.grid(True, alpha=0.3)


#: The note of the tables of the time above max_th.
_ABOVE_NOTE = (
    "Above max_th RED marks every ECN-capable packet (red_ecn = mark_above_max) or drops it "
    "(rfc3168) and drops every other: RFC 2884 §4.4 tuned RED so that the average stays "
    "out of this region ('If this is not maintained, then the queue acts like a Tail Drop "
    "queue and the advantages of ECN diminish'). calibration_max_above bounds it in the "
    "calibration."
)


def _level_label(level: int) -> str:
    name = LEVEL_NAMES.get(level)
    return f"{name} ({level})" if name else str(level)


class Rfc2884Study(Study):
    name = "rfc2884"
    title = "ECN on a Linux testbed: fairness, bulk transfers, transactions (RED/ECN vs drops)"
    source = (
        "J. Hadi Salim, U. Ahmed, Performance Evaluation of Explicit Congestion Notification "
        "(ECN) in IP Networks, RFC 2884, July 2000; STUDIES.md §1."
    )
    Params = Rfc2884Params
    # Measured 2026-12-02 (`ecnsim study run rfc2884 --jobs 2` from an empty store):
    # PGO wheels of main bede5e1 (shared machine, top priority) and of main 2172e3c
    # (idle); each value covers the larger of the two, then scaled by the render's
    # estimated wall time after branch render2 over before (its CPU measured before and
    # after on copies of the idle store; docs/performance.md, "Study run times").
    render_cost_s: ClassVar[float] = 13.0
    run_cost_scale: ClassVar[float] = 1.65
    plan_cost_s_per_run: ClassVar[float] = 0.0045
    derive_version = 1
    shared_tables = ("red_settings", "calibration", "calibration_above")

    def derived_columns(
        self, name: str, frame: pd.DataFrame, run_table: Callable[..., pd.DataFrame]
    ) -> pd.DataFrame:
        if name != "metrics" or "retransmits_ecn" not in frame.columns:
            return frame
        # A bulk run: each transfer's retransmissions per data packet it sent, from the run's
        # own flows table (STUDIES.md §1: "count retransmissions"; r2e).
        flows = run_table("flows", columns=RETRANSMIT_COLUMNS)
        out: pd.DataFrame = frame.assign(
            retransmit_pct_ecn=retransmit_pct(flows, "ECN-ON"),
            retransmit_pct_nonecn=retransmit_pct(flows, "ECN-OFF"),
        )
        return out

    # -- parameters -------------------------------------------------------------------

    def quick(self, params: Rfc2884Params) -> Rfc2884Params:
        return dataclasses.replace(
            params,
            seeds=1,
            ccs=("reno",),
            congestion_levels=(2, 10),
            max_p_values=(0.1,),
            fairness_max_p=(0.1,),
            fairness_duration_s=60.0,
            bulk_bytes=1 * MB,
            response_kb=(10.0,),
            transaction_s=40.0,
            calibration_min_th=(5.0, 12.0, 30.0),
            calibration_duration_s=50.0,
        )

    def quick_emulate(self, params: Rfc2884Params) -> Rfc2884Params:
        # Emulated runs take their duration in real time, one after another: four runs of
        # 12-14 s (fairness both ways, bulk and transactional at low congestion), about a
        # minute in all. The pilots stay simulated, as in --quick.
        return dataclasses.replace(
            self.quick(params),
            congestion_levels=(2,),
            competing_start_s=4.0,
            fairness_duration_s=14.0,
            bulk_bytes=200 * KB,
            bulk_time_factor=2.0,
            transaction_s=8.0,
        )

    def placeholder_params(self, params: Rfc2884Params) -> Rfc2884Params:
        # The first calibration candidate for every level not set yet: the thresholds do not
        # change how the points map onto real hosts.
        missing = [lv for lv in params.levels_needed() if params.setting(lv) is None]
        if not missing:
            return params
        lo, hi, buf = _candidates(params)[0]
        extra = tuple((float(lv), lo, hi, float(buf)) for lv in missing)
        return dataclasses.replace(params, red_settings=tuple(sorted(params.red_settings + extra)))

    def emulation_notes(self, p: Rfc2884Params) -> list[Choice]:
        return [
            Choice(
                "TCP variants",
                "reno and newreno both run as Linux 'reno' with SACK off, sack as Linux 'reno' "
                "with SACK on",
                "Linux has one Reno: its loss recovery handles partial ACKs as NewReno does, "
                "with Proportional Rate Reduction (RFC 6937), so the emulated reno and newreno "
                "points run the same real TCP; Linux cannot be set to RFC 2581 Reno.",
                "ccs",
            ),
            Choice(
                "Endpoints",
                f"today's Linux kernel with the {p.profile} profile's values where Linux has "
                "a setting (initial window, minimum RTO, ECN, SACK, timestamps off, delayed "
                "ACKs); Linux's own behaviour elsewhere (initial RTO 1 s, delayed-ACK timer, "
                "RTO estimator): the mapping table lists every parameter",
                "RFC 2884's testbed ran Linux 2.2/2.4; a modern kernel is the closest real stack.",
                "profile",
            ),
            Choice(
                "Background start times",
                f"the same as the simulated run of the same seed: U[0, {p.background_jitter_s:g}"
                " s) per background flow, drawn by the core when it resolves the scenario",
                "The resolved scenario (what both modes run) carries each flow's drawn start "
                "time, so a seed starts the real flows when it starts the simulated ones.",
                "background_jitter_s",
            ),
            Choice(
                "Timeouts and fast retransmits per transfer",
                "timeouts from the sender socket's TCP_INFO (tcpi_total_rto, Linux 6.7 and "
                "later; SYN timeouts included); fast retransmits are not measured (NaN)",
                "Linux counts fast retransmits only per network namespace, and the server "
                "sends every flow of a run; retransmissions are the socket's tcpi_total_retrans.",
            ),
            Choice(
                "Transactions",
                "one netperf-style TCP_CRR client program per measured client (ECN-ON, "
                "ECN-OFF): a new connection per transaction, 1 KB request, the response, close, "
                "at once again",
                "What netperf TCP_CRR does; Debian's netperf is not needed.",
            ),
            Choice(
                "Real time",
                "one emulated run at a time, each for its scenario's duration; the pilot "
                "(calibration) runs stay simulated",
                "Runs side by side on the same cores would delay each other's packets. The "
                "pilots only choose RED's settings, and the queue is ecnsim's core in both "
                "modes, so emulating them adds real time and no realism.",
            ),
        ]

    def setup(self, p: Rfc2884Params) -> list[tuple[str, str]]:
        one_way = p.one_way_delay_s() * 1e3
        rows = [
            (
                "topology",
                f"server --{p.access_mbps:g} Mb/s-- R1 =={p.bottleneck_mbps:g} Mb/s== R2 "
                f"--{p.access_mbps:g} Mb/s-- ECN-ON, ECN-OFF, C",
            ),
            (
                "path delay (R1-R2)",
                f"{one_way:g} ms each way ({p.path_delay_ms:g} ms, read as "
                f"{p.path_delay_is.replace('_', '-')}); access links {p.access_delay_ms:g} ms",
            ),
            ("bottleneck queue", "RED at R1 towards R2 (the testbed's CBQ-shaped 1.5 Mb/s)"),
            (
                "RED",
                f"w_q {p.w_q:g}; ECN-capable packets above max_th: "
                + ("marked (Linux sch_red)" if p.red_ecn == "mark_above_max" else "dropped")
                + "; thresholds and buffer per congestion level by the calibration below",
            ),
            ("RED settings (level: min_th / max_th / buffer, packets)", self._settings_text(p)),
            ("endpoints", f"ecnsim profile {p.profile} (Linux 2.2/2.4 TCP), MTU 1500"),
            ("TCP", ", ".join(p.ccs)),
            (
                "congestion levels (background FTP flows, non-ECN, from 0 s)",
                ", ".join(_level_label(n) for n in p.congestion_levels),
            ),
            ("experiments", ", ".join(p.experiments)),
            (
                "fairness",
                f"{p.fairness_background} background + 2 competing flows from "
                f"{p.competing_start_s:g} s, all ECN or all non-ECN; max_p "
                + ", ".join(f"{m:g}" for m in p.fairness_max_p)
                + f"; goodputs over [{p.competing_start_s:g}, {p.fairness_duration_s:g}] s",
            ),
            (
                "bulk",
                f"{p.bulk_bytes / MB:g} MB to ECN-ON and to ECN-OFF at {p.competing_start_s:g} s; "
                "max_p " + ", ".join(f"{m:g}" for m in p.max_p_values),
            ),
            (
                "transactional",
                f"netperf TCP_CRR, {p.request_bytes / KB:g} KB request, "
                + " / ".join(f"{r:g}" for r in p.response_kb)
                + f" KB response, no think time, {p.competing_start_s:g} s to "
                f"{p.competing_start_s + p.transaction_s:g} s; max_p "
                + ", ".join(f"{m:g}" for m in p.max_p_values),
            ),
            ("seeds per point", str(p.seeds)),
        ]
        return rows

    @staticmethod
    def _settings_text(p: Rfc2884Params) -> str:
        parts = []
        for level in p.levels_needed():
            s = p.setting(level)
            parts.append(
                f"{level}: " + (f"{s[0]:g} / {s[1]:g} / {s[2]}" if s else "(calibrated at run)")
            )
        return "; ".join(parts)

    def choices(self, p: Rfc2884Params) -> list[Choice]:
        return [
            Choice(
                "RED thresholds and buffer",
                "a calibration stage per congestion level: pilot runs of the level's load "
                f"({p.calibration_cc}, the background flows plus one ECN and one non-ECN "
                f"competing flow, {p.calibration_duration_s:g} s, the first "
                f"{p.calibration_warmup_s:g} s left out) for each candidate min_th in "
                + ", ".join(f"{m:g}" for m in p.calibration_min_th)
                + f" (max_th = {p.calibration_max_over_min:g} min_th, buffer = "
                f"{p.calibration_buffer_over_max:g} max_th) at the smallest and largest max_p "
                "the level runs; the smallest min_th whose average stays in [min_th, max_th) "
                f"at least {p.calibration_target:.0%} of the time at both"
                + (
                    f" and above max_th at most {p.calibration_max_above:.0%} of it"
                    if p.calibration_max_above < 1
                    else " (no bound on the time above max_th)"
                )
                + ", else the candidate closest to it",
                "RFC 2884 §4.4 gives RED's parameters only as a rule: 'we have to make sure "
                "that the average queue is maintained between minth and maxth. If this is not "
                "maintained, then the queue acts like a Tail Drop queue and the advantages of "
                "ECN diminish'; the authors 'fine-tuned the RED parameters such that the "
                "average queue zones around the RED region before running the experiment "
                "proper'. The failure it names is the average above max_th ('exceeds the "
                "maximum threshold most of the times'), which calibration_max_above bounds; "
                "the RFC states no share, so the 90 % target is a tolerance of the study's. "
                "The rule reads only the queue's average, never the experiments' results; "
                "the report shows every candidate's share and every point's time inside and "
                "above. Set red_settings to fix them by hand.",
                "red_settings, calibration_min_th, calibration_max_over_min, "
                "calibration_buffer_over_max, calibration_target, calibration_max_above",
            ),
            Choice(
                "RED above max_th",
                "ECN-capable packets are marked, others dropped; drops of ECN packets only "
                "when the buffer overflows"
                if p.red_ecn == "mark_above_max"
                else "every packet above max_th is dropped (RFC 3168 §7)",
                "Two readings, both in the source. Linux ('mark_above_max'): R1 ran the "
                "authors' ECN-patched Linux RED (§4: 'modified the code in the 2.1, 2.2 and 2.3 "
                "cases for the router portion'), and Linux's sch_red with ECN marks ECT packets "
                "above max_th too (tc-red's harddrop came later). The RFC's own text "
                "('rfc3168'): §1, 'mark the IP header instead of dropping packets (when the "
                "average queue size is between minth and maxth; above maxth arriving packets "
                "are dropped as before)', and §3.1 likewise (marks 'if the average queue "
                "size is between minth and maxth'). The text favours 'rfc3168'; the default "
                "stays the Linux "
                "reading until the lead decides (issue 31: the bulk advantage's trend with "
                "max_p follows it).",
                "red_ecn",
            ),
            Choice(
                "Path delay",
                f"{p.path_delay_ms:g} ms read as "
                + (
                    f"each way on the R1-R2 link (base RTT about {2 * p.path_delay_ms:g} ms)"
                    if p.path_delay_is == "one_way"
                    else f"the round trip ({p.path_delay_ms / 2:g} ms each way)"
                ),
                "RFC 2884 sets 'the latency of the link' on the delay router to 20 ms without "
                "saying per direction or per round trip; a delay emulator adds latency to the "
                "packets of each direction it shapes, so one way is the careful reading. "
                "The testbed's Ethernet segments are short: "
                f"{p.access_delay_ms:g} ms each.",
                "path_delay_ms, path_delay_is, access_delay_ms",
            ),
            Choice(
                "RED averaging weight and measure",
                f"w_q = {p.w_q:g}, average and thresholds in packets (1500-byte data packets); "
                "the rest of Linux RED as the profile has it (no gentle region, no wait, "
                "Linux's mark spacing, idle decay from the last dequeue)",
                "Not given; 0.002 is Floyd's recommended weight of the time. Linux counts "
                "bytes; with full-size data packets the two measures agree.",
                "w_q",
            ),
            Choice(
                "Fairness experiment",
                "two configurations: every flow (background and competing) ECN-capable, or none; "
                "Jain's index over the four flows' goodputs over "
                f"[{p.competing_start_s:g}, {p.fairness_duration_s:g}] s; drops (non-ECN) and "
                "marks (ECN) are the four flows' packets dropped or marked at any queue",
                "STUDIES.md: background flows all ECN or all non-ECN, and packets dropped for "
                "non-ECN flows compared with packets marked for ECN flows. The run length "
                "after the competing flows start is not given; "
                f"{p.fairness_duration_s - p.competing_start_s:g} s holds many RED cycles.",
                "fairness_duration_s, fairness_modes",
            ),
            Choice(
                "Bulk transfer goodput, retransmissions, timeouts",
                "goodput = 20 MB delivered in order / (completion - start), retransmitted "
                "bytes excluded; retransmissions = data segments sent again; timeouts = "
                "retransmission timeouts with data outstanding (each starts the retransmissions "
                "that 3 duplicate ACKs did not cause). A run lasts the competing start plus "
                f"{p.bulk_time_factor:g} x the fair-share transfer time; a transfer still "
                "running then reports its goodput so far and counts as incomplete",
                "STUDIES.md: goodput with retransmitted bytes excluded; timeouts are "
                "retransmissions not caused by 3 duplicate ACKs. Linux counts them the same way "
                "(one TCPTimeouts per expiry).",
                "bulk_bytes, bulk_time_factor",
            ),
            Choice(
                "Relative advantage and % decrease",
                "relative advantage = (ECN - nonECN) / nonECN of the same run (paired), then "
                "the mean over seeds with its CI; % decrease of retransmissions and timeouts = "
                "100 (nonECN - ECN) / nonECN of the means over seeds",
                "A run's ECN and non-ECN flows share its background traffic, so the paired "
                "ratio removes the run-to-run spread; counts can be 0 in one run, so their "
                "decrease is taken from the means.",
            ),
            Choice(
                "Start times",
                "background flows at 0 s plus U[0, "
                f"{p.background_jitter_s:g} s); competing flows and clients exactly at "
                f"{p.competing_start_s:g} s",
                "A testbed's flows started by scripts are never simultaneous; the jitter breaks "
                "the phase effects identical starts cause in a simulator.",
                "background_jitter_s, competing_start_s",
            ),
            Choice(
                "Endpoints",
                f"profile {p.profile}; the server ECN-capable (requests and accepts), ECN-ON "
                "ECN-capable, ECN-OFF and C not; the server opens the bulk and background "
                "connections, the clients open the TCP_CRR ones",
                "RFC 2884 ran Linux 2.2/2.4 with ECN patches; docs/profiles.md sources each "
                "value. Which end opens a bulk connection does not change its data path.",
                "profile",
            ),
        ]

    # -- runs -------------------------------------------------------------------------

    def findings(self, p: Rfc2884Params) -> list[Finding]:
        return rfc2884_findings(p)

    def readings(self, p: Rfc2884Params) -> list[Reading]:
        return rfc2884_readings(p)

    def grid(self, p: Rfc2884Params) -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = []
        if "fairness" in p.experiments:
            for cc in p.ccs:
                for mp in p.fairness_max_p:
                    for mode in p.fairness_modes:
                        points.append(
                            {
                                "experiment": "fairness",
                                "cc": cc,
                                "level": p.fairness_background,
                                "max_p": mp,
                                "mode": mode,
                            }
                        )
        if "bulk" in p.experiments:
            for cc in p.ccs:
                for level in p.congestion_levels:
                    for mp in p.max_p_values:
                        points.append({"experiment": "bulk", "cc": cc, "level": level, "max_p": mp})
        if "transactional" in p.experiments:
            for cc in p.ccs:
                for resp in p.response_kb:
                    for level in p.congestion_levels:
                        for mp in p.max_p_values:
                            points.append(
                                {
                                    "experiment": "transactional",
                                    "cc": cc,
                                    "response_kb": resp,
                                    "level": level,
                                    "max_p": mp,
                                }
                            )
        return points

    def _red(self, p: Rfc2884Params, level: int) -> tuple[float, float, int]:
        s = p.setting(level)
        if s is None:
            from ecnsim.studies._base import StudyError

            raise StudyError(
                f"rfc2884: no RED setting for congestion level {level}; the calibration stage "
                "chooses it (ecnsim study run does), or set red_settings"
            )
        return s

    def scenario(self, p: Rfc2884Params, point: Mapping[str, Any]) -> Scenario:
        exp = str(point["experiment"])
        cc = str(point["cc"])
        level = int(point["level"])
        max_p = float(point["max_p"])
        setting = self._red(p, level)
        start = p.competing_start_s
        if exp == "fairness":
            ecn = point["mode"] == "ECN"
            sc = testbed(
                p,
                name=f"rfc2884-fairness-{cc}-maxp{max_p:g}-{point['mode']}",
                duration_s=p.fairness_duration_s,
                warmup_s=start,
                cc=cc,
                max_p=max_p,
                red_setting=setting,
                ecn_clients={CLIENT_ON: ecn, CLIENT_OFF: ecn, CLIENT_C: ecn},
            )
            _background(sc, p, level)
            sc.flow(SERVER, CLIENT_ON, name="comp0", app=bulk(), start=start)
            sc.flow(SERVER, CLIENT_OFF, name="comp1", app=bulk(), start=start)
            return sc
        clients = {CLIENT_ON: True, CLIENT_OFF: False, CLIENT_C: False}
        if exp == "bulk":
            sc = testbed(
                p,
                name=f"rfc2884-bulk-{cc}-n{level}-maxp{max_p:g}",
                duration_s=p.bulk_duration_s(level),
                warmup_s=0.0,
                cc=cc,
                max_p=max_p,
                red_setting=setting,
                ecn_clients=clients,
            )
            _background(sc, p, level)
            sc.flow(SERVER, CLIENT_ON, name="ECN-ON", app=bulk(bytes=p.bulk_bytes), start=start)
            sc.flow(SERVER, CLIENT_OFF, name="ECN-OFF", app=bulk(bytes=p.bulk_bytes), start=start)
            return sc
        resp = float(point["response_kb"])
        sc = testbed(
            p,
            name=f"rfc2884-crr-{cc}-{resp:g}KB-n{level}-maxp{max_p:g}",
            duration_s=start + p.transaction_s,
            warmup_s=0.0,
            cc=cc,
            max_p=max_p,
            red_setting=setting,
            ecn_clients=clients,
        )
        _background(sc, p, level)
        model = crr(request=p.request_bytes, response=round(resp * KB), think_time=0)
        for host, group in ((CLIENT_ON, "ECN-ON"), (CLIENT_OFF, "ECN-OFF")):
            sc.app(model, clients=[host], servers=[SERVER], name=group, group=group, start=start)
        return sc

    def job(self, p: Rfc2884Params, point: Mapping[str, Any]) -> JobSpec:
        exp = str(point["experiment"])
        min_th, max_th, _buffer = self._red(p, int(point["level"]))
        context: dict[str, Any] = {
            "experiment": exp,
            "min_th": min_th,
            "max_th": max_th,
            "start_s": p.competing_start_s,
        }
        if exp == "fairness":
            context.update(warmup_s=p.competing_start_s, end_s=p.fairness_duration_s)
        elif exp == "bulk":
            context.update(end_s=p.bulk_duration_s(int(point["level"])))
        else:
            context.update(end_s=p.competing_start_s + p.transaction_s)
        keep: tuple[str, ...] = ("flows", "queues") if exp != "transactional" else ("queues",)
        return JobSpec(context=context, keep_tables=keep)

    @staticmethod
    def derive(
        results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
    ) -> dict[str, pd.DataFrame]:
        exp = context["experiment"]
        if exp == "pilot":
            return _derive_pilot(results, context)
        if exp == "fairness":
            return _derive_fairness(results, context)
        if exp == "bulk":
            return _derive_bulk(results, context)
        if exp == "transactional":
            return _derive_transactional(results, context)
        raise ValueError(f"rfc2884: unknown experiment {exp!r} in the job context")

    def estimate_seconds(self, p: Rfc2884Params, point: Mapping[str, Any]) -> float:
        # Measured with bench/study_timings.py (docs/performance.md, "Study run times"): a fixed
        # cost per run (plan, derive, store) plus per simulated second a constant and a term per
        # competing flow sharing the bottleneck; scaled by 0.645 to the whole study timed on the
        # idle machine (2026-11-24, 90.9 s of runs on 2 workers where 141 s were estimated).
        exp = point["experiment"]
        level = int(point["level"])
        if exp == "pilot":
            sim = p.calibration_duration_s
        elif exp == "fairness":
            sim = p.fairness_duration_s
        elif exp == "bulk":
            sim = p.bulk_duration_s(level)
        else:
            sim = p.competing_start_s + p.transaction_s
        return 0.052 + sim * (1.3e-5 + 3.2e-6 * level)

    # -- calibration ------------------------------------------------------------------

    def calibration(self, p: Rfc2884Params) -> Calibration | None:
        levels = [lv for lv in p.levels_needed() if p.setting(lv) is None]
        if not levels:
            return None
        points = [
            {
                "experiment": "pilot",
                "level": level,
                "min_th": lo,
                "max_th": hi,
                "buffer": buf,
                "max_p": mp,
            }
            for level in levels
            for (lo, hi, buf) in _candidates(p)
            for mp in p.pilot_max_p(level)
        ]

        def scenario(point: Mapping[str, Any]) -> Scenario:
            level = int(point["level"])
            sc = testbed(
                p,
                name=f"rfc2884-pilot-n{level}-min{point['min_th']:g}-maxp{point['max_p']:g}",
                duration_s=p.calibration_duration_s,
                warmup_s=p.calibration_warmup_s,
                cc=p.calibration_cc,
                max_p=float(point["max_p"]),
                red_setting=(
                    float(point["min_th"]),
                    float(point["max_th"]),
                    int(point["buffer"]),
                ),
                ecn_clients={CLIENT_ON: True, CLIENT_OFF: False, CLIENT_C: False},
            )
            _background(sc, p, level)
            sc.flow(SERVER, CLIENT_ON, name="ECN-ON", app=bulk())
            sc.flow(SERVER, CLIENT_OFF, name="ECN-OFF", app=bulk())
            return sc

        def job(point: Mapping[str, Any]) -> JobSpec:
            return JobSpec(
                context={
                    "experiment": "pilot",
                    "min_th": float(point["min_th"]),
                    "max_th": float(point["max_th"]),
                    "warmup_s": p.calibration_warmup_s,
                    "end_s": p.calibration_duration_s,
                },
                keep_tables=("queues",),
            )

        def apply(data: StudyData) -> Rfc2884Params:
            return self.apply_calibration(p, data.frame("metrics"))

        return Calibration(
            points=points,
            scenario=scenario,
            job=job,
            apply=apply,
            seeds=tuple(range(1, p.calibration_seeds + 1)),
        )

    def apply_calibration(self, p: Rfc2884Params, pilots: pd.DataFrame) -> Rfc2884Params:
        """``p`` with a RED setting for every level the pilot runs in ``pilots`` cover."""
        settings = list(p.red_settings)
        for level in p.levels_needed():
            if p.setting(level) is not None:
                continue
            part = pilots[pilots["level"] == level].rename(
                columns={"red_inside": "inside", "red_above": "above"}
            )
            if part.empty:
                continue
            chosen = choose_red_setting(
                part, target=p.calibration_target, max_above=p.calibration_max_above
            )
            settings.append(
                (float(level), chosen["min_th"], chosen["max_th"], float(chosen["buffer"]))
            )
        return dataclasses.replace(p, red_settings=tuple(sorted(settings)))

    # -- rendering --------------------------------------------------------------------

    def tables(self, p: Rfc2884Params, data: StudyData) -> dict[str, StudyTable]:
        runs = data.frame("metrics")
        out: dict[str, StudyTable] = {}
        out.update(self._calibration_tables(p, data))
        if runs.empty or "experiment" not in runs.columns:
            return out
        # Only the experiments with runs in the store (`--only experiment=bulk` plans no
        # fairness point, and the other experiments' tables have axes its runs lack).
        ran = set(runs["experiment"].unique())
        if "fairness" in p.experiments and "fairness" in ran:
            out.update(self._fairness_tables(p, runs))
        if "bulk" in p.experiments and "bulk" in ran:
            out.update(self._bulk_tables(p, runs))
        if "transactional" in p.experiments and "transactional" in ran:
            out.update(self._transactional_tables(p, runs))
        return out

    def _calibration_tables(self, p: Rfc2884Params, data: StudyData) -> dict[str, StudyTable]:
        rows = []
        for level in p.levels_needed():
            s = p.setting(level)
            if s is None:
                continue
            rows.append(
                {
                    "congestion level": _level_label(level),
                    "min_th": s[0],
                    "max_th": s[1],
                    "buffer": float(s[2]),
                }
            )
        out: dict[str, StudyTable] = {}
        if rows:
            mean = pd.DataFrame(rows).set_index("congestion level")
            mean.columns.name = "RED setting"
            out["red_settings"] = StudyTable(
                "RED thresholds and buffer per congestion level (the calibration's choice)",
                mean,
                unit="packets",
                note="Chosen by the calibration rule (Choices) from the pilot runs below, or set "
                "by red_settings.",
            )
        pilots = self._pilot_frame(p, data)
        if not pilots.empty:
            per = (
                pilots.groupby(["level", "min_th", "max_p"], as_index=False)["red_inside"]
                .mean()
                .assign(level=lambda d: d["level"].map(lambda v: _level_label(int(v))))
            )
            mean = per.pivot_table(
                index=["level", "min_th"], columns="max_p", values="red_inside", sort=False
            )
            mean.columns.name = "pilot max_p"
            out["calibration"] = StudyTable(
                "Calibration: time the RED average spent in [min_th, max_th) in each pilot run",
                mean,
                unit="share of samples",
                note=f"Rows: congestion level and candidate min_th (max_th = "
                f"{p.calibration_max_over_min:g} min_th, buffer = "
                f"{p.calibration_buffer_over_max:g} max_th); target "
                f"{p.calibration_target:.0%} at every pilot max_p.",
                digits=3,
            )
            if "red_above" in pilots.columns:
                above = (
                    pilots.groupby(["level", "min_th", "max_p"], as_index=False)["red_above"]
                    .mean()
                    .assign(level=lambda d: d["level"].map(lambda v: _level_label(int(v))))
                    .pivot_table(
                        index=["level", "min_th"], columns="max_p", values="red_above", sort=False
                    )
                )
                above.columns.name = "pilot max_p"
                bound = (
                    f"at most {p.calibration_max_above:.0%} at every pilot max_p"
                    if p.calibration_max_above < 1
                    else "no bound (calibration_max_above = 1)"
                )
                out["calibration_above"] = StudyTable(
                    "Calibration: time the RED average spent above max_th in each pilot run",
                    above,
                    unit="share of samples",
                    note=f"Rows as in the table above; {bound}. {_ABOVE_NOTE}",
                    digits=3,
                )
        return out

    @staticmethod
    def _pilot_frame(p: Rfc2884Params, data: StudyData) -> pd.DataFrame:
        """The pilot runs' metrics (empty if this render had no pilot stage)."""
        frame: pd.DataFrame = pd.DataFrame() if data.pilot is None else data.pilot.frame("metrics")
        return frame

    def _agg(
        self, runs: pd.DataFrame, exp: str, by: Sequence[str], metrics: Sequence[str]
    ) -> pd.DataFrame:
        part = runs[runs["experiment"] == exp]
        agg = aggregate(part, by=list(by), metrics=list(metrics))
        agg["ci"] = agg["ci_high"] - agg["mean"]
        return agg

    @staticmethod
    def _pivot(
        agg: pd.DataFrame,
        metric: str,
        index: Sequence[str],
        columns: Sequence[str],
        order: Mapping[str, Sequence[Any]],
        scale: float = 1.0,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        from ecnsim.studies._base import pivot

        mean, ci = pivot(agg, metric, index=index, columns=columns, scale=scale, order=order)
        return mean, ci

    def _fairness_tables(self, p: Rfc2884Params, runs: pd.DataFrame) -> dict[str, StudyTable]:
        by = ["cc", "max_p", "mode"]
        agg = self._agg(runs, "fairness", by, ["jain", "drops", "marks", "red_inside", "red_above"])
        order: dict[str, Sequence[Any]] = {
            "cc": list(p.ccs),
            "max_p": list(p.fairness_max_p),
            "mode": list(SIDES),
        }
        out = {}
        mean, ci = self._pivot(agg, "jain", ["max_p"], ["cc", "mode"], order)
        out["fairness_jain"] = StudyTable(
            "Fairness: Jain's index over the four flows' goodputs",
            mean,
            ci,
            note=f"{p.fairness_background} background + 2 competing flows, all ECN or all "
            "non-ECN. Rows: max_p; columns: TCP and configuration.",
            digits=3,
        )
        dm = agg[agg["metric"].isin(["drops", "marks"])]
        dm = dm[
            ((dm["metric"] == "drops") & (dm["mode"] == "non-ECN"))
            | ((dm["metric"] == "marks") & (dm["mode"] == "ECN"))
        ].copy()
        dm["what"] = np.where(dm["metric"] == "drops", "dropped (non-ECN)", "marked (ECN)")
        dm["metric"] = "packets"
        mean, ci = self._pivot(
            dm,
            "packets",
            ["max_p"],
            ["cc", "what"],
            {**order, "what": ["dropped (non-ECN)", "marked (ECN)"]},
        )
        out["fairness_drops_marks"] = StudyTable(
            "Fairness: packets dropped for non-ECN flows and marked for ECN flows",
            mean,
            ci,
            unit="packets",
            note=f"The four flows' packets over [{p.competing_start_s:g}, "
            f"{p.fairness_duration_s:g}] s.",
        )
        mean, ci = self._pivot(agg, "red_inside", ["max_p"], ["cc", "mode"], order)
        out["fairness_red_region"] = StudyTable(
            "Fairness: time the RED average spent in [min_th, max_th)",
            mean,
            ci,
            unit="share of samples",
            digits=3,
        )
        mean, ci = self._pivot(agg, "red_above", ["max_p"], ["cc", "mode"], order)
        out["fairness_red_above"] = StudyTable(
            "Fairness: time the RED average spent above max_th (RED's forced region)",
            mean,
            ci,
            unit="share of samples",
            note=_ABOVE_NOTE,
            digits=3,
        )
        return out

    def _level_rows(self, agg: pd.DataFrame) -> pd.DataFrame:
        agg = agg.copy()
        agg["congestion"] = agg["level"].map(lambda v: _level_label(int(v)))
        return agg

    def _bulk_tables(self, p: Rfc2884Params, runs: pd.DataFrame) -> dict[str, StudyTable]:
        by = ["cc", "level", "max_p"]
        metrics = [
            "goodput_kbps_ecn",
            "goodput_kbps_nonecn",
            "advantage",
            "retransmits_ecn",
            "retransmits_nonecn",
            "timeouts_ecn",
            "timeouts_nonecn",
            "complete_ecn",
            "complete_nonecn",
            "red_inside",
            "red_above",
        ]
        metrics += [m for m in ("retransmit_pct_ecn", "retransmit_pct_nonecn") if m in runs]
        agg = self._level_rows(self._agg(runs, "bulk", by, metrics))
        levels = [_level_label(n) for n in p.congestion_levels]
        order: dict[str, Sequence[Any]] = {
            "cc": list(p.ccs),
            "congestion": levels,
            "max_p": list(p.max_p_values),
        }
        out: dict[str, StudyTable] = {}
        sides = agg[agg["metric"].isin(["goodput_kbps_ecn", "goodput_kbps_nonecn"])].copy()
        sides["side"] = np.where(sides["metric"] == "goodput_kbps_ecn", "ECN", "non-ECN")
        sides["metric"] = "goodput"
        mean, ci = self._pivot(
            sides, "goodput", ["cc", "congestion"], ["max_p", "side"], {**order, "side": SIDES}
        )
        out["bulk_goodput"] = StudyTable(
            f"Bulk transfers: goodput of the {p.bulk_bytes / MB:g} MB transfers",
            mean,
            ci,
            unit="kb/s",
            note="Retransmitted bytes excluded. Rows: TCP and congestion level (background "
            "flows); columns: max_p and ECN-ON / ECN-OFF.",
        )
        mean, ci = self._pivot(agg, "advantage", ["cc", "congestion"], ["max_p"], order, 100.0)
        out["bulk_advantage"] = StudyTable(
            "Bulk transfers: relative advantage of ECN, (ECN - nonECN) / nonECN",
            mean,
            ci,
            unit="%",
            note="Paired per run, then the mean over seeds.",
        )
        for what, title in (("retransmits", "retransmissions"), ("timeouts", "timeouts")):
            part = agg[agg["metric"].isin([f"{what}_ecn", f"{what}_nonecn"])].copy()
            part["side"] = np.where(part["metric"] == f"{what}_ecn", "ECN", "non-ECN")
            part["metric"] = what
            mean, ci = self._pivot(
                part, what, ["cc", "congestion"], ["max_p", "side"], {**order, "side": SIDES}
            )
            out[f"bulk_{what}"] = StudyTable(
                f"Bulk transfers: {title} per transfer",
                mean,
                ci,
                unit="count",
                note="Timeouts: retransmission timeouts (the retransmissions not caused by 3 "
                "duplicate ACKs start at one)."
                if what == "timeouts"
                else "Data segments sent again.",
            )
            if what == "retransmits" and "retransmit_pct_ecn" in runs:
                part = agg[agg["metric"].str.startswith("retransmit_pct_")].copy()
                part["side"] = np.where(part["metric"] == "retransmit_pct_ecn", "ECN", "non-ECN")
                part["metric"] = "retransmit_pct"
                mean, ci = self._pivot(
                    part,
                    "retransmit_pct",
                    ["cc", "congestion"],
                    ["max_p", "side"],
                    {**order, "side": SIDES},
                )
                out["bulk_retransmit_pct"] = StudyTable(
                    "Bulk transfers: retransmissions per data packet sent",
                    mean,
                    ci,
                    unit="% of the transfer's data packets",
                    note="100 x packets_retransmitted / packets_sent of each transfer (its "
                    "flows table; retransmissions included in the packets sent). Finding r2e "
                    "reads the ECN side.",
                    digits=3,
                )
            dec = self._decrease(agg, what, order)
            out[f"bulk_{what}_decrease"] = StudyTable(
                f"Bulk transfers: % decrease in {title} with ECN",
                dec,
                unit="%",
                note="100 (nonECN - ECN) / nonECN of the means over seeds.",
            )
        mean, ci = self._pivot(agg, "red_inside", ["cc", "congestion"], ["max_p"], order)
        out["bulk_red_region"] = StudyTable(
            "Bulk transfers: time the RED average spent in [min_th, max_th)",
            mean,
            ci,
            unit="share of samples",
            note="From the competing flows' start to the later completion.",
            digits=3,
        )
        mean, ci = self._pivot(agg, "red_above", ["cc", "congestion"], ["max_p"], order)
        out["bulk_red_above"] = StudyTable(
            "Bulk transfers: time the RED average spent above max_th (RED's forced region)",
            mean,
            ci,
            unit="share of samples",
            note=_ABOVE_NOTE,
            digits=3,
        )
        mean, _ci = self._pivot(
            agg[agg["metric"] == "complete_ecn"].assign(metric="complete"),
            "complete",
            ["cc", "congestion"],
            ["max_p"],
            order,
        )
        mean2, _ci2 = self._pivot(
            agg[agg["metric"] == "complete_nonecn"].assign(metric="complete"),
            "complete",
            ["cc", "congestion"],
            ["max_p"],
            order,
        )
        if (mean.fillna(1) < 1).any().any() or (mean2.fillna(1) < 1).any().any():
            out["bulk_incomplete"] = StudyTable(
                "Bulk transfers: share of runs whose ECN transfer completed (incomplete runs "
                "report goodput so far)",
                mean,
                digits=3,
            )
        return out

    @staticmethod
    def _decrease(agg: pd.DataFrame, what: str, order: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
        from ecnsim.studies._base import pivot

        e, _ = pivot(agg, f"{what}_ecn", index=["cc", "congestion"], columns=["max_p"], order=order)
        n, _ = pivot(
            agg, f"{what}_nonecn", index=["cc", "congestion"], columns=["max_p"], order=order
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            dec: pd.DataFrame = 100.0 * (n - e) / n.where(n != 0)
        return dec

    def _transactional_tables(self, p: Rfc2884Params, runs: pd.DataFrame) -> dict[str, StudyTable]:
        by = ["cc", "response_kb", "level", "max_p"]
        agg = self._level_rows(
            self._agg(
                runs,
                "transactional",
                by,
                [
                    "tps_ecn",
                    "tps_nonecn",
                    "advantage",
                    "failed_ecn",
                    "failed_nonecn",
                    "red_inside",
                    "red_above",
                ],
            )
        )
        levels = [_level_label(n) for n in p.congestion_levels]
        order: dict[str, Sequence[Any]] = {
            "cc": list(p.ccs),
            "response_kb": list(p.response_kb),
            "congestion": levels,
            "max_p": list(p.max_p_values),
            "side": list(SIDES),
        }
        rows = ["cc", "response_kb", "congestion"]
        out: dict[str, StudyTable] = {}
        sides = agg[agg["metric"].isin(["tps_ecn", "tps_nonecn"])].copy()
        sides["side"] = np.where(sides["metric"] == "tps_ecn", "ECN", "non-ECN")
        sides["metric"] = "tps"
        mean, ci = self._pivot(sides, "tps", rows, ["max_p", "side"], order)
        out["transactions"] = StudyTable(
            "Transactional: netperf TCP_CRR transactions per second",
            mean,
            ci,
            unit="transactions/s",
            note=f"Over [{p.competing_start_s:g}, {p.competing_start_s + p.transaction_s:g}] s. "
            "Rows: TCP, response size (KB) and congestion level; columns: max_p and "
            "ECN-ON / ECN-OFF.",
        )
        mean, ci = self._pivot(agg, "advantage", rows, ["max_p"], order, 100.0)
        out["transactions_advantage"] = StudyTable(
            "Transactional: relative advantage of ECN in transactions per second",
            mean,
            ci,
            unit="%",
            note="(ECN - nonECN) / nonECN, paired per run, then the mean over seeds.",
        )
        failed = agg[agg["metric"].isin(["failed_ecn", "failed_nonecn"])]
        if not failed.empty and float(failed["mean"].fillna(0).abs().sum()) > 0:
            f2 = failed.copy()
            f2["side"] = np.where(f2["metric"] == "failed_ecn", "ECN", "non-ECN")
            f2["metric"] = "failed"
            mean, ci = self._pivot(f2, "failed", rows, ["max_p", "side"], order)
            out["transactions_failed"] = StudyTable(
                "Transactional: transactions whose connection gave up (SYN retries exhausted)",
                mean,
                ci,
                unit="transactions",
            )
        mean, ci = self._pivot(agg, "red_inside", rows, ["max_p"], order)
        out["transactions_red_region"] = StudyTable(
            "Transactional: time the RED average spent in [min_th, max_th)",
            mean,
            ci,
            unit="share of samples",
            digits=3,
        )
        mean, ci = self._pivot(agg, "red_above", rows, ["max_p"], order)
        out["transactions_red_above"] = StudyTable(
            "Transactional: time the RED average spent above max_th (RED's forced region)",
            mean,
            ci,
            unit="share of samples",
            note=_ABOVE_NOTE,
            digits=3,
        )
        return out

    def figures(self, p: Rfc2884Params, data: StudyData) -> Figures:
        runs = data.frame("metrics")
        figs: Figures = {}
        if runs.empty or "experiment" not in runs.columns:
            return figs
        if "bulk" in p.experiments and (runs["experiment"] == "bulk").any():
            figs.update(self._bulk_figures(p, runs))
        if "transactional" in p.experiments and (runs["experiment"] == "transactional").any():
            figs.update(self._transactional_figures(p, runs))
        return figs

    def _panels(self, n: int) -> tuple[Any, np.ndarray]:
        from ecnsim.output.plot import _figure

        ncols = min(3, max(1, n))
        nrows = math.ceil(n / ncols)
        fig = _figure(3.8 * ncols + 0.8, 3.0 * nrows + 0.7)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
        for ax in axes[n:]:
            ax.set_visible(False)
        return fig, axes

    def _curves(
        self,
        ax: Any,
        agg: pd.DataFrame,
        metric: str,
        levels: Sequence[int],
        scale: float,
        max_p: Sequence[float],
    ) -> None:
        part = agg[agg["metric"] == metric]
        for level in levels:
            c = part[part["level"] == level].sort_values("max_p")
            if c.empty:
                continue
            x = c["max_p"].to_numpy(dtype=float)
            y = c["mean"].to_numpy(dtype=float) * scale
            err = np.nan_to_num(c["ci"].to_numpy(dtype=float) * scale)
            ax.errorbar(
                x, y, yerr=err, marker="o", ms=3, capsize=2, lw=1.1, label=_level_label(level)
            )
        _max_p_axis(ax, max_p)

    def _bulk_figures(self, p: Rfc2884Params, runs: pd.DataFrame) -> Figures:
        by = ["cc", "level", "max_p"]
        agg = self._agg(
            runs,
            "bulk",
            by,
            [
                "advantage",
                "retransmits_ecn",
                "retransmits_nonecn",
                "timeouts_ecn",
                "timeouts_nonecn",
            ],
        )
        figs: Figures = {}
        fig, axes = self._panels(len(p.ccs))
        for ax, cc in zip(axes, p.ccs, strict=False):
            self._curves(
                ax, agg[agg["cc"] == cc], "advantage", p.congestion_levels, 100.0, p.max_p_values
            )
            ax.set_title(cc, fontsize="medium")
        axes[0].set_ylabel("relative advantage of ECN (%)")
        axes[0].legend(fontsize="small", title="congestion")
        fig.suptitle("Bulk transfers: (ECN - nonECN) / nonECN goodput")
        figs["bulk_advantage"] = (
            fig,
            "Relative advantage of ECN in bulk-transfer goodput against max_p, one line per "
            "congestion level, one panel per TCP (mean over seeds, 95% CI).",
        )
        # % decrease in retransmissions and timeouts (from the means).
        rows = []
        for (cc_name, level, mp), g in agg.groupby(["cc", "level", "max_p"], sort=True):
            means = g.set_index("metric")["mean"]
            rows.append(
                {
                    "cc": cc_name,
                    "level": level,
                    "max_p": mp,
                    "retransmits": percent_decrease(
                        means.get("retransmits_ecn", math.nan),
                        means.get("retransmits_nonecn", math.nan),
                    ),
                    "timeouts": percent_decrease(
                        means.get("timeouts_ecn", math.nan), means.get("timeouts_nonecn", math.nan)
                    ),
                }
            )
        dec = pd.DataFrame(rows)
        for what in ("retransmits", "timeouts"):
            fig, axes = self._panels(len(p.ccs))
            for ax, cc in zip(axes, p.ccs, strict=False):
                part = dec[dec["cc"] == cc]
                for level in p.congestion_levels:
                    c = part[part["level"] == level].sort_values("max_p")
                    if not c.empty:
                        ax.plot(
                            c["max_p"], c[what], marker="o", ms=3, lw=1.1, label=_level_label(level)
                        )
                _max_p_axis(ax, p.max_p_values)
                ax.set_title(cc, fontsize="medium")
            name = "retransmissions" if what == "retransmits" else "timeouts"
            axes[0].set_ylabel(f"% decrease in {name} with ECN")
            axes[0].legend(fontsize="small", title="congestion")
            fig.suptitle(f"Bulk transfers: % decrease in {name}, 100 (nonECN - ECN) / nonECN")
            figs[f"bulk_{what}_decrease"] = (
                fig,
                f"Percent decrease in {name} of the ECN transfer against the non-ECN one, by "
                "max_p and congestion level (from the means over seeds).",
            )
        return figs

    def _transactional_figures(self, p: Rfc2884Params, runs: pd.DataFrame) -> Figures:
        agg = self._agg(
            runs, "transactional", ["cc", "response_kb", "level", "max_p"], ["advantage"]
        )
        figs: Figures = {}
        for cc in p.ccs:
            fig, axes = self._panels(len(p.response_kb))
            for ax, resp in zip(axes, p.response_kb, strict=False):
                part = agg[(agg["cc"] == cc) & np.isclose(agg["response_kb"].astype(float), resp)]
                self._curves(ax, part, "advantage", p.congestion_levels, 100.0, p.max_p_values)
                ax.set_title(f"{resp:g} KB responses", fontsize="medium")
            axes[0].set_ylabel("relative advantage of ECN (%)")
            axes[0].legend(fontsize="small", title="congestion")
            fig.suptitle(f"Transactions per second, (ECN - nonECN) / nonECN, {cc}")
            figs[f"transactions_advantage_{cc}"] = (
                fig,
                f"Relative advantage of ECN in TCP_CRR transactions per second ({cc}) against "
                "max_p, one line per congestion level, one panel per response size (mean over "
                "seeds, 95% CI).",
            )
        return figs
