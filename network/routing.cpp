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

std::string to_string(RoutingScheme scheme) {
  switch (scheme) {
    case RoutingScheme::ecmp: return "ecmp";
    case RoutingScheme::d_mod_k: return "d-mod-k";
    case RoutingScheme::balanced: return "balanced";
  }
  return "?";
}

Routing::Routing(const Topology& topology) : Routing(topology, topology.routing()) {}

Routing::Routing(const Topology& topology, RoutingScheme scheme)
    : topology_(topology),
      scheme_(scheme),
      accelerator_(topology.vertex_count(), 0),
      distance_(topology.vertex_count(), -1),
      width_(topology.vertex_count(), 0),
      stamp_(topology.vertex_count(), 0),
      near_(topology.vertex_count(), 0),
      back_distance_(topology.vertex_count(), 0),
      back_stamp_(topology.vertex_count(), 0) {
  arc_begin_.reserve(topology.vertex_count() + 1);
  arcs_.reserve(topology.link_count());
  fabric_switch_.assign(topology.vertex_count(), 0);
  tier_.assign(topology.vertex_count(), 0);
  link_latency_.reserve(topology.link_count());
  for (LinkId l = 0; l < topology.link_count(); ++l) link_latency_.push_back(topology.link(l).latency_s);
  for (VertexId v = 0; v < topology.vertex_count(); ++v) {
    const VertexInfo& info = topology.vertex(v);
    accelerator_[v] = info.kind == VertexKind::accelerator;
    fabric_switch_[v] = info.kind == VertexKind::switch_ && info.tier >= 1;
    tier_[v] = info.tier;
    arc_begin_.push_back(arcs_.size());
    for (LinkId out : topology.out_links(v)) {
      const LinkInfo& link = topology.link(out);
      arcs_.push_back({link.to, out, link.bandwidth, topology.link(out ^ 1u).bandwidth});
    }
  }
  arc_begin_.push_back(arcs_.size());
  queue_.reserve(topology.vertex_count());
  index_destinations();
  if (scheme_ == RoutingScheme::balanced) {
    load_.assign(topology.link_count(), 0);
    best_max_.assign(topology.vertex_count(), 0);
    best_sum_.assign(topology.vertex_count(), 0);
    best_stamp_.assign(topology.vertex_count(), 0);
  }
}

bool Routing::fabric_switch(VertexId v) const { return fabric_switch_[v] != 0; }

// Tier-1 switches in vertex order; on each, its NICs in link order. A NIC keeps the index of the
// first tier-1 switch it hangs off.
void Routing::index_destinations() {
  index_.assign(topology_.vertex_count(), -1);
  std::int64_t most = 0;
  for (VertexId v = 0; v < topology_.vertex_count(); ++v) {
    if (!fabric_switch(v) || topology_.vertex(v).tier != 1) continue;
    std::int64_t nics = 0;
    for (LinkId l : topology_.out_links(v)) nics += topology_.vertex(topology_.link(l).to).kind == VertexKind::nic;
    most = std::max(most, nics);
  }
  std::int64_t rank = 0;
  for (VertexId v = 0; v < topology_.vertex_count(); ++v) {
    if (!fabric_switch(v) || topology_.vertex(v).tier != 1) continue;
    std::int64_t position = 0;
    for (LinkId l : topology_.out_links(v)) {
      const VertexId nic = topology_.link(l).to;
      if (topology_.vertex(nic).kind != VertexKind::nic) continue;
      if (index_[nic] < 0) index_[nic] = rank * most + position;
      ++position;
    }
    ++rank;
  }
}

std::int64_t Routing::destination_index(VertexId v) const {
  check_vertex(v);
  return index_[v];
}

void Routing::check_vertex(VertexId v) const {
  if (v >= topology_.vertex_count()) {
    throw std::invalid_argument("Routing: vertex " + std::to_string(v) + " does not exist (the topology has " +
                                std::to_string(topology_.vertex_count()) + ")");
  }
}

void Routing::set_pruning(bool on) {
  pruning_ = on;
  cache_.clear();
  if (scheme_ == RoutingScheme::balanced) std::fill(load_.begin(), load_.end(), 0u);
}

