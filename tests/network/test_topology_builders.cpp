// Builders: vertex and link counts derived by hand, names and indices, the DGX-1 NVLink wiring,
// bisection bandwidth (closed form, cross-checked by a max-flow over the built graph), custom
// topologies and the rejection of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/topology_builders.hpp"

namespace dlsim::network {
namespace {

struct Counts {
  std::size_t accelerators, nics, switches, links;
  bool operator==(const Counts&) const = default;
};
void PrintTo(const Counts& c, std::ostream* os) {
  *os << "{" << c.accelerators << ", " << c.nics << ", " << c.switches << ", " << c.links << "}";
}

Counts counts(const Topology& t) {
  return {t.vertices_of_kind(VertexKind::accelerator).size(), t.vertices_of_kind(VertexKind::nic).size(),
          t.vertices_of_kind(VertexKind::switch_).size(), t.link_count()};
}

VertexId by_name(const Topology& t, const std::string& name) {
  for (VertexId v = 0; v < t.vertex_count(); ++v) {
    if (t.vertex(v).name == name) return v;
  }
  throw std::out_of_range("no vertex named " + name);
}

// Total bandwidth of the links from a to b (0 when not linked).
double bandwidth_between(const Topology& t, VertexId a, VertexId b) {
  double total = 0;
  for (LinkId l : t.out_links(a)) total += t.link(l).to == b ? t.link(l).bandwidth : 0;
  return total;
}

NodeSpec node_of(NodeKind kind, int accelerators, int nics) {
  NodeSpec n;
  n.kind = kind;
  n.accelerators = accelerators;
  n.nics = nics;
  return n;
}

FabricSpec fabric_of(FabricKind kind, int nodes) {
  FabricSpec f;
  f.kind = kind;
  f.nodes = nodes;
  return f;
}

// Max flow (Edmonds-Karp) from a set of sources to a set of sinks over the directed links: the
// capacity of the cut between two chosen halves, to cross-check the closed-form bisection.
double max_flow(const Topology& t, const std::vector<VertexId>& from, const std::vector<VertexId>& to) {
  const std::size_t n = t.vertex_count() + 2, s = n - 2, sink = n - 1;
  struct Arc { std::size_t to; double cap; std::size_t rev; };
  std::vector<std::vector<Arc>> g(n);
  const auto arc = [&](std::size_t a, std::size_t b, double cap) {
    g[a].push_back({b, cap, g[b].size()});
    g[b].push_back({a, 0, g[a].size() - 1});
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (LinkId l = 0; l < t.link_count(); ++l) arc(t.link(l).from, t.link(l).to, t.link(l).bandwidth);
  for (VertexId v : from) arc(s, v, inf);
  for (VertexId v : to) arc(v, sink, inf);
  double total = 0;
  for (;;) {
    std::vector<std::pair<std::size_t, std::size_t>> parent(n, {n, 0});  // (vertex, arc index)
    std::deque<std::size_t> queue{s};
    parent[s] = {s, 0};
    while (!queue.empty() && parent[sink].first == n) {
      const std::size_t v = queue.front();
      queue.pop_front();
      for (std::size_t i = 0; i < g[v].size(); ++i) {
        if (g[v][i].cap > 1e-6 && parent[g[v][i].to].first == n) {
          parent[g[v][i].to] = {v, i};
          queue.push_back(g[v][i].to);
        }
      }
    }
    if (parent[sink].first == n) return total;
    double push = inf;
    for (std::size_t v = sink; v != s; v = parent[v].first) push = std::min(push, g[parent[v].first][parent[v].second].cap);
    for (std::size_t v = sink; v != s; v = parent[v].first) {
      Arc& a = g[parent[v].first][parent[v].second];
      a.cap -= push;
      g[a.to][a.rev].cap += push;
    }
    total += push;
  }
}

// The cut between the first and the second half of the ranks (whole nodes, aligned with leaves).
double halves_flow(const Topology& t) {
  const auto& acc = t.accelerators();
  const std::vector<VertexId> first(acc.begin(), acc.begin() + acc.size() / 2);
  const std::vector<VertexId> second(acc.begin() + acc.size() / 2, acc.end());
  return max_flow(t, first, second);
}

// ---- node designs ---------------------------------------------------------------------------

TEST(TopologyBuilders, NvswitchNodesOnOneSwitch) {
  const auto node = node_of(NodeKind::nvswitch, 8, 2);
  const Topology t = build_cluster(node, fabric_of(FabricKind::single_switch, 2));
  // Per node 8 GPUs, 2 NICs, 1 NVSwitch; one fabric switch. Duplex links per node: 8 NVLink +
  // 8 GPU-NIC PCIe = 16; plus 4 NIC links: 36 duplex, 72 directed.
  EXPECT_EQ(counts(t), (Counts{16, 4, 3, 72}));
  EXPECT_EQ(t.nodes(), 2);
  const VertexId g = by_name(t, "n1/gpu5");
  EXPECT_EQ(t.accelerators()[13], g);  // rank = node * 8 + local
  EXPECT_EQ(t.vertex(g).node, 1);
  EXPECT_EQ(t.vertex(g).local, 5);
  EXPECT_EQ(t.vertex(by_name(t, "n1/nic1")).local, 1);
  EXPECT_EQ(t.vertex(by_name(t, "switch0")).tier, 1);
  EXPECT_EQ(t.vertex(by_name(t, "switch0")).node, -1);
  EXPECT_EQ(t.vertex(by_name(t, "n0/nvswitch")).tier, 0);
  // GPU i uses NIC i * 2 / 8: GPUs 0-3 NIC 0, GPUs 4-7 NIC 1.
  EXPECT_EQ(bandwidth_between(t, by_name(t, "n0/gpu3"), by_name(t, "n0/nic0")), node.pcie_bandwidth);
  EXPECT_EQ(bandwidth_between(t, by_name(t, "n0/gpu4"), by_name(t, "n0/nic1")), node.pcie_bandwidth);
  EXPECT_EQ(bandwidth_between(t, by_name(t, "n0/gpu4"), by_name(t, "n0/nic0")), 0.0);
}

TEST(TopologyBuilders, HybridCubeMeshGivesEveryV100SixLinks) {
  const auto node = node_of(NodeKind::hybrid_cube_mesh, 8, 4);
  const Topology t = build_cluster(node, fabric_of(FabricKind::single_switch, 1));
  // 16 GPU pairs (6 in each quad + 4 across), 8 GPU-NIC, 4 NIC-switch: 28 duplex, 56 directed.
  EXPECT_EQ(counts(t), (Counts{8, 4, 1, 56}));
  for (VertexId g : t.accelerators()) {
    double nvlink = 0;
    int neighbours = 0;
    for (LinkId l : t.out_links(g)) {
      if (t.link(l).kind != "nvlink") continue;
      nvlink += t.link(l).bandwidth;
      ++neighbours;
    }
    EXPECT_DOUBLE_EQ(nvlink, 6 * node.link_bandwidth) << t.vertex(g).name;
    EXPECT_EQ(neighbours, 4) << t.vertex(g).name;
  }
  const auto between = [&](int a, int b) {
    return bandwidth_between(t, t.accelerators()[a], t.accelerators()[b]) / node.link_bandwidth;
  };
  EXPECT_DOUBLE_EQ(between(0, 3), 2);  // double links, as in the DGX-1V topology dump
  EXPECT_DOUBLE_EQ(between(0, 4), 2);
  EXPECT_DOUBLE_EQ(between(0, 1), 1);
  EXPECT_DOUBLE_EQ(between(2, 6), 1);
  EXPECT_DOUBLE_EQ(between(0, 5), 0);  // not linked: only i <-> i+4 across the quads
  EXPECT_DOUBLE_EQ(between(3, 4), 0);
}

TEST(TopologyBuilders, PcieSwitchesUnderTheHost) {
  // 8 GPUs: 4 per switch, 2 switches + host root. One NIC serves all 8, so it sits on the root.
  // Per node duplex: 8 GPU-switch + 2 switch-root + 1 NIC-root = 11; 2 nodes + 2 NIC links = 24.
  const Topology t8 = build_cluster(node_of(NodeKind::pcie, 8, 1), fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(counts(t8), (Counts{16, 2, 7, 48}));
  EXPECT_GT(bandwidth_between(t8, by_name(t8, "n0/nic0"), by_name(t8, "n0/host")), 0.0);
  EXPECT_GT(bandwidth_between(t8, by_name(t8, "n1/gpu5"), by_name(t8, "n1/pcie1")), 0.0);
  // 4 GPUs: 2 per switch; NIC j serves GPUs 2j, 2j+1, which share switch j, so it sits there.
  // Per node duplex: 4 + 2 + 2 = 8; 2 nodes + 4 NIC links = 20 duplex.
  const Topology t4 = build_cluster(node_of(NodeKind::pcie, 4, 2), fabric_of(FabricKind::single_switch, 2));
  EXPECT_EQ(counts(t4), (Counts{8, 4, 7, 40}));
  EXPECT_GT(bandwidth_between(t4, by_name(t4, "n1/nic1"), by_name(t4, "n1/pcie1")), 0.0);
  EXPECT_EQ(bandwidth_between(t4, by_name(t4, "n1/nic1"), by_name(t4, "n1/host")), 0.0);
}

TEST(TopologyBuilders, TpuBoardIsARing) {
  const Topology t = build_cluster(node_of(NodeKind::tpu_board, 4, 1), fabric_of(FabricKind::single_switch, 2));
  // Per node 4 ring + 4 chip-NIC links; plus 2 NIC links: 18 duplex.
  EXPECT_EQ(counts(t), (Counts{8, 2, 1, 36}));
  const VertexId c0 = by_name(t, "n1/tpu0");
  EXPECT_GT(bandwidth_between(t, c0, by_name(t, "n1/tpu1")), 0.0);
  EXPECT_GT(bandwidth_between(t, c0, by_name(t, "n1/tpu3")), 0.0);
  EXPECT_EQ(bandwidth_between(t, c0, by_name(t, "n1/tpu2")), 0.0);
}

// ---- fabrics --------------------------------------------------------------------------------

NodeSpec dgx() { return node_of(NodeKind::nvswitch, 8, 1); }  // 12.5e9 NIC, 16e9 PCIe

FabricSpec leaf_spine(int nodes, double oversubscription) {
  auto f = fabric_of(FabricKind::leaf_spine, nodes);
  f.nodes_per_leaf = 4;
  f.link_bandwidth = 12.5e9;
  f.oversubscription = oversubscription;
  return f;
}

TEST(TopologyBuilders, LeafSpineSpinesFollowTheOversubscription) {
  // 8 nodes, 4 per leaf: 2 leaves. Leaf downlink 4 x 12.5e9 = 50e9.
  // os 1: uplink 50e9 -> 4 spines of 12.5e9. Switches 8 NVSwitch + 2 + 4 = 14.
  // Duplex 8 x 16 (inside nodes) + 8 NIC + 2 x 4 leaf-spine = 144.
  const Topology t1 = build_cluster(dgx(), leaf_spine(8, 1));
  EXPECT_EQ(counts(t1), (Counts{64, 8, 14, 288}));
  EXPECT_DOUBLE_EQ(bandwidth_between(t1, by_name(t1, "leaf1"), by_name(t1, "spine3")), 12.5e9);
  EXPECT_EQ(t1.vertex(by_name(t1, "spine3")).tier, 2);
  // os 3: uplink 50e9 / 3 -> ceil(1.33) = 2 spines of 8.33e9; 8 + 2 + 2 switches, 140 duplex.
  const Topology t3 = build_cluster(dgx(), leaf_spine(8, 3));
  EXPECT_EQ(counts(t3), (Counts{64, 8, 12, 280}));
  EXPECT_DOUBLE_EQ(bandwidth_between(t3, by_name(t3, "leaf0"), by_name(t3, "spine1")), 50e9 / 3 / 2);
  // 5 spines asked for: 10e9 each, the leaf uplink still 50e9; 146 duplex.
  auto five = leaf_spine(8, 1);
  five.spines = 5;
  const Topology t5 = build_cluster(dgx(), five);
  EXPECT_EQ(counts(t5), (Counts{64, 8, 15, 292}));
  EXPECT_DOUBLE_EQ(bandwidth_between(t5, by_name(t5, "leaf0"), by_name(t5, "spine4")), 10e9);
  // One leaf joins everything: no spines.
  EXPECT_EQ(counts(build_cluster(dgx(), leaf_spine(4, 1))), (Counts{32, 4, 5, 2 * (64 + 4)}));
}

TEST(TopologyBuilders, FatTreeIsKAry) {
  const auto node = node_of(NodeKind::nvswitch, 1, 1);
  // 16 NICs fit k = 4 exactly (4^3/4 = 16). Switches: 16 NVSwitch + 4 pods x 4 + 4 cores = 36.
  // Duplex: 16 x 2 inside nodes + 16 NIC + k^3/4 edge-agg + k^3/4 agg-core = 32 + 16 + 32 = 80.
  const Topology t = build_cluster(node, fabric_of(FabricKind::fat_tree, 16));
  EXPECT_EQ(counts(t), (Counts{16, 16, 36, 160}));
  int tiers[4] = {0, 0, 0, 0};
  for (VertexId s : t.vertices_of_kind(VertexKind::switch_)) ++tiers[t.vertex(s).tier];
  EXPECT_EQ(tiers[1], 8);
  EXPECT_EQ(tiers[2], 8);
  EXPECT_EQ(tiers[3], 4);
  const VertexId core3 = by_name(t, "core3");  // core 3 links to aggregation switch 1 of each pod
  ASSERT_EQ(t.out_links(core3).size(), 4u);
  for (LinkId l : t.out_links(core3)) EXPECT_NE(t.vertex(t.link(l).to).name.find("/agg1"), std::string::npos);
  EXPECT_GT(bandwidth_between(t, by_name(t, "n5/nic0"), by_name(t, "pod1/edge0")), 0.0);  // ports 4, 5
  // 17 NICs need k = 6 (54 ports): 17 + 6 x 6 + 9 switches; 34 + 17 + 108 duplex.
  EXPECT_EQ(counts(build_cluster(node, fabric_of(FabricKind::fat_tree, 17))), (Counts{17, 17, 62, 318}));
}

FabricSpec rails(int nodes, double oversubscription) {
  auto f = fabric_of(FabricKind::rail_optimized, nodes);
  f.nodes_per_leaf = 2;
  f.link_bandwidth = 25e9;
  f.oversubscription = oversubscription;
  return f;
}
NodeSpec dgx_a100() {
  auto n = node_of(NodeKind::nvswitch, 8, 8);
  n.nic_bandwidth = 25e9;
  n.pcie_bandwidth = 32e9;
  return n;
}

TEST(TopologyBuilders, RailOptimizedWiresNicJToRailJ) {
  // 4 nodes, 2 per group: 2 groups x 8 rails = 16 rail switches. Rail uplink 2 x 25e9 = 50e9:
  // 2 spines. Switches 4 + 16 + 2 = 22. Duplex 4 x 16 + 32 NIC + 16 x 2 = 128.
  const Topology t = build_cluster(dgx_a100(), rails(4, 1));
  EXPECT_EQ(counts(t), (Counts{32, 32, 22, 256}));
  EXPECT_GT(bandwidth_between(t, by_name(t, "n3/nic5"), by_name(t, "rail5.g1")), 0.0);
  EXPECT_EQ(bandwidth_between(t, by_name(t, "n3/nic5"), by_name(t, "rail5.g0")), 0.0);
  EXPECT_DOUBLE_EQ(bandwidth_between(t, by_name(t, "rail5.g1"), by_name(t, "spine1")), 25e9);
}

FabricSpec torus(int nodes, std::vector<int> dims) {
  auto f = fabric_of(FabricKind::torus, nodes);
  f.dims = std::move(dims);
  f.link_bandwidth = 100e9;
  return f;
}

TEST(TopologyBuilders, TorusLinksNeighboursWithWrapAround) {
  const auto board = node_of(NodeKind::tpu_board, 4, 1);
  // 4x4: 4 lines of 4 links in each of 2 dimensions = 32 duplex; no NICs, no switches.
  const Topology t2 = build_cluster(board, torus(4, {4, 4}));
  EXPECT_EQ(counts(t2), (Counts{16, 0, 0, 64}));
  for (VertexId v : t2.accelerators()) EXPECT_EQ(t2.out_links(v).size(), 4u);
  EXPECT_GT(bandwidth_between(t2, t2.accelerators()[0], t2.accelerators()[3]), 0.0);   // x wraps
  EXPECT_GT(bandwidth_between(t2, t2.accelerators()[0], t2.accelerators()[12]), 0.0);  // y wraps
  // 4x4x4: 3 x 16 lines x 4 links = 192 duplex.
  EXPECT_EQ(counts(build_cluster(board, torus(16, {4, 4, 4}))), (Counts{64, 0, 0, 384}));
  // 2x4: size 2 gives one link per line: 4 x 1 + 2 x 4 = 12 duplex; degree 1 + 2 = 3.
  const Topology t24 = build_cluster(board, torus(2, {2, 4}));
  EXPECT_EQ(counts(t24), (Counts{8, 0, 0, 24}));
  for (VertexId v : t24.accelerators()) EXPECT_EQ(t24.out_links(v).size(), 3u);
}

TEST(TopologyBuilders, WanJoinsRegionsInAFullMesh) {
  auto f = fabric_of(FabricKind::wan, 4);
  f.regions = 2;
  // 4 nodes: 4 NVSwitch + 2 region switches; 64 + 4 NIC + 1 WAN duplex.
  EXPECT_EQ(counts(build_cluster(dgx(), f)), (Counts{32, 4, 6, 138}));
  f.nodes = 6;
  f.regions = 3;  // node n in region n * 3 / 6: 0 0 1 1 2 2; 96 + 6 + 3 duplex
  const Topology t = build_cluster(dgx(), f);
  EXPECT_EQ(counts(t), (Counts{48, 6, 9, 210}));
  EXPECT_GT(bandwidth_between(t, by_name(t, "n3/nic0"), by_name(t, "region1")), 0.0);
  EXPECT_DOUBLE_EQ(bandwidth_between(t, by_name(t, "region0"), by_name(t, "region2")), f.wan_bandwidth);
}

// ---- bisection ------------------------------------------------------------------------------

TEST(Bisection, MatchesHandValuesAndMaxFlow) {
  struct Case {
    const char* what;
    NodeSpec node;
    FabricSpec fabric;
    double expected;
  };
  auto pcie_bound = dgx_a100();
  pcie_bound.pcie_bandwidth = 16e9;  // 8 NICs of 25e9, each fed by one 16e9 GPU link
  const auto one_gpu = node_of(NodeKind::nvswitch, 1, 1);
  auto k4 = fabric_of(FabricKind::fat_tree, 16);
  auto k8 = fabric_of(FabricKind::fat_tree, 128);
  k4.link_bandwidth = k8.link_bandwidth = 12.5e9;
  const std::vector<Case> cases = {
      {"single switch: 2 nodes x 12.5e9", dgx(), fabric_of(FabricKind::single_switch, 4), 25e9},
      {"single switch, PCIe-bound: 2 x 8 x 16e9", pcie_bound, fabric_of(FabricKind::single_switch, 4), 256e9},
      {"leaf-spine os 1: 4 x 12.5e9", dgx(), leaf_spine(8, 1), 50e9},
      {"leaf-spine os 3: 4 x 12.5e9 / 3", dgx(), leaf_spine(8, 3), 50e9 / 3},
      {"fat-tree k=4: 8 x 12.5e9", one_gpu, k4, 100e9},
      {"fat-tree k=8: 64 x 12.5e9", one_gpu, k8, 800e9},
      {"rail os 1: 2 x 8 x 25e9", dgx_a100(), rails(4, 1), 400e9},
      {"rail os 2: 2 x 8 x 25e9 / 2", dgx_a100(), rails(4, 2), 200e9},
      {"torus 4x4: 8 links", node_of(NodeKind::tpu_board, 4, 1), torus(4, {4, 4}), 8 * 100e9},
      {"torus 4x4x4: 32 links", node_of(NodeKind::tpu_board, 4, 1), torus(16, {4, 4, 4}), 32 * 100e9},
      {"torus 2x4: 4 links", node_of(NodeKind::tpu_board, 4, 1), torus(2, {2, 4}), 4 * 100e9},
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(bisection_bandwidth(c.node, c.fabric), c.expected, 1e-6 * c.expected) << c.what;
    EXPECT_NEAR(halves_flow(build_cluster(c.node, c.fabric)), c.expected, 1e-6 * c.expected) << c.what;
  }
}

TEST(Bisection, RejectsWhatHasNoClosedForm) {
  auto wan = fabric_of(FabricKind::wan, 4);
  wan.regions = 2;
  EXPECT_THROW(bisection_bandwidth(dgx(), wan), std::invalid_argument);
  EXPECT_THROW(bisection_bandwidth(dgx(), fabric_of(FabricKind::single_switch, 3)), std::invalid_argument);
  EXPECT_THROW(bisection_bandwidth(dgx(), fabric_of(FabricKind::single_switch, 1)), std::invalid_argument);
  EXPECT_THROW(bisection_bandwidth(node_of(NodeKind::nvswitch, 1, 1), torus(9, {3, 3})), std::invalid_argument);
}

// ---- custom ---------------------------------------------------------------------------------

TEST(BuildCustom, BuildsWhatItIsGiven) {
  const Topology t = build_custom(
      {{"a", VertexKind::accelerator, 0}, {"b", VertexKind::accelerator, 0}, {"c", VertexKind::accelerator, 1},
       {"s", VertexKind::switch_, -1}},
      {{"a", "s", 10e9, 1e-6}, {"b", "s", 10e9, 1e-6}, {"c", "s", 5e9, 0}});
  EXPECT_EQ(counts(t), (Counts{3, 0, 1, 6}));
  EXPECT_EQ(t.nodes(), 2);
  EXPECT_EQ(t.vertex(by_name(t, "b")).local, 1);
  EXPECT_EQ(t.vertex(by_name(t, "c")).local, 0);
  EXPECT_DOUBLE_EQ(bandwidth_between(t, by_name(t, "s"), by_name(t, "c")), 5e9);
}

void expect_custom_rejects(const std::vector<CustomVertex>& v, const std::vector<CustomLink>& l,
                           const std::string& field) {
  try {
    build_custom(v, l);
    ADD_FAILURE() << "accepted; expected a complaint about " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(BuildCustom, RejectsBadNamesAndLinks) {
  const std::vector<CustomVertex> two = {{"a", VertexKind::switch_, -1}, {"b", VertexKind::switch_, -1}};
  expect_custom_rejects({{"a", VertexKind::switch_, -1}, {"a", VertexKind::nic, 0}}, {}, "vertices[1].name");
  expect_custom_rejects({{"", VertexKind::switch_, -1}}, {}, "vertices[0].name");
  expect_custom_rejects({{"g", VertexKind::accelerator, -1}}, {}, "vertices[0].node");
  expect_custom_rejects(two, {{"a", "zz", 1e9, 0}}, "links[0].b");
  expect_custom_rejects(two, {{"a", "b", 1e9, 0}, {"q", "b", 1e9, 0}}, "links[1].a");
  expect_custom_rejects(two, {{"a", "a", 1e9, 0}}, "links[0].b");
  expect_custom_rejects(two, {{"a", "b", 0, 0}}, "links[0].bandwidth");
  expect_custom_rejects(two, {{"a", "b", 1e9, -1}}, "links[0].latency_s");
}

// ---- validation -----------------------------------------------------------------------------

struct BadInput {
  const char* field;
  std::function<void(NodeSpec&, FabricSpec&)> spoil;
};

TEST(TopologyBuilders, RejectEveryBadField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  using N = NodeSpec;
  using F = FabricSpec;
  const std::vector<BadInput> bad = {
      {"node.accelerators", [](N& n, F&) { n.accelerators = 0; }},
      {"node.accelerators", [](N& n, F&) { n.accelerators = kMaxAcceleratorsPerNode + 1; }},
      {"node.accelerators", [](N& n, F&) { n.kind = NodeKind::hybrid_cube_mesh, n.accelerators = 4; }},
      {"node.accelerators", [](N& n, F&) { n.kind = NodeKind::tpu_board, n.accelerators = 6; }},
      {"node.nics", [](N& n, F&) { n.nics = 0; }},
      {"node.nics", [](N& n, F&) { n.nics = 9; }},
      {"node.link_bandwidth", [](N& n, F&) { n.link_bandwidth = 0; }},
      {"node.link_bandwidth", [=](N& n, F&) { n.link_bandwidth = nan; }},
      {"node.link_bandwidth", [=](N& n, F&) { n.link_bandwidth = inf; }},
      {"node.link_latency_s", [](N& n, F&) { n.link_latency_s = -1e-6; }},
      {"node.nic_bandwidth", [](N& n, F&) { n.nic_bandwidth = -5; }},
      {"node.nic_latency_s", [=](N& n, F&) { n.nic_latency_s = nan; }},
      {"node.pcie_bandwidth", [](N& n, F&) { n.pcie_bandwidth = 0; }},
      {"node.pcie_latency_s", [](N& n, F&) { n.pcie_latency_s = -1; }},
      {"fabric.nodes", [](N&, F& f) { f.nodes = 0; }},
      {"fabric.link_bandwidth", [](N&, F& f) { f.link_bandwidth = 0; }},
      {"fabric.link_latency_s", [](N&, F& f) { f.link_latency_s = -1; }},
      {"fabric.oversubscription", [](N&, F& f) { f.oversubscription = 0.5; }},
      {"fabric.oversubscription", [=](N&, F& f) { f.oversubscription = nan; }},
      {"fabric.nodes_per_leaf", [](N&, F& f) { f.nodes_per_leaf = 0; }},
      {"fabric.spines", [](N&, F& f) { f.spines = -1; }},
      {"fabric.link_bandwidth", [](N&, F& f) { f.kind = FabricKind::leaf_spine, f.link_bandwidth = 1; }},
      {"fabric.fat_tree_k", [](N&, F& f) { f.fat_tree_k = -2; }},
      {"fabric.fat_tree_k", [](N&, F& f) { f.kind = FabricKind::fat_tree, f.fat_tree_k = 3; }},
      {"fabric.fat_tree_k", [](N&, F& f) { f.kind = FabricKind::fat_tree, f.fat_tree_k = 4, f.nodes = 17; }},
      {"fabric.dims", [](N&, F& f) { f.kind = FabricKind::torus, f.dims = {16}; }},
      {"fabric.dims", [](N&, F& f) { f.kind = FabricKind::torus, f.dims = {2, 2, 2, 2}; }},
      {"fabric.dims", [](N&, F& f) { f.kind = FabricKind::torus, f.dims = {4, 8}; }},
      {"fabric.dims[i]", [](N&, F& f) { f.kind = FabricKind::torus, f.dims = {0, 16}; }},
      {"fabric.regions", [](N&, F& f) { f.regions = 0; }},
      {"fabric.regions", [](N&, F& f) { f.kind = FabricKind::wan, f.regions = 3; }},
      {"fabric.wan_bandwidth", [](N&, F& f) { f.wan_bandwidth = 0; }},
      {"fabric.wan_latency_s", [](N&, F& f) { f.wan_latency_s = -1; }},
  };
  for (const auto& b : bad) {
    NodeSpec node = dgx();  // 2 nodes x 8 = 16 accelerators: dims {4, 4} would be right
    FabricSpec fabric = fabric_of(FabricKind::single_switch, 2);
    b.spoil(node, fabric);
    for (const auto& call : {std::function<void()>([&] { build_cluster(node, fabric); }),
                             std::function<void()>([&] { bisection_bandwidth(node, fabric); })}) {
      try {
        call();
        ADD_FAILURE() << "accepted a bad " << b.field;
      } catch (const std::invalid_argument& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(std::string(b.field) + " must be"), std::string::npos) << message;
      }
    }
  }
}

}  // namespace
}  // namespace dlsim::network
