#!/usr/bin/env python3
"""Run the ns-2 cross-check scenarios in ns-2.35 and in ecnsim and compare them.

From the repository root, with ecnsim's Python::

    .venv/bin/python validation/ns2/compare.py                 # deterministic + RED CBR (seconds)
    .venv/bin/python validation/ns2/compare.py --hetero        # + hetero star (N = 30, 120; min)
    .venv/bin/python validation/ns2/compare.py reno-3drops     # named scenarios only
    .venv/bin/python validation/ns2/compare.py --tcl reno-3drops   # print the ns-2 script

Prints a Markdown table, writes ``last_results.json`` next to this file, and exits
1 if a check is outside its band (``scenarios.py``) and is not a known difference
(``known.py``, each named with its cause); known differences outside their band are
listed with their cause and do not change the exit status, and a known difference that
comes back inside its band is reported, so the list does not rot. A seeded check whose
band is too wide to fail (``scenarios.MAX_BAND_REL``) fails. ``--checks`` prints, per
case, which metrics can fail.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import known  # noqa: E402
import ns2cmp  # noqa: E402
import scenarios  # noqa: E402
from ns2cmp import Case  # noqa: E402


@dataclass
class Check:
    case: str
    metric: str
    ns2: Any
    ecnsim: Any
    band: str
    ok: bool

    @property
    def known(self) -> str | None:
        """The cause, if this check is a known difference (``known.py``)."""
        return known.ALL.get((self.case, self.metric))

    @property
    def verdict(self) -> str:
        if self.known is None:
            return "ok" if self.ok else "FAIL"
        return "known, inside band" if self.ok else "known"

    def row(self) -> str:
        cells = [
            self.case,
            self.metric,
            _fmt(self.ecnsim),
            _fmt(self.ns2),
            self.band,
            self.verdict,
        ]
        return "| " + " | ".join(cells) + " |"


@dataclass
class Verdict:
    """The checks sorted by what they mean for the exit status."""

    failed: list[Check]  # outside the band, not a known difference: exit 1
    known: list[Check]  # known differences outside their band
    back_inside: list[Check]  # known differences inside their band: report

    @classmethod
    def of(cls, checks: list[Check]) -> Verdict:
        return cls(
            [c for c in checks if not c.ok and c.known is None],
            [c for c in checks if not c.ok and c.known is not None],
            [c for c in checks if c.ok and c.known is not None],
        )

    def report(self) -> str:
        lines = []
        if self.known:
            lines.append(f"\nKnown differences outside their band ({len(self.known)}):")
            lines += [f"- {c.case}:{c.metric}: {c.known}" for c in self.known]
        if self.back_inside:
            lines.append(
                f"\nKnown differences back inside their band ({len(self.back_inside)}; "
                "if this holds, find why and take the entry out of validation/ns2/known.py):"
            )
            lines += [f"- {c.case}:{c.metric}: {c.known}" for c in self.back_inside]
        if self.failed:
            lines.append(f"\nOutside their band, not known differences ({len(self.failed)}):")
            lines += [
                f"- {c.case}:{c.metric}: ecnsim {c.ecnsim}, ns-2 {c.ns2}, band {c.band}"
                for c in self.failed
            ]
        return "\n".join(lines)

    @property
    def status(self) -> int:
        return 1 if self.failed else 0


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def deterministic_checks(case: Case, ns2: dict[str, Any], eco: dict[str, Any]) -> list[Check]:
    a, b = ns2cmp.summary(case, ns2), ns2cmp.summary(case, eco)
    out = []
    for metric, band in scenarios.DETERMINISTIC_BANDS.items():
        if metric == "ssthresh_steps":
            x, y = ns2cmp.ssthresh_steps(ns2), ns2cmp.ssthresh_steps(eco)
            out.append(Check(case.name, metric, x, y, "exact", x == y))
            continue
        if metric == "marks" and not case.marks and not case.ecn:
            continue
        if metric == "ecn_reductions" and not case.ecn:
            continue
        x, y = a[metric], b[metric]
        if band == "exact":
            out.append(Check(case.name, metric, int(x), int(y), "exact", int(x) == int(y)))
        else:
            ok = abs(y - x) <= float(band) * abs(x)
            out.append(Check(case.name, metric, x, y, f"{float(band):.0%}", ok))
    return out


def red_cbr_checks(case: Case, ns2: dict[str, Any], eco: dict[str, Any]) -> list[Check]:
    a, b = ns2cmp.summary(case, ns2), ns2cmp.summary(case, eco)
    out = []
    for metric, band in scenarios.RED_CBR_BANDS.items():
        x, y = a[metric], b[metric]
        out.append(Check(case.name, metric, x, y, f"{band:.0%}", abs(y - x) <= band * abs(x)))
    for metric in ("drops", "arrivals"):
        out.append(Check(case.name, metric, a[metric], b[metric], "info", True))
    return out


def _band_label(band: tuple[str, float] | tuple[str, float, float]) -> str:
    if band[0] == "rel":
        return f"{band[1]:.0%}"
    return f"bins: {band[1]:.0%} / {band[2]:g}"


def aqm_cbr_checks(case: Case, ns2: dict[str, Any], eco: dict[str, Any]) -> list[Check]:
    """The metrics scenarios.AQM_CBR_METRICS lists for the case, against AQM_CBR_BANDS."""
    a, b = ns2cmp.summary(case, ns2), ns2cmp.summary(case, eco)
    out = []
    for metric in scenarios.AQM_CBR_METRICS[case.name]:
        band = scenarios.AQM_CBR_BANDS[metric]
        if band[0] == "rel":
            x, y = a[metric], b[metric]
            ok = abs(y - x) <= band[1] * abs(x)
            out.append(Check(case.name, metric, x, y, _band_label(band), ok))
            continue
        _, rel, floor = band  # type: ignore[misc]
        column = metric.removesuffix("_bins")
        q = case.queue
        if column == "avg" and getattr(q, "qib", False):
            floor *= q.mean_pktsize  # type: ignore[union-attr]
        xs = ns2cmp.aqm_bins(case, ns2, column)
        ys = ns2cmp.aqm_bins(case, eco, column)
        bad = [
            i
            for i, (x, y) in enumerate(zip(xs, ys, strict=True))
            if not abs(y - x) <= max(rel * abs(x), floor)
        ]
        worst = max(range(len(xs)), key=lambda i: abs(ys[i] - xs[i]) if xs[i] == xs[i] else 0)
        assert case.bin
        t0, t1 = worst * case.bin, (worst + 1) * case.bin
        label = f"{_band_label(band)}; {len(bad)}/{len(xs)} out, worst {t0:g}-{t1:g} s"
        out.append(Check(case.name, metric, xs[worst], ys[worst], label, not bad))
    for metric in ("drops", "arrivals"):
        out.append(Check(case.name, metric, a[metric], b[metric], "info", True))
    return out


def _mean_sd(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def hetero_checks(
    case: Case,
    ns2: list[dict[str, Any]],
    eco: list[dict[str, Any]],
    bands: dict[str, tuple[str, float]] | None = None,
    info: tuple[str, ...] = (
        "drops",
        "marks",
        "timeouts",
        "goodput_pps_fragile",
        "goodput_pps_robust",
    ),
) -> list[Check]:
    """Means over seeds, each within max(fixed band, NOISE_SIGMAS standard errors)."""
    sa = [ns2cmp.summary(case, r) for r in ns2]
    sb = [ns2cmp.summary(case, r) for r in eco]
    out = []
    left_out = scenarios.HETERO_LEFT_OUT.get(case.name, ())
    for metric, (kind, fixed) in (bands or scenarios.HETERO_BANDS).items():
        if (metric == "marks" and not case.ecn) or metric in left_out:
            continue
        xa = [s[metric] for s in sa]
        xb = [s[metric] for s in sb]
        ma, sda = _mean_sd(xa)
        mb, sdb = _mean_sd(xb)
        noise = scenarios.NOISE_SIGMAS * math.sqrt(sda**2 / len(xa) + sdb**2 / len(xb))
        if kind == "rel":
            band = max(fixed * abs(ma), noise)
            label = f"±{band / abs(ma):.1%}" if ma else f"±{band:.3g}"
            too_wide = band > scenarios.MAX_BAND_REL * max(abs(ma), abs(mb))
        else:
            band = max(fixed, noise)
            label = f"±{band:.3f}"
            too_wide = band > scenarios.MAX_BAND_ABS
        ok = abs(mb - ma) <= band and not too_wide
        if too_wide:
            label += " too wide to fail"
        out.append(
            Check(
                case.name,
                metric,
                f"{ma:.4g} ± {sda:.2g}",
                f"{mb:.4g} ± {sdb:.2g}",
                label,
                ok,
            )
        )
    for metric in info + tuple(m for m in left_out if m not in info):
        ma, sda = _mean_sd([s[metric] for s in sa])
        mb, sdb = _mean_sd([s[metric] for s in sb])
        out.append(
            Check(case.name, metric, f"{ma:.4g} ± {sda:.2g}", f"{mb:.4g} ± {sdb:.2g}", "info", True)
        )
    return out


def aqm_tcp_checks(case: Case, ns2: list[dict[str, Any]], eco: list[dict[str, Any]]) -> list[Check]:
    """AQM with TCP flows: the hetero rule with AQM_TCP_BANDS."""
    return hetero_checks(
        case, ns2, eco, scenarios.AQM_TCP_BANDS, info=("timeouts", "jain", "arrivals")
    )


def table(checks: list[Check]) -> str:
    head = "| scenario | metric | ecnsim | ns-2.35 | band | verdict |\n|---|---|---|---|---|---|"
    return "\n".join([head] + [c.row() for c in checks])


def case_metrics(name: str) -> tuple[str, list[str], list[str]]:
    """A case's family, the metrics its band checks, and those reported as information only."""
    if name in scenarios.DETERMINISTIC or name in scenarios.RED_OVERFLOW:
        case = {**scenarios.DETERMINISTIC, **scenarios.RED_OVERFLOW}[name]
        checked = [
            m
            for m in scenarios.DETERMINISTIC_BANDS
            if not (m == "marks" and not case.marks and not case.ecn)
            and not (m == "ecn_reductions" and not case.ecn)
        ]
        return "deterministic, one seed", checked, []
    if name in scenarios.RED_CBR:
        return "RED with CBR, one seed", list(scenarios.RED_CBR_BANDS), ["drops", "arrivals"]
    if name in scenarios.AQM_CBR:
        return (
            "AQM with CBR, one seed",
            list(scenarios.AQM_CBR_METRICS[name]),
            ["drops", "arrivals"],
        )
    if name in scenarios.HETERO:
        case, bands, family = scenarios.HETERO[name], scenarios.HETERO_BANDS, "hetero, 5 seeds"
        info = ["drops", "marks", "timeouts", "goodput_pps_fragile", "goodput_pps_robust"]
    else:
        case, bands, family = (
            scenarios.AQM_TCP[name],
            scenarios.AQM_TCP_BANDS,
            "AQM with TCP, 5 seeds",
        )
        info = ["timeouts", "jain", "arrivals"]
    left_out = scenarios.HETERO_LEFT_OUT.get(name, ())
    checked = [m for m in bands if not (m == "marks" and not case.ecn) and m not in left_out]
    return family, checked, info + [m for m in left_out if m not in info]


