"""Scenario building: the :class:`Scenario` builder, queue and TCP builders, standard
topologies, and parameter paths (``links[0].queue.max_p``) into a scenario's data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ecnsim._lazy import lazy_exports

if TYPE_CHECKING:
    from ecnsim.scenario.distributions import (
        Distribution,
        shipped_table,
        shipped_tables,
        workload_defaults,
    )
    from ecnsim.scenario.paths import ANY, parse_path, set_path, set_paths
    from ecnsim.scenario.spec import (
        Quantity,
        Scenario,
        aecn,
        bulk,
        codel,
        droptail,
        fq_codel,
        fq_pie,
        load_toml,
        pi,
        pie,
        queue,
        red,
        rem,
        tcp,
        threshold,
    )
    from ecnsim.scenario.topology import dumbbell, hetero_rtt, parking_lot

# Imported on first use: `ecnsim run` needs `spec` and `paths`, not the topology builders.
__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "ecnsim.scenario.distributions": (
            "Distribution",
            "shipped_table",
            "shipped_tables",
            "workload_defaults",
        ),
        "ecnsim.scenario.paths": ("ANY", "parse_path", "set_path", "set_paths"),
        "ecnsim.scenario.spec": (
            "Quantity",
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
    },
)

__all__ = [
    "ANY",
    "Distribution",
    "Quantity",
    "Scenario",
    "aecn",
    "bulk",
    "codel",
    "droptail",
    "dualpi2",
    "dumbbell",
    "fq_codel",
    "fq_pie",
    "hetero_rtt",
    "load_toml",
    "parking_lot",
    "parse_path",
    "pi",
    "pie",
    "queue",
    "red",
    "rem",
    "set_path",
    "set_paths",
    "shipped_table",
    "shipped_tables",
    "tcp",
    "threshold",
    "workload_defaults",
]
