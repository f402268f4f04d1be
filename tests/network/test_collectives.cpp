// Collectives on the flow network, checked against their alpha-beta closed forms on topologies
// built by hand so that every flow's bottleneck is known, plus the behaviours that the closed
// forms cannot show: busbw, rejection of bad groups, roots, the automatic rule, contention.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/collectives.hpp"
#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "network/topology.hpp"
#include "sim/engine.hpp"

namespace dlsim::network {
namespace {

using Kind = CollectiveKind;
using Algo = Algorithm;

// p accelerators, each on its own node with its own link (bandwidth, latency) to one switch:
// every flow crosses exactly two links, so a transfer sees alpha = 2 x latency and beta =
// bandwidth, and flows only compete on their endpoints' links.
struct Star {
  Topology topology;
  std::vector<VertexId> ranks;
  std::vector<LinkId> up;  // accelerator -> switch, per rank (switch -> accelerator is up + 1)
};

Star star(int p, double bandwidth, double latency) {
  Star s;
  const VertexId hub = s.topology.add_vertex({VertexKind::switch_, "switch", -1, -1, 1});
  for (int i = 0; i < p; ++i) {
    const VertexId v = s.topology.add_vertex({VertexKind::accelerator, "gpu" + std::to_string(i), i, 0, 0});
    s.ranks.push_back(v);
    s.up.push_back(s.topology.add_duplex_link(v, hub, bandwidth, latency, "fabric"));
  }
  return s;
}

// `nodes` nodes of `g` accelerators. Inside a node every accelerator links to a node switch
// (intra: 2 hops). Every accelerator also has its own NIC (PCIe link, then a NIC link to one
// global switch), so a rail-aligned inter-node transfer takes 4 hops: pcie, nic, nic, pcie.
// Shortest paths are unique: intra-node traffic never leaves the node.
struct TwoLevel {
  Topology topology;
  std::vector<VertexId> ranks;
};

struct Fabric {
  double intra_bw = 100e9, intra_lat = 1e-6;
  double pcie_bw = 50e9, pcie_lat = 0.5e-6;
  double nic_bw = 5e9, nic_lat = 2e-6;
  double alpha_intra() const { return 2 * intra_lat; }
  double alpha_inter() const { return 2 * pcie_lat + 2 * nic_lat; }
};

TwoLevel two_level(int nodes, int g, const Fabric& f) {
  TwoLevel t;
  const VertexId global = t.topology.add_vertex({VertexKind::switch_, "global", -1, -1, 1});
  for (int a = 0; a < nodes; ++a) {
    const VertexId nvswitch = t.topology.add_vertex({VertexKind::switch_, "nvswitch", -1, -1, 0});
    for (int j = 0; j < g; ++j) {
      const VertexId gpu = t.topology.add_vertex({VertexKind::accelerator, "gpu", a, j, 0});
      const VertexId nic = t.topology.add_vertex({VertexKind::nic, "nic", a, j, 0});
      t.topology.add_duplex_link(gpu, nvswitch, f.intra_bw, f.intra_lat, "nvlink");
      t.topology.add_duplex_link(gpu, nic, f.pcie_bw, f.pcie_lat, "pcie");
      t.topology.add_duplex_link(nic, global, f.nic_bw, f.nic_lat, "nic");
      t.ranks.push_back(gpu);
    }
  }
  return t;
}

CollectiveSpec make(Kind kind, Algo algo, double bytes, std::vector<VertexId> ranks, int root = 0, int shards = 1) {
  CollectiveSpec s;
  s.kind = kind;
  s.algorithm = algo;
  s.bytes = bytes;
  s.ranks = std::move(ranks);
  s.root = root;
  s.server_shards = shards;
  return s;
}

// FlowNetwork rounds every scheduled instant to the nanosecond: per phase, a flow's latency and
// its end are each rounded once (<= 0.5 ns each), and phases chain; 2 ns per phase, plus 1e-12
// relative for floating-point sums, bounds the difference from the exact closed form.
double tolerance(int phases, double expected) { return 2e-9 * phases + 1e-12 * expected; }

int log2i(int p) { return static_cast<int>(std::lround(std::log2(p))); }
int floor_log2i(int p) { return static_cast<int>(std::floor(std::log2(p))); }
bool power_of_two(int p) { return (p & (p - 1)) == 0; }

struct Case {
  Kind kind;
  Algo algo;
  int phases_per_log2;  // 0: one phase; k: k log2(p) phases (halving-doubling; + 2 for the fold)
  bool power_of_two_only;
  int root;
  int shards;
};

// One test body, every flat algorithm: the flow-level time equals the closed form.
TEST(CollectiveClosedForm, EveryFlatAlgorithmMatchesItsClosedFormOnAStar) {
  const double bw = 10e9, lat = 1.5e-6;
  const std::vector<Case> cases = {
      {Kind::all_reduce, Algo::ring, 0, false, 0, 1},
      {Kind::all_reduce, Algo::double_binary_tree, 0, false, 0, 1},
      {Kind::all_reduce, Algo::halving_doubling, 2, false, 0, 1},  // folds a non-power of two
      {Kind::reduce_scatter, Algo::ring, 0, false, 0, 1},
      {Kind::reduce_scatter, Algo::halving_doubling, 1, true, 0, 1},
      {Kind::all_gather, Algo::ring, 0, false, 0, 1},
      {Kind::all_gather, Algo::halving_doubling, 1, true, 0, 1},
      {Kind::broadcast, Algo::ring, 0, false, 1, 1},
      {Kind::broadcast, Algo::double_binary_tree, 0, false, 1, 1},
      {Kind::reduce, Algo::ring, 0, false, 1, 1},
      {Kind::reduce, Algo::double_binary_tree, 0, false, 1, 1},
      {Kind::all_to_all, Algo::direct, 0, false, 0, 1},
      {Kind::push_pull, Algo::parameter_server, 0, false, 0, 1},
      {Kind::push_pull, Algo::parameter_server, 0, false, 0, 2},
  };
  for (const Case& c : cases) {
    for (int p : {2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 32}) {
      if (c.power_of_two_only && (p & (p - 1)) != 0) continue;
      if (c.shards >= p) continue;
      const Star s = star(p, bw, lat);
      for (double bytes : {4e3, 3e7}) {
        const auto spec = make(c.kind, c.algo, bytes, s.ranks, c.root % p, c.shards);
        const CollectiveResult r = run_collective(s.topology, spec);
        const double expected =
            closed_form_time(c.kind, c.algo, bytes, p, 2 * lat, bw, 1, 0, 0, c.shards);
        const int phases = !c.phases_per_log2 ? 2
                           : power_of_two(p)  ? c.phases_per_log2 * log2i(p)
                                              : c.phases_per_log2 * floor_log2i(p) + 2;
        EXPECT_NEAR(r.time_s, expected, tolerance(phases, expected))
            << to_string(c.kind) << " " << to_string(c.algo) << " p=" << p << " bytes=" << bytes;
        EXPECT_EQ(r.algorithm, c.algo);
      }
    }
  }
}

TEST(CollectiveClosedForm, SendRecvIsOneFlow) {
  const Star s = star(2, 4e9, 3e-6);
  const CollectiveResult r = run_collective(s.topology, make(Kind::send_recv, Algo::automatic, 8e6, s.ranks));
  EXPECT_EQ(r.flows, 1u);
  EXPECT_EQ(r.algorithm, Algo::direct);
  EXPECT_NEAR(r.time_s, 6e-6 + 8e6 / 4e9, 2e-9);
  EXPECT_NEAR(r.time_s, closed_form_time(Kind::send_recv, Algo::direct, 8e6, 2, 6e-6, 4e9), 2e-9);
}

TEST(CollectiveClosedForm, HierarchicalMatchesOnTwoLevels) {
  const Fabric f;
  for (auto [nodes, g] : {std::pair{2, 4}, {3, 2}, {4, 4}, {1, 4}, {4, 1}}) {
    const TwoLevel t = two_level(nodes, g, f);
    const int p = nodes * g;
    for (Kind kind : {Kind::all_reduce, Kind::all_to_all}) {
      const double bytes = 64e6;
      const CollectiveResult r = run_collective(t.topology, make(kind, Algo::hierarchical, bytes, t.ranks));
      const double expected = closed_form_time(kind, Algo::hierarchical, bytes, p, f.alpha_intra(), f.intra_bw, g,
                                               f.alpha_inter(), f.nic_bw);
      EXPECT_NEAR(r.time_s, expected, tolerance(3, expected)) << to_string(kind) << " " << nodes << "x" << g;
    }
  }
}

// nccl-tests PERFORMANCE.md: a ring all-reduce's busbw is the bandwidth of the slowest ring link.
TEST(CollectiveBandwidth, RingAllReduceBusBandwidthIsTheLinkBandwidth) {
  const double bw = 25e9;
  for (int p : {2, 4, 8, 16}) {
    const Star s = star(p, bw, 0.0);  // no latency: the bandwidth term alone
    const CollectiveResult r = run_collective(s.topology, make(Kind::all_reduce, Algo::ring, 1 << 30, s.ranks));
    EXPECT_NEAR(r.busbw, bw, bw * 1e-6) << "p=" << p;
    EXPECT_NEAR(r.algbw, bw * p / (2.0 * (p - 1)), bw * 1e-6);
    EXPECT_EQ(r.flows, static_cast<std::size_t>(p));
  }
}

// ../shared/reference/measured.yaml nccl-maint-a100-intra: 8x A100 over NVSwitch reach about
// 230 GB/s all-reduce busbw (nccl-azure-nda100v4-allreduce-8g: 228 GB/s at 1 GB), from 12
// NVLinks of ~20 GB/s effective each (240 GB/s). With 240 GB/s per GPU link, a 1 GiB ring
// all-reduce must land within 5% of 230 GB/s: only its 14 steps of latency separate it from 240.
TEST(CollectiveBandwidth, RingOnAnA100NodeIsNearNcclTestsMeasurement) {
  const Star node = star(8, 240e9, 1e-6);  // the NVSwitch as the star's hub, ~1 us per NVLink hop
  const CollectiveResult r = run_collective(node.topology, make(Kind::all_reduce, Algo::ring, 1 << 30, node.ranks));
  EXPECT_NEAR(r.busbw, 230e9, 0.05 * 230e9);
  EXPECT_LT(r.busbw, 240e9);
}

// measured.yaml goyal17-halving-doubling: on 32 servers (50 GbE, one NIC each) Gloo's
// halving-doubling all-reduce ran about 3x faster than its ring, because it needs 2 log2(32) =
// 10 steps of latency instead of 62. For latency-bound buckets our model shows the same order.
TEST(CollectiveBandwidth, HalvingDoublingBeatsRingOnLatencyBoundMessagesLikeGoyal) {
  const Star s = star(32, 6.25e9, 5e-6);  // 50 Gb/s, 10 us per server-to-server transfer
  const auto time = [&](Algo algo, double bytes) {
    return run_collective(s.topology, make(Kind::all_reduce, algo, bytes, s.ranks)).time_s;
  };
  EXPECT_GT(time(Algo::ring, 64e3) / time(Algo::halving_doubling, 64e3), 3.0);
  // Bandwidth-bound, the two move the same bytes: the advantage fades.
  EXPECT_LT(time(Algo::ring, 1e9) / time(Algo::halving_doubling, 1e9), 1.01);
}

TEST(CollectiveBandwidth, BusFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Kind::all_reduce, 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Kind::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Kind::all_to_all, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Kind::broadcast, 8), 1.0);
}

