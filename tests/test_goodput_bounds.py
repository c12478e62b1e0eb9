"""Goodput never exceeds what the bottleneck carried (issue 13, the tutorial's dumbbell).

The tutorial's scenario (``docs/tutorial.ipynb``): four flows over a 10 Mb/s,
20 ms bottleneck with RED, 100 Mb/s access links, 12 s with a 4 s warm-up.
With an unbounded receive window a receiver held about a megabyte behind a
hole before the warm-up ended and delivered it in the window, so in-order
goodput exceeded the bottleneck's departures (SACK, seed 3: 10.87 MB
delivered, 9.80 MB sent), and Reno's go-back-N burst cwnd to a megabyte
(reno, seed 3, ECN). Each run here is a fraction of a second.
"""

from __future__ import annotations

import pytest

import ecnsim

CCS = ("tahoe", "reno", "newreno", "sack")
SEEDS = (1, 2, 3)


def tutorial(cc: str, seed: int, ecn: bool, **tcp: object) -> ecnsim.Scenario:
    queue = ecnsim.red(
        limit_packets=60, min_th=5, max_th=15, max_p=0.1, **({"ecn": "rfc3168"} if ecn else {})
    )
    return ecnsim.dumbbell(
        4,
        bottleneck_rate="10Mbps",
        bottleneck_delay="20ms",
        access_rate="100Mbps",
        access_delay="1ms",
        queue=queue,
        tcp=ecnsim.tcp(cc=cc, **({"ecn": "request"} if ecn else {}), **tcp),
        duration="12s",
        warmup="4s",
        start_jitter="500ms",
        seed=seed,
    )


def bottleneck(results: ecnsim.Results) -> dict[str, int]:
    q = results.table("queues")
    row = list(q["queue"]).index("r1->r2")
    return {c: int(q[c][row]) for c in ("departures", "departure_bytes")}


@pytest.mark.parametrize("ecn", [False, True], ids=["drop", "ecn"])
@pytest.mark.parametrize("cc", CCS)
def test_goodput_in_the_window_never_exceeds_the_bottlenecks_departures(cc: str, ecn: bool) -> None:
    for seed in SEEDS:
        sim = ecnsim.Simulation(tutorial(cc, seed, ecn))
        r = sim.run()
        f = r.table("flows")
        sent = bottleneck(r)["departure_bytes"]  # headers included
        delivered = int(sum(f["bytes_delivered"]))
        received = int(sum(f["bytes_received"]))
        where = f"{cc}, seed {seed}, ecn {ecn}"
        assert delivered <= sent, f"{where}: delivered {delivered} B, bottleneck sent {sent} B"
        assert received <= sent, f"{where}: received {received} B, bottleneck sent {sent} B"
        assert r.warnings == [], where
        # A working bottleneck: no flow starves, and the link is busy.
        assert min(f["bytes_delivered"]) > 0, where
        assert float(r.table("queues")["utilization"][0]) > 0.5, where
        c = sim.conservation()
        assert c["sent"] == c["delivered"] + c["dropped"] + c["in_flight"], where


def test_reno_after_a_timeout_sends_no_burst_into_its_access_link() -> None:
    # Issue 13's pathological Reno (seed 3, ECN): 2,158 drops of which only 498 at the
    # bottleneck, flow2 at 128 kB in 8 s, ending with cwnd 1.27 MB. Duplicate ACKs in the
    # go-back-N after a timeout halved the data sent before the timeout (FlightSize up to the
    # highest sequence sent), and cwnd = ssthresh + 3 MSS released it in one burst.
    r = ecnsim.Simulation(tutorial("reno", 3, True)).run()
    q = r.table("queues")
    f = r.table("flows")
    access = [i for i, name in enumerate(q["queue"]) if name.startswith("s")]
    assert sum(int(q["drops"][i]) for i in access) == 0
    assert max(f["final_cwnd_bytes"]) <= 65_535 + 3 * 1460
    assert min(f["bytes_delivered"]) > 1_000_000


def test_an_unbounded_receive_window_warns_and_rx_goodput_stays_within_the_link() -> None:
    # The first report: SACK, seed 3, no ECN, with the 1 GiB window `rfc` had: in-order goodput
    # counts data held behind a hole before the warm-up ended.
    r = ecnsim.Simulation(tutorial("sack", 3, False, rcv_window=2**30)).run()
    f = r.table("flows")
    sent = bottleneck(r)["departure_bytes"]
    assert int(sum(f["bytes_delivered"])) > sent
    assert int(sum(f["bytes_received"])) <= sent
    assert len(r.warnings) == 1
    assert r.warnings[0].startswith("links[0] r1->r2: the flows crossing it delivered")
    assert "rx_goodput_bps" in r.warnings[0]
    rx = f["rx_goodput_bps"]
    assert all(abs(rx[i] - f["bytes_received"][i] * 8 / 8.0) < 1e-6 for i in range(len(rx)))
