#!/usr/bin/env python3
"""ns-3 side of the RED / ECN cross-check on STUDIES.md §3 (``hetero``).

Run with the Python of the ns-3 virtual environment (ns-3 3.44), never with
ecnsim's::

    "$NS3_PYTHON" ns3_hetero.py '{"n": 30, "mode": "red"}'
    "$NS3_PYTHON" ns3_hetero.py '[{...}, {...}]'   # several, one process

Keys (all optional): ``n`` (sources, multiple of 6; default 30), ``mode``
(``"red"`` or ``"ecn"``), ``duration`` (100), ``warmup`` (20), ``seed`` (1,
ns-3's RngRun), ``gentle`` (false), ``ns1_compat`` (false: ns-3's RED then
keeps counting arrivals through forced drops; true resets the count after a
forced drop, as ns-2's ``red.cc`` does with its default ``ns1_compat_ false``),
``sack`` (false), plus ``tcp`` overrides (see TCP below).

Topology: s_i --(300 Mb/s / N, d_g)-- r --(10 Mb/s, 5 ms)-- sink, one-way
access delays d_g = 145 / 45 / 5 ms for the fragile / average / robust
thirds. The r -> sink device carries a RedQueueDisc (MaxSize 120p, MinTh 10,
MaxTh 30, QW 0.002, LInterm 10 = 1 / max_p 0.1, MeanPktSize 1000,
LinkBandwidth 10 Mb/s, LinkDelay 5 ms, Wait true, Gentle per ``gentle``,
UseEcn per mode, UseHardDrop true) over a 1-packet device queue (the smallest
ns-3 allows; flow control on so the disc holds the backlog). Every other
device: no queue disc, DropTail of 10000 packets, flow control off.

TCP: TcpNewReno + TcpClassicRecovery (ns-3 has no plain Reno; NewReno with
classic recovery is the closest), no SACK, no timestamps, no limited
transmit, DelAckCount 1, SegmentSize 960 (IP packet 1000 B, 1002 B on the
PPP wire), InitialCwnd 1, initial RTO 1 s, MinRto 1 s, clock granularity
1 ms, RcvBufSize 64 * 960 (the 64-packet window), SndBufSize 128 KiB, UseEcn On in ECN mode.

Output: JSON with per-flow goodput, entries into TCP's Loss state (first
timeouts), every retransmission-timer expiry (``rto_expiries``, ecnsim's
``rto_count``) and entries into the Recovery state (fast retransmits), data segments sent
and retransmissions (``Tx`` / ``Retransmission`` traces) over [warmup, duration], the queue
disc's drop / mark counters by reason over the same interval, ``idle``: the bottleneck
link's idle periods (``PhyTxEnd`` to the next ``PhyTxBegin``: count, count of those at least
one mean-packet time long, total seconds) and the RED disc's empty periods (its
``PacketsInQueue`` from 0 back above 0; same three figures), the packet-hops and events of
the whole run, and the CPU time spent inside ``Simulator::Run`` (``run_cpu_s``, the
simulation alone).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ns3"))
from ns3_dumbbell import TimedRun, packet_hops

DELAYS = (0.145, 0.045, 0.005)  # fragile, average, robust
GROUPS = ("fragile", "average", "robust")
TCP = {
    "cc": "NewReno",
    "segment_size": 960,
    "initial_cwnd": 1,
    "initial_rto": 1.0,
    "min_rto": 1.0,
    "clock_granularity": 0.001,
    "max_window": 64,
}

PROBES_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"
namespace ecnsim_red_validation {
struct SinkProbe {
    uint64_t total = 0;
    void OnRx(ns3::Ptr<const ns3::Packet> p, const ns3::Address&) { total += p->GetSize(); }
};
inline void ConnectSink(ns3::Ptr<ns3::Application> app, SinkProbe* probe) {
    app->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&SinkProbe::OnRx, probe));
}
// Entries into TCP's Loss state (a first timeout) and Recovery state (a fast retransmit).
// Also every retransmission-timer expiry: ns-3's ReTxTimeout doubles the traced RTO
// (1 s -> 2 s here) before it sets CA_LOSS; a repeated expiry in Loss doubles it again
// without a new state change. An RTT sample never sets it to exactly twice the old value
// in these runs (checked against the Loss entries in validation/ns3/sack_dialogue.py).
struct CongProbe {
    uint64_t loss = 0;
    uint64_t recovery = 0;
    uint64_t expiries = 0;
    uint64_t data_segments = 0;  // data segments sent, retransmissions included
    uint64_t retransmissions = 0;
    using Pkt = ns3::Ptr<const ns3::Packet>;
    using Sock = ns3::Ptr<const ns3::TcpSocketBase>;
    using Addr = ns3::Address;
    void OnTx(Pkt p, const ns3::TcpHeader&, Sock) {
        if (p->GetSize() > 0) { data_segments++; }
    }
    void OnRetx(Pkt, const ns3::TcpHeader&, const Addr&, const Addr&, Sock) { retransmissions++; }
    void OnRto(ns3::Time old, ns3::Time now) {
        if (now.GetTimeStep() == 2 * old.GetTimeStep() ||
            (now >= ns3::Seconds(60) && old < now && now < 2 * old)) { expiries++; }
    }
    void OnState(ns3::TcpSocketState::TcpCongState_t from, ns3::TcpSocketState::TcpCongState_t to) {
        if (to == ns3::TcpSocketState::CA_LOSS && from != ns3::TcpSocketState::CA_LOSS) { loss++; }
        if (to == ns3::TcpSocketState::CA_RECOVERY && from != ns3::TcpSocketState::CA_RECOVERY) {
            recovery++;
        }
    }
};
inline void ConnectCong(const std::string& path, CongProbe* probe) {
    ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&CongProbe::OnState, probe));
}
inline void ConnectRto(const std::string& path, CongProbe* probe) {
    ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&CongProbe::OnRto, probe));
}
inline void ConnectTx(const std::string& tx, const std::string& retx, CongProbe* probe) {
    ns3::Config::ConnectWithoutContext(tx, ns3::MakeCallback(&CongProbe::OnTx, probe));
    ns3::Config::ConnectWithoutContext(retx, ns3::MakeCallback(&CongProbe::OnRetx, probe));
}
// Idle periods at the bottleneck (item 10 point 3): the link's (from the device's PhyTxEnd to
// its next PhyTxBegin) and the RED queue disc's (PacketsInQueue from 0 back above 0). ns-3's
// RedQueueDisc starts an idle period (m_idle) when a dequeue finds the disc empty, which
// happens when the device takes the last packet from its 1-packet queue, one packet time
// before the link goes idle; its average then decays by (1 - QW)^m, m = int(idle / the
// transmission time of MeanPktSize).
struct IdleProbe {
    double threshold = 0;  // one mean-packet time, s
    double tx_end = -1;
    uint64_t link_periods = 0, link_long = 0;
    double link_idle = 0;
    double empty_since = 0;
    uint64_t disc_periods = 0, disc_long = 0;
    double disc_empty = 0;
    void OnTxBegin(ns3::Ptr<const ns3::Packet>) {
        double now = ns3::Simulator::Now().GetSeconds();
        if (tx_end >= 0 && now > tx_end) {
            link_periods++;
            link_idle += now - tx_end;
            if (now - tx_end >= threshold) { link_long++; }
        }
        tx_end = -1;
    }
    void OnTxEnd(ns3::Ptr<const ns3::Packet>) { tx_end = ns3::Simulator::Now().GetSeconds(); }
    void OnDisc(uint32_t before, uint32_t after) {
        double now = ns3::Simulator::Now().GetSeconds();
        if (before > 0 && after == 0) { empty_since = now; }
        if (before == 0 && after > 0 && empty_since >= 0 && now > empty_since) {
            disc_periods++;
            disc_empty += now - empty_since;
            if (now - empty_since >= threshold) { disc_long++; }
        }
    }
};
inline void ConnectIdle(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<ns3::QueueDisc> qd, IdleProbe* p) {
    dev->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&IdleProbe::OnTxBegin, p));
    dev->TraceConnectWithoutContext("PhyTxEnd", ns3::MakeCallback(&IdleProbe::OnTxEnd, p));
    qd->TraceConnectWithoutContext("PacketsInQueue", ns3::MakeCallback(&IdleProbe::OnDisc, p));
}
}
"""

