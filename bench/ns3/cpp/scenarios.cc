// The side-by-side scenarios of bench/ns3/ as a C++ program for a release (optimized) build
// of ns-3, so that ecnsim can be timed against ns-3 without the PyPI wheel's debug build and
// Python bindings. Written from the settings of the two Python scripts the wheel runs:
//
//   --scenario=hetero    validation/ns3_red/ns3_hetero.py (STUDIES.md section 3, RED mode)
//   --scenario=dumbbell  validation/ns3/ns3_dumbbell.py with bench/ns3/side_by_side.py's
//                        dumbbell_cfg() (RED+ECN on a 100 Mb/s, 40 ms bottleneck)
//
// Every setting the scripts make is made here, the same way (none of the defaults they rely on
// differs between ns-3.37, this program's target, and ns-3.44, the wheel; bench/ns3/README.md
// lists the defaults and the API that do differ). The probes are the scripts' too (same trace
// sources), so both builds do the same work per packet. ns-3.37 needs the one-character fix of
// TcpTxBuffer::NextSeg that README.md gives, or the hetero scenario crashes.
//
// Output: one JSON object on stdout with the per-flow bytes received over [warmup, duration],
// the bottleneck queue disc's and the senders' counters over that interval, the packet-hops of
// the whole run (packets whose transmission started on a point-to-point device: the device
// queues' successful enqueues minus what they still hold), the events run, and the CPU time
// (this process, user + system) of the Simulator::Run calls alone and of the whole process.
//
// Build (bench/ns3/side_by_side.py --ns3-release DIR does this, and records the line):
//   g++ -std=gnu++17 -O3 -DNDEBUG -march=native -mtune=native -DNS3_BUILD_PROFILE_OPTIMIZED
//       -DECNSIM_NS3_VERSION='"3.37"' -I DIR/build/include scenarios.cc -o scenarios
//       -L DIR/build/lib -Wl,-rpath,DIR/build/lib -Wl,--no-as-needed -lns3.37-<module>-optimized ...

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#ifndef ECNSIM_NS3_VERSION
#define ECNSIM_NS3_VERSION "unknown" // the build passes the VERSION file of the ns-3 tree
#endif

using namespace ns3;

namespace
{

/// CPU seconds (user + system, every thread) this process has used so far.
double
CpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// The scripts' `sec(x)`: seconds to a Time, rounded to the nanosecond.
Time
Sec(double x)
{
    return NanoSeconds(std::llround(x * 1e9));
}

/// Runs the simulator for `span` more simulated seconds and adds the CPU time to `runCpu`.
void
RunFor(double span, double& runCpu)
{
    Simulator::Stop(Sec(span));
    double t0 = CpuSeconds();
    Simulator::Run();
    runCpu += CpuSeconds() - t0;
}

/// Payload bytes a PacketSink received (its "Rx" trace), as the scripts' SinkProbe.
struct SinkProbe
{
    uint64_t total = 0;

    void OnRx(Ptr<const Packet> p, const Address&)
    {
        total += p->GetSize();
    }
};

/// Data segments a TCP socket sent (its "Tx" trace), the segments sent again, found from their
/// sequence numbers (`resent`: below the highest one sent; ns-3.37 has no "Retransmission"
/// trace source, later releases added it), and the "Retransmission" trace's count where there
/// is one. Shared by the two scenarios' sender probes.
struct SegmentProbe
{
    uint64_t dataSegments = 0;
    uint64_t retransmissions = 0;
    uint64_t resent = 0;
    SequenceNumber32 highestSent{0};

    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (p->GetSize() > 0)
        {
            SequenceNumber32 seq = h.GetSequenceNumber();
            if (dataSegments > 0 && seq < highestSent)
            {
                resent++;
            }
            if (dataSegments == 0 || seq + p->GetSize() > highestSent)
            {
                highestSent = seq + p->GetSize();
            }
            dataSegments++;
        }
    }

    void OnRetx(Ptr<const Packet>,
                const TcpHeader&,
                const Address&,
                const Address&,
                Ptr<const TcpSocketBase>)
    {
        retransmissions++;
    }

    /// Adds `o`'s counts to these (for totals over senders).
    void AddSegments(const SegmentProbe& o)
    {
        dataSegments += o.dataSegments;
        retransmissions += o.retransmissions;
        resent += o.resent;
    }
};

