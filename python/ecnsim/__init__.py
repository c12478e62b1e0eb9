"""ecnsim: a packet-level discrete-event network simulator for TCP congestion
control, AQM and ECN, with a Rust core.

Quick start::

    import ecnsim
    from ecnsim import bulk, droptail

    scenario = ecnsim.dumbbell(
        4, bottleneck_rate="10Mbps", bottleneck_delay="20ms",
        access_rate="100Mbps", access_delay="1ms", duration="10s",
        queue=droptail(limit_packets=50),
    )
    results = ecnsim.Simulation(scenario, seed=1).run()
    print(results.flows)

The package is grouped by what a reader looks for:

=======================  ===============================================================
``ecnsim.scenario``      building scenarios: :class:`Scenario`, queue/TCP builders, topologies
``ecnsim.simulation``    running them: :class:`Simulation`
``ecnsim.results``       what a run returns: :class:`Results`, :class:`Table`
``ecnsim.analysis``      metrics (goodput, Jain, lockout, delays, CIs) and sweep aggregation
``ecnsim.output``        figures, HTML reports, ns-2 and pcap traces
``ecnsim.sweep``         parameter sweeps and the results store
``ecnsim.models``        analytic models beside the simulator (the M[X]/M/1 queue)
``ecnsim.cli``           the ``ecnsim`` command
=======================  ===============================================================

Every public name is also reachable here, at ``ecnsim.<name>``; submodules
such as ``ecnsim.plot`` or ``ecnsim.store`` resolve to their home in the
group (``ecnsim.output.plot``, ``ecnsim.sweep.store``) on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ecnsim._core import __version__
from ecnsim._lazy import lazy_exports
from ecnsim.exceptions import (
    EcnsimError,
    ResourceError,
    SimulationError,
    SpecError,
    TopologyError,
)

if TYPE_CHECKING:
    from ecnsim.results import Results, Table
    from ecnsim.scenario import (
        Distribution,
        Scenario,
        aecn,
        bulk,
        codel,
        droptail,
        dumbbell,
        fq_codel,
        fq_pie,
        hetero_rtt,
        load_toml,
        parking_lot,
        pi,
        pie,
        queue,
        red,
        rem,
        tcp,
        threshold,
        workload_defaults,
    )
    from ecnsim.scenario.workloads import cbr, crr, ftp, http, onoff, rr, websessions
    from ecnsim.simulation import Simulation

#: Modules reachable as ``ecnsim.<name>``, imported on first use (their home in the groups).
_MODULES = {
    "analysis": "ecnsim.analysis",
    "aggregate": "ecnsim.analysis.aggregate",
    "plot": "ecnsim.output.plot",
    "report": "ecnsim.output.report",
    "trace": "ecnsim.output.trace",
    "spec": "ecnsim.scenario.spec",
    "distributions": "ecnsim.scenario.distributions",
    "topology": "ecnsim.scenario.topology",
    "workloads": "ecnsim.scenario.workloads",
    "sweep": "ecnsim.sweep",
    "models": "ecnsim.models",
    "store": "ecnsim.sweep.store",
}

# The public names, imported on first use: `import ecnsim` (and so the `ecnsim` command)
# loads only the compiled core and the exceptions until a name is touched.
_names_getattr, __dir__ = lazy_exports(
    globals(),
    {
        "ecnsim.results.tables": ("Results", "Table"),
        "ecnsim.scenario.distributions": ("Distribution", "workload_defaults"),
        "ecnsim.scenario.spec": (
            "Scenario",
            "aecn",
            "bulk",
            "codel",
            "droptail",
            "fq_codel",
            "fq_pie",
            "dualpi2",
            "load_toml",
            "pi",
            "pie",
            "queue",
            "red",
            "rem",
            "tcp",
            "threshold",
        ),
        "ecnsim.scenario.topology": ("dumbbell", "hetero_rtt", "parking_lot"),
        "ecnsim.scenario.workloads": ("cbr", "crr", "ftp", "http", "onoff", "rr", "websessions"),
        "ecnsim.simulation.runner": ("Simulation",),
    },
)


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        module = importlib.import_module(_MODULES[name])
        globals()[name] = module
        return module
    return _names_getattr(name)


__all__ = [
    "Distribution",
    "EcnsimError",
    "ResourceError",
    "Results",
    "Scenario",
    "Simulation",
    "SimulationError",
    "SpecError",
    "Table",
    "TopologyError",
    "__version__",
    "aecn",
    "bulk",
    "cbr",
    "codel",
    "crr",
    "droptail",
    "dualpi2",
    "dumbbell",
    "fq_codel",
    "fq_pie",
    "ftp",
    "hetero_rtt",
    "http",
    "load_toml",
    "onoff",
    "parking_lot",
    "pi",
    "pie",
    "queue",
    "red",
    "rem",
    "rr",
    "tcp",
    "threshold",
    "websessions",
    "workload_defaults",
]
