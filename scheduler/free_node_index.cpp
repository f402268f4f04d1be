#include "scheduler/free_node_index.hpp"

#include <stdexcept>

namespace dlsim::scheduler::detail {

void FreeNodeIndex::add_pool(int gpus_per_node) {
  by_free_.emplace_back(static_cast<std::size_t>(gpus_per_node) + 1);
  pool_free_.push_back(0);
}

void FreeNodeIndex::update(int node, int pool, int free) {
  if (static_cast<std::size_t>(node) >= indexed_.size()) indexed_.resize(static_cast<std::size_t>(node) + 1, {0, 0});
  auto& [old_pool, old_free] = indexed_[static_cast<std::size_t>(node)];
  if (old_free > 0) {
    by_free_[static_cast<std::size_t>(old_pool)][static_cast<std::size_t>(old_free)].erase(node);
    pool_free_[static_cast<std::size_t>(old_pool)] -= old_free;
  }
  old_pool = pool;
  old_free = free > 0 ? free : 0;
  if (old_free > 0) {
    auto& slots = by_free_[static_cast<std::size_t>(pool)];
    if (static_cast<std::size_t>(old_free) >= slots.size()) throw std::logic_error("FreeNodeIndex: more free GPUs than a node has");
    slots[static_cast<std::size_t>(old_free)].insert(node);
    pool_free_[static_cast<std::size_t>(pool)] += old_free;
  }
}

std::pair<int, int> FreeNodeIndex::best_fit(int gpus, int pool) const {
  const auto& slots = by_free_[static_cast<std::size_t>(pool)];
  for (std::size_t f = static_cast<std::size_t>(gpus > 0 ? gpus : 1); f < slots.size(); ++f) {
    if (!slots[f].empty()) return {static_cast<int>(f), *slots[f].begin()};
  }
  return {-1, -1};
}

}  // namespace dlsim::scheduler::detail
