"""The named ns-2 cross-check scenarios and their tolerance bands.

The bands below were written, and committed on their own, before any
ecnsim result was compared with ns-2 (issue 13). They are not to be widened
to make a result pass; a difference outside a band is explained in
docs/validation.md ("Validation against ns-2.35") or fixed.

How the bands were chosen:

- **Deterministic scenarios** (one flow, scripted drops and marks, DropTail
  overflow): the same mechanism in both simulators gives the same packets,
  so counts are compared exactly (drops, marks, retransmitted packets,
  timeouts, ECN reductions) and so is the sequence of ssthresh values
  (packets, rounded down). Delivered packets get 1 %: when these bands were
  set ecnsim always opened with a handshake and ns-2 of 2001 did not, so ns-2's
  flow started one SYN RTT later (``Case.align_handshake``), which aligns the
  first data packet to within microseconds but leaves the first RTT sample and
  timer restarts slightly apart. (Since issue 13 item 9, ecnsim's
  ``handshake = false`` removes that offset; the band is kept as set.)
- **RED at a steady queue** (UDP CBR above the link rate): the drop rate is
  fixed by conservation (everything above the link rate is dropped), so 2 %;
  the time average of ``avg`` is what RED's probability function settles on
  for that drop rate, so 3 % (the draws differ; thousands of drops).
- **hetero star** (random): the band is the larger of a fixed band (below)
  and three standard errors of the difference of the two means, from the
  per-seed spread of each simulator (``3 * sqrt(sd_a^2/n_a + sd_b^2/n_b)``),
  so seed noise alone does not fail a check. Fixed bands: aggregate goodput
  3 % (both saturate the bottleneck behind a RED standing queue), per-group
  share of goodput 0.05 absolute and Jain's index 0.05 absolute (the ns-3
  comparison's values), congestion signals (drops + marks) 15 %,
  retransmitted packets 15 %, timeouts per second 20 % (ns-2's coarse
  100 ms tick makes timeouts the most sensitive count).

AQM families (REM, PI, Adaptive RED and the RED variants; bands fixed and
committed before any of these was compared with ns-2):

- **AQM with UDP CBR** (deterministic arrivals, random drops; one seed):
  drop rates in packets and in bytes are fixed by conservation (what exceeds
  the link is dropped), so 2 % as for RED; the time averages over
  [warmup, end] of the sampled AQM state get 5 % (REM's and PI's
  probability, Adaptive RED's ``max_p``, the instantaneous queue) or 3 %
  (RED's ``avg``, as ``red-cbr-*``); the *trajectory* of the controller state
  is its mean over consecutive bins of ``Case.bin`` seconds from 0, every bin
  within ``max(10 % of ns-2's value, an absolute floor)`` (floors: 0.01 for a
  probability or ``max_p``, 0.5 packets, or 0.5 ``mean_pktsize`` bytes, for
  an average queue). A case lists the metrics it checks (``AQM_CBR_METRICS``).
- **AQM with TCP flows** (random): as the hetero star, the larger of a fixed
  band and three standard errors of the difference of the means over
  ``AQM_TCP_SEEDS``; fixed bands: goodput 3 %, congestion signals, drops and
  marks 15 %, mean queue 10 %, mean probability 15 %.
- **RED overflow victims with one TCP flow** (deterministic: thresholds above
  anything the average reaches, so only the buffer drops): the
  ``DETERMINISTIC_BANDS``.
"""

from __future__ import annotations

from ns2cmp import Case, DropTailQ, Flow, PiQ, RedQ, RemQ

# --- bands (fixed before any comparison was run) -----------------------------

#: Deterministic cases: metric -> ("exact" | relative tolerance).
DETERMINISTIC_BANDS: dict[str, str | float] = {
    "drops": "exact",
    "marks": "exact",
    "retransmitted": "exact",
    "timeouts": "exact",
    "ecn_reductions": "exact",
    "ssthresh_steps": "exact",
    "delivered": 0.01,
}

#: RED with UDP CBR: metric -> relative tolerance.
RED_CBR_BANDS: dict[str, float] = {"drop_rate": 0.02, "avg_mean": 0.03}

