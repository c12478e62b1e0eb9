"""Builders for ``[[apps]]`` workloads and the random distributions they draw from.

A workload is one application that drives both ends of every connection it
opens between its ``clients`` and ``servers`` (``docs/models/*.md``: FTP,
netperf TCP_CRR / TCP_RR, HTTP browsing, web sessions, UDP CBR and on/off).
Add one with :meth:`ecnsim.Scenario.app`::

    from ecnsim import Scenario
    from ecnsim.scenario.workloads import crr, http, uniform

    sc.app(crr(request="1KB", response="10KB"), clients=["c0"], servers=["s0"], name="crr")
    sc.app(http(think_time=uniform(1, 5)), clients=["c1", "c2"], servers=["s1"])

Each model builder returns the ``model`` table of the schema as a dict; its
keyword arguments are the schema's fields (None = the core's default), and
any further keyword is passed through unchanged, so a field the core gains
is usable before this module names it. The core checks every value and
names the field of a bad one (``apps[0].model.response: ...``).

Distributions (``constant``, ``uniform``, ``exponential``, ``pareto``, ...)
are in the field's base unit: seconds, bytes or a count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "bounded_pareto",
    "cbr",
    "constant",
    "crr",
    "discrete",
    "empirical",
    "exponential",
    "ftp",
    "http",
    "incast",
    "lognormal",
    "lognormal_pareto",
    "model",
    "onoff",
    "pareto",
    "rr",
    "uniform",
    "websessions",
]

Quantity = int | float | str
#: A distribution table, or a plain number meaning a constant.
Dist = Mapping[str, Any] | int | float


def _compact(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _dist(value: Dist | None) -> dict[str, Any] | None:
    """A distribution table; a bare number is a constant."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"a distribution must be a number or a table, got {value!r}")
    if isinstance(value, (int, float)):
        return constant(value)
    return dict(value)


# ---------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------


def constant(value: float) -> dict[str, Any]:
    """Always ``value``."""
    return {"type": "constant", "value": value}


def uniform(min: float, max: float) -> dict[str, Any]:
    """Uniform on ``[min, max)``."""
    return {"type": "uniform", "min": min, "max": max}


def exponential(mean: float) -> dict[str, Any]:
    """Exponential with the given mean."""
    return {"type": "exponential", "mean": mean}


def pareto(shape: float, scale: float) -> dict[str, Any]:
    """Pareto: ``P(X > x) = (scale / x) ** shape`` for ``x >= scale``."""
    return {"type": "pareto", "shape": shape, "scale": scale}


def bounded_pareto(shape: float, min: float, max: float) -> dict[str, Any]:
    """Pareto truncated to ``[min, max]``."""
    return {"type": "bounded_pareto", "shape": shape, "min": min, "max": max}


def lognormal(mu: float, sigma: float) -> dict[str, Any]:
    """``exp(N(mu, sigma**2))``."""
    return {"type": "lognormal", "mu": mu, "sigma": sigma}


def lognormal_pareto(mu: float, sigma: float, cutoff: float, shape: float) -> dict[str, Any]:
    """A lognormal body with a Pareto tail above ``cutoff``."""
    return {"type": "lognormal_pareto", "mu": mu, "sigma": sigma, "cutoff": cutoff, "shape": shape}


def empirical(
    table: str | None = None, *, points: Sequence[tuple[float, float]] | None = None
) -> dict[str, Any]:
    """A shipped table of measured data (by name: its observed values with their observed
    frequencies; ``ecnsim.distributions.shipped_tables()``) or a piecewise-linear CDF
    ``[(value, cdf), ...]``."""
    if (table is None) == (points is None):
        raise ValueError("give exactly one of table (a shipped table's name) and points")
    if table is not None:
        return {"type": "empirical", "table": table}
    return {"type": "empirical", "points": [[float(v), float(c)] for v, c in points or ()]}


def discrete(values: Sequence[float], weights: Sequence[float]) -> dict[str, Any]:
    """``values[i]`` with probability ``weights[i] / sum(weights)``."""
    return {"type": "discrete", "values": list(values), "weights": list(weights)}