TEST(CollectiveHierarchical, BeatsFlatRingAcrossNodesForLargeMessages) {
  const Fabric f;  // NVLink 100 GB/s inside, 5 GB/s NIC per GPU
  const TwoLevel t = two_level(2, 4, f);
  const double bytes = 256e6;
  const double ring = run_collective(t.topology, make(Kind::all_reduce, Algo::ring, bytes, t.ranks)).time_s;
  const double hier = run_collective(t.topology, make(Kind::all_reduce, Algo::hierarchical, bytes, t.ranks)).time_s;
  // The ring runs g = 4 channels, each carrying 2(p-1)/p n / g and leaving every node on its own
  // rail, so each NIC carries 2(p-1)/p n / g; the hierarchical one only 2(N-1)/N n / g = n / g
  // per NIC across nodes (plus fast NVLink phases).
  EXPECT_LT(hier, ring);
  // The ring itself: 14 steps of mean hop latency (6 intra, 2 inter hops per channel ring), and
  // 2(p-1)/p n / g through each NIC at its full rate (one flow per NIC and direction).
  const double fill = 14 * (6 * f.alpha_intra() + 2 * f.alpha_inter()) / 8;
  EXPECT_NEAR(ring, fill + 2.0 * 7 / 8 * bytes / 4 / f.nic_bw, tolerance(1, ring));
}

