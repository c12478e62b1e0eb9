"""``rfc2415``: larger initial windows with web and FTP traffic (STUDIES.md §2).

Source: K. Poduri and K. Nichols, "Simulation Studies of Increased Initial
TCP Window Size", RFC 2415 (September 1998), ns-2 with the authors' tcp-full
applications. ``docs/studies/rfc2415.md``.

Web clients (8, 16 or 32) and FTP clients (0 to 3) on four client nodes
fetch from servers on four server nodes across a 1.5 Mb/s, 50 ms bottleneck
with 25-packet DropTail buffers; every TCP connection starts with the same
initial window IW in {1, 2, 3, 4}. Experiments:

- ``http10``: HTTP/1.0 pages (Tables 1, 2, 3; Figures 1, 2);
- ``http11``: the RFC's "rough model" of HTTP/1.1, one connection carrying
  all four objects (Tables 4, 5; Figures 3, 4);
- ``half``: "half and half", 16 / 32 / 64 web clients all with IW=1, all
  with IW=3, and split into an IW=1 half and an IW=3 half (Table 6);
- ``red``: RED at the bottleneck with IW=1 (RFC 2415 §4 reports only that it
  gave "similar performance gains" to a larger IW).
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
from ecnsim.analysis.aggregate import aggregate
from ecnsim.scenario.spec import Scenario, droptail, red
from ecnsim.scenario.workloads import empirical, ftp, http, uniform
from ecnsim.studies._base import (
    Choice,
    Figures,
    JobSpec,
    Study,
    StudyData,
    StudyParams,
    StudyTable,
)
from ecnsim.studies.findings import ALMOST_ALL, Alternative, Cell, Delta, Finding, Reading

__all__ = [
    "EXPERIMENTS",
    "ROLES",
    "Rfc2415Params",
    "Rfc2415Study",
    "derive_rfc2415",
    "network_power",
    "paired_change",
]

Experiment = Literal["http10", "http11", "half", "red"]
#: The experiments, in the RFC's order.
EXPERIMENTS: tuple[str, ...] = ("http10", "http11", "half", "red")
#: The HTTP model of each experiment (``docs/models/http.md``).
HTTP_VERSION = {"http10": "http10", "http11": "http11_rfc2415", "half": "http10", "red": "http10"}

#: Client and server nodes (RFC 2415 §2's figure: n2..n5 and n6..n9 around n0 == n1).
CLIENT_NODES = ("n2", "n3", "n4", "n5")
SERVER_NODES = ("n6", "n7", "n8", "n9")
#: The bottleneck's data direction (servers -> clients): the queue the RFC reports.
BOTTLENECK = "n1->n0"

#: The client populations a run reports: web (one IW), the halves of a split (IW
#: ``half_iws[0]`` and ``half_iws[1]``), FTP. Each is an app of that name.
ROLES = ("web", "web_half1", "web_half2", "ftp")
#: The per-role metrics of a run (``<role>_<metric>`` columns of the ``metrics`` table).
ROLE_METRICS = (
    "goodput_mb",
    "delay_s",
    "power",
    "completed",
    "unfinished",
    "unfinished_pct",
    "drop_pct",
    "share_pct",
)


@dataclass(frozen=True)
class Rfc2415Params(StudyParams):
    """RFC 2415 §2's setup as defaults; every reading of what it leaves open is a field."""

    experiments: tuple[Experiment, ...] = EXPERIMENTS  # type: ignore[assignment]
    #: Web clients (RFC 2415 §2: "8, 16, 32 web clients").
    webs_values: tuple[int, ...] = (8, 16, 32)
    #: FTP clients ("a number of ftp clients ranging from 0 to 3").
    ftps_values: tuple[int, ...] = (0, 1, 2, 3)
    #: Initial windows, segments ("The IW was varied from 1 to 4").
    iw_values: tuple[int, ...] = (1, 2, 3, 4)
    #: Half and half: total web clients (16, 32, 64), their two IWs, FTP clients.
    half_webs_values: tuple[int, ...] = (16, 32, 64)
    half_iws: tuple[int, ...] = (1, 3)
    half_ftps: int = 0
    #: RED at the bottleneck: the IWs run (§4: "with an IW of 1").
    red_iw_values: tuple[int, ...] = (1,)
    #: RED's parameters: ns-2's defaults of 1997-98 (``Queue/RED`` in ``ns-default.tcl``).
    red_min_th: float = 5.0
    red_max_th: float = 15.0
    red_w_q: float = 0.002
    red_max_p: float = 0.1
    red_gentle: bool = False
    bottleneck_mbps: float = 1.5
    bottleneck_delay_ms: float = 50.0
    #: How the "50 ms" of the bottleneck reads: each way (ns-2's link delay) or the round trip.
    bottleneck_delay_is: Literal["one_way", "round_trip"] = "one_way"
    access_mbps: float = 10.0
    #: Not given by the RFC (a choice).
    access_delay_ms: float = 1.0
    #: Every queue ("buffer sizes were set at 25 packets").
    buffer_packets: int = 25
    #: Payload bytes per segment ("maximum packet (or segment) size to 1460 bytes").
    mss: int = 1460
    #: Data segments carry 40 B of IP + TCP headers on the wire (tcp-full does).
    headers_on_data: bool = True
    #: Largest window, packets ("The maximum tcp window was set to 11 packets").
    window_packets: int = 11
    cc: Literal["reno", "newreno", "sack", "tahoe"] = "reno"
    handshake: bool = True
    delayed_ack: bool = False
    #: Embedded objects per page ("all web pages had exactly three embedded URLs").
    embedded: int = 3
    #: Shipped size tables (``docs/models/http.md``): objects and requests.
    object_size_table: str = "mah97_reply"
    request_size_table: str = "mah97_request"
    #: Think time between a page's end and the next request: uniform [min, max] s.
    think_min_s: float = 1.0
    think_max_s: float = 5.0
    #: FTP file size ("all ftps transferred 1-MB files"), bytes.
    ftp_file_bytes: int = 1_000_000
    #: Each client (web and FTP) starts at U[0, start_jitter_s).
    start_jitter_s: float = 5.0
    duration_s: float = 360.0
    #: Records that start before this and traffic before it are left out (0: the whole run).
    warmup_s: float = 0.0
    profile: str = "ns2-2001"
    #: Network power's units: goodput volume over delay ("MB/ms", the RFC's) or rate over delay.
    power_units: Literal["MB/ms", "Mb/s/s"] = "MB/ms"
    #: Scenarios ("webs/ftps") the normalized-power figures draw dashed (the RFC's pathological).
    pathological: tuple[str, ...] = ("32/1", "32/2", "32/3")
    #: Where page-delay CDFs are kept (every IW, both HTTP models): web clients, FTP clients.
    cdf_webs: int = 16
    cdf_ftps: tuple[int, ...] = (0, 1)

    def bottleneck_one_way_ms(self) -> float:
        """The bottleneck's delay each way: ``bottleneck_delay_ms``, or half of it when
        ``bottleneck_delay_is`` reads it as the round trip."""
        d = self.bottleneck_delay_ms
        return d if self.bottleneck_delay_is == "one_way" else d / 2

    def check(self) -> None:
        if not self.experiments:
            raise ValueError("experiments: at least one of " + ", ".join(EXPERIMENTS))
        for name in ("webs_values", "half_webs_values"):
            if any(w < 1 for w in getattr(self, name)):
                raise ValueError(f"{name}: each must be >= 1, got {getattr(self, name)}")
        if any(f < 0 for f in self.ftps_values) or self.half_ftps < 0:
            raise ValueError(
                f"ftps_values and half_ftps must be >= 0, got {self.ftps_values}, {self.half_ftps}"
            )
        for name in ("iw_values", "half_iws", "red_iw_values"):
            if any(not 1 <= iw <= 10000 for iw in getattr(self, name)):
                raise ValueError(f"{name}: each IW must be in 1..10000, got {getattr(self, name)}")
        if len(self.half_iws) != 2 or self.half_iws[0] == self.half_iws[1]:
            raise ValueError(f"half_iws: two different IWs, got {self.half_iws}")
        if any(w % 2 for w in self.half_webs_values):
            raise ValueError(f"half_webs_values: each must be even, got {self.half_webs_values}")
        if not 0 <= self.red_min_th < self.red_max_th <= self.buffer_packets:
            raise ValueError(
                "need 0 <= red_min_th < red_max_th <= buffer_packets, got "
                f"{self.red_min_th}, {self.red_max_th}, {self.buffer_packets}"
            )
        if not 0 < self.red_max_p <= 1 or not 0 < self.red_w_q <= 1:
            raise ValueError(
                f"red_max_p and red_w_q must be in (0, 1], got {self.red_max_p}, {self.red_w_q}"
            )
        if not 0 <= self.think_min_s <= self.think_max_s:
            raise ValueError(
                f"need 0 <= think_min_s <= think_max_s, got {self.think_min_s}, {self.think_max_s}"
            )
        if not 0 <= self.warmup_s < self.duration_s:
            raise ValueError(
                f"need 0 <= warmup_s < duration_s, got {self.warmup_s}, {self.duration_s}"
            )
        if not 0 <= self.start_jitter_s <= self.duration_s:
            raise ValueError(
                f"start_jitter_s must be in [0, duration_s], got {self.start_jitter_s}"
            )
        if self.embedded < 0 or self.window_packets < 1 or self.buffer_packets < 1:
            raise ValueError(
                "embedded >= 0, window_packets >= 1 and buffer_packets >= 1 required, got "
                f"{self.embedded}, {self.window_packets}, {self.buffer_packets}"
            )
        for s in self.pathological:
            _parse_scenario_label(s, "pathological")
        if self.seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {self.seeds}")