/// The hetero script's CongProbe: entries into Loss and Recovery, retransmission-timer expiries,
/// data segments sent and retransmissions; also the segments sent again from their sequence
/// numbers (`resent`, which ns-3.37 needs: it has no "Retransmission" trace source).
struct CongProbe : SegmentProbe
{
    uint64_t loss = 0;
    uint64_t recovery = 0;
    uint64_t expiries = 0;

    void OnRto(Time old, Time now)
    {
        if (now.GetTimeStep() == 2 * old.GetTimeStep() ||
            (now >= Seconds(60) && old < now && now < 2 * old))
        {
            expiries++;
        }
    }

    void OnState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
    {
        if (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_LOSS)
        {
            loss++;
        }
        if (to == TcpSocketState::CA_RECOVERY && from != TcpSocketState::CA_RECOVERY)
        {
            recovery++;
        }
    }

};

/// The hetero script's IdleProbe: idle periods of the bottleneck link (its device's PhyTxEnd to
/// the next PhyTxBegin) and empty periods of the RED disc (PacketsInQueue from 0 back above 0),
/// each as a count, a count of those at least one mean-packet time long, and total seconds.
struct IdleProbe
{
    double threshold = 0; ///< one mean-packet time, s
    double txEnd = -1;
    uint64_t linkPeriods = 0;
    uint64_t linkLong = 0;
    double linkIdle = 0;
    double emptySince = 0;
    uint64_t discPeriods = 0;
    uint64_t discLong = 0;
    double discEmpty = 0;

    void OnTxBegin(Ptr<const Packet>)
    {
        double now = Simulator::Now().GetSeconds();
        if (txEnd >= 0 && now > txEnd)
        {
            linkPeriods++;
            linkIdle += now - txEnd;
            if (now - txEnd >= threshold)
            {
                linkLong++;
            }
        }
        txEnd = -1;
    }

    void OnTxEnd(Ptr<const Packet>)
    {
        txEnd = Simulator::Now().GetSeconds();
    }

    void OnDisc(uint32_t before, uint32_t after)
    {
        double now = Simulator::Now().GetSeconds();
        if (before > 0 && after == 0)
        {
            emptySince = now;
        }
        if (before == 0 && after > 0 && emptySince >= 0 && now > emptySince)
        {
            discPeriods++;
            discEmpty += now - emptySince;
            if (now - emptySince >= threshold)
            {
                discLong++;
            }
        }
    }
};

/// The dumbbell script's SenderProbe (without its optional logs): data segments sent,
/// retransmissions, entries into Recovery, Loss and CWR. Also the data segments sent again
/// (`resent`: a sequence number below the highest one sent), which does not need the socket's
/// "Retransmission" trace source: ns-3.37 has none (later releases added it).
struct SenderProbe : SegmentProbe
{
    uint64_t recoveries = 0;
    uint64_t losses = 0;
    uint64_t cwr = 0;
    bool connected = false;
    bool hasRetransmissionTrace = false;


    void OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (now == TcpSocketState::CA_RECOVERY)
        {
            recoveries++;
        }
        if (now == TcpSocketState::CA_LOSS)
        {
            losses++;
        }
        if (now == TcpSocketState::CA_CWR)
        {
            cwr++;
        }
    }
};

/// Connects a SenderProbe to a BulkSend's socket (which exists once the application started).
void
ConnectSender(Ptr<Application> app, SenderProbe* probe)
{
    Ptr<Socket> sock = DynamicCast<BulkSendApplication>(app)->GetSocket();
    if (!sock)
    {
        return;
    }
    sock->TraceConnectWithoutContext("Tx", MakeCallback(&SenderProbe::OnTx, probe));
    probe->hasRetransmissionTrace =
        sock->TraceConnectWithoutContext("Retransmission", MakeCallback(&SenderProbe::OnRetx, probe));
    sock->TraceConnectWithoutContext("CongState", MakeCallback(&SenderProbe::OnCongState, probe));
    probe->connected = true;
}

/// Packets whose transmission started on any point-to-point device of any node: every packet a
/// PointToPointNetDevice sends passes through its device queue.
uint64_t
PacketHops()
{
    uint64_t hops = 0;
    for (uint32_t i = 0; i < NodeList::GetNNodes(); ++i)
    {
        Ptr<Node> node = NodeList::GetNode(i);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            Ptr<PointToPointNetDevice> dev =
                DynamicCast<PointToPointNetDevice>(node->GetDevice(d));
            if (dev)
            {
                Ptr<Queue<Packet>> q = dev->GetQueue();
                hops += q->GetTotalReceivedPackets() - q->GetNPackets();
            }
        }
    }
    return hops;
}

