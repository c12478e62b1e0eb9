#!/usr/bin/env python3
"""ns-3 side of the FQ-CoDel, PIE and RED cross-checks (``scenarios.py`` describes them).

Run with the Python of the ns-3 virtual environment (ns-3 3.44), never with ecnsim's::

    "$NS3_PYTHON" ns3_fq_codel.py '{"id": "mixed", "seed": 1}'
    "$NS3_PYTHON" ns3_fq_codel.py '[{"id": "rtt", "seed": 1}, {"id": "rtt", "seed": 2}]'
    "$NS3_PYTHON" ns3_fq_codel.py '{"id": "udp", "seed": 1, "disc": "pie"}'   # or "red", "fq_pie"

Placement and TCP settings as ``validation/ns3_aqm/ns3_aqm.py``: FqCoDelQueueDisc is
the root disc of r1's bottleneck device over a 1-packet device queue (flow control
on); the reverse direction has a FifoQueueDisc; access devices have no disc.

Output (JSON): ``disc`` (arrivals, drops, marks after the warm-up), ``classes``
(flow queues ns-3 created: fewer than the flows means a hash collision),
``per_src`` (per sender: drops and marks after the warm-up, and over the whole run),
``sojourn`` (sum and count of the disc's SojournTime after the warm-up),
``sojourn_hist`` (its histogram: bin index -> count, ``scenarios.SOJOURN_BIN``), ``tcp``
(per-flow goodput over [warmup, end]) and ``udp`` (per-flow packets received over
the whole run).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ns3"))
sys.path.insert(0, os.path.join(HERE, ".."))
import scenarios  # noqa: E402
from common import ns3_pie_attributes  # noqa: E402
from ns3_dumbbell import TimedRun  # noqa: E402

PROBES_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"
#include <map>
#include <vector>
namespace ecnsim_fq_validation {
// Drops and marks per IPv4 source, and the disc's sojourn times.
struct FqProbe {
    std::map<uint32_t, double> drops, marks;
    double sum = 0, n = 0;
    // Sojourn histogram after Arm(): bins of `bin` seconds, the last one open-ended.
    std::vector<double> hist;
    double bin = 1e-4;
    bool armed = false;
    void Arm(double b, uint32_t nbins) { bin = b; hist.assign(nbins, 0.0); armed = true; }
    double Hist(uint32_t i) { return hist[i]; }
    static uint32_t Src(ns3::Ptr<const ns3::QueueDiscItem> item) {
        auto ip = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
        return ip ? ip->GetHeader().GetSource().Get() : 0;
    }
    void OnDrop(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) { drops[Src(item)] += 1; }
    void OnMark(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) { marks[Src(item)] += 1; }
    void OnSojourn(ns3::Time t) {
        sum += t.GetSeconds();
        n += 1;
        if (armed) {
            double i = t.GetSeconds() / bin;
            size_t k = i >= hist.size() - 1 ? hist.size() - 1 : (size_t)i;
            hist[k] += 1;
        }
    }
    double Drops(uint32_t src) { return drops.count(src) ? drops[src] : 0; }
    double Marks(uint32_t src) { return marks.count(src) ? marks[src] : 0; }
};
inline void Connect(ns3::Ptr<ns3::QueueDisc> qd, FqProbe* p) {
    qd->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeCallback(&FqProbe::OnDrop, p));
    qd->TraceConnectWithoutContext("DropAfterDequeue", ns3::MakeCallback(&FqProbe::OnDrop, p));
    qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&FqProbe::OnMark, p));
    qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&FqProbe::OnSojourn, p));
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


def _install_fq_codel(ns: Any, bn: Any) -> Any:
    f = scenarios.FQ
    fq = ns.TrafficControlHelper()
    fq.SetRootQueueDisc(
        "ns3::FqCoDelQueueDisc",
        "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{f['limit']}p")),
        "Flows", ns.UintegerValue(f["flows"]),
        "DropBatchSize", ns.UintegerValue(f["drop_batch"]),
        "Target", ns.StringValue(f"{round(f['target'] * 1e3)}ms"),
        "Interval", ns.StringValue(f"{round(f['interval'] * 1e3)}ms"),
        "UseEcn", ns.BooleanValue(True),
        "CeThreshold", ns.TimeValue(ns.Time.Max()),
        "UseL4s", ns.BooleanValue(False),
        "Perturbation", ns.UintegerValue(0),
        "EnableSetAssociativeHash", ns.BooleanValue(False),
    )  # fmt: skip
    qd = fq.Install(bn.Get(0)).Get(0)
    # ns-3 3.44 has no Quantum attribute (the first run stopped on "Invalid attribute set
    # (Quantum)"): the quantum is set by method before the disc initialises (it would take the
    # device MTU, 1500, when left at 0).
    qd.GetObject[ns.FqCoDelQueueDisc]().SetQuantum(f["quantum_ip"])
    return qd


def _install_fq_pie(ns: Any, bn: Any, sec: Any) -> Any:
    q = scenarios.FQ_PIE
    fq = ns.TrafficControlHelper()
    fq.SetRootQueueDisc(
        "ns3::FqPieQueueDisc",
        "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{q['limit']}p")),
        "Flows", ns.UintegerValue(q["flows"]),
        "DropBatchSize", ns.UintegerValue(q["drop_batch"]),
        *ns3_pie_attributes(ns, q, sec),
        "CeThreshold", ns.TimeValue(ns.Time.Max()),
        "UseL4s", ns.BooleanValue(False),
        "MeanPktSize", ns.UintegerValue(q["mean_pktsize_ip"]),
        "Perturbation", ns.UintegerValue(0),
        "EnableSetAssociativeHash", ns.BooleanValue(False),
    )  # fmt: skip
    qd = fq.Install(bn.Get(0)).Get(0)
    # As FqCoDelQueueDisc in 3.44: no Quantum attribute, set by method before initialisation.
    qd.GetObject[ns.FqPieQueueDisc]().SetQuantum(q["quantum_ip"])
    return qd


def _aqm_attributes(ns: Any, disc: str, sec: Any) -> tuple[str, list[Any]]:
    """PIE or RED: the root disc's type and every attribute (scenarios.PIE / RED)."""
    if disc == "pie":
        p = scenarios.PIE
        return "ns3::PieQueueDisc", [
            "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{p['limit']}p")),
            *ns3_pie_attributes(ns, p, sec),
            "ActiveThreshold", ns.TimeValue(ns.Time.Max()),
            "UseL4s", ns.BooleanValue(False),
        ]  # fmt: skip
    r = scenarios.RED
    b = scenarios.BOTTLENECK
    return "ns3::RedQueueDisc", [
        "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{r['limit']}p")),
        "MinTh", ns.DoubleValue(float(r["min_th"])),
        "MaxTh", ns.DoubleValue(float(r["max_th"])),
        "QW", ns.DoubleValue(r["w_q"]),
        "LInterm", ns.DoubleValue(1.0 / r["max_p"]),
        "MeanPktSize", ns.UintegerValue(r["mean_pktsize_ip"]),
        "LinkBandwidth", ns.DataRateValue(ns.DataRate(round(b["rate"]))),
        "LinkDelay", sec(b["delay"]),
        "Wait", ns.BooleanValue(True),
        "Gentle", ns.BooleanValue(True),
        "UseEcn", ns.BooleanValue(True),
        "UseHardDrop", ns.BooleanValue(True),
    ]  # fmt: skip


