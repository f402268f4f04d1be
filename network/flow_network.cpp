#include "network/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::network {

namespace {

struct Flow {
  Path path;
  double remaining = 0;          // bytes still to send, as of `updated`
  double rate = 0;               // bytes/s
  double cap = 0;                // bytes/s
  sim::Time updated;
  sim::EventId completion;
  bool transferring = false;     // past its latency phase
  bool active = false;           // started and not completed
  std::function<void()> on_done;
};

// One candidate bottleneck in the progressive-filling heap: a link's fair share (remaining
// capacity / unfixed flows) when it was pushed, a lower bound of its share now.
struct Candidate {
  double share;
  LinkId link;
  bool operator>(const Candidate& o) const { return share > o.share || (share == o.share && link > o.link); }
};

}  // namespace

struct FlowNetwork::Impl {
  Impl(sim::Engine& e, const Topology& t)
      : engine(e), topology(t), link_flows(t.link_count()), link_mark(t.link_count(), 0),
        capacity(t.link_count()), unfixed(t.link_count()) {}

  sim::Engine& engine;
  const Topology& topology;
  std::vector<Flow> flows;                       // by FlowId; slots of completed flows are reused
  std::vector<FlowId> free_ids;
  std::vector<std::vector<FlowId>> link_flows;   // transferring flows per link
  std::vector<LinkId> dirty_links;               // links whose flow set changed since the last solve
  std::vector<std::uint32_t> link_mark;          // solve epoch that last visited the link
  std::uint32_t epoch = 0;
  bool solve_pending = false;
  std::size_t active = 0;
  std::uint64_t solves = 0;
  std::uint64_t started = 0;
  // Scratch space of a solve, kept to avoid allocating per solve.
  std::vector<double> capacity;
  std::vector<std::uint32_t> unfixed;
  std::vector<LinkId> component_links;
  std::vector<FlowId> component_flows;
  std::vector<double> previous_rates;            // of component_flows, before the solve
  std::vector<Candidate> heap_storage;
  std::vector<FlowId> by_cap;
  std::vector<char> flow_fixed;
  std::vector<std::uint32_t> flow_mark;

  FlowId allocate() {
    if (!free_ids.empty()) {
      const FlowId id = free_ids.back();
      free_ids.pop_back();
      return id;
    }
    flows.emplace_back();
    flow_fixed.push_back(0);
    flow_mark.push_back(0);
    return static_cast<FlowId>(flows.size() - 1);
  }

  void request_solve() {
    if (solve_pending) return;
    solve_pending = true;
    // At now, after the other events of this instant already queued: one solve for all of them.
    engine.schedule_in(sim::Time::zero(), [this] { solve(); });
  }

  void mark_links_dirty(const Path& path) {
    dirty_links.insert(dirty_links.end(), path.begin(), path.end());
    request_solve();
  }

  void begin_transfer(FlowId id) {
    Flow& f = flows[id];
    f.transferring = true;
    f.updated = engine.now();
    for (LinkId l : f.path) link_flows[l].push_back(id);
    mark_links_dirty(f.path);
  }

  void complete(FlowId id) {
    Flow& f = flows[id];
    if (f.transferring) {
      for (LinkId l : f.path) {
        auto& list = link_flows[l];
        auto it = std::find(list.begin(), list.end(), id);
        *it = list.back();
        list.pop_back();
      }
      mark_links_dirty(f.path);
    }
    f.active = false;
    f.transferring = false;
    f.rate = 0;
    f.remaining = 0;
    --active;
    auto done = std::move(f.on_done);
    f.on_done = nullptr;
    free_ids.push_back(id);
    done();  // last: it may start new flows, which can reuse this id
  }

  void collect_component();
  void fill_rates();
  void reschedule_completions();
  void solve();
};

// Links and flows connected to the dirty links through shared links: only their rates can
// change. A breadth-first walk alternating link -> flows on it -> links of those flows.
void FlowNetwork::Impl::collect_component() {
  ++epoch;
  component_links.clear();
  component_flows.clear();
  for (LinkId l : dirty_links) {
    if (link_mark[l] != epoch) {
      link_mark[l] = epoch;
      component_links.push_back(l);
    }
  }
  dirty_links.clear();
  for (std::size_t i = 0; i < component_links.size(); ++i) {
    for (FlowId id : link_flows[component_links[i]]) {
      if (flow_mark[id] == epoch) continue;
      flow_mark[id] = epoch;
      component_flows.push_back(id);
      for (LinkId l : flows[id].path) {
        if (link_mark[l] != epoch) {
          link_mark[l] = epoch;
          component_links.push_back(l);
        }
      }
    }
  }
}