/// The TCP defaults both scenarios share (TcpNewReno with classic recovery; ns-3.37's and 3.44's
/// defaults differ for RecoveryType and SocketType, so every one is set).
void
SetTcpDefaults(uint32_t segmentSize,
               uint32_t initialCwnd,
               uint32_t sndBuf,
               uint32_t rcvBuf,
               bool windowScaling,
               bool ecn)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Sec(1.0)));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Sec(1.0)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Sec(1.0)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Sec(0.001)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));
}

/// Removes the queue disc Ipv4AddressHelper installs by default (if any) from `dev`.
void
UninstallDefaultDisc(Ptr<NetDevice> dev)
{
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    if (tc->GetRootQueueDiscOnDevice(dev))
    {
        TrafficControlHelper().Uninstall(dev);
    }
}

std::string
JsonCounters(const std::vector<std::pair<const char*, uint64_t>>& counters)
{
    std::string out = "{";
    for (const auto& [name, value] : counters)
    {
        out += (out.size() > 1 ? ", \"" : "\"") + std::string(name) + "\": " + std::to_string(value);
    }
    return out + "}";
}

/// Counters of a queue disc, as the scripts' qstats.
struct DiscCounters
{
    uint64_t arrivals = 0;
    uint64_t drops = 0;
    uint64_t marks = 0;
    uint64_t dropsEarly = 0;
    uint64_t dropsForced = 0;
    uint64_t marksEarly = 0;
    uint64_t marksForced = 0;

    static DiscCounters Of(Ptr<QueueDisc> qd)
    {
        const QueueDisc::Stats& st = qd->GetStats();
        DiscCounters c;
        c.arrivals = st.nTotalReceivedPackets;
        c.drops = st.nTotalDroppedPackets;
        c.marks = st.nTotalMarkedPackets;
        c.dropsEarly = st.GetNDroppedPackets(RedQueueDisc::UNFORCED_DROP);
        c.dropsForced = st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP);
        c.marksEarly = st.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK);
        c.marksForced = st.GetNMarkedPackets(RedQueueDisc::FORCED_MARK);
        return c;
    }

    std::string Json(const DiscCounters& since) const
    {
        return JsonCounters({{"arrivals", arrivals - since.arrivals},
                             {"drops", drops - since.drops},
                             {"marks", marks - since.marks},
                             {"drops_early", dropsEarly - since.dropsEarly},
                             {"drops_forced", dropsForced - since.dropsForced},
                             {"marks_early", marksEarly - since.marksEarly},
                             {"marks_forced", marksForced - since.marksForced}});
    }
};

/// What a scenario reports besides its timing.
struct Outcome
{
    std::vector<uint64_t> rxBytes;
    std::string bottleneckJson;
    std::string sendersJson; ///< the senders' probe counters summed over [warmup, duration]
    std::string idleJson = "null"; ///< hetero: the bottleneck's idle periods over that interval
};


std::string
Subnet(int a, int b, int c)
{
    return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c) + ".0";
}

// --- hetero: validation/ns3_red/ns3_hetero.py, mode "red" ---------------------------------------

