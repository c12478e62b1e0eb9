"""Running a scenario: :class:`Simulation` wraps one compiled simulation of the core."""

from __future__ import annotations

from ecnsim.simulation.runner import ProgressCallback, Simulation

__all__ = ["ProgressCallback", "Simulation"]
