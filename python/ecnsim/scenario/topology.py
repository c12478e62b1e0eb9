"""Standard topologies as :class:`~ecnsim.scenario.spec.Scenario` builders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ecnsim.scenario.spec import Quantity, Scenario, bulk

__all__ = ["dumbbell"]


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
