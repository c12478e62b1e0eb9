"""``aecn``: Adaptive ECN against ECN with heterogeneous round-trip times (STUDIES.md §4).

Source: Z. Zheng, WPI MS thesis, chapter 5 (ns-2). The topology of
``hetero`` with access one-way delays 95 / 45 / 20 ms (minimum RTTs 200 /
100 / 50 ms) and 90 Mb/s of aggregate access capacity. AECN gives each RTT
group its own RED ``max_p`` (fragile ``base_max_p / a``, average
``base_max_p``, robust ``base_max_p * b``) and marks the front of the
group's virtual queue; the router reads each packet's RTT from a header
field that the sender fills in. ``docs/models/aecn.md``, ``docs/studies/aecn.md``.

Experiments (each a set of queue *schemes* against N and ``base_max_p``):

- ``main``: ECN, AECN with a = 1 (mark-front alone), AECN with a = b = 2.5, AECN2;
- ``a_sweep``: AECN with a = 1.0 ... 3.0;
- ``aecn3``: AECN3 with the robust group's min_th from 2 to 9;
- ``aecn4``: AECN4 (AECN3 plus a larger max_th, 30 to 60);
- ``count_scope``: AECN a = b = 2.5 with RED's count kept per queue and per group.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ecnsim.scenario.spec import aecn, red, tcp
from ecnsim.scenario.topology import hetero_rtt
from ecnsim.studies._base import (
    Choice,
    Figures,
    JobSpec,
    Study,
    StudyData,
    StudyTable,
)
from ecnsim.studies.findings import ALMOST_ALL, Alternative, Cell, Delta, Finding, Reading
from ecnsim.studies.hetero import (
    GROUPS,
    StarParams,
    _packet_fields,
    derive_star,
    star_figures,
    star_readings,
    star_run_seconds,
    star_tables,
)

__all__ = ["EXPERIMENTS", "AecnParams", "AecnStudy"]

Experiment = Literal["main", "a_sweep", "aecn3", "aecn4", "count_scope"]
#: The experiments, in the thesis' order.
EXPERIMENTS: tuple[str, ...] = ("main", "a_sweep", "aecn3", "aecn4", "count_scope")


@dataclass(frozen=True)
class AecnParams(StarParams):
    """The thesis' chapter 5 setup as defaults (the star of chapter 4 with 90 Mb/s of
    access capacity and shorter RTTs)."""

    n_values: tuple[int, ...] = (30, 60, 120, 240, 480)
    access_delays_ms: tuple[float, ...] = (95.0, 45.0, 20.0)
    aggregate_access_mbps: float = 90.0
    #: N of the figure points (the main experiment, every scheme, the first base_max_p).
    figure_n: tuple[int, ...] = (60, 240)
    base_max_p_values: tuple[float, ...] = (0.5, 0.8)
    experiments: tuple[Experiment, ...] = EXPERIMENTS  # type: ignore[assignment]
    #: AECN's fragile divisor and robust multiplier.
    a: float = 2.5
    b: float = 2.5
    #: The a sweep; b follows a (``a_sweep_b`` None) or stays at a fixed value.
    a_values: tuple[float, ...] = (1.0, 1.5, 2.0, 2.5, 2.6, 2.8, 3.0)
    a_sweep_b: float | None = None
    #: AECN3: the robust group's min_th.
    robust_min_th_values: tuple[float, ...] = (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    #: AECN4: the robust min_th (None: §5.7.3's, 9 packets at 60 flows and fewer, 3 at 120 and
    #: more), and every group's max_th.
    aecn4_robust_min_th: float | None = None
    aecn4_max_th_values: tuple[float, ...] = (30.0, 40.0, 50.0, 60.0)
    #: RED's count: one per queue (the thesis' code) or one per group.
    count_scope: Literal["queue", "group"] = "queue"
    #: What the sender carries for the router: its base (minimum) RTT or its smoothed RTT.
    carry_rtt: Literal["base", "smoothed"] = "base"

    def check(self) -> None:
        super().check()
        if any(not 0 < p <= 1 for p in self.base_max_p_values):
            raise ValueError(f"base_max_p_values must be in (0, 1], got {self.base_max_p_values}")
        if self.a <= 0 or self.b <= 0 or any(a <= 0 for a in self.a_values):
            raise ValueError("a, b and a_values must be > 0")
        if any(not 0 <= m < self.max_th for m in self.robust_min_th_values):
            raise ValueError(
                f"robust_min_th_values must be in [0, max_th), got {self.robust_min_th_values}"
            )
        fixed = self.aecn4_robust_min_th
        if fixed is not None and not 0 <= fixed < self.max_th:
            raise ValueError(f"aecn4_robust_min_th must be in [0, max_th) or none, got {fixed}")
        if any(not self.min_th < m <= self.buffer_packets for m in self.aecn4_max_th_values):
            raise ValueError(
                f"aecn4_max_th_values must be in (min_th, buffer], got {self.aecn4_max_th_values}"
            )


def _fmt(x: float) -> str:
    return f"{x:g}"


def aecn4_robust_min_th(p: AecnParams, n: int) -> float:
    """AECN4's robust min_th at ``n`` flows: ``p.aecn4_robust_min_th``, or §5.7.3's."""
    if p.aecn4_robust_min_th is not None:
        return p.aecn4_robust_min_th
    # Thesis §5.7.3: robust min_th 9 at 60 flows, 3 at 120 (the other N: the nearer one).
    return 9.0 if n <= 90 else 3.0


def _aecn4_min_th_text(p: AecnParams) -> str:
    if p.aecn4_robust_min_th is not None:
        return f"{p.aecn4_robust_min_th:g} packets at every N"
    return "9 packets at N <= 60, 3 at N >= 120 (§5.7.3)"


def schemes(p: AecnParams) -> list[tuple[str, str, dict[str, Any] | None]]:
    """``(experiment, scheme label, AECN queue fields or None for plain ECN)`` in order."""
    out: list[tuple[str, str, dict[str, Any] | None]] = []
    scope = p.count_scope
    for exp in p.experiments:
        if exp == "main":
            out += [
                ("main", "ECN", None),
                ("main", "AECN a=1", {"variant": "aecn", "a": 1.0, "b": 1.0}),
                (
                    "main",
                    f"AECN a={_fmt(p.a)} b={_fmt(p.b)}",
                    {"variant": "aecn", "a": p.a, "b": p.b},
                ),
                ("main", "AECN2", {"variant": "aecn2"}),
            ]
        elif exp == "a_sweep":
            for a in p.a_values:
                b = a if p.a_sweep_b is None else p.a_sweep_b
                out.append(
                    ("a_sweep", f"a={_fmt(a)} b={_fmt(b)}", {"variant": "aecn", "a": a, "b": b})
                )
        elif exp == "aecn3":
            for m in p.robust_min_th_values:
                out.append(
                    (
                        "aecn3",
                        f"robust min_th={_fmt(m)}",
                        {"variant": "aecn3", "a": p.a, "b": p.b, "robust_min_th": m},
                    )
                )
        elif exp == "aecn4":
            for m in p.aecn4_max_th_values:
                out.append(
                    (
                        "aecn4",
                        f"max_th={_fmt(m)}",
                        {
                            "variant": "aecn4",
                            "a": p.a,
                            "b": p.b,
                            "robust_min_th": p.aecn4_robust_min_th,  # per N if None
                            "wide_max_th": m,
                        },
                    )
                )
        elif exp == "count_scope":
            for s in ("queue", "group"):
                out.append(
                    (
                        "count_scope",
                        f"count per {s}",
                        {"variant": "aecn", "a": p.a, "b": p.b, "count_scope": s},
                    )
                )
    for _, _, fields in out:
        if fields is not None:
            fields.setdefault("count_scope", scope)
    return out


def _label(p: AecnParams, experiment: str, match: Callable[[dict[str, Any] | None], bool]) -> str:
    """The label of the first scheme of ``experiment`` whose fields ``match`` ("" if none)."""
    return next((lab for e, lab, f in schemes(p) if e == experiment and match(f)), "")


def aecn_findings(p: AecnParams) -> list[Finding]:
    """The findings of the thesis' chapter 5 (STUDIES.md §4, a1-a5) as cells over the grid."""
    ns, mps = p.n_values, p.base_max_p_values
    ecn = "ECN"
    a1 = _label(p, "main", lambda f: f is not None and f.get("variant") == "aecn" and f["a"] == 1)
    main_a = f"AECN a={_fmt(p.a)} b={_fmt(p.b)}"

    def pt(exp: str, scheme: str, mp: float, n: int) -> dict[str, Any]:
        return {"experiment": exp, "scheme": scheme, "base_max_p": mp, "n": n}

    def sweep(a: float) -> str:
        return _label(p, "a_sweep", lambda f: f is not None and math.isclose(f["a"], a))

    best = sweep(2.5)
    others = [a for a in p.a_values if not math.isclose(a, 2.5) and sweep(a)]
    th = {m: f"max_th={_fmt(m)}" for m in p.aecn4_max_th_values}
    return [
        Finding(
            "a1",
            "AECN with a = 1 has a higher mean Jain's index and goodput than ECN at 60 and "
            "120 flows (base max_p 0.5)",
            "ch. 5, Table 5.1",
            lambda p: [
                Cell(metric, pt("main", a1, 0.5, n), pt("main", ecn, 0.5, n))
                for metric in ("jain", "goodput_mbps")
                for n in (60, 120)
            ],
        ),
        Finding(
            "a2a",
            "ECN's Jain's index and goodput drop at 120 flows with max_p 0.5 and at 240 with "
            "max_p 0.8 (against the next smaller N)",
            "ch. 5",
            lambda p: [
                Cell(metric, pt("main", ecn, mp, n), pt("main", ecn, mp, prev), higher=False)
                for metric in ("jain", "goodput_mbps")
                for mp, n, prev in ((0.5, 120, 60), (0.8, 240, 120))
            ],
        ),
        Finding(
            "a2b",
            "Lockout is heavier above 240 flows (480 against 240), for ECN and AECN",
            "ch. 5",
            lambda p: [
                Cell("lockout", pt("main", s, mp, 480), pt("main", s, mp, 240))
                for s in (ecn, a1, main_a)
                for mp in mps
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="Lockout as ch. 5 shows it (the lockout reading's default): flows silent "
            "for lockout_s or more in some period.",
        ),
        Finding(
            "a3a",
            "a = b = 2.5 gives AECN its best Jain's index at 60 and 120 flows",
            "ch. 5",
            lambda p: [
                Cell("jain", pt("a_sweep", best, mp, n), pt("a_sweep", sweep(a), mp, n))
                for n in (60, 120)
                for mp in mps
                for a in others
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
        ),
        Finding(
            "a3b",
            "Above a = 2.5, Jain's index and goodput fall (against a = 2.5) at 60 and 120 flows",
            "ch. 5",
            lambda p: [
                Cell(
                    metric, pt("a_sweep", sweep(a), mp, n), pt("a_sweep", best, mp, n), higher=False
                )
                for metric in ("jain", "goodput_mbps")
                for n in (60, 120)
                for mp in mps
                for a in others
                if a > 2.5
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
        ),
        Finding(
            "a4",
            "Without heavy lockout (N <= 120) AECN (a = b = 2.5) improves Jain's index by more "
            "than 10 % over ECN, with fewer drops and more marks, and robust flows keep a "
            "somewhat higher share than fragile ones",
            "ch. 5",
            lambda p: [
                c
                for n in ns
                if n <= 120
                for mp in mps
                for c in (
                    Cell("jain", pt("main", main_a, mp, n), pt("main", ecn, mp, n), factor=1.1),
                    Cell(
                        "drops_per_s",
                        pt("main", main_a, mp, n),
                        pt("main", ecn, mp, n),
                        higher=False,
                    ),
                    Cell("marks_per_s", pt("main", main_a, mp, n), pt("main", ecn, mp, n)),
                    Cell("robust_fragile_ratio", pt("main", main_a, mp, n), 1.0),
                )
            ],
            quantifier=ALMOST_ALL,
            quantifier_text="3 of 4 cells or more",
            note="'Heavy lockout' read as N above 120 (a2a: ECN drops at 120 flows).",
        ),
        Finding(
            "a5a",
            "AECN4 at 120 flows: raising max_th from 30 to 50 raises goodput and Jain's index",
            "ch. 5, §5.7.3",
            lambda p: (
                [
                    Cell(metric, pt("aecn4", th[50.0], mp, 120), pt("aecn4", th[30.0], mp, 120))
                    for metric in ("goodput_mbps", "jain")
                    for mp in mps
                ]
                if 30.0 in th and 50.0 in th
                else []
            ),
        ),
        Finding(
            "a5b",
            "AECN4 at 60 flows: goodput is near the link rate once max_th is 40 or more",
            "ch. 5, §5.7.3",
            lambda p: [
                Cell("goodput_mbps", pt("aecn4", th[m], mp, 60), 0.95 * p.bottleneck_mbps)
                for m in p.aecn4_max_th_values
                if m >= 40
                for mp in mps
            ],
            note="'Near' read as within 5 % of the bottleneck's rate (our threshold).",
        ),
        Finding(
            "a5c",
            "AECN4 at 120 flows: raising max_th from 30 to 50 raises the mean one-way delay most "
            "for robust flows, then average, then fragile",
            "ch. 5, §5.7.3",
            lambda p: (
                [
                    Cell(
                        "owd_ms",
                        Delta(
                            pt("aecn4", th[50.0], mp, 120),
                            pt("aecn4", th[30.0], mp, 120),
                            where={"group": more},
                        ),
                        Delta(
                            pt("aecn4", th[50.0], mp, 120),
                            pt("aecn4", th[30.0], mp, 120),
                            where={"group": less},
                        ),
                        table="groups",
                    )
                    for more, less in (("robust", "average"), ("average", "fragile"))
                    for mp in mps
                ]
                if 30.0 in th and 50.0 in th
                else []
            ),
            note="A comparison of changes: per seed, each group's rise in mean one-way delay "
            "(max_th 50 minus 30, the groups table's owd_ms) against the next group's.",
        ),
    ]


def aecn_readings(p: AecnParams) -> list[Reading]:
    """hetero's metric readings (lockout: ch. 5's by default), the profile, the RED count's
    scope and AECN4's robust min_th."""
    other = "group" if p.count_scope == "queue" else "queue"
    evidence = {
        "queue": "the thesis' own code (Appendix B) keeps one RED count per queue",
        "group": "each group has its own max_p (STUDIES.md §4); the text does not say "
        "whether the groups share RED's count (STUDIES.md §4: a reading)",
    }
    fixed = p.aecn4_robust_min_th
    return [
        *star_readings(p, lockout_default="silent"),
        Reading(
            "count_scope",
            "RED's count (packets since the last mark): one per queue or one per group?",
            (
                Alternative(
                    f"per {p.count_scope}",
                    evidence[p.count_scope],
                    settings={"count_scope": p.count_scope},
                ),
                Alternative(f"per {other}", evidence[other], settings={"count_scope": other}),
            ),
        ),
        Reading(
            "aecn4_min_th",
            "AECN4's robust min_th: §5.7.3's per N, or one value for every N?",
            (
                Alternative(
                    "per §5.7.3" if fixed is None else f"{fixed:g}",
                    "§5.7.3: robust min_th 9 at 60 flows, 3 at 120"
                    if fixed is None
                    else "set with --set aecn4_robust_min_th",
                    settings={"aecn4_robust_min_th": fixed},
                ),
                Alternative(
                    "5 (middle of 2-9)" if fixed is None else "per §5.7.3",
                    "AECN4 is AECN3 (robust min_th 2 to 9) plus a larger max_th; "
                    "without §5.7.3's values, the middle of AECN3's range"
                    if fixed is None
                    else "§5.7.3: robust min_th 9 at 60 flows, 3 at 120",
                    settings={"aecn4_robust_min_th": 5.0 if fixed is None else None},
                ),
            ),
        ),
    ]


_TITLES = {
    "main": "ECN vs AECN",
    "a_sweep": "AECN, the a sweep",
    "aecn3": "AECN3: the robust group's min_th",
    "aecn4": "AECN4: AECN3 with a larger max_th",
    "count_scope": "AECN: RED's count per queue or per group",
}


#: The experiments that sweep one AECN parameter: (the scheme field, its axis label).
_SWEPT: dict[str, tuple[str, str]] = {
    "a_sweep": ("a", "a (fragile max_p divisor; b = a)"),
    "aecn3": ("robust_min_th", "robust group's min_th (packets)"),
    "aecn4": ("wide_max_th", "max_th (packets)"),
}


def table_5_1(p: AecnParams, data: StudyData) -> StudyTable:
    """The thesis' Table 5.1: ECN and AECN with a = 1 at base max_p 0.5 (the first base max_p
    if 0.5 is not in the grid), rows N (60 and 120 when in the grid), columns Jain's index (both
    readings) and aggregate goodput, one column per scheme."""
    import pandas as pd

    from ecnsim.studies._base import pivot, select_rows

    mp = 0.5 if any(math.isclose(m, 0.5) for m in p.base_max_p_values) else p.base_max_p_values[0]
    a1 = _label(p, "main", lambda f: f is not None and f.get("variant") == "aecn" and f["a"] == 1)
    metrics = (
        ("jain_interval", "mean Jain's index (per interval)"),
        ("jain", "Jain's index (whole window)"),
        ("goodput_mbps", "goodput (Mb/s)"),
    )
    agg = data.aggregate("metrics", [m for m, _ in metrics])
    agg = select_rows(agg, {"experiment": "main", "base_max_p": mp})
    agg = agg[agg["scheme"].isin(["ECN", a1])]
    ns: list[int] = [n for n in (60, 120) if n in p.n_values] or list(p.n_values)
    agg = agg[agg["n"].isin(ns)]
    means, cis = [], []
    order = {**data.order(), "scheme": ["ECN", a1]}
    for metric, label in metrics:
        if agg.empty:
            break
        mean, ci = pivot(agg, metric, index="n", columns="scheme", order=order)
        means.append(pd.concat({label: mean}, axis=1, names=["quantity"]))
        cis.append(pd.concat({label: ci}, axis=1, names=["quantity"]))
    table = pd.concat(means, axis=1) if means else pd.DataFrame()
    half = pd.concat(cis, axis=1) if cis else None
    return StudyTable(
        f"Table 5.1: ECN and AECN with a = 1 (mark-front alone), base max_p {mp:g}",
        table,
        half,
        note="Rows: N; columns: quantity, scheme. The thesis reports the mean Jain's index; both "
        "readings of it are shown (the jain reading).",
        digits=4,
    )


def swept_figures(p: AecnParams, data: StudyData, exp: str) -> Figures:
    """Mean Jain's index and goodput against the swept parameter of ``exp`` (a, the robust
    min_th, max_th), one line per N, one panel per base max_p: the thesis' a-sweep, AECN3 and
    AECN4 figures."""
    from ecnsim.output import plot
    from ecnsim.studies._base import select_rows

    field_name, xlabel = _SWEPT[exp]
    value = {lab: f[field_name] for e, lab, f in schemes(p) if e == exp and f is not None}
    agg = select_rows(
        data.aggregate("metrics", ["jain_interval", "goodput_mbps", "lockout_flows"]),
        {"experiment": exp},
    )
    out: Figures = {}
    if agg.empty:
        return out
    agg = agg.assign(x=agg["scheme"].map(value).astype(float))
    for metric, ylabel, ylim in (
        ("jain_interval", "mean Jain's index (per interval)", (0.0, 1.02)),
        ("goodput_mbps", "aggregate goodput (Mb/s)", None),
        ("lockout_flows", "flows silent >= lockout_s", None),
    ):
        fig = plot.plot_sweep_panels(
            agg[agg["metric"] == metric],
            "x",
            panel="base_max_p",
            hue="n",
            ylabel=ylabel,
            xlabel=xlabel,
            ylim=ylim,
            panel_label="base max_p",
            hue_order=[n for n in p.n_values],
            title=_TITLES[exp],
        )
        out[f"{exp}_{metric}_vs_{field_name}"] = (
            fig,
            f"{_TITLES[exp]}: {ylabel} against {xlabel}, one line per N, one panel per base "
            "max_p, as the thesis plots it.",
        )
    return out


class AecnStudy(Study):
    name = "aecn"
    title = "Adaptive ECN vs ECN with heterogeneous round-trip times"
    source = "Z. Zheng, WPI MS thesis, ch. 5 (ns-2). STUDIES.md §4."
    Params = AecnParams
    # Measured 2026-12-02 (`ecnsim study run aecn --jobs 2` from an empty store):
    # PGO wheels of main bede5e1 (shared machine, top priority) and of main 2172e3c
    # (idle); each value covers the larger of the two, then scaled by the render's
    # estimated wall time after branch render2 over before (its CPU measured before and
    # after on copies of the idle store; docs/performance.md, "Study run times").
    render_cost_s: ClassVar[float] = 21.0
    run_cost_scale: ClassVar[float] = 1.5
    plan_cost_s_per_run: ClassVar[float] = 0.021
    variants: ClassVar[Mapping[str, Mapping[str, Any]]] = {"thesis": {}}
    derive_version = 2
    derive = staticmethod(derive_star)

    def quick(self, params: AecnParams) -> AecnParams:
        return dataclasses.replace(
            params,
            n_values=(30, 120),
            base_max_p_values=(0.5,),
            experiments=("main",),
            duration_s=40.0,
            warmup_s=10.0,
            figure_n=(120,),
            seeds=1,
        )

    def setup(self, p: AecnParams) -> list[tuple[str, str]]:
        rtts = " / ".join(f"{2 * (d + p.bottleneck_delay_ms):g}" for d in p.access_delays_ms)
        return [
            ("topology", "N sources, each on its own access link, -> router -> sink"),
            ("N (split equally into fragile / average / robust)", ", ".join(map(str, p.n_values))),
            ("access one-way delays (ms)", " / ".join(_fmt(d) for d in p.access_delays_ms)),
            ("minimum RTTs (ms)", rtts),
            ("access link capacity", f"{p.aggregate_access_mbps:g} Mb/s / N each"),
            ("bottleneck", f"{p.bottleneck_mbps:g} Mb/s, {p.bottleneck_delay_ms:g} ms"),
            ("router buffer (packets)", str(p.buffer_packets)),
            ("min_th / max_th (packets)", f"{p.min_th:g} / {p.max_th:g}"),
            ("w_q", f"{p.w_q:g}"),
            ("base max_p", ", ".join(_fmt(m) for m in p.base_max_p_values)),
            ("AECN a / b", f"{p.a:g} / {p.b:g}; a sweep {', '.join(map(_fmt, p.a_values))}"),
            ("AECN3 robust min_th", ", ".join(map(_fmt, p.robust_min_th_values))),
            (
                "AECN4 max_th",
                ", ".join(map(_fmt, p.aecn4_max_th_values))
                + f" (robust min_th {_aecn4_min_th_text(p)})",
            ),
            (
                "RTT classes (carried RTT)",
                "robust [0.5, 75) ms, average [75, 150) ms and 0 (no sample), fragile >= 150 ms",
            ),
            ("carried RTT", f"{p.carry_rtt} RTT, in whole ms"),
            ("RED count", f"one per {p.count_scope}"),
            ("TCP", f"{p.cc}, FTP, an ACK for every packet, window {p.window_packets}"),
            (
                "packets",
                f"data {p.packet_bytes} B, ACK 40 B"
                + (
                    " (ns-2's accounting: the whole data packet is payload)"
                    if p.ns2_accounting
                    else ""
                ),
            ),
            ("simulated", f"{p.duration_s:g} s, the first {p.warmup_s:g} s discarded"),
            ("experiments", ", ".join(p.experiments)),
            ("defaults", f"ecnsim profile {p.profile}"),
            ("seeds per point", str(p.seeds)),
        ]

    def findings(self, p: AecnParams) -> list[Finding]:
        return aecn_findings(p)

    def readings(self, p: AecnParams) -> list[Reading]:
        return aecn_readings(p)

    def choices(self, p: AecnParams) -> list[Choice]:
        return [
            Choice(
                "The RTT the sender carries",
                f"its {p.carry_rtt} RTT",
                "The thesis used a Vegas-style base RTT (the smallest RTT the sender has "
                "measured); a smoothed RTT includes queueing delay, which moves flows across "
                "the 75 ms and 150 ms class boundaries as the queue fills.",
                "carry_rtt",
            ),
            Choice(
                "RED's count (packets since the last mark)",
                f"one per {p.count_scope}",
                "STUDIES.md does not say; the thesis' own code (its appendix) keeps one count "
                "for the queue. The count_scope experiment shows both.",
                "count_scope",
            ),
            Choice(
                "b in the a sweep",
                "b = a" if p.a_sweep_b is None else f"b = {p.a_sweep_b:g}",
                "The source sweeps a with a = b = 2.5 as the default; moving both keeps the "
                "fragile and robust adjustments symmetric.",
                "a_sweep_b",
            ),
            Choice(
                "AECN4's robust min_th",
                _aecn4_min_th_text(p),
                "§5.7.3 states the robust min_th AECN4 builds on: 9 packets at 60 flows, 3 at "
                "120; the other N take the nearer of the two. The alternative (the aecn4_min_th "
                "reading) is one value for every N, the middle of AECN3's 2 to 9 range (5).",
                "aecn4_robust_min_th",
            ),
            Choice(
                "The ECN baseline",
                "RED with ECN marking between the thresholds and drops above max_th, "
                "max_p = base max_p, gentle off",
                "AECN drops above max_th 'as standard ECN does'; the baseline is that ECN.",
                "gentle",
            ),
            Choice(
                "Access buffers, start times, packet sizes, lockout",
                "as in the hetero study",
                "The thesis keeps chapter 4's setup apart from the listed changes.",
            ),
        ]

    # -- runs -------------------------------------------------------------------------

    def grid(self, p: AecnParams) -> list[dict[str, Any]]:
        return [
            {"experiment": exp, "scheme": label, "base_max_p": mp, "n": n}
            for exp, label, _ in schemes(p)
            for mp in p.base_max_p_values
            for n in p.n_values
        ]

    def scenario(self, p: AecnParams, point: Mapping[str, Any]) -> Any:
        fields = {(e, label): f for e, label, f in schemes(p)}[
            (str(point["experiment"]), str(point["scheme"]))
        ]
        base_max_p = float(point["base_max_p"])
        if fields is not None and fields.get("variant") == "aecn4":
            fields = {**fields, "robust_min_th": aecn4_robust_min_th(p, int(point["n"]))}
        if fields is None:
            queue = red(
                limit_packets=p.buffer_packets,
                min_th=p.min_th,
                max_th=p.max_th,
                w_q=p.w_q,
                max_p=base_max_p,
                gentle=p.gentle,
                ecn="rfc3168",
            )
        else:
            queue = aecn(
                limit_packets=p.buffer_packets,
                min_th=p.min_th,
                max_th=p.max_th,
                w_q=p.w_q,
                base_max_p=base_max_p,
                **fields,
            )
        n = int(point["n"])
        return hetero_rtt(
            n,
            name=f"aecn-{point['experiment']}-{point['scheme']}-maxp{base_max_p:g}-n{n}".replace(
                " ", "_"
            ),
            duration=p.duration_s,
            warmup=p.warmup_s,
            sample_interval=p.sample_interval_s,
            profile=p.profile,
            groups=GROUPS,
            access_delays=[d / 1e3 for d in p.access_delays_ms],
            aggregate_access_rate=p.aggregate_access_mbps * 1e6,
            bottleneck_rate=p.bottleneck_mbps * 1e6,
            bottleneck_delay=p.bottleneck_delay_ms / 1e3,
            queue=queue,
            access_queue={"type": "droptail", "limit_packets": p.access_buffer_packets},
            starts=p.starts_s,
            start_jitter=p.start_jitter_s if p.start_jitter_s > 0 else None,
            tcp=tcp(
                cc=p.cc,
                **_packet_fields(p.packet_bytes, p.ns2_accounting),
                max_cwnd=p.window_packets,
                delayed_ack=False,
                ecn="request",
                carry_rtt=p.carry_rtt,
            ),
        )

    def _figure_points(self, p: AecnParams) -> tuple[list[int], float]:
        ns = [n for n in p.figure_n if n in p.n_values] or [max(p.n_values)]
        return ns, p.base_max_p_values[0]

    def job(self, p: AecnParams, point: Mapping[str, Any]) -> JobSpec:
        ns, max_p = self._figure_points(p)
        figure = (
            point["experiment"] == "main"
            and int(point["n"]) in ns
            and math.isclose(float(point["base_max_p"]), max_p)
        )
        context = {
            "warmup_s": p.warmup_s,
            "end_s": p.duration_s,
            "lockout_s": p.lockout_s,
            "jain_interval_s": p.jain_interval_s,
            "bin_s": p.bin_s,
            "min_th": p.min_th,
            "max_th": p.max_th,
            "groups": list(GROUPS),
            "series": figure,
            "raster_seed": p.raster_seed if figure else None,
        }
        return JobSpec(context=context, trace_links=(0,) if figure else None)

    def estimate_seconds(self, p: AecnParams, point: Mapping[str, Any]) -> float:
        # The same star and run path as hetero's, measured the same way.
        return star_run_seconds(p.duration_s, int(point["n"]), self.job(p, point).trace_links)

    # -- rendering --------------------------------------------------------------------

    def tables(self, p: AecnParams, data: StudyData) -> dict[str, StudyTable]:
        out: dict[str, StudyTable] = {}
        if "main" in p.experiments:
            out["table_5_1"] = table_5_1(p, data)
        for exp in p.experiments:
            out.update(
                star_tables(
                    data,
                    groups=GROUPS,
                    columns=("base_max_p", "scheme"),
                    where={"experiment": exp},
                    prefix=f"{exp}_",
                    title=f"{_TITLES[exp]}: ",
                )
            )
        return out

    def figures(self, p: AecnParams, data: StudyData) -> Figures:
        ns, max_p = self._figure_points(p)
        out: Figures = {}
        for exp in p.experiments:
            if exp in _SWEPT:
                out.update(swept_figures(p, data, exp))
                continue
            out.update(
                star_figures(
                    data,
                    groups=GROUPS,
                    curve="scheme",
                    panel="base_max_p",
                    panel_label="base max_p",
                    figure_points=[{"n": n, "base_max_p": max_p} for n in ns]
                    if exp == "main"
                    else [],
                    warmup_s=p.warmup_s,
                    end_s=p.duration_s,
                    min_th=p.min_th,
                    max_th=p.max_th,
                    where={"experiment": exp},
                    prefix=f"{exp}_",
                    title=f"{_TITLES[exp]}: ",
                )
            )
        return out