// Max-min fair rates by progressive filling: the link with the smallest fair share (remaining
// capacity / unfixed flows) fixes all its unfixed flows at that share; a flow whose own cap is
// below the smallest share is fixed at its cap first.
//
// Fixing flows at the current minimum never lowers another link's share: with capacity C, n
// unfixed flows and a fixed rate r <= C/n, (C - r)/(n - 1) >= C/n. So a heap entry can only be
// too low, never too high: entries are not updated when flows are fixed; a popped entry whose
// link's share has since risen is pushed back with its current share. The heap then holds about
// one entry per link instead of one per (flow, link) fixing.
void FlowNetwork::Impl::fill_rates() {
  // A min-heap (std::push_heap with greater) in a member vector: no allocation per solve.
  std::vector<Candidate>& heap = heap_storage;
  heap.clear();
  const auto push = [&heap](Candidate c) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  const auto pop = [&heap] {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
  };
  for (LinkId l : component_links) {
    capacity[l] = topology.link(l).achievable;
    unfixed[l] = static_cast<std::uint32_t>(link_flows[l].size());
    if (unfixed[l] > 0) push({capacity[l] / unfixed[l], l});
  }
  by_cap.clear();
  for (FlowId id : component_flows) {
    flow_fixed[id] = 0;
    if (std::isfinite(flows[id].cap)) by_cap.push_back(id);
  }
  std::sort(by_cap.begin(), by_cap.end(), [&](FlowId a, FlowId b) {
    return flows[a].cap < flows[b].cap || (flows[a].cap == flows[b].cap && a < b);
  });
  std::size_t next_cap = 0;
  const auto fix = [&](FlowId id, double rate) {
    flow_fixed[id] = 1;
    flows[id].rate = rate;
    for (LinkId l : flows[id].path) {
      capacity[l] = std::max(0.0, capacity[l] - rate);
      --unfixed[l];
    }
  };
  while (true) {
    while (next_cap < by_cap.size() && flow_fixed[by_cap[next_cap]]) ++next_cap;
    const bool have_link = !heap.empty();
    const bool have_cap = next_cap < by_cap.size();
    if (!have_link && !have_cap) break;
    // The heap's top is a lower bound of every link's share, so a cap at or below it is the minimum.
    if (have_cap && (!have_link || flows[by_cap[next_cap]].cap <= heap.front().share)) {
      fix(by_cap[next_cap], flows[by_cap[next_cap]].cap);
      continue;
    }
    const Candidate c = heap.front();
    pop();
    if (unfixed[c.link] == 0) continue;
    const double share = capacity[c.link] / unfixed[c.link];
    if (share > c.share) {
      push({share, c.link});  // risen since pushed: requeue at its current share
      continue;
    }
    // Fixing flows edits other links' counters, never this list of flows.
    for (FlowId id : link_flows[c.link]) {
      if (!flow_fixed[id]) fix(id, share);
    }
  }
}

void FlowNetwork::Impl::reschedule_completions() {
  const sim::Time now = engine.now();
  for (std::size_t i = 0; i < component_flows.size(); ++i) {
    const FlowId id = component_flows[i];
    Flow& f = flows[id];
    // Same rate as before: the completion already scheduled still holds, to the nanosecond.
    if (f.rate == previous_rates[i] && engine.is_pending(f.completion)) continue;
    engine.cancel(f.completion);
    if (!(f.rate > 0)) {
      throw std::logic_error("FlowNetwork: an active flow got no bandwidth");
    }
    const double seconds = f.remaining / f.rate;
    f.completion = engine.schedule_at(now + sim::Time::from_seconds(seconds), [this, id] { complete(id); });
  }
}

void FlowNetwork::Impl::solve() {
  solve_pending = false;
  ++solves;
  collect_component();
  const sim::Time now = engine.now();
  for (FlowId id : component_flows) {  // progress at the old rates up to now
    Flow& f = flows[id];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated).seconds());
    f.updated = now;
  }
  previous_rates.clear();
  for (FlowId id : component_flows) previous_rates.push_back(flows[id].rate);
  fill_rates();
  reschedule_completions();
}

FlowNetwork::FlowNetwork(sim::Engine& engine, const Topology& topology)
    : impl_(std::make_unique<Impl>(engine, topology)) {}

FlowNetwork::~FlowNetwork() = default;

FlowId FlowNetwork::start(FlowSpec spec, std::function<void()> on_done) {
  Impl& m = *impl_;
  if (!(spec.bytes >= 0) || !std::isfinite(spec.bytes) || !(spec.rate_cap > 0) || !(spec.extra_latency_s >= 0)) {
    throw std::invalid_argument("FlowNetwork: a flow needs bytes >= 0, a positive rate cap, latency >= 0");
  }
  for (std::size_t i = 0; i < spec.path.size(); ++i) {
    if (spec.path[i] >= m.topology.link_count() ||
        (i > 0 && m.topology.link(spec.path[i - 1]).to != m.topology.link(spec.path[i]).from)) {
      throw std::invalid_argument("FlowNetwork: the path is not a chain of existing links");
    }
  }
  const FlowId id = m.allocate();
  Flow& f = m.flows[id];
  double latency = spec.extra_latency_s;
  double cap = spec.rate_cap;
  for (LinkId l : spec.path) {
    latency += m.topology.link(l).latency_s;
    cap = std::min(cap, m.topology.link(l).flow_cap);  // e.g. one TCP stream's CPU-bound rate
  }
  f.path = std::move(spec.path);
  f.remaining = spec.bytes;
  f.cap = cap;
  f.rate = 0;
  f.active = true;
  f.transferring = false;
  f.on_done = std::move(on_done);
  f.completion = {};
  ++m.active;
  ++m.started;
  const sim::Time delay = sim::Time::from_seconds(latency);
  if (f.path.empty() || f.remaining == 0) {
    // Nothing to share: only the latency (a zero-byte message still pays it).
    f.completion = m.engine.schedule_in(delay, [impl = &m, id] { impl->complete(id); });
  } else {
    m.engine.schedule_in(delay, [impl = &m, id] { impl->begin_transfer(id); });
  }
  return id;
}

std::size_t FlowNetwork::active_flows() const { return impl_->active; }
double FlowNetwork::rate(FlowId id) const { return impl_->flows.at(id).rate; }
double FlowNetwork::remaining_bytes(FlowId id) const { return impl_->flows.at(id).remaining; }
std::uint64_t FlowNetwork::solves() const { return impl_->solves; }
std::uint64_t FlowNetwork::flows_started() const { return impl_->started; }

double FlowNetwork::link_load(LinkId link) const {
  double load = 0;
  for (FlowId id : impl_->link_flows.at(link)) load += impl_->flows[id].rate;
  return load;
}

}  // namespace dlsim::network
