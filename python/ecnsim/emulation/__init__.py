"""Emulation: a scenario's network (links, routers, queue disciplines) run by
the simulator core in real time between real Linux hosts in network
namespaces (``ecnsim emulate``; see ``docs/emulation.md``).

Needs root, network namespaces and ``/dev/net/tun``;
:func:`check_environment` says what is missing.
"""

from ecnsim.emulation.netns import (
    NamespaceError,
    check_environment,
    cleanup_leftovers,
    list_namespaces,
    remove_orphans,
)
from ecnsim.emulation.plan import EmulationPlan, PlanError, make_plan
from ecnsim.emulation.runner import Emulation, EmulationError

__all__ = [
    "Emulation",
    "EmulationError",
    "EmulationPlan",
    "NamespaceError",
    "PlanError",
    "check_environment",
    "cleanup_leftovers",
    "list_namespaces",
    "make_plan",
    "remove_orphans",
]
