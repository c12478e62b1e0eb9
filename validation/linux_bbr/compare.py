#!/usr/bin/env python3
"""Cross-check ecnsim's BBR against Linux's tcp_bbr through ``ecnsim emulate``.

``validation/linux_cubic/compare.py`` with this directory's ``scenarios.py`` (the
DropTail grid and BBR's bands) and ``tcp.cc = "bbr"`` on both sides (the emulated
hosts get ``TCP_CONGESTION = bbr`` per socket). Same options; as root, from the
repository root::

    .venv/bin/python validation/linux_bbr/compare.py --save-linux F.json
    .venv/bin/python validation/linux_bbr/compare.py \
        --linux-json validation/linux_bbr/results/linux.json

``--ecnsim-tcp KEY=JSON`` overrides an ecnsim TCP field on the simulated side only
(explanatory variants, no verdict).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


scenarios = _load(os.path.join(HERE, "scenarios.py"), "linux_bbr_scenarios")
# The base harness imports its own ``scenarios`` module by that name: not a stale one.
sys.modules.pop("scenarios", None)
base = _load(os.path.join(HERE, "..", "linux_cubic", "compare.py"), "linux_bbr_base")
base.scenarios = scenarios

_scenario_dict = base.scenario_dict
_run_sim = base.run_sim


def scenario_dict(sc: dict[str, Any], variant: bool = False) -> dict[str, Any]:
    """The CUBIC harness's scenario with ``tcp.cc = "bbr"`` (and, on the simulated side
    only, the --ecnsim-tcp overrides)."""
    saved = dict(base.ECNSIM_TCP)
    base.ECNSIM_TCP.clear()
    base.ECNSIM_TCP["cc"] = "bbr"
    if variant:
        # The emulated Linux hosts send through veth devices with GSO (gso_max_size 64 KB): each
        # paced departure of tcp_bbr is an skb of tcp_tso_autosize() segments, at most
        # 65536 // 1448 = 45; the simulated side models that (docs/models/bbr.md, "Offload frames").
        base.ECNSIM_TCP["tso_segments"] = SIM_TSO_SEGMENTS
        base.ECNSIM_TCP.update(VARIANT)
    try:
        return _scenario_dict(sc)
    finally:
        base.ECNSIM_TCP.clear()
        base.ECNSIM_TCP.update(saved)


VARIANT: dict[str, Any] = {}
#: The simulated senders' offload frame limit (``tcp.tso_segments``): Linux's 64 KB GSO frames.
SIM_TSO_SEGMENTS = 65536 // 1448


def run_sim(sc: dict[str, Any]) -> dict[str, Any]:
    import ecnsim

    sim = ecnsim.Simulation(ecnsim.Scenario.from_dict(scenario_dict(sc, variant=True)))
    sim.run()
    return base.side(sim.results, sc["n"])


base.scenario_dict = scenario_dict
base.run_sim = run_sim


def main(argv: list[str]) -> int:
    # the base parses --ecnsim-tcp into its ECNSIM_TCP; move them to the simulated side only
    rest = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--ecnsim-tcp" or a.startswith("--ecnsim-tcp="):
            kv = a.split("=", 1)[1] if a.startswith("--ecnsim-tcp=") else argv[i + 1]
            i += 1 if a.startswith("--ecnsim-tcp=") else 2
            import json

            key, _, value = kv.partition("=")
            VARIANT[key] = json.loads(value)
            continue
        rest.append(a)
        i += 1
    return int(base.main([argv[0], *rest]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