Outcome
RunHetero(uint32_t n, uint32_t seed, double duration, double warmup, double& runCpu)
{
    const double delays[3] = {0.145, 0.045, 0.005}; // fragile, average, robust one-way delays
    const uint32_t segmentSize = 960;               // IP packet 1000 B
    const uint32_t maxWindow = 64;                  // packets

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    // SndBufSize 128 KiB (more than the 64-packet window); window scaling off.
    SetTcpDefaults(segmentSize, 1, 131072, maxWindow * segmentSize, false, false);

    NodeContainer router;
    router.Create(1);
    NodeContainer sink;
    sink.Create(1);
    NodeContainer senders;
    senders.Create(n);
    InternetStackHelper stack;
    stack.Install(router);
    stack.Install(sink);
    stack.Install(senders);
    Ipv4AddressHelper addr;

    // Bottleneck r -> sink: RED over a 1-packet device queue, flow control on.
    PointToPointHelper bh;
    bh.SetDeviceAttribute("DataRate", DataRateValue(DataRate(10000000)));
    bh.SetChannelAttribute("Delay", TimeValue(Sec(0.005)));
    bh.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    NetDeviceContainer bn = bh.Install(router.Get(0), sink.Get(0));
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize",
                         QueueSizeValue(QueueSize("120p")),
                         "MinTh",
                         DoubleValue(10.0),
                         "MaxTh",
                         DoubleValue(30.0),
                         "QW",
                         DoubleValue(0.002),
                         "LInterm",
                         DoubleValue(10.0),
                         "MeanPktSize",
                         UintegerValue(1000),
                         "LinkBandwidth",
                         DataRateValue(DataRate(10000000)),
                         "LinkDelay",
                         TimeValue(Sec(0.005)),
                         "Wait",
                         BooleanValue(true),
                         "Gentle",
                         BooleanValue(false),
                         "UseEcn",
                         BooleanValue(false),
                         "UseHardDrop",
                         BooleanValue(true),
                         "Ns1Compat",
                         BooleanValue(false));
    Ptr<QueueDisc> qd = red.Install(bn.Get(0)).Get(0);
    DynamicCast<RedQueueDisc>(qd)->AssignStreams(1000 + seed);
    addr.SetBase(Ipv4Address("10.255.0.0"), Ipv4Mask("255.255.255.0"));
    Ipv4InterfaceContainer bnIf = addr.Assign(bn);
    Ipv4Address sinkAddr = bnIf.GetAddress(1);
    DynamicCast<PointToPointNetDevice>(bn.Get(1))->GetQueue()->SetMaxSize(QueueSize("10000p"));

    std::vector<NetDeviceContainer> accessDevs;
    for (uint32_t i = 0; i < n; ++i)
    {
        uint32_t g = (3 * i) / n;
        PointToPointHelper ah;
        ah.SetDeviceAttribute("DataRate",
                              DataRateValue(DataRate(std::llround(300e6 / n))));
        ah.SetChannelAttribute("Delay", TimeValue(Sec(delays[g])));
        ah.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize("10000p")));
        ah.DisableFlowControl();
        NetDeviceContainer d = ah.Install(senders.Get(i), router.Get(0));
        addr.SetBase(Ipv4Address(Subnet(10, 1 + i / 250, i % 250).c_str()),
                     Ipv4Mask("255.255.255.0"));
        addr.Assign(d);
        accessDevs.push_back(d);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    accessDevs.push_back(bn);
    for (const NetDeviceContainer& devs : accessDevs)
    {
        for (uint32_t k = 0; k < devs.GetN(); ++k)
        {
            if (devs.Get(k) != bn.Get(0))
            {
                UninstallDefaultDisc(devs.Get(k));
            }
        }
    }
    NS_ABORT_MSG_UNLESS(router.Get(0)
                                ->GetObject<TrafficControlLayer>()
                                ->GetRootQueueDiscOnDevice(bn.Get(0))
                                ->GetInstanceTypeId()
                                .GetName() == "ns3::RedQueueDisc",
                        "RED is not the bottleneck's queue disc");

    std::vector<SinkProbe> sinkProbes(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        uint16_t port = 9000 + i;
        PacketSinkHelper sh("ns3::TcpSocketFactory",
                            InetSocketAddress(Ipv4Address::GetAny(), port));
        Ptr<Application> sapp = sh.Install(sink.Get(0)).Get(0);
        sapp->SetStartTime(Seconds(0));
        sapp->TraceConnectWithoutContext("Rx", MakeCallback(&SinkProbe::OnRx, &sinkProbes[i]));
        BulkSendHelper bsh("ns3::TcpSocketFactory", InetSocketAddress(sinkAddr, port));
        bsh.SetAttribute("MaxBytes", UintegerValue(0));
        bsh.SetAttribute("SendSize", UintegerValue(segmentSize));
        Ptr<Application> app = bsh.Install(senders.Get(i)).Get(0);
        // Within each group, the first half start at 0 s, the second at 2 s.
        uint32_t within = i % (n / 3);
        app->SetStartTime(Sec(within < n / 6 ? 0.0 : 2.0));
    }

    // Every sender's socket exists once the last application has started (2 s).
    RunFor(2.5, runCpu);
    std::vector<CongProbe> congProbes(n);
    bool hasRetransmissionTrace = false;
    for (uint32_t i = 0; i < n; ++i)
    {
        std::string base =
            "/NodeList/" + std::to_string(senders.Get(i)->GetId()) + "/$ns3::TcpL4Protocol/SocketList/*/";
        Config::ConnectWithoutContext(base + "CongState",
                                      MakeCallback(&CongProbe::OnState, &congProbes[i]));
        Config::ConnectWithoutContext(base + "RTO", MakeCallback(&CongProbe::OnRto, &congProbes[i]));
        Config::ConnectWithoutContext(base + "Tx", MakeCallback(&CongProbe::OnTx, &congProbes[i]));
        hasRetransmissionTrace =
            Config::ConnectWithoutContextFailSafe(base + "Retransmission",
                                                  MakeCallback(&CongProbe::OnRetx, &congProbes[i]));
    }
    IdleProbe idle;
    idle.threshold = 1000 * 8 / 10e6; // MeanPktSize 1000 B at LinkBandwidth 10 Mb/s
    bn.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&IdleProbe::OnTxBegin, &idle));
    bn.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&IdleProbe::OnTxEnd, &idle));
    qd->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&IdleProbe::OnDisc, &idle));
    RunFor(warmup - 2.5, runCpu);
    std::vector<uint64_t> rx0(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        rx0[i] = sinkProbes[i].total;
    }
    auto congTotals = [&congProbes]() {
        CongProbe sum;
        for (const CongProbe& c : congProbes)
        {
            sum.loss += c.loss;
            sum.recovery += c.recovery;
            sum.expiries += c.expiries;
            sum.AddSegments(c);
        }
        return sum;
    };
    CongProbe c0 = congTotals();
    DiscCounters q0 = DiscCounters::Of(qd);
    IdleProbe i0 = idle;
    RunFor(duration - warmup, runCpu);

    Outcome out;
    for (uint32_t i = 0; i < n; ++i)
    {
        out.rxBytes.push_back(sinkProbes[i].total - rx0[i]);
    }
    out.bottleneckJson = DiscCounters::Of(qd).Json(q0);
    CongProbe c1 = congTotals();
    std::vector<std::pair<const char*, uint64_t>> counters = {
        {"loss_entries", c1.loss - c0.loss},
        {"recovery_entries", c1.recovery - c0.recovery},
        {"rto_expiries", c1.expiries - c0.expiries},
        {"data_segments_sent", c1.dataSegments - c0.dataSegments},
        {"resent_segments", c1.resent - c0.resent}};
    if (hasRetransmissionTrace)
    {
        counters.emplace_back("retransmissions", c1.retransmissions - c0.retransmissions);
    }
    out.sendersJson = JsonCounters(counters);
    char idleJson[400];
    std::snprintf(idleJson,
                  sizeof idleJson,
                  "{\"link_idle_periods\": %llu, \"link_idle_periods_long\": %llu, "
                  "\"link_idle_s\": %.9f, \"disc_empty_periods\": %llu, "
                  "\"disc_empty_periods_long\": %llu, \"disc_empty_s\": %.9f}",
                  static_cast<unsigned long long>(idle.linkPeriods - i0.linkPeriods),
                  static_cast<unsigned long long>(idle.linkLong - i0.linkLong),
                  idle.linkIdle - i0.linkIdle,
                  static_cast<unsigned long long>(idle.discPeriods - i0.discPeriods),
                  static_cast<unsigned long long>(idle.discLong - i0.discLong),
                  idle.discEmpty - i0.discEmpty);
    out.idleJson = idleJson;
    return out;
}

