"""Standard topologies as :class:`~ecnsim.scenario.spec.Scenario` builders.

Each builder writes the scenario's ``[topology]`` template and its
``[[flow_groups]]``, which the core expands (``docs/scenario.md``): the
builders and a TOML file with the same template give the same scenario,
from one implementation. With ``expand=True`` (the default) the builder
returns the expanded scenario (plain nodes, links and flows, as
``Scenario.expanded()`` gives), with ``expand=False`` the template itself
(``.to_toml()`` then writes a short file).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ecnsim.scenario.spec import Quantity, Scenario, bulk

__all__ = ["dumbbell", "hetero_rtt", "parking_lot", "rate_bps"]

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


def _waves(starts: Sequence[Any]) -> list[tuple[int, int, Any]]:
    """Runs of equal consecutive values of ``starts`` as ``(first index, count, value)``."""
    out: list[tuple[int, int, Any]] = []
    for i, value in enumerate(starts):
        if out and out[-1][2] == value and out[-1][0] + out[-1][1] == i:
            first, count, _ = out[-1]
            out[-1] = (first, count + 1, value)
        else:
            out.append((i, 1, value))
    return out


def _template_scenario(
    kind: str,
    duration: Quantity,
    *,
    name: str,
    seed: int | None,
    warmup: Quantity | None,
    sample_interval: Quantity | None,
    profile: str | None,
    tcp: Mapping[str, Any] | None,
    **fields: Any,
) -> Scenario:
    """A scenario holding one ``[topology]`` template of ``kind`` with ``fields``."""
    sc = Scenario(
        duration,
        name=name,
        seed=seed,
        warmup=warmup,
        sample_interval=sample_interval,
        profile=profile,
    )
    if tcp is not None:
        sc.tcp(**tcp)
    sc.topology(kind, **fields)
    return sc


def dumbbell(
    n_flows: int,
    *,
    bottleneck_rate: Quantity,
    bottleneck_delay: Quantity,
    access_rate: Quantity,
    access_delay: Quantity | None = None,
    duration: Quantity,
    sender_delays: Sequence[Quantity] | None = None,
    queue: Mapping[str, Any] | None = None,
    access_queue: Mapping[str, Any] | None = None,
    app: Mapping[str, Any] | None = None,
    start: Quantity | Sequence[Quantity] | None = None,
    start_spacing: Quantity | None = None,
    start_jitter: Quantity | None = None,
    tcp: Mapping[str, Any] | None = None,
    name: str | None = None,
    seed: int | None = None,
    warmup: Quantity | None = None,
    sample_interval: Quantity | None = None,
    profile: str | None = None,
    expand: bool = True,
) -> Scenario:
    """A dumbbell: ``n_flows`` senders and receivers joined by one bottleneck.

    ::

        s0 ─┐                    ┌─ c0
        s1 ─┼─ r1 ══════════ r2 ─┼─ c1
        ... ┘    bottleneck      └─ ...

    The ``dumbbell`` template (``docs/scenario.md``) with ``senders =
    n_flows``, and the flow group ``flow``: flow ``flow{i}`` is ``s{i} ->
    c{i}``. ``links[0]`` is the bottleneck ``r1 - r2`` (named ``bottleneck``)
    with ``queue`` in both directions (default: the profile's); then come the
    access links ``s{i} - r1`` and ``r2 - c{i}`` (named after their host) with
    ``access_queue``. The round-trip time without queueing is ``2 * (2 *
    access_delay + bottleneck_delay)``; ``sender_delays`` gives each sender's
    access link its own delay instead (per-flow RTTs).

    ``app`` is every flow's application (default: unlimited bulk), ``tcp``
    the TCP defaults, ``start`` either one start time for all flows or one
    per flow, ``start_spacing`` a gap between consecutive flows' starts, and
    ``start_jitter`` a random extra delay (uniform in ``[0, start_jitter)``)
    added to each flow's start.
    """
    if isinstance(start, Sequence) and not isinstance(start, str):
        if len(start) != n_flows:
            raise ValueError(f"start has {len(start)} entries for {n_flows} flows")
        if start_spacing is not None:
            raise ValueError("give one start time with start_spacing, not a list")
        waves = _waves(list(start))
    else:
        waves = [(0, n_flows, start)]
    sc = _template_scenario(
        "dumbbell",
        duration,
        name=name or f"dumbbell-{n_flows}",
        seed=seed,
        warmup=warmup,
        sample_interval=sample_interval,
        profile=profile,
        tcp=tcp,
        senders=n_flows,
        bottleneck_rate=bottleneck_rate,
        bottleneck_delay=bottleneck_delay,
        access_rate=access_rate,
        access_delay=access_delay,
        sender_delays=None if sender_delays is None else list(sender_delays),
        queue=queue,
        access_queue=access_queue,
    )
    for first, count, wave_start in waves:
        sc.flow_group(
            "flow",
            count,
            "s{i}",
            "c{i}",
            first=first or None,
            start=wave_start,
            start_spacing=start_spacing,
            start_jitter=start_jitter,
            app=app if app is not None else bulk(),
        )
    return sc.expanded() if expand else sc


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
    expand: bool = True,
) -> Scenario:
    """A star of sources with heterogeneous round-trip times sharing one bottleneck.

    ::

        fragile0 ──145 ms──┐
        average0 ── 45 ms──┼── r ══ bottleneck ══ sink
        robust0  ──  5 ms──┘

    The ``hetero`` and ``aecn`` studies' topology (Zheng, WPI thesis ch. 4
    and 5), as the ``hetero_rtt`` template (``docs/scenario.md``): ``n``
    sources split into ``groups``, each source on its own access link to
    router ``r``, whose egress onto ``bottleneck_rate`` / ``bottleneck_delay``
    toward host ``sink`` holds ``queue``. Group ``g``'s access links have
    one-way delay ``access_delays[g]``, so a source's minimum round-trip time
    is ``2 * (access_delay + bottleneck_delay)``.

    - ``n``: the total number of sources, split as equally as the groups
      allow (earlier groups get the remainder), or one count per group.
    - Each access link runs at ``access_rate``, or at
      ``aggregate_access_rate / n_total`` (the studies keep the aggregate
      fixed as ``n`` varies); give exactly one. ``access_queue`` is the
      access links' queue (default: the profile's).
    - Source ``{group}{i}`` (``fragile0``, ``fragile1``, ...) runs one flow
      of the same name, in flow group ``{group}``, to ``sink`` with ``app``
      (default: unlimited bulk); the results' ``group`` column shows it.
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
    if group_tcp is not None:
        unknown = [g for g in group_tcp if g not in groups]
        if unknown:
            raise ValueError(f"group_tcp names unknown groups {unknown}; groups: {list(groups)}")
    if not starts:
        raise ValueError("starts must hold at least one start time")
    total = sum(counts)
    sc = _template_scenario(
        "hetero_rtt",
        duration,
        name=name or f"hetero-rtt-{total}",
        seed=seed,
        warmup=warmup,
        sample_interval=sample_interval,
        profile=profile,
        tcp=tcp,
        groups=list(groups),
        counts=counts,
        delays=list(access_delays),
        bottleneck_rate=bottleneck_rate,
        bottleneck_delay=bottleneck_delay,
        access_rate=access_rate,
        aggregate_access_rate=aggregate_access_rate,
        queue=queue,
        access_queue=access_queue,
    )
    for g, count in zip(groups, counts, strict=True):
        if count == 0:
            continue
        overrides = (group_tcp or {}).get(g)
        first = 0
        for wave, size in enumerate(_group_counts(count, len(starts))):
            if size > 0:
                sc.flow_group(
                    g,
                    size,
                    f"{g}{{i}}",
                    "sink",
                    first=first or None,
                    start=starts[wave],
                    start_jitter=start_jitter,
                    app=app if app is not None else bulk(),
                    tcp=overrides,
                )
            first += size
    return sc.expanded() if expand else sc


