// Private to topology_builders.cpp: input validation and the layout arithmetic that both the
// builders and bisection_bandwidth need (which accelerators a NIC serves, where a NIC sits in a
// PCIe tree, how many spines a fabric gets, the fat-tree arity), kept in one place so that the
// graph that is built and the closed-form bisection of it cannot disagree.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/topology_builders.hpp"

namespace dlsim::network::detail {

constexpr int kMaxAccelerators = kMaxAcceleratorsPerNode;
constexpr int kMaxNodes = 1'000'000;  // keeps vertex ids and rank arithmetic far from overflow
constexpr int kMaxSpines = 65'536;
constexpr int kMaxFatTreeK = 128;     // 128^3/4 = 524,288 NIC ports

inline std::string show(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] inline void reject(const std::string& where, const std::string& field, const std::string& allowed,
                                const std::string& got) {
  throw std::invalid_argument(where + ": " + field + " must be " + allowed + " (got " + got + ")");
}

inline void check_range(const std::string& where, const std::string& field, std::int64_t v, std::int64_t lo,
                        std::int64_t hi) {
  if (v < lo || v > hi) reject(where, field, "in " + std::to_string(lo) + ".." + std::to_string(hi), std::to_string(v));
}

inline void check_bandwidth(const std::string& where, const std::string& field, double v) {
  if (!(v > 0) || !std::isfinite(v)) reject(where, field, "a finite number > 0 (bytes/s)", show(v));
}

inline void check_latency(const std::string& where, const std::string& field, double v) {
  if (!(v >= 0) || !std::isfinite(v)) reject(where, field, "a finite number >= 0 (seconds)", show(v));
}

// ---- layout arithmetic ----------------------------------------------------------------------

// NIC j serves the accelerators i with i * nics / accelerators == j: the range [first, last).
// Because nics <= accelerators, every NIC serves at least one accelerator.
struct Range {
  int first = 0;
  int last = 0;
};
inline Range served_by_nic(const NodeSpec& node, int j) {
  const int a = node.accelerators, n = node.nics;
  return {(j * a + n - 1) / n, ((j + 1) * a + n - 1) / n};
}
inline int nic_of(const NodeSpec& node, int i) { return i * node.nics / node.accelerators; }

// PCIe design: 4 accelerators per PCIe switch from 8 accelerators up (8-GPU PCIe boxes put 4
// GPUs under each of two switches per CPU socket), 2 per switch below that (K80-style pairs).
inline int pcie_per_switch(const NodeSpec& node) { return node.accelerators >= 8 ? 4 : 2; }
inline int pcie_switches(const NodeSpec& node) {
  const int g = pcie_per_switch(node);
  return (node.accelerators + g - 1) / g;
}
// A NIC sits as close as it can to the accelerators it serves: on their PCIe switch when they
// share one, else on the host root (-1).
inline int pcie_switch_of_nic(const NodeSpec& node, int j) {
  const Range r = served_by_nic(node, j);
  const int g = pcie_per_switch(node);
  return r.first / g == (r.last - 1) / g ? r.first / g : -1;
}

// Designs whose accelerators hang off PCIe switches, and the x16 bandwidth of those links.
inline bool pcie_tree(const NodeSpec& node) { return node.kind == NodeKind::pcie || node.kind == NodeKind::nvlink_pairs; }
inline double pcie_x16(const NodeSpec& node) {
  return node.kind == NodeKind::nvlink_pairs ? node.pcie_bandwidth : node.link_bandwidth;
}

// What can feed NIC j from the accelerators, before the NIC's own port: their PCIe links.
inline double nic_feed(const NodeSpec& node, int j) {
  const Range r = served_by_nic(node, j);
  const int count = r.last - r.first;
  if (!pcie_tree(node)) return count * node.pcie_bandwidth;
  const int g = pcie_per_switch(node);
  // On a switch: each accelerator's own link; on the root: one uplink per switch crossed.
  const int crossed = (r.last - 1) / g - r.first / g + 1;
  const double below = pcie_switch_of_nic(node, j) >= 0 ? count * pcie_x16(node) : crossed * pcie_x16(node);
  return std::min(node.pcie_bandwidth, below);
}

// How fast one node can push into the fabric: each NIC limited by its port and its feed.
inline double node_injection(const NodeSpec& node) {
  double total = 0;
  for (int j = 0; j < node.nics; ++j) total += std::min(node.nic_bandwidth, nic_feed(node, j));
  return total;
}

inline int groups_of(const FabricSpec& fabric) {
  return (fabric.nodes + fabric.nodes_per_leaf - 1) / fabric.nodes_per_leaf;
}

// Uplink capacity of one tier-1 switch: its downlink capacity, for a full group of
// nodes_per_leaf nodes, divided by the oversubscription. A leaf carries every NIC of its nodes;
// a rail switch one NIC of each.
inline double tier1_uplink(const NodeSpec& node, const FabricSpec& fabric) {
  const int nics_per_node = fabric.kind == FabricKind::leaf_spine ? node.nics : 1;
  return fabric.nodes_per_leaf * nics_per_node * node.nic_bandwidth / fabric.oversubscription;
}
inline int tier1_switches(const NodeSpec& node, const FabricSpec& fabric) {
  return groups_of(fabric) * (fabric.kind == FabricKind::rail_optimized ? node.nics : 1);
}

// Explicit spine count, else the fewest spines whose links of link_bandwidth carry the uplink.
inline std::int64_t spine_count(const NodeSpec& node, const FabricSpec& fabric) {
  if (fabric.spines > 0) return fabric.spines;
  const double needed = tier1_uplink(node, fabric) / fabric.link_bandwidth;
  if (!(needed < kMaxSpines)) return kMaxSpines + 1;  // reported by the caller's validation
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(needed * (1 - 1e-12))));
}

