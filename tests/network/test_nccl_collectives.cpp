// NCCL's model on built topologies: achievable link bandwidth, the ring search over NVLink,
// in-network reduction (NVLS, CollNet), the protocols as flows, and TCP against RDMA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/collectives.hpp"
#include "network/link_tech.hpp"
#include "network/nccl_tuning.hpp"
#include "network/ring_search.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::network {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A DGX-class node running NCCL: 8 GPUs with their NVLink generation, NICs of a technology.
NodeSpec nccl_node(NodeKind kind, double link_bw, LinkTech link, int cc) {
  NodeSpec n;
  n.kind = kind;
  n.accelerators = 8;
  n.link_bandwidth = link_bw;
  n.link_tech = link;
  n.nccl_compute_capability = cc;
  n.pcie_bandwidth = 32e9;
  n.pcie_tech = LinkTech::pcie4;
  return n;
}

NodeSpec with_nics(NodeSpec n, int nics, double bandwidth, LinkTech tech) {
  n.nics = nics;
  n.nic_bandwidth = bandwidth;
  n.nic_tech = tech;
  return n;
}

FabricSpec nodes(int count) {
  FabricSpec f;
  f.nodes = count;
  return f;
}

CollectiveSpec all_reduce(const std::vector<VertexId>& ranks, double bytes, Algorithm a = Algorithm::automatic,
                          Protocol p = Protocol::automatic) {
  CollectiveSpec s;
  s.kind = CollectiveKind::all_reduce;
  s.algorithm = a;
  s.protocol = p;
  s.bytes = bytes;
  s.ranks = ranks;
  return s;
}

std::vector<std::vector<int>> cube_mesh_units() {
  std::vector<std::vector<int>> u(8, std::vector<int>(8, 0));
  const int pairs[][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {1, 2, 2}, {1, 3, 1}, {2, 3, 2}, {4, 5, 1}, {4, 6, 1},
                          {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}, {0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1}};
  for (const auto& p : pairs) u[p[0]][p[1]] = u[p[1]][p[0]] = p[2];
  return u;
}

TEST(LinkTech, BuildersGiveLinksTheirAchievableBandwidth) {
  const NodeSpec n = with_nics(nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80), 8, 25e9, LinkTech::ib_hdr);
  const Topology t = build_cluster(n, nodes(2));
  int nvlink = 0, nic = 0;
  for (LinkId l = 0; l < t.link_count(); ++l) {
    const LinkInfo& link = t.link(l);
    EXPECT_LE(link.achievable, link.bandwidth);
    if (link.kind == "nvlink") {
      ++nvlink;
      EXPECT_EQ(link.tech, LinkTech::nvlink3);
      EXPECT_DOUBLE_EQ(link.achievable, 300e9 * 20.0 / 25.0);  // NCCL topo.h: 20 of 25 GB/s per NVLink3
    }
    if (link.kind == "nic") {
      ++nic;
      EXPECT_DOUBLE_EQ(link.achievable, 24e9);  // nccl-per-nic-hdr: 24 of 25 GB/s
    }
  }
  EXPECT_EQ(nvlink, 2 * 16);
  EXPECT_EQ(nic, 2 * 16);
  // Generic links keep their line rate.
  EXPECT_DOUBLE_EQ(achievable_fraction(LinkTech::generic), 1.0);
  EXPECT_LT(achievable_fraction(LinkTech::efa), achievable_fraction(LinkTech::ib_edr));
  EXPECT_EQ(link_tech_from_string("ib-ndr"), LinkTech::ib_ndr);
  EXPECT_FALSE(link_tech_from_string("ib-xdr").has_value());
}

// Without NCCL the flows still see the achievable bandwidth, not the line rate.
TEST(LinkTech, IdealCollectivesRunAtAchievableBandwidth) {
  NodeSpec n = nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 0);
  const Topology t = build_cluster(n, nodes(1));
  const CollectiveResult r = run_collective(t, all_reduce(t.accelerators(), kGiB, Algorithm::ring));
  EXPECT_EQ(r.protocol, Protocol::simple);
  EXPECT_NEAR(r.busbw, 240e9, 0.01 * 240e9);
}

