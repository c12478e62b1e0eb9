"""Standard topologies as :class:`~ecnsim.scenario.spec.Scenario` builders."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ecnsim.scenario.spec import Quantity, Scenario, bulk

__all__ = ["dumbbell", "hetero_rtt", "rate_bps"]

_RATE_UNITS = {"bps": 1, "kbps": 10**3, "Kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}
_RATE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def rate_bps(rate: Quantity) -> float:
    """A rate in bit/s: a number (bit/s) or a string with a unit (``"10Mbps"``, ``"1.5Mbps"``).

    The units are the scenario schema's (``bps``, ``kbps``/``Kbps``, ``Mbps``, ``Gbps``;
    powers of 1000).
    """
    if isinstance(rate, bool):
        raise TypeError(f"a rate must be a number or a string, got {rate!r}")
    if isinstance(rate, (int, float)):
        value = float(rate)
    else:
        m = _RATE_RE.match(str(rate))
        if m is None or m.group(2) not in {"", *_RATE_UNITS}:
            raise ValueError(
                f"not a rate: {rate!r}; write bit/s as a number or a string with one of the "
                f"units {', '.join(_RATE_UNITS)}"
            )
        value = float(m.group(1)) * _RATE_UNITS.get(m.group(2), 1)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"a rate must be finite and > 0, got {rate!r}")
    return value


def dumbbell(
    n_flows: int,
    *,
    bottleneck_rate: Quantity,
    bottleneck_delay: Quantity,
    access_rate: Quantity,
    access_delay: Quantity,
    duration: Quantity,
    queue: Mapping[str, Any] | None = None,
    access_queue: Mapping[str, Any] | None = None,
    app: Mapping[str, Any] | None = None,
    start: Quantity | Sequence[Quantity] | None = None,
    start_jitter: Quantity | None = None,
    tcp: Mapping[str, Any] | None = None,
    name: str | None = None,
    seed: int | None = None,
    warmup: Quantity | None = None,
    sample_interval: Quantity | None = None,
) -> Scenario:
    """A dumbbell: ``n_flows`` senders and receivers joined by one bottleneck.

    ::

        s0 ─┐                    ┌─ c0
        s1 ─┼─ r1 ══════════ r2 ─┼─ c1
        ... ┘    bottleneck      └─ ...

    Hosts ``s0..s{n-1}`` send to hosts ``c0..c{n-1}`` (flow ``i`` is
    ``s{i} -> c{i}``) over routers ``r1`` and ``r2``. ``links[0]`` is the
    bottleneck ``r1 - r2`` with ``queue`` (default: the core's default queue);
    then come the access links ``s{i} - r1`` and ``r2 - c{i}`` with
    ``access_queue``. The round-trip time without queueing is
    ``2 * (2 * access_delay + bottleneck_delay)``.

    ``app`` is every flow's application (default: unlimited bulk), ``tcp``
    the TCP defaults, ``start`` either one start time for all flows or one
    per flow, and ``start_jitter`` a random extra delay (uniform in
    ``[0, start_jitter)``) added to each flow's start.
    """
    if n_flows < 1:
        raise ValueError(f"n_flows must be >= 1, got {n_flows}")
    if isinstance(start, Sequence) and not isinstance(start, str):
        if len(start) != n_flows:
            raise ValueError(f"start has {len(start)} entries for {n_flows} flows")
        starts: list[Quantity | None] = list(start)
    else:
        starts = [start] * n_flows

    sc = Scenario(
        duration,
        name=name or f"dumbbell-{n_flows}",
        seed=seed,
        warmup=warmup,
        sample_interval=sample_interval,
    )
    if tcp is not None:
        sc.tcp(**tcp)
    senders = [f"s{i}" for i in range(n_flows)]
    receivers = [f"c{i}" for i in range(n_flows)]
    sc.host(*senders).host(*receivers).router("r1", "r2")
    sc.link("r1", "r2", rate=bottleneck_rate, delay=bottleneck_delay, queue=queue)
    for s in senders:
        sc.link(s, "r1", rate=access_rate, delay=access_delay, queue=access_queue)
    for c in receivers:
        sc.link("r2", c, rate=access_rate, delay=access_delay, queue=access_queue)
    for i, (s, c) in enumerate(zip(senders, receivers, strict=True)):
        sc.flow(
            s,
            c,
            name=f"flow{i}",
            app=app if app is not None else bulk(),
            start=starts[i],
            start_jitter=start_jitter,
        )
    return sc


def hetero_rtt(
    n: int | Sequence[int],
    *,
    duration: Quantity,
    groups: Sequence[str] = ("fragile", "average", "robust"),
    access_delays: Sequence[Quantity] = ("145ms", "45ms", "5ms"),
    access_rate: Quantity | None = None,
    aggregate_access_rate: Quantity | None = None,
    bottleneck_rate: Quantity = "10Mbps",
    bottleneck_delay: Quantity = "5ms",
    queue: Mapping[str, Any] | None = None,
    access_queue: Mapping[str, Any] | None = None,
    app: Mapping[str, Any] | None = None,
    starts: Sequence[Quantity] = (0,),
    start_jitter: Quantity | None = None,
    tcp: Mapping[str, Any] | None = None,
    group_tcp: Mapping[str, Mapping[str, Any]] | None = None,
    name: str | None = None,
    seed: int | None = None,
    warmup: Quantity | None = None,
    sample_interval: Quantity | None = None,
    profile: str | None = None,
) -> Scenario:
    """A star of sources with heterogeneous round-trip times sharing one bottleneck.

    ::

        fragile0 ──145 ms──┐
        average0 ── 45 ms──┼── r ══ bottleneck ══ sink
        robust0  ──  5 ms──┘

    The ``hetero`` and ``aecn`` studies' topology (Zheng, WPI thesis ch. 4
    and 5): ``n`` sources split into ``groups``, each source on its own
    access link to router ``r``, whose egress onto ``bottleneck_rate`` /
    ``bottleneck_delay`` toward host ``sink`` holds ``queue``. Group ``g``'s
    access links have one-way delay ``access_delays[g]``, so a source's
    minimum round-trip time is ``2 * (access_delay + bottleneck_delay)``.

    - ``n``: the total number of sources, split as equally as the groups
      allow (earlier groups get the remainder), or one count per group.
    - Each access link runs at ``access_rate``, or at
      ``aggregate_access_rate / n_total`` (the studies keep the aggregate
      fixed as ``n`` varies); give exactly one. ``access_queue`` is the
      access links' queue (default: the profile's).
    - Source ``{group}{i}`` (``fragile0``, ``fragile1``, ...) runs one flow
      of the same name to ``sink`` with ``app`` (default: unlimited bulk),
      so :func:`ecnsim.analysis.flow_groups` finds the groups by name.
    - ``starts``: each group's flows are split, in order, into
      ``len(starts)`` equal waves (earlier waves get the remainder), and wave
      ``k`` starts at ``starts[k]``; ``("0s", "2s")`` starts half of each
      group at 0 s and the rest at 2 s. ``start_jitter`` adds a random delay
      in ``[0, start_jitter)`` to each flow's start.
    - ``tcp`` sets the TCP defaults of every flow, ``group_tcp`` overrides
      them per group (e.g. ``{"fragile": {"ecn": "off"}}``).

    ``links[0]`` is the bottleneck, then the access links in flow order.
    """
    counts = _group_counts(n, len(groups))
    if len(access_delays) != len(groups):
        raise ValueError(f"access_delays has {len(access_delays)} entries for {len(groups)} groups")
    if len(set(groups)) != len(groups) or any(re.search(r"\d$", g) for g in groups):
        raise ValueError(f"groups must be distinct names not ending in a digit, got {groups!r}")
    if group_tcp is not None:
        unknown = [g for g in group_tcp if g not in groups]
        if unknown:
            raise ValueError(f"group_tcp names unknown groups {unknown}; groups: {list(groups)}")
    if not starts:
        raise ValueError("starts must hold at least one start time")
    total = sum(counts)
    if (access_rate is None) == (aggregate_access_rate is None):
        raise ValueError("give exactly one of access_rate and aggregate_access_rate")
    rate: Quantity = (
        access_rate if access_rate is not None else round(rate_bps(aggregate_access_rate) / total)  # type: ignore[arg-type]
    )
    sc = Scenario(
        duration,
        name=name or f"hetero-rtt-{total}",
        seed=seed,
        warmup=warmup,
        sample_interval=sample_interval,
        profile=profile,
    )
    if tcp is not None:
        sc.tcp(**tcp)
    sources = [[f"{g}{i}" for i in range(c)] for g, c in zip(groups, counts, strict=True)]
    sc.host(*(s for group in sources for s in group)).host("sink").router("r")
    sc.link("r", "sink", rate=bottleneck_rate, delay=bottleneck_delay, queue_ab=queue)
    for group, delay in zip(sources, access_delays, strict=True):
        for s in group:
            sc.link(s, "r", rate=rate, delay=delay, queue=access_queue)
    for g, group in zip(groups, sources, strict=True):
        waves = _group_counts(len(group), len(starts)) if group else [0] * len(starts)
        wave_of = [k for k, c in enumerate(waves) for _ in range(c)]
        overrides = (group_tcp or {}).get(g)
        for i, s in enumerate(group):
            sc.flow(
                s,
                "sink",
                name=s,
                app=app if app is not None else bulk(),
                start=starts[wave_of[i]],
                start_jitter=start_jitter,
                tcp=overrides,
            )
    return sc


def _group_counts(n: int | Sequence[int], groups: int) -> list[int]:
    """``n`` split into ``groups`` counts as equally as possible (earlier ones get more)."""
    if isinstance(n, Sequence):
        counts = [int(c) for c in n]
        if len(counts) != groups or any(c < 0 for c in counts) or sum(counts) < 1:
            raise ValueError(f"n must be {groups} non-negative counts with a positive sum, got {n}")
        return counts
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    base, extra = divmod(int(n), groups)
    return [base + (1 if g < extra else 0) for g in range(groups)]