// Halving-doubling all-reduce on a non-power of two p: MPICH's fold (Thakur, Rabenseifner and
// Gropp 2005, section 4.4). On the star every transfer sees alpha = 2 lat and beta = bw, and no
// two flows of a phase share a link (each rank sends at most one flow and receives at most
// one), so by hand, with p' the largest power of two <= p and r = p - p':
//   fold:   r even ranks send n to their odd partners            alpha + n/beta
//   step k: p' survivors exchange n/2^(k+1), k = 0..log2(p')-1   alpha + n/(2^(k+1) beta) each
//   gather: the same steps retraced                              same again
//   unfold: r odd ranks send the n result back                   alpha + n/beta
// The steps sum to log2(p') alpha + (p'-1)/p' n/beta each way, so
//   T = (2 log2(p') + 2) alpha + (2 + 2 (p'-1)/p') n/beta,
// with 2 r + 2 log2(p') p' flows. For p = 3, 6, 12, 44: (p', r) = (2, 1), (4, 2), (8, 4), (32, 12).
TEST(CollectiveHalvingDoubling, FoldsNonPowersOfTwoAsMpich) {
  const double bw = 10e9, lat = 1.5e-6, alpha = 2 * lat;
  for (int p : {3, 6, 12, 44}) {
    const Star s = star(p, bw, lat);
    const int survivors = 1 << floor_log2i(p), levels = floor_log2i(p), r = p - survivors;
    for (double n : {4e3, 3e7}) {
      const double by_hand = (2.0 * levels + 2) * alpha + (2 + 2.0 * (survivors - 1) / survivors) * n / bw;
      const double closed = closed_form_time(Kind::all_reduce, Algo::halving_doubling, n, p, alpha, bw);
      EXPECT_NEAR(closed, by_hand, 1e-12 * by_hand) << "p=" << p;
      const CollectiveResult res = run_collective(s.topology, make(Kind::all_reduce, Algo::halving_doubling, n, s.ranks));
      EXPECT_NEAR(res.time_s, by_hand, tolerance(2 * levels + 2, by_hand)) << "p=" << p << " n=" << n;
      EXPECT_EQ(res.flows, static_cast<std::size_t>(2 * r + 2 * levels * survivors)) << "p=" << p;
      EXPECT_EQ(res.algorithm, Algo::halving_doubling);
    }
  }
  // The fold costs two full-vector steps: 3 ranks are slower than 4 on bandwidth-bound messages.
  const double three = closed_form_time(Kind::all_reduce, Algo::halving_doubling, 1e9, 3, 1e-6, 1e9);
  const double four = closed_form_time(Kind::all_reduce, Algo::halving_doubling, 1e9, 4, 1e-6, 1e9);
  EXPECT_GT(three, four);
}