TEST(RingSearch, CubeMeshRingsUseEveryNvlinkOfEveryGpu) {
  const auto units = cube_mesh_units();
  const auto rings = search_rings(units);
  // Six NVLinks per V100: six rings, each taking one link unit out of and into every GPU.
  ASSERT_EQ(rings.size(), 6u);
  std::vector<std::vector<int>> used(8, std::vector<int>(8, 0));
  for (const auto& r : rings) {
    ASSERT_EQ(r.size(), 8u);
    EXPECT_EQ(std::set<int>(r.begin(), r.end()).size(), 8u);  // every GPU once
    for (std::size_t i = 0; i < r.size(); ++i) ++used[r[i]][r[(i + 1) % r.size()]];
  }
  for (int a = 0; a < 8; ++a) {
    int out = 0;
    for (int b = 0; b < 8; ++b) {
      EXPECT_LE(used[a][b], units[a][b]) << a << " -> " << b;  // only NVLinks, within their units
      out += used[a][b];
    }
    EXPECT_EQ(out, 6) << "GPU " << a;
  }
}

TEST(RingSearch, NoRingWhereNvlinkDoesNotCloseOne) {
  // Two bridged pairs (0-1, 2-3): no cycle through all four over NVLink.
  std::vector<std::vector<int>> u(4, std::vector<int>(4, 0));
  u[0][1] = u[1][0] = u[2][3] = u[3][2] = 1;
  EXPECT_TRUE(search_rings(u).empty());
  // One pair: one ring, both directions of the bridge.
  EXPECT_EQ(search_rings({{0, 1}, {1, 0}}).size(), 1u);
}

// One DGX-1 (V100 cube-mesh, 6 x 25 GB/s NVLink2 per GPU): rings that follow the mesh give every
// GPU its six links, 6 x 20 GB/s achievable = 120 GB/s busbw at 1 GiB; one ring in rank order
// would cross single links (and pairs 3-4, 7-0 that are not linked), 20 GB/s or less.
TEST(RingSearch, DgxOneAllReduceUsesAllSixNvlinks) {
  const NodeSpec n = nccl_node(NodeKind::hybrid_cube_mesh, 25e9, LinkTech::nvlink2, 70);
  const Topology t = build_cluster(n, nodes(1));
  const CollectiveResult r = run_collective(t, all_reduce(t.accelerators(), kGiB, Algorithm::ring, Protocol::simple));
  EXPECT_NEAR(r.busbw, 120e9, 0.02 * 120e9);
}

// PCIe boards with NVLink pairs: two GPUs talk over their bridge; four cross PCIe, whose
// achievable bandwidth bounds the ring.
TEST(RingSearch, NvlinkPairsBoardUsesTheBridgeThenPcie) {
  NodeSpec n = nccl_node(NodeKind::nvlink_pairs, 300e9, LinkTech::nvlink3, 80);
  n.accelerators = 4;
  const Topology t = build_cluster(n, nodes(1));
  const auto& acc = t.accelerators();
  const CollectiveResult pair = run_collective(t, all_reduce({acc[0], acc[1]}, kGiB, Algorithm::ring, Protocol::simple));
  EXPECT_NEAR(pair.busbw, 240e9, 0.02 * 240e9);
  const CollectiveResult four = run_collective(t, all_reduce(acc, kGiB, Algorithm::ring, Protocol::simple));
  EXPECT_NEAR(four.busbw, 32e9 * 0.75, 0.02 * 24e9);  // NCCL's PCI_BW fraction of Gen4 x16
}