#: hetero star: metric -> (kind, fixed band); the noise allowance is added by compare().
HETERO_BANDS: dict[str, tuple[str, float]] = {
    "goodput_pps": ("rel", 0.03),
    "jain": ("abs", 0.05),
    "share_fragile": ("abs", 0.05),
    "share_average": ("abs", 0.05),
    "share_robust": ("abs", 0.05),
    "signals": ("rel", 0.15),
    "retransmitted": ("rel", 0.15),
    "timeouts_per_s": ("rel", 0.20),
}
#: Standard errors of the difference of means added to a fixed band.
NOISE_SIGMAS = 3.0

#: A band that cannot fail (issue 35 item 4; rule written 2026-12-02 before the runs that
#: apply it). The noise allowance widens a seeded check's band with the seeds' spread; a
#: check is informative only if its band could reject a factor of two, so a band wider than
#: half the larger of the two means ("rel" metrics) or than 0.25 ("abs" metrics: Jain's
#: index and shares, in [0, 1]) fails as "too wide" instead of passing: more seeds, or the
#: metric left out of that case below.
MAX_BAND_REL = 0.5
MAX_BAND_ABS = 0.25

#: Metrics left out of a seeded case because their band could not fail (reported as
#: information rows). hetero N = 120 ECN: retransmitted packets and timeouts come from a few
#: forced-drop episodes per run (drops 294 ± 150 and 225 ± 89 over seeds 1-5), so the
#: noise allowance was ±103 % and ±71 %; at that spread a ±15 % / ±20 % band needs over
#: 100 seeds a side (minutes each). hetero N = 30 ECN: no drops in either simulator, so both
#: are 0 or nearly (0.2 ± 0.45 against 0): a band around zero that a single seed's
#: retransmission fills. Drops + marks (``signals``) stay checked in both.
HETERO_LEFT_OUT: dict[str, tuple[str, ...]] = {
    "hetero-n120-ecn": ("retransmitted", "timeouts_per_s"),
    "hetero-n30-ecn": ("retransmitted", "timeouts_per_s"),
}

# --- scenarios ----------------------------------------------------------------

ONE = (Flow(0.001),)
#: 1.5 Mb/s, 20 ms: RTT 46 ms, BDP about 8.6 packets of 1000 B.
DUMBBELL = dict(flows=ONE, rate=1.5e6, delay=0.02, sample=0.005)

