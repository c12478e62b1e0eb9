"""One scenario description, two simulators: ns-2.35 (``/usr/bin/ns``) and ecnsim.

A :class:`Case` describes a scenario once. :func:`tcl` writes it as an ns-2
Tcl script with every ns-2 default the ``ns2-2001`` profile relies on set
explicitly (ns-2.35's own defaults are not 2001's; each line names the date
ns-2's ``ns-default.tcl`` gives for the change); :func:`ecnsim_scenario`
writes it as an ecnsim scenario under the ``ns2-2001`` profile. Both runs
report the same metrics (:func:`run_ns2`, :func:`run_ecnsim`), which
``scenarios.py`` compares against bands fixed before any result was seen.

Both sides count packets of 1000 bytes: ns-2 of 2001 counted each 1000-byte
packet as 1000 bytes of payload (``useHeaders_ false``), and so does ecnsim's
``ns2-2001`` (``mss = 1000``, ``headers_on_data = false``), which the
scenario also sets explicitly, with ``handshake = false`` (ns-2's one-way
TCP of 2001, ``syn_ false``). Goodput is compared in data packets per second.

Run with ecnsim's own Python (``.venv/bin/python``); needs only ``ns`` on PATH.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any

NS = os.environ.get("NS2", "ns")

#: Data packet size on the wire, all of it payload (ns-2 packetSize_ with useHeaders_ false;
#: ecnsim mss 1000 with headers_on_data false); ACKs are 40 B in both.
PACKET = 1000
ACK = 40
MSS = PACKET

# ---------------------------------------------------------------------------
# ns-2 of 2001: the defaults the ns2-2001 profile follows, set explicitly.
# Dates are those of ns-2.35's tcl/lib/ns-default.tcl comments.
# ---------------------------------------------------------------------------

NS2_2001_TCL = """\
# --- ns-2 defaults of early 2001 (ecnsim profile ns2-2001), set explicitly ---
Agent/TCP set packetSize_ 1000
Agent/TCP set useHeaders_ false     ;# true from 2001/11/28
Agent/TCP set tcpip_base_hdr_size_ 40
Agent/TCP set windowInit_ 1         ;# 2 from 2001/5/26
Agent/TCP set windowInitOption_ 1
Agent/TCP set syn_ false            ;# true from 2001/5/17
Agent/TCP set delay_growth_ false   ;# true from 2001/5/17
Agent/TCP set tcpTick_ 0.1          ;# 0.01 from 2002/03/07
Agent/TCP set minrto_ 0             ;# 1 from 2001/5/14, 0.2 later
Agent/TCP set maxrto_ 100000        ;# 60 from 2007/03/28
Agent/TCP set rtxcur_init_ 6.0      ;# 3.0 from 2006/01/21
Agent/TCP set srtt_init_ 0
Agent/TCP set rttvar_init_ 12
Agent/TCP set T_SRTT_BITS 3
Agent/TCP set T_RTTVAR_BITS 2
Agent/TCP set rttvar_exp_ 2
Agent/TCP set updated_rttvar_ false ;# added 2006/1/21
Agent/TCP set rfc2988_ false        ;# true from 2002/03/07
Agent/TCP set precisionReduce_ false ;# true from 2006/1/24
Agent/TCP set timerfix_ true        ;# added 2001/05/11
Agent/TCP set singledup_ 0          ;# 1 (Limited Transmit) from 2001/11/28
Agent/TCP set LimTransmitFix_ false
Agent/TCP set bugFix_ true
Agent/TCP set bugFix_ack_ false
Agent/TCP set bugFix_ts_ false
Agent/TCP set bugfix_ss_ 0          ;# added 2006/06/13
Agent/TCP set exitFastRetrans_ false ;# added 2003/7/28
Agent/TCP set aggressive_maxburst_ 0 ;# added 2003/6/2
Agent/TCP set maxburst_ 0
Agent/TCP set numdupacks_ 3
Agent/TCP set numdupacksFrac_ -1
Agent/TCP set overhead_ 0
Agent/TCP set timestamps_ false
Agent/TCP set ts_resetRTO_ false
Agent/TCP set slow_start_restart_ true
Agent/TCP set restart_bugfix_ true
Agent/TCP set decrease_num_ 0.5
Agent/TCP set increase_num_ 1.0
Agent/TCP set windowOption_ 1
Agent/TCP set max_ssthresh_ 0
Agent/TCP set maxcwnd_ 0
Agent/TCP set low_window_ 4         ;# 38 from 2002/8/12 (HighSpeed TCP only)
Agent/TCP set partial_ack_ false
Agent/TCP set noFastRetrans_ false
Agent/TCP set SetCWRonRetransmit_ true ;# added 2005/06/19; 2001's output() set CWR on any packet
Agent/TCP set old_ecn_ 0
Agent/TCP set frto_enabled_ 0
Agent/TCP set sfrto_enabled_ 0
Agent/TCP set control_increase_ 0
Agent/TCP set QOption_ 0
Agent/TCP set EnblRTTCtr_ 0
Agent/TCP/Newreno set newreno_changes_ 0
Agent/TCP/Newreno set newreno_changes1_ 0
Agent/TCP/Newreno set partial_window_deflation_ 0
Agent/TCP/Newreno set exit_recovery_fix_ 0
Agent/TCPSink set packetSize_ 40
Agent/TCPSink set maxSackBlocks_ 3
Agent/TCPSink set generateDSacks_ false
Agent/TCPSink set RFC2581_immediate_ack_ true
Agent/TCPSink set ts_echo_bugfix_ true
Queue set limit_ 50
Queue/DropTail set drop_front_ false
Queue/DropTail set queue_in_bytes_ false
Queue/RED set queue_in_bytes_ false  ;# true from 10/11/2004
Queue/RED set bytes_ false           ;# true from 10/11/2004
Queue/RED set thresh_ 5              ;# 0 (automatic) from 12/29/01
Queue/RED set maxthresh_ 15          ;# 0 (automatic) from 12/29/01
Queue/RED set q_weight_ 0.002        ;# -1 (automatic) from 12/29/01
Queue/RED set mean_pktsize_ 500
Queue/RED set wait_ true
Queue/RED set linterm_ 10
Queue/RED set mark_p_ 0.1
Queue/RED set use_mark_p_ false      ;# true later (no forced region)
Queue/RED set setbit_ false
Queue/RED set gentle_ true           ;# true from 2001/4/23
Queue/RED set drop_tail_ true
Queue/RED set drop_front_ false
Queue/RED set drop_rand_ false
Queue/RED set ns1_compat_ false
Queue/RED set adaptive_ 0
Queue/RED set feng_adaptive_ 0
Queue/RED set cautious_ 0
Queue/RED set summarystats_ false
"""

# ---------------------------------------------------------------------------
# The scenario description
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DropTailQ:
    """ns-2 ``DropTail`` with ``queue-limit`` = ``limit`` (ecnsim: ``limit_rule = "ns2"``)."""

    limit: int


@dataclass(frozen=True)
class RedQ:
    """ns-2 ``Queue/RED`` (2001 defaults unless given); ecnsim ``red`` (ns2-2001 profile)."""

    limit: int
    min_th: float = 5
    max_th: float = 15
    w_q: float = 0.002
    max_p: float = 0.1
    gentle: bool = True
    ecn: bool = False  # setbit_
    mean_pktsize: int = 500
    # The variants ns-2.35 carries beyond the 2001 defaults. min_th = max_th = 0 are ns-2's
    # automatic thresholds (targetdelay_), w_q 0 / -1 its automatic weights, bottom 0 its
    # automatic floor on max_p (ecnsim "auto", "auto" / "auto_rtt", "auto").
    wait: bool = True
    byte_mode: bool = False  # bytes_
    qib: bool = False  # queue_in_bytes_: avg, thresholds and limit in bytes
    drop_front: bool = False  # drop_front_: the victim of forced and overflow drops
    use_mark_p: bool = False
    mark_p: float = 0.1
    adaptive: bool = False  # adaptive_ 1 (Floyd, Gummadi, Shenker 2001)
    interval: float = 0.5
    alpha: float = 0.01
    beta: float = 0.9
    top: float = 0.5
    bottom: float = 0.01
    targetdelay: float = 0.005


@dataclass(frozen=True)
class RemQ:
    """ns-2 ``Queue/REM`` (the authors' code; ns-2.35 defaults unless given); ecnsim ``rem``.

    ns-2 enqueues first and drops when the queue then holds ``limit_`` packets, so
    ``limit`` holds ``limit - 1``: the ``ns2-2001`` profile's ``limit_rule`` ("ns2") reads
    ecnsim's limit the same way (docs/models/rem.md), ``limit x mean_pktsize`` bytes
    with ``qib``."""

    limit: int
    gamma: float = 0.001
    phi: float = 1.001
    b_ref: float = 20.0  # pbo_
    update: float = 0.002  # pupdtime_
    inw: float = 1.0
    mean_pktsize: int = 1000
    ecn: bool = False  # markpkts_: mark at dequeue, Not-ECT passes
    qib: bool = False


@dataclass(frozen=True)
class PiQ:
    """ns-2 ``Queue/PI`` (the authors' code; ns-2.35 defaults unless given); ecnsim ``pi``."""

    limit: int
    a: float = 1.822e-5
    b: float = 1.816e-5
    w: float = 170.0
    qref: float = 50.0
    mean_pktsize: int = 500
    ecn: bool = False  # setbit_
    byte_mode: bool = False  # bytes_
    qib: bool = False  # queue_in_bytes_


Queue = DropTailQ | RedQ | RemQ | PiQ


@dataclass(frozen=True)
class Flow:
    """A TCP flow (or a UDP CBR source) from its own access link into the router."""

    access_delay: float
    start: float = 0.0
    group: str = "all"
    cbr_rate: float | None = None  # this source's CBR rate (else the case's), bit/s on the wire
    packet: int = 1000  # CBR packet size on the wire, bytes


@dataclass(frozen=True)
class Case:
    """One scenario, written for both simulators from these fields alone.

    Topology: each flow's source ``s_i`` -(access_rate, access_delay)- ``r``
    -(rate, delay, queue)- ``d``. A ``script`` drops (``drops``) or CE-marks
    (``marks``) the n-th data packets (1-based) that cross r -> d: ns-2
    ``ErrorModel/List`` (``droplist_``, ``markecn_``), ecnsim's ``script`` queue.
    """

    name: str
    flows: tuple[Flow, ...]
    rate: float  # bottleneck, bit/s
    delay: float  # bottleneck one-way, s
    queue: Queue
    access_rate: float = 100e6
    access_limit: int = 10000
    variant: str = "reno"  # reno | newreno | sack | tahoe
    window: int = 20  # ns-2 window_, ecnsim max_cwnd
    ecn: bool = False
    drops: tuple[int, ...] = ()
    marks: tuple[int, ...] = ()
    cbr_rate: float | None = None  # UDP CBR instead of TCP, bit/s on the wire
    duration: float = 10.0
    warmup: float = 0.0
    sample: float | None = None  # cwnd/ssthresh/avg sampling interval, s
    bin: float | None = None  # width of the bins of the AQM state's trajectory, s
    align_handshake: bool = False  # start ns-2's flows one SYN RTT later (for an ecnsim handshake)
    notes: str = ""


NS2_AGENT = {
    "tahoe": ("Agent/TCP", "Agent/TCPSink"),
    "reno": ("Agent/TCP/Reno", "Agent/TCPSink"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink"),
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1"),
}


def syn_rtt(case: Case, flow: Flow) -> float:
    """Time from ecnsim's SYN to the first data packet: one RTT of 40-byte segments."""
    hops = [(case.access_rate, flow.access_delay), (case.rate, case.delay)]
    one_way = sum(ACK * 8 / r + d for r, d in hops)
    return 2 * one_way


def ns2_start(case: Case, flow: Flow) -> float:
    if case.cbr_rate is not None or not case.align_handshake:
        return flow.start
    return flow.start + syn_rtt(case, flow)


def _bw(bps: float) -> str:
    return f"{bps:.10g}"


def _b(flag: bool) -> str:
    return "true" if flag else "false"


NS2_QUEUE = {DropTailQ: "DropTail", RedQ: "RED", RemQ: "REM", PiQ: "PI"}

#: The AQM state each queue exposes to Tcl, in the order of the QS lines:
#: (average queue, probability, max_p); "-" where the queue has none.
NS2_AQM_VARS = {
    DropTailQ: ("-", "-", "-"),
    RedQ: ("ave_", "prob1_", "cur_max_p_"),
    RemQ: ("-", "prob_", "-"),
    PiQ: ("-", "prob_", "-"),
}


def tcl(case: Case, seed: int) -> str:
    """The ns-2 script. Prints FLOW/QUEUE/SAMPLE/AVG lines on stdout."""
    n = len(case.flows)
    q = case.queue
    lines = [NS2_2001_TCL]
    if isinstance(q, RedQ):
        lines += [
            f"Queue/RED set thresh_ {q.min_th}",
            f"Queue/RED set maxthresh_ {q.max_th}",
            f"Queue/RED set q_weight_ {q.w_q}",
            f"Queue/RED set linterm_ {1.0 / q.max_p:.10g}",
            f"Queue/RED set gentle_ {'true' if q.gentle else 'false'}",
            f"Queue/RED set setbit_ {'true' if q.ecn else 'false'}",
            f"Queue/RED set mean_pktsize_ {q.mean_pktsize}",
            f"Queue/RED set wait_ {_b(q.wait)}",
            f"Queue/RED set bytes_ {_b(q.byte_mode)}",
            f"Queue/RED set queue_in_bytes_ {_b(q.qib)}",
            f"Queue/RED set drop_front_ {_b(q.drop_front)}",
            f"Queue/RED set drop_tail_ {_b(not q.drop_front)}",
            f"Queue/RED set use_mark_p_ {_b(q.use_mark_p)}",
            f"Queue/RED set mark_p_ {q.mark_p}",
            f"Queue/RED set adaptive_ {1 if q.adaptive else 0}",
            f"Queue/RED set interval_ {q.interval}",
            f"Queue/RED set alpha_ {q.alpha}",
            f"Queue/RED set beta_ {q.beta}",
            f"Queue/RED set top_ {q.top}",
            f"Queue/RED set bottom_ {q.bottom}",
            f"Queue/RED set targetdelay_ {q.targetdelay}",
        ]
    elif isinstance(q, RemQ):
        lines += [
            f"Queue/REM set gamma_ {q.gamma}",
            f"Queue/REM set phi_ {q.phi}",
            f"Queue/REM set pbo_ {q.b_ref}",
            f"Queue/REM set pupdtime_ {q.update}",
            f"Queue/REM set inw_ {q.inw}",
            f"Queue/REM set mean_pktsize_ {q.mean_pktsize}",
            f"Queue/REM set markpkts_ {_b(q.ecn)}",
            f"Queue/REM set qib_ {_b(q.qib)}",
        ]
    elif isinstance(q, PiQ):
        lines += [
            f"Queue/PI set a_ {q.a}",
            f"Queue/PI set b_ {q.b}",
            f"Queue/PI set w_ {q.w}",
            f"Queue/PI set qref_ {q.qref}",
            f"Queue/PI set mean_pktsize_ {q.mean_pktsize}",
            f"Queue/PI set setbit_ {_b(q.ecn)}",
            f"Queue/PI set bytes_ {_b(q.byte_mode)}",
            f"Queue/PI set queue_in_bytes_ {_b(q.qib)}",
        ]
    lines += [
        f"Agent/TCP set window_ {case.window}",
        f"Agent/TCP set ecn_ {1 if case.ecn else 0}",
        "set ns [new Simulator]",
        f"ns-random {seed}",
        f"$defaultRNG seed {seed}",
        "set r [$ns node]",
        "set d [$ns node]",
        f"$ns simplex-link $r $d {_bw(case.rate)} {case.delay} {NS2_QUEUE[type(q)]}",
        f"$ns simplex-link $d $r {_bw(case.rate)} {case.delay} DropTail",
        f"$ns queue-limit $r $d {q.limit}",
        f"$ns queue-limit $d $r {case.access_limit}",
        "set bq [[$ns link $r $d] queue]",
        "set qm [$ns monitor-queue $r $d 0 1000]",
    ]
    # Error models sit at the head of the link, before the queue, where ecnsim's script queue
    # acts (lossmodel inserts right after the head, so the last inserted is first): marks, then
    # drops, both counting every data packet; droplist_ is 0-based, ecnsim's nth 1-based.
    if case.drops:
        lines += [
            "set emd [new ErrorModel/List]",
            "$emd droplist {" + " ".join(str(k - 1) for k in case.drops) + "}",
            "$ns lossmodel $emd $r $d",
        ]
    if case.marks:
        lines += [
            "set emk [new ErrorModel/List]",
            "$emk set markecn_ true",
            "$emk droplist {" + " ".join(str(k - 1) for k in case.marks) + "}",
            "$ns lossmodel $emk $r $d",
        ]
    for i, f in enumerate(case.flows):
        lines += [
            f"set s({i}) [$ns node]",
            f"$ns duplex-link $s({i}) $r {_bw(case.access_rate)} {f.access_delay} DropTail",
            f"$ns queue-limit $s({i}) $r {case.access_limit}",
            f"$ns queue-limit $r $s({i}) {case.access_limit}",
        ]
        if case.cbr_rate is not None:
            lines += [
                f"set tcp({i}) [new Agent/UDP]",
                f"$tcp({i}) set packetSize_ {f.packet}",
                f"set sink({i}) [new Agent/Null]",
                f"$ns attach-agent $s({i}) $tcp({i})",
                f"$ns attach-agent $d $sink({i})",
                f"$ns connect $tcp({i}) $sink({i})",
                f"set app({i}) [new Application/Traffic/CBR]",
                f"$app({i}) set packetSize_ {f.packet}",
                f"$app({i}) set rate_ {_bw(f.cbr_rate or case.cbr_rate)}",
                f"$app({i}) set random_ 0",
                f"$app({i}) attach-agent $tcp({i})",
            ]
        else:
            agent, sink = NS2_AGENT[case.variant]
            lines += [
                f"set tcp({i}) [new {agent}]",
                f"$tcp({i}) set fid_ {i}",
                f"set sink({i}) [new {sink}]",
                f"$ns attach-agent $s({i}) $tcp({i})",
                f"$ns attach-agent $d $sink({i})",
                f"$ns connect $tcp({i}) $sink({i})",
                f"set app({i}) [$tcp({i}) attach-app FTP]",
            ]
        lines.append(f"$ns at {ns2_start(case, f):.9f} {{$app({i}) start}}")
    tcp_vars = "ndatapack_ nrexmitpack_ nrexmit_ ack_ cwnd_ ssthresh_ necnresponses_ ncwndcuts_"
    lines += [
        f"set N {n}",
        f"set cbr {1 if case.cbr_rate is not None else 0}",
        "proc record {tag} {",
        "  global ns tcp sink N qm cbr",
        "  for {set i 0} {$i < $N} {incr i} {",
        '    if {$cbr} { puts "FLOW $tag $i"; continue }',
        "    set v {}",
        f"    foreach x {{{tcp_vars}}} {{ lappend v [$tcp($i) set $x] }}",
        "    lappend v [$sink($i) set bytes_]",
        '    puts "FLOW $tag $i [join $v { }]"',
        "  }",
        '  puts "QUEUE $tag [$qm set parrivals_] [$qm set pdepartures_] '
        "[$qm set pdrops_] [$qm set pmarks_] [$qm set barrivals_] [$qm set bdepartures_] "
        '[$qm set bdrops_]"',
        "}",
    ]
    if case.sample:
        lines += [
            "proc sample {} {",
            "  global ns tcp sink N bq cbr qm",
            "  set now [$ns now]",
            "  if {!$cbr} {",
            "    for {set i 0} {$i < $N} {incr i} {",
            '      puts "SAMPLE $now $i [$tcp($i) set cwnd_] [$tcp($i) set ssthresh_] '
            '[$sink($i) set bytes_]"',
            "    }",
            "  }",
            '  catch { puts "AVG $now [$bq set ave_]" }',
            '  set qs "QS $now [$qm set pkts_] [$qm set size_]"',
            "  foreach v {" + " ".join(NS2_AQM_VARS[type(q)]) + "} {",
            '    if {$v == "-"} { append qs " nan" } else { append qs " [$bq set $v]" }',
            "  }",
            "  puts $qs",
            f"  $ns at [expr $now + {case.sample}] sample",
            "}",
            f"$ns at {case.sample} sample",
        ]
    lines += [
        f"$ns at {case.warmup} {{record W}}",
        f"$ns at {case.duration} {{record E; exit 0}}",
        "$ns run",
    ]
    return "\n".join(lines) + "\n"


def run_ns2(case: Case, seed: int = 1) -> dict[str, Any]:
    """Run ns-2 on the case; the metrics over [warmup, duration]."""
    if shutil.which(NS) is None:
        raise FileNotFoundError(f"ns-2 not found ({NS!r}); apt-get install ns2")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{case.name}.tcl")
        with open(path, "w") as f:
            f.write(tcl(case, seed))
        out = subprocess.run(
            [NS, path], cwd=tmp, capture_output=True, text=True, check=False, timeout=3600
        )
    if out.returncode != 0:
        raise RuntimeError(f"ns failed on {case.name}: {out.stderr[-2000:]}")
    return parse_ns2(case, out.stdout)


def parse_ns2(case: Case, stdout: str) -> dict[str, Any]:
    flows: dict[str, dict[int, list[float]]] = {"W": {}, "E": {}}
    queue: dict[str, list[int]] = {}
    samples: dict[int, list[tuple[float, float, float, float]]] = {}
    avg: list[tuple[float, float]] = []
    qs: list[tuple[float, ...]] = []
    for line in stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "FLOW":
            flows[parts[1]][int(parts[2])] = [float(x) for x in parts[3:]]
        elif parts[0] == "QUEUE":
            queue[parts[1]] = [int(float(x)) for x in parts[2:]]
        elif parts[0] == "SAMPLE":
            t, i, cw, ss = float(parts[1]), int(parts[2]), float(parts[3]), float(parts[4])
            samples.setdefault(i, []).append((t, cw, ss, float(parts[5]) // PACKET))
        elif parts[0] == "AVG":
            avg.append((float(parts[1]), float(parts[2])))
        elif parts[0] == "QS":
            qs.append(tuple(float(x) for x in parts[1:7]))
    span = case.duration - case.warmup
    per_flow = []
    for i, f in enumerate(case.flows):
        if case.cbr_rate is not None:
            per_flow.append({"group": f.group})
            continue
        w, e = flows["W"][i], flows["E"][i]
        d = [b - a for a, b in zip(w, e, strict=True)]
        per_flow.append(
            {
                "group": f.group,
                "sent": int(d[0]),
                "retransmitted": int(d[1]),
                "timeouts": int(d[2]),
                # TCPSink bytes_: in-order bytes delivered (1000 per packet in 2001).
                "delivered": int(d[8]) // PACKET,
                "goodput_pps": int(d[8]) // PACKET / span,
                "ecn_reductions": int(d[6]),
                "final_cwnd": e[4],
                "final_ssthresh": e[5],
            }
        )
    qw, qe = queue["W"], queue["E"]
    keys = QUEUE_KEYS
    q = dict(zip(keys, (b - a for a, b in zip(qw, qe, strict=True)), strict=True))
    return {
        "simulator": "ns-2.35",
        "flows": per_flow,
        "queue": q,
        "samples": {i: s for i, s in samples.items()},
        "avg": avg,
        "qs": qs,
    }


#: The bottleneck counters both sides report over [warmup, duration].
QUEUE_KEYS = (
    "arrivals",
    "departures",
    "drops",
    "marks",
    "arrival_bytes",
    "departure_bytes",
    "drop_bytes",
)


# ---------------------------------------------------------------------------
# ecnsim
# ---------------------------------------------------------------------------


def ecnsim_queue(case: Case) -> dict[str, Any]:
    from ecnsim.scenario.spec import droptail, queue, red

    q = case.queue
    if case.drops or case.marks:
        rules = []
        if case.drops:
            rules.append({"action": "drop", "packets": "data", "nth": list(case.drops)})
        if case.marks:
            rules.append({"action": "mark", "packets": "data", "nth": list(case.marks)})
        return queue("script", limit_packets=q.limit, rules=rules)
    if isinstance(q, DropTailQ):
        return droptail(limit_packets=q.limit)  # the profile's limit_rule: "ns2"
    if isinstance(q, RemQ):
        return queue(
            "rem",
            # ns-2 rem.cc enque: enqueue, then drop if qlen >= limit_ (limit_ x mean_pktsize
            # bytes with qib_): the profile's limit_rule "ns2".
            limit_packets=None if q.qib else q.limit,
            limit_bytes=q.limit * q.mean_pktsize if q.qib else None,
            measure="bytes" if q.qib else "packets",
            mean_pktsize=q.mean_pktsize,
            gamma=q.gamma,
            phi=q.phi,
            alpha=0.1,  # hard-coded in rem.cc
            b_ref=q.b_ref,
            update_interval=f"{q.update * 1e3:.9g}ms",
            inw=q.inw,
            ecn=q.ecn,
            # ns-2 rem.cc deque: markpkts_ marks the departing ECT packet; Not-ECT ones pass.
            decide_at="dequeue" if q.ecn else "enqueue",
            non_ect="pass" if q.ecn else None,
        )
    if isinstance(q, PiQ):
        return queue(
            "pi",
            limit_packets=None if q.qib else q.limit,
            # ns-2 pi.cc enque: qlim = limit_ * mean_pktsize bytes with queue_in_bytes_.
            limit_bytes=q.limit * q.mean_pktsize if q.qib else None,
            measure="bytes" if q.qib else "packets",
            mean_pktsize=q.mean_pktsize,
            a=q.a,
            b=q.b,
            w=q.w,
            qref=q.qref,
            ecn=q.ecn,
            byte_mode=q.byte_mode,
        )

    def auto(v: float, rule: str) -> float | str:
        return rule if v == 0 else v

    return red(
        limit_packets=None if q.qib else q.limit,
        # ns-2 red.cc enque: qlim = limit_ * mean_pktsize bytes with queue_in_bytes_.
        limit_bytes=q.limit * q.mean_pktsize if q.qib else None,
        measure="bytes" if q.qib else "packets",
        min_th=auto(q.min_th, "auto"),
        max_th=auto(q.max_th, "auto"),
        target_delay=f"{q.targetdelay * 1e3:.9g}ms",
        w_q={0: "auto", -1: "auto_rtt", -2: "auto_fast"}.get(q.w_q, q.w_q),  # type: ignore[arg-type]
        max_p=q.max_p,
        gentle=q.gentle,
        wait=q.wait,
        byte_mode=q.byte_mode,
        victim="front" if q.drop_front else "tail",
        mean_pktsize=q.mean_pktsize,
        ecn=("ns2_mark_p" if q.use_mark_p else "rfc3168") if q.ecn else "none",
        mark_p=q.mark_p,
        adaptive="floyd" if q.adaptive else "none",
        adapt_timing="ns2",
        adapt_interval=f"{q.interval * 1e3:.9g}ms",
        adapt_alpha=q.alpha,
        adapt_beta=q.beta,
        max_p_top=q.top,
        max_p_bottom=auto(q.bottom, "auto"),
    )


def ecnsim_scenario(case: Case, seed: int = 1):  # -> ecnsim.Scenario
    import ecnsim
    from ecnsim.scenario.spec import bulk, droptail

    sc = ecnsim.Scenario(
        case.duration,
        name=case.name,
        warmup=case.warmup,
        seed=seed,
        profile="ns2-2001",
        sample_interval=case.sample,
    )
    sc.router("r")
    sc.host("d")
    if case.cbr_rate is None:
        # ns-2's window_ is the advertised window wnd_: it bounds min(cwnd_, wnd_) and also the
        # window inflated in fast recovery; ecnsim's max_cwnd bounds cwnd alone, so both are set.
        sc.tcp(
            cc=case.variant,
            max_cwnd=case.window,
            rcv_window=case.window * MSS,
            ecn="request" if case.ecn else "off",
        )
        # ns-2 of 2001: no SYN exchange (syn_ false), 1000-byte packets all payload
        # (useHeaders_ false).
        # (The ns2-2001 profile's values, set here so the comparison does not depend on them.)
        # With align_handshake, ecnsim opens with a handshake and ns-2 starts one SYN RTT later.
        data = sc.to_dict()
        data["tcp"].update(
            {"mss": PACKET, "headers_on_data": False, "handshake": case.align_handshake}
        )
        sc = ecnsim.Scenario.from_dict(data)
    access = droptail(limit_packets=case.access_limit)
    sc.link(
        "r", "d", rate=case.rate, delay=case.delay, queue_ab=ecnsim_queue(case), queue_ba=access
    )
    apps = []
    for i, f in enumerate(case.flows):
        sc.host(f"s{i}")
        sc.link(f"s{i}", "r", rate=case.access_rate, delay=f.access_delay, queue=access)
        if case.cbr_rate is None:
            sc.flow(f"s{i}", "d", app=bulk(), start=f.start, name=f"f{i}")
        else:
            apps.append(
                {
                    "name": f"cbr{i}",
                    "clients": [f"s{i}"],
                    "servers": ["d"],
                    "start": f.start,
                    "model": {
                        "type": "cbr",
                        "rate": f.cbr_rate or case.cbr_rate,
                        "packet_size": f.packet - 28,  # UDP payload: 28 B of IP/UDP headers
                    },
                }
            )
    if apps:
        data = sc.to_dict()
        data["apps"] = apps
        sc = ecnsim.Scenario.from_dict(data)
    return sc


def run_ecnsim(case: Case, seed: int = 1) -> dict[str, Any]:
    import ecnsim

    res = ecnsim.Simulation(ecnsim_scenario(case, seed)).run()
    span = case.duration - case.warmup
    per_flow = []
    if case.cbr_rate is None:
        ft = res.table("flows")
        for i, f in enumerate(case.flows):
            delivered = int(ft["bytes_delivered"][i]) // MSS
            per_flow.append(
                {
                    "group": f.group,
                    "sent": int(ft["packets_sent"][i]),
                    "retransmitted": int(ft["packets_retransmitted"][i]),
                    # ns-2's nrexmit_ counts only timeouts that cut ssthresh: not those while an
                    # ECN reduction is the last window action (timeout(): slowdown(CLOSE_CWND_ONE)).
                    "timeouts": int(ft["rto_count"][i]) - int(ft["rto_after_ecn"][i]),
                    "delivered": delivered,
                    "goodput_pps": delivered / span,
                    "ecn_reductions": int(ft["ecn_reductions"][i]),
                    "final_cwnd": int(ft["final_cwnd_bytes"][i]) / MSS,
                }
            )
    else:
        per_flow = [{"group": f.group} for f in case.flows]
    qt = res.table("queues")
    qi = list(qt["queue"]).index("r->d")
    q = {k: int(qt[k][qi]) for k in ("arrivals", "departures", "drops", "marks")}
    q.update({k: int(qt[k][qi]) for k in ("drops_early", "drops_forced", "drops_overflow")})
    q.update({k: int(qt[k][qi]) for k in ("arrival_bytes", "departure_bytes")})
    # Bytes dropped: what arrived and neither left nor stayed (the queue's bytes at the end
    # less those at the warm-up, from the series' last and warm-up rows, are ~ 0 next to it).
    q["drop_bytes"] = q["arrival_bytes"] - q["departure_bytes"]
    samples: dict[int, list[tuple[float, float, float, float]]] = {}
    avg: list[tuple[float, float]] = []
    qs: list[tuple[float, ...]] = []
    if case.sample:
        fs = res.table("flow_series")
        for t, i, cw, ss, dl in zip(
            fs["time_s"],
            fs["flow_id"],
            fs["cwnd_bytes"],
            fs["ssthresh_bytes"],
            fs["bytes_delivered"],
            strict=True,
        ):
            samples.setdefault(int(i), []).append((float(t), cw / MSS, ss / MSS, dl // MSS))
        qser = res.table("queue_series")
        cols = ("time_s", "queue_id", "packets", "bytes", "aqm_avg", "aqm_prob", "aqm_max_p")
        for t, qid, pk, by, a, pr, mp in zip(*(qser[c] for c in cols), strict=True):
            if int(qid) != int(qt["queue_id"][qi]):
                continue
            if not math.isnan(a):
                avg.append((float(t), float(a)))
            qs.append((float(t), float(pk), float(by), float(a), float(pr), float(mp)))
    if qs:
        # The bytes still queued at the end less those queued at the warm-up were not dropped.
        def backlog_at(t: float) -> float:
            return min(qs, key=lambda row: abs(row[0] - t))[2]

        q["drop_bytes"] -= int(backlog_at(case.duration) - backlog_at(case.warmup))
    return {
        "simulator": "ecnsim",
        "flows": per_flow,
        "queue": q,
        "samples": samples,
        "avg": avg,
        "qs": qs,
    }


# ---------------------------------------------------------------------------
# Metrics shared by both sides
# ---------------------------------------------------------------------------


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 > 0 else float("nan")


def ssthresh_steps(r: dict[str, Any], flow: int = 0) -> list[int]:
    """The distinct ssthresh values a flow went through (packets, rounded down),
    from the samples, leaving out the initial value."""
    seq: list[int] = []
    first = True
    for _, _, ss, _ in r["samples"].get(flow, []):
        v = int(min(ss, 1e9) + 1e-9)  # an unset ssthresh is infinite in ecnsim
        if first:
            first = False
            init = v
            continue
        if (not seq and v != init) or (seq and v != seq[-1]):
            seq.append(v)
    return seq


#: Columns of a QS row (both sides): time, queue packets, queue bytes, avg, probability, max_p.
QS_COLUMNS = ("time", "queue", "queue_bytes", "avg", "prob", "max_p")


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else float("nan")


def aqm_means(case: Case, r: dict[str, Any]) -> dict[str, float]:
    """Time averages over [warmup, duration] of the sampled queue and AQM state."""
    rows = [row for row in r.get("qs", []) if case.warmup <= row[0] <= case.duration]
    out = {}
    for k, name in enumerate(QS_COLUMNS[1:], start=1):
        out[f"{name}_mean"] = _mean([row[k] for row in rows])
    return out


def aqm_bins(case: Case, r: dict[str, Any], column: str) -> list[float]:
    """The sampled ``column`` of the AQM state averaged over consecutive bins of
    ``case.bin`` seconds from 0 to ``duration`` (a bin holds the samples in (t0, t1])."""
    k = QS_COLUMNS.index(column)
    assert case.bin, case.name
    n = round(case.duration / case.bin)
    acc: list[list[float]] = [[] for _ in range(n)]
    for row in r.get("qs", []):
        i = math.ceil(row[0] / case.bin - 1e-9) - 1
        if 0 <= i < n:
            acc[i].append(row[k])
    return [_mean(xs) for xs in acc]


def summary(case: Case, r: dict[str, Any]) -> dict[str, float]:
    """The compared numbers of one run."""
    span = case.duration - case.warmup
    out: dict[str, float] = {}
    q = r["queue"]
    out["drops"] = q["drops"]
    out["marks"] = q["marks"]
    out["signals"] = q["drops"] + q["marks"]
    out["arrivals"] = q["arrivals"]
    out.update(aqm_means(case, r))
    if case.cbr_rate is not None:
        out["drop_rate"] = q["drops"] / q["arrivals"] if q["arrivals"] else float("nan")
        ab = q.get("arrival_bytes", 0)
        out["byte_drop_rate"] = q["drop_bytes"] / ab if ab else float("nan")
        avg = [a for t, a in r["avg"] if t >= case.warmup]
        out["avg_mean"] = sum(avg) / len(avg) if avg else float("nan")
        return out
    fl = r["flows"]
    gp = [f["goodput_pps"] for f in fl]
    out["goodput_pps"] = sum(gp)
    out["jain"] = jain(gp)
    out["timeouts"] = sum(f["timeouts"] for f in fl)
    out["timeouts_per_s"] = out["timeouts"] / span
    out["retransmitted"] = sum(f["retransmitted"] for f in fl)
    out["sent"] = sum(f["sent"] for f in fl)
    out["delivered"] = sum(f["delivered"] for f in fl)
    out["ecn_reductions"] = sum(f["ecn_reductions"] for f in fl)
    groups = sorted({f["group"] for f in fl})
    for g in groups:
        members = [f["goodput_pps"] for f in fl if f["group"] == g]
        out[f"goodput_pps_{g}"] = sum(members) / len(members)
        out[f"share_{g}"] = sum(members) / out["goodput_pps"] if out["goodput_pps"] else math.nan
    return out


def with_(case: Case, **changes: Any) -> Case:
    return replace(case, **changes)


__all__ = [
    "ACK",
    "MSS",
    "NS2_2001_TCL",
    "PACKET",
    "Case",
    "DropTailQ",
    "Flow",
    "PiQ",
    "RedQ",
    "RemQ",
    "aqm_bins",
    "aqm_means",
    "ecnsim_scenario",
    "jain",
    "parse_ns2",
    "run_ecnsim",
    "run_ns2",
    "ssthresh_steps",
    "summary",
    "tcl",
    "with_",
]

_ = field  # (dataclasses.field kept for callers building cases)