// H100 node with NVLink SHARP: NVLS moves n (p+1)/p per GPU port at 5/6 of the achievable
// NVLink, busbw 2 (p-1)/p x 5/6 x 370.8 / ((p+1)/p) = 480.7 GB/s for p = 8; the tuner picks it
// for large messages. An A100 node has no NVLS: automatic never picks it, forcing it fails.
TEST(InNetworkReduction, NvlsOnlyOnSwitchesThatReduce) {
  NodeSpec h = nccl_node(NodeKind::nvswitch, 450e9, LinkTech::nvlink4, 90);
  h.nvls_bandwidth = 5.0 / 6.0 * 450e9 * achievable_fraction(LinkTech::nvlink4);
  const Topology th = build_cluster(h, nodes(1));
  const CollectiveResult nvls = run_collective(th, all_reduce(th.accelerators(), 8 * kGiB));
  EXPECT_EQ(nvls.algorithm, Algorithm::nvls);
  EXPECT_EQ(nvls.protocol, Protocol::simple);
  EXPECT_NEAR(nvls.busbw, 480.7e9, 0.01 * 480.7e9);
  const CollectiveResult ring = run_collective(th, all_reduce(th.accelerators(), 8 * kGiB, Algorithm::ring));
  EXPECT_NEAR(ring.busbw, 370.8e9, 0.01 * 370.8e9);

  const NodeSpec a = nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80);
  const Topology ta = build_cluster(a, nodes(1));
  for (double bytes : {1e3, 1e6, 8 * kGiB}) {
    EXPECT_NE(run_collective(ta, all_reduce(ta.accelerators(), bytes)).algorithm, Algorithm::nvls);
  }
  EXPECT_THROW(run_collective(ta, all_reduce(ta.accelerators(), kGiB, Algorithm::nvls)), std::invalid_argument);
}

// InfiniBand SHARP: with CollNet each rank sends its n/g shard to the switch once and gets the
// reduction back, so a node's single NIC carries n per direction instead of a ring's 2(p-1)/p n.
TEST(InNetworkReduction, CollnetHalvesWhatCrossesTheNic) {
  const NodeSpec n = with_nics(nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80), 1, 25e9, LinkTech::ib_hdr);
  FabricSpec f = nodes(2);
  const Topology plain = build_cluster(n, f);
  EXPECT_THROW(run_collective(plain, all_reduce(plain.accelerators(), kGiB, Algorithm::collnet)), std::invalid_argument);
  f.sharp_bandwidth = 24e9;
  const Topology sharp = build_cluster(n, f);
  const CollectiveResult ring = run_collective(sharp, all_reduce(sharp.accelerators(), kGiB, Algorithm::ring));
  const CollectiveResult collnet = run_collective(sharp, all_reduce(sharp.accelerators(), kGiB, Algorithm::collnet));
  EXPECT_EQ(collnet.algorithm, Algorithm::collnet);
  EXPECT_NEAR(ring.busbw, 24e9, 0.02 * 24e9);
  EXPECT_NEAR(collnet.busbw / ring.busbw, 2.0 * 15 / 16, 0.03);
}

// The protocol's fraction is paid in bytes on the wire: LL moves 4 wire bytes per payload byte,
// so a forced LL ring at 8 GiB is 4x slower than Simple; and small messages are latency-bound
// at NCCL's LL latency.
// One DGX-A100-like node (8 GPUs on NVSwitch, NVLink3) and an 8 GiB ring all-reduce forced to
// `protocol` on it: large enough that the latencies (Simple's measured 6.2 us per step included)
// are under 0.2% of the time, so the bus bandwidths compare the protocols' fractions.
Topology ampere_nvswitch_node() { return build_cluster(nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80), nodes(1)); }
CollectiveResult forced_ring(const Topology& t, Protocol protocol) {
  return run_collective(t, all_reduce(t.accelerators(), 8 * kGiB, Algorithm::ring, protocol));
}

