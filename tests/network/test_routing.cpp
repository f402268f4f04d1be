// Routing over the built topologies: hop counts between chosen accelerators (worked out by hand
// from the wiring in topology_builders.cpp), ECMP spreading and stability, well-formed paths,
// and unreachable destinations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/routing.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::network {
namespace {

VertexId by_name(const Topology& t, const std::string& name) {
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    if (t.vertex(v).name == name) return v;
  }
  throw std::out_of_range("no vertex named " + name);
}

NodeSpec node_of(NodeKind kind, int accelerators, int nics) {
  NodeSpec n;
  n.kind = kind;
  n.accelerators = accelerators;
  n.nics = nics;
  return n;
}

FabricSpec fabric_of(FabricKind kind, int nodes, int nodes_per_leaf = 16) {
  FabricSpec f;
  f.kind = kind;
  f.nodes = nodes;
  f.nodes_per_leaf = nodes_per_leaf;
  return f;
}

// Hops between two named vertices.
int hops(const Topology& t, const std::string& a, const std::string& b) {
  Routing r(t);
  return r.hops(by_name(t, a), by_name(t, b));
}

// A path starts at `from`, each link starts where the previous one ended, it ends at `to`, and it
// is as long as the hop count.
void expect_well_formed(const Topology& t, Routing& r, VertexId from, VertexId to, std::uint64_t key) {
  const Path p = r.path(from, to, key);
  ASSERT_EQ(static_cast<int>(p.size()), r.hops(from, to));
  if (from == to) return;
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(t.link(p.front()).from, from);
  for (std::size_t i = 1; i < p.size(); ++i) EXPECT_EQ(t.link(p[i - 1]).to, t.link(p[i]).from);
  EXPECT_EQ(t.link(p.back()).to, to);
}

