// Fabric routing schemes (routing.hpp): D-mod-K on k-ary fat-trees keeps rings and every other
// shift permutation off shared links, so a ring of nodes runs at the bandwidth of one
// non-blocking switch; ECMP's per-flow hash makes flows collide and the collision cost shows
// against the balanced reference; each fabric kind's default; determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/collectives.hpp"
#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "network/topology_builders.hpp"
#include "sim/engine.hpp"

namespace dlsim::network {
namespace {

NodeSpec dgx_like(int accelerators, int nics) {
  NodeSpec n;
  n.kind = NodeKind::nvswitch;
  n.accelerators = accelerators;
  n.link_bandwidth = 300e9;
  n.nics = nics;
  n.nic_bandwidth = 25e9;  // 200 Gbps HDR
  n.pcie_bandwidth = 32e9;
  return n;
}

FabricSpec fabric_of(FabricKind kind, int nodes, std::optional<RoutingScheme> routing = std::nullopt) {
  FabricSpec f;
  f.kind = kind;
  f.nodes = nodes;
  f.link_bandwidth = 25e9;
  f.routing = routing;
  return f;
}

// One collective alone on `topology`, routed by `scheme`; also hands back the most shared link.
struct Outcome {
  CollectiveResult result;
  Routing::SharedLink shared;
};
Outcome run(const Topology& topology, RoutingScheme scheme, Algorithm algorithm = Algorithm::ring,
        double bytes = 1024.0 * 1024 * 1024) {
  sim::Engine engine;
  FlowNetwork flows(engine, topology);
  Routing routing(topology, scheme);
  Collectives collectives(engine, flows, routing, topology);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.algorithm = algorithm;
  spec.bytes = bytes;
  spec.ranks = topology.accelerators();
  Outcome out;
  collectives.start(spec, [&out](const CollectiveResult& r) { out.result = r; });
  engine.run();
  out.shared = routing.most_shared_link();
  return out;
}

// The largest number of routes on one switch-to-switch link when every NIC-bearing rank r sends
// to rank r + shift (mod p), all at once.
int most_shared_for_shift(const Topology& t, RoutingScheme scheme, std::size_t shift) {
  Routing routing(t, scheme);
  const auto& acc = t.accelerators();
  for (std::size_t r = 0; r < acc.size(); ++r) routing.path(acc[r], acc[(r + shift) % acc.size()]);
  return routing.most_shared_link().routes;
}

TEST(FabricRouting, DefaultsPerFabricKind) {
  const NodeSpec node = dgx_like(8, 8);
  EXPECT_EQ(build_cluster(node, fabric_of(FabricKind::fat_tree, 4)).routing(), RoutingScheme::d_mod_k);
  EXPECT_EQ(build_cluster(node, fabric_of(FabricKind::rail_optimized, 4)).routing(), RoutingScheme::d_mod_k);
  EXPECT_EQ(build_cluster(node, fabric_of(FabricKind::leaf_spine, 4)).routing(), RoutingScheme::ecmp);
  EXPECT_EQ(build_cluster(node, fabric_of(FabricKind::single_switch, 4)).routing(), RoutingScheme::ecmp);
  EXPECT_EQ(default_routing(FabricKind::torus), RoutingScheme::ecmp);
  EXPECT_EQ(default_routing(FabricKind::wan), RoutingScheme::ecmp);
  // An explicit choice wins.
  EXPECT_EQ(build_cluster(node, fabric_of(FabricKind::fat_tree, 4, RoutingScheme::ecmp)).routing(), RoutingScheme::ecmp);
  EXPECT_EQ(build_cluster(node, fabric_of(FabricKind::leaf_spine, 4, RoutingScheme::d_mod_k)).routing(),
            RoutingScheme::d_mod_k);
  EXPECT_EQ(Routing(build_cluster(node, fabric_of(FabricKind::fat_tree, 4))).scheme(), RoutingScheme::d_mod_k);
}

TEST(FabricRouting, DModKNeedsATreeOfSwitches) {
  FabricSpec torus = fabric_of(FabricKind::torus, 4, RoutingScheme::d_mod_k);
  torus.dims = {4, 4};
  NodeSpec tpu = dgx_like(4, 1);
  tpu.kind = NodeKind::tpu_board;
  try {
    build_cluster(tpu, torus);
    ADD_FAILURE() << "d_mod_k accepted on a torus";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fabric.routing"), std::string::npos) << e.what();
  }
  FabricSpec wan = fabric_of(FabricKind::wan, 4, RoutingScheme::d_mod_k);
  wan.regions = 2;
  EXPECT_THROW(build_cluster(dgx_like(8, 1), wan), std::invalid_argument);
}

// D: tier-1 switch rank x most NICs on one tier-1 switch + position on it. A k = 4 fat-tree
// with one NIC per node: node n sits on edge n / 2 at position n % 2, so D = n.
TEST(FabricRouting, DestinationIndexIsLeafMajor) {
  const Topology t = build_cluster(dgx_like(1, 1), fabric_of(FabricKind::fat_tree, 16));
  Routing r(t);
  const auto nics = t.vertices_of_kind(VertexKind::nic);
  ASSERT_EQ(nics.size(), 16u);
  for (std::size_t n = 0; n < nics.size(); ++n) EXPECT_EQ(r.destination_index(nics[n]), static_cast<std::int64_t>(n));
  EXPECT_EQ(r.destination_index(t.accelerators()[0]), -1);
  // Rails: NIC j of node n in group g sits on rail switch (g, j) at position n % nodes_per_leaf.
  FabricSpec rails = fabric_of(FabricKind::rail_optimized, 8);
  rails.nodes_per_leaf = 4;
  const Topology rt = build_cluster(dgx_like(8, 8), rails);
  Routing rr(rt);
  const auto rail_nics = rt.vertices_of_kind(VertexKind::nic);
  for (VertexId nic : rail_nics) {
    const int n = rt.vertex(nic).node, j = rt.vertex(nic).local;
    EXPECT_EQ(rr.destination_index(nic), ((n / 4) * 8 + j) * 4 + n % 4) << rt.vertex(nic).name;
  }
}

// Under D-mod-K every route to one destination leaves the cores through the same core: the
// destination's traffic converges on one top switch (Zahavi 2010).
TEST(FabricRouting, DModKRoutesEachDestinationThroughOneCore) {
  const Topology t = build_cluster(dgx_like(1, 1), fabric_of(FabricKind::fat_tree, 16));
  Routing r(t);
  const auto& acc = t.accelerators();
  std::set<VertexId> cores_used;
  for (std::size_t dst = 0; dst < acc.size(); ++dst) {
    std::set<VertexId> cores;
    for (std::size_t src = 0; src < acc.size(); ++src) {
      for (LinkId l : r.path(acc[src], acc[dst])) {
        if (t.vertex(t.link(l).from).tier == 3) cores.insert(t.link(l).from);
      }
    }
    EXPECT_EQ(cores.size(), 1u) << "destination " << dst;
    cores_used.insert(cores.begin(), cores.end());
  }
  EXPECT_EQ(cores_used.size(), 4u);  // (k/2)^2 cores, each the top of k^3/4 / (k/2)^2 = 4 hosts
}

// Every shift permutation is congestion-free under D-mod-K on a full k-ary fat-tree: no
// switch-to-switch link carries two routes. ECMP's hash does put two or more on one link.
TEST(FabricRouting, ShiftPermutationsAreCongestionFreeUnderDModK) {
  for (int k : {4, 8}) {
    const int hosts = k * k * k / 4;
    const Topology t = build_cluster(dgx_like(1, 1), fabric_of(FabricKind::fat_tree, hosts));
    int ecmp_worst = 0;
    for (int shift = 1; shift < hosts; ++shift) {
      EXPECT_LE(most_shared_for_shift(t, RoutingScheme::d_mod_k, shift), 1) << "k " << k << " shift " << shift;
      ecmp_worst = std::max(ecmp_worst, most_shared_for_shift(t, RoutingScheme::ecmp, shift));
    }
    EXPECT_GE(ecmp_worst, 2) << "k " << k;
  }
}

// The case at test scale: nodes of 8 GPUs and 8 NICs fill a k = 8 fat-tree (128 ports,
// each node across two edge switches). The ring all-reduce crosses nodes rail to rail
// (collectives_plans.cpp), a shift by 8 of the NIC ports: under D-mod-K it runs as fast as on
// one non-blocking switch; under ECMP hash collisions slow it, and the balanced reference,
// which avoids them, is as fast as the switch again.
TEST(FabricRouting, RingOfNodesOnFatTreeRunsAtSingleSwitchBandwidth) {
  const NodeSpec node = dgx_like(8, 8);
  const Topology sw = build_cluster(node, fabric_of(FabricKind::single_switch, 16));
  const Topology ft = build_cluster(node, fabric_of(FabricKind::fat_tree, 16));
  ASSERT_EQ(ft.vertices_of_kind(VertexKind::nic).size(), 128u);
  const Outcome one_switch = run(sw, RoutingScheme::ecmp);
  const Outcome dmodk = run(ft, RoutingScheme::d_mod_k);
  const Outcome ecmp = run(ft, RoutingScheme::ecmp);
  const Outcome balanced = run(ft, RoutingScheme::balanced);
  // Only the fill latency differs (four more switch hops): well under 1% at 1 GiB.
  EXPECT_NEAR(dmodk.result.busbw, one_switch.result.busbw, 0.01 * one_switch.result.busbw);
  EXPECT_NEAR(balanced.result.busbw, one_switch.result.busbw, 0.01 * one_switch.result.busbw);
  EXPECT_EQ(dmodk.shared.routes, 1);
  EXPECT_EQ(balanced.shared.routes, 1);
  // ECMP: at least two flows on one link, at most half the rate for them, and the whole ring
  // waits for them.
  EXPECT_GE(ecmp.shared.routes, 2);
  EXPECT_LT(ecmp.result.busbw, 0.6 * one_switch.result.busbw);
  const double routing_cost = ecmp.result.time_s / balanced.result.time_s;
  EXPECT_GT(routing_cost, 1.6);
  // The cost is the most shared link's, not a product over links: no more than its route count.
  EXPECT_LE(routing_cost, ecmp.shared.routes * 1.01);
}

// A two-tier rail-optimized fabric: rings cross groups through the spines, one flow per rail
// switch uplink under D-mod-K.
TEST(FabricRouting, RailRingsAcrossGroupsStayCollisionFree) {
  FabricSpec rails = fabric_of(FabricKind::rail_optimized, 8);
  rails.nodes_per_leaf = 2;
  const NodeSpec node = dgx_like(8, 8);
  const Topology t = build_cluster(node, rails);
  const Outcome dmodk = run(t, RoutingScheme::d_mod_k);
  const Outcome one_switch = run(build_cluster(node, fabric_of(FabricKind::single_switch, 8)), RoutingScheme::ecmp);
  EXPECT_EQ(dmodk.shared.routes, 1);
  EXPECT_NEAR(dmodk.result.busbw, one_switch.result.busbw, 0.01 * one_switch.result.busbw);
}

// The same topology and scheme give the same paths and the same times, bit for bit, whatever
// the order of the queries (D-mod-K and ECMP depend on nothing but the pair and the flow key).
TEST(FabricRouting, Deterministic) {
  const Topology t = build_cluster(dgx_like(8, 8), fabric_of(FabricKind::fat_tree, 16));
  for (RoutingScheme scheme : {RoutingScheme::d_mod_k, RoutingScheme::ecmp, RoutingScheme::balanced}) {
    const Outcome a = run(t, scheme, Algorithm::ring, 256.0 * 1024 * 1024);
    const Outcome b = run(t, scheme, Algorithm::ring, 256.0 * 1024 * 1024);
    EXPECT_EQ(a.result.time_s, b.result.time_s) << to_string(scheme);
    EXPECT_EQ(a.shared.link, b.shared.link) << to_string(scheme);
    EXPECT_EQ(a.shared.routes, b.shared.routes) << to_string(scheme);
  }
  const auto& acc = t.accelerators();
  for (RoutingScheme scheme : {RoutingScheme::d_mod_k, RoutingScheme::ecmp}) {
    Routing forward(t, scheme), backward(t, scheme);
    for (std::size_t i = 0; i < acc.size(); ++i) forward.path(acc[i], acc[(i + 8) % acc.size()], i);
    for (std::size_t i = acc.size(); i-- > 0;) {
      EXPECT_EQ(backward.path(acc[i], acc[(i + 8) % acc.size()], i), forward.path(acc[i], acc[(i + 8) % acc.size()], i))
          << to_string(scheme) << " rank " << i;
    }
  }
}

// Between nodes a GPU sends through its own NIC and receives through its own NIC; no path
// passes through a third GPU to borrow its NIC. On a fat-tree whose edge switches hold half a
// node (k = 8: 4 ports), such a detour ties in length with the direct path and once put a
// ring's flows on NICs that carry their own rail's flow.
TEST(FabricRouting, CrossNodePathsUseTheirOwnNics) {
  FabricSpec rails = fabric_of(FabricKind::rail_optimized, 4);
  rails.nodes_per_leaf = 2;
  for (const FabricSpec& fabric : {fabric_of(FabricKind::fat_tree, 16), rails}) {
    const Topology t = build_cluster(dgx_like(8, 8), fabric);
    for (RoutingScheme scheme : {RoutingScheme::d_mod_k, RoutingScheme::ecmp, RoutingScheme::balanced}) {
      Routing r(t, scheme);
      const auto& acc = t.accelerators();
      for (VertexId a : acc) {
        for (VertexId b : acc) {
          if (t.vertex(a).node == t.vertex(b).node) continue;
          const Path& p = r.path(a, b, a * 7 + b);
          ASSERT_GE(p.size(), 3u);
          const VertexInfo& first_nic = t.vertex(t.link(p.front()).to);
          const VertexInfo& last_nic = t.vertex(t.link(p.back()).from);
          EXPECT_EQ(first_nic.kind, VertexKind::nic);
          EXPECT_EQ(first_nic.node, t.vertex(a).node);
          EXPECT_EQ(first_nic.local, t.vertex(a).local);  // 8 NICs for 8 GPUs: NIC i serves GPU i
          EXPECT_EQ(last_nic.node, t.vertex(b).node);
          EXPECT_EQ(last_nic.local, t.vertex(b).local);
          for (std::size_t i = 1; i < p.size(); ++i) {
            EXPECT_NE(t.vertex(t.link(p[i]).from).kind, VertexKind::accelerator) << to_string(scheme);
          }
        }
      }
    }
  }
}

TEST(FabricRouting, SchemeNames) {
  EXPECT_EQ(to_string(RoutingScheme::d_mod_k), "d-mod-k");
  EXPECT_EQ(to_string(RoutingScheme::ecmp), "ecmp");
  EXPECT_EQ(to_string(RoutingScheme::balanced), "balanced");
}

}  // namespace
}  // namespace dlsim::network