inline std::int64_t fat_tree_ports(int k) { return std::int64_t{k} * k * k / 4; }

inline int fat_tree_k(const NodeSpec& node, const FabricSpec& fabric, const std::string& where) {
  const std::int64_t ports = std::int64_t{fabric.nodes} * node.nics;
  int k = fabric.fat_tree_k;
  if (k == 0) {
    for (k = 2; k <= kMaxFatTreeK && fat_tree_ports(k) < ports; k += 2) {
    }
    if (k > kMaxFatTreeK) {
      reject(where, "fabric.nodes * node.nics", "at most " + std::to_string(fat_tree_ports(kMaxFatTreeK)) +
                                                    " NIC ports for a fat_tree", std::to_string(ports));
    }
    return k;
  }
  if (k < 2 || k > kMaxFatTreeK || k % 2 != 0) {
    reject(where, "fabric.fat_tree_k", "0 (automatic) or an even number in 2.." + std::to_string(kMaxFatTreeK),
           std::to_string(k));
  }
  if (fat_tree_ports(k) < ports) {
    reject(where, "fabric.fat_tree_k", "large enough that k^3/4 >= nodes * nics = " + std::to_string(ports),
           std::to_string(k) + ", which has " + std::to_string(fat_tree_ports(k)) + " ports");
  }
  return k;
}

// ---- validation -----------------------------------------------------------------------------

inline void validate_node(const NodeSpec& node, const std::string& where) {
  check_range(where, "node.accelerators", node.accelerators, 1, kMaxAccelerators);
  if (node.kind == NodeKind::hybrid_cube_mesh && node.accelerators != 8) {
    reject(where, "node.accelerators", "8 for hybrid_cube_mesh (DGX-1)", std::to_string(node.accelerators));
  }
  if (node.kind == NodeKind::tpu_board && node.accelerators != 4 && node.accelerators != 8) {
    reject(where, "node.accelerators", "4 or 8 for tpu_board", std::to_string(node.accelerators));
  }
  check_range(where, "node.nics", node.nics, 1, node.accelerators);
  check_bandwidth(where, "node.link_bandwidth", node.link_bandwidth);
  check_latency(where, "node.link_latency_s", node.link_latency_s);
  check_bandwidth(where, "node.nic_bandwidth", node.nic_bandwidth);
  check_latency(where, "node.nic_latency_s", node.nic_latency_s);
  check_bandwidth(where, "node.pcie_bandwidth", node.pcie_bandwidth);
  check_latency(where, "node.pcie_latency_s", node.pcie_latency_s);
  if (node.kind == NodeKind::nvlink_pairs && node.accelerators % 2 != 0) {
    reject(where, "node.accelerators", "even for nvlink_pairs (bridged pairs)", std::to_string(node.accelerators));
  }
  if (node.transport == Transport::tcp) check_bandwidth(where, "node.socket_bandwidth", node.socket_bandwidth);
  if (node.nccl_rings_per_nic < 0) {
    reject(where, "node.nccl_rings_per_nic", "an integer >= 0 (0: NCCL's channels)", std::to_string(node.nccl_rings_per_nic));
  }
  if (!(node.nvls_bandwidth >= 0) || !std::isfinite(node.nvls_bandwidth)) {
    reject(where, "node.nvls_bandwidth", "a finite number >= 0 (bytes/s)", show(node.nvls_bandwidth));
  }
  if (node.nvls_bandwidth > 0 && node.kind != NodeKind::nvswitch) {
    reject(where, "node.nvls_bandwidth", "0 unless the node is nvswitch (NVLink SHARP reduces in the NVSwitch)",
           show(node.nvls_bandwidth));
  }
}

inline std::string show(const std::vector<int>& v) {
  std::string out;
  for (int x : v) {
    if (!out.empty()) out += 'x';
    out += std::to_string(x);
  }
  return out;
}