// Power-of-two groups keep the plain algorithm: no fold, 2 log2(p) phases of p flows each.
TEST(CollectiveHalvingDoubling, PowersOfTwoDoNotFold) {
  for (int p : {2, 4, 8, 16}) {
    const Star s = star(p, 1e9, 1e-6);
    const CollectiveResult r = run_collective(s.topology, make(Kind::all_reduce, Algo::halving_doubling, 1e6, s.ranks));
    EXPECT_EQ(r.flows, static_cast<std::size_t>(2 * log2i(p) * p));
    EXPECT_DOUBLE_EQ(closed_form_time(Kind::all_reduce, Algo::halving_doubling, 1e6, p, 2e-6, 1e9),
                     2 * log2i(p) * 2e-6 + 2.0 * (p - 1) / p * 1e6 / 1e9);
  }
}

// Across nodes: every rank has its own NIC and sends and receives at most one flow per phase,
// so no flow shares a link and each transfer costs its own path: between the all-intra-node
// closed form (alpha_intra, NVLink) and the all-inter-node one (alpha_inter, NIC). The fold
// pairs ranks 2i, 2i+1, on the same node when nodes hold an even count, so there its two
// full-vector steps stay on NVLink and the time sits well below the upper bound.
TEST(CollectiveHalvingDoubling, RunsOnNonPowerOfTwoNodeCounts) {
  const Fabric f;
  const double n = 64e6;
  for (auto [nodes, g] : {std::pair{3, 4}, {3, 2}, {5, 1}}) {
    const TwoLevel t = two_level(nodes, g, f);
    const int p = nodes * g;
    const CollectiveResult r = run_collective(t.topology, make(Kind::all_reduce, Algo::halving_doubling, n, t.ranks));
    const double fast = closed_form_time(Kind::all_reduce, Algo::halving_doubling, n, p, f.alpha_intra(), f.intra_bw);
    const double slow = closed_form_time(Kind::all_reduce, Algo::halving_doubling, n, p, f.alpha_inter(), f.nic_bw);
    EXPECT_GE(r.time_s, fast - tolerance(2 * floor_log2i(p) + 2, fast)) << nodes << "x" << g;
    EXPECT_LE(r.time_s, slow + tolerance(2 * floor_log2i(p) + 2, slow)) << nodes << "x" << g;
    if (g % 2 == 0) {  // the fold on NVLink: at least the two n / nic_bw steps saved
      EXPECT_LT(r.time_s, slow - 2 * n / f.nic_bw + 2 * n / f.intra_bw + 1e-6) << nodes << "x" << g;
    }
  }
}