def checks_table() -> str:
    """Per case: the metrics whose band can fail, the known differences left out by name,
    and the metrics reported as information only (docs/validation.md's table)."""
    rows = [
        "| case | family | can fail | known difference (left out by name) | information only |",
        "|---|---|---|---|---|",
    ]
    every = [
        *scenarios.DETERMINISTIC,
        *scenarios.RED_CBR,
        *scenarios.AQM_CBR,
        *scenarios.RED_OVERFLOW,
        *scenarios.HETERO,
        *scenarios.AQM_TCP,
    ]
    for name in every:
        family, checked, info = case_metrics(name)
        can = [m for m in checked if (name, m) not in known.ALL]
        kn = [m for m in checked if (name, m) in known.ALL]
        cells = [name, family, ", ".join(can), ", ".join(kn) or "-", ", ".join(info) or "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def run_pair(case: Case, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return ns2cmp.run_ns2(case, seed), ns2cmp.run_ecnsim(case, seed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("names", nargs="*", help="scenario names (default: all fast ones)")
    ap.add_argument("--hetero", action="store_true", help="also the hetero star (minutes)")
    ap.add_argument("--aqm", action="store_true", help="also the AQMs with TCP flows (minutes)")
    ap.add_argument("--seeds", type=int, default=len(scenarios.HETERO_SEEDS), help="hetero seeds")
    ap.add_argument("--jobs", type=int, default=2, help="ns-2 runs in parallel (hetero)")
    ap.add_argument("--tcl", action="store_true", help="print the ns-2 script(s) and exit")
    ap.add_argument(
        "--checks", action="store_true", help="print which metrics of each case can fail, and exit"
    )
    args = ap.parse_args(argv)
    if args.checks:
        print(checks_table())
        return 0
    every = {
        **scenarios.DETERMINISTIC,
        **scenarios.RED_CBR,
        **scenarios.AQM_CBR,
        **scenarios.RED_OVERFLOW,
        **scenarios.HETERO,
        **scenarios.AQM_TCP,
    }
    if args.names:
        unknown = [n for n in args.names if n not in every]
        if unknown:
            ap.error(f"unknown scenario(s) {unknown}; known: {sorted(every)}")
        names = args.names
    else:
        names = list(scenarios.DETERMINISTIC) + list(scenarios.RED_CBR)
        names += list(scenarios.AQM_CBR) + list(scenarios.RED_OVERFLOW)
        if args.hetero:
            names += list(scenarios.HETERO)
        if args.aqm:
            names += list(scenarios.AQM_TCP)
    if args.tcl:
        for n in names:
            print(ns2cmp.tcl(every[n], 1))
        return 0
    t0 = time.time()
    checks: list[Check] = []
    record: dict[str, Any] = {}
    for n in names:
        case = every[n]
        if n in scenarios.HETERO or n in scenarios.AQM_TCP:
            pool = scenarios.HETERO_SEEDS if n in scenarios.HETERO else scenarios.AQM_TCP_SEEDS
            seeds = pool[: args.seeds]
            with ThreadPoolExecutor(args.jobs) as ex:
                ns2 = list(ex.map(ns2cmp.run_ns2, [case] * len(seeds), seeds))
            eco = [ns2cmp.run_ecnsim(case, s) for s in seeds]
            fam = hetero_checks if n in scenarios.HETERO else aqm_tcp_checks
            checks += fam(case, ns2, eco)
            record[n] = {
                "ns2": [ns2cmp.summary(case, r) for r in ns2],
                "ecnsim": [ns2cmp.summary(case, r) for r in eco],
            }
        else:
            ns2, eco = run_pair(case, 1)
            if n in scenarios.RED_CBR:
                checks += red_cbr_checks(case, ns2, eco)
            elif n in scenarios.AQM_CBR:
                checks += aqm_cbr_checks(case, ns2, eco)
            else:
                checks += deterministic_checks(case, ns2, eco)
            record[n] = {
                "ns2": ns2cmp.summary(case, ns2),
                "ecnsim": ns2cmp.summary(case, eco),
                "ssthresh_steps": {
                    "ns2": ns2cmp.ssthresh_steps(ns2),
                    "ecnsim": ns2cmp.ssthresh_steps(eco),
                },
            }
    print(table(checks))
    v = Verdict.of(checks)
    print(v.report())
    n_ok = sum(c.ok for c in checks)
    print(
        f"\n{n_ok} ok, {len(v.failed)} outside band, {len(v.known)} known differences outside "
        f"band, {len(v.back_inside)} known back inside; {time.time() - t0:.0f} s"
    )
    with open(os.path.join(HERE, "last_results.json"), "w") as f:
        json.dump(record, f, indent=1, default=str)
    return v.status


if __name__ == "__main__":
    sys.exit(main())
