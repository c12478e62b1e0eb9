"""Analytic models beside the simulator.

The fluid rate balance of the DualQ Coupled AQM (RFC 9332 §2.1, Appendix C):
:func:`dualq_equilibrium`, :func:`rate_ratio`, :func:`coupling_for_equal_rates`
(``ecnsim.models.dualq``).

The M[X]/M/1 queue of the ``ecnplus`` study (Kuzmanovic 2005; STUDIES.md
§5), derived in ``docs/models/mx_m1.md``: TCP flows mapped onto their
slow-start bursts, the bursts as the batches of a Poisson batch-arrival
queue with exponential service, its mean in closed form and its
queue-length distribution computed numerically::

    import ecnsim
    from ecnsim import models

    web = ecnsim.workload_defaults("websessions")   # the core's laws, as a run draws them
    bursts = models.burst_sizes(web["object_size"], rcv_window=web["rcv_window"], iw=2, mss=1460)
    queue = models.MXM1(bursts, utilization=0.9)
    queue.mean_in_system()                                   # E[N], closed form
    queue.delay_exceedance(0.005, link_rate_bps=100e6)       # P(queueing delay > 5 ms)
    curve = models.delay_exceedance_curve(bursts, [0.5, 0.7, 0.9])   # the study's figure data

Sizes are the scenario's distribution tables or :class:`ecnsim.Distribution`
objects (:func:`from_spec` reads a table), whose maths (survival function,
partial mean, quantiles) is the core's: one law for the simulation and the
model. The queue itself is pure Python and numpy; nothing here runs the
simulator. :func:`simulate_mx_m1` is an independent Monte-Carlo check.

The DCTCP paper's steady-state analysis (Alizadeh et al. 2010 §3.3-3.4;
STUDIES.md §6), derived in ``docs/models/dctcp_analysis.md``: N
synchronised flows on one bottleneck marking above K packets::

    dc = models.DctcpAnalysis.from_link(10e9, 100e-6, k_packets=40, n_flows=10)
    dc.alpha, dc.queue_amplitude, dc.q_max, dc.period_s()   # eq. 6 solved exactly, A, K + N, T_C
    dc.sawtooth(times_s, t0_s=first_cut_s)                  # Q(t) to draw on a simulated queue
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
from ecnsim.models.dctcp import (
    ROUND_TRIPS,
    DctcpAnalysis,
    RoundTrip,
    alpha_approx,
    g_guideline,
    k_guideline,
    k_min_exact,
    solve_alpha,
)
from ecnsim.models.distributions import Distribution, from_spec
from ecnsim.models.dualq import (
    RENO_LAW,
    SCALABLE_LAW,
    DualQEquilibrium,
    coupling_for_equal_rates,
    dualq_equilibrium,
    rate_ratio,
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
    "RENO_LAW",
    "ROUND_TRIPS",
    "SCALABLE_LAW",
    "BurstSizes",
    "DctcpAnalysis",
    "Distribution",
    "DualQEquilibrium",
    "FlowSizes",
    "Measure",
    "ModelError",
    "MonteCarloRun",
    "QueueLengthDistribution",
    "RoundTrip",
    "alpha_approx",
    "burst_sizes",
    "coupling_for_equal_rates",
    "delay_exceedance_curve",
    "dualq_equilibrium",
    "from_spec",
    "g_guideline",
    "k_guideline",
    "k_min_exact",
    "rate_ratio",
    "simulate_mx_m1",
    "slow_start_bursts",
    "solve_alpha",
    "window_packets",
]
