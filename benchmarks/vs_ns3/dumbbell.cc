// dumbbell.cc: collateral's dumbbell in ns-3 (3.37), for benchmarks/vs_ns3/run.py.
//
//   A (bulk TCP sender) --+                              +-- C (TCP receiver)
//                         +-- R1 == bottleneck down/up == R2 --+
//   B (CBR)            ---+                              +-- D (CBR)
//
// Access links: point-to-point at --access bit/s (1 Gbit/s), no propagation delay, large
// queues. Bottleneck: one point-to-point link, R1's device at --down bit/s, R2's at
// --up bit/s, --rtt/2 of propagation each way, a drop-tail device queue per direction
// (--qdown, --qup: "14p" or "20000B"; ns-3's DropTailQueue drops an arrival when
// current + arrival > limit, i.e. rule PS or FB-strict). No traffic-control layer queue
// discs (removed after addressing) and device flow control off, so every packet reaches
// the device queue and is dropped there, as in collateral.
//
// One bulk TCP NewReno flow A -> C (BulkSend -> PacketSink), one CBR flow each way
// (--cbr_bytes IP bytes every --interval_ms, gaps normal with sd --jitter_ms, clamped at
// 0, random start phase in [0, interval)), --duration_s simulated, measured after
// --warmup_s. Prints one JSON object: Simulator::Run's wall time (steady clock; set-up
// and this output excluded), the event count, TCP goodput, each CBR flow's loss and
// additional one-way delay (one-way delay minus the empty path's, p50/p95 with linear
// interpolation between order statistics, as collateral's summary does), and the
// bottleneck drops.
//
// Written for this benchmark; compiled by setup.sh against Debian's libns3-dev.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr int64_t kNotYet = -1;   // not arrived (yet)
constexpr int64_t kDropped = -2;  // dropped by a bottleneck queue
constexpr uint32_t kUdpIpHeaders = 28;
constexpr uint32_t kPppHeader = 2;

// One CBR flow: its source's schedule and its sink's record, by sequence number.
struct Cbr
{
    uint8_t id = 0;
    std::string dir;
    Ptr<Socket> tx;
    uint32_t payload = 0;
    int64_t interval_ns = 0;
    int64_t jitter_ns = 0;
    int64_t stop_ns = 0;
    Ptr<NormalRandomVariable> gap;
    std::vector<int64_t> sent;
    std::vector<int64_t> arrived;
    int64_t base_ns = 0;  // one-way delay through empty queues

    void Send()
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (now >= stop_ns)
        {
            return;
        }
        uint32_t seq = static_cast<uint32_t>(sent.size());
        std::vector<uint8_t> buf(payload, 0);
        buf[0] = id;
        std::memcpy(&buf[1], &seq, sizeof seq);
        tx->Send(Create<Packet>(buf.data(), payload));
        sent.push_back(now);
        arrived.push_back(kNotYet);
        int64_t g = interval_ns;
        if (jitter_ns > 0)
        {
            g = std::llround(std::max(0.0, gap->GetValue()));
        }
        Simulator::Schedule(NanoSeconds(g), &Cbr::Send, this);
    }
};

std::vector<Cbr*> g_cbr;
uint64_t g_tcp_bytes = 0;
int64_t g_warmup_ns = 0;
uint64_t g_drops[2] = {0, 0};

// Reads (flow id, seq) from the start of a CBR payload that ends the packet.
bool
CbrIds(Ptr<const Packet> p, uint32_t payload, uint8_t* id, uint32_t* seq)
{
    uint32_t n = p->GetSize();
    if (n < payload)
    {
        return false;
    }
    std::vector<uint8_t> buf(n);
    p->CopyData(buf.data(), n);
    const uint8_t* pl = &buf[n - payload];
    *id = pl[0];
    std::memcpy(seq, pl + 1, sizeof *seq);
    return *id < g_cbr.size();
}

void
CbrReceive(Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        uint8_t id;
        uint32_t seq;
        if (CbrIds(p, p->GetSize(), &id, &seq) && seq < g_cbr[id]->arrived.size())
        {
            g_cbr[id]->arrived[seq] = Simulator::Now().GetNanoSeconds();
        }
    }
}

void
BottleneckDrop(int dir, uint32_t cbrWire, uint32_t payload, Ptr<const Packet> p)
{
    g_drops[dir]++;
    uint8_t id;
    uint32_t seq;
    if (p->GetSize() == cbrWire && CbrIds(p, payload, &id, &seq) &&
        seq < g_cbr[id]->arrived.size())
    {
        g_cbr[id]->arrived[seq] = kDropped;
    }
}