// Reduce-scatter and all-gather by halving-doubling have no fold: they still need a power of two.
TEST(CollectiveValidation, HalvingDoublingScatterAndGatherRejectNonPowersOfTwo) {
  for (int p : {3, 6, 12}) {
    const Star s = star(p, 1e9, 1e-6);
    for (Kind kind : {Kind::reduce_scatter, Kind::all_gather}) {
      EXPECT_THROW(run_collective(s.topology, make(kind, Algo::halving_doubling, 1e6, s.ranks)), std::invalid_argument);
      EXPECT_THROW(closed_form_time(kind, Algo::halving_doubling, 1e6, p, 1e-6, 1e9), std::invalid_argument);
    }
    EXPECT_NO_THROW(run_collective(s.topology, make(Kind::all_reduce, Algo::halving_doubling, 1e6, s.ranks)));
  }
}

TEST(CollectiveValidation, RejectsAlgorithmsAndGroupsThatDoNotApply) {
  const Star s = star(4, 1e9, 1e-6);
  EXPECT_THROW(run_collective(s.topology, make(Kind::all_to_all, Algo::ring, 1e6, s.ranks)), std::invalid_argument);
  EXPECT_THROW(run_collective(s.topology, make(Kind::reduce_scatter, Algo::double_binary_tree, 1e6, s.ranks)),
               std::invalid_argument);
  EXPECT_THROW(run_collective(s.topology, make(Kind::send_recv, Algo::direct, 1e6, s.ranks)), std::invalid_argument);
  EXPECT_THROW(run_collective(s.topology, make(Kind::broadcast, Algo::ring, 1e6, s.ranks, 4)), std::invalid_argument);
  EXPECT_THROW(run_collective(s.topology, make(Kind::push_pull, Algo::parameter_server, 1e6, s.ranks, 0, 4)),
               std::invalid_argument);
  EXPECT_THROW(run_collective(s.topology, make(Kind::all_reduce, Algo::ring, 1e6, {s.ranks[0], s.ranks[0]})),
               std::invalid_argument);
  EXPECT_THROW(run_collective(s.topology, make(Kind::all_reduce, Algo::ring, -1, s.ranks)), std::invalid_argument);
  // Uneven nodes cannot be split hierarchically.
  const TwoLevel t = two_level(2, 4, Fabric{});
  const std::vector<VertexId> uneven(t.ranks.begin(), t.ranks.begin() + 6);
  EXPECT_THROW(run_collective(t.topology, make(Kind::all_reduce, Algo::hierarchical, 1e6, uneven)),
               std::invalid_argument);
}

