// The phases of every collective algorithm, as flows (see collectives_detail.hpp for the two
// kinds of flows, steps and pipelines). Sizes follow nccl-tests (collectives.hpp): n is the
// per-rank buffer, p the number of ranks.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "network/collectives_detail.hpp"

namespace dlsim::network::detail {

int ceil_log2(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  return bits;
}

int floor_log2(int n) {
  int bits = 0;
  while ((2 << bits) <= n) ++bits;
  return bits;
}

bool is_power_of_two(int n) { return n >= 1 && (n & (n - 1)) == 0; }

Layout layout_of(const Topology& topology, const std::vector<VertexId>& ranks) {
  Layout layout;
  std::vector<int> group_of_node;  // node index -> group, -1 when not seen yet
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i) {
    const int node = topology.vertex(ranks[i]).node;
    if (node < 0) {  // not on any host (custom topologies): a node of its own
      layout.groups.push_back({i});
      continue;
    }
    if (node >= static_cast<int>(group_of_node.size())) group_of_node.resize(node + 1, -1);
    if (group_of_node[node] < 0) {
      group_of_node[node] = layout.nodes();
      layout.groups.emplace_back();
    }
    layout.groups[group_of_node[node]].push_back(i);
  }
  for (const auto& g : layout.groups) layout.uniform = layout.uniform && g.size() == layout.groups[0].size();
  return layout;
}

double PhaseBuilder::add(VertexId from, VertexId to, double bytes, double cap) {
  FlowSpec spec;
  spec.path = routing_.path(from, to);
  spec.bytes = bytes * wire_;
  spec.rate_cap = cap * wire_;
  spec.extra_latency_s = step_latency_;
  const double latency = routing_.latency(spec.path);
  out_.push_back(std::move(spec));
  own_latency_.push_back(latency);
  return latency;
}

void PhaseBuilder::fill(std::size_t first, double fill_s) {
  if (fixed_fill_ >= 0) fill_s = fixed_fill_;
  for (std::size_t i = first; i < out_.size(); ++i) {
    out_[i].extra_latency_s = std::max(0.0, fill_s - own_latency_[i]);
  }
}

// ---- trees (NCCL src/graph/trees.cc) -------------------------------------------------------

// NCCL's btree: a rank's parent clears its lowest set bit and sets the next one up (or just
// clears it when that is out of range), so the lowest set bit grows towards the root 0.
std::vector<int> btree_parents(int n) {
  std::vector<int> parent(static_cast<std::size_t>(std::max(n, 0)), -1);
  for (int r = 1; r < n; ++r) {
    const int bit = r & -r;
    int up = (r ^ bit) | (bit << 1);
    if (up >= n) up = r ^ bit;
    parent[r] = up;
  }
  return parent;
}

// NCCL's ncclGetDtree: mirror the first tree for even n, shift it by one rank for odd n, so
// that (almost) every rank is an inner node in one tree and a leaf in the other.
std::vector<int> second_tree_parents(int n) {
  const std::vector<int> first = btree_parents(n);
  std::vector<int> parent(first.size(), -1);
  for (int r = 0; r < n; ++r) {
    if (n % 2 == 1) {
      const int u = first[(r - 1 + n) % n];
      parent[r] = u < 0 ? -1 : (u + 1) % n;
    } else {
      const int u = first[n - 1 - r];
      parent[r] = u < 0 ? -1 : n - 1 - u;
    }
  }
  return parent;
}

namespace {

// Largest sum of `edge` values along the chain from any node up to the root (edge[v] belongs
// to the edge v -> parent[v]). Chains are about log2(n) long.
double deepest(const std::vector<int>& parent, const std::vector<double>& edge) {
  double worst = 0;
  for (std::size_t v = 0; v < parent.size(); ++v) {
    double sum = 0;
    for (int u = static_cast<int>(v); parent[u] >= 0; u = parent[u]) sum += edge[u];
    worst = std::max(worst, sum);
  }
  return worst;
}

}  // namespace

