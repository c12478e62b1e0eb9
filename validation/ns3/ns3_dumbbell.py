#!/usr/bin/env python3
"""Run one TCP-over-DropTail dumbbell in ns-3 and print the results as JSON.

Run with the Python of the ns-3 virtual environment (``pip install ns3``,
version 3.44.x), never with ecnsim's::

    "$NS3_PYTHON" ns3_dumbbell.py '{"n_flows": 1, "duration": 5}'
    echo '{"n_flows": 2, ...}' | "$NS3_PYTHON" ns3_dumbbell.py -

The JSON description (every key optional; times in seconds, rates in bit/s,
sizes in bytes):

=====================  =========================================================
``n_flows``            number of sender/receiver pairs (default 1)
``bottleneck_rate``    bit/s of the r1 - r2 link (default 10e6)
``bottleneck_delay``   one-way seconds of the r1 - r2 link (default 0.010)
``access_rate``        bit/s of every host - router link (default 1e9)
``access_delay``       one-way seconds of every host - router link (default 0.001)
``queue_packets``      DropTail limit, in packets, of both bottleneck directions
                       (default 100)
``access_queue_packets`` DropTail limit of the access links (default 10000)
``duration``           simulated seconds (default 10)
``warmup``             goodput and drops are counted over [warmup, duration]
``max_bytes``          bytes each flow sends (one value or one per flow);
                       null or 0 = unlimited
``start``              start time(s) of the flows (one value or one per flow)
``ns3_defaults``       {"ns3::Class::Attribute": "value"} applied last with
                       Config::SetDefault (for experiments only)
``trace``              if true, each flow's result carries ``trace``: a list
                       of (time, "cwnd" | "ssthresh" | "state" | "rto", value)
                       changes; with "packets", also ("tx", sequence number)
                       per data segment sent and ("ack", ack number) per ACK
                       received (for debugging; large for long runs)
``queue``              null (DropTail of ``queue_packets``) or {"type": "red",
                       ``limit``, ``min_th``, ``max_th``, ``w_q``, ``max_p``,
                       ``ecn``, ``gentle``, ``wait``, ``mean_pktsize``}: a
                       RedQueueDisc on r1 -> r2 (see QUEUE_DEFAULTS, README.md)
``sample_interval``    if set, each flow carries ``cwnd_series``: the last cwnd
                       (bytes) at each k * interval from 0; and the output's
                       ``queue_series`` holds the packets waiting on r1 -> r2
                       (disc and device queue) at each k * interval
``drops``              1-based indices of the data packets (> 100 bytes) that
                       r2 drops on arrival over the bottleneck (scripted
                       losses; default none)
``tcp``                ``ecn`` (false; true = UseEcn "On" on both ends),
                       ``segment_size`` (1460), ``initial_cwnd`` (segments, 3),
                       ``initial_rto`` (1.0), ``min_rto`` (1.0),
                       ``clock_granularity`` (0.001), ``rcv_window`` (bytes,
                       2**30), ``snd_buf`` (bytes, 2**30), ``recovery``
                       ("classic" or "prr", default "classic"), ``cc``
                       ("NewReno", "LinuxReno", "Cubic", "Dctcp", "Bbr"; default
                       "NewReno"; "Dctcp" needs ``ecn``: ns-3 then runs
                       its DctcpEcn mode),
                       ``limited_transmit`` (false), ``data_retries`` (1000),
                       ``sack`` (false)
=====================  =========================================================

Model choices (see README.md for the reasons):

* Every link is a PointToPoint link with flow control disabled and no queue
  disc on any device, so the only queue is each device's ``DropTailQueue``
  of ``queue_packets`` packets. As in ecnsim, the limit counts packets
  waiting; the one being serialised has left the queue. Drops are the
  device queue's ``GetTotalDroppedPackets``.
* TCP: the congestion control ``ns3::TcpNewReno`` (or ``TcpLinuxReno``)
  with ``ns3::TcpClassicRecovery`` (ns-3.44's default is PRR), no SACK, no
  timestamps, window scaling on, no delayed ACKs (``DelAckCount`` 1), no
  limited transmit, ``ConnTimeout`` = the initial RTO (SYN retransmission),
  ``RttEstimator::InitialEstimation`` = the initial RTO.

Output (one JSON object on stdout): ``flows`` (per-flow ``rx_bytes`` over
[warmup, end], ``goodput_bps``, ``first_rx_s`` (time from the flow's start to
the first payload byte at the sink), ``completion_time_s`` (from the flow's
start to the last byte of a finite transfer at the sink, or null),
``data_segments_sent``, ``retransmissions``, ``fast_recoveries`` (entries
into CA_RECOVERY) and ``timeouts`` (entries into CA_LOSS), all over [warmup,
end]), ``bottleneck`` (``drops``, ``arrivals`` over [warmup, end],
``drops_total``), ``packet_hops`` and ``events`` of the whole run,
``run_cpu_s`` (CPU seconds inside ``Simulator::Run``: the simulation alone),
and the ``config`` used. A JSON list of descriptions runs them one after the
other in this process and prints a list of results.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from typing import Any

DEFAULTS: dict[str, Any] = {
    "n_flows": 1,
    "bottleneck_rate": 10e6,
    "bottleneck_delay": 0.010,
    "access_rate": 1e9,
    "access_delay": 0.001,
    "queue_packets": 100,
    "access_queue_packets": 10000,
    "duration": 10.0,
    "warmup": 0.0,
    "max_bytes": None,
    "start": 0.0,
    "trace": False,
    "ns3_defaults": {},
    "queue": None,
    "sample_interval": None,
    "drops": [],
}
QUEUE_DEFAULTS: dict[str, Any] = {
    "type": "droptail",  # or "red"
    "limit": 100,  # RED: RedQueueDisc MaxSize, packets
    "min_th": 5.0,
    "max_th": 15.0,
    "w_q": 0.002,
    "max_p": 0.1,  # LInterm = 1 / max_p
    "ecn": False,  # UseEcn
    "hard_drop": True,  # UseHardDrop: forced decisions (avg >= max_th) drop; false: they mark
    "gentle": False,
    "wait": True,
    "mean_pktsize": 1500,
}
TCP_DEFAULTS: dict[str, Any] = {
    "segment_size": 1460,
    "initial_cwnd": 3,
    "initial_rto": 1.0,
    "min_rto": 1.0,
    "clock_granularity": 0.001,
    "rcv_window": 2**30,
    "snd_buf": 2**30,
    "recovery": "classic",
    "cc": "NewReno",
    "limited_transmit": False,
    "data_retries": 1000,
    "ecn": False,
    "sack": False,
}

# C++ probes attached to ns-3 trace sources. Python callables cannot be
# passed where ns-3 expects an ns3::Callback, so the per-packet hooks are
# tiny C++ structs compiled by cppyy; Python only reads their counters.
PROBES_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include <vector>

namespace ecnsim_validation {

struct SinkProbe {
    uint64_t total = 0;
    uint64_t target = 0;   // 0: unlimited transfer
    double first_rx = -1;  // absolute simulated seconds
    double done = -1;
    void OnRx(ns3::Ptr<const ns3::Packet> p, const ns3::Address&) {
        double now = ns3::Simulator::Now().GetSeconds();
        if (total == 0 && p->GetSize() > 0) { first_rx = now; }
        total += p->GetSize();
        if (target > 0 && done < 0 && total >= target) { done = now; }
    }
};

// Drops the n-th data packets (1-based; a packet of more than 100 bytes,
// i.e. with payload) that reach r2 over the bottleneck: the scripted losses
// of the dialogues (validation/ns3/sack_dialogue.py). ecnsim's `script` queue
// counts data packets the same way.
class NthDataDrop : public ns3::ErrorModel {
  public:
    std::vector<uint64_t> nth;
    uint64_t seen = 0;
  private:
    bool DoCorrupt(ns3::Ptr<ns3::Packet> p) override {
        if (p->GetSize() <= 100) { return false; }
        seen++;
        for (uint64_t k : nth) { if (k == seen) { return true; } }
        return false;
    }
    void DoReset() override {}
};

inline ns3::Ptr<NthDataDrop> MakeNthDataDrop() { return ns3::CreateObject<NthDataDrop>(); }

struct SenderProbe {
    uint64_t data_segments = 0;
    uint64_t retransmissions = 0;
    uint64_t recoveries = 0;
    uint64_t losses = 0;
    uint64_t cwr = 0;  // entries into CA_CWR (ECN-Echo reductions)
    bool connected = false;
    bool record_cwnd = false;  // keep every cwnd change (for fixed-interval sampling)
    std::vector<double> cw_t;
    std::vector<double> cw_v;
    bool record = false;  // keep a log of cwnd, ssthresh and state changes
    std::vector<double> log_t;
    std::vector<int> log_kind;  // 0 cwnd, 1 ssthresh, 2 cong state, 3 rto, 4 tx seq, 5 rx ack
    std::vector<double> log_v;
    void Log(int kind, double v) {
        if (!record) { return; }
        log_t.push_back(ns3::Simulator::Now().GetSeconds());
        log_kind.push_back(kind);
        log_v.push_back(v);
    }
    void OnCwnd(uint32_t, uint32_t v) {
        Log(0, v);
        if (record_cwnd) {
            cw_t.push_back(ns3::Simulator::Now().GetSeconds());
            cw_v.push_back(v);
        }
    }
    void OnSsth(uint32_t, uint32_t v) { Log(1, v); }
    void OnRto(ns3::Time, ns3::Time v) { Log(3, v.GetSeconds()); }
    bool record_packets = false;  // also log every data segment sent and ACK received
    using Pkt = ns3::Ptr<const ns3::Packet>;
    using Sock = ns3::Ptr<const ns3::TcpSocketBase>;
    using CongState = ns3::TcpSocketState::TcpCongState_t;
    void OnTx(Pkt p, const ns3::TcpHeader& h, Sock) {
        if (p->GetSize() > 0) {
            data_segments++;
            if (record_packets) { Log(4, h.GetSequenceNumber().GetValue()); }
        }
    }
    void OnRx(Pkt, const ns3::TcpHeader& h, Sock) {
        if (record_packets) { Log(5, h.GetAckNumber().GetValue()); }
    }
    void OnRetx(Pkt, const ns3::TcpHeader&, const ns3::Address&, const ns3::Address&, Sock) {
        retransmissions++;
    }
    void OnCongState(CongState, CongState now) {
        if (now == ns3::TcpSocketState::CA_RECOVERY) { recoveries++; }
        if (now == ns3::TcpSocketState::CA_LOSS) { losses++; }
        if (now == ns3::TcpSocketState::CA_CWR) { cwr++; }
        Log(2, now);
    }
};

inline void ConnectSink(ns3::Ptr<ns3::Application> app, SinkProbe* probe) {
    app->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&SinkProbe::OnRx, probe));
}

// BulkSendApplication creates its socket in StartApplication, so the sender
// traces are connected just after the application starts.
inline void ConnectSenderNow(ns3::Ptr<ns3::Application> app, SenderProbe* probe) {
    ns3::Ptr<ns3::BulkSendApplication> bulk = ns3::DynamicCast<ns3::BulkSendApplication>(app);
    ns3::Ptr<ns3::Socket> sock = bulk->GetSocket();
    if (!sock) { return; }
    using P = SenderProbe;
    sock->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&P::OnTx, probe));
    sock->TraceConnectWithoutContext("Retransmission", ns3::MakeCallback(&P::OnRetx, probe));
    sock->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&P::OnCongState, probe));
    if (probe->record_packets) {
        sock->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&P::OnRx, probe));
    }
    if (probe->record || probe->record_cwnd) {
        sock->TraceConnectWithoutContext("CongestionWindow", ns3::MakeCallback(&P::OnCwnd, probe));
    }
    if (probe->record) {
        sock->TraceConnectWithoutContext("SlowStartThreshold",
                                         ns3::MakeCallback(&P::OnSsth, probe));
        sock->TraceConnectWithoutContext("RTO", ns3::MakeCallback(&P::OnRto, probe));
    }
    probe->connected = true;
}

inline void ConnectSenderAt(double t, ns3::Ptr<ns3::Application> app, SenderProbe* probe) {
    ns3::Simulator::Schedule(ns3::Seconds(t), &ConnectSenderNow, app, probe);
}

// Packets waiting on the bottleneck (the queue disc, if any, plus the device
// queue) at k * dt, k = 0, 1, ...
struct QueueSampler {
    ns3::Ptr<ns3::QueueDisc> disc;
    ns3::Ptr<ns3::Queue<ns3::Packet>> dev;
    double dt = 0;
    std::vector<uint32_t> n;
    void Sample() {
        uint32_t k = dev->GetNPackets();
        if (disc) { k += disc->GetNPackets(); }
        n.push_back(k);
        ns3::Simulator::Schedule(ns3::Seconds(dt), &QueueSampler::Sample, this);
    }
};

inline void StartQueueSampler(QueueSampler* s) {
    ns3::Simulator::ScheduleNow(&QueueSampler::Sample, s);
}

}  // namespace ecnsim_validation
"""


