// Builders of the topologies a scenario can name. A cluster is `nodes` copies of one node
// design joined by one fabric. Accelerators are numbered node-major (rank = node * per_node +
// local); each node's NICs attach to the fabric. Units: bytes/s and seconds, per direction.
//
// Node designs:
// - nvswitch: every accelerator has one link of `link_bandwidth` to a node switch (DGX A100 /
//   H100 style, all-to-all at full per-GPU bandwidth).
// - hybrid_cube_mesh: DGX-1 (P100/V100) NVLink wiring among 8 GPUs: two fully connected quads
//   plus links between GPU i and i+4; `link_bandwidth` per NVLink (see dgx1v-topology in
//   ../shared/reference/hardware-and-cloud.yaml for which pairs have two links).
// - pcie: accelerators hang off PCIe switches under the host (K80/T4/A10G-class instances);
//   `link_bandwidth` is the PCIe x16 bandwidth.
// - nvlink_pairs: the pcie design (x16 links of `pcie_bandwidth`) plus an NVLink bridge of
//   `link_bandwidth` between accelerators 2i and 2i+1 (A100 PCIe and H100 NVL boards: Azure
//   NC A100 v4, 4 GPUs in two bridged pairs).
// - tpu_board: one TPU host's chips on their ICI links (`link_bandwidth` per link and
//   direction, ici.hpp): 4 chips (v2-8 ... v5p-8) as a 2x2 block, 8 (v5e-8, v6e-8) as a 4x2
//   block, both meshes (no wraparound); local chips are numbered along a snake through the block,
//   so chips i and i+1 (and the last and the first) are always linked.
// Every design has `nics` NICs of `nic_bandwidth`; accelerator i reaches NIC i * nics / per_node
// over a PCIe link of `pcie_bandwidth`.
//
// Links carry their technology (link_tech.hpp), which sets the achievable fraction of line rate
// flows get; `generic` (the default) keeps line rate. With transport tcp the NIC links carry
// TCP/IP framing and cap every flow at `socket_bandwidth` (one CPU-copied stream per flow), and
// the NIC at nccl_rings_per_nic streams when that is set (older NCCL: one ring per NIC). A
// node with nvls_bandwidth > 0 has an NVSwitch that reduces in the switch (NVLink SHARP,
// NVSwitch-3); a fabric with sharp_bandwidth > 0 has switches that do (InfiniBand SHARP).
//
// Fabrics (how nodes connect):
// - single_switch: every NIC to one switch.
// - leaf_spine: NICs to leaves (`nodes_per_leaf` nodes each); every leaf to every spine; the
//   uplink capacity of a leaf is its downlink capacity / `oversubscription`.
// - fat_tree: three-tier k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge
//   and k/2 aggregation switches, (k/2)^2 cores; k^3/4 NIC ports; nodes fill edge ports in order.
// - rail_optimized: NIC j of every node goes to rail switch j of its group of `nodes_per_leaf`
//   nodes; rail switches connect to spines (with `oversubscription`), as in NVIDIA DGX SuperPOD.
// - torus: a TPU slice, accelerators linked directly to their neighbours in a 2-D or 3-D torus
//   of `dims` by ICI links of `link_bandwidth` (technology ici). Axis d wraps around unless
//   wrap[d] is false (a mesh line; Google's small slices). With `host_shape` each node is a block
//   of that many chips (v4: 2x2x1) numbered like a tpu_board's; without it ranks fill the torus x
//   fastest. The torus replaces the nodes' internal wiring. pods > 1: `pods` such tori of `dims`
//   each (rank-major, pod after pod), joined only by the data-centre network: every host's NICs
//   on one non-blocking switch ("dcn"), chips reaching their host's NIC over PCIe (PaLM: two v4
//   pods over DCN). With one pod no NICs are used. The topology records the layout
//   (Topology::torus()) for the torus collectives.
// - wan: `regions` regions, each a leaf_spine-like single switch of its nodes; region switches
//   joined in a full mesh by WAN links of `wan_bandwidth` / `wan_latency`.
//
// Routing (topology.hpp RoutingScheme, routing.hpp): `routing` when given, else the kind's
// default (default_routing). d_mod_k needs a tree of switches: a torus or wan takes ecmp or
// balanced only.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "network/link_tech.hpp"
#include "network/topology.hpp"

