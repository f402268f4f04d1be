// Topology: what connects devices, as a Boost.Graph directed graph. Vertices are accelerators,
// host NICs and switches; every physical full-duplex link is two directed edges, one per
// direction, each with its own bandwidth (bytes/s) and latency (s), so traffic in the two
// directions never competes. Ids are dense integers: VertexId indexes vertices, LinkId indexes
// directed edges (both stable once added). Accelerators are also numbered 0..n-1 in the order
// they were added (their rank), which builders make node-major: rank = node * per_node + local.
#pragma once
#include <cstdint>
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
};

struct LinkInfo {
  VertexId from = 0;
  VertexId to = 0;
  double bandwidth = 0;  // bytes/s, > 0
  double latency_s = 0;  // >= 0
  std::string kind;      // "nvlink", "pcie", "nic", "fabric", "wan", "ici" (for reports)
};

class Topology {
 public:
  VertexId add_vertex(VertexInfo info);
  // Adds both directions of a full-duplex link; returns the id of the a->b direction
  // (b->a is that id + 1). Throws std::invalid_argument for a bad bandwidth or latency.
  LinkId add_duplex_link(VertexId a, VertexId b, double bandwidth, double latency_s, std::string kind);

  std::size_t vertex_count() const { return vertices_.size(); }
  std::size_t link_count() const { return links_.size(); }  // directed links
  const VertexInfo& vertex(VertexId v) const { return vertices_.at(v); }
  const LinkInfo& link(LinkId l) const { return links_.at(l); }
  const std::vector<LinkId>& out_links(VertexId v) const { return out_.at(v); }

  // Accelerators in rank order.
  const std::vector<VertexId>& accelerators() const { return accelerators_; }
  int nodes() const { return nodes_; }   // number of distinct node indices of accelerators
  std::vector<VertexId> vertices_of_kind(VertexKind kind) const;
  // How switches choose among equal-cost paths (ecmp unless the builder says otherwise).
  RoutingScheme routing() const { return routing_; }
  void set_routing(RoutingScheme scheme) { routing_ = scheme; }

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
  Graph graph_;
};

}  // namespace dlsim::network