// --- dumbbell: validation/ns3/ns3_dumbbell.py with side_by_side.py's dumbbell_cfg(n) ----------

Outcome
RunDumbbell(uint32_t n, double duration, double warmup, double& runCpu)
{
    const double bottleneckRate = 100e6;
    const double bottleneckDelay = 0.040;
    const uint32_t segmentSize = 1460;

    // Receive window 2^30 with window scaling; send buffer 4 MiB (side_by_side.py: ns-3 holds
    // what BulkSend writes ahead, and 1 GiB per flow ran 100 flows out of memory).
    SetTcpDefaults(segmentSize, 3, 1u << 22, 1u << 30, true, true);
    // RED of one bandwidth-delay product (833 packets), thresholds 83 and 250, ECN marking.
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize("833p")));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(83.0));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(250.0));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(0.002));
    Config::SetDefault("ns3::RedQueueDisc::LInterm", DoubleValue(1.0 / 0.1));
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::Wait", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1500));
    Config::SetDefault("ns3::RedQueueDisc::LinkBandwidth",
                       DataRateValue(DataRate(std::llround(bottleneckRate))));
    Config::SetDefault("ns3::RedQueueDisc::LinkDelay", TimeValue(Sec(bottleneckDelay)));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(n);
    NodeContainer receivers;
    receivers.Create(n);
    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    // The bottleneck keeps flow control and a 1-packet device queue, so RED holds the backlog.
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(std::llround(bottleneckRate))));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Sec(bottleneckDelay)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(1000000000)));
    access.SetChannelAttribute("Delay", TimeValue(Sec(0.005)));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("10000p")));
    access.DisableFlowControl();

    Ipv4AddressHelper addr;
    std::vector<NetDeviceContainer> accessDevs;
    NetDeviceContainer bnDevs = bottleneck.Install(routers.Get(0), routers.Get(1));
    addr.SetBase(Ipv4Address("10.255.0.0"), Ipv4Mask("255.255.255.0"));
    addr.Assign(bnDevs);
    std::vector<Ipv4Address> rxAddrs;
    for (uint32_t i = 0; i < n; ++i)
    {
        NetDeviceContainer left = access.Install(senders.Get(i), routers.Get(0));
        addr.SetBase(Ipv4Address(Subnet(10, 1 + i / 250, i % 250).c_str()),
                     Ipv4Mask("255.255.255.0"));
        addr.Assign(left);
        NetDeviceContainer right = access.Install(routers.Get(1), receivers.Get(i));
        addr.SetBase(Ipv4Address(Subnet(10, 101 + i / 250, i % 250).c_str()),
                     Ipv4Mask("255.255.255.0"));
        rxAddrs.push_back(addr.Assign(right).GetAddress(1));
        accessDevs.push_back(left);
        accessDevs.push_back(right);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    for (const NetDeviceContainer& devs : accessDevs)
    {
        for (uint32_t k = 0; k < devs.GetN(); ++k)
        {
            UninstallDefaultDisc(devs.Get(k));
        }
    }
    // RED on r1 -> r2 (the RedQueueDisc defaults set above), a FIFO on the ACK direction.
    TrafficControlHelper().Uninstall(bnDevs);
    TrafficControlHelper tchRed;
    tchRed.SetRootQueueDisc("ns3::RedQueueDisc");
    Ptr<QueueDisc> qd = tchRed.Install(bnDevs.Get(0)).Get(0);
    TrafficControlHelper tchFifo;
    tchFifo.SetRootQueueDisc("ns3::FifoQueueDisc");
    tchFifo.Install(bnDevs.Get(1));

    const uint16_t port = 9000;
    std::vector<SinkProbe> sinkProbes(n);
    std::vector<SenderProbe> senderProbes(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        PacketSinkHelper sh("ns3::TcpSocketFactory",
                            InetSocketAddress(Ipv4Address::GetAny(), port));
        Ptr<Application> sapp = sh.Install(receivers.Get(i)).Get(0);
        sapp->SetStartTime(Seconds(0));
        sapp->TraceConnectWithoutContext("Rx", MakeCallback(&SinkProbe::OnRx, &sinkProbes[i]));
        BulkSendHelper bsh("ns3::TcpSocketFactory", InetSocketAddress(rxAddrs[i], port));
        bsh.SetAttribute("MaxBytes", UintegerValue(0));
        bsh.SetAttribute("SendSize", UintegerValue(segmentSize));
        Ptr<Application> app = bsh.Install(senders.Get(i)).Get(0);
        // Starts spread over the first second, 1 s / n apart.
        double start = static_cast<double>(i) / n;
        app->SetStartTime(Sec(start));
        // One nanosecond after StartApplication created the socket and sent the SYN.
        Simulator::Schedule(Seconds(start + 1e-9), &ConnectSender, app, &senderProbes[i]);
    }

    auto senderTotals = [&senderProbes]() {
        SenderProbe sum;
        for (const SenderProbe& p : senderProbes)
        {
            sum.AddSegments(p);
            sum.recoveries += p.recoveries;
            sum.losses += p.losses;
            sum.cwr += p.cwr;
        }
        return sum;
    };
    RunFor(warmup, runCpu);
    std::vector<uint64_t> rx0(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        rx0[i] = sinkProbes[i].total;
    }
    SenderProbe s0 = senderTotals();
    DiscCounters q0 = DiscCounters::Of(qd);
    RunFor(duration - warmup, runCpu);

    Outcome out;
    for (uint32_t i = 0; i < n; ++i)
    {
        NS_ABORT_MSG_UNLESS(senderProbes[i].connected, "sender probe " << i << " not connected");
        out.rxBytes.push_back(sinkProbes[i].total - rx0[i]);
    }
    out.bottleneckJson = DiscCounters::Of(qd).Json(q0);
    SenderProbe s1 = senderTotals();
    std::vector<std::pair<const char*, uint64_t>> counters = {
        {"data_segments_sent", s1.dataSegments - s0.dataSegments},
        {"resent_segments", s1.resent - s0.resent},
        {"fast_recoveries", s1.recoveries - s0.recoveries},
        {"timeouts", s1.losses - s0.losses},
        {"ecn_reductions", s1.cwr - s0.cwr}};
    if (senderProbes[0].hasRetransmissionTrace)
    {
        counters.emplace_back("retransmissions", s1.retransmissions - s0.retransmissions);
    }
    out.sendersJson = JsonCounters(counters);
    return out;
}

} // namespace

