// The ring search of ring_search.hpp: repeated depth-first searches for a Hamiltonian cycle on
// the links with units left, each bounded in the number of steps it may take (a node has at
// most 16 GPUs here, and NVLink graphs are dense, so a cycle is found in a few steps or not at
// all).
#include "network/ring_search.hpp"

#include <algorithm>

namespace dlsim::network {
namespace {

constexpr int kMaxGpus = 16;
constexpr long kMaxSteps = 200'000;  // per cycle search

class CycleSearch {
 public:
  explicit CycleSearch(const std::vector<std::vector<int>>& units) : units_(units), g_(int(units.size())) {}

  // A cycle 0 -> ... -> 0 through every GPU over links with a unit left, or empty.
  std::vector<int> find() {
    path_.assign(1, 0);
    used_.assign(g_, false);
    used_[0] = true;
    steps_ = 0;
    return extend() ? path_ : std::vector<int>{};
  }

 private:
  bool extend() {
    if (++steps_ > kMaxSteps) return false;
    const int u = path_.back();
    if (int(path_.size()) == g_) return units_[u][0] > 0;
    std::vector<int> next;
    for (int v = 0; v < g_; ++v) {
      if (!used_[v] && units_[u][v] > 0) next.push_back(v);
    }
    std::stable_sort(next.begin(), next.end(), [&](int a, int b) { return units_[u][a] > units_[u][b]; });
    for (int v : next) {
      path_.push_back(v);
      used_[v] = true;
      if (extend()) return true;
      used_[v] = false;
      path_.pop_back();
    }
    return false;
  }

  const std::vector<std::vector<int>>& units_;
  int g_;
  std::vector<int> path_;
  std::vector<bool> used_;
  long steps_ = 0;
};

bool fits(const std::vector<std::vector<int>>& units, const std::vector<int>& ring) {
  for (std::size_t i = 0; i < ring.size(); ++i) {
    if (units[ring[i]][ring[(i + 1) % ring.size()]] < 1) return false;
  }
  return true;
}

void take(std::vector<std::vector<int>>& units, const std::vector<int>& ring) {
  for (std::size_t i = 0; i < ring.size(); ++i) --units[ring[i]][ring[(i + 1) % ring.size()]];
}

// The same cycle walked the other way, still starting at 0.
std::vector<int> reversed(const std::vector<int>& ring) {
  std::vector<int> out{ring[0]};
  for (std::size_t i = ring.size() - 1; i > 0; --i) out.push_back(ring[i]);
  return out;
}

}  // namespace

std::vector<std::vector<int>> search_rings(std::vector<std::vector<int>> units, int max_rings) {
  const int g = int(units.size());
  std::vector<std::vector<int>> rings;
  if (g < 2 || g > kMaxGpus) return rings;
  CycleSearch search(units);
  while (int(rings.size()) < max_rings) {
    std::vector<int> ring = search.find();
    if (ring.empty()) break;
    take(units, ring);
    rings.push_back(ring);
    std::vector<int> back = reversed(ring);
    if (g > 2 && int(rings.size()) < max_rings && fits(units, back)) {
      take(units, back);
      rings.push_back(std::move(back));
    }
  }
  return rings;
}

}  // namespace dlsim::network