_NS: Any = None


def _import() -> Any:
    global _NS
    if _NS is None:
        saved = os.dup(2)
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            try:
                import cppyy
                from ns import ns

                cppyy.cppdef(PROBES_CPP)
            finally:
                os.dup2(saved, 2)
                os.close(saved)
        _NS = (ns, cppyy)
    return _NS


# ns-3's RED files a full-buffer drop under "Forced drop" too; "overflow" here
# is the internal queue's own drop, which RED's size check makes unreachable.
REASONS_DROP = {
    "early": "Unforced drop",
    "forced": "Forced drop",
    "overflow": "Dropped by internal queue",
}
REASONS_MARK = {"early": "Unforced mark", "forced": "Forced mark"}


def _qstats(qd: Any) -> dict[str, int]:
    st = qd.GetStats()
    out = {f"drops_{k}": int(st.GetNDroppedPackets(v)) for k, v in REASONS_DROP.items()}
    out.update({f"marks_{k}": int(st.GetNMarkedPackets(v)) for k, v in REASONS_MARK.items()})
    out["drops"] = int(st.nTotalDroppedPackets)
    out["marks"] = int(st.nTotalMarkedPackets)
    out["arrivals"] = int(st.nTotalReceivedPackets)
    return out


def _cong(cp: Any) -> tuple[int, ...]:
    return (
        int(cp.loss),
        int(cp.recovery),
        int(cp.expiries),
        int(cp.data_segments),
        int(cp.retransmissions),
    )