void
SinkRx(Ptr<const Packet> p, const Address&)
{
    if (Simulator::Now().GetNanoSeconds() >= g_warmup_ns)
    {
        g_tcp_bytes += p->GetSize();
    }
}

// --trace: every change of the TCP sender's cwnd and ssthresh (segments) on stderr.
uint32_t g_mss = 1448;
uint32_t g_ssthresh = 0;

void
CwndChange(uint32_t, uint32_t cwnd)
{
    std::fprintf(stderr, "%.6f cwnd %u ssthresh %u\n", Simulator::Now().GetSeconds(),
                 cwnd / g_mss, g_ssthresh / g_mss);
}

void
SsthreshChange(uint32_t, uint32_t ssthresh)
{
    g_ssthresh = ssthresh;
}

void
ConnectTcpTraces()
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow",
                                  MakeCallback(&CwndChange));
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/SlowStartThreshold",
                                  MakeCallback(&SsthreshChange));
}

double
Quantile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
    {
        return NAN;
    }
    double pos = q * (sorted.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = static_cast<size_t>(std::ceil(pos));
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

// A number for JSON (NaN when there was nothing to measure).
std::string
Num(double x)
{
    if (std::isnan(x))
    {
        return "NaN";
    }
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", x);
    return b;
}

int64_t
SerNs(uint32_t bytes, uint64_t bps)
{
    // DataRate::CalculateBytesTxTime: bytes * 8 / bps seconds, rounded to the time unit.
    return static_cast<int64_t>(std::llround(bytes * 8.0 * 1e9 / bps));
}

} // namespace