DETERMINISTIC: dict[str, Case] = {
    # Item 7: ns-2's queue-limit 10 holds 9 waiting packets and one on the wire.
    "droptail-limit": Case("droptail-limit", queue=DropTailQ(10), duration=10.0, **DUMBBELL),
    # Scripted losses in one window of 20 (window_ 20 reached by then), no overflow.
    "reno-3drops": Case(
        "reno-3drops", queue=DropTailQ(1000), drops=(100, 103, 106), duration=6.0, **DUMBBELL
    ),
    "newreno-3drops": Case(
        "newreno-3drops",
        variant="newreno",
        queue=DropTailQ(1000),
        drops=(100, 103, 106),
        duration=6.0,
        **DUMBBELL,
    ),
    "sack-3drops": Case(
        "sack-3drops",
        variant="sack",
        queue=DropTailQ(1000),
        drops=(100, 103, 106),
        duration=6.0,
        **DUMBBELL,
    ),
    # Issue 35 item 5 (ns-2's Sack1, `sack_variant = "ns2_sack1"`): six losses in one window, and
    # SACK through DropTail overflow. Bands: DETERMINISTIC_BANDS, committed before any comparison.
    "sack-6drops": Case(
        "sack-6drops",
        variant="sack",
        queue=DropTailQ(1000),
        drops=(100, 102, 104, 106, 108, 110),
        duration=6.0,
        **DUMBBELL,
    ),
    "sack-droptail": Case(
        "sack-droptail", variant="sack", queue=DropTailQ(10), duration=10.0, **DUMBBELL
    ),
    "tahoe-5drops": Case(
        "tahoe-5drops",
        variant="tahoe",
        queue=DropTailQ(1000),
        drops=(100, 102, 104, 106, 108),
        duration=6.0,
        **DUMBBELL,
    ),
    # ECN: two marks in one window -> one reduction; in two windows -> two.
    "ecn-marks-one-window": Case(
        "ecn-marks-one-window",
        ecn=True,
        queue=DropTailQ(1000),
        marks=(100, 103),
        duration=6.0,
        **DUMBBELL,
    ),
    "ecn-marks-two-windows": Case(
        "ecn-marks-two-windows",
        ecn=True,
        queue=DropTailQ(1000),
        marks=(100, 180),
        duration=6.0,
        **DUMBBELL,
    ),
    # A mark and a loss in the same window: one reduction (RFC 3168 §6.1.2; ns-2).
    "ecn-mark-then-loss": Case(
        "ecn-mark-then-loss",
        ecn=True,
        queue=DropTailQ(1000),
        marks=(100,),
        drops=(104,),
        duration=6.0,
        **DUMBBELL,
    ),
    "ecn-loss-then-mark": Case(
        "ecn-loss-then-mark",
        ecn=True,
        queue=DropTailQ(1000),
        drops=(100,),
        marks=(104,),
        duration=6.0,
        **DUMBBELL,
    ),
    # Issue 35 item 4: the two ns-2 rules of the red-markp-tcp investigation, seen by the
    # harness (tests/it/ns2_dialogues.rs checks them packet by packet). A mark halves the
    # window; 116, sent before the reduction, is lost and resent in that ECN-reduced window
    # (dupack_action()'s CWND_ACTION_ECN branch); 123, sent after it, is lost too: a fast
    # retransmit in ns-2, which leaves recover_ where ecn() set it (ecn_keeps_recover), and a
    # timeout without the rule.
    "ecn-reduced-window-losses": Case(
        "ecn-reduced-window-losses",
        ecn=True,
        queue=DropTailQ(1000),
        marks=(100,),
        drops=(116, 123),
        duration=6.0,
        **DUMBBELL,
    ),
    # 103 lost, 106 marked: the first echo arrives on the third duplicate ACK; ns-2's recv()
    # answers it before counting the duplicate (ecn_echo_before_dupack): one ECN reduction,
    # where counting first makes a plain fast retransmit and no ECN reduction.
    "ecn-echo-on-third-dupack": Case(
        "ecn-echo-on-third-dupack",
        ecn=True,
        queue=DropTailQ(1000),
        marks=(106,),
        drops=(103,),
        duration=6.0,
        **DUMBBELL,
    ),
}

#: RED fed by UDP CBR above the link rate: 10 Mb/s, RED 5/15 (ns-2 2001), 50-packet buffer.
RED_CBR: dict[str, Case] = {
    # 1.05 x the link: drop rate 1 - 1/1.05 = 4.8 %, avg in the linear region.
    "red-cbr-linear": Case(
        "red-cbr-linear",
        flows=ONE,
        rate=10e6,
        delay=0.005,
        queue=RedQ(limit=50),
        cbr_rate=10.5e6,
        duration=60.0,
        warmup=10.0,
        sample=0.05,
    ),
    # 1.5 x the link: drop rate 1/3, avg in the gentle region (max_th to 2 max_th).
    "red-cbr-gentle": Case(
        "red-cbr-gentle",
        flows=ONE,
        rate=10e6,
        delay=0.005,
        queue=RedQ(limit=50),
        cbr_rate=15e6,
        duration=60.0,
        warmup=10.0,
        sample=0.05,
    ),
}

HETERO_DELAYS = (("fragile", 0.145), ("average", 0.045), ("robust", 0.005))


