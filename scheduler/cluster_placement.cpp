// Gang placement: packed, spread, topology-aware.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

std::vector<Allocation> Simulation::find_nodes(int gpus, const std::string& pool) {
  if (options_.placement != Placement::spread) {
    // Fast path (most gangs fit on one node): the index's best fit over the pools that serve
    // the job; the same node the scan below would pick (fewest free GPUs, then node order).
    long long free_total = 0;
    std::pair<int, int> best{-1, -1};
    for (int p = 0; p < static_cast<int>(spec_.pools.size()); ++p) {
      if (!pool.empty() && !serves(p, pool)) continue;
      free_total += free_index_.free_gpus(p);
      const auto fit = free_index_.best_fit(gpus, p);
      if (fit.second >= 0 && (best.second < 0 || fit < best)) best = fit;
    }
    if (free_total < gpus) return {};
    if (best.second >= 0) return {{best.second, gpus, {}}};
  }
  candidates_.clear();
  int free_total = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if ((n.state != NodeState::ready && n.state != NodeState::busy) || n.free == 0) continue;
    if (!pool.empty() && !serves(n.pool, pool)) continue;
    candidates_.push_back(static_cast<int>(i));
    free_total += n.free;
  }
  if (free_total < gpus) return {};
  std::vector<Allocation> out;
  const auto free_of = [this](int i) { return nodes_[static_cast<std::size_t>(i)].free; };
  if (options_.placement != Placement::spread) {
    // One node if any can hold the whole gang: the fullest that can (best fit).
    int best = -1;
    for (int i : candidates_) {
      if (free_of(i) >= gpus && (best < 0 || free_of(i) < free_of(best))) best = i;
    }
    if (best >= 0) return {{best, gpus, {}}};
  }
  if (options_.placement == Placement::topology_aware) {
    // As few nodes as the gang needs (every extra node is one more NIC in its all-reduce ring,
    // shared with whoever else is there), then one leaf if a leaf has such nodes: of those
    // leaves, the one with the fewest free GPUs on them (best fit). Otherwise packed below.
    std::stable_sort(candidates_.begin(), candidates_.end(), [&](int a, int b) { return free_of(a) > free_of(b); });
    int fewest = 0;
    for (int left = gpus; left > 0; ++fewest) left -= free_of(candidates_[static_cast<std::size_t>(fewest)]);
    std::map<std::pair<int, int>, std::pair<int, int>> leaves;  // (pool, leaf) -> (nodes taken, their free GPUs)
    for (int i : candidates_) {  // emptiest first, so each leaf's first `fewest` are its best
      const Node& n = nodes_[static_cast<std::size_t>(i)];
      auto& [taken, free] = leaves[{n.pool, n.leaf}];
      if (taken < fewest) {
        ++taken;
        free += n.free;
      }
    }
    const std::pair<int, int>* chosen = nullptr;
    int chosen_free = 0;
    for (const auto& [key, use] : leaves) {
      if (use.second >= gpus && (chosen == nullptr || use.second < chosen_free)) {
        chosen = &key;
        chosen_free = use.second;
      }
    }
    if (chosen != nullptr) {
      const auto key = *chosen;
      candidates_.erase(std::remove_if(candidates_.begin(), candidates_.end(), [&](int i) {
                          const Node& n = nodes_[static_cast<std::size_t>(i)];
                          return std::make_pair(n.pool, n.leaf) != key;
                        }),
                        candidates_.end());
    }
  }
  if (options_.placement == Placement::spread) {
    // One GPU at a time to the node with the most free GPUs left.
    std::vector<int> give(nodes_.size(), 0);
    for (int k = 0; k < gpus; ++k) {
      int best = -1;
      for (int i : candidates_) {
        const int left = free_of(i) - give[static_cast<std::size_t>(i)];
        if (left > 0 && (best < 0 || left > free_of(best) - give[static_cast<std::size_t>(best)])) best = i;
      }
      ++give[static_cast<std::size_t>(best)];
    }
    for (int i : candidates_) {
      if (give[static_cast<std::size_t>(i)] > 0) out.push_back({i, give[static_cast<std::size_t>(i)], {}});
    }
    return out;
  }
  // Packed across nodes: emptiest nodes first (whole nodes), in node order on ties.
  std::stable_sort(candidates_.begin(), candidates_.end(), [&](int a, int b) { return free_of(a) > free_of(b); });
  int need = gpus;
  for (int i : candidates_) {
    const int g = std::min(need, free_of(i));
    out.push_back({i, g, {}});
    need -= g;
    if (need == 0) break;
  }
  return need == 0 ? out : std::vector<Allocation>{};
}

}  // namespace dlsim::scheduler::detail
