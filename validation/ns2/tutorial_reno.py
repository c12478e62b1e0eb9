"""The tutorial's dumbbell with Reno, ecnsim (``rfc`` profile) against ns-2.35 (issue 13).

Issue 13 asked whether ``reno``, seed 2, without ECN (5.6 Mb/s of goodput over
the 10 Mb/s bottleneck with four flows) was right. This writes the tutorial's
scenario (``docs/tutorial.ipynb``: four flows s_i -> r1 -> r2 -> c_i, 100 Mb/s
and 1 ms access links, a 10 Mb/s 20 ms bottleneck with RED 60 packets,
thresholds 5/15, max_p 0.1; 12 s, warm-up 4 s, starts jittered over 500 ms)
as an ns-2.35 Tcl script with ns-2's TCP set as close to ecnsim's ``rfc``
profile as ns-2 has it, runs both for seeds 1-5, and checks the BANDS below.

The bands were written, and committed in this file, before either side was run.
ns-2's random streams differ from ecnsim's, so only the start times are shared
(ecnsim's, per seed); the comparison is statistical except where stated.

What ns-2 cannot match exactly (each within the bands' width):
- no handshake (one-way ``Agent/TCP/Reno``): ns-2's flows start one handshake
  RTT after ecnsim's, so both send their first data packet at the same time;
- congestion avoidance per ACK (``windowOption_ 1``) where ``rfc`` counts
  bytes (RFC 3465); ns-2's RED has its ``qlen > 1`` gate;
- the 65535-byte receive window becomes ``window_`` 44 packets.

Run: ``.venv/bin/python validation/ns2/tutorial_reno.py`` (ns on PATH, ~10 s).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

NS = os.environ.get("NS2", "ns")
SEEDS = (1, 2, 3, 4, 5)
WARMUP, END = 4.0, 12.0
MSS, HEADERS = 1460, 40
#: Payload capacity of the bottleneck: 10 Mb/s x 1460 / 1500.
PAYLOAD_CAPACITY_BPS = 10e6 * MSS / (MSS + HEADERS)

# --- Bands, fixed before any run -------------------------------------------------------------
#: Mean over SEEDS of the aggregate in-order goodput over [4 s, 12 s]: ecnsim within this
#: fraction of ns-2's.
BAND_AGGREGATE_REL = 0.10
#: Each simulator's mean aggregate goodput is at least this share of the payload capacity
#: (four Reno flows keep a RED bottleneck busy).
BAND_MIN_UTILIZATION = 0.85
#: Seed 2 alone: ecnsim's aggregate goodput at least this share of ns-2's mean over seeds.
BAND_SEED2_REL = 0.85
#: Mean Jain index over SEEDS: absolute difference at most this.
BAND_JAIN_ABS = 0.15
#: Mean bottleneck drops per second over [4 s, 12 s]: within this factor of ns-2's.
BAND_DROPS_FACTOR = 2.0
# ---------------------------------------------------------------------------------------------


def ecnsim_run(seed: int) -> dict[str, object]:
    import ecnsim

    queue = ecnsim.red(limit_packets=60, min_th=5, max_th=15, max_p=0.1)
    sc = ecnsim.dumbbell(
        4,
        bottleneck_rate="10Mbps",
        bottleneck_delay="20ms",
        access_rate="100Mbps",
        access_delay="1ms",
        queue=queue,
        tcp=ecnsim.tcp(cc="reno"),
        duration="12s",
        warmup="4s",
        start_jitter="500ms",
        seed=seed,
    )
    r = ecnsim.Simulation(sc).run()
    f = r.table("flows")
    q = r.table("queues")
    row = list(q["queue"]).index("r1->r2")
    return {
        "starts": [float(x) for x in f["start_s"]],
        "goodput_bps": [float(x) for x in f["goodput_bps"]],
        "drops": int(q["drops"][row]),
    }


def tcl(seed: int, starts: list[float]) -> str:
    # The handshake ecnsim exchanges first: one RTT of 40-byte segments (4 links each way).
    hops = [(100e6, 0.001), (10e6, 0.020), (100e6, 0.001)]
    handshake = 2 * sum(HEADERS * 8 / rate + delay for rate, delay in hops)
    lines = [
        # TCP as ecnsim's rfc profile has it, where ns-2 has the knob.
        f"Agent/TCP set packetSize_ {MSS}",
        "Agent/TCP set useHeaders_ true",
        f"Agent/TCP set tcpip_base_hdr_size_ {HEADERS}",
        "Agent/TCP set windowInit_ 3        ;# RFC 3390 at MSS 1460",
        "Agent/TCP set windowInitOption_ 1",
        f"Agent/TCP set window_ {65535 // MSS}    ;# rcv_window 65535 B",
        "Agent/TCP set maxcwnd_ 0",
        "Agent/TCP set syn_ false",
        "Agent/TCP set delay_growth_ false",
        "Agent/TCP set tcpTick_ 0.001",
        "Agent/TCP set minrto_ 1",
        "Agent/TCP set maxrto_ 60",
        "Agent/TCP set rtxcur_init_ 1",
        "Agent/TCP set rfc2988_ true",
        "Agent/TCP set precisionReduce_ true",
        "Agent/TCP set bugFix_ false      ;# rfc: RFC 5681 Reno",
        "Agent/TCP set singledup_ 1       ;# Limited Transmit",
        "Agent/TCP set maxburst_ 0",
        "Agent/TCP set windowOption_ 1",
        "Agent/TCP set timestamps_ false",
        "Agent/TCP set ecn_ 0",
        "Agent/TCPSink set packetSize_ 40",
        "Queue/RED set queue_in_bytes_ false",
        "Queue/RED set bytes_ false",
        "Queue/RED set thresh_ 5",
        "Queue/RED set maxthresh_ 15",
        "Queue/RED set q_weight_ 0.002",
        "Queue/RED set linterm_ 10",
        "Queue/RED set gentle_ true",
        "Queue/RED set wait_ true",
        "Queue/RED set setbit_ false",
        "Queue/RED set use_mark_p_ false",
        "Queue/RED set mean_pktsize_ 1500",
        "Queue/RED set adaptive_ 0",
        "set ns [new Simulator]",
        f"ns-random {seed}",
        f"$defaultRNG seed {seed}",
        "set r1 [$ns node]",
        "set r2 [$ns node]",
        "$ns simplex-link $r1 $r2 10Mb 20ms RED",
        "$ns simplex-link $r2 $r1 10Mb 20ms DropTail",
        "$ns queue-limit $r1 $r2 60",
        # ecnsim's rfc DropTail holds 100 waiting packets; ns-2's limit_ holds one fewer.
        "$ns queue-limit $r2 $r1 101",
        "set qm [$ns monitor-queue $r1 $r2 0 1000]",
    ]
    for i, start in enumerate(starts):
        lines += [
            f"set s({i}) [$ns node]",
            f"set c({i}) [$ns node]",
            f"$ns duplex-link $s({i}) $r1 100Mb 1ms DropTail",
            f"$ns duplex-link $r2 $c({i}) 100Mb 1ms DropTail",
            f"$ns queue-limit $s({i}) $r1 101",
            f"$ns queue-limit $r1 $s({i}) 101",
            f"$ns queue-limit $r2 $c({i}) 101",
            f"$ns queue-limit $c({i}) $r2 101",
            f"set tcp({i}) [new Agent/TCP/Reno]",
            f"set sink({i}) [new Agent/TCPSink]",
            f"$ns attach-agent $s({i}) $tcp({i})",
            f"$ns attach-agent $c({i}) $sink({i})",
            f"$ns connect $tcp({i}) $sink({i})",
            f"set ftp({i}) [$tcp({i}) attach-app FTP]",
            f"$ns at {start + handshake:.9f} {{$ftp({i}) start}}",
        ]
    lines += [
        f"set N {len(starts)}",
        "proc record {tag} {",
        "  global sink N qm",
        "  for {set i 0} {$i < $N} {incr i} {",
        '    puts "FLOW $tag $i [$sink($i) set bytes_]"',
        "  }",
        '  puts "QUEUE $tag [$qm set pdepartures_] [$qm set pdrops_]"',
        "}",
        f"$ns at {WARMUP} {{record W}}",
        f"$ns at {END} {{record E; exit 0}}",
        "$ns run",
    ]
    return "\n".join(lines) + "\n"


def ns2_run(seed: int, starts: list[float]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tutorial.tcl")
        with open(path, "w") as f:
            f.write(tcl(seed, starts))
        out = subprocess.run([NS, path], cwd=tmp, capture_output=True, text=True, check=True)
    got: dict[tuple[str, str], list[float]] = {}
    for line in out.stdout.splitlines():
        p = line.split()
        if p and p[0] in ("FLOW", "QUEUE"):
            got[(p[0], p[1] + (p[2] if p[0] == "FLOW" else ""))] = [float(x) for x in p[2:]]
    span = END - WARMUP
    goodput = []
    for i in range(len(starts)):
        wire = got[("FLOW", f"E{i}")][1] - got[("FLOW", f"W{i}")][1]
        # TCPSink bytes_ counts whole packets (headers included) delivered in order.
        goodput.append(wire * MSS / (MSS + HEADERS) * 8 / span)
    drops = int(got[("QUEUE", "E")][1] - got[("QUEUE", "W")][1])
    return {"goodput_bps": goodput, "drops": drops}


def jain(x: list[float]) -> float:
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if any(x) else float("nan")


def compare() -> list[str]:
    """Run both sides; return the failed checks (empty: all bands hold)."""
    if shutil.which(NS) is None:
        raise FileNotFoundError(f"ns-2 not found ({NS!r}); apt-get install ns2")
    rows = []
    for seed in SEEDS:
        e = ecnsim_run(seed)
        n = ns2_run(seed, e["starts"])  # type: ignore[arg-type]
        rows.append((seed, e, n))
    span = END - WARMUP
    print(
        f"{'seed':>4}  {'ecnsim Mb/s':>11}  {'ns-2 Mb/s':>9}  {'J ecnsim':>8}  {'J ns-2':>6}"
        "  drops e/n"
    )
    for seed, e, n in rows:
        ge, gn = e["goodput_bps"], n["goodput_bps"]
        print(
            f"{seed:>4}  {sum(ge) / 1e6:>11.3f}  {sum(gn) / 1e6:>9.3f}  {jain(ge):>8.3f}  "
            f"{jain(gn):>6.3f}  {e['drops']}/{n['drops']}"
        )
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    agg_e = mean([sum(e["goodput_bps"]) for _, e, _ in rows])
    agg_n = mean([sum(n["goodput_bps"]) for _, _, n in rows])
    jain_e = mean([jain(e["goodput_bps"]) for _, e, _ in rows])
    jain_n = mean([jain(n["goodput_bps"]) for _, _, n in rows])
    drops_e = mean([e["drops"] / span for _, e, _ in rows])
    drops_n = mean([n["drops"] / span for _, _, n in rows])
    seed2 = sum(next(e for s, e, _ in rows if s == 2)["goodput_bps"])
    checks = [
        (
            f"aggregate goodput {agg_e / 1e6:.3f} vs {agg_n / 1e6:.3f} Mb/s within "
            f"{BAND_AGGREGATE_REL:.0%}",
            abs(agg_e - agg_n) <= BAND_AGGREGATE_REL * agg_n,
        ),
        (
            f"ecnsim utilization {agg_e / PAYLOAD_CAPACITY_BPS:.3f} >= {BAND_MIN_UTILIZATION}",
            agg_e >= BAND_MIN_UTILIZATION * PAYLOAD_CAPACITY_BPS,
        ),
        (
            f"ns-2 utilization {agg_n / PAYLOAD_CAPACITY_BPS:.3f} >= {BAND_MIN_UTILIZATION}",
            agg_n >= BAND_MIN_UTILIZATION * PAYLOAD_CAPACITY_BPS,
        ),
        (
            f"seed 2: ecnsim {seed2 / 1e6:.3f} Mb/s >= {BAND_SEED2_REL} x ns-2's mean",
            seed2 >= BAND_SEED2_REL * agg_n,
        ),
        (
            f"Jain {jain_e:.3f} vs {jain_n:.3f} within {BAND_JAIN_ABS}",
            abs(jain_e - jain_n) <= BAND_JAIN_ABS,
        ),
        (
            f"bottleneck drops/s {drops_e:.1f} vs {drops_n:.1f} within x{BAND_DROPS_FACTOR}",
            drops_n / BAND_DROPS_FACTOR <= drops_e <= drops_n * BAND_DROPS_FACTOR,
        ),
    ]
    failed = []
    for text, ok in checks:
        print(("ok    " if ok else "FAIL  ") + text)
        if not ok:
            failed.append(text)
    return failed


if __name__ == "__main__":
    sys.exit(1 if compare() else 0)