def hetero(n: int, ecn: bool, duration: float = 100.0, warmup: float = 20.0) -> Case:
    """STUDIES.md §3 ``hetero`` as a star: N sources in three groups (one-way
    access delay 145 / 45 / 5 ms, 300 Mb/s / N each), half of each group
    starting at 0 s and half at 2 s; router -> sink 10 Mb/s, 5 ms, RED
    120 / 10 / 30 packets, w_q 0.002, max_p 0.1 (the rest ns-2 2001's);
    Reno, window 64, 1000-byte packets, no delayed ACKs."""
    flows = []
    per = n // 3
    for name, delay in HETERO_DELAYS:
        for k in range(per):
            flows.append(Flow(delay, start=0.0 if k < per // 2 else 2.0, group=name))
    return Case(
        f"hetero-n{n}-{'ecn' if ecn else 'red'}",
        flows=tuple(flows),
        rate=10e6,
        delay=0.005,
        queue=RedQ(limit=120, min_th=10, max_th=30, w_q=0.002, max_p=0.1, ecn=ecn),
        access_rate=300e6 / n,
        variant="reno",
        window=64,
        ecn=ecn,
        duration=duration,
        warmup=warmup,
    )


HETERO: dict[str, Case] = {
    c.name: c for n in (30, 120) for ecn in (False, True) for c in [hetero(n, ecn)]
}
HETERO_SEEDS = (1, 2, 3, 4, 5)


# --- AQM families (bands fixed before any comparison was run) --------------------

#: AQM with UDP CBR: metric -> ("rel", tolerance) for a time average or a rate, or
#: ("bins", relative tolerance, absolute floor) for a trajectory (bin means).
AQM_CBR_BANDS: dict[str, tuple[str, float] | tuple[str, float, float]] = {
    "drop_rate": ("rel", 0.02),
    "byte_drop_rate": ("rel", 0.02),
    "queue_mean": ("rel", 0.05),
    "avg_mean": ("rel", 0.03),
    "prob_mean": ("rel", 0.05),
    "max_p_mean": ("rel", 0.05),
    "prob_bins": ("bins", 0.10, 0.01),
    "max_p_bins": ("bins", 0.10, 0.01),
    "avg_bins": ("bins", 0.10, 0.5),  # x mean_pktsize when the queue is in bytes
}

#: 10 Mb/s, 5 ms: 1250 packets of 1000 B per second.
CBR_LINK = dict(rate=10e6, delay=0.005, sample=0.05)
#: Adaptive RED under load steps: 0.8 x the link from 0 s, 1.2 x from 20 s, 1.8 x from 40 s.
STEPS = (
    Flow(0.001, cbr_rate=8e6),
    Flow(0.001, start=20.0, cbr_rate=4e6),
    Flow(0.001, start=40.0, cbr_rate=6e6),
)
#: Mixed packet sizes for byte mode: 6 Mb/s of 1000-B packets and 6 Mb/s of 200-B ones (1.2 x).
MIXED = (Flow(0.001, cbr_rate=6e6, packet=1000), Flow(0.001, cbr_rate=6e6, packet=200))

AQM_CBR: dict[str, Case] = {
    # REM as ns-2 ships it (gamma 0.001, phi 1.001, b_ref 20, 2 ms) at 1.2 x: the price
    # climbs for ~25 s with the buffer full, then drains the queue; a smooth trajectory.
    "rem-cbr": Case(
        "rem-cbr",
        flows=ONE,
        queue=RemQ(limit=200),
        cbr_rate=12e6,
        duration=60.0,
        warmup=20.0,
        bin=5.0,
        **CBR_LINK,
    ),
    # gamma 0.01: the price settles in ~5 s, then holds the drop rate at 1/6 around b_ref.
    "rem-cbr-fast": Case(
        "rem-cbr-fast",
        flows=ONE,
        queue=RemQ(limit=200, gamma=0.01),
        cbr_rate=12e6,
        duration=60.0,
        warmup=20.0,
        bin=5.0,
        **CBR_LINK,
    ),
    # REM with the queue and the arrivals in bytes (qib_), mixed sizes.
    "rem-cbr-bytes": Case(
        "rem-cbr-bytes",
        flows=MIXED,
        queue=RemQ(limit=200, gamma=0.01, qib=True),
        cbr_rate=6e6,
        duration=60.0,
        warmup=20.0,
        bin=5.0,
        **CBR_LINK,
    ),
    # PI with gains 100 x ns-2's (a - b = 1e-5): the integral settles in ~5 s at qref 50.
    "pi-cbr": Case(
        "pi-cbr",
        flows=ONE,
        queue=PiQ(limit=200, a=1.822e-3, b=1.812e-3, qref=50),
        cbr_rate=12e6,
        duration=60.0,
        warmup=20.0,
        bin=5.0,
        **CBR_LINK,
    ),
    # PI with gains 10 x ns-2's: p climbs for ~15 s with the buffer full.
    "pi-cbr-slow": Case(
        "pi-cbr-slow",
        flows=ONE,
        queue=PiQ(limit=200, a=1.822e-4, b=1.816e-4, qref=50),
        cbr_rate=12e6,
        duration=60.0,
        warmup=20.0,
        bin=5.0,
        **CBR_LINK,
    ),
    # PI in byte mode (bytes_, queue_in_bytes_) with mixed sizes: p scaled by size / 500.
    "pi-cbr-bytes": Case(
        "pi-cbr-bytes",
        flows=MIXED,
        queue=PiQ(limit=200, a=1.822e-3, b=1.812e-3, qref=50, byte_mode=True, qib=True),
        cbr_rate=6e6,
        duration=60.0,
        warmup=20.0,
        bin=5.0,
        **CBR_LINK,
    ),
    # RED 5/15 without wait_ at 1.05 x (red-cbr-linear has wait_ true).
    "red-cbr-nowait": Case(
        "red-cbr-nowait",
        flows=ONE,
        queue=RedQ(limit=50, wait=False),
        cbr_rate=10.5e6,
        duration=60.0,
        warmup=10.0,
        **CBR_LINK,
    ),
    # RED without gentle at 1.5 x: avg at max_th, where ns-2 forces drops.
    "red-cbr-nongentle": Case(
        "red-cbr-nongentle",
        flows=ONE,
        queue=RedQ(limit=50, gentle=False),
        cbr_rate=15e6,
        duration=60.0,
        warmup=10.0,
        **CBR_LINK,
    ),
    # RED in byte mode with the queue in bytes (bytes_, queue_in_bytes_), mixed sizes.
    "red-cbr-bytes": Case(
        "red-cbr-bytes",
        flows=MIXED,
        queue=RedQ(limit=50, byte_mode=True, qib=True),
        cbr_rate=6e6,
        duration=60.0,
        warmup=10.0,
        **CBR_LINK,
    ),
    # Adaptive RED (adaptive_ 1, interval 0.5 s, alpha 0.01, beta 0.9, top 0.5, bottom 0.01).
    "ared-cbr-steps": Case(
        "ared-cbr-steps",
        flows=STEPS,
        queue=RedQ(limit=100, adaptive=True),
        cbr_rate=8e6,
        duration=60.0,
        bin=2.5,
        **CBR_LINK,
    ),
    # The same with ns-2's automatic parameters: thresh_ 0, maxthresh_ 0 (targetdelay_ 5 ms:
    # 6.25 / 18.75 packets of 500 B at 10 Mb/s), q_weight_ 0 (1 - exp(-1/2500)), bottom_ 0
    # (min(0.01, 80000 / 10e6) = 0.008).
    "ared-cbr-auto": Case(
        "ared-cbr-auto",
        flows=STEPS,
        queue=RedQ(limit=100, adaptive=True, min_th=0, max_th=0, w_q=0, bottom=0),
        cbr_rate=8e6,
        duration=60.0,
        bin=2.5,
        **CBR_LINK,
    ),
}

_RATES = ("drop_rate", "byte_drop_rate")
AQM_CBR_METRICS: dict[str, tuple[str, ...]] = {
    "rem-cbr": (*_RATES, "queue_mean", "prob_mean", "prob_bins"),
    "rem-cbr-fast": (*_RATES, "queue_mean", "prob_mean", "prob_bins"),
    "rem-cbr-bytes": (*_RATES, "queue_mean", "prob_mean", "prob_bins"),
    "pi-cbr": (*_RATES, "queue_mean", "prob_mean", "prob_bins"),
    "pi-cbr-slow": (*_RATES, "queue_mean", "prob_mean", "prob_bins"),
    "pi-cbr-bytes": (*_RATES, "queue_mean", "prob_mean", "prob_bins"),
    "red-cbr-nowait": (*_RATES, "avg_mean", "queue_mean"),
    "red-cbr-nongentle": (*_RATES, "avg_mean", "queue_mean"),
    "red-cbr-bytes": (*_RATES, "avg_mean", "queue_mean"),
    "ared-cbr-steps": (*_RATES, "avg_mean", "max_p_mean", "max_p_bins", "avg_bins"),
    "ared-cbr-auto": (*_RATES, "avg_mean", "max_p_mean", "max_p_bins", "avg_bins"),
}

#: RED's buffer as the only dropper, one Reno flow: the victim of an overflow (ns-2
#: drop_tail_ / drop_front_). Thresholds 15 / 19 of 20: avg (w_q 0.002) stays far below.
RED_OVERFLOW: dict[str, Case] = {
    f"red-overflow-{v}": Case(
        f"red-overflow-{v}",
        queue=RedQ(limit=20, min_th=15, max_th=19, drop_front=v == "front"),
        window=40,
        duration=10.0,
        **DUMBBELL,
    )
    for v in ("tail", "front")
}

#: AQM with TCP flows: metric -> (kind, fixed band); the noise allowance is added by compare().
AQM_TCP_BANDS: dict[str, tuple[str, float]] = {
    "goodput_pps": ("rel", 0.03),
    "signals": ("rel", 0.15),
    "drops": ("rel", 0.15),
    "marks": ("rel", 0.15),
    "queue_mean": ("rel", 0.10),
    "prob_mean": ("rel", 0.15),
}
AQM_TCP_SEEDS = (1, 2, 3, 4, 5)

#: ``red-markp-tcp`` goodput, a known difference (issue 35 item 4; band written 2026-12-02
#: before any run of these seeds). Over seeds 1-20 ecnsim gave 1082 ± 24 and ns-2.35
#: 1113 ± 12 packets/s (-2.8 %, 5.3 standard errors): a real difference whose size sits on
#: the committed 3 % band, so five seeds put it inside or outside by chance. The regular
#: check leaves it out by name; this one says the difference is still there and no worse:
#: over ``MARKP_GOODPUT_SEEDS`` the difference of the means d (ecnsim - ns-2) must satisfy
#: ``d + 2 SE < 0`` (ecnsim below ns-2 beyond two standard errors: if it fails, the cause
#: may be fixed and the entry goes) and ``|d| <= 2 x 3 %`` of ns-2's mean (twice the
#: committed band: beyond it, a regression). With d = -31 and SE = 6 at 20 seeds, the first
#: fails by chance in under 0.1 % of seed sets.
MARKP_GOODPUT_SEEDS = tuple(range(1, 21))
MARKP_GOODPUT_SIGMAS = 2.0
MARKP_GOODPUT_MAX_REL = 0.06

#: Ten Reno flows, one-way access delays 5 to 50 ms, into 10 Mb/s, 5 ms.
TEN = tuple(Flow(0.005 * (i + 1)) for i in range(10))
#: Twenty, for RED's regions above max_th with small thresholds (3 / 6).
TWENTY = tuple(Flow(0.005 * (i % 10 + 1)) for i in range(20))
_TCP = dict(rate=10e6, delay=0.005, window=64, duration=60.0, warmup=20.0, sample=0.05)


def _tcp_case(name: str, flows: tuple[Flow, ...], queue: object, ecn: bool) -> Case:
    return Case(name, flows=flows, queue=queue, ecn=ecn, **_TCP)  # type: ignore[arg-type]


AQM_TCP: dict[str, Case] = {
    c.name: c
    for c in (
        _tcp_case("rem-tcp", TEN, RemQ(limit=200), False),
        # markpkts_: REM marks ECT packets at dequeue.
        _tcp_case("rem-tcp-ecn", TEN, RemQ(limit=200, ecn=True), True),
        # ns-2's own PI (a_, b_, w_ 170, qref_ 50).
        _tcp_case("pi-tcp", TEN, PiQ(limit=200), False),
        _tcp_case("pi-tcp-ecn", TEN, PiQ(limit=200, ecn=True), True),
        # setbit_ without gentle: ECT marked between 3 and 6, dropped above 6 (red.cc enque).
        _tcp_case(
            "red-ecn-tcp", TWENTY, RedQ(limit=50, min_th=3, max_th=6, gentle=False, ecn=True), True
        ),
        # setbit_ with gentle: marked up to 12, dropped above.
        _tcp_case("red-ecn-gentle-tcp", TWENTY, RedQ(limit=50, min_th=3, max_th=6, ecn=True), True),
        # use_mark_p_: no forced region; marked while p_b < mark_p_ (0.1), dropped above.
        _tcp_case(
            "red-markp-tcp",
            TWENTY,
            RedQ(limit=50, min_th=3, max_th=6, ecn=True, use_mark_p=True),
            True,
        ),
    )
}