namespace dlsim::network {

enum class NodeKind { nvswitch, hybrid_cube_mesh, pcie, tpu_board, nvlink_pairs };
enum class FabricKind { single_switch, leaf_spine, fat_tree, rail_optimized, torus, wan };

// The most accelerators one node may hold: a GB200 NVL72 rack's 72 GPUs, the largest NVLink
// domain sold as one system, which the catalog models as one node.
constexpr int kMaxAcceleratorsPerNode = 72;

struct NodeSpec {
  NodeKind kind = NodeKind::nvswitch;
  int accelerators = 8;
  double link_bandwidth = 300e9;   // per accelerator link, per direction
  double link_latency_s = 2e-6;
  int nics = 1;
  double nic_bandwidth = 12.5e9;   // per NIC, per direction
  double nic_latency_s = 1e-6;     // NIC to first switch
  double pcie_bandwidth = 16e9;    // accelerator to NIC, per direction (PCIe Gen3 x16)
  double pcie_latency_s = 1e-6;
  LinkTech link_tech = LinkTech::generic;   // NVLink generation, or PCIe for the pcie design
  LinkTech pcie_tech = LinkTech::generic;   // accelerator-to-NIC (and nvlink_pairs x16) links
  LinkTech nic_tech = LinkTech::generic;    // NIC-to-fabric links (and the fabric's own)
  Transport transport = Transport::rdma;
  double socket_bandwidth = kTcpStreamBandwidth;  // transport tcp: per flow, bytes/s
  // NCCL's rings (connections) through each NIC across nodes; 0 = as many as the collectives'
  // flows (NCCL >= 2.4's channels). NCCL 2.0-2.3 built one ring per NIC (src/transport/net.cu,
  // netGetRings: a NIC carries one ring of each node), so over TCP, one socket per connection,
  // a NIC's whole NCCL traffic ran on that many streams: its achievable rate is capped at
  // nccl_rings_per_nic x socket_bandwidth. With RDMA nothing is capped.
  int nccl_rings_per_nic = 0;
  double nvls_bandwidth = 0;       // NVLink SHARP reduction per GPU port, bytes/s; 0 = none
  int nccl_compute_capability = 0; // accelerators run NCCL of this class (70/80/90); 0 = ideal
};

struct FabricSpec {
  FabricKind kind = FabricKind::single_switch;
  int nodes = 1;
  double link_bandwidth = 12.5e9;  // switch-to-switch links (torus: chip-to-chip ICI)
  double link_latency_s = 1e-6;
  double oversubscription = 1.0;   // leaf_spine and rail_optimized: downlink / uplink capacity
  int nodes_per_leaf = 16;         // leaf_spine, rail_optimized
  int spines = 0;                  // leaf_spine, rail_optimized; 0 = as many as needed
  int fat_tree_k = 0;              // fat_tree; 0 = smallest even k that fits the NICs
  std::vector<int> dims;           // torus: 2 or 3 sizes (>= 1) per pod; product x pods = accelerators
  std::vector<bool> wrap;          // torus: per axis, whether it wraps around; empty = every axis
  std::vector<int> host_shape;     // torus: a node's block of chips per axis; empty = runs along x
  int pods = 1;                    // torus: tori joined by the data-centre network (NICs)
  int regions = 1;                 // wan
  double wan_bandwidth = 1.25e9;   // wan
  double wan_latency_s = 30e-3;    // wan, one way
  double sharp_bandwidth = 0;      // InfiniBand SHARP reduction per switch port, bytes/s; 0 = none
  std::optional<RoutingScheme> routing;  // unset: default_routing(kind)
};

// The routing a fabric kind gets unless told otherwise:
// - fat_tree, rail_optimized: d_mod_k. Such fabrics are InfiniBand in practice (NVIDIA's DGX
//   SuperPOD, Selene among them, is a rail-optimized InfiniBand fat-tree; Azure connects its
//   InfiniBand VMs "in a non-blocking fat tree", MicrosoftDocs azure-docs hbv3-series.md),
//   routed by OpenSM's fat-tree engine; Al-Fares et al.'s own fat-tree routing picks the up-port
//   from the destination host too. Adaptive routing, which such fabrics may also enable, is
//   not modelled: the balanced reference bounds what it could recover.
// - leaf_spine: ecmp, the Ethernet/RoCE data-centre Clos (switches hash each flow's 5-tuple).
// - single_switch: ecmp (there is no choice to make); torus, wan: ecmp (ties among minimal
//   paths hashed).
RoutingScheme default_routing(FabricKind kind);

// Throws std::invalid_argument with a message naming the bad field.
Topology build_cluster(const NodeSpec& node, const FabricSpec& fabric);

// A topology written out in full: vertices by name and kind, links between names.
struct CustomVertex {
  std::string name;
  VertexKind kind = VertexKind::switch_;
  int node = -1;
};
struct CustomLink {
  std::string a, b;
  double bandwidth = 0;
  double latency_s = 0;
};
Topology build_custom(const std::vector<CustomVertex>& vertices, const std::vector<CustomLink>& links);

// Bandwidth across the worst split of the accelerators into two equal halves, for the fabrics
// where it is defined in closed form (single_switch, leaf_spine, fat_tree, rail_optimized,
// torus of one pod): bytes/s in one direction.
double bisection_bandwidth(const NodeSpec& node, const FabricSpec& fabric);

}  // namespace dlsim::network
