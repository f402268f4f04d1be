// Routing: the path a flow takes, as the list of directed links from source to destination.
// Paths are shortest in hop count and, among those, widest (largest bottleneck bandwidth): a
// GPU reaches a peer over NVLink rather than through a PCIe NIC two hops away too. An
// accelerator other than the two ends forwards only between accelerator-to-accelerator links
// (cube-mesh NVLink, ICI), so between nodes a GPU sends and receives through its own NIC. Where
// several paths are equally short and wide, the fabric's RoutingScheme (topology.hpp) picks one,
// the same on every run:
// - ecmp: a hash of (source, destination, flow key) picks among the choices at each switch, as
//   Ethernet/RoCE switches hash a flow's 5-tuple (one NCCL connection is one queue pair, one
//   5-tuple). Flows of different pairs can land on the same link while another stays idle: hash
//   collisions, whose cost shows against the balanced reference.
// - d_mod_k: destination-based (D-mod-K; Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic
//   for Shift Permutations on Real Life Fat Trees", Technion CCIT report 776, 2010; the fat-tree
//   routing engine of OpenSM, linux-rdma/opensm doc/current-routing.txt). Every NIC attached to
//   a tier-1 switch has an index D = (rank of its tier-1 switch) x (most NICs on one tier-1
//   switch) + (its position on that switch). Going up, the switch at the l-th up-going choice
//   takes up-port floor(D / (w_1 ... w_{l-1})) mod w_l, w_i being the up-port counts of the
//   choices before. All traffic to one destination then converges on one top switch and comes
//   down one path that no other destination uses, and a shift permutation (rank i sends to
//   i + s, as every ring does) crosses no link twice on a full k-ary fat-tree (Zahavi et al.,
//   "Optimized InfiniBand fat-tree routing for shift all-to-all communication patterns",
//   Concurrency and Computation: Practice and Experience 22(2), 2010). Al-Fares et al.'s
//   two-level tables (SIGCOMM 2008) also pick the up-port from the destination host's id.
// - balanced: each new route takes an equal-cost path whose most loaded link carries the fewest
//   routes handed out so far (then the smallest total load; ties go to the D-mod-K choice). It
//   sees the routes of the whole collective, which no switch does: the collision-free
//   reference that routing costs are measured against.
//
// A query runs a breadth-first search from the source, labelling each vertex with its hop
// distance and the widest bottleneck of a shortest path to it, and stops once the level before
// the destination is complete. On a large fabric that search would label nearly every switch
// and NIC for a pair in two distant pods, so it is pruned first: a bidirectional search (hop
// counts only, the smaller frontier expanded a level at a time) finds the distance D and labels
// the vertices near the destination with their distance to it; the labelled search then enqueues
// a vertex only when its distance from the source plus that distance to the destination (or,
// beyond the backward search's radius, the radius + 1, a lower bound) is at most D. Every vertex
// on a shortest path passes, with the labels it had without pruning, so paths are unchanged
// (the unpruned search stays as the reference the tests compare with: set_pruning(false)).
// Where the backward search has labelled every vertex the next level can hold, that level is
// found bottom-up when cheaper (each candidate scans its own links for predecessors, instead of
// the level scanning all of its links: after the core switches of a fat-tree, the destination
// pod's few aggregation switches against every core switch's every link). The search then walks
// back from the destination choosing, at each vertex, one of the links from a vertex one hop
// nearer that keeps the path's width; the walk meets the destination's NIC (its D) before any
// fabric choice. Scratch arrays are reused
// between queries (no allocation per query), and paths are cached by (source, destination,
// flow key), since collectives ask for the same pairs again.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "network/topology.hpp"

namespace dlsim::network {

using Path = std::vector<LinkId>;

class Routing {
 public:
  // Routes as the topology's fabric does (Topology::routing()).
  explicit Routing(const Topology& topology);
  // Routes by another scheme on the same topology (e.g. the balanced reference).
  Routing(const Topology& topology, RoutingScheme scheme);