int
main(int argc, char* argv[])
{
    double cpu0 = CpuSeconds();
    std::string scenario = "hetero";
    uint32_t n = 30;
    uint32_t seed = 1;
    double duration = -1;
    double warmup = -1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("scenario", "hetero or dumbbell", scenario);
    cmd.AddValue("n", "hetero: sources (a multiple of 6); dumbbell: flows", n);
    cmd.AddValue("seed", "hetero: ns-3's RngRun (the dumbbell runs ns-3's default seed)", seed);
    cmd.AddValue("duration", "simulated seconds (hetero 100, dumbbell 60)", duration);
    cmd.AddValue("warmup", "seconds discarded (hetero 20, dumbbell 10)", warmup);
    cmd.Parse(argc, argv);

    bool hetero = scenario == "hetero";
    if (!hetero && scenario != "dumbbell")
    {
        std::fprintf(stderr, "--scenario must be hetero or dumbbell, not %s\n", scenario.c_str());
        return 2;
    }
    if (n == 0 || (hetero && n % 6 != 0))
    {
        std::fprintf(stderr, "--n must be > 0 (hetero: a multiple of 6), not %u\n", n);
        return 2;
    }
    duration = duration < 0 ? (hetero ? 100.0 : 60.0) : duration;
    warmup = warmup < 0 ? (hetero ? 20.0 : 10.0) : warmup;
    if (!(warmup < duration) || (hetero && warmup < 2.5))
    {
        std::fprintf(stderr, "--warmup must be below --duration (hetero: at least 2.5 s)\n");
        return 2;
    }

    double runCpu = 0;
    Outcome out = hetero ? RunHetero(n, seed, duration, warmup, runCpu)
                         : RunDumbbell(n, duration, warmup, runCpu);
    uint64_t hops = PacketHops();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();
    double totalCpu = CpuSeconds() - cpu0;

    std::printf("{\"simulator\": \"ns-3 %s (C++)\", \"scenario\": \"%s\", \"n\": %u, "
                "\"seed\": %u, \"duration\": %g, \"warmup\": %g, \"rx_bytes\": [",
                ECNSIM_NS3_VERSION,
                scenario.c_str(),
                n,
                seed,
                duration,
                warmup);
    for (std::size_t i = 0; i < out.rxBytes.size(); ++i)
    {
        std::printf("%s%llu", i ? ", " : "", static_cast<unsigned long long>(out.rxBytes[i]));
    }
    std::printf("], \"bottleneck\": %s, \"senders\": %s, \"idle\": %s, \"packet_hops\": %llu, "
                "\"events\": %llu, "
                "\"run_cpu_s\": %.6f, \"process_cpu_s\": %.6f}\n",
                out.bottleneckJson.c_str(),
                out.sendersJson.c_str(),
                out.idleJson.c_str(),
                static_cast<unsigned long long>(hops),
                static_cast<unsigned long long>(events),
                runCpu,
                totalCpu);
    return 0;
}
