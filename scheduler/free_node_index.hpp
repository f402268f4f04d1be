// FreeNodeIndex: the nodes in service (ready or busy) that have free GPUs, by pool and by free
// GPU count, so that placing a gang that fits on one node finds the best-fit node (the fewest
// free GPUs that hold it; the lowest node index on ties, as a scan in node order would) in
// O(pools x GPUs per node x log nodes) rather than by scanning every node. The simulation calls
// update() whenever a node's free count or state changes.
#pragma once
#include <set>
#include <utility>
#include <vector>

namespace dlsim::scheduler::detail {

class FreeNodeIndex {
 public:
  // Pools in order; `gpus_per_node` bounds a node's free count.
  void add_pool(int gpus_per_node);
  // The node's current pool and free GPUs, or free <= 0 when it cannot take GPUs now.
  void update(int node, int pool, int free);
  // The best-fit node of `pool` for `gpus` on one node: (its free GPUs, node), or (-1, -1).
  std::pair<int, int> best_fit(int gpus, int pool) const;
  // Free GPUs on the pool's indexed nodes.
  long long free_gpus(int pool) const { return pool_free_[static_cast<std::size_t>(pool)]; }

 private:
  std::vector<std::vector<std::set<int>>> by_free_;  // [pool][free] -> nodes
  std::vector<long long> pool_free_;
  std::vector<std::pair<int, int>> indexed_;         // node -> (pool, free) it is filed under; free 0: none
};

}  // namespace dlsim::scheduler::detail
