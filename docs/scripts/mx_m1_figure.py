"""Draw the M[X]/M/1 model's P(queueing delay > 5 ms) against utilization (docs/models/mx_m1.md).

    python docs/scripts/mx_m1_figure.py

writes ``docs/img/mx_m1_delay.png``: the ``ecnplus`` study's workload
(the core's web-session object sizes and receive windows, IW 2, MSS 1460, 1500-byte
packets) at 100, 155 and 622 Mb/s, model only (the study adds its FIFO
simulations as points). Needs matplotlib (``pip install 'ecnsim[plot]'``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ecnsim
from ecnsim import models
from ecnsim.output import plot

OUT = Path(__file__).resolve().parent.parent / "img" / "mx_m1_delay.png"


def main() -> None:
    web = ecnsim.workload_defaults("websessions")
    bursts = models.burst_sizes(web["object_size"], rcv_window=web["rcv_window"], iw=2, mss=1460)
    utilizations = np.round(np.arange(0.02, 0.99, 0.02), 2)
    curve = models.delay_exceedance_curve(bursts, utilizations, delay_s=0.005, packet_bytes=1500)
    fig = plot.plot_delay_exceedance(curve, ymin=1e-5)
    fig.savefig(OUT, dpi=90)
    print(f"wrote {OUT}")
    print(
        f"E[X] = {bursts.mean():.4f}, E[X^2] = {bursts.second_moment():.4f}, "
        f"bursts per flow = {bursts.bursts_per_flow:.4f}, packets per flow = "
        f"{bursts.packets_per_flow:.4f}, largest burst = {bursts.max}"
    )


if __name__ == "__main__":
    main()