TEST(CollectiveAllToAll, DirectSendsEveryPairOneFlow) {
  for (int p : {2, 5, 16}) {
    const Star s = star(p, 1e9, 1e-6);
    sim::Engine engine;
    FlowNetwork network(engine, s.topology);
    Routing routing(s.topology);
    Collectives collectives(engine, network, routing, s.topology);
    std::optional<CollectiveResult> result;
    collectives.start(make(Kind::all_to_all, Algo::direct, 1e6, s.ranks),
                      [&](const CollectiveResult& r) { result = r; });
    engine.run();
    ASSERT_TRUE(result);
    EXPECT_EQ(network.flows_started(), static_cast<std::uint64_t>(p) * (p - 1));
    EXPECT_EQ(result->flows, static_cast<std::size_t>(p) * (p - 1));
  }
  // Rail-aligned two-phase: p(g-1) intra-node plus p(N-1) rail flows.
  const TwoLevel t = two_level(4, 4, Fabric{});
  const CollectiveResult r = run_collective(t.topology, make(Kind::all_to_all, Algo::hierarchical, 1e6, t.ranks));
  EXPECT_EQ(r.flows, 16u * 3 + 16u * 3);
}

// A broadcast root only sends and a reduce root only receives, for both algorithms.
TEST(CollectiveRoots, BroadcastRootSendsReduceRootReceives) {
  const int p = 6;
  const double bw = 1e9, bytes = 1e8;
  for (Algo algo : {Algo::ring, Algo::double_binary_tree}) {
    for (Kind kind : {Kind::broadcast, Kind::reduce}) {
      for (int root : {0, 4}) {
        const Star s = star(p, bw, 1e-6);
        sim::Engine engine;
        FlowNetwork network(engine, s.topology);
        Routing routing(s.topology);
        Collectives collectives(engine, network, routing, s.topology);
        bool done = false;
        collectives.start(make(kind, algo, bytes, s.ranks, root), [&](const CollectiveResult&) { done = true; });
        engine.run_until(sim::Time::from_seconds(0.5 * bytes / bw));  // mid-transfer
        const double out = network.link_load(s.up[root]);
        const double in = network.link_load(s.up[root] + 1);
        const std::string what = to_string(kind) + " " + to_string(algo) + " root " + std::to_string(root);
        if (kind == Kind::broadcast) {
          EXPECT_NEAR(out, bw, 1e-6 * bw) << what;  // the root streams at full rate ...
          EXPECT_EQ(in, 0.0) << what;              // ... and never receives
        } else {
          EXPECT_NEAR(in, bw, 1e-6 * bw) << what;
          EXPECT_EQ(out, 0.0) << what;
        }
        engine.run();
        EXPECT_TRUE(done) << what;
      }
    }
  }
}