// Simple's ring steps inside an Ampere NVLink node take 6.2 us more than NCCL's tuner charges
// (fitted on vidur's DGX A100 rows): a forced Simple ring of 1 KiB takes the tuner's latency
// plus 14 x 6.2 us, and the time it adds from 1 KiB to 64 MiB moves bytes at the tuner's bandwidth.
TEST(Protocols, SimpleOnAmpereNvlinkPaysItsMeasuredStepLatency) {
  const Topology t = ampere_nvswitch_node();
  const auto time_of = [&](double bytes) {
    return run_collective(t, all_reduce(t.accelerators(), bytes, Algorithm::ring, Protocol::simple)).time_s;
  };
  const double small = 1024, large = 64.0 * (1 << 20);
  const double launch = nccl_launch_overhead_s(80);
  // The tuner's Simple ring latency on one NVLink node: 8.4 + 14 x 3.4 us; measured 14 x 6.2 more.
  EXPECT_NEAR(time_of(small) - launch, (8.4 + 14 * (3.4 + 6.2)) * 1e-6, 0.5e-6);
  // The bandwidth term is the tuner's: the extra is the same constant at 64 MiB.
  const double bandwidth_term = time_of(large) - time_of(small);
  const double busbw = large * 2 * 7 / 8 / bandwidth_term;
  EXPECT_NEAR(busbw, 240e9, 0.02 * 240e9);
}

TEST(Protocols, FractionsAndLatenciesShapeTheFlows) {
  const Topology t = ampere_nvswitch_node();
  const CollectiveResult simple = forced_ring(t, Protocol::simple);
  const CollectiveResult ll = forced_ring(t, Protocol::ll);
  EXPECT_EQ(ll.protocol, Protocol::ll);
  EXPECT_NEAR(simple.busbw / ll.busbw, 4.0, 0.05);
  const CollectiveResult tiny = run_collective(t, all_reduce(t.accelerators(), 8));
  EXPECT_EQ(tiny.protocol, Protocol::ll);
  EXPECT_NEAR(tiny.time_s, (6.6 + 14 * 0.6) * 1e-6 + nccl_launch_overhead_s(80), 0.5e-6);
}

// A forced LL128 ring on an Ampere NVSwitch node runs at the achieved fractions: its latency
// beyond the launch is 0.31 of the tuner's (14 + 14 x 1.9 us) and its bus bandwidth 0.60 of the
// tuner's 0.92 of the ring's.
TEST(Protocols, Ll128OnAmpereRunsAtItsAchievedBandwidthAndLatency) {
  const Topology t = ampere_nvswitch_node();
  const CollectiveResult simple = forced_ring(t, Protocol::simple);
  const CollectiveResult ll128 = forced_ring(t, Protocol::ll128);
  EXPECT_EQ(ll128.protocol, Protocol::ll128);
  EXPECT_NEAR(ll128.busbw / simple.busbw, 0.92 * 132.0 / 221.0, 0.01);
  const double bytes = 1024;  // latency-bound
  const CollectiveResult tiny = run_collective(t, all_reduce(t.accelerators(), bytes, Algorithm::ring, Protocol::ll128));
  const double launch = nccl_launch_overhead_s(80);
  EXPECT_NEAR(tiny.time_s - launch, (14 + 14 * 1.9) * 1e-6 * 12.4 / 40.6, 0.3e-6);
}

