"""The exceptions ecnsim raises.

::

    Exception
    └── EcnsimError
        ├── SpecError(EcnsimError, ValueError)
        └── TopologyError(EcnsimError, ValueError)

Each carries ``path``, the scenario field it is about (``links[2].rate``);
its message is ``"<path>: <what is wrong and what is allowed>"``. The
classes are defined by the compiled core (``ecnsim._core``) and re-exported
here.
"""

from __future__ import annotations

from ecnsim._core import EcnsimError, SpecError, TopologyError

__all__ = ["EcnsimError", "SpecError", "TopologyError"]

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