  RoutingScheme scheme() const { return scheme_; }

  // The links from `from` to `to` (empty when from == to). Throws std::invalid_argument for an
  // unknown vertex or when `to` cannot be reached.
  const Path& path(VertexId from, VertexId to, std::uint64_t flow_key = 0);
  // Hop distance, or -1 when unreachable. Throws std::invalid_argument for an unknown vertex.
  int hops(VertexId from, VertexId to);
  // Sum of link latencies along a path.
  double latency(const Path& p) const;
  // Smallest link bandwidth along a path (infinity for an empty path).
  double bottleneck(const Path& p) const;

  // D-mod-K index of a NIC attached to a tier-1 switch, else -1.
  std::int64_t destination_index(VertexId v) const;

  // Whether searches are pruned by the bidirectional bound (the default); the unpruned search is
  // the reference: both give the same paths. Clears the path cache.
  void set_pruning(bool on);

  // The switch-to-switch link that the most distinct routes handed out so far cross (ties: the
  // lowest id), and how many; routes 0 when no route crosses one. Over every route asked since
  // construction: for a one-phase collective (a ring) the flows that share the link at once.
  struct SharedLink {
    LinkId link = 0;
    int routes = 0;
  };
  SharedLink most_shared_link() const;

 private:
  // Labels distances from `from` until `to` is reached; returns its distance or -1.
  int search(VertexId from, VertexId to);
  // The hop distance from `from` to `to` (-1: unreachable) by a bidirectional search, which
  // leaves back_distance_ labelled (back_stamp_ == epoch_) for every vertex within
  // back_radius_ hops of `to`. Uses the forward labels of the same epoch as scratch.
  int meet(VertexId from, VertexId to);
  // One level of the labelled search, from the vertices queue_[begin, end) at one distance:
  // top-down over their out-links, or bottom-up from the backward search's vertices at distance
  // `back` from the destination (complete when back <= back_radius_), over their in-links.
  void push_level(std::size_t begin, std::size_t end, bool pruned, int bound, int& found, int& last);
  void pull_level(int level, int back, int& found, int& last);
  bool pull_is_cheaper(std::size_t begin, std::size_t end, int back) const;
  // Whether a labelled vertex is expanded: at the level before `to` (`last`), only those that
  // can step into it.
  bool expanded(VertexId v, int last) const;
  // Labels u at `distance` with `width`, queues it (or notes `to` found) and updates `last`.
  void label(VertexId u, int distance, double width, int& found, int& last);
  // Expands one level of a frontier, forward (out-links) or backward (in-links); returns the
  // shortest source-to-destination distance through a vertex labelled by both sides, or -1.
  int expand(bool forward);
  // balanced: the least (max, sum) route load over the current query's equal-cost paths from
  // the source to `v`.
  struct Load {
    std::uint32_t max;
    std::uint64_t sum;
  };
  Load best_load(VertexId v);
  // d_mod_k: the link into `v` that D-mod-K takes when `v` is a fabric switch whose choices all
  // come down from higher-tier switches; advances `stride`. Returns false when it does not apply.
  bool destination_choice(VertexId v, std::int64_t dest, std::int64_t& stride, LinkId& chosen);
  // balanced: the choice whose path from the source has the least (max, sum) load; ties go to
  // `preferred` (the D-mod-K choice) when has_preferred, else to the first.
  LinkId least_loaded(bool has_preferred, LinkId preferred);
  // Whether a path of the current query may take the hop u -> v, defined here so that the
  // searches' inner loops inline it. An accelerator forwards only between its
  // accelerator-to-accelerator links (a DGX-1 cube-mesh hop, a torus's ICI): traffic never
  // enters another GPU from its NVSwitch or NIC to leave through that GPU's NIC. Across nodes a
  // GPU thus sends through its own NIC and receives through its own NIC, rail to rail, as NCCL
  // does (GPUDirect RDMA from the nearest NIC); otherwise, where nodes straddle edge switches, a
  // path through a neighbour GPU's NIC ties in length with the direct one and lands on a NIC that
  // carries its own rail's flow.
  bool hop_allowed(VertexId u, VertexId v) const {
    const bool u_accelerator = accelerator_[u] != 0;
    const bool v_accelerator = accelerator_[v] != 0;
    if (v_accelerator && v != to_ && !u_accelerator) return false;  // entering a transit GPU
    if (u_accelerator && u != from_ && !v_accelerator) return false;  // leaving a transit GPU
    return true;
  }
  void check_vertex(VertexId v) const;
  void index_destinations();
  bool fabric_switch(VertexId v) const;

