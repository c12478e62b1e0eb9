#!/usr/bin/env python3
"""ns-3 side of the CoDel / PIE cross-check (``scenarios.py`` describes the scenarios).

Run with the Python of the ns-3 virtual environment (ns-3 3.44), never with ecnsim's::

    "$NS3_PYTHON" ns3_aqm.py '{"id": "u-codel-12", "kind": "udp", "aqm": "codel", "rate": 12e6}'
    "$NS3_PYTHON" ns3_aqm.py '[{...}, {...}]'   # several, one process (importing ns-3 costs ~10 s)

Keys: ``kind`` (``"udp"`` or ``"tcp"``), ``aqm`` (``"codel"`` or ``"pie"``),
``estimator`` (PIE: ``"timestamp"`` or ``"dequeue_rate"``), ``ecn`` (TCP),
``rate`` (UDP: CBR wire bit/s), ``max_burst`` (PIE, s: overrides
scenarios.PIE, for experiment_burst.py), ``seed`` (ns-3's RngRun; TCP also picks the
start pattern ``scenarios.tcp_starts(seed)``).

Placement: the AQM is the root queue disc of r1's bottleneck device, with flow
control on and a 1-packet device ``DropTailQueue`` under it (the smallest ns-3
allows; without flow control the disc would hand every packet straight to the
device and never hold a backlog). The reverse direction gets a
``FifoQueueDisc``; access devices have no queue disc and a 10000-packet device
queue with flow control off.

Output (JSON): ``disc`` (the AQM's counters: arrivals, drops by reason, marks),
``drops`` (every drop: time, ``"early"`` (CoDel target exceeded, PIE unforced) or
``"overflow"``, and the source address's flow index), ``marks`` (the same for
marks), ``bins`` (per 0.5 s: arrivals at the disc, sojourn sum and count at
dequeue), ``sojourn`` (sum and count of the disc's ``SojournTime`` over the
whole run), and for TCP per-flow goodput over [warmup, end].
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ns3"))
import scenarios  # noqa: E402
from ns3_dumbbell import TimedRun  # noqa: E402

BIN = 0.5

PROBES_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"
#include <cstring>
#include <vector>
namespace ecnsim_aqm_validation {
// Everything the AQM does, recorded at the queue disc's own trace sources.
struct DiscProbe {
    double bin = 0.5;
    std::vector<double> arrivals;      // per bin: packets offered to the disc
    std::vector<double> soj_sum, soj_n;  // per bin: SojournTime at dequeue
    double sum = 0, n = 0;
    std::vector<double> ev_t;          // drops and marks
    std::vector<int> ev_kind;          // 0 early drop, 1 overflow drop, 2 mark
    std::vector<uint32_t> ev_src;      // IPv4 source address
    size_t Bin() {
        size_t k = static_cast<size_t>(ns3::Simulator::Now().GetSeconds() / bin);
        if (arrivals.size() <= k) {
            arrivals.resize(k + 1, 0); soj_sum.resize(k + 1, 0); soj_n.resize(k + 1, 0);
        }
        return k;
    }
    static uint32_t Src(ns3::Ptr<const ns3::QueueDiscItem> item) {
        auto ip = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
        return ip ? ip->GetHeader().GetSource().Get() : 0;
    }
    void Event(ns3::Ptr<const ns3::QueueDiscItem> item, int kind) {
        ev_t.push_back(ns3::Simulator::Now().GetSeconds());
        ev_kind.push_back(kind);
        ev_src.push_back(Src(item));
    }
    void OnEnqueue(ns3::Ptr<const ns3::QueueDiscItem>) { arrivals[Bin()] += 1; }
    static bool IsEarly(const char* why) {
        return std::strcmp(why, "Target exceeded drop") == 0 ||
               std::strcmp(why, "Unforced drop") == 0;
    }
    void OnDropBefore(ns3::Ptr<const ns3::QueueDiscItem> item, const char* why) {
        arrivals[Bin()] += 1;  // offered, never enqueued
        Event(item, IsEarly(why) ? 0 : 1);
    }
    void OnDropAfter(ns3::Ptr<const ns3::QueueDiscItem> item, const char* why) {
        Event(item, IsEarly(why) ? 0 : 1);
    }
    void OnMark(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) { Event(item, 2); }
    void OnSojourn(ns3::Time t) {
        size_t k = Bin();
        soj_sum[k] += t.GetSeconds(); soj_n[k] += 1;
        sum += t.GetSeconds(); n += 1;
    }
};
inline void Connect(ns3::Ptr<ns3::QueueDisc> qd, DiscProbe* p) {
    using P = DiscProbe;
    qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&P::OnEnqueue, p));
    qd->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeCallback(&P::OnDropBefore, p));
    qd->TraceConnectWithoutContext("DropAfterDequeue", ns3::MakeCallback(&P::OnDropAfter, p));
    qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&P::OnMark, p));
    qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&P::OnSojourn, p));
}
struct SinkProbe {
    uint64_t total = 0;
    void OnRx(ns3::Ptr<const ns3::Packet> p, const ns3::Address&) { total += p->GetSize(); }
};
inline void ConnectSink(ns3::Ptr<ns3::Application> app, SinkProbe* probe) {
    app->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&SinkProbe::OnRx, probe));
}
}
"""