def _parse_scenario_label(text: str, field: str) -> tuple[int, int]:
    webs, sep, ftps = str(text).partition("/")
    try:
        if not sep:
            raise ValueError
        return int(webs), int(ftps)
    except ValueError:
        raise ValueError(f"{field}: write WEBS/FTPS (e.g. 32/1), got {text!r}") from None


def iw_label(iws: Sequence[int]) -> str:
    """The ``iw`` axis value: ``"3"`` for one IW, ``"1/3"`` for a half-and-half split."""
    return "/".join(str(i) for i in iws)


# ---------------------------------------------------------------------------
# Metrics of one run
# ---------------------------------------------------------------------------


def network_power(goodput_bytes: float, delay_s: float, interval_s: float, units: str) -> float:
    """RFC 2415 §3's network power, "goodput divided by median delay (in Mbytes/ms)".

    ``units="MB/ms"``: the goodput volume (MB = 10^6 bytes delivered over the
    measured interval) over the median delay in ms, as the RFC writes it;
    ``"Mb/s/s"``: the goodput rate (Mb/s) over the median delay in s
    (Kleinrock's power). The two differ by a constant factor for a fixed run
    length. NaN for a delay that is not positive or not known.
    """
    if not delay_s > 0 or math.isnan(goodput_bytes):
        return math.nan
    if units == "MB/ms":
        return (goodput_bytes / 1e6) / (delay_s * 1e3)
    if units == "Mb/s/s":
        return analysis.network_power(goodput_bytes * 8 / 1e6 / interval_s, delay_s)
    raise ValueError(f"power units must be 'MB/ms' or 'Mb/s/s', got {units!r}")


def _role_metrics(
    records: pd.DataFrame,
    flows: pd.DataFrame,
    role: str,
    kind: str,
    *,
    warmup_s: float,
    end_s: float,
    capacity_bps: float,
    power_units: str,
) -> dict[str, float]:
    """One client population's goodput, median delay, power, drops and link share."""
    interval = end_s - warmup_s
    mine = flows[flows["app"] == role]
    goodput_bytes = float(mine["reverse_bytes_delivered"].sum())
    recs = records[(records["group"] == role) & (records["kind"] == kind)] if len(records) else None
    if recs is not None and len(recs):
        # RFC 2415 §2: the median page (or file) delay; unfinished records are censored
        # (Kaplan-Meier in record_metrics), failed ones never complete.
        rm = analysis.record_metrics(
            recs, kind=kind, by=None, interval_s=(warmup_s, end_s), quantiles=(0.5,)
        ).iloc[0]
        delay = float(rm["p50_response_time_s"])
        completed = float(rm["count"])
        unfinished = float(rm["in_progress"] + rm["failed"])
    else:
        delay, completed, unfinished = math.nan, 0.0, 0.0
    total = completed + unfinished
    # Every data segment of the population's connections, both directions, retransmissions
    # included; drops count packets of these connections dropped anywhere.
    packets = float(mine["packets_sent"].sum() + mine["reverse_packets_sent"].sum())
    return {
        "goodput_mb": goodput_bytes / 1e6,
        "delay_s": delay,
        "power": network_power(goodput_bytes, delay, interval, power_units),
        "completed": completed,
        "unfinished": unfinished,
        "unfinished_pct": 100.0 * unfinished / total if total else math.nan,
        "drop_pct": 100.0 * float(mine["drops"].sum()) / packets if packets else math.nan,
        "share_pct": 100.0 * goodput_bytes * 8 / (capacity_bps * interval),
    }


def derive_rfc2415(
    results: Any, trace: Mapping[str, Any] | None, context: Mapping[str, Any]
) -> dict[str, pd.DataFrame]:
    """Reduce one run to the RFC's measures.

    ``metrics`` (one row): the bottleneck's utilization and drop rate (%),
    and per client population (``web``, the halves ``web_half1``/``web_half2``,
    ``ftp``; NaN where the run has none) its goodput (MB), median delay (s),
    network power, records completed and unfinished, drop rate of its own
    packets (%) and goodput share of the link (%). ``groups``: the same per
    population, one row each. At the CDF points also ``pages``: every page's
    response time and state.
    """
    warmup = float(context["warmup_s"])
    end = float(context["end_s"])
    capacity = float(context["capacity_bps"])
    # Per connection population: [[flows]] rows, and the workloads' connections summed per
    # app (the `apps` table); both carry these columns, counted over [warm-up, end].
    cols = ["app", "reverse_bytes_delivered", "packets_sent", "reverse_packets_sent", "drops"]
    flows = pd.concat([results.flows[cols], results.apps[cols]], ignore_index=True)
    queues = results.queues
    records = results.table("records").to_pandas()
    bq = queues.loc[queues["queue"] == context["bottleneck"]].iloc[0]
    arrivals = float(bq["arrivals"])
    metrics: dict[str, float] = {
        "util_pct": 100.0 * float(bq["utilization"]),
        "drop_pct": 100.0 * float(bq["drops"]) / arrivals if arrivals else math.nan,
        "bottleneck_arrivals": arrivals,
        "bottleneck_drops": float(bq["drops"]),
    }
    rows = []
    present = {str(r): str(k) for r, k in context["roles"]}
    for role in ROLES:
        if role in present:
            m = _role_metrics(
                records,
                flows,
                role,
                present[role],
                warmup_s=warmup,
                end_s=end,
                capacity_bps=capacity,
                power_units=str(context["power_units"]),
            )
            rows.append({"role": role, **m})
        else:
            m = dict.fromkeys(ROLE_METRICS, math.nan)
        for k, v in m.items():
            metrics[f"{role}_{k}"] = v
    out = {"metrics": pd.DataFrame([metrics]), "groups": pd.DataFrame(rows)}
    if context.get("keep_pages"):
        pages = records[(records["kind"] == "page") & (records["start_s"] >= warmup)]
        out["pages"] = pages[["group", "start_s", "response_time_s", "state"]].reset_index(
            drop=True
        )
    return out


# ---------------------------------------------------------------------------
# Cross-run measures: changes against a baseline of the same seed
# ---------------------------------------------------------------------------