int
main(int argc, char* argv[])
{
    uint64_t down = 1500000;
    uint64_t up = 256000;
    uint64_t access = 1000000000;
    double rtt_ms = 100;
    std::string qdown = "14p";
    std::string qup = "14p";
    double duration_s = 180;
    double warmup_s = 10;
    uint32_t cbr_bytes = 186;
    double interval_ms = 20;
    double jitter_ms = 1;
    uint32_t seed = 1;
    uint32_t mss = 1448;
    uint32_t iw = 3;
    double delack_ms = 40;
    double rto_min_ms = 200;
    bool sack = false;
    std::string recovery = "classic";
    bool trace = false;

    CommandLine cmd;
    cmd.AddValue("down", "bottleneck rate down (bit/s)", down);
    cmd.AddValue("up", "bottleneck rate up (bit/s)", up);
    cmd.AddValue("access", "access link rate (bit/s)", access);
    cmd.AddValue("rtt_ms", "base RTT (ms), all on the bottleneck", rtt_ms);
    cmd.AddValue("qdown", "down queue limit, e.g. 14p or 20000B", qdown);
    cmd.AddValue("qup", "up queue limit", qup);
    cmd.AddValue("duration_s", "simulated time (s)", duration_s);
    cmd.AddValue("warmup_s", "warm-up not measured (s)", warmup_s);
    cmd.AddValue("cbr_bytes", "CBR packet IP length (B)", cbr_bytes);
    cmd.AddValue("interval_ms", "CBR mean gap (ms)", interval_ms);
    cmd.AddValue("jitter_ms", "CBR gap standard deviation (ms), 0 = none", jitter_ms);
    cmd.AddValue("seed", "run number (RngRun)", seed);
    cmd.AddValue("mss", "TCP segment size (B)", mss);
    cmd.AddValue("iw", "TCP initial window (segments)", iw);
    cmd.AddValue("delack_ms", "delayed-ACK timer (ms)", delack_ms);
    cmd.AddValue("rto_min_ms", "minimum RTO (ms)", rto_min_ms);
    cmd.AddValue("sack", "SACK on", sack);
    cmd.AddValue("recovery", "classic (RFC 6582 window inflation) or prr", recovery);
    cmd.AddValue("trace", "print the sender's cwnd changes on stderr (not for timing)", trace);
    cmd.Parse(argc, argv);
    g_mss = mss;

    RngSeedManager::SetSeed(12345);
    RngSeedManager::SetRun(seed);

    // TCP: collateral's `rfc` profile as far as ns-3's attributes reach.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(delack_ms)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    // ns-3: RTO = max(SRTT + max(G, 4 RTTVAR), MinRto). G = MinRto gives Linux's
    // SRTT + max(4 RTTVAR, rto_min), which collateral's profiles use.
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(rto_min_ms)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(MilliSeconds(rto_min_ms)));

    NodeContainer nodes;
    nodes.Create(6);
    Ptr<Node> a = nodes.Get(0), b = nodes.Get(1), r1 = nodes.Get(2), r2 = nodes.Get(3),
              c = nodes.Get(4), d = nodes.Get(5);

    PointToPointHelper accessLink;
    accessLink.SetDeviceAttribute("DataRate", DataRateValue(DataRate(access)));
    accessLink.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    accessLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    accessLink.DisableFlowControl();

    PointToPointHelper neck;
    neck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(down)));
    neck.SetChannelAttribute("Delay", TimeValue(NanoSeconds(std::llround(rtt_ms * 1e6 / 2))));
    neck.DisableFlowControl();

    NetDeviceContainer dAR1 = accessLink.Install(a, r1);
    NetDeviceContainer dBR1 = accessLink.Install(b, r1);
    NetDeviceContainer dNeck = neck.Install(r1, r2);
    NetDeviceContainer dR2C = accessLink.Install(r2, c);
    NetDeviceContainer dR2D = accessLink.Install(r2, d);

    Ptr<PointToPointNetDevice> devDown = DynamicCast<PointToPointNetDevice>(dNeck.Get(0));
    Ptr<PointToPointNetDevice> devUp = DynamicCast<PointToPointNetDevice>(dNeck.Get(1));
    devDown->SetDataRate(DataRate(down));
    devUp->SetDataRate(DataRate(up));
    devDown->GetQueue()->SetMaxSize(QueueSize(qdown));
    devUp->GetQueue()->SetMaxSize(QueueSize(qup));

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    std::vector<NetDeviceContainer> all = {dAR1, dBR1, dNeck, dR2C, dR2D};
    std::vector<Ipv4InterfaceContainer> ifs;
    int net = 1;
    for (auto& devs : all)
    {
        addr.SetBase(("10.0." + std::to_string(net++) + ".0").c_str(), "255.255.255.0");
        ifs.push_back(addr.Assign(devs));
    }
    // Assign() installed ns-3's default pfifo_fast queue disc on every device. With the
    // devices' flow control off they are "tc-unaware": a queue disc hands each packet to
    // the device at once and never holds one (checked at the end), so the device queue
    // is the only queue. (TrafficControlHelper::Uninstall crashes on such devices.)
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ipv4Address addrC = ifs[3].GetAddress(1);
    Ipv4Address addrD = ifs[4].GetAddress(1);
    Ipv4Address addrB = ifs[1].GetAddress(0);

    Time stop = Seconds(duration_s);
    g_warmup_ns = static_cast<int64_t>(std::llround(warmup_s * 1e9));

    // Bulk TCP A -> C.
    uint16_t tcpPort = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), tcpPort));
    ApplicationContainer sinkApp = sinkHelper.Install(c);
    sinkApp.Start(Seconds(0));
    DynamicCast<PacketSink>(sinkApp.Get(0))->TraceConnectWithoutContext("Rx",
                                                                        MakeCallback(&SinkRx));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(addrC, tcpPort));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    bulk.SetAttribute("SendSize", UintegerValue(mss * 16));
    ApplicationContainer bulkApp = bulk.Install(a);
    bulkApp.Start(Seconds(0));
    if (trace)
    {
        Simulator::Schedule(NanoSeconds(1), &ConnectTcpTraces);
    }

    // CBR B -> D (down) and D -> B (up).
    uint32_t payload = cbr_bytes - kUdpIpHeaders;
    Ptr<UniformRandomVariable> phase = CreateObject<UniformRandomVariable>();
    Cbr cbrDown, cbrUp;
    struct Side
    {
        Cbr* f;
        const char* dir;
        Ptr<Node> from, to;
        Ipv4Address dst;
        uint64_t rate;
    };
    std::vector<Side> sides = {{&cbrDown, "down", b, d, addrD, down},
                               {&cbrUp, "up", d, b, addrB, up}};
    for (size_t i = 0; i < sides.size(); i++)
    {
        Side& s = sides[i];
        Cbr* f = s.f;
        f->id = static_cast<uint8_t>(i);
        f->dir = s.dir;
        f->payload = payload;
        f->interval_ns = std::llround(interval_ms * 1e6);
        f->jitter_ns = std::llround(jitter_ms * 1e6);
        f->stop_ns = stop.GetNanoSeconds();
        f->gap = CreateObject<NormalRandomVariable>();
        f->gap->SetAttribute("Mean", DoubleValue(static_cast<double>(f->interval_ns)));
        f->gap->SetAttribute("Variance",
                             DoubleValue(static_cast<double>(f->jitter_ns) * f->jitter_ns));
        f->gap->SetAttribute("Bound", DoubleValue(1e18));
        uint32_t wire = cbr_bytes + kPppHeader;
        f->base_ns = 2 * SerNs(wire, access) + SerNs(wire, s.rate) +
                     std::llround(rtt_ms * 1e6 / 2);
        uint16_t port = static_cast<uint16_t>(9000 + i);
        Ptr<Socket> rx = Socket::CreateSocket(s.to, UdpSocketFactory::GetTypeId());
        rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        rx->SetRecvCallback(MakeCallback(&CbrReceive));
        f->tx = Socket::CreateSocket(s.from, UdpSocketFactory::GetTypeId());
        f->tx->Bind();
        f->tx->Connect(InetSocketAddress(s.dst, port));
        int64_t start = static_cast<int64_t>(phase->GetInteger(0, f->interval_ns - 1));
        Simulator::Schedule(NanoSeconds(start), &Cbr::Send, f);
        g_cbr.push_back(f);
    }
    uint32_t cbrWire = cbr_bytes + kPppHeader;
    devDown->GetQueue()->TraceConnectWithoutContext(
        "Drop",
        MakeBoundCallback(&BottleneckDrop, 0, cbrWire, payload));
    devUp->GetQueue()->TraceConnectWithoutContext(
        "Drop",
        MakeBoundCallback(&BottleneckDrop, 1, cbrWire, payload));

    Simulator::Stop(stop);
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();
    uint64_t events = Simulator::GetEventCount();

    // The default queue discs must not have held or dropped anything.
    for (auto& devs : all)
    {
        for (uint32_t i = 0; i < devs.GetN(); i++)
        {
            Ptr<NetDevice> dev = devs.Get(i);
            Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
            Ptr<QueueDisc> qd = tc ? tc->GetRootQueueDiscOnDevice(dev) : nullptr;
            if (qd && (qd->GetStats().nTotalDroppedPackets > 0 || qd->GetNPackets() > 0 ||
                       qd->GetStats().nTotalRequeuedPackets > 0))
            {
                std::fprintf(stderr, "dumbbell: a queue disc held packets\n");
                return 1;
            }
        }
    }

    double measured = duration_s - warmup_s;
    std::printf("{\"wall_s\": %.6f, \"events\": %llu, \"goodput_bps\": %.3f, "
                "\"drops_down\": %llu, \"drops_up\": %llu, \"cbr\": [",
                wall,
                static_cast<unsigned long long>(events),
                g_tcp_bytes * 8.0 / measured,
                static_cast<unsigned long long>(g_drops[0]),
                static_cast<unsigned long long>(g_drops[1]));
    for (size_t i = 0; i < g_cbr.size(); i++)
    {
        Cbr* f = g_cbr[i];
        uint64_t sent = 0, lost = 0, inflight = 0;
        std::vector<double> extra;
        for (size_t k = 0; k < f->sent.size(); k++)
        {
            if (f->sent[k] < g_warmup_ns)
            {
                continue;
            }
            sent++;
            if (f->arrived[k] == kDropped)
            {
                lost++;
            }
            else if (f->arrived[k] == kNotYet)
            {
                inflight++;  // still on its way at the end (nothing else loses packets)
            }
            else
            {
                extra.push_back((f->arrived[k] - f->sent[k] - f->base_ns) / 1e9);
            }
        }
        std::sort(extra.begin(), extra.end());
        uint64_t done = sent - inflight;
        std::printf("%s{\"direction\": \"%s\", \"sent\": %llu, \"lost\": %llu, "
                    "\"loss_rate\": %s, \"delay_p50_s\": %s, \"delay_p95_s\": %s}",
                    i ? ", " : "",
                    f->dir.c_str(),
                    static_cast<unsigned long long>(sent),
                    static_cast<unsigned long long>(lost),
                    Num(done ? static_cast<double>(lost) / done : NAN).c_str(),
                    Num(Quantile(extra, 0.50)).c_str(),
                    Num(Quantile(extra, 0.95)).c_str());
    }
    std::printf("]}\n");
    Simulator::Destroy();
    return 0;
}
