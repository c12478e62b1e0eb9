"""Tolerance bands of the cross-check harnesses (shared by validation/linux_cubic, linux_bbr,
ns3_modern_cc and ns3_bbr): a band is ``("rel", r)``, ``("abs", a)`` or
``("rel_or_abs", r, a)`` around the peer's value (Linux's or ns-3's)."""

from __future__ import annotations

import math
from typing import Any


def within(kind: tuple[Any, ...], ecnsim: float, peer: float) -> bool:
    """Whether ``ecnsim`` is within the band ``kind`` of ``peer`` (never, if either is NaN)."""
    if math.isnan(ecnsim) or math.isnan(peer):
        return False
    d = abs(ecnsim - peer)
    if kind[0] == "rel":
        return d <= kind[1] * abs(peer)
    if kind[0] == "abs":
        return d <= kind[1]
    if kind[0] == "rel_or_abs":
        return d <= max(kind[1] * abs(peer), kind[2])
    raise ValueError(f"unknown band kind {kind[0]!r}")


def band_text(kind: tuple[Any, ...]) -> str:
    """The band as the tables print it."""
    if kind[0] == "rel":
        return f"±{kind[1]:.0%}"
    if kind[0] == "abs":
        return f"±{kind[1]:g}"
    return f"±{kind[1]:.0%} or ±{kind[2]:g}"