int Routing::expand(bool forward) {
  std::vector<VertexId>& front = forward ? forward_front_ : backward_front_;
  next_front_.clear();
  int best = -1;
  for (const VertexId v : front) {
    const int dv = forward ? distance_[v] : back_distance_[v];
    for (const Arc& arc : arcs_of(v)) {
      // Backward, the link into v is the other direction of v's out-link (2k and 2k+1).
      const VertexId u = arc.to;
      if (forward ? !hop_allowed(v, u) : !hop_allowed(u, v)) continue;
      std::uint32_t& mine = forward ? stamp_[u] : back_stamp_[u];
      if (mine != epoch_) {
        mine = epoch_;
        (forward ? distance_[u] : back_distance_[u]) = dv + 1;
        next_front_.push_back(u);
        if (!forward) back_order_.push_back(u);
      }
      const std::uint32_t theirs = forward ? back_stamp_[u] : stamp_[u];
      if (theirs == epoch_) {
        const int through = distance_[u] + back_distance_[u];
        if (best < 0 || through < best) best = through;
      }
    }
  }
  front.swap(next_front_);
  if (!forward) back_level_.push_back(back_order_.size());
  return best;
}

int Routing::meet(VertexId from, VertexId to) {
  ++epoch_;
  stamp_[from] = epoch_;
  distance_[from] = 0;
  back_stamp_[to] = epoch_;
  back_distance_[to] = 0;
  back_radius_ = 0;
  back_epoch_ = epoch_;
  back_order_.assign(1, to);
  back_level_.assign({0, 1});
  forward_front_.assign(1, from);
  backward_front_.assign(1, to);
  // Level by level, the smaller frontier first; the first level on which the two searches meet
  // holds the distance (the least sum over the vertices labelled by both).
  while (!forward_front_.empty() && !backward_front_.empty()) {
    const bool forward = forward_front_.size() <= backward_front_.size();
    const int d = expand(forward);
    if (!forward) ++back_radius_;
    if (d >= 0) return d;
  }
  return -1;
}

int Routing::search(VertexId from, VertexId to) {
  check_vertex(from);
  check_vertex(to);
  from_ = from;
  to_ = to;
  // The bound: the distance, and distances to `to` near it (labels of this epoch).
  const int bound = pruning_ && from != to ? meet(from, to) : 0;
  if (bound < 0) return -1;
  const bool pruned = pruning_ && from != to;
  ++epoch_;
  queue_.clear();
  stamp_[from] = epoch_;
  distance_[from] = 0;
  width_[from] = std::numeric_limits<double>::infinity();
  queue_.push_back(from);
  if (from == to) return 0;
  // The vertices that may step into `to`: once the first is labelled, at distance `last`, `to`
  // is at last + 1, and of that level only they need expanding (the widest level, on a fabric).
  for (const Arc& arc : arcs_of(to)) {
    const VertexId u = arc.to;
    if (hop_allowed(u, to)) near_[u] = epoch_;
  }
  int last = std::numeric_limits<int>::max();
  // Level by level, so a vertex's width is final before its level is expanded. Once `to` is
  // reached, the rest of its predecessors' level is still expanded (each may widen it), then
  // the search stops. Where the backward search has labelled every vertex the next level can
  // hold (those at distance bound - next from `to`), the level is found from that side when it
  // is cheaper: each candidate looks for predecessors in this level among its own links (a
  // "bottom-up" step, Beamer et al., SC 2012). Both steps label the same vertices with the
  // same widths, so the paths do not depend on which ran.
  int found = -1;
  std::size_t begin = 0;
  for (int level = 0; begin < queue_.size() && found < 0; ++level) {
    const std::size_t end = queue_.size();
    const int back = bound - (level + 1);
    if (pruned && back >= 0 && back <= back_radius_ && pull_is_cheaper(begin, end, back)) {
      pull_level(level, back, found, last);
    } else {
      push_level(begin, end, pruned, bound, found, last);
    }
    begin = end;
  }
  return found;
}

bool Routing::expanded(VertexId v, int last) const { return distance_[v] != last || near_[v] == epoch_; }

void Routing::label(VertexId u, int distance, double width, int& found, int& last) {
  stamp_[u] = epoch_;
  distance_[u] = distance;
  width_[u] = width;
  if (u == to_) {
    found = distance;
  } else {
    queue_.push_back(u);
    if (near_[u] == epoch_) last = std::min(last, distance);
  }
}