# ---------------------------------------------------------------------------
# Workload models
# ---------------------------------------------------------------------------


def model(type: str, /, **fields: Any) -> dict[str, Any]:
    """Any workload model of the schema: ``model("crr", request=1000)``."""
    return {"type": type, **_compact(fields)}


def ftp(file_size: Quantity | None = None, **extra: Any) -> dict[str, Any]:
    """Each client fetches ``file_size`` files from its server, one after another (RFC 2415 FTP)."""
    return model("ftp", file_size=file_size, **extra)


def crr(
    request: Quantity | None = None,
    response: Quantity | None = None,
    think_time: Dist | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """netperf TCP_CRR: connect, send ``request``, receive ``response``, close, repeat."""
    return model("crr", request=request, response=response, think_time=_dist(think_time), **extra)


def rr(
    request: Quantity | None = None,
    response: Quantity | None = None,
    think_time: Dist | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """netperf TCP_RR: request/response transactions on one persistent connection."""
    return model("rr", request=request, response=response, think_time=_dist(think_time), **extra)


def incast(
    response: Quantity,
    request: Quantity | None = None,
    think_time: Dist | None = None,
    queries: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Partition/aggregate queries (the DCTCP paper's incast).

    Each client sends ``request`` bytes to every server but itself (one
    persistent connection each) and starts the next query when every server
    has answered with ``response`` bytes; ``queries`` per client (default: no
    limit). One ``transaction`` record per query, with its timeouts.
    """
    return model(
        "incast",
        response=response,
        request=request,
        think_time=_dist(think_time),
        queries=queries,
        **extra,
    )


def http(
    version: str | None = None,
    *,
    embedded: Dist | None = None,
    parallel: int | None = None,
    primary_size: Dist | None = None,
    embedded_size: Dist | None = None,
    request_size: Dist | None = None,
    think_time: Dist | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Web browsing: pages of a primary object and embedded objects, with think times.

    ``version``: ``"http10"`` (default), ``"http11_persistent"`` or
    ``"http11_rfc2415"``; ``docs/models/http.md`` describes them and the
    default size tables (Mah 1997, as ns-2 ships them).
    """
    return model(
        "http",
        version=version,
        embedded=_dist(embedded),
        parallel=parallel,
        primary_size=_dist(primary_size),
        embedded_size=_dist(embedded_size),
        request_size=_dist(request_size),
        think_time=_dist(think_time),
        **extra,
    )


def websessions(
    *,
    session_rate: float | None = None,
    offered_load: Mapping[str, Any] | None = None,
    pages: Dist | None = None,
    inter_page: Dist | None = None,
    objects: Dist | None = None,
    object_size: Dist | None = None,
    request_size: Dist | None = None,
    rcv_window: Dist | None = None,
    persistent: bool | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Web sessions (Feldmann et al. 1999): Poisson sessions of pages of objects.

    Give ``session_rate`` (sessions per second) or ``offered_load``
    (``{"link": index, "percent": 90}``: the rate that offers that share of
    the link's capacity).
    """
    return model(
        "websessions",
        session_rate=session_rate,
        offered_load=dict(offered_load) if offered_load is not None else None,
        pages=_dist(pages),
        inter_page=_dist(inter_page),
        objects=_dist(objects),
        object_size=_dist(object_size),
        request_size=_dist(request_size),
        rcv_window=_dist(rcv_window),
        persistent=persistent,
        **extra,
    )


def cbr(rate: Quantity, packet_size: Quantity | None = None, **extra: Any) -> dict[str, Any]:
    """UDP at a constant ``rate`` from each client to its server."""
    return model("cbr", rate=rate, packet_size=packet_size, **extra)


def onoff(
    rate: Quantity,
    *,
    packet_size: Quantity | None = None,
    on: Dist | None = None,
    off: Dist | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """UDP on/off: ``rate`` during on periods, silent during off periods."""
    return model("onoff", rate=rate, packet_size=packet_size, on=_dist(on), off=_dist(off), **extra)
