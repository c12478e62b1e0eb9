"""The distributions workload models draw from, readable outside a run.

A :class:`Distribution` wraps the scenario form of a distribution
(``{"type": "pareto", "shape": 1.2, "scale": 1000}``) and answers from the
simulator's own code: the distribution, survival and quantile functions,
the mean and partial mean ``E[X; X > x]`` (in closed form per law), draws
from the same random streams a run uses, and the atoms of a discrete law. Analytic models
(``ecnsim.models``) and studies read a workload's flow sizes and receive
windows here, so that a model and a simulation use one law.

:func:`workload_defaults` gives the distributions a model uses when a
scenario names none; :func:`shipped_table` the measured tables shipped with
ecnsim (their sources: ``docs/models/http.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ecnsim import _core

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

# numpy and pandas are imported where they are used: `import ecnsim` and a
# run's output path import neither pandas nor (until a result is read) numpy.


class Distribution:
    """A workload distribution, checked as a scenario field would be.

    ``spec`` is the scenario form; a bad one raises :class:`SpecError`
    naming the field (``distribution.shape``) and the rule it breaks.
    """

    __slots__ = ("_json", "spec")

    def __init__(self, spec: Mapping[str, Any]) -> None:
        # Absent and null fields are the same field (the core writes nulls for absent options).
        self.spec: dict[str, Any] = {k: v for k, v in spec.items() if v is not None}
        self._json = json.dumps(self.spec)
        # Validates: raises SpecError on a bad spec.
        _core.dist_mean(self._json)

    @classmethod
    def shipped(cls, table: str) -> Distribution:
        """The shipped measured table ``table`` (``"mah97_reply"``, ...)."""
        return cls({"type": "empirical", "table": table})

    def quantile(self, u: float | Iterable[float] | np.ndarray) -> Any:
        """The smallest ``x`` with ``P(X <= x) >= u``, for ``u`` in [0, 1] (a float or an array)."""
        import numpy as np

        ua = _as_array(u)
        us = np.atleast_1d(ua)
        if np.any(~((us >= 0) & (us <= 1))):
            raise ValueError(
                f"quantile: u must be in [0, 1], got {us[~((us >= 0) & (us <= 1))][0]}"
            )
        q = np.asarray(_core.dist_quantiles(self._json, us.tolist()), dtype=float)
        return float(q[0]) if ua.ndim == 0 else q

    def cdf(self, x: float | Iterable[float] | np.ndarray) -> Any:
        """``P(X <= x)`` (a float or an array): e.g. the probability that a flow is at most
        ``k`` segments long is ``cdf(k * mss)``."""
        import numpy as np

        xa = _as_array(x)
        xs = np.atleast_1d(xa)
        p = np.asarray(_core.dist_cdf(self._json, xs.tolist()), dtype=float)
        return float(p[0]) if xa.ndim == 0 else p

    def sf(self, x: float | Iterable[float] | np.ndarray) -> Any:
        """``P(X > x)`` (a float or an array), computed directly rather than as ``1 - cdf``,
        so that a heavy tail keeps its relative precision far out."""
        import numpy as np

        xa = _as_array(x)
        xs = np.atleast_1d(xa)
        p = np.asarray(_core.dist_sf(self._json, xs.tolist()), dtype=float)
        return float(p[0]) if xa.ndim == 0 else p.reshape(xa.shape)

    def partial_mean(self, x: float | Iterable[float] | np.ndarray) -> Any:
        """``E[X; X > x]``: the mean restricted to values above ``x`` (``inf`` if it diverges)."""
        import numpy as np

        xa = _as_array(x)
        xs = np.atleast_1d(xa)
        m = np.asarray(_core.dist_partial_mean(self._json, xs.tolist()), dtype=float)
        return float(m[0]) if xa.ndim == 0 else m.reshape(xa.shape)

    @property
    def mean(self) -> float | None:
        """The mean; None where it is infinite or has no closed form."""
        return _core.dist_mean(self._json)

    @property
    def upper(self) -> float:
        """The least upper bound of the values (``inf`` if unbounded)."""
        return float(_core.dist_quantiles(self._json, [1.0])[0])

    def isf(self, p: float | Iterable[float] | np.ndarray) -> Any:
        """The smallest ``x`` with ``P(X > x) <= p``, for ``p`` in [0, 1]: ``quantile(1 - p)``."""
        import numpy as np

        pa = _as_array(p)
        q = self.quantile(1.0 - np.atleast_1d(pa))
        return float(q[0]) if pa.ndim == 0 else q

    def top_share(self, fraction: float) -> float:
        """The share of the total (bytes, for sizes) carried by the largest ``fraction`` of draws.

        ``(E[X; X > x_q] + x_q (fraction - P(X > x_q))) / E[X]`` with ``x_q`` the ``1 -
        fraction`` quantile (an atom at ``x_q`` counts for the draws the fraction still
        needs). Smith et al. 2001 report about 0.8 for ``fraction = 0.15`` on web objects.
        """
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"top_share: fraction must be in (0, 1], got {fraction}")
        mean = self.mean
        if mean is None or not mean > 0:
            raise ValueError(f"top_share: needs a finite, positive mean; {self!r} has none")
        x = float(self.isf(fraction))
        above = float(self.sf(x))
        return (float(self.partial_mean(x)) + x * max(fraction - above, 0.0)) / mean

    def sample(self, n: int, *, seed: int = 1, component: str = "distribution") -> np.ndarray:
        """``n`` draws from the stream a component named ``component`` gets under ``seed``."""
        if n < 0:
            raise ValueError(f"sample: n must be >= 0, got {n}")
        import numpy as np

        return np.asarray(_core.dist_sample(self._json, n, seed, component), dtype=float)

    @property
    def atoms(self) -> pd.DataFrame | None:
        """A discrete law's ``value`` and ``probability`` columns (values ascending); else None."""
        a = _core.dist_atoms(self._json)
        if a is None:
            return None
        import numpy as np
        import pandas as pd

        frame: pd.DataFrame = pd.DataFrame(
            {"value": np.asarray(a[0], float), "probability": np.asarray(a[1], float)}
        )
        return frame

    def __repr__(self) -> str:
        return f"Distribution({self.spec!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Distribution) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self._json)