def parking_lot(
    hops: int,
    *,
    duration: Quantity,
    bottleneck_rate: Quantity | Sequence[Quantity],
    bottleneck_delay: Quantity | Sequence[Quantity],
    access_rate: Quantity,
    access_delay: Quantity,
    senders: int = 1,
    cross: int = 1,
    queue: Mapping[str, Any] | None = None,
    access_queue: Mapping[str, Any] | None = None,
    app: Mapping[str, Any] | None = None,
    cross_app: Mapping[str, Any] | None = None,
    start: Quantity | None = None,
    start_jitter: Quantity | None = None,
    tcp: Mapping[str, Any] | None = None,
    name: str | None = None,
    seed: int | None = None,
    warmup: Quantity | None = None,
    sample_interval: Quantity | None = None,
    profile: str | None = None,
    expand: bool = True,
) -> Scenario:
    """A parking lot: ``hops`` bottlenecks in a chain, crossed end to end by ``senders``
    long flows and hop by hop by ``cross`` flows per hop.

    ::

        s0 ─┐   xs0 ─┐ ┌─ xc0  xs1 ─┐ ┌─ xc1   ┌─ c0
            r0 ══════ r1 ══════════ r2 ... ═══ r{hops}
                bottleneck0   bottleneck1

    The ``parking_lot`` template (``docs/scenario.md``): routers ``r0 ..
    r{hops}``, links ``bottleneck{h}`` from ``r{h}`` to ``r{h+1}`` with
    ``queue`` (``bottleneck_rate``/``bottleneck_delay``: one value, or one per
    hop); long-path hosts ``s{i}`` on ``r0`` and ``c{i}`` on the last router,
    running flows ``long{i}`` (group ``long``) with ``app``; per hop ``h``,
    cross hosts ``xs{k}`` on ``r{h}`` and ``xc{k}`` on ``r{h+1}`` (``k = h *
    cross + j``), running flows ``cross{k}`` (group ``cross``) with
    ``cross_app`` (default: ``app``). Every access link is named after its host.
    """
    many: dict[str, Any] = {}
    for key, value in (("rate", bottleneck_rate), ("delay", bottleneck_delay)):
        if isinstance(value, Sequence) and not isinstance(value, str):
            many[f"hop_{key}s"] = list(value)
        else:
            many[f"bottleneck_{key}"] = value
    sc = _template_scenario(
        "parking_lot",
        duration,
        name=name or f"parking-lot-{hops}",
        seed=seed,
        warmup=warmup,
        sample_interval=sample_interval,
        profile=profile,
        tcp=tcp,
        hops=hops,
        senders=senders,
        cross=cross,
        access_rate=access_rate,
        access_delay=access_delay,
        queue=queue,
        access_queue=access_queue,
        **many,
    )
    app = app if app is not None else bulk()
    sc.flow_group("long", senders, "s{i}", "c{i}", start=start, start_jitter=start_jitter, app=app)
    sc.flow_group(
        "cross",
        hops * cross,
        "xs{i}",
        "xc{i}",
        start=start,
        start_jitter=start_jitter,
        app=cross_app if cross_app is not None else app,
    )
    return sc.expanded() if expand else sc


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