TEST(CollectiveAutomatic, ResolvesToTheDocumentedChoice) {
  const double KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  // All-reduce: trees below 256 KiB x max(1, nodes - 1), then hierarchical across nodes with
  // several ranks each, else ring.
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 64 * KiB, 8, 1), Algo::double_binary_tree);
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 1 * GiB, 8, 1), Algo::ring);
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 64 * KiB, 2, 1), Algo::ring);
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 200 * KiB, 16, 2), Algo::double_binary_tree);
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 1 * MiB, 16, 2), Algo::hierarchical);
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 8 * MiB, 64, 64), Algo::double_binary_tree);  // < 15.75 MiB
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 64 * MiB, 64, 64), Algo::ring);
  EXPECT_EQ(choose_algorithm(Kind::all_reduce, 1 * GiB, 4096, 512), Algo::hierarchical);
  EXPECT_EQ(choose_algorithm(Kind::reduce_scatter, 1 * KiB, 64, 8), Algo::ring);
  EXPECT_EQ(choose_algorithm(Kind::broadcast, 1 * KiB, 8, 1), Algo::double_binary_tree);
  EXPECT_EQ(choose_algorithm(Kind::broadcast, 1 * GiB, 8, 1), Algo::ring);
  EXPECT_EQ(choose_algorithm(Kind::all_to_all, 1 * MiB, 16, 2), Algo::hierarchical);
  EXPECT_EQ(choose_algorithm(Kind::all_to_all, 1 * MiB, 8, 1), Algo::direct);
  EXPECT_EQ(choose_algorithm(Kind::push_pull, 1 * MiB, 8, 1), Algo::parameter_server);

  // run_collective resolves from the topology's layout, and falls back to ring where nodes
  // are uneven.
  const TwoLevel t = two_level(2, 4, Fabric{});
  EXPECT_EQ(run_collective(t.topology, make(Kind::all_reduce, Algo::automatic, 64 * MiB, t.ranks)).algorithm,
            Algo::hierarchical);
  EXPECT_EQ(run_collective(t.topology, make(Kind::all_reduce, Algo::automatic, 4 * KiB, t.ranks)).algorithm,
            Algo::double_binary_tree);
  const std::vector<VertexId> uneven(t.ranks.begin(), t.ranks.begin() + 6);
  EXPECT_EQ(run_collective(t.topology, make(Kind::all_reduce, Algo::automatic, 64 * MiB, uneven)).algorithm,
            Algo::ring);
  // The closed form resolves the same way.
  EXPECT_DOUBLE_EQ(closed_form_time(Kind::all_reduce, Algo::automatic, 64 * MiB, 8, 1e-6, 1e10, 4, 5e-6, 1e9),
                   closed_form_time(Kind::all_reduce, Algo::hierarchical, 64 * MiB, 8, 1e-6, 1e10, 4, 5e-6, 1e9));
}

// Two all-reduces started together on the same ranks share every link: each takes about twice
// as long as alone (exactly twice the bandwidth term; the latency term is not shared).
TEST(CollectiveContention, TwoCollectivesOnTheSameLinksSlowEachOther) {
  const Star s = star(8, 10e9, 1e-6);
  const auto spec = make(Kind::all_reduce, Algo::ring, 512e6, s.ranks);
  const double alone = run_collective(s.topology, spec).time_s;
  sim::Engine engine;
  FlowNetwork network(engine, s.topology);
  Routing routing(s.topology);
  Collectives collectives(engine, network, routing, s.topology);
  std::vector<double> times;
  for (int i = 0; i < 2; ++i) collectives.start(spec, [&](const CollectiveResult& r) { times.push_back(r.time_s); });
  engine.run();
  ASSERT_EQ(times.size(), 2u);
  const double latency = 2 * 7 * 2e-6;
  for (double t : times) {
    EXPECT_GT(t, 1.9 * alone);
    EXPECT_NEAR(t - latency, 2 * (alone - latency), 1e-6 * alone);
  }
}

TEST(CollectiveEdgeCases, OneRankCompletesAtOnceWithNoFlows) {
  const Star s = star(1, 1e9, 1e-6);
  for (Algo algo : {Algo::ring, Algo::double_binary_tree, Algo::halving_doubling, Algo::hierarchical}) {
    const CollectiveResult r = run_collective(s.topology, make(Kind::all_reduce, algo, 1e6, s.ranks));
    EXPECT_EQ(r.time_s, 0.0);
    EXPECT_EQ(r.flows, 0u);
    EXPECT_EQ(r.busbw, 0.0);
  }
}

