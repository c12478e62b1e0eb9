#!/usr/bin/env python3
"""Cross-check ecnsim's BBR against ns-3 3.44's TcpBbr.

``validation/ns3_modern_cc/compare.py`` (its network, TCP settings, metrics and
options) with this directory's ``scenarios.py`` (the DropTail grid and BBR's bands),
``cc = "bbr"`` on ecnsim's side and ``TcpBbr`` with pacing on ns-3's. From the
repository root, NS3_PYTHON the ns-3 venv's python::

    .venv/bin/python validation/ns3_bbr/compare.py --save-ns3 F.json --only bbr-10M
    .venv/bin/python validation/ns3_bbr/compare.py --only bbr-10M \
        --ns3-json validation/ns3_bbr/results/ns3_10M.json

``--ecnsim-tcp KEY=JSON`` overrides an ecnsim TCP field (explanatory, no verdict).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


scenarios = _load(os.path.join(HERE, "scenarios.py"), "ns3_bbr_scenarios")
# The base harness imports its own ``scenarios`` module by that name: not a stale one.
sys.modules.pop("scenarios", None)
base = _load(os.path.join(HERE, "..", "ns3_modern_cc", "compare.py"), "ns3_bbr_base")
base.scenarios = scenarios

_ecnsim_scenario = base.ecnsim_scenario
_ns3_config = base.ns3_config
_metrics = base.metrics


def ecnsim_scenario(sc: dict[str, Any]) -> Any:
    """The CUBIC scenario of ns3_modern_cc (DropTail of ``buffer``, the common TCP
    settings) with ``cc = "bbr"`` and no CUBIC parameters."""
    s = _ecnsim_scenario({**sc, "algo": "cubic"})
    d = s.to_dict()
    t = d["tcp"]
    for k in [k for k in t if k.startswith("cubic_")]:
        del t[k]
    t["cc"] = "bbr"
    t.update(base.ECNSIM_TCP)
    import ecnsim

    return ecnsim.Scenario.from_dict(d)


def ns3_config(sc: dict[str, Any], variant: str | None = None) -> dict[str, Any]:
    """ns3_modern_cc's description with ``TcpBbr``, pacing on. ``variant`` ``"nosack"``
    (explanatory, no verdict): ns-3's SACK off (``TcpSocketBase::Sack`` false), classic
    recovery on duplicate ACKs alone, with Limited Transmit (below)."""
    cfg = _ns3_config({**sc, "algo": "cubic"}, None)
    cfg["tcp"]["cc"] = "Bbr"
    if "ns3_snd_buf" in sc:  # the many-flow rows (scenarios.MANY_NS3_SND_BUF)
        cfg["tcp"]["snd_buf"] = sc["ns3_snd_buf"]
    if variant == "nosack":
        cfg["tcp"]["sack"] = False
        # DEVIATION(ns-3): ns-3 3.44 asserts in SendPendingData (tcp-socket-base.cc) that a
        # connection with neither SACK nor Limited Transmit sends nothing in CA_DISORDER;
        # BBR's window does not stop it there, so without Limited Transmit the run aborts
        # (bbr-many-20M-100ms-20 at 0.59 s). Limited Transmit on, for this variant only.
        cfg["tcp"]["limited_transmit"] = True
    cfg["ns3_defaults"] = {
        "ns3::TcpSocketState::EnablePacing": "true",
        "ns3::TcpSocketState::PaceInitialWindow": "false",
    }
    return cfg


def metrics(sc: dict[str, Any], m: dict[str, Any]) -> dict[str, float]:
    # BBR's congestion events are CUBIC's (fast recoveries + timeouts)
    out = _metrics({**sc, "algo": "cubic"}, m)
    if sc.get("many"):
        # scenarios.INFO, shown without a band: drops /s and the per-flow goodput spread
        g = np.array(m["goodput"], dtype=float)
        out["drops_per_s"] = m["drops"] / (scenarios.DURATION - scenarios.WARMUP)
        out["flow_min"] = float(g.min())
        out["flow_median"] = float(np.median(g))
        out["flow_max"] = float(g.max())
    return out


base.ecnsim_scenario = ecnsim_scenario
base.ns3_config = ns3_config
base.metrics = metrics
base.VARIANTS = ["nosack"]

if __name__ == "__main__":
    sys.exit(base.main(sys.argv))