def _idle(p: Any) -> dict[str, float]:
    return {
        "link_idle_periods": int(p.link_periods),
        "link_idle_periods_long": int(p.link_long),
        "link_idle_s": float(p.link_idle),
        "disc_empty_periods": int(p.disc_periods),
        "disc_empty_periods_long": int(p.disc_long),
        "disc_empty_s": float(p.disc_empty),
    }


def run(cfg: dict[str, Any]) -> dict[str, Any]:
    n = int(cfg.get("n", 30))
    mode = cfg.get("mode", "red")
    duration = float(cfg.get("duration", 100.0))
    warmup = float(cfg.get("warmup", 20.0))
    seed = int(cfg.get("seed", 1))
    gentle = bool(cfg.get("gentle", False))
    ns1_compat = bool(cfg.get("ns1_compat", False))
    sack = bool(cfg.get("sack", False))
    tcp = {**TCP, **cfg.get("tcp", {})}
    if n % 6 or mode not in ("red", "ecn"):
        raise SystemExit(f"n must be a multiple of 6 and mode red or ecn: {n}, {mode}")
    ecn = mode == "ecn"

    ns, cppyy = _import()
    probes = cppyy.gbl.ecnsim_red_validation
    ns.Config.Reset()
    ns.Ipv4AddressGenerator.Reset()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)

    def sec(x: float) -> Any:
        return ns.TimeValue(ns.NanoSeconds(round(x * 1e9)))

    sd = ns.Config.SetDefault
    cc_tid = {"NewReno": ns.TcpNewReno, "LinuxReno": ns.TcpLinuxReno}[tcp["cc"]].GetTypeId()
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(cc_tid))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(int(tcp["segment_size"])))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(tcp["initial_cwnd"])))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    sd(
        "ns3::TcpSocket::SndBufSize", ns.UintegerValue(131072)
    )  # > the 64-packet window; 2**30 per socket exhausts memory at N = 120
    sd(
        "ns3::TcpSocket::RcvBufSize",
        ns.UintegerValue(int(tcp["max_window"]) * int(tcp["segment_size"])),
    )
    sd("ns3::TcpSocket::ConnTimeout", sec(tcp["initial_rto"]))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    sd("ns3::RttEstimator::InitialEstimation", sec(tcp["initial_rto"]))
    sd("ns3::TcpSocketBase::MinRto", sec(tcp["min_rto"]))
    sd("ns3::TcpSocketBase::ClockGranularity", sec(tcp["clock_granularity"]))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(sack))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if ecn else "Off"))

    router = ns.NodeContainer()
    router.Create(1)
    sink = ns.NodeContainer()
    sink.Create(1)
    senders = ns.NodeContainer()
    senders.Create(n)
    stack = ns.InternetStackHelper()
    for c in (router, sink, senders):
        stack.Install(c)
    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()

    # bottleneck r -> sink: RED disc over a 1-packet device queue, flow control on
    bh = ns.PointToPointHelper()
    bh.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(10_000_000)))
    bh.SetChannelAttribute("Delay", sec(0.005))
    bh.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize("1p")))
    bn = bh.Install(router.Get(0), sink.Get(0))
    # the sink -> r direction (ACKs) gets no disc; its device queue is
    # replaced below by a large one (flow control stays on, harmless)
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc(
        "ns3::RedQueueDisc",
        "MaxSize",
        ns.QueueSizeValue(ns.QueueSize("120p")),
        "MinTh",
        ns.DoubleValue(10.0),
        "MaxTh",
        ns.DoubleValue(30.0),
        "QW",
        ns.DoubleValue(0.002),
        "LInterm",
        ns.DoubleValue(10.0),
        "MeanPktSize",
        ns.UintegerValue(1000),
        "LinkBandwidth",
        ns.DataRateValue(ns.DataRate(10_000_000)),
        "LinkDelay",
        sec(0.005),
        "Wait",
        ns.BooleanValue(True),
        "Gentle",
        ns.BooleanValue(gentle),
        "UseEcn",
        ns.BooleanValue(ecn),
        "UseHardDrop",
        ns.BooleanValue(True),
        "Ns1Compat",
        ns.BooleanValue(ns1_compat),
    )
    qdc = red.Install(bn.Get(0))
    qd = qdc.Get(0)
    qd.AssignStreams(1000 + seed)
    addr.SetBase(ns.Ipv4Address("10.255.0.0"), ns.Ipv4Mask("255.255.255.0"))
    bn_if = addr.Assign(bn)
    sink_addr = bn_if.GetAddress(1)
    sink_dev = bn.Get(1)
    sink_dev.GetObject[ns.PointToPointNetDevice]().GetQueue().SetMaxSize(ns.QueueSize("10000p"))

    access_devs = []
    for i in range(n):
        g = (3 * i) // n
        ah = ns.PointToPointHelper()
        ah.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(round(300e6 / n))))
        ah.SetChannelAttribute("Delay", sec(DELAYS[g]))
        ah.SetQueue(
            "ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize("10000p"))
        )
        ah.DisableFlowControl()
        d = ah.Install(senders.Get(i), router.Get(0))
        addr.SetBase(ns.Ipv4Address(f"10.{1 + i // 250}.{i % 250}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(d)
        access_devs.append(d)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    # remove any default disc (Ipv4AddressHelper may add FqCoDel) except RED
    for devs in [*access_devs, bn]:
        for k in range(devs.GetN()):
            dev = devs.Get(k)
            if dev == bn.Get(0):
                continue
            tc = dev.GetNode().GetObject[ns.TrafficControlLayer]()
            if tc.GetRootQueueDiscOnDevice(dev):
                tch.Uninstall(dev)
    tc_r = router.Get(0).GetObject[ns.TrafficControlLayer]()
    assert (
        tc_r.GetRootQueueDiscOnDevice(bn.Get(0)).GetInstanceTypeId().GetName()
        == "ns3::RedQueueDisc"
    )

    sink_probes = []
    for i in range(n):
        port = 9000 + i
        sh = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        )
        sapp = sh.Install(sink.Get(0)).Get(0)
        sapp.SetStartTime(ns.Seconds(0))
        sp = probes.SinkProbe()
        probes.ConnectSink(sapp, sp)
        sink_probes.append(sp)
        bh2 = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(sink_addr, port).ConvertTo()
        )
        bh2.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bh2.SetAttribute("SendSize", ns.UintegerValue(int(tcp["segment_size"])))
        app = bh2.Install(senders.Get(i)).Get(0)
        # within each group, the first half start at 0 s, the second at 2 s
        within = i % (n // 3)
        start = 0.0 if within < n // 6 else 2.0
        app.SetStartTime(sec(start).Get())

    # Every sender's socket exists once the last application has started (2 s).
    run_for = TimedRun(ns)

    run_for(2.5)
    cong_probes = []
    for i in range(n):
        cp = probes.CongProbe()
        node = senders.Get(i).GetId()
        probes.ConnectCong(f"/NodeList/{node}/$ns3::TcpL4Protocol/SocketList/*/CongState", cp)
        probes.ConnectRto(f"/NodeList/{node}/$ns3::TcpL4Protocol/SocketList/*/RTO", cp)
        probes.ConnectTx(
            f"/NodeList/{node}/$ns3::TcpL4Protocol/SocketList/*/Tx",
            f"/NodeList/{node}/$ns3::TcpL4Protocol/SocketList/*/Retransmission",
            cp,
        )
        cong_probes.append(cp)
    idle = probes.IdleProbe()
    idle.threshold = 1000 * 8 / 10e6  # MeanPktSize 1000 B at LinkBandwidth 10 Mb/s
    probes.ConnectIdle(bn.Get(0), qd, idle)
    run_for(warmup - 2.5)
    rx0 = [int(sp.total) for sp in sink_probes]
    c0 = [_cong(cp) for cp in cong_probes]
    q0 = _qstats(qd)
    i0 = _idle(idle)
    run_for(duration - warmup)
    rx = [int(sp.total) - r for sp, r in zip(sink_probes, rx0, strict=True)]
    cong = [
        tuple(x - y for x, y in zip(_cong(cp), c, strict=True))
        for cp, c in zip(cong_probes, c0, strict=True)
    ]
    q1 = _qstats(qd)
    i1 = _idle(idle)
    hops = packet_hops(ns)
    events = int(ns.Simulator.GetEventCount())
    ns.Simulator.Destroy()
    span = duration - warmup
    return {
        "simulator": "ns-3",
        "n": n,
        "mode": mode,
        "seed": seed,
        "flows": [
            {
                "group": GROUPS[(3 * i) // n],
                "rx_bytes": rx[i],
                "goodput_bps": rx[i] * 8 / span,
                "loss_entries": cong[i][0],
                "recovery_entries": cong[i][1],
                "rto_expiries": cong[i][2],
                "data_segments_sent": cong[i][3],
                "retransmissions": cong[i][4],
            }
            for i in range(n)
        ],
        "bottleneck": {k: q1[k] - q0[k] for k in q1},
        "idle": {k: i1[k] - i0[k] for k in i1},
        "packet_hops": hops,
        "events": events,
        "run_cpu_s": run_for.cpu,
        "config": {
            **cfg,
            "tcp": tcp,
            "gentle": gentle,
            "ns1_compat": ns1_compat,
            "sack": sack,
            "duration": duration,
            "warmup": warmup,
        },
    }


def main(argv: list[str]) -> int:
    text = argv[1] if len(argv) > 1 and argv[1] != "-" else sys.stdin.read()
    cfg = json.loads(text) if text.strip() else {}
    res = [run(c) for c in cfg] if isinstance(cfg, list) else run(cfg)
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