TEST(Routing, HopsInsideNodes) {
  const Topology nv = build_cluster(node_of(NodeKind::nvswitch, 8, 1), fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(hops(nv, "n0/gpu0", "n0/gpu5"), 2);  // through the NVSwitch
  EXPECT_EQ(hops(nv, "n0/gpu0", "n0/gpu0"), 0);
  const Topology dgx1 = build_cluster(node_of(NodeKind::hybrid_cube_mesh, 8, 4), fabric_of(FabricKind::single_switch, 1));
  EXPECT_EQ(hops(dgx1, "n0/gpu0", "n0/gpu3"), 1);  // same quad
  EXPECT_EQ(hops(dgx1, "n0/gpu0", "n0/gpu4"), 1);  // i <-> i+4
  EXPECT_EQ(hops(dgx1, "n0/gpu0", "n0/gpu5"), 2);  // no direct link
  EXPECT_EQ(hops(dgx1, "n0/gpu3", "n0/gpu4"), 2);
  const Topology pcie = build_cluster(node_of(NodeKind::pcie, 8, 1), fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(hops(pcie, "n0/gpu0", "n0/gpu3"), 2);  // same PCIe switch
  EXPECT_EQ(hops(pcie, "n0/gpu0", "n0/gpu4"), 4);  // switch, host root, switch
  const Topology tpu = build_cluster(node_of(NodeKind::tpu_board, 4, 1), fabric_of(FabricKind::single_switch, 1));
  EXPECT_EQ(hops(tpu, "n0/tpu0", "n0/tpu2"), 2);   // across the ring
  EXPECT_EQ(hops(tpu, "n0/tpu0", "n0/tpu3"), 1);   // ring wraps
}

TEST(Routing, HopsAcrossSwitchedFabrics) {
  const auto dgx = node_of(NodeKind::nvswitch, 8, 1);
  // GPU, NIC, switch, NIC, GPU.
  const Topology one = build_cluster(dgx, fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(hops(one, "n0/gpu3", "n1/gpu6"), 4);
  // PCIe node, NIC on the root: GPU, switch, host, NIC, switch, NIC, host, switch, GPU.
  const Topology pcie = build_cluster(node_of(NodeKind::pcie, 8, 1), fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(hops(pcie, "n0/gpu0", "n1/gpu0"), 8);
  // NIC on the GPU's PCIe switch: GPU, switch, NIC, switch, NIC, switch, GPU.
  const Topology pcie4 = build_cluster(node_of(NodeKind::pcie, 4, 2), fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(hops(pcie4, "n0/gpu0", "n1/gpu1"), 6);
  // Leaf-spine, 4 nodes per leaf: same leaf 4; leaf, spine, leaf 6.
  const Topology ls = build_cluster(dgx, fabric_of(FabricKind::leaf_spine, 8, 4));
  EXPECT_EQ(hops(ls, "n0/gpu0", "n3/gpu7"), 4);
  EXPECT_EQ(hops(ls, "n0/gpu0", "n4/gpu0"), 6);
  // Fat-tree k=4, one NIC per node, 2 per edge switch, 4 per pod: same edge 4, same pod 6
  // (edge, agg, edge), other pod 8 (edge, agg, core, agg, edge).
  const Topology ft = build_cluster(node_of(NodeKind::nvswitch, 1, 1), fabric_of(FabricKind::fat_tree, 16));
  EXPECT_EQ(hops(ft, "n0/gpu0", "n1/gpu0"), 4);
  EXPECT_EQ(hops(ft, "n0/gpu0", "n3/gpu0"), 6);
  EXPECT_EQ(hops(ft, "n0/gpu0", "n4/gpu0"), 8);
  EXPECT_EQ(hops(ft, "n7/gpu0", "n15/gpu0"), 8);
  // Rails, 2 nodes per group, 8 NICs: same rail same group 4; same rail other group 6 (rail,
  // spine, rail); other rail, same group 6 (through a spine or a node's NVSwitch).
  const Topology rail = build_cluster(node_of(NodeKind::nvswitch, 8, 8), fabric_of(FabricKind::rail_optimized, 4, 2));
  EXPECT_EQ(hops(rail, "n0/gpu2", "n1/gpu2"), 4);
  EXPECT_EQ(hops(rail, "n0/gpu2", "n3/gpu2"), 6);
  EXPECT_EQ(hops(rail, "n0/gpu2", "n1/gpu5"), 6);
}

TEST(Routing, WanCrossesOneWanLink) {
  auto f = fabric_of(FabricKind::wan, 4);
  f.regions = 2;  // nodes 0, 1 in region 0; 2, 3 in region 1
  const Topology t = build_cluster(node_of(NodeKind::nvswitch, 8, 1), f);
  EXPECT_EQ(hops(t, "n0/gpu0", "n1/gpu0"), 4);
  EXPECT_EQ(hops(t, "n0/gpu0", "n2/gpu0"), 5);  // GPU, NIC, region, region, NIC, GPU
  Routing r(t);
  const Path p = r.path(by_name(t, "n0/gpu0"), by_name(t, "n3/gpu1"));
  int wan_links = 0;
  for (LinkId l : p) wan_links += t.link(l).kind == "wan";
  EXPECT_EQ(wan_links, 1);
  EXPECT_GE(r.latency(p), f.wan_latency_s);
  EXPECT_DOUBLE_EQ(r.bottleneck(p), f.wan_bandwidth);
}

// Torus hops are the wrap-around Manhattan distance: sum over dimensions of min(|d|, size - |d|).
void expect_torus_distances(int nodes, const std::vector<int>& dims) {
  FabricSpec f = fabric_of(FabricKind::torus, nodes);
  f.dims = dims;
  const Topology t = build_cluster(node_of(NodeKind::tpu_board, 4, 1), f);
  Routing r(t);
  const auto& acc = t.accelerators();
  for (std::size_t a = 0; a < acc.size(); ++a) {
    for (std::size_t b = 0; b < acc.size(); ++b) {
      int expected = 0;
      std::size_t stride = 1;
      for (int size : dims) {
        const int d = std::abs(static_cast<int>((a / stride) % size) - static_cast<int>((b / stride) % size));
        expected += std::min(d, size - d);
        stride *= static_cast<std::size_t>(size);
      }
      ASSERT_EQ(r.hops(acc[a], acc[b]), expected) << "ranks " << a << " and " << b;
    }
  }
}

TEST(Routing, TorusDistancesWrapAround) {
  expect_torus_distances(4, {4, 4});       // e.g. rank 0 to rank 3: 1 hop, to rank 10: 4 hops
  expect_torus_distances(16, {4, 4, 4});
  expect_torus_distances(2, {2, 4});
  expect_torus_distances(6, {3, 8});
}

TEST(Routing, EcmpSpreadsOverEverySpineAndIsStable) {
  auto f = fabric_of(FabricKind::leaf_spine, 8, 4);
  f.link_bandwidth = 3.125e9;  // leaf uplink 4 x 12.5e9 -> 16 spines
  const Topology t = build_cluster(node_of(NodeKind::nvswitch, 8, 1), f);
  const VertexId from = by_name(t, "n0/gpu0"), to = by_name(t, "n5/gpu3");
  std::set<VertexId> used;
  Routing r(t);
  for (std::uint64_t key = 0; key < 256; ++key) {
    const Path p = r.path(from, to, key);
    ASSERT_EQ(p.size(), 6u);
    used.insert(t.link(p[3]).from);  // GPU->NIC, NIC->leaf, leaf->spine, spine->leaf, ...
    EXPECT_EQ(t.vertex(t.link(p[3]).from).tier, 2);
    EXPECT_EQ(p, r.path(from, to, key));
    Routing fresh(t);  // the choice depends on nothing but (from, to, key)
    EXPECT_EQ(p, fresh.path(from, to, key));
  }
  EXPECT_EQ(used.size(), 16u);
}

TEST(Routing, EcmpSpreadsOverFatTreeCores) {
  auto f = fabric_of(FabricKind::fat_tree, 16);
  f.routing = RoutingScheme::ecmp;  // a fat-tree's default is d_mod_k: one path per destination
  const Topology t = build_cluster(node_of(NodeKind::nvswitch, 1, 1), f);
  Routing r(t);
  std::set<VertexId> cores;
  for (std::uint64_t key = 0; key < 256; ++key) {
    const Path p = r.path(by_name(t, "n0/gpu0"), by_name(t, "n12/gpu0"), key);
    ASSERT_EQ(p.size(), 8u);
    cores.insert(t.link(p[4]).from);  // GPU, NIC, edge, agg, core, ...
  }
  EXPECT_EQ(cores.size(), 4u);
}

// A cluster of every builder: node kinds and fabrics (small enough for all pairs).
std::vector<std::pair<NodeSpec, FabricSpec>> every_builder() {
  std::vector<std::pair<NodeSpec, FabricSpec>> clusters = {
      {node_of(NodeKind::hybrid_cube_mesh, 8, 2), fabric_of(FabricKind::single_switch, 2)},
      {node_of(NodeKind::pcie, 8, 2), fabric_of(FabricKind::leaf_spine, 4, 2)},
      {node_of(NodeKind::tpu_board, 4, 2), fabric_of(FabricKind::fat_tree, 5)},
      {node_of(NodeKind::nvswitch, 2, 2), fabric_of(FabricKind::fat_tree, 12)},
      {node_of(NodeKind::nvswitch, 4, 4), fabric_of(FabricKind::rail_optimized, 4, 2)},
  };
  auto wan = fabric_of(FabricKind::wan, 3);
  wan.regions = 3;
  clusters.push_back({node_of(NodeKind::nvswitch, 2, 1), wan});
  auto torus = fabric_of(FabricKind::torus, 4);
  torus.dims = {4, 2, 2};
  clusters.push_back({node_of(NodeKind::tpu_board, 4, 1), torus});
  return clusters;
}

TEST(Routing, PathsAreContiguousOnEveryBuilder) {
  for (const auto& [node, fabric] : every_builder()) {
    const Topology t = build_cluster(node, fabric);
    Routing r(t);
    for (VertexId a : t.accelerators()) {
      for (VertexId b : t.accelerators()) expect_well_formed(t, r, a, b, a * 31 + b);
    }
  }
}

// The pruned search (the bidirectional bound, routing.hpp) hands out exactly the paths of the
// unpruned reference: between every pair of vertices (accelerators, NICs, switches) of every
// builder, under each scheme, asked in the same order (balanced routes depend on the order).
TEST(Routing, PrunedSearchGivesTheReferencePaths) {
  int compared = 0;
  for (const auto& [node, fabric] : every_builder()) {
    const Topology t = build_cluster(node, fabric);
    for (RoutingScheme scheme : {RoutingScheme::ecmp, RoutingScheme::d_mod_k, RoutingScheme::balanced}) {
      Routing pruned(t, scheme), reference(t, scheme);
      reference.set_pruning(false);
      for (VertexId a = 0; a < t.vertex_count(); ++a) {
        for (VertexId b = 0; b < t.vertex_count(); ++b) {
          const int hops = reference.hops(a, b);
          ASSERT_EQ(pruned.hops(a, b), hops) << t.vertex(a).name << " -> " << t.vertex(b).name;
          if (hops < 0) continue;
          const std::uint64_t key = a * 7919u + b;
          ASSERT_EQ(pruned.path(a, b, key), reference.path(a, b, key)) << t.vertex(a).name << " -> " << t.vertex(b).name;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(Routing, UnreachableDestinationThrows) {
  const Topology t = build_custom({{"a", VertexKind::accelerator, 0}, {"b", VertexKind::accelerator, 0},
                                   {"c", VertexKind::accelerator, 1}, {"d", VertexKind::accelerator, 1}},
                                  {{"a", "b", 1e9, 0}, {"c", "d", 1e9, 0}});
  Routing r(t);
  EXPECT_EQ(r.hops(by_name(t, "a"), by_name(t, "b")), 1);
  EXPECT_EQ(r.hops(by_name(t, "a"), by_name(t, "c")), -1);
  EXPECT_THROW(r.path(by_name(t, "a"), by_name(t, "d")), std::invalid_argument);
  EXPECT_TRUE(r.path(by_name(t, "c"), by_name(t, "c")).empty());
}

TEST(Routing, VertexIdsOutOfRangeThrow) {
  const Topology t = build_cluster(node_of(NodeKind::nvswitch, 2, 1), fabric_of(FabricKind::single_switch, 1));
  Routing r(t);
  const auto past_end = static_cast<VertexId>(t.vertex_count());
  EXPECT_THROW(r.hops(0, past_end), std::invalid_argument);  // once wrote past the end of a vector
  EXPECT_THROW(r.path(0, past_end + 1000), std::invalid_argument);
  EXPECT_ANY_THROW(r.hops(past_end, 0));
}

}  // namespace
}  // namespace dlsim::network

namespace dlsim::network {
namespace {

// GPU -> NVSwitch -> GPU and GPU -> NIC -> GPU are both two hops; the NVLink path is wider
// and must win, or intra-node collectives would crawl over PCIe.
TEST(RoutingWidth, IntraNodeTrafficStaysOnNvlink) {
  NodeSpec node;
  node.kind = NodeKind::nvswitch;
  node.accelerators = 8;
  node.link_bandwidth = 300e9;
  node.nics = 1;
  node.pcie_bandwidth = 32e9;
  FabricSpec fabric;
  fabric.nodes = 2;
  const Topology t = build_cluster(node, fabric);
  Routing routing(t);
  const auto& gpus = t.accelerators();
  for (std::uint64_t key = 0; key < 16; ++key) {
    for (std::size_t j = 1; j < 8; ++j) {
      const Path& p = routing.path(gpus[0], gpus[j], key);
      ASSERT_EQ(p.size(), 2u);
      EXPECT_EQ(routing.bottleneck(p), 300e9) << "gpu0 -> gpu" << j << " key " << key;
    }
  }
  // Between nodes the NIC is the only way: the path is as wide as the PCIe/NIC bottleneck.
  const Path& across = routing.path(gpus[0], gpus[8]);
  EXPECT_LE(routing.bottleneck(across), 32e9);
}

}  // namespace
}  // namespace dlsim::network
