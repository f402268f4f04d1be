#include "network/routing.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace dlsim::network {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

}  // namespace

Routing::Routing(const Topology& topology)
    : topology_(topology),
      distance_(topology.vertex_count(), -1),
      width_(topology.vertex_count(), 0),
      stamp_(topology.vertex_count(), 0) {
  queue_.reserve(topology.vertex_count());
}

void Routing::check_vertex(VertexId v) const {
  if (v >= topology_.vertex_count()) {
    throw std::invalid_argument("Routing: vertex " + std::to_string(v) + " does not exist (the topology has " +
                                std::to_string(topology_.vertex_count()) + ")");
  }
}

int Routing::search(VertexId from, VertexId to) {
  check_vertex(from);
  check_vertex(to);
  ++epoch_;
  queue_.clear();
  stamp_[from] = epoch_;
  distance_[from] = 0;
  width_[from] = std::numeric_limits<double>::infinity();
  queue_.push_back(from);
  if (from == to) return 0;
  // Level by level, so a vertex's width is final before its level is expanded. Once `to` is
  // reached, the rest of its predecessors' level is still expanded (each may widen it), then
  // the search stops.
  int found = -1;
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const VertexId v = queue_[head];
    if (found >= 0 && distance_[v] >= found) break;  // the level before `to` is done
    for (LinkId l : topology_.out_links(v)) {
      const VertexId u = topology_.link(l).to;
      const double w = std::min(width_[v], topology_.link(l).bandwidth);
      if (stamp_[u] != epoch_) {
        stamp_[u] = epoch_;
        distance_[u] = distance_[v] + 1;
        width_[u] = w;
        if (u == to) {
          found = distance_[u];
        } else {
          queue_.push_back(u);
        }
      } else if (distance_[u] == distance_[v] + 1) {
        width_[u] = std::max(width_[u], w);
      }
    }
  }
  return found;
}

int Routing::hops(VertexId from, VertexId to) { return search(from, to); }

const Path& Routing::path(VertexId from, VertexId to, std::uint64_t flow_key) {
  const auto key = std::make_tuple(from, to, flow_key);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const int d = search(from, to);
  if (d < 0) {
    throw std::invalid_argument("Routing: " + topology_.vertex(to).name + " cannot be reached from " +
                                topology_.vertex(from).name);
  }
  Path p(static_cast<std::size_t>(d));
  const std::uint64_t seed = mix((std::uint64_t{from} << 32) ^ to ^ mix(flow_key));
  const double width = width_[to];
  std::vector<LinkId> choices;
  VertexId v = to;
  for (int step = d; step > 0; --step) {
    // Links into v from a vertex one hop nearer the source that keep the path as wide as the
    // widest: the equal-cost choices. Link 2k and 2k+1 are the two directions of one cable,
    // so `out ^ 1` is the link coming in.
    choices.clear();
    for (LinkId out : topology_.out_links(v)) {
      const LinkId in = out ^ 1u;
      const VertexId u = topology_.link(in).from;
      if (stamp_[u] == epoch_ && distance_[u] == step - 1 &&
          std::min(width_[u], topology_.link(in).bandwidth) >= width) {
        choices.push_back(in);
      }
    }
    const LinkId chosen = choices[mix(seed + static_cast<std::uint64_t>(step)) % choices.size()];
    p[static_cast<std::size_t>(step - 1)] = chosen;
    v = topology_.link(chosen).from;
  }
  return cache_.emplace(key, std::move(p)).first->second;
}

double Routing::latency(const Path& p) const {
  double total = 0;
  for (LinkId l : p) total += topology_.link(l).latency_s;
  return total;
}

double Routing::bottleneck(const Path& p) const {
  double smallest = std::numeric_limits<double>::infinity();
  for (LinkId l : p) smallest = std::min(smallest, topology_.link(l).bandwidth);
  return smallest;
}

}  // namespace dlsim::network