void Routing::push_level(std::size_t begin, std::size_t end, bool pruned, int bound, int& found, int& last) {
  for (std::size_t head = begin; head < end; ++head) {
    const VertexId v = queue_[head];
    if (!expanded(v, last)) continue;  // cannot reach `to` in one hop
    const int next = distance_[v] + 1;
    for (const Arc& arc : arcs_of(v)) {
      const VertexId u = arc.to;
      // Cheapest tests first: a vertex labelled at another distance, or on no shortest path.
      const bool labelled = stamp_[u] == epoch_;
      if (labelled) {
        if (distance_[u] != next) continue;
      } else if (pruned) {
        const int rest = back_stamp_[u] == back_epoch_ ? back_distance_[u] : back_radius_ + 1;
        if (next + rest > bound) continue;
      }
      if (!hop_allowed(v, u)) continue;
      const double w = std::min(width_[v], arc.out_bandwidth);
      if (!labelled) {
        label(u, next, w, found, last);
      } else {
        width_[u] = std::max(width_[u], w);
      }
    }
  }
}

bool Routing::pull_is_cheaper(std::size_t begin, std::size_t end, int back) const {
  std::size_t push = 0, pull = 0;
  for (std::size_t i = begin; i < end; ++i) push += arcs_of(queue_[i]).size();
  for (std::size_t i = back_level_[back]; i < back_level_[back + 1]; ++i) {
    pull += arcs_of(back_order_[i]).size();
  }
  return pull < push;
}

void Routing::pull_level(int level, int back, int& found, int& last) {
  for (std::size_t i = back_level_[back]; i < back_level_[back + 1]; ++i) {
    const VertexId u = back_order_[i];
    if (stamp_[u] == epoch_) continue;  // labelled nearer the source: on no shortest path
    bool reached = false;
    double width = 0;
    for (const Arc& arc : arcs_of(u)) {
      const VertexId v = arc.to;  // the link v -> u is the other direction of this one
      if (stamp_[v] != epoch_ || distance_[v] != level || !expanded(v, last) || !hop_allowed(v, u)) continue;
      width = std::max(width, std::min(width_[v], arc.in_bandwidth));
      reached = true;
    }
    if (reached) label(u, level + 1, width, found, last);
  }
}

int Routing::hops(VertexId from, VertexId to) { return search(from, to); }

// The least (max, sum) route load over the equal-cost paths from the source to `v` (at distance
// < the destination's, on a path as wide as `query_width_`), computed on demand from the destination
// backwards and memoized per query: only the vertices on the destination's shortest paths.
Routing::Load Routing::best_load(VertexId v) {
  if (v == from_) return {0, 0};
  if (best_stamp_[v] == epoch_) return {best_max_[v], best_sum_[v]};
  Load best{std::numeric_limits<std::uint32_t>::max(), std::numeric_limits<std::uint64_t>::max()};
  for (LinkId out : topology_.out_links(v)) {
    const LinkId in = out ^ 1u;
    const VertexId u = topology_.link(in).from;
    if (stamp_[u] != epoch_ || distance_[u] != distance_[v] - 1 || width_[u] < query_width_ ||
        topology_.link(in).bandwidth < query_width_ || !hop_allowed(u, v)) {
      continue;
    }
    const Load from_u = best_load(u);
    const Load through{std::max(from_u.max, load_[in]), from_u.sum + load_[in]};
    if (through.max < best.max || (through.max == best.max && through.sum < best.sum)) best = through;
  }
  best_stamp_[v] = epoch_;
  best_max_[v] = best.max;
  best_sum_[v] = best.sum;
  return best;
}

bool Routing::destination_choice(VertexId v, std::int64_t dest, std::int64_t& stride, LinkId& chosen) {
  if (dest < 0 || !fabric_switch(v)) return false;
  const int tier = tier_[v];
  for (LinkId in : choices_) {
    const VertexId u = topology_.link(in).from;
    if (!fabric_switch(u) || tier_[u] <= tier) return false;
  }
  // The up-ports of v's level, in link order: the links down into v from every higher switch.
  std::int64_t ups = 0;
  for (const Arc& arc : arcs_of(v)) ups += fabric_switch(arc.to) && tier_[arc.to] > tier;
  const std::int64_t port = (dest / stride) % ups;
  std::int64_t i = 0;
  chosen = choices_[static_cast<std::size_t>((dest / stride) % static_cast<std::int64_t>(choices_.size()))];
  for (const Arc& arc : arcs_of(v)) {
    if (!fabric_switch(arc.to) || tier_[arc.to] <= tier) continue;
    if (i++ == port) {
      // Taken when it is one of the shortest, widest choices (it always is on a fat-tree).
      const LinkId in = arc.link ^ 1u;
      if (std::find(choices_.begin(), choices_.end(), in) != choices_.end()) chosen = in;
      break;
    }
  }
  stride *= ups;
  return true;
}