def paired_change(
    frame: pd.DataFrame,
    metric: str,
    baseline: Mapping[str, Any],
    *,
    keys: Sequence[str] = ("webs", "ftps"),
    kind: Literal["decrease_pct", "ratio"] = "decrease_pct",
) -> pd.Series:
    """Each run's ``metric`` against the baseline run of the same scenario and seed.

    ``baseline`` selects the baseline runs (``{"experiment": "http10", "iw": "1"}``);
    ``keys`` and ``seed`` pair each run with its baseline. ``"decrease_pct"``
    is ``100 (base - x) / base`` (RFC 2415 Tables 1 and 4: "% decrease"),
    ``"ratio"`` is ``x / base`` (Figures 2 and 4: power normalized to IW=1).
    Each seed gives one estimate of the change; their spread over seeds is
    the change's uncertainty.
    NaN where the baseline run is missing.
    """
    mask = np.ones(len(frame), dtype=bool)
    for k, v in baseline.items():
        mask &= (frame[k].astype(str) == str(v)).to_numpy()
    on = [*keys, "seed"]
    base = frame.loc[mask, [*on, metric]].rename(columns={metric: "__base"})
    base = base.drop_duplicates(subset=on)
    merged = frame[[*on, metric]].merge(base, on=on, how="left")
    x = merged[metric].to_numpy(dtype=float)
    b = merged["__base"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 100.0 * (b - x) / b if kind == "decrease_pct" else x / b
    out = np.where(np.isfinite(out), out, np.nan)
    return pd.Series(out, index=frame.index)


# ---------------------------------------------------------------------------
# The RFC's findings and the readings they depend on (issue 31)
# ---------------------------------------------------------------------------


def rfc2415_findings(p: Rfc2415Params) -> list[Finding]:
    """RFC 2415's findings (STUDIES.md §2, i1-i4) as cells over the grid: directions only.

    Each compares the largest IW with the smallest (``iw_values``) at the same load
    (web and FTP clients), for HTTP/1.0 and 1.1."""
    lo, hi = iw_label([min(p.iw_values)]), iw_label([max(p.iw_values)])
    loads = [(w, f) for w in p.webs_values for f in p.ftps_values]

    def pair(exp: str, w: int, f: int) -> tuple[dict[str, Any], dict[str, Any]]:
        return (
            {"experiment": exp, "webs": w, "ftps": f, "iw": hi},
            {"experiment": exp, "webs": w, "ftps": f, "iw": lo},
        )

    def cells(metric: str, *, higher: bool) -> list[Cell]:
        if hi == lo:
            return []
        return [
            Cell(metric, *pair(exp, w, f), higher=higher)
            for exp in ("http10", "http11")
            for w, f in loads
        ]

    split = iw_label(p.half_iws)
    return [
        Finding(
            "i1",
            "A larger initial window lowers the median page delay at every load, for HTTP/1.0 "
            "and HTTP/1.1",
            "§3",
            lambda p: cells("web_delay_s", higher=False),
        ),
        Finding(
            "i2",
            "Drop rates at the bottleneck rise (a little) with the initial window",
            "§3",
            lambda p: cells("drop_pct", higher=True),
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more ('a little')",
            note="'Utilization changes little' is not a direction and is not judged.",
        ),
        Finding(
            "i3",
            "Network power of the web traffic rises with the initial window",
            "§3",
            lambda p: cells("web_power", higher=True),
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more (a general statement)",
            note="'More when web traffic dominates than when bulk does' is i3b.",
        ),
        Finding(
            "i3b",
            "Network power of the web traffic rises more with the initial window when web "
            "traffic dominates (no or fewest FTP clients) than when bulk traffic does (most FTP "
            "clients)",
            "§3",
            lambda p: [
                Cell(
                    "web_power",
                    Delta(*pair(exp, w, min(p.ftps_values)), relative=True),
                    Delta(*pair(exp, w, max(p.ftps_values)), relative=True),
                )
                for exp in ("http10", "http11")
                for w in p.webs_values
                if hi != lo and min(p.ftps_values) != max(p.ftps_values)
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more (a general statement)",
            note="A comparison of changes: per seed and number of web clients, the web power "
            "at the largest IW over at the smallest, minus 1 (the RFC's figures normalize "
            "power to IW=1), with the fewest FTP clients against the same with the most.",
        ),
        Finding(
            "i4",
            f"In the half-and-half runs the IW={max(p.half_iws)} half gets lower median page "
            f"delays than the IW={min(p.half_iws)} half",
            "§3 (half and half)",
            lambda p: [
                Cell(
                    "delay_s",
                    {"experiment": "half", "webs": w, "ftps": p.half_ftps, "iw": split},
                    {"experiment": "half", "webs": w, "ftps": p.half_ftps, "iw": split},
                    higher=False,
                    table="groups",
                    where={"role": "web_half2" if p.half_iws[1] > p.half_iws[0] else "web_half1"},
                    ref_where={
                        "role": "web_half1" if p.half_iws[1] > p.half_iws[0] else "web_half2"
                    },
                )
                for w in p.half_webs_values
                if p.half_iws[0] != p.half_iws[1]
            ],
        ),
    ]


def rfc2415_readings(p: Rfc2415Params) -> list[Reading]:
    """The choices of the setup that can change a finding, each with the RFC's evidence."""
    one_way = Alternative(
        "one_way",
        "the RFC's figure gives the bottleneck as '1.5Mb, 50ms' and its abstract says the "
        "simulations ran ns-2, whose link delay is the one-way propagation delay",
        settings={"bottleneck_delay_is": "one_way"},
    )
    round_trip = Alternative(
        "round_trip",
        "the RFC states no round-trip time, so '50 ms' may be the path's (25 ms each way)",
        settings={"bottleneck_delay_is": "round_trip"},
    )
    with_syn = Alternative(
        "handshake",
        "§2: 'only ACKs, SYNs, FINs, and URLs are flowing from left to right' (ns-2's "
        "tcp-full, which opens and closes connections)",
        settings={"handshake": True},
    )
    no_syn = Alternative(
        "no handshake",
        "ns-2's one-way TCP agents send no SYN; the RFC does not name its agent",
        settings={"handshake": False},
    )
    other = "rfc" if p.profile != "rfc" else "ns2-2001"
    return [
        Reading(
            "bottleneck_delay_is",
            "The bottleneck's '50 ms': each way, or the round trip?",
            (one_way, round_trip) if p.bottleneck_delay_is == "one_way" else (round_trip, one_way),
        ),
        Reading(
            "handshake",
            "Does every connection open with a handshake (and close with FINs)?",
            (with_syn, no_syn) if p.handshake else (no_syn, with_syn),
        ),
        Reading(
            "profile",
            "The TCP details: the source simulator's (ns-2 of the time) or the RFCs'?",
            (
                Alternative(
                    p.profile,
                    "the RFC's abstract: 'the simulations were performed using the publicly "
                    "available ns-2 simulator' (docs/profiles.md: ns2-2001)",
                    settings={"profile": p.profile},
                ),
                Alternative(
                    other,
                    "no text of the source asks for it: a control, showing which findings "
                    "rest on ns-2's implementation details",
                    settings={"profile": other},
                ),
            ),
        ),
    ]


# ---------------------------------------------------------------------------
# Table layout helpers
# ---------------------------------------------------------------------------


def _select(df: pd.DataFrame, **where: Any) -> pd.DataFrame:
    mask = np.ones(len(df), dtype=bool)
    for k, v in where.items():
        mask &= (df[k].astype(str) == str(v)).to_numpy()
    rows: pd.DataFrame = df[mask]
    return rows


def _agg(df: pd.DataFrame, metrics: Sequence[str], by: Sequence[str]) -> pd.DataFrame:
    keep = [m for m in metrics if m in df.columns]
    if df.empty or not keep:
        empty: pd.DataFrame = pd.DataFrame(columns=[*by, "metric", "runs", "mean", "ci"])
        return empty
    agg: pd.DataFrame = aggregate(df, by=list(by), metrics=keep).rename(columns={"n": "runs"})
    agg["ci"] = agg["ci_high"] - agg["mean"]
    return agg


class _Means:
    """An aggregate frame's (:func:`_agg`) means and CIs, read out as table columns.

    The rows of each ``(metric, *where values)`` are found in one grouping of the frame per
    set of ``where`` keys, made at the first lookup, and a column is put together from the
    frame's arrays: a study's table reads hundreds of columns from the same aggregate, and a
    text comparison over the whole frame, then a reindex, per column was most of the tables'
    time."""

    def __init__(self, agg: pd.DataFrame) -> None:
        self.agg = agg
        self._groups: dict[tuple[str, ...], dict[tuple[str, ...], np.ndarray]] = {}
        self._arrays: dict[str, np.ndarray] = {}

    def column(
        self, metric: str, rows: pd.Index, where: Mapping[str, Any], index: Sequence[str]
    ) -> tuple[pd.Series, pd.Series]:
        """``metric``'s mean and CI at ``where`` (values matched as text: ``2`` matches
        ``"2"``) for each of ``rows``, a row being the values of the ``index`` columns (the
        first matching row of the frame counts; NaN where none matches)."""
        keys = tuple(where)
        at = self._positions(keys).get((metric, *(str(where[k]) for k in keys)))
        found: dict[tuple[Any, ...], int] = {}
        if at is not None:
            values = zip(*(self._array(c)[at] for c in index), strict=True)
            for i, row in zip(at, values, strict=True):
                found.setdefault(row, int(i))
        where_rows = [found.get(r if isinstance(r, tuple) else (r,), -1) for r in rows]
        return self._values("mean", where_rows, rows), self._values("ci", where_rows, rows)

    def _values(self, name: str, positions: list[int], rows: pd.Index) -> pd.Series:
        values = self._array(name)
        out = np.array([values[i] if i >= 0 else np.nan for i in positions], dtype=float)
        column: pd.Series = pd.Series(out, index=rows, name=name)
        return column

    def _array(self, name: str) -> np.ndarray:
        found = self._arrays.get(name)
        if found is None:
            found = self._arrays[name] = self.agg[name].to_numpy()
        return found

    def _positions(self, keys: tuple[str, ...]) -> dict[tuple[str, ...], np.ndarray]:
        """``(metric, *keys' values as text)`` -> its rows' positions, in the frame's order."""
        found = self._groups.get(keys)
        if found is None:
            agg = self.agg
            by = [agg["metric"].astype(str), *(agg[k].astype(str) for k in keys)]
            groups = agg.groupby(by, sort=False, dropna=False).indices if len(agg) else {}
            # One key gives scalar group keys, several give tuples: tuples for both.
            found = self._groups[keys] = {
                (k if isinstance(k, tuple) else (k,)): np.asarray(v) for k, v in groups.items()
            }
        return found


#: A table column: its label (a string, or a tuple for a header of several levels), means, CIs.
_Column = tuple[Any, pd.Series, pd.Series]


def _table(
    columns: list[_Column], rows: pd.Index, names: Sequence[str | None]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    labels = [c[0] for c in columns]
    cols = (
        pd.MultiIndex.from_tuples(labels, names=list(names))
        if labels and isinstance(labels[0], tuple)
        else pd.Index(labels, name=names[0] if names else None)
    )
    mean = pd.DataFrame({i: c[1].to_numpy() for i, c in enumerate(columns)}, index=rows)
    ci = pd.DataFrame({i: c[2].to_numpy() for i, c in enumerate(columns)}, index=rows)
    mean.columns = cols
    ci.columns = cols
    return mean, ci


def _scenario_rows(webs: Sequence[int], ftps: Sequence[int]) -> pd.Index:
    rows: pd.Index = pd.MultiIndex.from_tuples(
        [(w, f) for w in webs for f in ftps], names=["#Webs", "#FTPs"]
    )
    return rows


class Rfc2415Study(Study):
    name = "rfc2415"
    title = "Larger TCP initial windows with web and FTP traffic over a T1 bottleneck"
    source = (
        "K. Poduri and K. Nichols, 'Simulation Studies of Increased Initial TCP Window Size', "
        "RFC 2415, September 1998 (ns-2). STUDIES.md §2."
    )
    Params = Rfc2415Params
    # Measured 2026-12-02 (`ecnsim study run rfc2415 --jobs 2` from an empty store):
    # PGO wheels of main bede5e1 (shared machine, top priority) and of main 2172e3c
    # (idle); each value covers the larger of the two, then scaled by the render's
    # estimated wall time after branch render2 over before (its CPU measured before and
    # after on copies of the idle store; docs/performance.md, "Study run times").
    render_cost_s: ClassVar[float] = 5.5
    run_cost_scale: ClassVar[float] = 1.9
    plan_cost_s_per_run: ClassVar[float] = 0.006
    derive_version = 1

    # -- parameters -------------------------------------------------------------------

    def quick(self, params: Rfc2415Params) -> Rfc2415Params:
        return dataclasses.replace(
            params,
            webs_values=(8,),
            ftps_values=(0, 1),
            iw_values=(1, 3),
            half_webs_values=(16,),
            duration_s=60.0,
            cdf_webs=8,
            seeds=1,
        )

    def setup(self, p: Rfc2415Params) -> list[tuple[str, str]]:
        return [
            (
                "topology",
                "clients n2..n5 --access-- n0 ==bottleneck== n1 --access-- servers n6..n9; "
                "data flows servers -> clients",
            ),
            (
                "bottleneck",
                f"{p.bottleneck_mbps:g} Mb/s, {p.bottleneck_one_way_ms():g} ms each way "
                f"({p.bottleneck_delay_ms:g} ms read as {p.bottleneck_delay_is.replace('_', '-')})",
            ),
            ("access links", f"{p.access_mbps:g} Mb/s, {p.access_delay_ms:g} ms"),
            ("buffers (every queue)", f"DropTail, {p.buffer_packets} packets"),
            (
                "TCP",
                f"{p.cc}, MSS {p.mss} B"
                + (" + 40 B headers" if p.headers_on_data else " (whole packet counted)")
                + f", window {p.window_packets} packets, loss window 1 segment, "
                f"handshake {'on' if p.handshake else 'off'}, "
                f"delayed ACKs {'on' if p.delayed_ack else 'off'}",
            ),
            ("initial window IW (segments)", ", ".join(map(str, p.iw_values))),
            ("web clients", ", ".join(map(str, p.webs_values))),
            ("FTP clients", ", ".join(map(str, p.ftps_values))),
            (
                "web pages",
                f"a primary and {p.embedded} embedded objects; sizes from table "
                f"{p.object_size_table}, requests from {p.request_size_table}; think time "
                f"U[{p.think_min_s:g}, {p.think_max_s:g}] s after a page ends",
            ),
            (
                "HTTP models",
                "http10: primary, then the embedded objects on parallel connections; "
                "http11 (the RFC's rough model): one connection, one request, one response "
                "carrying all the objects",
            ),
            ("FTP", f"files of {p.ftp_file_bytes} B fetched back to back"),
            (
                "half and half",
                f"{', '.join(map(str, p.half_webs_values))} web clients: all IW={p.half_iws[0]}, "
                f"all IW={p.half_iws[1]}, and half of each; {p.half_ftps} FTP clients",
            ),
            (
                "RED variant",
                f"IW {', '.join(map(str, p.red_iw_values))}, http10; min_th {p.red_min_th:g}, "
                f"max_th {p.red_max_th:g}, w_q {p.red_w_q:g}, max_p {p.red_max_p:g}, gentle "
                f"{'on' if p.red_gentle else 'off'}, limit {p.buffer_packets} packets",
            ),
            ("experiments", ", ".join(p.experiments)),
            (
                "simulated",
                f"{p.duration_s:g} s, the first {p.warmup_s:g} s left out"
                if p.warmup_s > 0
                else f"{p.duration_s:g} s, all of it measured",
            ),
            ("defaults", f"ecnsim profile {p.profile}"),
            ("seeds per point", str(p.seeds)),
        ]

    def choices(self, p: Rfc2415Params) -> list[Choice]:
        return [
            Choice(
                "Access-link delay",
                f"{p.access_delay_ms:g} ms on each 10 Mb/s link",
                "RFC 2415's figure labels the access links '10Mb' with no delay. A small delay "
                "keeps the bottleneck the only delay that matters (RTT "
                f"{2 * (p.bottleneck_one_way_ms() + 2 * p.access_delay_ms):g} ms instead of "
                f"{2 * p.bottleneck_one_way_ms():g} ms); ns-2 links need some delay.",
                "access_delay_ms",
            ),
            Choice(
                "Bottleneck delay",
                f"{p.bottleneck_delay_ms:g} ms read as "
                + (
                    f"the delay each way (RTT {2 * p.bottleneck_one_way_ms():g} ms plus the "
                    "access links)"
                    if p.bottleneck_delay_is == "one_way"
                    else f"the round trip ({p.bottleneck_one_way_ms():g} ms each way)"
                ),
                "STUDIES.md §2 gives the bottleneck as '1.5 Mb/s, 50 ms' (the RFC's topology "
                "figure), and the RFC's abstract says 'the simulations were performed using the "
                "publicly available ns-2 simulator', whose link delay (duplex-link n0 n1 1.5Mb "
                "50ms) is the one-way propagation delay: one-way is the natural reading. The "
                "RFC states no round-trip time, so 'round_trip' (25 ms each way) stays a "
                "reading; light-load median page delays depend on it (issue 31).",
                "bottleneck_delay_is",
            ),
            Choice(
                "Buffers",
                f"every queue DropTail, {p.buffer_packets} packets",
                "'buffer sizes were set at 25 packets' names no queue; at 10 Mb/s the access "
                "queues never fill, so only the bottleneck's matters.",
                "buffer_packets",
            ),
            Choice(
                "Segments on the wire",
                f"{p.mss} B of payload + 40 B of headers = {p.mss + 40} B packets"
                if p.headers_on_data
                else f"{p.mss} B packets, all counted as payload",
                "The RFC keeps 'all segments at 1460 bytes' of data and used ns-2's tcp-full, "
                "which adds the TCP/IP header to every segment.",
                "headers_on_data",
            ),
            Choice(
                "Connection set-up",
                "three-way handshake and FIN exchange on every connection"
                if p.handshake
                else "no handshake",
                "RFC 2415 §2: 'only ACKs, SYNs, FINs, and URLs are flowing from left to right' "
                "(tcp-full); a lost SYN costs the initial RTO of the profile. The other reading, "
                "handshake = false (ns-2's one-way agents, which send no SYN), ignores the "
                "SYNs the RFC names, so it is the weaker; it moves light-load medians by one "
                "round trip per connection (issue 31).",
                "handshake",
            ),
            Choice(
                "TCP variant and ACKs",
                f"{p.cc}, an ACK for every segment"
                if not p.delayed_ack
                else f"{p.cc}, delayed ACKs",
                "tcp-full in ns-2 is Reno; ns-2's ns-default.tcl sets FullTcp's segsperack_ to 1. "
                "'A dropped packet causes a restart window of one segment': the loss window "
                "after a timeout is one segment (RFC 5681 §3.1), as in every ecnsim TCP. The "
                f"other TCP defaults (tick-based RTO, 6 s initial RTO) are profile {p.profile}'s.",
                "cc, delayed_ack, profile",
            ),
            Choice(
                "Object sizes",
                f"primary and embedded objects from {p.object_size_table}, requests from "
                f"{p.request_size_table} (Mah 1997, as ns-2 ships them)",
                "The RFC cites Mah 1997 and Cunha et al. 1995 without a table; ns-2's own HTTP "
                "data files are Mah's, their median object (2112 B) fits in two 1460 B "
                "segments as the RFC says (docs/models/http.md).",
                "object_size_table, request_size_table",
            ),
            Choice(
                "Embedded objects",
                f"{p.embedded} per page, all fetched at once on parallel connections once the "
                "primary has arrived (http10)",
                "'all web pages had exactly three embedded URLs'; §3: 'embedded URLs open their "
                "connections simultaneously'.",
                "embedded",
            ),
            Choice(
                "Start times",
                f"each web and FTP client starts at U[0, {p.start_jitter_s:g}) s",
                "Not given; spreading the first requests over one think-time span avoids a "
                "synchronized start that 360 s of browsing would then carry.",
                "start_jitter_s",
            ),
            Choice(
                "Measured interval",
                (
                    f"from {p.warmup_s:g} s to the end; pages (files) that started before are "
                    "left out"
                    if p.warmup_s > 0
                    else "the whole run"
                )
                + "; unfinished pages are censored, not dropped",
                "The RFC reports whole 360 s runs. A page still loading at the end took at least "
                "as long as it has waited: the median is the Kaplan-Meier median (pages whose "
                "connection gave up never complete).",
                "warmup_s",
            ),
            Choice(
                "Median delay and its interval",
                "the median page delay of each run, then the mean and 95 % Student-t interval "
                f"over {p.seeds} seeds",
                "Runs are independent replications; pages within a run share its congestion "
                "and are correlated, so an order-statistic interval for one run's median would "
                "be too narrow.",
                "seeds",
            ),
            Choice(
                "% decrease",
                "100 (d(IW=1) - d(IW)) / d(IW=1) per seed, against the IW=1 run of the same "
                "scenario and seed; then mean and interval",
                "Each seed gives one estimate of the change and the spread of those estimates "
                "gives the interval. The runs of a pair start from the same random state, but "
                "one app's clients draw from one stream in event order, so their draws part "
                "once the runs do: the pairing is not common random numbers.",
            ),
            Choice(
                "Goodput",
                "payload bytes delivered in order to the population's clients over the "
                "interval, in MB (10^6 B), as Table 6 reports it",
                "Goodput excludes retransmissions and headers; Table 6 gives goodput in Mbytes.",
            ),
            Choice(
                "Network power",
                "goodput / median delay in MB/ms (web: median page delay; FTP: median 1 MB "
                "transfer time)"
                if p.power_units == "MB/ms"
                else "goodput rate (Mb/s) / median delay (s)",
                "RFC 2415 §3: 'goodput divided by median delay (in Mbytes/ms)'; the two readings "
                "differ by a constant factor, and the normalized figures not at all.",
                "power_units",
            ),
            Choice(
                "Utilization and drop rate",
                f"the bottleneck's data direction ({BOTTLENECK}): busy time / interval, and "
                "drops / arrivals, in %",
                "The URLs and ACKs direction never queues.",
            ),
            Choice(
                "HTTP/1.1",
                "http11_rfc2415: one connection per page, one request, one response of the "
                "four objects' summed size",
                "RFC 2415 §3: 'one connection to send all of the information from both the "
                "primary URL and the three embedded URLs'.",
            ),
            Choice(
                "Half and half",
                f"{p.half_ftps} FTP clients; each half its own app; per-half drop rate = the "
                "half's packets dropped / the half's data segments",
                "Table 6's all-IW=1 rows match Table 1's scenarios without FTP; the RFC gives "
                "utilization and drops per run only, the per-half ones are extra.",
                "half_ftps",
            ),
            Choice(
                "RED at the bottleneck",
                f"min_th {p.red_min_th:g}, max_th {p.red_max_th:g}, w_q {p.red_w_q:g}, max_p "
                f"{p.red_max_p:g}, gentle {'on' if p.red_gentle else 'off'}, wait, no ECN, "
                f"in the {p.buffer_packets}-packet buffer; other queues DropTail",
                "§4 says only 'the RED queue management included with ns-2': ns-2's defaults "
                "(thresh_ 5, maxthresh_ 15, q_weight_ 0.002, linterm_ 10); gentle_ became the "
                "default only in 2001.",
                "red_min_th, red_max_th, red_w_q, red_max_p, red_gentle",
            ),
            Choice(
                "Pathological scenarios",
                ", ".join(p.pathological) + " (webs/FTPs) dashed in the normalized figures",
                "§3 calls 'a large number of web clients ... combined with ftps' pathological "
                "and leaves them out of Figure 2 without naming them; here they stay, dashed.",
                "pathological",
            ),
            Choice(
                "Client placement",
                "web and FTP clients round-robin over n2..n5, client i served by n6..n9 in the "
                "same order",
                "Not given; the access links do not congest.",
            ),
        ]

    # -- runs -------------------------------------------------------------------------

    def findings(self, p: Rfc2415Params) -> list[Finding]:
        return rfc2415_findings(p)

    def readings(self, p: Rfc2415Params) -> list[Reading]:
        return rfc2415_readings(p)

    def grid(self, p: Rfc2415Params) -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = []
        for exp in EXPERIMENTS:
            if exp not in p.experiments:
                continue
            if exp in ("http10", "http11", "red"):
                iws = p.red_iw_values if exp == "red" else p.iw_values
                points += [
                    {"experiment": exp, "webs": w, "ftps": f, "iw": iw_label([iw])}
                    for w in p.webs_values
                    for f in p.ftps_values
                    for iw in iws
                ]
            else:
                labels = [
                    iw_label([p.half_iws[0]]),
                    iw_label([p.half_iws[1]]),
                    iw_label(p.half_iws),
                ]
                points += [
                    {"experiment": exp, "webs": w, "ftps": p.half_ftps, "iw": lab}
                    for w in p.half_webs_values
                    for lab in labels
                ]
        return points

    def scenario(self, p: Rfc2415Params, point: Mapping[str, Any]) -> Scenario:
        exp = str(point["experiment"])
        webs, ftps = int(point["webs"]), int(point["ftps"])
        iws = [int(x) for x in str(point["iw"]).split("/")]
        sc = Scenario(
            p.duration_s,
            name=f"rfc2415-{exp}-w{webs}-f{ftps}-iw{'_'.join(map(str, iws))}",
            warmup=p.warmup_s if p.warmup_s > 0 else None,
            profile=p.profile,
        )
        sc.tcp(
            cc=p.cc,
            mss=p.mss,
            header_bytes=40,
            headers_on_data=p.headers_on_data,
            max_cwnd=p.window_packets,
            initial_window=iws[0],
            handshake=p.handshake,
            delayed_ack=p.delayed_ack,
        )
        sc.host(*CLIENT_NODES, *SERVER_NODES).router("n0", "n1")
        buffer = droptail(limit_packets=p.buffer_packets)
        bottleneck = buffer
        if exp == "red":
            # ns-2's RED of the RFC's day (ns-default.tcl Queue/RED), in the RFC's buffer.
            bottleneck = red(
                limit_packets=p.buffer_packets,
                min_th=p.red_min_th,
                max_th=p.red_max_th,
                w_q=p.red_w_q,
                max_p=p.red_max_p,
                gentle=p.red_gentle,
                ecn="none",
            )
        # links[0]: the bottleneck n1 -> n0 carries the data (servers -> clients).
        sc.link(
            "n1",
            "n0",
            rate=p.bottleneck_mbps * 1e6,
            delay=p.bottleneck_one_way_ms() / 1e3,
            queue_ab=bottleneck,
            queue_ba=buffer,
        )
        for c in CLIENT_NODES:
            sc.link(c, "n0", rate=p.access_mbps * 1e6, delay=p.access_delay_ms / 1e3, queue=buffer)
        for s in SERVER_NODES:
            sc.link("n1", s, rate=p.access_mbps * 1e6, delay=p.access_delay_ms / 1e3, queue=buffer)
        model = http(
            HTTP_VERSION[exp],
            embedded=p.embedded,
            parallel=p.embedded if HTTP_VERSION[exp] == "http10" and p.embedded > 0 else None,
            primary_size=empirical(p.object_size_table),
            embedded_size=empirical(p.object_size_table),
            request_size=empirical(p.request_size_table),
            think_time=uniform(p.think_min_s, p.think_max_s),
        )
        jitter = p.start_jitter_s if p.start_jitter_s > 0 else None
        servers = list(SERVER_NODES)
        if len(iws) == 1:
            hosts = [CLIENT_NODES[i % len(CLIENT_NODES)] for i in range(webs)]
            sc.app(model, clients=hosts, servers=servers, name="web", start_jitter=jitter)
        else:
            half = webs // 2
            for k, (role, iw) in enumerate((("web_half1", iws[0]), ("web_half2", iws[1]))):
                idx = range(k * half, (k + 1) * half)
                hosts = [CLIENT_NODES[i % len(CLIENT_NODES)] for i in idx]
                srv = [SERVER_NODES[i % len(SERVER_NODES)] for i in idx]
                sc.app(
                    model,
                    clients=hosts,
                    servers=srv,
                    name=role,
                    start_jitter=jitter,
                    tcp={"initial_window": iw},
                )
        if ftps:
            hosts = [CLIENT_NODES[i % len(CLIENT_NODES)] for i in range(ftps)]
            sc.app(
                ftp(p.ftp_file_bytes),
                clients=hosts,
                servers=servers,
                name="ftp",
                start_jitter=jitter,
            )
        return sc

    def job(self, p: Rfc2415Params, point: Mapping[str, Any]) -> JobSpec:
        split = "/" in str(point["iw"])
        roles = [["web_half1", "page"], ["web_half2", "page"]] if split else [["web", "page"]]
        if int(point["ftps"]) > 0:
            roles.append(["ftp", "object"])
        keep_pages = (
            point["experiment"] in ("http10", "http11")
            and int(point["webs"]) == p.cdf_webs
            and int(point["ftps"]) in p.cdf_ftps
        )
        context = {
            "warmup_s": p.warmup_s,
            "end_s": p.duration_s,
            "capacity_bps": p.bottleneck_mbps * 1e6,
            "bottleneck": BOTTLENECK,
            "roles": roles,
            "power_units": p.power_units,
            "keep_pages": keep_pages,
        }
        return JobSpec(context=context, keep_tables=("queues",))

    derive = staticmethod(derive_rfc2415)

    def estimate_seconds(self, p: Rfc2415Params, point: Mapping[str, Any]) -> float:
        # Measured with bench/study_timings.py and the whole study on an idle machine
        # (docs/performance.md, "Study run times"): 0.02 s per run (plan, derive, store) and
        # per simulated second 60 us, plus 0.5 us per web client and 25 us per FTP transfer.
        webs, ftps = int(point["webs"]), int(point.get("ftps", 0))
        return 0.02 + p.duration_s * (6e-5 + 5e-7 * webs + 2.5e-5 * ftps)

    # -- rendering --------------------------------------------------------------------

    def tables(self, p: Rfc2415Params, data: StudyData) -> dict[str, StudyTable]:
        frame = data.frame("metrics")
        out: dict[str, StudyTable] = {}
        if frame.empty:
            return out
        frame = frame.copy()
        frame["iw"] = frame["iw"].astype(str)
        base_iw = iw_label([p.iw_values[0]]) if p.iw_values else "1"
        iws = [iw_label([i]) for i in p.iw_values]
        rows = _scenario_rows(p.webs_values, p.ftps_values)
        ftp_rows = _scenario_rows(p.webs_values, [f for f in p.ftps_values if f > 0])
        by = ["experiment", "webs", "ftps", "iw"]
        index = ["webs", "ftps"]
        power_unit = p.power_units
        # RFC 2415 §3 defines the unit; say so under every power table.
        power_def = (
            " RFC 2415 §3: 'network power, goodput divided by median delay (in Mbytes/ms)': "
            "the goodput volume over the run (MB) over the median delay (ms)."
            if p.power_units == "MB/ms"
            else " Goodput rate (Mb/s) over the median delay (s), not the RFC's MB/ms."
        )
        # The RFC's table numbers; HTTP/1.1's link table is not in the RFC.
        numbers = {"http10": ("1", "2", "3"), "http11": ("4", None, "5")}
        for exp in ("http10", "http11"):
            if exp not in p.experiments:
                continue
            sub = _select(frame, experiment=exp).copy()
            if sub.empty:
                continue
            sub["web_delay_decrease_pct"] = paired_change(
                sub, "web_delay_s", {"experiment": exp, "iw": base_iw}
            )
            agg = _agg(
                sub,
                [
                    "web_delay_s",
                    "web_delay_decrease_pct",
                    "util_pct",
                    "drop_pct",
                    "ftp_power",
                    "web_power",
                    "web_unfinished_pct",
                ],
                by,
            )
            n_delay, n_link, n_ftp = numbers[exp]

            means = _Means(agg)

            def per_iw(
                metric: str, at: pd.Index, means: _Means = means
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
                """``metric`` with one column per IW, at rows ``at``."""
                cols = [(f"IW={iw}", *means.column(metric, at, {"iw": iw}, index)) for iw in iws]
                return _table(cols, at, [None])

            model = "HTTP/1.0" if exp == "http10" else "HTTP/1.1 (the RFC's rough model)"
            cols = list[_Column]()
            for iw in iws:
                metric = "web_delay_s" if iw == base_iw else "web_delay_decrease_pct"
                unit = "(s)" if iw == base_iw else "(% decrease)"
                m, c = means.column(metric, rows, {"iw": iw}, index)
                cols.append((f"IW={iw} {unit}", m, c))
            mean, ci = _table(cols, rows, [None])
            out[f"table{n_delay}_median_page_delay_{exp}"] = StudyTable(
                f"Table {n_delay}. Median web page delay, {model}",
                mean,
                ci,
                note=f"IW={base_iw}: the median page delay in seconds; larger IWs: its decrease "
                f"in % from IW={base_iw}, paired by seed. Each run's median counts unfinished "
                "pages as censored.",
                digits=3,
            )
            cols = list[_Column]()
            for block, metric in (
                ("Percentage link utilization", "util_pct"),
                ("Packet drop rate (%)", "drop_pct"),
            ):
                for iw in iws:
                    m, c = means.column(metric, rows, {"iw": iw}, index)
                    cols.append(((block, f"IW={iw}"), m, c))
            mean, ci = _table(cols, rows, [None, None])
            name = f"table{n_link}_" if n_link else ""
            title = f"Table {n_link}. " if n_link else ""
            out[f"{name}utilization_drops_{exp}"] = StudyTable(
                f"{title}Link utilization and packet drop rates, {model}"
                + ("" if n_link else " (not a table of the RFC)"),
                mean,
                ci,
                unit="%",
                note=f"The bottleneck's data direction ({BOTTLENECK}).",
                digits=3,
            )
            mean, ci = per_iw("ftp_power", ftp_rows)
            out[f"table{n_ftp}_ftp_network_power_{exp}"] = StudyTable(
                f"Table {n_ftp}. Network power of file transfers, {model}",
                mean,
                ci,
                unit=power_unit,
                note="FTP goodput over the median 1 MB transfer time." + power_def,
                digits=3,
            )
            mean, ci = per_iw("web_power", rows)
            fig = "1" if exp == "http10" else "3"
            out[f"web_network_power_{exp}"] = StudyTable(
                f"Web network power (Figure {fig}'s data), {model}",
                mean,
                ci,
                unit=power_unit,
                note="Web goodput over the median page delay." + power_def,
                digits=3,
            )
            mean, ci = per_iw("web_unfinished_pct", rows)
            out[f"unfinished_pages_{exp}"] = StudyTable(
                f"Pages unfinished at the end (censored in the medians), {model}",
                mean,
                ci,
                unit="% of pages",
                digits=3,
            )
        if "half" in p.experiments:
            out.update(self._half_tables(p, frame))
        if "red" in p.experiments:
            out.update(self._red_tables(p, frame, base_iw))
        return out

    def _half_tables(self, p: Rfc2415Params, frame: pd.DataFrame) -> dict[str, StudyTable]:
        sub = _select(frame, experiment="half")
        if sub.empty:
            return {}
        a, b = p.half_iws
        la, lb, split = iw_label([a]), iw_label([b]), iw_label(p.half_iws)
        metrics = [f"{r}_{m}" for r in ("web", "web_half1", "web_half2") for m in ROLE_METRICS] + [
            "util_pct",
            "drop_pct",
        ]
        means = _Means(_agg(sub, metrics, ["webs", "iw"]))
        labels = []
        for w in p.half_webs_values:
            labels += [str(w), f"{w // 2}/{w // 2}"]
        rows = pd.Index(labels, name="#Webs")
        idx = ["webs"]

        def col(metric: str, iw: str, by_split: bool) -> tuple[pd.Series, pd.Series]:
            col_means, col_cis = [], []
            for w in p.half_webs_values:
                for is_split in (False, True):
                    if is_split != by_split:
                        col_means.append(np.nan)
                        col_cis.append(np.nan)
                        continue
                    m, c = means.column(
                        metric, pd.Index([w], name="webs"), {"iw": iw, "webs": w}, idx
                    )
                    col_means.append(float(m.iloc[0]))
                    col_cis.append(float(c.iloc[0]))
            return pd.Series(col_means, index=rows), pd.Series(col_cis, index=rows)

        def merged(homog: tuple[str, str], halves: tuple[str, str]) -> tuple[pd.Series, pd.Series]:
            m1, c1 = col(homog[0], homog[1], False)
            m2, c2 = col(halves[0], halves[1], True)
            return m1.fillna(m2), c1.fillna(c2)

        left = "Median page delays and goodput (MB)"
        right = "Link utilization (%) & drops (%)"
        cols = list[_Column]()
        for iw_lab, role in ((la, "web_half1"), (lb, "web_half2")):
            for q, metric, label in (
                ("goodput_mb", "goodput_mb", "G.put (MB)"),
                ("delay_s", "delay_s", "dly (s)"),
            ):
                m, c = merged((f"web_{q}", iw_lab), (f"{role}_{metric}", split))
                cols.append(((left, f"IW={iw_lab}", label), m, c))
        for iw_lab in (la, lb):
            for metric, label in (("util_pct", "L.util"), ("drop_pct", "Drops")):
                m, c = col(metric, iw_lab, False)
                if iw_lab == la:
                    m2, c2 = col(metric, split, True)
                    m, c = m.fillna(m2), c.fillna(c2)
                cols.append(((right, f"IW={iw_lab}", label), m, c))
        mean, ci = _table(cols, rows, [None, None, None])
        out = {
            "table6_half_and_half": StudyTable(
                "Table 6. Results for the half-and-half scenario",
                mean,
                ci,
                note=f"Rows '{p.half_webs_values[0]}' etc.: every client with the column's IW "
                f"(one run per IW); rows 'n/n': one run, half the clients with IW={a} and half "
                f"with IW={b}; that run's link utilization and drops stand under IW={a}. "
                "Delays are median page delays in seconds, the unit of Table 1 (the RFC's "
                "prose says milliseconds for Table 6).",
                digits=3,
            )
        }
        cols = list[_Column]()
        for iw_lab, role in ((la, "web_half1"), (lb, "web_half2")):
            for q, label in (
                ("share_pct", "goodput share of the link (%)"),
                ("drop_pct", "own packets dropped (%)"),
                ("completed", "pages completed"),
                ("unfinished_pct", "pages unfinished (%)"),
            ):
                m, c = merged((f"web_{q}", iw_lab), (f"{role}_{q}", split))
                cols.append(((f"IW={iw_lab}", label), m, c))
        mean, ci = _table(cols, rows, [None, None])
        out["table6_per_half"] = StudyTable(
            "Half and half, per half: link share and drops of each half's own packets",
            mean,
            ci,
            note="Not in the RFC: each half's goodput as a share of the bottleneck's capacity, "
            "and the share of its connections' data segments (both directions, retransmissions "
            "included) that were dropped.",
            digits=3,
        )
        return out

    def _red_tables(
        self, p: Rfc2415Params, frame: pd.DataFrame, base_iw: str
    ) -> dict[str, StudyTable]:
        sub = frame[frame["experiment"].isin(["red", "http10"])].copy()
        if _select(sub, experiment="red").empty:
            return {}
        base = {"experiment": "http10", "iw": base_iw}
        sub["web_delay_decrease_pct"] = paired_change(sub, "web_delay_s", base)
        sub["web_power_ratio"] = paired_change(sub, "web_power", base, kind="ratio")
        means = _Means(
            _agg(
                sub,
                [
                    "web_delay_s",
                    "web_delay_decrease_pct",
                    "web_power_ratio",
                    "util_pct",
                    "drop_pct",
                ],
                ["experiment", "webs", "ftps", "iw"],
            )
        )
        rows = _scenario_rows(p.webs_values, p.ftps_values)
        index = ["webs", "ftps"]
        red_iws = [iw_label([i]) for i in p.red_iw_values]
        dt_iws = [iw_label([i]) for i in p.iw_values]
        runs = [("red", iw, f"RED IW={iw}") for iw in red_iws] + [
            ("http10", iw, f"DropTail IW={iw}") for iw in dt_iws
        ]
        out: dict[str, StudyTable] = {}
        cols = list[_Column]()
        for exp, iw, label in [
            ("http10", base_iw, f"DropTail IW={base_iw}"),
            *runs[: len(red_iws)],
        ]:
            m, c = means.column("web_delay_s", rows, {"experiment": exp, "iw": iw}, index)
            cols.append((("Median page delay (s)", label), m, c))
        for exp, iw, label in runs:
            if exp == "http10" and iw == base_iw:
                continue
            m, c = means.column(
                "web_delay_decrease_pct", rows, {"experiment": exp, "iw": iw}, index
            )
            cols.append(((f"% decrease from DropTail IW={base_iw}", label), m, c))
        mean, ci = _table(cols, rows, [None, None])
        out["red_median_page_delay"] = StudyTable(
            "RED at the bottleneck: median web page delay against larger IWs without RED",
            mean,
            ci,
            note="RFC 2415 §4: RED with IW=1 gave 'similar performance gains' to larger IWs "
            "without RED. Decreases are paired by seed with the DropTail run (the http10 "
            "experiment; '-' where it was not run).",
            digits=3,
        )
        cols = list[_Column]()
        for exp, iw, label in runs:
            if exp == "http10" and iw == base_iw:
                continue
            m, c = means.column("web_power_ratio", rows, {"experiment": exp, "iw": iw}, index)
            cols.append((label, m, c))
        mean, ci = _table(cols, rows, [None])
        out["red_network_power_normalized"] = StudyTable(
            f"RED at the bottleneck: web network power normalized to DropTail IW={base_iw}",
            mean,
            ci,
            unit="ratio",
            digits=3,
        )
        cols = list[_Column]()
        for block, metric in (
            ("Percentage link utilization", "util_pct"),
            ("Packet drop rate (%)", "drop_pct"),
        ):
            for exp, iw, label in [
                ("http10", base_iw, f"DropTail IW={base_iw}"),
                *runs[: len(red_iws)],
            ]:
                m, c = means.column(metric, rows, {"experiment": exp, "iw": iw}, index)
                cols.append(((block, label), m, c))
        mean, ci = _table(cols, rows, [None, None])
        out["red_utilization_drops"] = StudyTable(
            "RED at the bottleneck: link utilization and packet drop rates",
            mean,
            ci,
            unit="%",
            digits=3,
        )
        return out

    def figures(self, p: Rfc2415Params, data: StudyData) -> Figures:
        # Built in the drawing processes (Deferred); without matplotlib, no figures (the
        # report says so), found here rather than there.
        import matplotlib  # noqa: F401

        from ecnsim.studies.render import Deferred

        frame = data.frame("metrics")
        out: Figures = {}
        if frame.empty:
            return out
        frame = frame.copy()
        frame["iw"] = frame["iw"].astype(str)
        base_iw = iw_label([p.iw_values[0]]) if p.iw_values else "1"
        for exp, (f_abs, f_norm), model in (
            ("http10", ("1", "2"), "HTTP/1.0"),
            ("http11", ("3", "4"), "HTTP/1.1"),
        ):
            sub = _select(frame, experiment=exp).copy()
            if sub.empty:
                continue
            sub["web_power_ratio"] = paired_change(
                sub, "web_power", {"experiment": exp, "iw": base_iw}, kind="ratio"
            )
            agg = _agg(sub, ["web_power", "web_power_ratio"], ["webs", "ftps", "iw"])
            out[f"figure{f_abs}_network_power_{exp}"] = (
                Deferred(
                    _power_figure, (p, agg, "web_power", f"web network power ({p.power_units})")
                ),
                f"Figure {f_abs}: web network power (goodput / median page delay) against IW, "
                f"{model}; one panel per number of web clients, one line per number of FTP "
                "clients (dashed: the scenarios taken as pathological); mean and 95% CI over "
                "seeds.",
            )
            out[f"figure{f_norm}_network_power_normalized_{exp}"] = (
                Deferred(
                    _power_figure,
                    (p, agg, "web_power_ratio", f"network power / network power at IW={base_iw}"),
                ),
                f"Figure {f_norm}: web network power normalized to IW={base_iw} (per seed), "
                f"{model}. Dashed: the scenarios taken as pathological "
                f"({', '.join(p.pathological)}; webs/FTPs).",
            )
        pages = data.frame("pages")
        if not pages.empty:
            out["page_delay_cdf"] = (
                Deferred(_cdf_figure, (p, pages)),
                f"CDF of page delays with {p.cdf_webs} web clients, every IW, all seeds pooled "
                "(Kaplan-Meier: pages unfinished at the end are censored).",
            )
        return out


def _power_figure(p: Rfc2415Params, agg: pd.DataFrame, metric: str, ylabel: str) -> Any:
    """Figures 1-4: ``metric`` against IW, a panel per number of web clients (built in a
    drawing process: :class:`~ecnsim.studies.render.Deferred`)."""
    from ecnsim.output.plot import _figure

    part = agg[agg["metric"] == metric]
    webs = [w for w in p.webs_values if w in set(part["webs"].astype(int))]
    ncols = max(1, len(webs))
    fig = _figure(3.6 * ncols + 0.8, 3.4)
    axes = np.atleast_1d(fig.subplots(1, ncols, squeeze=False)).ravel()
    patho = {_parse_scenario_label(s, "pathological") for s in p.pathological}
    for ax, w in zip(axes, webs, strict=False):
        for k, f in enumerate(p.ftps_values):
            s = part[(part["webs"].astype(int) == w) & (part["ftps"].astype(int) == f)]
            if s.empty:
                continue
            # Lines side by side around each IW, so their intervals do not hide each other.
            shift = 0.04 * (k - (len(p.ftps_values) - 1) / 2)
            s = s.assign(x=s["iw"].astype(int) + shift).sort_values("x")
            ax.errorbar(
                s["x"],
                s["mean"],
                yerr=s["ci"].fillna(0.0),
                marker="o",
                ms=3,
                capsize=2,
                color=f"C{k}",
                ls="--" if (w, f) in patho else "-",
                label=f"{f} FTP",
            )
        ax.set_title(f"{w} web clients", fontsize="medium")
        ax.set_xlabel("initial window (segments)")
        ax.set_xticks(list(p.iw_values))
        ax.grid(True, alpha=0.3)
    # One legend beside the panels (the same lines in each): a legend inside a panel sat
    # on its top line in the full study's figures.
    handles, labels = max((ax.get_legend_handles_labels() for ax in axes), key=lambda h: len(h[1]))
    if labels:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small")
    axes[0].set_ylabel(ylabel)
    return fig


def _cdf_figure(p: Rfc2415Params, pages: pd.DataFrame) -> Any:
    """The page delays' CDFs (Kaplan-Meier), a panel per HTTP version and FTP load (built
    in a drawing process)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    from ecnsim.output.plot import _figure

    exps = [e for e in ("http10", "http11") if not _select(pages, experiment=e).empty]
    ftps = [f for f in p.cdf_ftps if not _select(pages, ftps=f).empty]
    nrows, ncols = max(1, len(exps)), max(1, len(ftps))
    fig = _figure(3.6 * ncols + 0.8, 2.8 * nrows + 0.6)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    for i, exp in enumerate(exps):
        for j, f in enumerate(ftps):
            ax = axes[i][j]
            part = _select(pages, experiment=exp, ftps=f)
            for k, iw in enumerate(sorted(set(part["iw"].astype(str)), key=_iw_key)):
                recs = _select(part, iw=iw).assign(kind="page")
                km = analysis.response_time_cdf(recs, kind="page")
                if km.empty:
                    continue
                ax.step(km["x"], km["cdf"], where="post", color=f"C{k}", label=f"IW={iw}")
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator([0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50]))
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_title(f"{HTTP_VERSION[exp]}, {f} FTP", fontsize="medium")
            ax.grid(True, alpha=0.3)
            if i == nrows - 1:
                ax.set_xlabel("page delay (s)")
            if j == 0:
                ax.set_ylabel("P(delay <= x)")
    axes[0][0].legend(fontsize="small")
    fig.suptitle(f"page delays, {p.cdf_webs} web clients")
    return fig


def _iw_key(label: str) -> tuple[int, ...]:
    return tuple(int(x) for x in label.split("/"))
