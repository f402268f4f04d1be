#include "scheduler/rank_walk.hpp"

#include <stdexcept>

namespace dlsim::scheduler {

RankWalk::RankWalk(int positions) : tree_(static_cast<std::size_t>(positions) + 1, 0), size_(positions) {
  if (positions < 0) throw std::invalid_argument("negative rank positions");
}

void RankWalk::add_running(int position, int gpus) {
  if (position < 0 || position >= size_) throw std::out_of_range("rank position");
  if (!running_.insert(position).second) throw std::logic_error("rank position already running");
  for (int i = position + 1; i <= size_; i += i & -i) tree_[static_cast<std::size_t>(i)] += gpus;
}

void RankWalk::remove_running(int position, int gpus) {
  if (running_.erase(position) != 1) throw std::logic_error("rank position not running");
  for (int i = position + 1; i <= size_; i += i & -i) tree_[static_cast<std::size_t>(i)] -= gpus;
}

void RankWalk::add_queued(int position) {
  if (position < 0 || position >= size_) throw std::out_of_range("rank position");
  if (!queued_.insert(position).second) throw std::logic_error("rank position already queued");
}

void RankWalk::remove_queued(int position) {
  if (queued_.erase(position) != 1) throw std::logic_error("rank position not queued");
}

std::int64_t RankWalk::prefix(int position) const {
  std::int64_t sum = 0;
  for (int i = position; i > 0; i -= i & -i) sum += tree_[static_cast<std::size_t>(i)];
  return sum;
}

int RankWalk::first_exceeding(std::int64_t target) const {
  // Standard Fenwick descent: the largest index whose prefix stays <= target, plus one.
  int index = 0;
  int step = 1;
  while (step * 2 <= size_) step *= 2;
  for (; step > 0; step /= 2) {
    const int next = index + step;
    if (next <= size_ && tree_[static_cast<std::size_t>(next)] <= target) {
      index = next;
      target -= tree_[static_cast<std::size_t>(next)];
    }
  }
  return index;  // 0-based position of the element that makes the prefix exceed
}

std::vector<int> RankWalk::running_from(int position) const {
  return std::vector<int>(running_.lower_bound(position), running_.end());
}

}  // namespace dlsim::scheduler
