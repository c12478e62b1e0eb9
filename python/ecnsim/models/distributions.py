"""The size and window distributions the models read: the simulator's own laws.

The models take a workload's distributions exactly as a scenario gives
them (``{"type": "bounded_pareto", "shape": 0.9, "min": 760, "max": 1e6}``)
or as an :class:`ecnsim.Distribution`, which answers from the core's code
(``crates/ecnsim-core/src/app/dist.rs``): the survival function ``sf``,
the partial mean ``E[X; X > x]``, the quantile function, the mean and the
atoms, in closed form per law. There is one implementation of each law's
maths, the one a run draws from; the web workload's defaults come from
the core too (``ecnsim.workload_defaults("websessions")``)::

    web = ecnsim.workload_defaults("websessions")
    bursts = burst_sizes(web["object_size"], rcv_window=web["rcv_window"])

Read first: Harchol-Balter 1998 (bounded Pareto); Crovella & Bestavros
1997 and Barford & Crovella 1998 (lognormal body, Pareto tail); Smith,
Campos, Jeffay & Ott 2001 (the web object sizes of the ``ecnplus`` study).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ecnsim.exceptions import SpecError
from ecnsim.models._common import ModelError
from ecnsim.scenario.distributions import Distribution

__all__ = ["Distribution", "from_spec"]


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _non_finite(value: Any, key: str) -> str | None:
    """The first key path under ``key`` whose number is not finite (the core reads JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return key
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            bad = _non_finite(v, f"{key}[{i}]")
            if bad is not None:
                return bad
    return None


def from_spec(spec: Mapping[str, Any] | Distribution, path: str = "") -> Distribution:
    """A scenario's distribution table as the core's :class:`ecnsim.Distribution`.

    The core checks it with the scenario's rules; ``path`` prefixes the
    error's field (``from_spec({...}, "object_size")`` raises
    ``object_size.shape: must be > 0, got -1`` as a :class:`ModelError`).
    A :class:`ecnsim.Distribution` is returned as it is.
    """
    if isinstance(spec, Distribution):
        return spec
    where = path or "distribution"
    if not isinstance(spec, Mapping):
        raise ModelError(where, f"must be a distribution table, got {spec!r}")
    for key, value in spec.items():
        bad = _non_finite(value, str(key))
        if bad is not None:
            raise ModelError(_join(path, bad), f"must be finite, got {value!r}")
    try:
        return Distribution(spec)
    except SpecError as e:
        # The core names "distribution[.<field>]"; give the caller's path instead.
        field = str(getattr(e, "path", "distribution")).removeprefix("distribution")
        message = str(e).split(": ", 1)[1] if ": " in str(e) else str(e)
        at = f"{path}{field}" if path else field.lstrip(".") or where
        raise ModelError(at, message) from None
