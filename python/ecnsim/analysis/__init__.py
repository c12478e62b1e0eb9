"""Metrics the reference studies report, computed from a run's exported tables.

Every function takes the tables as pandas DataFrames (``results.flows``,
``results.queues``, ``results.table("flow_series").to_pandas()``, ...; see
``docs/results.md`` for the columns) and plain numbers for the run's
metadata (``warmup_s``, ``end_s``). Nothing here runs a simulation; the
per-packet work happens in the core and this package only summarises.
``docs/measurement.md`` gives each definition with its source.

Conventions:

- Rates are in bit/s (``_bps``), times in seconds (``_s``), sizes in bytes.
- "Over [warm-up, end]" means what the core's counters already cover (they
  are diffed at ``simulation.warmup``); series are trimmed to
  ``time_s >= warmup_s`` by the functions that take ``warmup_s``.
- Groups: many metrics are reported per *group* of flows (the studies'
  fragile / average / robust, ECN-ON / ECN-OFF, ...). :func:`flow_groups`
  assigns them: a ``group`` column of ``flows`` if the core exports one, an
  explicit mapping or function of the flow's name, or by default the flow's
  name without its trailing index (``"fragile12"`` -> ``"fragile"``).
- Time-binned goodput and lockout need per-flow *cumulative* counters in
  ``flow_series`` (``bytes_delivered``; ``bytes_sent``, ``drops`` and
  ``marks`` where available). Functions that need a missing column raise
  :class:`MissingColumnError` saying which one.
"""

from __future__ import annotations

from ecnsim.analysis._common import DROP_REASONS, MARK_REASONS, GroupSpec, MissingColumnError
from ecnsim.analysis.flows import (
    binned_increments,
    drop_mark_rates,
    flow_groups,
    flow_rates,
    goodput_series,
    group_gap,
    group_gap_series,
    group_goodput_series,
    group_rates,
    jain_index,
    jain_index_series,
    one_way_delay,
    transfer_goodput,
    trim_warmup,
)
from ecnsim.analysis.lockout import (
    lockout_count,
    lockout_intervals,
    lockout_summary,
    packet_raster,
    raster_silence,
    silence_by_flow,
)
from ecnsim.analysis.queues import (
    link_utilization,
    queue_delay_ccdf,
    queue_drop_mark_rates,
    queue_occupancy_distribution,
    queueing_delay_exceeds,
    red_region_share,
)
from ecnsim.analysis.records import (
    ccdf,
    ecdf,
    kaplan_meier,
    network_power,
    open_backlog,
    record_metrics,
    response_time_cdf,
    steady_state,
)
from ecnsim.analysis.stats import interval, mean_ci, student_t_ppf, summarize
from ecnsim.scenario.paths import default_group

__all__ = [
    "DROP_REASONS",
    "MARK_REASONS",
    "GroupSpec",
    "MissingColumnError",
    "binned_increments",
    "ccdf",
    "default_group",
    "drop_mark_rates",
    "ecdf",
    "flow_groups",
    "flow_rates",
    "goodput_series",
    "group_gap",
    "group_gap_series",
    "group_goodput_series",
    "group_rates",
    "interval",
    "jain_index",
    "jain_index_series",
    "kaplan_meier",
    "link_utilization",
    "lockout_count",
    "lockout_intervals",
    "lockout_summary",
    "mean_ci",
    "network_power",
    "one_way_delay",
    "open_backlog",
    "packet_raster",
    "queue_delay_ccdf",
    "queue_drop_mark_rates",
    "queue_occupancy_distribution",
    "queueing_delay_exceeds",
    "raster_silence",
    "record_metrics",
    "red_region_share",
    "response_time_cdf",
    "silence_by_flow",
    "steady_state",
    "student_t_ppf",
    "summarize",
    "transfer_goodput",
    "trim_warmup",
]
