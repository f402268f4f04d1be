// The builders named in topology_builders.hpp. A cluster is built in two steps: each node's
// internal wiring, which hands back its accelerators and NICs, then the fabric that joins the
// NICs (or, for a torus, the accelerators themselves). Nodes are added one after another with
// their accelerators first, so accelerator ranks come out node-major.
//
// Names: "n3/gpu5" ("n3/tpu1" on a TPU board), "n3/nic0", "n3/nvswitch", "n3/host" (PCIe root),
// "n3/pcie1"; fabric switches "switch0", "leaf2", "spine0", "pod1/edge0", "pod1/agg0", "core3",
// "rail1.g0" (rail 1 of node group 0), "region0". Switches inside a node have tier 0.
#include "network/topology_builders.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "network/topology_builders_detail.hpp"

namespace dlsim::network {
namespace {

struct NodePorts {
  std::vector<VertexId> accelerators;
  std::vector<VertexId> nics;
};

std::string in_node(int n, const std::string& what) { return "n" + std::to_string(n) + "/" + what; }

VertexId add_switch(Topology& t, std::string name, int tier) {
  return t.add_vertex({VertexKind::switch_, std::move(name), -1, -1, tier});
}

// The links of a node, with their technology (link_tech.hpp) setting what flows get of them.
LinkSpec spec_of(double bandwidth, double latency_s, const char* kind, LinkTech tech) {
  LinkSpec s;
  s.bandwidth = bandwidth;
  s.latency_s = latency_s;
  s.kind = kind;
  s.tech = tech;
  s.efficiency = achievable_fraction(tech);
  return s;
}
LinkSpec nvlink_spec(const NodeSpec& node, double bandwidth) {
  return spec_of(bandwidth, node.link_latency_s, "nvlink", node.link_tech);
}
LinkSpec pcie_spec(double bandwidth, double latency_s, LinkTech tech) { return spec_of(bandwidth, latency_s, "pcie", tech); }
// TCP sockets: Ethernet framing whatever the NIC could do, and one CPU-copied stream per flow;
// with a fixed number of NCCL rings per NIC (older NCCL), that many streams in all.
LinkSpec nic_spec(const NodeSpec& node) {
  const bool tcp = node.transport == Transport::tcp;
  LinkSpec s = spec_of(node.nic_bandwidth, node.nic_latency_s, "nic", tcp ? LinkTech::ethernet : node.nic_tech);
  if (tcp) s.flow_cap = node.socket_bandwidth;
  if (tcp && node.nccl_rings_per_nic > 0) {
    s.efficiency = std::min(s.efficiency, node.nccl_rings_per_nic * node.socket_bandwidth / node.nic_bandwidth);
  }
  return s;
}

NodePorts add_endpoints(Topology& t, const NodeSpec& node, int n, bool with_nics) {
  NodePorts ports;
  const std::string chip = node.kind == NodeKind::tpu_board ? "tpu" : "gpu";
  for (int i = 0; i < node.accelerators; ++i) {
    VertexInfo info{VertexKind::accelerator, in_node(n, chip + std::to_string(i)), n, i, 0};
    info.nccl_compute_capability = node.nccl_compute_capability;
    ports.accelerators.push_back(t.add_vertex(std::move(info)));
  }
  for (int j = 0; with_nics && j < node.nics; ++j) {
    ports.nics.push_back(t.add_vertex({VertexKind::nic, in_node(n, "nic" + std::to_string(j)), n, j, 0}));
  }
  return ports;
}

// Designs with a direct PCIe link from accelerator i to NIC i * nics / accelerators.
void link_accelerators_to_nics(Topology& t, const NodeSpec& node, const NodePorts& p) {
  for (int i = 0; i < node.accelerators; ++i) {
    t.add_duplex_link(p.accelerators[i], p.nics[detail::nic_of(node, i)],
                      pcie_spec(node.pcie_bandwidth, node.pcie_latency_s, node.pcie_tech));
  }
}

// With nvls_bandwidth > 0 the NVSwitch reduces what its ports send it (NVLink SHARP).
void wire_nvswitch(Topology& t, const NodeSpec& node, int n, const NodePorts& p) {
  const VertexId sw = add_switch(t, in_node(n, "nvswitch"), 0);
  t.set_reduction_bandwidth(sw, node.nvls_bandwidth);
  for (VertexId a : p.accelerators) t.add_duplex_link(a, sw, nvlink_spec(node, node.link_bandwidth));
  link_accelerators_to_nics(t, node, p);
}

// DGX-1V hybrid cube-mesh (record dgx1v-topology: 6 NVLink2 links per V100). Quads 0-3 and 4-7
// are fully connected and GPU i is linked to i+4; the eight pairs with two NVLinks are those of
// the DGX-1V topology dump in NVIDIA/nccl issue #671 (GPU0: 2 links to GPU3 and GPU4, 1 to GPU1
// and GPU2; GPU1: 2 to GPU2 and GPU5; ...), also drawn in Li et al., "Evaluating Modern GPU
// Interconnect", TPDS 2020, Fig. 1. Two links are one edge of twice the bandwidth.
struct CubeMeshPair {
  int a, b, links;
};
constexpr CubeMeshPair kCubeMesh[] = {
    {0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {1, 2, 2}, {1, 3, 1}, {2, 3, 2},  // quad 0-3
    {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2},  // quad 4-7
    {0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1},                        // i <-> i+4
};

void wire_hybrid_cube_mesh(Topology& t, const NodeSpec& node, const NodePorts& p) {
  for (const auto& pair : kCubeMesh) {
    t.add_duplex_link(p.accelerators[pair.a], p.accelerators[pair.b], nvlink_spec(node, pair.links * node.link_bandwidth));
  }
  link_accelerators_to_nics(t, node, p);
}

// Accelerators under PCIe switches (4 or 2 each, see detail::pcie_per_switch), switches under
// the host root; all these links are x16 (detail::pcie_x16: `link_bandwidth` for the pcie
// design, whose link is PCIe, `pcie_bandwidth` for nvlink_pairs). A NIC hangs off the switch of
// the accelerators it serves when they share one, else off the root, by a `pcie_bandwidth` link.
void wire_pcie(Topology& t, const NodeSpec& node, int n, const NodePorts& p) {
  const bool bridged = node.kind == NodeKind::nvlink_pairs;
  const double x16 = detail::pcie_x16(node);
  const double latency = bridged ? node.pcie_latency_s : node.link_latency_s;
  const LinkTech tech = bridged ? node.pcie_tech : node.link_tech;
  const VertexId root = add_switch(t, in_node(n, "host"), 0);
  std::vector<VertexId> switches;
  for (int s = 0; s < detail::pcie_switches(node); ++s) {
    switches.push_back(add_switch(t, in_node(n, "pcie" + std::to_string(s)), 0));
    t.add_duplex_link(switches.back(), root, pcie_spec(x16, latency, tech));
  }
  const int per_switch = detail::pcie_per_switch(node);
  for (int i = 0; i < node.accelerators; ++i) {
    t.add_duplex_link(p.accelerators[i], switches[i / per_switch], pcie_spec(x16, latency, tech));
  }
  for (int j = 0; j < node.nics; ++j) {
    const int s = detail::pcie_switch_of_nic(node, j);
    t.add_duplex_link(p.nics[j], s >= 0 ? switches[s] : root,
                      pcie_spec(node.pcie_bandwidth, node.pcie_latency_s, node.pcie_tech));
  }
  // Bridged pairs: the NVLink bridge is the pair's one hop, so rings follow it (ring_search.hpp).
  for (int i = 0; bridged && i + 1 < node.accelerators; i += 2) {
    t.add_duplex_link(p.accelerators[i], p.accelerators[i + 1], nvlink_spec(node, node.link_bandwidth));
  }
}

// ---- TPU ICI: blocks and tori ----------------------------------------------------------------

// A cell's coordinates in a box of `dims` (x fastest), and back.
std::vector<int> coordinates_of(int cell, const std::vector<int>& dims) {
  std::vector<int> c(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    c[d] = cell % dims[d];
    cell /= dims[d];
  }
  return c;
}
int cell_of(const std::vector<int>& c, const std::vector<int>& dims) {
  int cell = 0;
  for (std::size_t d = dims.size(); d-- > 0;) cell = cell * dims[d] + c[d];
  return cell;
}

// Local chip l of a host block: a snake through the block (x runs alternate direction from row
// to row, rows alternate from layer to layer), so that chips l and l+1 are neighbours and, on
// an even block, the last and the first too: the board's ring is 0, 1, ..., n-1.
std::vector<int> snake(int l, const std::vector<int>& block) {
  std::vector<int> c = coordinates_of(l, block);
  const int row = block.empty() ? 0 : l / block[0];  // rows counted across layers
  if (block.size() >= 3 && c[2] % 2 == 1) c[1] = block[1] - 1 - c[1];
  if (!block.empty() && row % 2 == 1) c[0] = block[0] - 1 - c[0];
  return c;
}

// Links every chip of a box to its +1 neighbour on each axis; an axis of size 2 has one link
// per line (its two neighbours coincide), one of size 1 none, and an axis that does not wrap no
// link from its last chip back to its first. chip[cell] is the vertex at that cell.
void link_box(Topology& t, const std::vector<VertexId>& chip, const std::vector<int>& dims, const std::vector<bool>& wrap,
              const LinkSpec& spec) {
  for (std::size_t cell = 0; cell < chip.size(); ++cell) {
    std::vector<int> c = coordinates_of(static_cast<int>(cell), dims);
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const int size = dims[d];
      const bool last = c[d] == size - 1;
      if (size < 2 || (size == 2 && c[d] == 1) || (last && !wrap[d])) continue;
      std::vector<int> next = c;
      next[d] = (c[d] + 1) % size;
      t.add_duplex_link(chip[cell], chip[static_cast<std::size_t>(cell_of(next, dims))], spec);
    }
  }
}

// 4 chips: a 2x2 block; 8 chips: 4x2 (ici.hpp host shapes).
std::vector<int> board_block(int chips) { return chips == 8 ? std::vector<int>{4, 2} : std::vector<int>{2, 2}; }

// A host's chips as a mesh of their block, on their ICI links.
void wire_tpu_board(Topology& t, const NodeSpec& node, const NodePorts& p) {
  const std::vector<int> block = board_block(node.accelerators);
  std::vector<VertexId> chip(p.accelerators.size());
  for (int l = 0; l < node.accelerators; ++l) chip[static_cast<std::size_t>(cell_of(snake(l, block), block))] = p.accelerators[l];
  link_box(t, chip, block, std::vector<bool>(block.size(), false),
           spec_of(node.link_bandwidth, node.link_latency_s, "ici", node.link_tech));
  link_accelerators_to_nics(t, node, p);
}

NodePorts add_node(Topology& t, const NodeSpec& node, int n) {
  NodePorts p = add_endpoints(t, node, n, true);
  switch (node.kind) {
    case NodeKind::nvswitch: wire_nvswitch(t, node, n, p); break;
    case NodeKind::hybrid_cube_mesh: wire_hybrid_cube_mesh(t, node, p); break;
    case NodeKind::pcie:
    case NodeKind::nvlink_pairs: wire_pcie(t, node, n, p); break;
    case NodeKind::tpu_board: wire_tpu_board(t, node, p); break;
  }
  return p;
}

// ---- fabrics --------------------------------------------------------------------------------

void attach(Topology& t, const NodeSpec& node, VertexId nic, VertexId sw) {
  t.add_duplex_link(nic, sw, nic_spec(node));
}

// Switch-to-switch links are of the NICs' technology; with SHARP every fabric switch reduces.
LinkSpec fabric_spec(const NodeSpec& node, double bandwidth, double latency_s) {
  return spec_of(bandwidth, latency_s, "fabric", node.transport == Transport::tcp ? LinkTech::ethernet : node.nic_tech);
}

void fabric_single_switch(Topology& t, const NodeSpec& node, const std::vector<NodePorts>& nodes) {
  const VertexId sw = add_switch(t, "switch0", 1);
  for (const auto& p : nodes) {
    for (VertexId nic : p.nics) attach(t, node, nic, sw);
  }
}

// Every tier-1 switch to every spine; a tier-1 switch's uplink capacity is shared evenly by its
// spine links, so the oversubscription holds exactly whatever the spine count. A single tier-1
// switch already joins everything below it and gets no spines.
void add_spines(Topology& t, const NodeSpec& node, const FabricSpec& fabric, const std::vector<VertexId>& lower) {
  if (lower.size() < 2) return;
  const auto count = static_cast<int>(detail::spine_count(node, fabric));
  const double per_link = detail::tier1_uplink(node, fabric) / count;
  std::vector<VertexId> spines;
  for (int s = 0; s < count; ++s) spines.push_back(add_switch(t, "spine" + std::to_string(s), 2));
  for (VertexId l : lower) {
    for (VertexId s : spines) t.add_duplex_link(l, s, fabric_spec(node, per_link, fabric.link_latency_s));
  }
}

void fabric_leaf_spine(Topology& t, const NodeSpec& node, const FabricSpec& fabric,
                       const std::vector<NodePorts>& nodes) {
  std::vector<VertexId> leaves;
  for (int l = 0; l < detail::groups_of(fabric); ++l) leaves.push_back(add_switch(t, "leaf" + std::to_string(l), 1));
  for (int n = 0; n < fabric.nodes; ++n) {
    for (VertexId nic : nodes[n].nics) attach(t, node, nic, leaves[n / fabric.nodes_per_leaf]);
  }
  add_spines(t, node, fabric, leaves);
}

// NIC j of every node in group g (nodes_per_leaf nodes) goes to rail switch j of that group.
void fabric_rail_optimized(Topology& t, const NodeSpec& node, const FabricSpec& fabric,
                           const std::vector<NodePorts>& nodes) {
  std::vector<VertexId> rails;  // index group * nics + rail
  for (int g = 0; g < detail::groups_of(fabric); ++g) {
    for (int j = 0; j < node.nics; ++j) {
      rails.push_back(add_switch(t, "rail" + std::to_string(j) + ".g" + std::to_string(g), 1));
    }
  }
  for (int n = 0; n < fabric.nodes; ++n) {
    const int group = n / fabric.nodes_per_leaf;
    for (int j = 0; j < node.nics; ++j) attach(t, node, nodes[n].nics[j], rails[group * node.nics + j]);
  }
  add_spines(t, node, fabric, rails);
}

// Al-Fares et al. 2008: k pods of k/2 edge and k/2 aggregation switches, edge and aggregation
// fully connected inside a pod; aggregation switch a of every pod links to cores a*k/2 ..
// a*k/2 + k/2 - 1. NIC ports fill edge switches in order (k/2 per edge), pod after pod.
void fabric_fat_tree(Topology& t, const NodeSpec& node, const FabricSpec& fabric,
                     const std::vector<NodePorts>& nodes) {
  const int k = detail::fat_tree_k(node, fabric, "build_cluster");
  const int h = k / 2;
  std::vector<VertexId> edges, aggs, cores;  // edges and aggs indexed pod * h + i
  for (int pod = 0; pod < k; ++pod) {
    const std::string name = "pod" + std::to_string(pod) + "/";
    for (int i = 0; i < h; ++i) edges.push_back(add_switch(t, name + "edge" + std::to_string(i), 1));
    for (int i = 0; i < h; ++i) aggs.push_back(add_switch(t, name + "agg" + std::to_string(i), 2));
  }
  for (int c = 0; c < h * h; ++c) cores.push_back(add_switch(t, "core" + std::to_string(c), 3));
  const auto link = [&](VertexId a, VertexId b) {
    t.add_duplex_link(a, b, fabric_spec(node, fabric.link_bandwidth, fabric.link_latency_s));
  };
  for (int pod = 0; pod < k; ++pod) {
    for (int a = 0; a < h; ++a) {
      for (int e = 0; e < h; ++e) link(edges[pod * h + e], aggs[pod * h + a]);
      for (int c = 0; c < h; ++c) link(aggs[pod * h + a], cores[a * h + c]);
    }
  }
  std::size_t port = 0;
  for (const auto& p : nodes) {
    for (VertexId nic : p.nics) attach(t, node, nic, edges[port++ / h]);
  }
}

// The cell of rank q of a pod. Without a host shape q itself (x fastest: r = x + X * (y + Y *
// z), so a node's chips are consecutive along x); with one, node q / per_node's block, placed x
// fastest over the grid of blocks, and its chip q % per_node along the block's snake.
int torus_cell(int q, const FabricSpec& fabric, int per_node) {
  if (fabric.host_shape.empty()) return q;
  std::vector<int> grid(fabric.dims.size());
  for (std::size_t d = 0; d < grid.size(); ++d) grid[d] = fabric.dims[d] / fabric.host_shape[d];
  const std::vector<int> host = coordinates_of(q / per_node, grid);
  const std::vector<int> local = snake(q % per_node, fabric.host_shape);
  std::vector<int> c(grid.size());
  for (std::size_t d = 0; d < c.size(); ++d) c[d] = host[d] * fabric.host_shape[d] + local[d];
  return cell_of(c, fabric.dims);
}

// Every pod's chips linked to their +1 neighbour on each axis by ICI links; the layout is
// recorded for the torus collectives.
void fabric_torus(Topology& t, const NodeSpec& node, const FabricSpec& fabric) {
  const auto& acc = t.accelerators();
  TorusLayout layout;
  layout.dims = fabric.dims;
  layout.wrap = fabric.wrap.empty() ? std::vector<bool>(fabric.dims.size(), true) : fabric.wrap;
  layout.pods = fabric.pods;
  const int pod_size = layout.pod_size();
  layout.cells.resize(acc.size());
  std::vector<VertexId> chip(static_cast<std::size_t>(pod_size));
  const LinkSpec ici = spec_of(fabric.link_bandwidth, fabric.link_latency_s, "ici", LinkTech::ici);
  for (int pod = 0; pod < fabric.pods; ++pod) {
    for (int q = 0; q < pod_size; ++q) {
      const int cell = torus_cell(q, fabric, node.accelerators);
      const auto r = static_cast<std::size_t>(pod) * static_cast<std::size_t>(pod_size) + static_cast<std::size_t>(q);
      layout.cells[r] = cell;
      chip[static_cast<std::size_t>(cell)] = acc[r];
    }
    link_box(t, chip, layout.dims, layout.wrap, ici);
  }
  t.set_torus(std::move(layout));
}

// Pods of a torus talk over the hosts' NICs: every NIC on one non-blocking switch.
void fabric_dcn(Topology& t, const NodeSpec& node, const std::vector<NodePorts>& nodes) {
  const VertexId sw = add_switch(t, "dcn", 1);
  for (const auto& p : nodes) {
    link_accelerators_to_nics(t, node, p);
    for (VertexId nic : p.nics) attach(t, node, nic, sw);
  }
}

// Nodes split into `regions` contiguous, near-equal runs; node n is in region n * regions / nodes.
void fabric_wan(Topology& t, const NodeSpec& node, const FabricSpec& fabric, const std::vector<NodePorts>& nodes) {
  std::vector<VertexId> regions;
  for (int r = 0; r < fabric.regions; ++r) regions.push_back(add_switch(t, "region" + std::to_string(r), 1));
  for (int n = 0; n < fabric.nodes; ++n) {
    const auto r = static_cast<std::size_t>(std::int64_t{n} * fabric.regions / fabric.nodes);
    for (VertexId nic : nodes[n].nics) attach(t, node, nic, regions[r]);
  }
  for (std::size_t a = 0; a < regions.size(); ++a) {
    for (std::size_t b = a + 1; b < regions.size(); ++b) {
      t.add_duplex_link(regions[a], regions[b], fabric.wan_bandwidth, fabric.wan_latency_s, "wan");
    }
  }
}

// Straight cuts across an even dimension of size d cut 2 * P / d links (one per line where d == 2,
// whose line has a single link, or where the axis does not wrap); the worst is the smallest.
// Without an even size the total is odd and no equal halves exist.
double torus_bisection(const FabricSpec& fabric) {
  if (fabric.pods > 1) {
    throw std::invalid_argument("bisection_bandwidth: a torus of several pods has no closed form (the pods meet on the "
                                "hosts' NICs)");
  }
  std::int64_t total = 1;
  for (int d : fabric.dims) total *= d;
  double links = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < fabric.dims.size(); ++i) {
    const int d = fabric.dims[i];
    const bool wraps = fabric.wrap.empty() || fabric.wrap[i];
    if (d % 2 == 0) links = std::min(links, (d > 2 && wraps ? 2.0 : 1.0) * static_cast<double>(total / d));
  }
  if (!std::isfinite(links)) {
    detail::reject("bisection_bandwidth", "fabric.dims", "to include an even size (equal halves)",
                   std::to_string(total) + " accelerators");
  }
  return links * fabric.link_bandwidth;
}

}  // namespace