_NS: Any = None


def _import() -> Any:
    """Import ns-3 once, hiding cppyy's harmless static-initialiser warnings."""
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


def _aqm_attributes(ns: Any, cfg: dict[str, Any], sec: Any) -> tuple[str, list[Any]]:
    """The root disc's type and attributes: every parameter explicit (scenarios.py)."""
    ecn = bool(cfg.get("ecn", False))
    if cfg["aqm"] == "codel":
        c = scenarios.CODEL
        return "ns3::CoDelQueueDisc", [
            "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{c['limit']}p")),
            "Target", sec(c["target"]),
            "Interval", sec(c["interval"]),
            "MinBytes", ns.UintegerValue(c["min_bytes_ip"]),
            "UseEcn", ns.BooleanValue(ecn),
            "UseL4s", ns.BooleanValue(False),
            "CeThreshold", ns.TimeValue(ns.Time.Max()),
        ]  # fmt: skip
    p = scenarios.PIE
    return "ns3::PieQueueDisc", [
        "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{p['limit']}p")),
        "QueueDelayReference", sec(p["target"]),
        "Tupdate", sec(p["t_update"]),
        "Supdate", sec(0.0),
        "A", ns.DoubleValue(p["alpha"]),
        "B", ns.DoubleValue(p["beta"]),
        "MaxBurstAllowance", sec(cfg.get("max_burst", p["max_burst"])),
        "UseDequeueRateEstimator", ns.BooleanValue(cfg.get("estimator") == "dequeue_rate"),
        "DequeueThreshold", ns.UintegerValue(p["dq_threshold"]),
        "UseCapDropAdjustment", ns.BooleanValue(p["cap_drop_adjustment"]),
        "UseDerandomization", ns.BooleanValue(p["derandomize"]),
        "UseEcn", ns.BooleanValue(ecn),
        "MarkEcnThreshold", ns.DoubleValue(p["mark_ecn_threshold"]),
        "ActiveThreshold", ns.TimeValue(ns.Time.Max()),
        "UseL4s", ns.BooleanValue(False),
    ]  # fmt: skip


