"""The exceptions ecnsim raises.

::

    Exception
    └── EcnsimError
        ├── SpecError(EcnsimError, ValueError)
        ├── TopologyError(EcnsimError, ValueError)
        ├── ResourceError(EcnsimError, MemoryError)
        └── SimulationError(EcnsimError, RuntimeError)

Each carries ``path``, the scenario field it is about (``links[2].rate``);
its message is ``"<path>: <what is wrong and what is allowed>"``. The
classes are defined by the compiled core (``ecnsim._core``) and re-exported
here.
"""

from __future__ import annotations

from ecnsim._core import EcnsimError, ResourceError, SimulationError, SpecError, TopologyError

__all__ = ["EcnsimError", "ResourceError", "SimulationError", "SpecError", "TopologyError"]

EcnsimError.__doc__ = """Base class of every error raised by ecnsim.

``path`` names the scenario field the error is about (``"<root>"`` for the
whole scenario)."""

SpecError.__doc__ = """The scenario is malformed or a value is out of range.

Also a :class:`ValueError`. ``path`` names the offending field
(``links[2].rate``); the message is ``"<path>: <what is wrong and what is
allowed>"``. Raised for TOML/JSON syntax errors, unknown keys, wrong types,
out-of-range values and references to undefined nodes."""

TopologyError.__doc__ = """The scenario is well-formed but its network is not usable.

Also a :class:`ValueError`. Examples: no route between a flow's endpoints,
a link from a node to itself. ``path`` names the field whose value leads to
the problem."""

ResourceError.__doc__ = """The run would need, or came to need, more memory than allowed.

Also a :class:`MemoryError`. Raised when a simulation is built if the
scenario's memory estimate exceeds ``max_memory`` (by default the memory the
machine has available), naming the field that needs the most (``nodes`` for
the route table, ``simulation.sample_interval`` for the time series,
``apps[0].model.session_rate`` for open-loop connections), and during a run
whose state outgrows the limit; the results so far are then kept
(``Simulation.results``, unfinished)."""

SimulationError.__doc__ = """The run cannot go on: a component makes no progress in simulated time.

Also a :class:`RuntimeError`. ``path`` names the component (``apps[1]``,
``links[0]``); the results up to that instant stay readable, unfinished."""