int tree_depth(const std::vector<int>& parent) {
  return static_cast<int>(deepest(parent, std::vector<double>(parent.size(), 1.0)));
}

// ---- pipelines -----------------------------------------------------------------------------

// A pipelined ring over `members`: every edge i -> i+1 carries `edge_bytes` concurrently. The
// first chunk needs `steps` hops to finish, so the fill latency is `steps` times the mean hop
// latency of the ring, as in NCCL's tuning model where a ring's latency is its step count times
// the per-step latency (intra- and inter-node steps counted apart).
void ring_pipeline(const std::vector<VertexId>& members, double edge_bytes, int steps, PhaseBuilder& b) {
  const std::size_t q = members.size();
  if (q < 2) return;
  const std::size_t first = b.size();
  double sum = 0;
  for (std::size_t i = 0; i < q; ++i) sum += b.add(members[i], members[(i + 1) % q], edge_bytes);
  b.fill(first, steps * sum / static_cast<double>(q));
}

// The rings of a ring collective. Nodes with unequal rank counts: one ring in rank order. On
// one node: the node's rings (Plan::node_rings; one in rank order unless the node has direct
// NVLinks, where ring_search found several), each carrying an equal share. Across nodes of g
// ranks each: every node ring in g rotations ("channels", as NCCL runs one ring per channel to
// use every NIC), each carrying its share. Rotation c of ring r (positions r[0..g-1]) visits
// each node in an order that snakes: even nodes go forward from r[c] (r[c], r[c+1], ...,
// r[c-1]), odd nodes backward from r[c-1] (r[c-1], r[c-2], ..., r[c]), so every hop between
// nodes joins two ranks of the same local index, i.e. the same rail on rail-optimized fabrics
// (with an odd node count the closing hop is the one exception). Rotation c leaves nodes on
// rails r[c-1] and r[c] alternately, so the channels spread evenly over all NICs. With one ring
// in rank order this is channel c = local c.
std::vector<std::vector<VertexId>> ring_channels(const Plan& plan) {
  const Layout& layout = plan.layout;
  const int g = layout.per_node();
  if (!layout.uniform || g < 1) return {plan.ranks};
  const auto rank_at = [&](int node, int position) {
    return plan.ranks[static_cast<std::size_t>(layout.groups[static_cast<std::size_t>(node)][static_cast<std::size_t>(position)])];
  };
  std::vector<std::vector<VertexId>> channels;
  if (layout.nodes() < 2) {
    for (const auto& r : plan.node_rings) {
      channels.emplace_back();
      for (int position : r) channels.back().push_back(rank_at(0, position));
    }
    return channels;
  }
  if (g < 2) return {plan.ranks};
  for (const auto& r : plan.node_rings) {
    for (int c = 0; c < g; ++c) {
      channels.emplace_back();
      auto& ring = channels.back();
      for (int node = 0; node < layout.nodes(); ++node) {
        for (int i = 0; i < g; ++i) {
          const int k = node % 2 == 0 ? (c + i) % g : ((c - 1 - i) % g + g) % g;
          ring.push_back(rank_at(node, r[static_cast<std::size_t>(k)]));
        }
      }
    }
  }
  return channels;
}

namespace {

// A ring collective over all channels: each channel's ring carries its share of the bytes.
void channel_rings(const Plan& plan, double edge_bytes, int steps, PhaseBuilder& b) {
  const auto channels = ring_channels(plan);
  for (const auto& ring : channels) ring_pipeline(ring, edge_bytes / static_cast<double>(channels.size()), steps, b);
}

// A pipelined chain members[0] -> members[1] -> ... (ring broadcast and reduce): every link
// streams the whole message; the fill latency is the chain's end-to-end latency.
void chain_pipeline(const std::vector<VertexId>& members, double bytes, PhaseBuilder& b) {
  const std::size_t first = b.size();
  double sum = 0;
  for (std::size_t i = 0; i + 1 < members.size(); ++i) sum += b.add(members[i], members[i + 1], bytes);
  b.fill(first, sum);
}

}  // namespace