RoutingScheme default_routing(FabricKind kind) {
  return kind == FabricKind::fat_tree || kind == FabricKind::rail_optimized ? RoutingScheme::d_mod_k
                                                                             : RoutingScheme::ecmp;
}

Topology build_cluster(const NodeSpec& node, const FabricSpec& fabric) {
  detail::validate(node, fabric, "build_cluster");
  Topology t;
  t.set_routing(fabric.routing.value_or(default_routing(fabric.kind)));
  // A torus is the chips' own ICI: it replaces the node's internal wiring; NICs only join pods.
  const bool torus = fabric.kind == FabricKind::torus;
  std::vector<NodePorts> nodes;
  nodes.reserve(static_cast<std::size_t>(fabric.nodes));
  for (int n = 0; n < fabric.nodes; ++n) {
    nodes.push_back(torus ? add_endpoints(t, node, n, fabric.pods > 1) : add_node(t, node, n));
  }
  switch (fabric.kind) {
    case FabricKind::single_switch: fabric_single_switch(t, node, nodes); break;
    case FabricKind::leaf_spine: fabric_leaf_spine(t, node, fabric, nodes); break;
    case FabricKind::fat_tree: fabric_fat_tree(t, node, fabric, nodes); break;
    case FabricKind::rail_optimized: fabric_rail_optimized(t, node, fabric, nodes); break;
    case FabricKind::torus:
      fabric_torus(t, node, fabric);
      if (fabric.pods > 1) fabric_dcn(t, node, nodes);
      break;
    case FabricKind::wan: fabric_wan(t, node, fabric, nodes); break;
  }
  if (fabric.sharp_bandwidth > 0 && !torus) {
    for (VertexId v = 0; v < t.vertex_count(); ++v) {
      if (t.vertex(v).kind == VertexKind::switch_ && t.vertex(v).tier >= 1) t.set_reduction_bandwidth(v, fabric.sharp_bandwidth);
    }
  }
  return t;
}

