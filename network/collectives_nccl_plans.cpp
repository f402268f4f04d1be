// NCCL's all-reduce algorithms whose flows differ from dlsim's classic ones: its tree, NVLS
// (NVLink SHARP) and CollNet (InfiniBand SHARP). Each is one pipelined phase, as NCCL streams
// chunks through every stage at once; the phase starts after NCCL's latency for the algorithm
// and protocol (PhaseBuilder::fill, with any fill value: the plan's latency replaces it).
#include <algorithm>
#include <limits>
#include <vector>

#include "network/collectives_detail.hpp"

namespace dlsim::network::detail {
namespace {

VertexId rank_at(const Plan& plan, int node, int position) {
  return plan.ranks[static_cast<std::size_t>(plan.layout.groups[static_cast<std::size_t>(node)][static_cast<std::size_t>(position)])];
}

// The positions of a node's group in the order of its first ring, rotated to start at `c`.
std::vector<int> ring_order(const Plan& plan, int node, int c) {
  const int size = static_cast<int>(plan.layout.groups[static_cast<std::size_t>(node)].size());
  std::vector<int> order;
  const bool rings = plan.layout.uniform && !plan.node_rings.empty() && int(plan.node_rings.front().size()) == size;
  for (int i = 0; i < size; ++i) {
    const int k = (c + i) % size;
    order.push_back(rings ? plan.node_rings.front()[static_cast<std::size_t>(k)] : k);
  }
  return order;
}

// A stream from `a` to `b` and one back, of `bytes` each (a rank and the switch that reduces).
void both_ways(PhaseBuilder& b, VertexId from, VertexId to, double bytes, double cap = std::numeric_limits<double>::infinity()) {
  b.add(from, to, bytes, cap);
  b.add(to, from, bytes, cap);
}

// One of NCCL's two complementary binary trees over n nodes, by channel.
std::vector<int> tree_of(int n, int channel) { return channel % 2 == 0 ? btree_parents(n) : second_tree_parents(n); }

}  // namespace

// NCCL's tree all-reduce (NCCL 2.4+, src/graph/trees.cc and connect.cc): inside a node the
// ranks form a chain, across nodes the chains' heads form a binary tree, and alternate channels
// use the two complementary trees (the double binary tree) with chains starting at different
// ranks, so that heads, and their NICs, differ by channel. Every chain and tree edge carries the
// channel's share up (reduce) and down (broadcast) at once. On one node: one chain.
void nccl_tree_all_reduce(const Plan& plan, PhaseBuilder& b) {
  const std::size_t first = b.size();
  const int nodes = plan.layout.nodes();
  const int channels = nodes > 1 && plan.layout.uniform ? std::max(1, plan.layout.per_node()) : 1;
  const double share = plan.bytes / channels;
  for (int c = 0; c < channels; ++c) {
    std::vector<VertexId> heads;
    for (int node = 0; node < nodes; ++node) {
      const std::vector<int> order = ring_order(plan, node, c);
      for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        both_ways(b, rank_at(plan, node, order[i + 1]), rank_at(plan, node, order[i]), share);
      }
      heads.push_back(rank_at(plan, node, order.front()));
    }
    if (nodes > 1) tree_pipeline(heads, tree_of(nodes, c), share, true, true, b);
  }
  b.fill(first, 0);
}

// NVLS all-reduce (NCCL 2.17+): each GPU has the NVSwitch reduce its shard from every GPU
// (multimem load-reduce: the switch reads n in all from each GPU and returns its n/g shard),
// then stores the shard once for the switch to multicast to every GPU (n/g out, n in). Per GPU
// port that is n (g + 1) / g each way, at most the switch's reduction bandwidth. Across nodes
// (NCCL's NVLS tree) the shard of local rank j is all-reduced between nodes on rail j by a
// binary tree, the two complementary trees alternating by rail.
void nvls_all_reduce(const Plan& plan, PhaseBuilder& b) {
  const std::size_t first = b.size();
  const int nodes = plan.layout.nodes();
  for (int node = 0; node < nodes; ++node) {
    const auto& group = plan.layout.groups[static_cast<std::size_t>(node)];
    const double g = static_cast<double>(group.size());
    const double bytes = plan.bytes * (g + 1) / g;
    const VertexId sw = plan.reducers[static_cast<std::size_t>(node)];
    for (int i : group) both_ways(b, plan.ranks[static_cast<std::size_t>(i)], sw, bytes, plan.reduction_bw);
  }
  if (nodes > 1 && plan.layout.uniform) {
    const int g = plan.layout.per_node();
    for (int j = 0; j < g; ++j) {
      std::vector<VertexId> rail;
      for (int node = 0; node < nodes; ++node) rail.push_back(rank_at(plan, node, j));
      tree_pipeline(rail, tree_of(nodes, j), plan.bytes / g, true, true, b);
    }
  }
  b.fill(first, 0);
}

// CollNet all-reduce (NCCL's CollNet, InfiniBand SHARP): inside each node a ring reduce-scatter
// and all-gather (2 (g-1)/g n per ring edge) leave each rank with its n/g shard, which it sends
// through its NIC to the switch and gets back reduced over all nodes. A switch other than the
// first one of a rail passes its partial reduction up to that one and takes the result back:
// one stream per rail and switch, as SHARP's aggregation tree does.
void collnet_all_reduce(const Plan& plan, PhaseBuilder& b) {
  const std::size_t first = b.size();
  const int nodes = plan.layout.nodes();
  for (int node = 0; node < nodes; ++node) {
    const auto& group = plan.layout.groups[static_cast<std::size_t>(node)];
    const double g = static_cast<double>(group.size());
    if (group.size() < 2) continue;
    std::vector<VertexId> ring;
    for (int position : ring_order(plan, node, 0)) ring.push_back(rank_at(plan, node, position));
    ring_pipeline(ring, 2 * (g - 1) / g * plan.bytes, 2 * (int(g) - 1), b);
  }
  const int g = plan.layout.uniform ? plan.layout.per_node() : 1;
  const double shard = plan.bytes / std::max(1, g);
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) both_ways(b, plan.ranks[i], plan.reducers[i], shard, plan.reduction_bw);
  for (int j = 0; plan.layout.uniform && j < g; ++j) {
    const VertexId root = plan.reducers[static_cast<std::size_t>(plan.layout.groups[0][static_cast<std::size_t>(j)])];
    std::vector<VertexId> seen{root};
    for (int node = 1; node < nodes; ++node) {
      const VertexId sw = plan.reducers[static_cast<std::size_t>(plan.layout.groups[static_cast<std::size_t>(node)][static_cast<std::size_t>(j)])];
      if (std::find(seen.begin(), seen.end(), sw) != seen.end()) continue;
      seen.push_back(sw);
      both_ways(b, sw, root, shard);
    }
  }
  b.fill(first, 0);
}

}  // namespace dlsim::network::detail