// NCCL over TCP sockets: each flow crossing a NIC is one CPU-copied stream (2.06 GB/s), so one
// GPU per node over 100 Gb/s gets the stream's rate; RDMA (EDR InfiniBand) gets 12.2 GB/s.
TEST(Transport, TcpIsSlowerThanRdmaBecauseEachStreamIsCpuBound) {
  NodeSpec n = with_nics(nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80), 1, 12.5e9, LinkTech::ib_edr);
  n.accelerators = 1;
  const Topology rdma = build_cluster(n, nodes(2));
  n.transport = Transport::tcp;
  const Topology tcp = build_cluster(n, nodes(2));
  const CollectiveResult r = run_collective(rdma, all_reduce(rdma.accelerators(), kGiB));
  const CollectiveResult s = run_collective(tcp, all_reduce(tcp.accelerators(), kGiB));
  EXPECT_NEAR(r.busbw, 12.2e9, 0.01 * 12.2e9);
  EXPECT_NEAR(s.busbw, kTcpStreamBandwidth, 0.01 * kTcpStreamBandwidth);
  // With many streams per NIC the CPU cap stops binding and TCP/IP framing remains (94%).
  n.socket_bandwidth = 100e9;
  const Topology fast = build_cluster(n, nodes(2));
  EXPECT_NEAR(run_collective(fast, all_reduce(fast.accelerators(), kGiB)).busbw, 12.5e9 * 1448 / 1538, 0.01 * 12.5e9);
  // Over TCP NCCL does not use LL128 across nodes (no GPUDirect).
  EXPECT_THROW(run_collective(tcp, all_reduce(tcp.accelerators(), kGiB, Algorithm::ring, Protocol::ll128)),
               std::invalid_argument);
}

// NCCL 2.0-2.3 built one ring per NIC: over TCP, 4 GPUs per node share that one stream, where
// NCCL's channels give each GPU's flow its own (4 x 2.06 GB/s over a 25 Gb/s NIC: the NIC
// binds). Over RDMA the ring count caps nothing.
TEST(Transport, OneRingPerNicHoldsANodesTcpTrafficToOneStream) {
  NodeSpec n = with_nics(nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80), 1, 3.125e9, LinkTech::roce);
  n.accelerators = 4;
  n.transport = Transport::tcp;
  const Topology channels = build_cluster(n, nodes(2));
  n.nccl_rings_per_nic = 1;
  const Topology one_ring = build_cluster(n, nodes(2));
  const double framed = 3.125e9 * 1448 / 1538;  // Ethernet framing of TCP/IP
  const CollectiveResult wide = run_collective(channels, all_reduce(channels.accelerators(), kGiB));
  const CollectiveResult narrow = run_collective(one_ring, all_reduce(one_ring.accelerators(), kGiB));
  // A ring across the two nodes crosses each NIC once each way with the whole ring's traffic:
  // the NIC's rate over the ring's per-NIC share of the bus bandwidth gives the time ratio.
  EXPECT_NEAR(narrow.time_s / wide.time_s, framed / kTcpStreamBandwidth, 0.03 * framed / kTcpStreamBandwidth);
  n.transport = Transport::rdma;
  const Topology rdma_one = build_cluster(n, nodes(2));
  n.nccl_rings_per_nic = 0;
  const Topology rdma = build_cluster(n, nodes(2));
  EXPECT_DOUBLE_EQ(run_collective(rdma_one, all_reduce(rdma_one.accelerators(), kGiB)).time_s,
                   run_collective(rdma, all_reduce(rdma.accelerators(), kGiB)).time_s);
  n.nccl_rings_per_nic = -1;
  EXPECT_THROW(build_cluster(n, nodes(2)), std::invalid_argument);
}

// resolve_collective names the choice without running it, and rejects what cannot run.
TEST(Protocols, ResolveNamesTheChoiceAndRejectsWhatCannotRun) {
  const NodeSpec n = nccl_node(NodeKind::nvswitch, 300e9, LinkTech::nvlink3, 80);
  const Topology t = build_cluster(n, nodes(1));
  const CollectiveChoice c = resolve_collective(t, all_reduce(t.accelerators(), 4 << 20));
  EXPECT_EQ(c.algorithm, Algorithm::ring);
  EXPECT_EQ(c.protocol, Protocol::ll128);
  CollectiveSpec hd = all_reduce(t.accelerators(), 1e6, Algorithm::halving_doubling, Protocol::ll);
  EXPECT_THROW(resolve_collective(t, hd), std::invalid_argument);  // protocols are NCCL's algorithms'
  hd.protocol = Protocol::automatic;
  EXPECT_EQ(resolve_collective(t, hd).protocol, Protocol::simple);
}

}  // namespace
}  // namespace dlsim::network
