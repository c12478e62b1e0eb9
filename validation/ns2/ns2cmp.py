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
    ecn: bool = False
    mean_pktsize: int = 500


@dataclass(frozen=True)
class Flow:
    """A TCP flow (or a UDP CBR source) from its own access link into the router."""

    access_delay: float
    start: float = 0.0
    group: str = "all"


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
    queue: DropTailQ | RedQ
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
        ]
    lines += [
        f"Agent/TCP set window_ {case.window}",
        f"Agent/TCP set ecn_ {1 if case.ecn else 0}",
        "set ns [new Simulator]",
        f"ns-random {seed}",
        f"$defaultRNG seed {seed}",
        "set r [$ns node]",
        "set d [$ns node]",
        f"$ns simplex-link $r $d {_bw(case.rate)} {case.delay} "
        + ("RED" if isinstance(q, RedQ) else "DropTail"),
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
                f"$tcp({i}) set packetSize_ {PACKET}",
                f"set sink({i}) [new Agent/Null]",
                f"$ns attach-agent $s({i}) $tcp({i})",
                f"$ns attach-agent $d $sink({i})",
                f"$ns connect $tcp({i}) $sink({i})",
                f"set app({i}) [new Application/Traffic/CBR]",
                f"$app({i}) set packetSize_ {PACKET}",
                f"$app({i}) set rate_ {_bw(case.cbr_rate)}",
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
        '[$qm set pdrops_] [$qm set pmarks_]"',
        "}",
    ]
    if case.sample:
        lines += [
            "proc sample {} {",
            "  global ns tcp sink N bq cbr",
            "  set now [$ns now]",
            "  if {!$cbr} {",
            "    for {set i 0} {$i < $N} {incr i} {",
            '      puts "SAMPLE $now $i [$tcp($i) set cwnd_] [$tcp($i) set ssthresh_] '
            '[$sink($i) set bytes_]"',
            "    }",
            "  }",
            '  catch { puts "AVG $now [$bq set ave_]" }',
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
    keys = ("arrivals", "departures", "drops", "marks")
    q = dict(zip(keys, (b - a for a, b in zip(qw, qe, strict=True)), strict=True))
    return {
        "simulator": "ns-2.35",
        "flows": per_flow,
        "queue": q,
        "samples": {i: s for i, s in samples.items()},
        "avg": avg,
    }


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
    return red(
        limit_packets=q.limit,
        min_th=q.min_th,
        max_th=q.max_th,
        w_q=q.w_q,
        max_p=q.max_p,
        gentle=q.gentle,
        mean_pktsize=q.mean_pktsize,
        ecn="rfc3168" if q.ecn else "none",
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
                    "model": {"type": "cbr", "rate": case.cbr_rate, "packet_size": PACKET - 28},
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
    samples: dict[int, list[tuple[float, float, float, float]]] = {}
    avg: list[tuple[float, float]] = []
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
        qs = res.table("queue_series")
        for t, qid, a in zip(qs["time_s"], qs["queue_id"], qs["aqm_avg"], strict=True):
            if int(qid) == int(qt["queue_id"][qi]) and not math.isnan(a):
                avg.append((float(t), float(a)))
    return {"simulator": "ecnsim", "flows": per_flow, "queue": q, "samples": samples, "avg": avg}


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


def summary(case: Case, r: dict[str, Any]) -> dict[str, float]:
    """The compared numbers of one run."""
    span = case.duration - case.warmup
    out: dict[str, float] = {}
    q = r["queue"]
    out["drops"] = q["drops"]
    out["marks"] = q["marks"]
    out["signals"] = q["drops"] + q["marks"]
    out["arrivals"] = q["arrivals"]
    if case.cbr_rate is not None:
        out["drop_rate"] = q["drops"] / q["arrivals"] if q["arrivals"] else float("nan")
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
    "RedQ",
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