  // A vertex's out-links as the searches read them, packed (LinkInfo is large): the neighbour,
  // the link, and the bandwidths of both directions of its cable (link ^ 1 comes back).
  struct Arc {
    VertexId to;
    LinkId link;
    double out_bandwidth;
    double in_bandwidth;
  };
  std::span<const Arc> arcs_of(VertexId v) const {
    return {arcs_.data() + arc_begin_[v], arcs_.data() + arc_begin_[v + 1]};
  }

  const Topology& topology_;
  RoutingScheme scheme_;
  std::vector<Arc> arcs_;                // every vertex's out-links, vertex by vertex
  std::vector<std::size_t> arc_begin_;   // arcs_of(v) = arcs_[arc_begin_[v], arc_begin_[v + 1])
  std::vector<char> fabric_switch_;      // per vertex: a switch of tier >= 1
  std::vector<int> tier_;                // per vertex: its tier
  std::vector<double> link_latency_;     // per link
  std::vector<std::int64_t> index_;     // D-mod-K index per vertex, -1 for none
  std::vector<char> accelerator_;       // per vertex: an accelerator
  std::vector<int> distance_;           // valid where stamp_ == epoch_
  std::vector<double> width_;           // widest bottleneck of a shortest path from the source
  std::vector<std::uint32_t> stamp_;
  std::vector<std::uint32_t> near_;     // == epoch_: may step into the current destination
  std::uint32_t epoch_ = 0;
  VertexId from_ = 0, to_ = 0;          // the current query's ends
  std::vector<VertexId> queue_;
  // The bidirectional bound: distances to the destination, valid where back_stamp_ == epoch_,
  // complete up to back_radius_; the two frontiers and their next levels.
  bool pruning_ = true;
  std::vector<int> back_distance_;
  std::vector<std::uint32_t> back_stamp_;
  int back_radius_ = 0;
  std::uint32_t back_epoch_ = 0;            // the epoch of the backward labels
  std::vector<VertexId> back_order_;        // the backward search's vertices, level by level
  std::vector<std::size_t> back_level_;     // back_order_[back_level_[b], back_level_[b + 1]): distance b
  std::vector<VertexId> forward_front_, backward_front_, next_front_;
  std::vector<LinkId> choices_;         // equal-cost links into the vertex being walked
  // balanced only: routes per link, and the best (max, sum) load from the source per vertex
  std::vector<std::uint32_t> load_;
  std::vector<std::uint32_t> best_max_;
  std::vector<std::uint64_t> best_sum_;
  std::vector<std::uint32_t> best_stamp_;  // == epoch_: best_max_/best_sum_ hold this query's
  double query_width_ = 0;              // the current query's path width
  // Paths by (source, destination, flow key). A hash map: nothing iterates it in an order that
  // reaches a result (most_shared_link counts routes per link), and its nodes stay put, so the
  // references path() hands out stay valid as it grows.
  struct PathKey {
    VertexId from, to;
    std::uint64_t flow_key;
    bool operator==(const PathKey& o) const { return from == o.from && to == o.to && flow_key == o.flow_key; }
  };
  struct PathKeyHash {
    std::size_t operator()(const PathKey& k) const;
  };
  std::unordered_map<PathKey, Path, PathKeyHash> cache_;
};

// "ecmp", "d-mod-k", "balanced" (the scenario spelling).
std::string to_string(RoutingScheme scheme);

}  // namespace dlsim::network
