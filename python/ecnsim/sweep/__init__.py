"""Parameter sweeps: a base scenario, a grid of parameter values, seeds; run anywhere, stored once.

A :class:`Sweep` is a base scenario plus

- ``grid``: parameter paths and the values each takes; every combination is
  a *point* (a Cartesian product, the last parameter varying fastest);
- ``zipped``: groups of parameters that vary together (equal-length lists,
  one axis of the product per group);
- ``seeds`` (or ``repetitions=N`` for seeds 1..N): each point runs once per seed.

A parameter path names a scenario field the way the core's errors do:
``links[0].queue.limit_packets``, ``tcp.cc``, ``simulation.duration``;
``[*]`` sets every element of a list (``flows[*].tcp.initial_window``).

:func:`run_sweep` checks every run's scenario with the core before anything
runs (an error names the point's parameters and the field), skips runs whose
results are already in the :class:`~ecnsim.sweep.store.Store`, and runs the rest
in-process, on a local process pool (default: one worker per core) or on a
Dask cluster. The core is deterministic per scenario and seed, so all three
give bit-identical results. The full format is in ``docs/sweeps.md``.

Example::

    from ecnsim.sweep import Sweep, run_sweep

    sweep = Sweep(
        "examples/dumbbell.toml",
        grid={"links[0].queue.limit_packets": [20, 80], "tcp.cc": ["reno", "newreno"]},
        repetitions=5,
        name="buffers",
    )
    result = run_sweep(sweep, "out", jobs=4)           # or dask="local" / "tcp://host:8786"
    result.aggregate(["goodput_bps", "jain"])          # mean, std and 95% CI per point
"""

from __future__ import annotations

from ecnsim.scenario.paths import ANY, parse_path, set_path
from ecnsim.sweep.execute import (
    SweepFailedError,
    SweepInterrupted,
    SweepProgressBar,
    SweepResult,
    SweepStatus,
    default_jobs,
    execute,
    run_sweep,
)
from ecnsim.sweep.spec import Axis, Plan, PlannedRun, RunTask, Sweep, SweepSpecError
from ecnsim.sweep.store import Store, default_store_path

__all__ = [
    "ANY",
    "Axis",
    "Plan",
    "PlannedRun",
    "RunTask",
    "Store",
    "Sweep",
    "SweepFailedError",
    "SweepInterrupted",
    "SweepProgressBar",
    "SweepResult",
    "SweepSpecError",
    "SweepStatus",
    "default_jobs",
    "default_store_path",
    "execute",
    "parse_path",
    "run_sweep",
    "set_path",
]
