// Topology: what connects devices, as a Boost.Graph directed graph. Vertices are accelerators,
// host NICs and switches; every physical full-duplex link is two directed edges, one per
// direction, each with its own bandwidth (bytes/s) and latency (s), so traffic in the two
// directions never competes. Ids are dense integers: VertexId indexes vertices, LinkId indexes
// directed edges (both stable once added). Accelerators are also numbered 0..n-1 in the order
// they were added (their rank), which builders make node-major: rank = node * per_node + local.
//
// A link has a line rate (`bandwidth`, what the datasheet says) and an achievable bandwidth
// (`achievable`, what traffic really gets: NVLink moved by SM copies, PCIe and network headers;
// link_tech.hpp gives the measured fractions per technology). Flows share the achievable
// bandwidth. A link may also limit each flow crossing it (`flow_cap`: a TCP socket stream is
// bounded by the CPU that copies it, whatever the wire). Switches may reduce in the network
// (NVLink SHARP on NVSwitch-3, InfiniBand SHARP): `reduction_bandwidth` per port. Accelerators
// that run NCCL carry its compute-capability class, which selects NCCL's tuning tables.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace dlsim::network {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;

enum class VertexKind { accelerator, nic, switch_ };

// How the fabric's switches choose among equal-cost paths (routing.hpp says what each does).
// A property of the fabric, set by its builder; custom topologies use ecmp.
// - ecmp: per-flow hash (Ethernet/RoCE switches hash each flow's 5-tuple);
// - d_mod_k: destination-based, the up-port at each tier chosen from the destination's index
//   (InfiniBand fat-trees: OpenSM's ftree routing; Zahavi's D-mod-K);
// - balanced: each new route takes the least-loaded equal-cost path, knowing the routes taken
//   before it; not a switch's algorithm but the collision-free reference ECMP is measured against.
enum class RoutingScheme { ecmp, d_mod_k, balanced };

struct VertexInfo {
  VertexKind kind = VertexKind::switch_;
  std::string name;     // "node3/gpu5", "leaf2", "spine0"
  int node = -1;        // node (host) index for accelerators and NICs, -1 for switches
  int local = -1;       // index inside the node, -1 for switches
  int tier = 0;         // switches: 1 = leaf/rail/ToR, 2 = spine/aggregation, 3 = core
  // Switches: in-network reduction bandwidth per attached port (bytes/s, per direction); 0 when
  // the switch cannot reduce. Accelerators: the NCCL compute capability they run (70 Volta, 80
  // Ampere, 90 Hopper; 0: no NCCL, collectives are ideal phases of flows).
  double reduction_bandwidth = 0;
  int nccl_compute_capability = 0;
};

// What a link is, beyond its role (`kind`): the technology and generation that set its
// achievable fraction of line rate (link_tech.hpp). `generic` links run at line rate.
enum class LinkTech {
  generic,
  nvlink1, nvlink2, nvlink3, nvlink4, nvlink5,
  pcie3, pcie4, pcie5,
  ib_edr, ib_hdr, ib_ndr,
  roce, efa, ethernet,
  ici, wan,
};

struct LinkInfo {
  VertexId from = 0;
  VertexId to = 0;
  double bandwidth = 0;  // bytes/s, > 0
  double latency_s = 0;  // >= 0
  std::string kind;      // "nvlink", "pcie", "nic", "fabric", "wan", "ici" (for reports)
  LinkTech tech = LinkTech::generic;
  double achievable = 0;  // bytes/s that flows share, 0 < achievable <= bandwidth
  double flow_cap = std::numeric_limits<double>::infinity();  // bytes/s one flow may get here
};

// A full-duplex link as the builders describe it; efficiency = achievable / bandwidth.
struct LinkSpec {
  double bandwidth = 0;
  double latency_s = 0;
  std::string kind;
  LinkTech tech = LinkTech::generic;
  double efficiency = 1.0;  // in (0, 1]
  double flow_cap = std::numeric_limits<double>::infinity();
};

// A torus fabric's layout (TPU ICI slices; topology_builders.hpp): `pods` equal tori of `dims`
// chips (x fastest), joined by nothing but the hosts' data-centre network. Accelerator rank r
// sits in pod r / pod_size() at cell cells[r] = x + X * (y + Y * z) of its torus; wrap[d] says
// whether axis d closes into a ring (else its end chips are not linked: a mesh line). Empty
// dims: the topology is no torus.
struct TorusLayout {
  std::vector<int> dims;
  std::vector<bool> wrap;
  int pods = 1;
  std::vector<int> cells;  // per accelerator rank
  bool empty() const { return dims.empty(); }
  int pod_size() const;
  // The coordinate of a cell along axis d.
  int coordinate(int cell, std::size_t d) const;
};

class Topology {
 public:
  VertexId add_vertex(VertexInfo info);
  // Adds both directions of a full-duplex link; returns the id of the a->b direction
  // (b->a is that id + 1). Throws std::invalid_argument for a bad bandwidth or latency.
  LinkId add_duplex_link(VertexId a, VertexId b, double bandwidth, double latency_s, std::string kind);
  // The same with technology, efficiency and per-flow cap; throws std::invalid_argument for an
  // efficiency outside (0, 1] or a cap that is not > 0.
  LinkId add_duplex_link(VertexId a, VertexId b, const LinkSpec& spec);

  std::size_t vertex_count() const { return vertices_.size(); }
  std::size_t link_count() const { return links_.size(); }  // directed links
  const VertexInfo& vertex(VertexId v) const { return vertices_.at(v); }
  // Switches only; throws std::invalid_argument for another vertex or a bad bandwidth.
  void set_reduction_bandwidth(VertexId v, double bandwidth);
  const LinkInfo& link(LinkId l) const { return links_.at(l); }
  const std::vector<LinkId>& out_links(VertexId v) const { return out_.at(v); }

  // Accelerators in rank order.
  const std::vector<VertexId>& accelerators() const { return accelerators_; }
  int nodes() const { return nodes_; }   // number of distinct node indices of accelerators
  std::vector<VertexId> vertices_of_kind(VertexKind kind) const;
  // How switches choose among equal-cost paths (ecmp unless the builder says otherwise).
  RoutingScheme routing() const { return routing_; }
  void set_routing(RoutingScheme scheme) { routing_ = scheme; }
  // The torus layout of a torus fabric (empty otherwise); the builder sets it. Throws
  // std::invalid_argument when the cells do not match the accelerators or the dims.
  const TorusLayout& torus() const { return torus_; }
  void set_torus(TorusLayout layout);
  // The rank (index in accelerators()) of an accelerator vertex, or -1.
  int rank_of(VertexId v) const;

  // The Boost.Graph view (vertex i = VertexId i; edge property = LinkId), for graph algorithms.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                      boost::property<boost::edge_index_t, LinkId>>;
  const Graph& graph() const { return graph_; }

 private:
  std::vector<VertexInfo> vertices_;
  std::vector<LinkInfo> links_;
  std::vector<std::vector<LinkId>> out_;
  std::vector<VertexId> accelerators_;
  int nodes_ = 0;
  RoutingScheme routing_ = RoutingScheme::ecmp;
  TorusLayout torus_;
  Graph graph_;
};

}  // namespace dlsim::network