Topology build_custom(const std::vector<CustomVertex>& vertices, const std::vector<CustomLink>& links) {
  const std::string where = "build_custom";
  Topology t;
  std::map<std::string, VertexId> ids;           // ordered: nothing depends on hash order
  std::map<std::pair<int, VertexKind>, int> locals;  // next local index per (node, kind)
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const auto& v = vertices[i];
    const std::string field = "vertices[" + std::to_string(i) + "]";
    if (v.name.empty()) detail::reject(where, field + ".name", "non-empty", "\"\"");
    if (ids.count(v.name) != 0) detail::reject(where, field + ".name", "unique", "duplicate \"" + v.name + "\"");
    const bool endpoint = v.kind != VertexKind::switch_;
    if (endpoint ? v.node < 0 : v.node != -1) {
      detail::reject(where, field + ".node", endpoint ? ">= 0 for an accelerator or NIC" : "-1 for a switch",
                     std::to_string(v.node));
    }
    const int local = endpoint ? locals[{v.node, v.kind}]++ : -1;
    ids.emplace(v.name, t.add_vertex({v.kind, v.name, v.node, local, 0}));
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto& l = links[i];
    const std::string field = "links[" + std::to_string(i) + "]";
    const auto a = ids.find(l.a), b = ids.find(l.b);
    if (a == ids.end()) detail::reject(where, field + ".a", "the name of a listed vertex", "\"" + l.a + "\"");
    if (b == ids.end()) detail::reject(where, field + ".b", "the name of a listed vertex", "\"" + l.b + "\"");
    if (a == b) detail::reject(where, field + ".b", "different from .a", "\"" + l.b + "\"");
    detail::check_bandwidth(where, field + ".bandwidth", l.bandwidth);
    detail::check_latency(where, field + ".latency_s", l.latency_s);
    t.add_duplex_link(a->second, b->second, l.bandwidth, l.latency_s, "custom");
  }
  return t;
}