def run(cfg: dict[str, Any]) -> dict[str, Any]:
    g = scenarios.GROUPS[cfg["id"]]
    seed = int(cfg.get("seed", 1))
    tcp_delays, udps = g["tcp_delays"], g["udp"]
    n_tcp, n = len(tcp_delays), len(tcp_delays) + len(udps)
    delays = list(tcp_delays) + [u["delay"] for u in udps]
    duration, warmup = g["duration"], g["warmup"]
    ns, cppyy = _import()
    probes = cppyy.gbl.ecnsim_fq_validation
    ns.Config.Reset()
    ns.Ipv4AddressGenerator.Reset()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)

    def sec(x: float) -> Any:
        return ns.TimeValue(ns.NanoSeconds(round(x * 1e9)))

    sd = ns.Config.SetDefault
    # validation/ns3_aqm/ns3_aqm.py's TCP: NewReno with classic recovery, ECN on.
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
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))

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
    srcs: list[int] = []
    rx_addrs = []
    access_devs = []
    for i in range(n):
        d = p2p(scenarios.ACCESS_RATE, delays[i], 10000, False).Install(
            senders.Get(i), routers.Get(0)
        )
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        srcs.append(int(addr.Assign(d).GetAddress(0).Get()))
        d2 = p2p(scenarios.ACCESS_RATE, scenarios.RECEIVER_DELAY, 10000, False).Install(
            routers.Get(1), receivers.Get(i)
        )
        addr.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        rx_addrs.append(addr.Assign(d2).GetAddress(1))
        access_devs += [d, d2]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    for devs in access_devs:  # no queue disc off the bottleneck
        for k in range(devs.GetN()):
            dev = devs.Get(k)
            if dev.GetNode().GetObject[ns.TrafficControlLayer]().GetRootQueueDiscOnDevice(dev):
                tch.Uninstall(dev)
    tch.Uninstall(bn)
    disc = cfg.get("disc", "fq_codel")
    if disc == "fq_codel":
        qd = _install_fq_codel(ns, bn)
    elif disc == "fq_pie":
        qd = _install_fq_pie(ns, bn, sec)
    else:
        name, attrs = _aqm_attributes(ns, disc, sec)
        h = ns.TrafficControlHelper()
        h.SetRootQueueDisc(name, *attrs)
        qd = h.Install(bn.Get(0)).Get(0)
        # the disc's coin, per seed (as validation/ns3_aqm and ns3_red)
        if disc == "pie":
            qd.GetObject[ns.PieQueueDisc]().AssignStreams(1000 + seed)
        else:
            qd.GetObject[ns.RedQueueDisc]().AssignStreams(1000 + seed)
    fifo = ns.TrafficControlHelper()
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc")
    fifo.Install(bn.Get(1))
    probe = probes.FqProbe()
    probes.Connect(qd, probe)

    sinks = []
    udp_servers = []
    st = scenarios.starts(seed, n_tcp)
    for i in range(n):
        port = 9000 + i
        if i >= n_tcp:
            u = udps[i - n_tcp]
            server = ns.UdpServerHelper(port).Install(receivers.Get(i)).Get(0)
            server.SetStartTime(ns.Seconds(0))
            udp_servers.append(server.GetObject[ns.UdpServer]())
            client = ns.UdpClientHelper(rx_addrs[i].ConvertTo(), port)
            client.SetAttribute("MaxPackets", ns.UintegerValue(2**32 - 1))
            # One datagram per (payload + 30 B) * 8 / rate: the wire rate, as ecnsim's cbr.
            client.SetAttribute("Interval", sec((u["payload"] + 30) * 8 / u["rate"]))
            client.SetAttribute("PacketSize", ns.UintegerValue(u["payload"]))
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
        app.SetStartTime(sec(st[i]).Get())

    def stats() -> dict[str, float]:
        s = qd.GetStats()
        return {
            "arrivals": int(s.nTotalReceivedPackets),
            "drops": int(s.nTotalDroppedPackets),
            "marks": int(s.nTotalMarkedPackets),
            "soj_sum": float(probe.sum),
            "soj_n": float(probe.n),
        }

    def per_src() -> list[tuple[float, float]]:
        return [(float(probe.Drops(s)), float(probe.Marks(s))) for s in srcs]

    run_for = TimedRun(ns)
    run_for(warmup)
    probe.Arm(scenarios.SOJOURN_BIN, scenarios.SOJOURN_BINS)
    rx0 = [int(sp.total) for sp in sinks]
    s0, p0 = stats(), per_src()
    run_for(duration - warmup)
    s1, p1 = stats(), per_src()
    span = duration - warmup
    out: dict[str, Any] = {
        "simulator": "ns-3",
        "config": {**cfg, "seed": seed, "disc": disc, "starts": st},
        "disc": {k: s1[k] - s0[k] for k in ("arrivals", "drops", "marks")},
        "classes": int(qd.GetNQueueDiscClasses()),
        "per_src": [
            {"drops": b[0] - a[0], "marks": b[1] - a[1], "drops_all": b[0], "marks_all": b[1]}
            for a, b in zip(p0, p1, strict=True)
        ],
        "sojourn": {"sum": s1["soj_sum"] - s0["soj_sum"], "n": s1["soj_n"] - s0["soj_n"]},
        "sojourn_hist": {
            str(i): float(probe.Hist(i)) for i in range(scenarios.SOJOURN_BINS) if probe.Hist(i) > 0
        },
        "tcp": [
            {"goodput_bps": (int(sp.total) - r) * 8 / span}
            for sp, r in zip(sinks, rx0, strict=True)
        ],
        "udp": [{"received": int(s.GetReceived())} for s in udp_servers],
        "run_cpu_s": run_for.cpu,
    }
    ns.Simulator.Destroy()
    return out


def main(argv: list[str]) -> int:
    text = argv[1] if len(argv) > 1 and argv[1] != "-" else sys.stdin.read()
    cfg = json.loads(text)
    res = [run(c) for c in cfg] if isinstance(cfg, list) else run(cfg)
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
