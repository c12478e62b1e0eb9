"""What the analytic models share: their input error and small numeric helpers."""

from __future__ import annotations

import math

import numpy as np

from ecnsim.exceptions import SpecError


class ModelError(SpecError):
    """A model input is malformed or out of range, or a computation cannot meet its tolerance.

    A :class:`~ecnsim.SpecError` (so also a ``ValueError``). ``path`` names
    the argument (``flow_sizes.shape``, ``utilization``, ``max_states``);
    the message is ``"<path>: <what is wrong and what is allowed>"``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def finite(path: str, value: object, *, low: float | None = None, strict: bool = True) -> float:
    """``value`` as a finite float above ``low`` (at least ``low`` if not ``strict``).

    Anything else raises :class:`ModelError` at ``path``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(path, f"must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ModelError(path, f"must be finite, got {x}")
    if low is not None and (x <= low if strict else x < low):
        raise ModelError(path, f"must be {'>' if strict else '>='} {low:g}, got {x:g}")
    return x


def whole(path: str, value: object, *, low: int = 1) -> int:
    """``value`` as an int ``>= low`` (an integral float is accepted); else :class:`ModelError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(path, f"must be a whole number >= {low}, got {value!r}")
    if not (math.isfinite(float(value)) and float(value) == int(value)) or int(value) < low:
        raise ModelError(path, f"must be a whole number >= {low}, got {value!r}")
    return int(value)


def tail_sums(pmf: np.ndarray) -> np.ndarray:
    """``out[n] = sum(pmf[n + 1:])``, summed from the tail so small tails keep their precision."""
    rev = np.cumsum(pmf[::-1])[::-1]
    return np.append(rev[1:], 0.0)


def log_factorials(n: int) -> np.ndarray:
    """``log(k!)`` for ``k = 0..n``."""
    out = np.zeros(n + 1)
    if n > 0:
        out[1:] = np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))
    return out


def poisson_pmf(x: float, n: int) -> np.ndarray:
    """``P(Poisson(x) = j)`` for ``j = 0..n``, in log space (no underflow of ``exp(-x)``)."""
    j = np.arange(n + 1, dtype=float)
    if x == 0.0:
        out = np.zeros(n + 1)
        out[0] = 1.0
        return out
    return np.asarray(np.exp(-x + j * math.log(x) - log_factorials(n)), dtype=float)