TEST(CollectiveEdgeCases, CompletionMayStartTheNextCollective) {
  const Star s = star(4, 1e9, 1e-6);
  sim::Engine engine;
  FlowNetwork network(engine, s.topology);
  Routing routing(s.topology);
  Collectives collectives(engine, network, routing, s.topology);
  const auto spec = make(Kind::all_reduce, Algo::halving_doubling, 1e6, s.ranks);
  int finished = 0;
  std::function<void(const CollectiveResult&)> again = [&](const CollectiveResult&) {
    if (++finished < 3) collectives.start(spec, again);
  };
  collectives.start(spec, again);
  engine.run();
  EXPECT_EQ(finished, 3);
  const double one = closed_form_time(Kind::all_reduce, Algo::halving_doubling, 1e6, 4, 2e-6, 1e9);
  EXPECT_NEAR(engine.now().seconds(), 3 * one, 3 * tolerance(4, one));
}

// Collectives keeps the plans it resolved (collectives.cpp): the same spec again reuses its plan,
// and specs that differ in any field that decides a plan (bytes, ranks, their order, the root,
// the algorithm) each get their own. Run one after another on one Collectives object, every
// collective takes exactly what it takes alone on a fresh one.
TEST(CollectivePlans, RepeatedAndNeighbouringSpecsEachTakeTheirOwnTime) {
  const TwoLevel t = two_level(2, 4, Fabric{});
  std::vector<VertexId> reversed(t.ranks.rbegin(), t.ranks.rend());
  const std::vector<CollectiveSpec> specs = {
      make(Kind::all_reduce, Algo::automatic, 8e6, t.ranks),
      make(Kind::all_reduce, Algo::automatic, 8e6, t.ranks),  // again: the memo's plan
      make(Kind::all_reduce, Algo::automatic, 4e6, t.ranks),
      make(Kind::all_reduce, Algo::ring, 8e6, t.ranks),
      make(Kind::all_reduce, Algo::hierarchical, 8e6, t.ranks),
      make(Kind::all_reduce, Algo::automatic, 8e6, reversed),
      make(Kind::broadcast, Algo::automatic, 8e6, t.ranks, 0),
      make(Kind::broadcast, Algo::automatic, 8e6, t.ranks, 5),
      make(Kind::send_recv, Algo::automatic, 8e6, {t.ranks[0], t.ranks[4]}),
      make(Kind::send_recv, Algo::automatic, 8e6, {t.ranks[4], t.ranks[0]}),
      make(Kind::all_reduce, Algo::automatic, 4e6, t.ranks),  // again, after others
  };
  sim::Engine engine;
  FlowNetwork network(engine, t.topology);
  Routing routing(t.topology);
  Collectives collectives(engine, network, routing, t.topology);
  for (const CollectiveSpec& spec : specs) {
    std::optional<CollectiveResult> shared;
    collectives.start(spec, [&shared](const CollectiveResult& r) { shared = r; });
    engine.run();
    ASSERT_TRUE(shared.has_value());
    const CollectiveResult alone = run_collective(t.topology, spec);
    EXPECT_EQ(shared->time_s, alone.time_s) << "bytes " << spec.bytes << ", kind " << static_cast<int>(spec.kind);
    EXPECT_EQ(shared->algorithm, alone.algorithm);
    EXPECT_EQ(shared->protocol, alone.protocol);
    EXPECT_EQ(shared->flows, alone.flows);
  }
  // A spec the planner refuses is refused again, not served from the memo of its neighbours.
  CollectiveSpec bad = specs[0];
  bad.bytes = std::nan("");
  EXPECT_THROW(collectives.start(bad, [](const CollectiveResult&) {}), std::invalid_argument);
  bad.bytes = -1;
  EXPECT_THROW(collectives.start(bad, [](const CollectiveResult&) {}), std::invalid_argument);
  // The neighbours really differ, so the memo could not have served one for another.
  EXPECT_NE(run_collective(t.topology, specs[0]).time_s, run_collective(t.topology, specs[2]).time_s);
  EXPECT_NE(run_collective(t.topology, specs[3]).algorithm, run_collective(t.topology, specs[4]).algorithm);
}

}  // namespace
}  // namespace dlsim::network
