"""ecnsim: a packet-level discrete-event network simulator for TCP congestion
control, AQM and ECN, with a Rust core.

Quick start::

    import ecnsim
    from ecnsim.spec import bulk, droptail

    scenario = ecnsim.dumbbell(
        4, bottleneck_rate="10Mbps", bottleneck_delay="20ms",
        access_rate="100Mbps", access_delay="1ms", duration="10s",
        queue=droptail(limit_packets=50),
    )
    results = ecnsim.Simulation(scenario, seed=1).run()
    print(results.flows)
"""

from __future__ import annotations

from ecnsim._core import __version__
from ecnsim.exceptions import EcnsimError, SpecError, TopologyError
from ecnsim.results import Results, Table
from ecnsim.simulation import Simulation
from ecnsim.spec import (
    Scenario,
    aecn,
    bulk,
    codel,
    droptail,
    load_toml,
    pi,
    pie,
    queue,
    red,
    rem,
    tcp,
    threshold,
)
from ecnsim.topology import dumbbell

__all__ = [
    "EcnsimError",
    "Results",
    "Scenario",
    "Simulation",
    "SpecError",
    "Table",
    "TopologyError",
    "__version__",
    "aecn",
    "bulk",
    "codel",
    "droptail",
    "dumbbell",
    "load_toml",
    "pi",
    "pie",
    "queue",
    "red",
    "rem",
    "tcp",
    "threshold",
]
