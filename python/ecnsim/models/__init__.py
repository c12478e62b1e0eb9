"""Analytic models beside the simulator.

The M[X]/M/1 queue of the ``ecnplus`` study (Kuzmanovic 2005; STUDIES.md
§5), derived in ``docs/models/mx_m1.md``: TCP flows mapped onto their
slow-start bursts, the bursts as the batches of a Poisson batch-arrival
queue with exponential service, its mean in closed form and its
queue-length distribution computed numerically::

    from ecnsim import models

    bursts = models.burst_sizes(
        models.WEB_OBJECT_SIZES, rcv_window=models.WEB_RECEIVE_WINDOWS, iw=2, mss=1460
    )
    queue = models.MXM1(bursts, utilization=0.9)
    queue.mean_in_system()                                   # E[N], closed form
    queue.delay_exceedance(0.005, link_rate_bps=100e6)       # P(queueing delay > 5 ms)
    curve = models.delay_exceedance_curve(bursts, [0.5, 0.7, 0.9])   # the study's figure data

Sizes are described as the scenario describes them
(:class:`Distribution`: ``to_spec()`` gives the scenario's table,
:func:`from_spec` reads one), so one description drives both the
simulation and the model. Pure Python and numpy; nothing here runs the
simulator. :func:`simulate_mx_m1` is an independent Monte-Carlo check.
"""

from __future__ import annotations

from ecnsim.models._common import ModelError
from ecnsim.models.bursts import (
    DEFAULT_MSS,
    BurstSizes,
    FlowSizes,
    burst_sizes,
    slow_start_bursts,
    window_packets,
)
from ecnsim.models.distributions import (
    WEB_OBJECT_SIZES,
    WEB_RECEIVE_WINDOWS,
    BoundedPareto,
    Constant,
    Discrete,
    Distribution,
    Empirical,
    Exponential,
    Lognormal,
    LognormalPareto,
    Pareto,
    Uniform,
    from_spec,
)
from ecnsim.models.montecarlo import MonteCarloRun, simulate_mx_m1
from ecnsim.models.mx_m1 import (
    MEASURES,
    MXM1,
    Measure,
    QueueLengthDistribution,
    delay_exceedance_curve,
)

__all__ = [
    "DEFAULT_MSS",
    "MEASURES",
    "MXM1",
    "WEB_OBJECT_SIZES",
    "WEB_RECEIVE_WINDOWS",
    "BoundedPareto",
    "BurstSizes",
    "Constant",
    "Discrete",
    "Distribution",
    "Empirical",
    "Exponential",
    "FlowSizes",
    "Lognormal",
    "LognormalPareto",
    "Measure",
    "ModelError",
    "MonteCarloRun",
    "Pareto",
    "QueueLengthDistribution",
    "Uniform",
    "burst_sizes",
    "delay_exceedance_curve",
    "from_spec",
    "simulate_mx_m1",
    "slow_start_bursts",
    "window_packets",
]