LinkId Routing::least_loaded(bool has_preferred, LinkId preferred) {
  LinkId best = choices_.front();
  std::uint32_t best_max = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t best_sum = std::numeric_limits<std::uint64_t>::max();
  for (LinkId in : choices_) {
    const Load from_u = best_load(topology_.link(in).from);
    const std::uint32_t m = std::max(from_u.max, load_[in]);
    const std::uint64_t s = from_u.sum + load_[in];
    const bool better = m < best_max || (m == best_max && s < best_sum);
    const bool tie_to_preferred = m == best_max && s == best_sum && has_preferred && in == preferred;
    if (better || tie_to_preferred) {
      best = in;
      best_max = m;
      best_sum = s;
    }
  }
  return best;
}

std::size_t Routing::PathKeyHash::operator()(const PathKey& k) const {
  return static_cast<std::size_t>(mix(((std::uint64_t{k.from} << 32) | k.to) ^ mix(k.flow_key)));
}

const Path& Routing::path(VertexId from, VertexId to, std::uint64_t flow_key) {
  const PathKey key{from, to, flow_key};
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const int d = search(from, to);
  if (d < 0) {
    throw std::invalid_argument("Routing: " + topology_.vertex(to).name + " cannot be reached from " +
                                topology_.vertex(from).name);
  }
  const double width = width_[to];
  query_width_ = width;  // for best_load
  Path p(static_cast<std::size_t>(d));
  const std::uint64_t seed = mix((std::uint64_t{from} << 32) ^ to ^ mix(flow_key));
  std::int64_t dest = index_[to];
  std::int64_t stride = 1;
  VertexId v = to;
  for (int step = d; step > 0; --step) {
    // Links into v from a vertex one hop nearer the source that keep the path as wide as the
    // widest: the equal-cost choices. Link 2k and 2k+1 are the two directions of one cable,
    // so `out ^ 1` is the link coming in.
    choices_.clear();
    for (const Arc& arc : arcs_of(v)) {
      const VertexId u = arc.to;
      if (stamp_[u] == epoch_ && distance_[u] == step - 1 && std::min(width_[u], arc.in_bandwidth) >= width &&
          hop_allowed(u, v)) {
        choices_.push_back(arc.link ^ 1u);
      }
    }
    LinkId chosen = choices_[mix(seed + static_cast<std::uint64_t>(step)) % choices_.size()];
    if (scheme_ != RoutingScheme::ecmp) {
      LinkId by_destination = chosen;
      const bool tree = destination_choice(v, dest, stride, by_destination);
      if (scheme_ == RoutingScheme::d_mod_k) {
        if (tree) chosen = by_destination;
      } else {
        chosen = least_loaded(tree, by_destination);
      }
    }
    p[static_cast<std::size_t>(step - 1)] = chosen;
    v = topology_.link(chosen).from;
    if (dest < 0 && topology_.vertex(v).kind == VertexKind::nic) dest = index_[v];
  }
  if (scheme_ == RoutingScheme::balanced) {
    for (LinkId l : p) ++load_[l];
  }
  return cache_.emplace(key, std::move(p)).first->second;
}

Routing::SharedLink Routing::most_shared_link() const {
  std::vector<int> routes(topology_.link_count(), 0);
  for (const auto& entry : cache_) {
    for (LinkId l : entry.second) ++routes[l];
  }
  SharedLink most;
  for (LinkId l = 0; l < routes.size(); ++l) {
    const LinkInfo& info = topology_.link(l);
    if (routes[l] > most.routes && fabric_switch(info.from) && fabric_switch(info.to)) most = {l, routes[l]};
  }
  return most;
}

double Routing::latency(const Path& p) const {
  double total = 0;
  for (LinkId l : p) total += link_latency_[l];
  return total;
}

double Routing::bottleneck(const Path& p) const {
  double smallest = std::numeric_limits<double>::infinity();
  for (LinkId l : p) smallest = std::min(smallest, topology_.link(l).bandwidth);
  return smallest;
}

}  // namespace dlsim::network