// A pipelined tree over `members` (parent array over their positions): every edge carries
// `bytes` up (child -> parent, reduce) and/or down (broadcast), all at once. The fill latency
// is the slowest root-to-leaf path, once per direction used: reduce up, then broadcast down.
void tree_pipeline(const std::vector<VertexId>& members, const std::vector<int>& parent, double bytes, bool up,
                   bool down, PhaseBuilder& b) {
  const std::size_t first = b.size();
  std::vector<double> edge(parent.size(), 0.0);
  for (std::size_t v = 0; v < parent.size(); ++v) {
    if (parent[v] < 0) continue;
    const VertexId child = members[v];
    const VertexId par = members[static_cast<std::size_t>(parent[v])];
    if (up) edge[v] += b.add(child, par, bytes);
    if (down) edge[v] += b.add(par, child, bytes);
  }
  b.fill(first, deepest(parent, edge));
}

namespace {

std::vector<VertexId> pick(const std::vector<VertexId>& ranks, const std::vector<int>& indices) {
  std::vector<VertexId> out;
  out.reserve(indices.size());
  for (int i : indices) out.push_back(ranks[static_cast<std::size_t>(i)]);
  return out;
}

// ---- algorithms ----------------------------------------------------------------------------

// Double binary tree all-reduce (NCCL 2.4; Sanders, Speck and Traeff 2009): two complementary
// trees over all ranks, each reducing and broadcasting half the data. Pipelined: each tree edge
// carries concurrent up (reduce) and down (broadcast) flows of n/2.
void double_tree_all_reduce(const Plan& plan, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  tree_pipeline(plan.ranks, btree_parents(p), plan.bytes / 2, true, true, b);
  tree_pipeline(plan.ranks, second_tree_parents(p), plan.bytes / 2, true, true, b);
}

// Two-tree broadcast / reduce (Sanders, Speck and Traeff 2009): the root feeds half the message
// into each of two complementary binary trees over the other p-1 ranks (NCCL's two trees), so
// every rank forwards at most n in total. Node 0 of each tree is the root; node j >= 1 is rank
// (root + j) mod p.
void two_tree_rooted(const Plan& plan, bool broadcast, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  const int m = p - 1;
  std::vector<VertexId> members(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) members[j] = plan.ranks[static_cast<std::size_t>((plan.root + j) % p)];
  for (const std::vector<int>& tree : {btree_parents(m), second_tree_parents(m)}) {
    std::vector<int> parent(static_cast<std::size_t>(p), -1);
    for (int k = 0; k < m; ++k) parent[k + 1] = tree[k] < 0 ? 0 : tree[k] + 1;
    tree_pipeline(members, parent, plan.bytes / 2, !broadcast, broadcast, b);
  }
}

// Ring broadcast (reduce): a chain from the root through ranks root+1, root+2, ... (for
// reduce, from root+1 round to the root), every link streaming the whole message.
void ring_rooted(const Plan& plan, bool broadcast, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  std::vector<VertexId> chain;
  for (int j = 0; j < p; ++j) {
    chain.push_back(plan.ranks[static_cast<std::size_t>((plan.root + (broadcast ? j : j + 1)) % p)]);
  }
  chain_pipeline(chain, plan.bytes, b);
}

// Halving-doubling (Thakur, Rabenseifner and Gropp 2005; Gloo's allreduce_halving_doubling,
// which Goyal et al. 2017 used): log2(p) reduce-scatter steps then log2(p) all-gather steps,
// each a phase where every rank exchanges with one partner. As in Gloo, the reduce-scatter
// starts with the nearest partner and the largest message (distance 1, n/2) and halves the
// message while doubling the distance, so the big exchanges stay inside nodes; the all-gather
// retraces those steps backwards. `members` are the ranks taking part, a power of two of them
// (all ranks, or the survivors of the fold below).
void halving_doubling_step(const Plan& plan, const std::vector<VertexId>& members, int step, bool gather,
                           PhaseBuilder& b) {
  const int p = static_cast<int>(members.size());
  const int levels = ceil_log2(p);
  const int s = gather ? levels - 1 - step : step;  // the reduce-scatter step retraced
  const int distance = 1 << s;
  const double bytes = plan.bytes / static_cast<double>(2 << s);
  for (int r = 0; r < p; ++r) b.add(members[r], members[r ^ distance], bytes);
}

// Halving-doubling all-reduce on any rank count: MPICH's "fold" for non-powers of two (Thakur,
// Rabenseifner and Gropp 2005, section 4.4; MPICH allreduce_intra_reduce_scatter_allgather).
// With p' the largest power of two <= p and r = p - p': phase 0, in each of the first r pairs
// (2i, 2i+1) the even rank sends its whole vector (n) to the odd one, which reduces it; the
// p' survivors (the odd ranks of those pairs, then ranks 2r..p-1, in rank order) run the
// 2 log2(p') steps of halving-doubling; last phase, each odd rank sends the whole result back
// to its even partner. A power-of-two group has no fold: the plain 2 log2(p) phases.
int fold_extra(int p) { return p - (1 << floor_log2(p)); }

std::vector<VertexId> fold_survivors(const Plan& plan) {
  const int p = plan.ranks_count();
  const int r = fold_extra(p);
  std::vector<VertexId> out;
  out.reserve(static_cast<std::size_t>(p - r));
  for (int i = 0; i < r; ++i) out.push_back(plan.ranks[static_cast<std::size_t>(2 * i + 1)]);
  for (int i = 2 * r; i < p; ++i) out.push_back(plan.ranks[static_cast<std::size_t>(i)]);
  return out;
}

void halving_doubling_all_reduce(const Plan& plan, int phase, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  const int r = fold_extra(p);
  if (r == 0) {  // a power of two: no fold
    const int levels = ceil_log2(p);
    halving_doubling_step(plan, plan.ranks, phase < levels ? phase : phase - levels, phase >= levels, b);
    return;
  }
  const int levels = floor_log2(p);
  if (phase == 0 || phase == 2 * levels + 1) {  // fold in, or send the result back out
    for (int i = 0; i < r; ++i) {
      const VertexId even = plan.ranks[static_cast<std::size_t>(2 * i)];
      const VertexId odd = plan.ranks[static_cast<std::size_t>(2 * i + 1)];
      if (phase == 0) {
        b.add(even, odd, plan.bytes);
      } else {
        b.add(odd, even, plan.bytes);
      }
    }
    return;
  }
  const int step = phase - 1;
  halving_doubling_step(plan, fold_survivors(plan), step < levels ? step : step - levels, step >= levels, b);
}

// Hierarchical all-reduce (2-D all-reduce: Mikami et al. 2018, Horovod's hierarchical
// all-reduce): phase 0, a reduce-scatter ring inside every node; phase 1, for every local index
// j, an all-reduce ring over rank j of every node (rail-aligned: GPU j talks to GPU j) over the
// n/g bytes that rank owns; phase 2, an all-gather ring inside every node.
void hierarchical_all_reduce(const Plan& plan, int phase, PhaseBuilder& b) {
  const int g = plan.layout.per_node();
  const int nodes = plan.layout.nodes();
  if (phase != 1) {
    for (const auto& group : plan.layout.groups) {
      ring_pipeline(pick(plan.ranks, group), plan.bytes * (g - 1) / g, g - 1, b);
    }
    return;
  }
  for (int j = 0; j < g; ++j) {
    std::vector<VertexId> rail;
    for (const auto& group : plan.layout.groups) rail.push_back(plan.ranks[group[j]]);
    ring_pipeline(rail, 2.0 * (nodes - 1) / nodes * plan.bytes / g, 2 * (nodes - 1), b);
  }
}

// Direct all-to-all: every rank sends n/p to every other rank at once (p(p-1) flows).
void direct_all_to_all(const Plan& plan, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  for (int i = 0; i < p; ++i) {
    for (int j = 0; j < p; ++j) {
      if (i != j) b.add(plan.ranks[i], plan.ranks[j], plan.bytes / p);
    }
  }
}

// Rail-aligned two-phase all-to-all (NCCL 2.12's PXN idea: hop over NVLink to the GPU on the
// destination's rail, then cross the network rail to rail). Phase 0: inside each node, rank
// (a,i) hands (a,j) everything bound for local index j on any node: N chunks of n/p = n/g.
// Phase 1: on each rail j, (a,j) sends (b,j) what its node holds for (b,j): g chunks = n/N.
// p(g-1) + p(N-1) flows instead of p(p-1).
void hierarchical_all_to_all(const Plan& plan, int phase, PhaseBuilder& b) {
  const auto& groups = plan.layout.groups;
  const int g = plan.layout.per_node();
  const int nodes = plan.layout.nodes();
  if (phase == 0) {
    for (const auto& group : groups) {
      for (int i : group) {
        for (int j : group) {
          if (i != j) b.add(plan.ranks[i], plan.ranks[j], plan.bytes / g);
        }
      }
    }
    return;
  }
  for (int j = 0; j < g; ++j) {
    for (int a = 0; a < nodes; ++a) {
      for (int c = 0; c < nodes; ++c) {
        if (a != c) b.add(plan.ranks[groups[a][j]], plan.ranks[groups[c][j]], plan.bytes / nodes);
      }
    }
  }
}

// Parameter server (Li et al., OSDI 2014): workers ranks[shards..p) push n/shards to each
// server ranks[0..shards) (phase 0), then pull the same back (phase 1).
void push_pull(const Plan& plan, int phase, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  const double shard_bytes = plan.bytes / plan.shards;
  for (int w = plan.shards; w < p; ++w) {
    for (int s = 0; s < plan.shards; ++s) {
      if (phase == 0) {
        b.add(plan.ranks[w], plan.ranks[s], shard_bytes);
      } else {
        b.add(plan.ranks[s], plan.ranks[w], shard_bytes);
      }
    }
  }
}

void build_all_reduce(const Plan& plan, int phase, PhaseBuilder& b) {
  const int p = plan.ranks_count();
  switch (plan.algorithm) {
    case Algorithm::ring:
      channel_rings(plan, 2.0 * (p - 1) / p * plan.bytes, 2 * (p - 1), b);
      return;
    case Algorithm::double_binary_tree:
      if (plan.nccl) return nccl_tree_all_reduce(plan, b);
      double_tree_all_reduce(plan, b);
      return;
    case Algorithm::nvls:
      return nvls_all_reduce(plan, b);
    case Algorithm::collnet:
      return collnet_all_reduce(plan, b);
    case Algorithm::hierarchical:
      hierarchical_all_reduce(plan, phase, b);
      return;
    case Algorithm::halving_doubling:
      halving_doubling_all_reduce(plan, phase, b);
      return;
    default:
      throw std::logic_error("collectives: unvalidated all_reduce plan");
  }
}

}  // namespace

