"""What the cross-check harnesses share beyond their bands (``bands.py``): the ``--ecnsim-tcp``
option, the Linux side of an emulated comparison, the banded Markdown table (validation/
linux_cubic, linux_hystart, linux_bbr, ns3_modern_cc, ns3_bbr), and PIE's settings on both
simulators (validation/ns3_fq_codel's PIE and FQ-PIE).

Imported as ``bands`` is (the harness puts ``validation/`` on ``sys.path``); nothing here
imports ecnsim or ns-3 before a function that needs it is called, so the ns-3 side
(``$NS3_PYTHON``, without ecnsim) imports it too."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bands import band_text, within

# --- the --ecnsim-tcp option ---------------------------------------------------------


def add_ecnsim_tcp_option(ap: argparse.ArgumentParser, example: str = "") -> None:
    """``--ecnsim-tcp KEY=VALUE`` (repeatable): an explanatory variant's ecnsim TCP field."""
    ap.add_argument(
        "--ecnsim-tcp",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="explanatory variant: override an ecnsim tcp field (JSON value)"
        + (f", e.g. {example}" if example else "")
        + "; the table is then not a verdict",
    )


def tcp_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``--ecnsim-tcp`` values, ``KEY=JSON`` each, as a dict."""
    out: dict[str, Any] = {}
    for kv in pairs:
        key, _, value = kv.partition("=")
        out[key] = json.loads(value)
    return out


def add_linux_sysctl_option(ap: argparse.ArgumentParser, example: str) -> None:
    """``--linux-sysctl KEY=VALUE`` (repeatable): an explanatory variant's sysctl for every
    emulated host's namespace."""
    ap.add_argument(
        "--linux-sysctl",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"explanatory variant: a sysctl for every emulated host (e.g. {example}); the "
        "table is then not a verdict",
    )


def sysctl_overrides(pairs: Sequence[str]) -> dict[str, str]:
    """``--linux-sysctl`` values, ``KEY=VALUE`` each, as a dict."""
    return {key: value for key, _, value in (kv.partition("=") for kv in pairs)}


# --- the Linux side ------------------------------------------------------------------


def linux_side(
    scenario: dict[str, Any],
    side: Callable[[Any], dict[str, Any]],
    *,
    sysctls: Mapping[str, str] | None = None,
    flow_columns: Sequence[str] = (),
) -> dict[str, Any]:
    """Emulate ``scenario`` (real time, as root): ``side`` of its results, with the real-time
    driver's own table (``emulation``) and the load average at both ends. ``sysctls``: set in
    every emulated host's namespace (explanatory variants: recorded as ``linux_sysctl``);
    ``flow_columns``: columns of the emulated ``flows`` table to keep as ``flows``."""
    from ecnsim.emulation import Emulation

    em = Emulation(scenario)
    if sysctls:
        em.plan = em.make_plan()
        for h in em.plan.hosts:
            h.sysctls.update(sysctls)
    res = em.run()
    out = side(res)
    table = res.tables["emulation"]
    out["emulation"] = {c: table.to_pylist(c) for c in table.column_names}
    if flow_columns:
        flows = res.tables["flows"]
        out["flows"] = {c: flows.to_pylist(c) for c in flow_columns if c in flows.column_names}
    if sysctls is not None:
        out["linux_sysctl"] = dict(sysctls)
    out["loadavg"] = [res.meta.get("loadavg_start", ""), res.meta.get("loadavg_end", "")]
    return out


# --- the banded table ----------------------------------------------------------------


def table_header(lead: Sequence[str], peer: str) -> None:
    """The Markdown head of a banded table: ``lead`` columns, then metric, ecnsim, ``peer``,
    band, result."""
    cols = [*lead, "metric", "ecnsim", peer, "band", "result"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))


def banded_rows(
    lead: Sequence[str],
    ecnsim: Mapping[str, float],
    peer: Mapping[str, float],
    bands: Mapping[str, tuple[Any, ...]],
    *,
    verdict: bool = True,
) -> tuple[int, int]:
    """Print a row per band whose metric ``ecnsim`` has (after the ``lead`` cells): both
    values, the band and pass / **FAIL** (``(variant)`` without a ``verdict``). Returns the
    checks judged and those that failed (0, 0 without a ``verdict``)."""
    total = failed = 0
    for name, band in bands.items():
        if name not in ecnsim:
            continue
        ok = within(band, ecnsim[name], peer[name])
        if verdict:
            total += 1
            failed += not ok
        result = ("pass" if ok else "**FAIL**") if verdict else "(variant)"
        cells = [*lead, name, f"{ecnsim[name]:.4g}", f"{peer[name]:.4g}", band_text(band), result]
        print("| " + " | ".join(cells) + " |")
    return total, failed


def info_rows(
    lead: Sequence[str],
    ecnsim: Mapping[str, float],
    peer: Mapping[str, float],
    names: Sequence[str],
) -> None:
    """Print a row per metric in ``names`` with both values, no band and ``(info)``: shown
    beside the banded rows, never judged."""
    for name in names:
        cells = [*lead, name, f"{ecnsim[name]:.4g}", f"{peer[name]:.4g}", "none", "(info)"]
        print("| " + " | ".join(cells) + " |")


def print_summary(total: int, failed: int) -> None:
    """The line under a banded table."""
    print(f"\n{total} banded checks: {total - failed} pass, {failed} FAIL")


# --- PIE on both simulators (validation/ns3_fq_codel) ---------------------------------


def ecnsim_pie_settings(p: Mapping[str, Any]) -> dict[str, Any]:
    """ecnsim's ``pie()`` / ``fq_pie()`` PIE settings from a harness's PIE table ``p``
    (``target``, ``t_update``, ``alpha``, ``beta``, ``max_burst``, ``mark_ecn_threshold``,
    ``cap_drop_adjustment``, ``derandomize``, ``mean_pktsize_ip``): ECN on, byte mode off,
    timestamps, the "2 packets" safeguard in wire bytes (IP + the 2-byte PPP header)."""
    return {
        "target": p["target"],
        "t_update": p["t_update"],
        "alpha": p["alpha"],
        "beta": p["beta"],
        "max_burst": p["max_burst"],
        "ecn": True,
        "mark_ecn_threshold": p["mark_ecn_threshold"],
        "byte_mode": False,
        "mean_pktsize": p["mean_pktsize_ip"] + 2,  # "2 packets" in wire bytes
        "delay_estimator": "timestamp",
        "cap_drop_adjustment": p["cap_drop_adjustment"],
        "derandomize": p["derandomize"],
    }


def ns3_pie_attributes(ns: Any, p: Mapping[str, Any], sec: Callable[[float], Any]) -> list[Any]:
    """ns-3's ``PieQueueDisc`` / ``FqPieQueueDisc`` PIE attributes (name, value, ...) from the
    same table: the counterpart of :func:`ecnsim_pie_settings`."""
    return [
        "QueueDelayReference", sec(p["target"]),
        "Tupdate", sec(p["t_update"]),
        "Supdate", sec(0.0),
        "A", ns.DoubleValue(p["alpha"]),
        "B", ns.DoubleValue(p["beta"]),
        "MaxBurstAllowance", sec(p["max_burst"]),
        "UseDequeueRateEstimator", ns.BooleanValue(False),
        "UseCapDropAdjustment", ns.BooleanValue(p["cap_drop_adjustment"]),
        "UseDerandomization", ns.BooleanValue(p["derandomize"]),
        "UseEcn", ns.BooleanValue(True),
        "MarkEcnThreshold", ns.DoubleValue(p["mark_ecn_threshold"]),
    ]  # fmt: skip