def _as_array(x: float | Iterable[float] | np.ndarray) -> np.ndarray:
    """``x`` as a float array (0-d for a number); any iterable of numbers is accepted."""
    import numpy as np

    if isinstance(x, (int, float)) or hasattr(x, "__array__"):
        return np.asarray(x, dtype=float)
    return np.asarray(list(x), dtype=float)


def workload_defaults(model: str) -> dict[str, Distribution]:
    """The default distributions of workload ``model`` (``"http"``, ``"websessions"``), by field."""
    text = _core.workload_defaults(model)
    if text is None:
        raise ValueError(
            f"workload_defaults: model must be one of http, websessions, got {model!r}"
        )
    return {name: Distribution(spec) for name, spec in json.loads(text).items()}


def shipped_tables() -> list[str]:
    """The names of the measured tables shipped with ecnsim."""
    return list(_core.shipped_tables())


def shipped_table(name: str) -> pd.DataFrame:
    """A shipped table as its source gives it: ``value`` and ``count`` (observations) columns."""
    t = _core.shipped_table(name)
    if t is None:
        known = ", ".join(shipped_tables())
        raise ValueError(f"shipped_table: unknown table {name!r}; shipped tables: {known}")
    import numpy as np
    import pandas as pd

    frame: pd.DataFrame = pd.DataFrame(
        {"value": np.asarray(t[0], float), "count": np.asarray(t[1], float)}
    )
    return frame


__all__ = ["Distribution", "shipped_table", "shipped_tables", "workload_defaults"]