def _per_flow(value: Any, n: int, name: str) -> list[Any]:
    if isinstance(value, list):
        if len(value) != n:
            raise SystemExit(f"{name} has {len(value)} entries for {n} flows")
        return value
    return [value] * n


_NS: Any = None


def _quiet_import() -> Any:
    """Import ns-3 once, hiding cppyy's static-initialiser warnings on stderr."""
    global _NS
    if _NS is not None:
        return _NS
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


def run(cfg_in: dict[str, Any]) -> dict[str, Any]:
    unknown = set(cfg_in) - set(DEFAULTS) - {"tcp", "name"}
    if unknown:
        raise SystemExit(f"unknown keys: {sorted(unknown)}")
    cfg = {**DEFAULTS, **{k: v for k, v in cfg_in.items() if k != "tcp"}}
    tcp = {**TCP_DEFAULTS, **cfg_in.get("tcp", {})}
    unknown = set(tcp) - set(TCP_DEFAULTS)
    if unknown:
        raise SystemExit(f"unknown tcp keys: {sorted(unknown)}")
    n = int(cfg["n_flows"])
    starts = [float(s) for s in _per_flow(cfg["start"], n, "start")]
    max_bytes = [int(b or 0) for b in _per_flow(cfg["max_bytes"], n, "max_bytes")]
    duration = float(cfg["duration"])
    warmup = float(cfg["warmup"])
    q = {**QUEUE_DEFAULTS, **(cfg["queue"] or {})}
    unknown = set(q) - set(QUEUE_DEFAULTS)
    if unknown:
        raise SystemExit(f"unknown queue keys: {sorted(unknown)}")
    red = q["type"] == "red"
    if q["type"] not in ("droptail", "red"):
        raise SystemExit(f"unknown queue type {q['type']!r}")

    ns, cppyy = _quiet_import()
    probes = cppyy.gbl.ecnsim_validation
    # Several runs may share one process: start each from ns-3's pristine
    # defaults and a fresh address allocator.
    ns.Config.Reset()
    ns.Ipv4AddressGenerator.Reset()

    def sec(x: float) -> Any:
        return ns.TimeValue(ns.NanoSeconds(round(x * 1e9)))

    # --- TCP defaults (every socket is created after these) -------------------
    cc_tid = {
        "NewReno": ns.TcpNewReno,
        "LinuxReno": ns.TcpLinuxReno,
        "Cubic": ns.TcpCubic,
        "Dctcp": ns.TcpDctcp,
        "Bbr": ns.TcpBbr,
    }[tcp["cc"]].GetTypeId()
    rec_tid = {"classic": ns.TcpClassicRecovery, "prr": ns.TcpPrrRecovery}[
        tcp["recovery"]
    ].GetTypeId()
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(cc_tid))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(rec_tid))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(int(tcp["segment_size"])))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(tcp["initial_cwnd"])))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(int(tcp["snd_buf"])))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(int(tcp["rcv_window"])))
    sd("ns3::TcpSocket::ConnTimeout", sec(tcp["initial_rto"]))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(int(tcp["data_retries"])))
    sd("ns3::RttEstimator::InitialEstimation", sec(tcp["initial_rto"]))
    sd("ns3::TcpSocketBase::MinRto", sec(tcp["min_rto"]))
    sd("ns3::TcpSocketBase::ClockGranularity", sec(tcp["clock_granularity"]))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(tcp["sack"])))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(bool(tcp["limited_transmit"])))
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if tcp["ecn"] else "Off"))
    if red:
        sd("ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{int(q['limit'])}p")))
        sd("ns3::RedQueueDisc::MinTh", ns.DoubleValue(float(q["min_th"])))
        sd("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(float(q["max_th"])))
        sd("ns3::RedQueueDisc::QW", ns.DoubleValue(float(q["w_q"])))
        sd("ns3::RedQueueDisc::LInterm", ns.DoubleValue(1.0 / float(q["max_p"])))
        sd("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(bool(q["ecn"])))
        sd("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(bool(q["hard_drop"])))
        sd("ns3::RedQueueDisc::Gentle", ns.BooleanValue(bool(q["gentle"])))
        sd("ns3::RedQueueDisc::Wait", ns.BooleanValue(bool(q["wait"])))
        sd("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(int(q["mean_pktsize"])))
        sd(
            "ns3::RedQueueDisc::LinkBandwidth",
            ns.DataRateValue(ns.DataRate(round(cfg["bottleneck_rate"]))),
        )
        sd("ns3::RedQueueDisc::LinkDelay", sec(cfg["bottleneck_delay"]))
    for name, value in cfg["ns3_defaults"].items():  # raw overrides, for experiments
        sd(name, ns.StringValue(str(value)))

    # --- topology: s_i - r1 == r2 - c_i ----------------------------------------
    routers = ns.NodeContainer()
    routers.Create(2)
    senders = ns.NodeContainer()
    senders.Create(n)
    receivers = ns.NodeContainer()
    receivers.Create(n)
    stack = ns.InternetStackHelper()
    stack.Install(routers)
    stack.Install(senders)
    stack.Install(receivers)

    def p2p(rate: float, delay: float, limit: int, flow_control: bool = False) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(round(rate))))
        h.SetChannelAttribute("Delay", sec(delay))
        h.SetQueue(
            "ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{limit}p"))
        )
        # No NetDeviceQueueInterface: the device never stops the traffic-control
        # layer, so no queue disc is installed and overflow drops happen (and are
        # counted) in the device's own DropTailQueue.
        if not flow_control:
            h.DisableFlowControl()
        return h

    # RED: the RedQueueDisc must hold the backlog, so the bottleneck keeps flow
    # control and a device queue of 1 packet (the smallest); the queue disc
    # only hands a packet down when that slot is free. One packet therefore
    # waits in the device queue, outside RED's count (see README.md).
    bottleneck = p2p(
        cfg["bottleneck_rate"],
        cfg["bottleneck_delay"],
        1 if red else int(cfg["queue_packets"]),
        flow_control=red,
    )
    access = p2p(cfg["access_rate"], cfg["access_delay"], int(cfg["access_queue_packets"]))

    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()
    all_devices = []

    def connect(helper: Any, a: Any, b: Any, subnet: str) -> Any:
        devs = helper.Install(a, b)
        addr.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
        ifaces = addr.Assign(devs)
        all_devices.append(devs)
        return devs, ifaces

    bn_devs, _ = connect(bottleneck, routers.Get(0), routers.Get(1), "10.255.0.0")
    drop_model = None
    if cfg["drops"]:
        drop_model = probes.MakeNthDataDrop()
        for k in cfg["drops"]:
            drop_model.nth.push_back(int(k))
        bn_devs.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(drop_model))
    rx_addrs = []
    for i in range(n):
        connect(access, senders.Get(i), routers.Get(0), f"10.{1 + i // 250}.{i % 250}.0")
        _, ifc = connect(
            access, routers.Get(1), receivers.Get(i), f"10.{101 + i // 250}.{i % 250}.0"
        )
        rx_addrs.append(ifc.GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # Make sure no queue disc is left anywhere (Ipv4AddressHelper installs its
    # default FqCoDel only on devices with flow control; check rather than trust).
    removed_qdiscs = 0
    for devs in all_devices[1:] if red else all_devices:
        for k in range(devs.GetN()):
            dev = devs.Get(k)
            tc = dev.GetNode().GetObject[ns.TrafficControlLayer]()
            if tc.GetRootQueueDiscOnDevice(dev):
                tch.Uninstall(dev)
                removed_qdiscs += 1

    red_qdisc = None
    if red:
        # Replace the default FqCoDel on both bottleneck devices: RED on r1 -> r2,
        # a large FIFO on the ACK direction (never near full).
        tch.Uninstall(bn_devs)
        tch_red = ns.TrafficControlHelper()
        tch_red.SetRootQueueDisc("ns3::RedQueueDisc")
        red_qdisc = tch_red.Install(bn_devs.Get(0)).Get(0)
        tch_fifo = ns.TrafficControlHelper()
        tch_fifo.SetRootQueueDisc("ns3::FifoQueueDisc")
        tch_fifo.Install(bn_devs.Get(1))

    def qstats() -> dict[str, int]:
        if red_qdisc is None:
            d = int(bn_queue.GetTotalDroppedPackets())
            return {"drops": d, "arrivals": int(bn_queue.GetTotalReceivedPackets()) + d, "marks": 0}
        st = red_qdisc.GetStats()
        return {
            "drops": int(st.nTotalDroppedPackets) + int(bn_queue.GetTotalDroppedPackets()),
            "arrivals": int(st.nTotalReceivedPackets),
            "marks": int(st.nTotalMarkedPackets),
        }

    bn_queue = bn_devs.Get(0).GetObject[ns.PointToPointNetDevice]().GetQueue()
    bn_queue_back = bn_devs.Get(1).GetObject[ns.PointToPointNetDevice]().GetQueue()
    sampler = None
    if cfg["sample_interval"]:
        sampler = probes.QueueSampler()
        sampler.dev = bn_queue
        if red_qdisc is not None:
            sampler.disc = red_qdisc
        sampler.dt = float(cfg["sample_interval"])
        probes.StartQueueSampler(sampler)

    # --- applications ------------------------------------------------------------
    port = 9000
    sink_probes = []
    sender_probes = []
    sink_apps = []
    for i in range(n):
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        )
        sink_app = sink_helper.Install(receivers.Get(i)).Get(0)
        sink_app.SetStartTime(ns.Seconds(0))
        sp = probes.SinkProbe()
        sp.target = max_bytes[i]
        probes.ConnectSink(sink_app, sp)
        sink_probes.append(sp)
        sink_apps.append(sink_app)

        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(rx_addrs[i], port).ConvertTo()
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(max_bytes[i]))
        bulk.SetAttribute("SendSize", ns.UintegerValue(int(tcp["segment_size"])))
        app = bulk.Install(senders.Get(i)).Get(0)
        app.SetStartTime(sec(starts[i]).Get())
        snd = probes.SenderProbe()
        snd.record = bool(cfg["trace"])
        snd.record_packets = cfg["trace"] == "packets"
        snd.record_cwnd = bool(cfg["sample_interval"])
        # One nanosecond after StartApplication created the socket and sent the SYN.
        probes.ConnectSenderAt(starts[i] + 1e-9, app, snd)
        sender_probes.append(snd)

    # --- run: to the warm-up, snapshot, to the end --------------------------------
    rx_at_warmup = [0] * n
    snd_at_warmup = [dict.fromkeys(_sender_counts(snd), 0) for snd in sender_probes]
    drops_at_warmup = arrivals_at_warmup = marks_at_warmup = 0
    run_for = TimedRun(ns)

    if warmup > 0:
        run_for(warmup)
        rx_at_warmup = [int(sp.total) for sp in sink_probes]
        snd_at_warmup = [_sender_counts(snd) for snd in sender_probes]
        qs = qstats()
        drops_at_warmup, arrivals_at_warmup, marks_at_warmup = (
            qs["drops"],
            qs["arrivals"],
            qs["marks"],
        )
    run_for(duration - warmup)
    end = ns.Simulator.Now().GetSeconds()

    flows = []
    for i in range(n):
        sp, snd = sink_probes[i], sender_probes[i]
        rx = int(sp.total) - rx_at_warmup[i]
        counts = {k: v - snd_at_warmup[i][k] for k, v in _sender_counts(snd).items()}
        interval = duration - max(warmup, starts[i])
        flows.append(
            {
                "flow": f"flow{i}",
                "start_s": starts[i],
                "rx_bytes": rx,
                "rx_bytes_total": int(sp.total),
                "goodput_bps": rx * 8 / interval if interval > 0 else math.nan,
                "first_rx_s": (sp.first_rx - starts[i]) if sp.first_rx >= 0 else None,
                "completion_time_s": (sp.done - starts[i]) if sp.done >= 0 else None,
                **counts,
                "probe_connected": bool(snd.connected),
            }
        )
        if cfg["sample_interval"]:
            # The last cwnd value at each k * dt (k = 0, 1, ...), like ecnsim's
            # flow_series; 0 before the connection exists.
            dt = float(cfg["sample_interval"])
            ts, vs = list(snd.cw_t), list(snd.cw_v)
            series, j, cur = [], 0, 0.0
            for k in range(int(duration / dt + 1e-9) + 1):
                t = k * dt
                while j < len(ts) and ts[j] <= t + 1e-12:
                    cur = vs[j]
                    j += 1
                series.append(cur)
            flows[-1]["cwnd_series"] = series
        if cfg["trace"]:
            kinds = ("cwnd", "ssthresh", "state", "rto", "tx", "ack")
            flows[-1]["trace"] = [
                (float(t), kinds[int(k)], float(v))
                for t, k, v in zip(snd.log_t, snd.log_kind, snd.log_v, strict=True)
            ]
    qs = qstats()
    drops_total, arrivals_total = qs["drops"], qs["arrivals"]
    out = {
        "simulator": "ns-3",
        "ns3_version": _ns3_version(),
        "end_s": end,
        "flows": flows,
        "bottleneck": {
            "drops": drops_total - drops_at_warmup,
            "arrivals": arrivals_total - arrivals_at_warmup,
            "drops_total": drops_total,
            "marks": qs["marks"] - marks_at_warmup,
            "device_queue_drops_total": int(bn_queue.GetTotalDroppedPackets()),
            "reverse_drops_total": int(bn_queue_back.GetTotalDroppedPackets()),
        },
        "removed_qdiscs": removed_qdiscs,
        "queue_series": (
            [int(x) for x in sampler.n][: int(duration / float(cfg["sample_interval"]) + 1e-9) + 1]
            if sampler is not None
            else None
        ),
        "packet_hops": packet_hops(ns),
        "events": int(ns.Simulator.GetEventCount()),
        "run_cpu_s": run_for.cpu,
        "config": {**cfg, "tcp": tcp, "queue": q},
    }
    ns.Simulator.Destroy()
    return out


