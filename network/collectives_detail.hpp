// Private to network/: how each collective algorithm becomes phases of flows.
//
// A Plan is one collective with its algorithm resolved and its group checked. Its phases are
// built one at a time, when the previous phase has ended, by build_phase(), which appends the
// phase's flows to a PhaseBuilder. Building lazily keeps memory at one phase's flows, and the
// flow count per phase near p for every all-reduce (never p^2).
//
// Two kinds of flows:
// - a step: a plain transfer whose latency is its own path's (halving-doubling steps,
//   all-to-all, parameter server, send/recv);
// - a pipeline: the concurrent flows of a pipelined ring, chain or tree. NCCL cuts the message
//   into chunks and streams them, so every edge of the pipeline is busy at once; we model the
//   whole pipeline as one phase of concurrent flows, one per edge, each carrying all the bytes
//   that edge moves, and give every flow of the pipeline the same start-up latency, the time
//   for the first chunk to cross the pipeline (its "fill" latency). See PhaseBuilder::fill.
#pragma once
#include <cstddef>
#include <vector>

#include "network/collectives.hpp"
#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "network/topology.hpp"

namespace dlsim::network::detail {

// How the ranks of a group sit on nodes (hosts), from Topology vertex .node. Nodes are in order
// of first appearance in the rank list; ranks inside a node keep their rank order, and their
// position there is their local index (their rail, on rail-optimized fabrics).
struct Layout {
  std::vector<std::vector<int>> groups;  // indices into the rank list, per node
  bool uniform = true;                   // every node holds the same number of ranks
  int nodes() const { return static_cast<int>(groups.size()); }
  int per_node() const { return groups.empty() ? 0 : static_cast<int>(groups.front().size()); }
};
Layout layout_of(const Topology& topology, const std::vector<VertexId>& ranks);

// One collective, resolved (algorithm != automatic) and validated.
struct Plan {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  double bytes = 0;
  std::vector<VertexId> ranks;
  int root = 0;
  int shards = 1;
  Layout layout;
  int ranks_count() const { return static_cast<int>(ranks.size()); }
};

// Whether `algorithm` implements `kind` at all (automatic never does: resolve it first).
bool applies(CollectiveKind kind, Algorithm algorithm);
// Throws std::invalid_argument when the algorithm does not apply to the kind or the group.
void validate(const Plan& plan);
int phase_count(const Plan& plan);

// Collects the flows of one phase, with their paths.
class PhaseBuilder {
 public:
  PhaseBuilder(Routing& routing, std::vector<FlowSpec>& out) : routing_(routing), out_(out) {}
  // Appends a flow from -> to of `bytes`; returns its path latency (seconds).
  double add(VertexId from, VertexId to, double bytes);
  std::size_t size() const { return out_.size(); }
  // Gives every flow appended since `first` the same total latency `fill_s` (path latency
  // plus extra_latency_s), the start-up time of the pipeline they form. A flow whose own path
  // is slower than `fill_s` keeps its own latency: no flow beats its path.
  void fill(std::size_t first, double fill_s);

 private:
  Routing& routing_;
  std::vector<FlowSpec>& out_;
  std::vector<double> own_latency_;  // parallel to out_, for fill()
};

// Appends the flows of phase `phase` (0-based, < phase_count) of `plan`.
void build_phase(const Plan& plan, int phase, PhaseBuilder& builder);

// NCCL's binary tree over n ranks (root 0, one child), as a parent array (-1 for the root),
// and the second tree of its double binary tree (mirror for even n, shift by one for odd n).
// After NCCL src/graph/trees.cc (ncclGetBtree, ncclGetDtree).
std::vector<int> btree_parents(int n);
std::vector<int> second_tree_parents(int n);
// Edges from the root to the deepest leaf (0 for one rank).
int tree_depth(const std::vector<int>& parent);

// ceil(log2(n)) for n >= 1.
int ceil_log2(int n);
// floor(log2(n)) for n >= 1.
int floor_log2(int n);
bool is_power_of_two(int n);

}  // namespace dlsim::network::detail