void build_phase(const Plan& plan, int phase, PhaseBuilder& b) {
  if (plan.algorithm == Algorithm::torus) return torus_phase(plan, phase, b);
  const int p = plan.ranks_count();
  const bool ring = plan.algorithm == Algorithm::ring;
  switch (plan.kind) {
    case CollectiveKind::all_reduce:
      return build_all_reduce(plan, phase, b);
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      if (ring) return channel_rings(plan, plan.bytes * (p - 1) / p, p - 1, b);
      return halving_doubling_step(plan, plan.ranks, phase, plan.kind == CollectiveKind::all_gather, b);
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce: {
      const bool broadcast = plan.kind == CollectiveKind::broadcast;
      if (p < 2) return;
      return ring ? ring_rooted(plan, broadcast, b) : two_tree_rooted(plan, broadcast, b);
    }
    case CollectiveKind::all_to_all:
      if (plan.algorithm == Algorithm::direct) return direct_all_to_all(plan, b);
      return hierarchical_all_to_all(plan, phase, b);
    case CollectiveKind::send_recv:
      b.add(plan.ranks[0], plan.ranks[1], plan.bytes);
      return;
    case CollectiveKind::push_pull:
      return push_pull(plan, phase, b);
  }
}

int phase_count(const Plan& plan) {
  const int levels = ceil_log2(plan.ranks_count());
  switch (plan.algorithm) {
    case Algorithm::halving_doubling:
      if (plan.kind != CollectiveKind::all_reduce) return levels;
      // The fold (halving_doubling_all_reduce): one phase in, one out, around 2 log2(p') steps.
      return is_power_of_two(plan.ranks_count()) ? 2 * levels : 2 * floor_log2(plan.ranks_count()) + 2;
    case Algorithm::hierarchical:
      return plan.kind == CollectiveKind::all_reduce ? 3 : 2;
    case Algorithm::parameter_server:
      return 2;
    case Algorithm::torus:
      return torus_phase_count(plan);
    default:
      return 1;
  }
}