class TimedRun:
    """Runs the simulator ``span`` more simulated seconds per call and adds the CPU seconds
    spent inside ``Simulator::Run`` (the simulation alone) to ``cpu``."""

    def __init__(self, ns: Any) -> None:
        self.ns = ns
        self.cpu = 0.0

    def __call__(self, span: float) -> None:
        ns = self.ns
        ns.Simulator.Stop(ns.NanoSeconds(round(span * 1e9)))
        t0 = time.process_time()
        ns.Simulator.Run()
        self.cpu += time.process_time() - t0


def packet_hops(ns: Any) -> int:
    """Packets whose transmission started on a point-to-point device, over the whole run.

    Every packet a PointToPointNetDevice sends passes through its device queue: the
    queue's successful enqueues minus what it still holds (bench/ns3/cpp/scenarios.cc
    counts the same way).
    """
    hops = 0
    for i in range(ns.NodeList.GetNNodes()):
        node = ns.NodeList.GetNode(i)
        for d in range(node.GetNDevices()):
            dev = node.GetDevice(d).GetObject[ns.PointToPointNetDevice]()
            if dev:
                q = dev.GetQueue()
                hops += int(q.GetTotalReceivedPackets()) - int(q.GetNPackets())
    return hops


def _sender_counts(snd: Any) -> dict[str, int]:
    return {
        "data_segments_sent": int(snd.data_segments),
        "retransmissions": int(snd.retransmissions),
        "fast_recoveries": int(snd.recoveries),
        "timeouts": int(snd.losses),
        "ecn_reductions": int(snd.cwr),
    }


def _ns3_version() -> str:
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        return version("ns3")
    return "unknown"


def main(argv: list[str]) -> int:
    if len(argv) > 1 and argv[1] != "-":
        text = argv[1]
        if os.path.isfile(text):
            with open(text, encoding="utf-8") as f:
                text = f.read()
    else:
        text = sys.stdin.read()
    cfg = json.loads(text) if text.strip() else {}
    # A list of descriptions runs them one after the other in this process
    # (importing ns-3 costs ~10 s) and prints a list of results.
    result: Any = [run(c) for c in cfg] if isinstance(cfg, list) else run(cfg)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