def run(cfg: dict[str, Any]) -> dict[str, Any]:
    kind, seed = cfg["kind"], int(cfg.get("seed", 1))
    udp = kind == "udp"
    n = 1 if udp else scenarios.TCP_FLOWS
    duration = scenarios.UDP_DURATION if udp else scenarios.TCP_DURATION
    warmup = 0.0 if udp else scenarios.TCP_WARMUP
    ns, cppyy = _import()
    probes = cppyy.gbl.ecnsim_aqm_validation
    ns.Config.Reset()
    ns.Ipv4AddressGenerator.Reset()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)

    def sec(x: float) -> Any:
        return ns.TimeValue(ns.NanoSeconds(round(x * 1e9)))

    sd = ns.Config.SetDefault
    if not udp:  # validation/ns3/ns3_dumbbell.py's TCP, NewReno with classic recovery
        sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
        sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
        sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(scenarios.TCP_SEGMENT))
        sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(3))
        sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
        sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(2**30))
        sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(2**30))
        sd("ns3::TcpSocket::ConnTimeout", sec(1.0))
        sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
        sd("ns3::RttEstimator::InitialEstimation", sec(1.0))
        sd("ns3::TcpSocketBase::MinRto", sec(1.0))
        sd("ns3::TcpSocketBase::ClockGranularity", sec(0.001))
        sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
        sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
        sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
        sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
        sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if cfg.get("ecn") else "Off"))

    routers = ns.NodeContainer()
    routers.Create(2)
    senders = ns.NodeContainer()
    senders.Create(n)
    receivers = ns.NodeContainer()
    receivers.Create(n)
    stack = ns.InternetStackHelper()
    for c in (routers, senders, receivers):
        stack.Install(c)

    def p2p(rate: float, delay: float, limit: int, flow_control: bool) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(round(rate))))
        h.SetChannelAttribute("Delay", sec(delay))
        h.SetQueue(
            "ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{limit}p"))
        )
        if not flow_control:
            h.DisableFlowControl()
        return h

    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()
    bn = p2p(scenarios.BOTTLENECK["rate"], scenarios.BOTTLENECK["delay"], 1, True).Install(
        routers.Get(0), routers.Get(1)
    )
    addr.SetBase(ns.Ipv4Address("10.255.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bn)
    access = p2p(scenarios.ACCESS["rate"], scenarios.ACCESS["delay"], 10000, False)
    src_index: dict[int, int] = {}
    rx_addrs = []
    access_devs = []
    for i in range(n):
        d = access.Install(senders.Get(i), routers.Get(0))
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifc = addr.Assign(d)
        src_index[int(ifc.GetAddress(0).Get())] = i
        d2 = access.Install(routers.Get(1), receivers.Get(i))
        addr.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        rx_addrs.append(addr.Assign(d2).GetAddress(1))
        access_devs += [d, d2]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    for devs in access_devs:  # no queue disc off the bottleneck (check rather than trust)
        for k in range(devs.GetN()):
            dev = devs.Get(k)
            if dev.GetNode().GetObject[ns.TrafficControlLayer]().GetRootQueueDiscOnDevice(dev):
                tch.Uninstall(dev)
    tch.Uninstall(bn)  # Ipv4AddressHelper installed the default FqCoDel on both ends
    name, attrs = _aqm_attributes(ns, cfg, sec)
    aqm_h = ns.TrafficControlHelper()
    aqm_h.SetRootQueueDisc(name, *attrs)
    qd = aqm_h.Install(bn.Get(0)).Get(0)
    if cfg["aqm"] == "pie":  # PIE's coin (CoDel draws no random numbers)
        qd.GetObject[ns.PieQueueDisc]().AssignStreams(1000 + seed)
    fifo = ns.TrafficControlHelper()
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc")
    fifo.Install(bn.Get(1))
    tc = routers.Get(0).GetObject[ns.TrafficControlLayer]()
    assert tc.GetRootQueueDiscOnDevice(bn.Get(0)).GetInstanceTypeId().GetName() == name

    probe = probes.DiscProbe()
    probe.bin = BIN
    probes.Connect(qd, probe)

    sinks = []
    starts = [0.0] if udp else scenarios.tcp_starts(seed)
    for i in range(n):
        port = 9000 + i
        if udp:
            server = ns.UdpServerHelper(port).Install(receivers.Get(i)).Get(0)
            server.SetStartTime(ns.Seconds(0))
            client = ns.UdpClientHelper(rx_addrs[i].ConvertTo(), port)
            client.SetAttribute("MaxPackets", ns.UintegerValue(2**32 - 1))
            # One datagram per (1002 B * 8) / rate: the wire rate, exactly as ecnsim's cbr.
            client.SetAttribute("Interval", sec((scenarios.UDP_PAYLOAD + 30) * 8 / cfg["rate"]))
            client.SetAttribute("PacketSize", ns.UintegerValue(scenarios.UDP_PAYLOAD))
            app = client.Install(senders.Get(i)).Get(0)
            app.SetStartTime(ns.Seconds(0))
            continue
        sh = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        )
        sapp = sh.Install(receivers.Get(i)).Get(0)
        sapp.SetStartTime(ns.Seconds(0))
        sp = probes.SinkProbe()
        probes.ConnectSink(sapp, sp)
        sinks.append(sp)
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(rx_addrs[i], port).ConvertTo()
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(scenarios.TCP_SEGMENT))
        app = bulk.Install(senders.Get(i)).Get(0)
        app.SetStartTime(sec(starts[i]).Get())

    def stats() -> dict[str, int]:
        st = qd.GetStats()
        return {
            "arrivals": int(st.nTotalReceivedPackets),
            "drops": int(st.nTotalDroppedPackets),
            "marks": int(st.nTotalMarkedPackets),
        }

    run_for = TimedRun(ns)
    rx0 = [0] * n
    s0 = {"arrivals": 0, "drops": 0, "marks": 0}
    if warmup > 0:
        run_for(warmup)
        rx0 = [int(sp.total) for sp in sinks]
        s0 = stats()
    run_for(duration - warmup)
    s1 = stats()
    events = [
        (float(t), ("early", "overflow", "mark")[int(k)], src_index.get(int(s), -1))
        for t, k, s in zip(probe.ev_t, probe.ev_kind, probe.ev_src, strict=True)
    ]
    out: dict[str, Any] = {
        "simulator": "ns-3",
        "config": {**cfg, "seed": seed, "duration": duration, "warmup": warmup, "starts": starts},
        "disc": {k: s1[k] - s0[k] for k in s1},
        "drops": [e for e in events if e[1] != "mark"],
        "marks": [e for e in events if e[1] == "mark"],
        "bins": {
            "width": BIN,
            "arrivals": [float(x) for x in probe.arrivals],
            "sojourn_sum": [float(x) for x in probe.soj_sum],
            "sojourn_n": [float(x) for x in probe.soj_n],
        },
        "sojourn": {"sum": float(probe.sum), "n": float(probe.n)},
        "run_cpu_s": run_for.cpu,
    }
    if not udp:
        span = duration - warmup
        out["flows"] = [
            {"rx_bytes": int(sp.total) - r, "goodput_bps": (int(sp.total) - r) * 8 / span}
            for sp, r in zip(sinks, rx0, strict=True)
        ]
    ns.Simulator.Destroy()
    if math.isnan(out["sojourn"]["sum"]):
        raise SystemExit("no sojourn samples")
    return out


def main(argv: list[str]) -> int:
    text = argv[1] if len(argv) > 1 and argv[1] != "-" else sys.stdin.read()
    cfg = json.loads(text)
    res = [run(c) for c in cfg] if isinstance(cfg, list) else run(cfg)
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