// Closed forms, with P = nodes / 2 nodes on each side and I the injection of one node (each NIC
// limited by its port and its PCIe feed). Switched fabrics split whole nodes (nodes even); the
// worst split puts whole leaves / rail groups / edge switches on each side, and each node's
// traffic is then capped by its share of the uplinks above its tier-1 switch:
//   single_switch                     P * I
//   leaf_spine, rail_optimized        P * min(I, nics * nic_bandwidth / oversubscription)
//                                     (P * I with a single leaf / rail group)
//   fat_tree                          P * min(I, nics * link_bandwidth)
// Exact when the nodes fill whole tier-1 switches, an even count of them; otherwise the value of
// the aligned cut, an upper bound. torus: see torus_bisection.
double bisection_bandwidth(const NodeSpec& node, const FabricSpec& fabric) {
  const std::string where = "bisection_bandwidth";
  detail::validate(node, fabric, where);
  if (fabric.kind == FabricKind::torus) return torus_bisection(fabric);
  if (fabric.kind == FabricKind::wan) {
    throw std::invalid_argument(where + ": fabric kind wan has no closed form (regions may be uneven)");
  }
  if (fabric.nodes < 2 || fabric.nodes % 2 != 0) {
    detail::reject(where, "fabric.nodes", "even and >= 2 (halves of whole nodes)", std::to_string(fabric.nodes));
  }
  const double half = fabric.nodes / 2;
  const double inject = detail::node_injection(node);
  switch (fabric.kind) {
    case FabricKind::leaf_spine:
    case FabricKind::rail_optimized:
      if (detail::groups_of(fabric) < 2) return half * inject;
      return half * std::min(inject, node.nics * node.nic_bandwidth / fabric.oversubscription);
    case FabricKind::fat_tree: return half * std::min(inject, node.nics * fabric.link_bandwidth);
    default: return half * inject;  // single_switch: one non-blocking switch
  }
}

}  // namespace dlsim::network