bool applies(CollectiveKind kind, Algorithm algorithm) {
  using A = Algorithm;
  switch (kind) {
    case CollectiveKind::all_reduce:
      return algorithm == A::ring || algorithm == A::double_binary_tree || algorithm == A::hierarchical ||
             algorithm == A::halving_doubling || algorithm == A::nvls || algorithm == A::collnet || algorithm == A::torus;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      return algorithm == A::ring || algorithm == A::halving_doubling || algorithm == A::torus;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      return algorithm == A::ring || algorithm == A::double_binary_tree;
    case CollectiveKind::all_to_all:
      return algorithm == A::direct || algorithm == A::hierarchical;
    case CollectiveKind::send_recv:
      return algorithm == A::direct;
    case CollectiveKind::push_pull:
      return algorithm == A::parameter_server;
  }
  return false;
}

void validate(const Plan& plan) {
  const int p = plan.ranks_count();
  const std::string what = "Collectives: " + to_string(plan.algorithm) + " " + to_string(plan.kind) + ": ";
  if (!applies(plan.kind, plan.algorithm)) {
    throw std::invalid_argument(what + "this algorithm does not implement this collective");
  }
  // All-reduce folds a non-power-of-two group (MPICH); reduce-scatter and all-gather do not.
  if (plan.algorithm == Algorithm::halving_doubling && plan.kind != CollectiveKind::all_reduce && !is_power_of_two(p)) {
    throw std::invalid_argument(what + "needs a power-of-two number of ranks, got " + std::to_string(p));
  }
  if (plan.algorithm == Algorithm::torus && !plan.torus) {
    throw std::invalid_argument(what + "needs a torus fabric (a TPU slice) and a group that is a box of its chips, the "
                                       "same in every pod");
  }
  if (plan.algorithm == Algorithm::hierarchical && !plan.layout.uniform) {
    throw std::invalid_argument(what + "needs the same number of ranks on every node");
  }
  if ((plan.kind == CollectiveKind::broadcast || plan.kind == CollectiveKind::reduce) &&
      (plan.root < 0 || plan.root >= p)) {
    throw std::invalid_argument(what + "root " + std::to_string(plan.root) + " is not in [0, " + std::to_string(p) +
                                ")");
  }
  if (plan.kind == CollectiveKind::send_recv && p != 2) {
    throw std::invalid_argument(what + "needs exactly 2 ranks (sender, receiver), got " + std::to_string(p));
  }
  if (plan.kind == CollectiveKind::push_pull && (plan.shards < 1 || plan.shards >= p)) {
    throw std::invalid_argument(what + "server_shards must be in [1, ranks) so that at least one worker is left, got " +
                                std::to_string(plan.shards) + " of " + std::to_string(p) + " ranks");
  }
}

}  // namespace dlsim::network::detail
