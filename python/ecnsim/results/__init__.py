"""Results of a run: named column tables plus metadata (:class:`Results`, :class:`Table`)."""

from __future__ import annotations

from ecnsim.results.tables import Column, Results, Table

__all__ = ["Column", "Results", "Table"]
