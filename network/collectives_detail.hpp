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
#include <limits>
#include <memory>
#include <vector>

#include "network/collectives.hpp"
#include "network/flow_network.hpp"
#include "network/nccl_tuning.hpp"
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

// A group on a torus fabric (Algorithm::torus, collectives_torus.cpp): its axes with more than
// one coordinate in the group, and the pods it spans.
struct TorusPlan {
  std::vector<int> sizes;   // per active axis: the group's coordinates along it (k >= 2)
  std::vector<bool> ring;   // per active axis: the group closes a ring on it (else a mesh line)
  std::vector<std::vector<std::vector<VertexId>>> lines;  // per active axis: its lines, in order
  std::vector<std::vector<VertexId>> pod_rings;  // per cell of the group: its chip in each pod
  int pods = 1;       // pods the group spans
  int pod_group = 1;  // members per pod
};

// The group as a box of torus coordinates (strided boxes too), the same in every pod it spans;
// nullptr when the topology is no torus or the group is not such a box.
std::shared_ptr<const TorusPlan> torus_plan_of(const Topology& topology, const std::vector<VertexId>& ranks);

// One collective, resolved (algorithm != automatic) and validated.
struct Plan {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  double bytes = 0;
  std::vector<VertexId> ranks;
  int root = 0;
  int shards = 1;
  Layout layout;
  // The rings a ring collective runs inside every node, as orders of positions in a node's
  // group (see node_rings); one ring in rank order unless the node has direct NVLinks.
  std::vector<std::vector<int>> node_rings;
  // NCCL's model (collectives_group.cpp): wire bytes per payload byte (1 / the protocol's
  // fraction), the pipeline start-up latency of NCCL's tuner (< 0: the flows' own path
  // latencies, the ideal model), and the latency every NCCL launch adds to a step collective.
  bool nccl = false;
  int channels = 0;  // NCCL's nChannels for a tuned collective: CTAs, each holding an SM while it runs (0: none counted)
  double wire = 1;
  double latency_s = -1;
  double launch_s = 0;
  // In-network reduction: nvls, the NVSwitch of each node group; collnet, the switch each rank's
  // NIC attaches to. reduction_bw: the smallest per-port reduction bandwidth among them.
  std::vector<VertexId> reducers;
  double reduction_bw = 0;
  // Algorithm::torus: the group's axes, lines and pods.
  std::shared_ptr<const TorusPlan> torus;
  int ranks_count() const { return static_cast<int>(ranks.size()); }
};

// The rings of node_rings: ring_search over the direct links among the first node's ranks
// (units = link bandwidth / the smallest direct link's), or {0, 1, ..., g-1} when it finds none
// (NVSwitch and PCIe nodes have no direct links) or the layout is not uniform.
std::vector<std::vector<int>> node_rings(const Topology& topology, const Plan& plan);

// Resolves plan.algorithm, plan.protocol and the NCCL fields from `spec` (plan.kind, ranks,
// layout and node_rings set): NCCL's tuner when every rank runs NCCL, choose_algorithm
// otherwise. Throws std::invalid_argument for a forced choice that cannot run.
void resolve(Plan& plan, const CollectiveSpec& spec, const Topology& topology, Routing& routing);

// What NCCL's tuner knows of the group (nccl_tuning.hpp), derived from the topology.
NcclGroup nccl_group_of(const Plan& plan, const Topology& topology, Routing& routing);

// Whether `algorithm` implements `kind` at all (automatic never does: resolve it first).
bool applies(CollectiveKind kind, Algorithm algorithm);
// Throws std::invalid_argument when the algorithm does not apply to the kind or the group.
void validate(const Plan& plan);
int phase_count(const Plan& plan);

// Collects the flows of one phase, with their paths. Under NCCL's model (Plan::nccl) every
// flow carries its payload over the protocol's fraction, pipelines start after NCCL's latency
// instead of their paths', and the first phase's steps wait for the launch.
class PhaseBuilder {
 public:
  PhaseBuilder(Routing& routing, std::vector<FlowSpec>& out) : routing_(routing), out_(out) {}
  PhaseBuilder(Routing& routing, std::vector<FlowSpec>& out, const Plan& plan, int phase)
      : routing_(routing), out_(out), wire_(plan.wire), fixed_fill_(plan.latency_s),
        step_latency_(phase == 0 ? plan.launch_s : 0) {}
  // Appends a flow from -> to of `bytes` (payload), at most `cap` bytes/s of payload; returns
  // its path latency (seconds).
  double add(VertexId from, VertexId to, double bytes, double cap = std::numeric_limits<double>::infinity());
  std::size_t size() const { return out_.size(); }
  // Gives every flow appended since `first` the same total latency `fill_s` (path latency
  // plus extra_latency_s), the start-up time of the pipeline they form; NCCL's latency
  // replaces `fill_s` under its model. A flow whose own path is slower keeps its own latency:
  // no flow beats its path.
  void fill(std::size_t first, double fill_s);

 private:
  Routing& routing_;
  std::vector<FlowSpec>& out_;
  std::vector<double> own_latency_;  // parallel to out_, for fill()
  double wire_ = 1;
  double fixed_fill_ = -1;
  double step_latency_ = 0;
};

// Appends the flows of phase `phase` (0-based, < phase_count) of `plan`.
void build_phase(const Plan& plan, int phase, PhaseBuilder& builder);

// The rings of a ring collective (collectives_plans.cpp): per node ring and, across nodes, per
// rotation of it, the ranks in visiting order.
std::vector<std::vector<VertexId>> ring_channels(const Plan& plan);

// NCCL's algorithms whose flows are their own (collectives_nccl_plans.cpp), each one pipelined
// phase: the tree (a chain inside each node, double binary trees across nodes, one per
// channel), NVLS (every GPU streams to and from its NVSwitch, which reduces; NVLS trees on the
// rails across nodes) and CollNet (a ring inside each node, each rank's shard reduced by the
// fabric's switches).
void nccl_tree_all_reduce(const Plan& plan, PhaseBuilder& b);
// The torus collectives (collectives_torus.cpp): their phase count and phases.
int torus_phase_count(const Plan& plan);
void torus_phase(const Plan& plan, int phase, PhaseBuilder& b);
void nvls_all_reduce(const Plan& plan, PhaseBuilder& b);
void collnet_all_reduce(const Plan& plan, PhaseBuilder& b);

// A pipelined ring and tree (collectives_plans.cpp), shared by the NCCL plans.
void ring_pipeline(const std::vector<VertexId>& members, double edge_bytes, int steps, PhaseBuilder& b);
void tree_pipeline(const std::vector<VertexId>& members, const std::vector<int>& parent, double bytes, bool up,
                   bool down, PhaseBuilder& b);

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