// A node's block of chips (host_shape) must tile each pod's torus.
inline void validate_host_shape(const NodeSpec& node, const FabricSpec& fabric, const std::string& where) {
  if (fabric.host_shape.empty()) return;
  if (fabric.host_shape.size() != fabric.dims.size()) {
    reject(where, "fabric.host_shape", "one size per torus axis (" + std::to_string(fabric.dims.size()) + ")",
           std::to_string(fabric.host_shape.size()) + " sizes");
  }
  std::int64_t chips = 1;
  for (std::size_t d = 0; d < fabric.dims.size(); ++d) {
    const int h = fabric.host_shape[d];
    check_range(where, "fabric.host_shape[" + std::to_string(d) + "]", h, 1, kMaxAccelerators);
    if (fabric.dims[d] % h != 0) {
      reject(where, "fabric.dims", "multiples of the host block " + show(fabric.host_shape) + " on every axis",
             show(fabric.dims));
    }
    chips *= h;
  }
  if (chips != node.accelerators) {
    reject(where, "fabric.host_shape", "a block of node.accelerators = " + std::to_string(node.accelerators) + " chips",
           show(fabric.host_shape) + " = " + std::to_string(chips) + " chips");
  }
}

inline void validate_torus(const NodeSpec& node, const FabricSpec& fabric, const std::string& where) {
  if (fabric.dims.size() != 2 && fabric.dims.size() != 3) {
    reject(where, "fabric.dims", "2 or 3 sizes for a torus", std::to_string(fabric.dims.size()) + " sizes");
  }
  check_range(where, "fabric.pods", fabric.pods, 1, kMaxNodes);
  std::int64_t product = 1;
  for (int d : fabric.dims) {
    check_range(where, "fabric.dims[i]", d, 1, std::int64_t{kMaxNodes} * kMaxAccelerators);
    product *= d;
  }
  const std::int64_t total = std::int64_t{fabric.nodes} * node.accelerators;
  if (product * fabric.pods != total) {
    reject(where, "fabric.dims",
           "sizes whose product x pods (" + std::to_string(fabric.pods) + ") equals nodes * accelerators = " +
               std::to_string(total),
           "product " + std::to_string(product));
  }
  if (fabric.pods > 1 && product % node.accelerators != 0) {
    reject(where, "fabric.pods", "a count that gives every pod whole nodes of " + std::to_string(node.accelerators) +
                                     " accelerators", std::to_string(fabric.pods) + " pods of " + std::to_string(product));
  }
  if (!fabric.wrap.empty() && fabric.wrap.size() != fabric.dims.size()) {
    reject(where, "fabric.wrap", "empty or one flag per torus axis (" + std::to_string(fabric.dims.size()) + ")",
           std::to_string(fabric.wrap.size()) + " flags");
  }
  validate_host_shape(node, fabric, where);
}

inline void validate_fabric(const NodeSpec& node, const FabricSpec& fabric, const std::string& where) {
  check_range(where, "fabric.nodes", fabric.nodes, 1, kMaxNodes);
  check_bandwidth(where, "fabric.link_bandwidth", fabric.link_bandwidth);
  check_latency(where, "fabric.link_latency_s", fabric.link_latency_s);
  if (!(fabric.oversubscription >= 1) || !std::isfinite(fabric.oversubscription)) {
    reject(where, "fabric.oversubscription", "a finite number >= 1", show(fabric.oversubscription));
  }
  check_range(where, "fabric.nodes_per_leaf", fabric.nodes_per_leaf, 1, kMaxNodes);
  check_range(where, "fabric.spines", fabric.spines, 0, kMaxSpines);
  check_range(where, "fabric.fat_tree_k", fabric.fat_tree_k, 0, kMaxFatTreeK);
  check_range(where, "fabric.regions", fabric.regions, 1, fabric.nodes);
  check_bandwidth(where, "fabric.wan_bandwidth", fabric.wan_bandwidth);
  check_latency(where, "fabric.wan_latency_s", fabric.wan_latency_s);
  if (!(fabric.sharp_bandwidth >= 0) || !std::isfinite(fabric.sharp_bandwidth)) {
    reject(where, "fabric.sharp_bandwidth", "a finite number >= 0 (bytes/s)", show(fabric.sharp_bandwidth));
  }
  if (fabric.routing == RoutingScheme::d_mod_k && (fabric.kind == FabricKind::torus || fabric.kind == FabricKind::wan)) {
    reject(where, "fabric.routing", "ecmp or balanced for a torus or wan (d_mod_k needs a tree of switches)", "d_mod_k");
  }
  switch (fabric.kind) {
    case FabricKind::leaf_spine:
    case FabricKind::rail_optimized:
      if (spine_count(node, fabric) > kMaxSpines) {
        reject(where, "fabric.link_bandwidth", "large enough that at most " + std::to_string(kMaxSpines) +
                                                   " spines carry a leaf's uplink", show(fabric.link_bandwidth));
      }
      break;
    case FabricKind::fat_tree: fat_tree_k(node, fabric, where); break;
    case FabricKind::torus: validate_torus(node, fabric, where); break;
    case FabricKind::single_switch:
    case FabricKind::wan: break;
  }
}

inline void validate(const NodeSpec& node, const FabricSpec& fabric, const std::string& where) {
  validate_node(node, where);
  validate_fabric(node, fabric, where);
}

}  // namespace dlsim::network::detail
