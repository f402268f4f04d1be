#include "network/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::network {

namespace {

// The bottleneck of a flow fixed at its own cap rather than at a link's share.
constexpr LinkId kCapBottleneck = std::numeric_limits<LinkId>::max();

// Rounding slack of the incremental solve's comparisons, relative to a link's capacity (or to a
// level): far below the 1e-9 to which both solvers agree, far above double rounding (1e-16).
constexpr double kSlack = 1e-12;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Flow {
  Path path;
  double remaining = 0;          // bytes still to send, as of `updated`
  double cap = 0;                // bytes/s
  sim::Time updated;
  sim::EventId completion;
  bool transferring = false;     // past its latency phase
  bool active = false;           // started and not completed
  std::function<void()> on_done;
};

// What a solve reads of every flow on the links it visits, apart from the rest (Flow) so that
// scanning a link's flows touches one small record per flow.
struct FlowState {
  double rate = 0;                     // bytes/s
  LinkId bottleneck = kCapBottleneck;  // the link (or its cap) that fixed its rate in the last solve
  std::uint32_t mark = 0;              // the solve epoch whose set it is in
};

// One candidate bottleneck in the progressive-filling heap: a link's fair share (remaining
// capacity / unfixed flows) when it was pushed, a lower bound of its share now.
struct Candidate {
  double share;
  LinkId link;
  bool operator>(const Candidate& o) const { return share > o.share || (share == o.share && link > o.link); }
};

// A flow due at some level of the incremental filling: a flow held at its rate, whose bottleneck
// is checked once the filling reaches that rate, or a refilled flow's cap.
struct FlowAt {
  double level;
  FlowId flow;
  bool operator>(const FlowAt& o) const { return level > o.level || (level == o.level && flow > o.flow); }
};

// A min-heap in a vector kept between solves (std::push_heap with greater): no allocation per solve.
template <typename T>
void heap_push(std::vector<T>& heap, T item) {
  heap.push_back(item);
  std::push_heap(heap.begin(), heap.end(), std::greater<>());
}

template <typename T>
void heap_pop(std::vector<T>& heap) {
  std::pop_heap(heap.begin(), heap.end(), std::greater<>());
  heap.pop_back();
}

// The incremental solve's candidate links, one entry per link at most, ordered by a key per link
// (its share when queued, Impl::queued) and then by link id as Candidate orders them: a join that
// lowers a queued link's share moves its entry up instead of adding a second one.
class LinkHeap {
 public:
  explicit LinkHeap(std::size_t links) : position_(links, kAbsent) {}
  bool empty() const { return items_.empty(); }
  LinkId top() const { return items_.front(); }
  void clear() {
    for (LinkId l : items_) position_[l] = kAbsent;
    items_.clear();
  }
  // Inserts `l`, or moves it up after its key fell (keys only fall while a link is queued).
  void push_or_raise(LinkId l, const std::vector<double>& key) {
    if (position_[l] == kAbsent) {
      position_[l] = static_cast<std::uint32_t>(items_.size());
      items_.push_back(l);
    }
    sift_up(position_[l], key);
  }
  LinkId pop(const std::vector<double>& key) {
    const LinkId l = items_.front();
    position_[l] = kAbsent;
    const LinkId last = items_.back();
    items_.pop_back();
    if (!items_.empty()) {
      items_.front() = last;
      position_[last] = 0;
      sift_down(0, key);
    }
    return l;
  }

 private:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();
  static bool before(LinkId a, LinkId b, const std::vector<double>& key) {
    return key[a] < key[b] || (key[a] == key[b] && a < b);
  }
  void place(std::size_t i, LinkId l) {
    items_[i] = l;
    position_[l] = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i, const std::vector<double>& key) {
    const LinkId l = items_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(l, items_[parent], key)) break;
      place(i, items_[parent]);
      i = parent;
    }
    place(i, l);
  }
  void sift_down(std::size_t i, const std::vector<double>& key) {
    const LinkId l = items_[i];
    const std::size_t n = items_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(items_[child + 1], items_[child], key)) ++child;
      if (!before(items_[child], l, key)) break;
      place(i, items_[child]);
      i = child;
    }
    place(i, l);
  }
  std::vector<LinkId> items_;
  std::vector<std::uint32_t> position_;  // per link: its index in items_, or kAbsent
};

}  // namespace

struct FlowNetwork::Impl {
  Impl(sim::Engine& e, const Topology& t, MaxMinSolver s)
      : engine(e), topology(t), solver(s), link_flows(t.link_count()), link_mark(t.link_count(), 0),
        achievable(t.link_count()), capacity(t.link_count()), unfixed(t.link_count()), queued(t.link_count()),
        link_heap(t.link_count()) {
    facts.reserve(t.link_count());
    for (LinkId l = 0; l < t.link_count(); ++l) {
      const LinkInfo& info = t.link(l);
      achievable[l] = info.achievable;
      facts.push_back({info.from, info.to, info.latency_s, info.flow_cap});
    }
  }

  sim::Engine& engine;
  const Topology& topology;
  const MaxMinSolver solver;
  std::vector<Flow> flows;                       // by FlowId; slots of completed flows are reused
  std::vector<FlowState> state;                  // by FlowId
  std::vector<FlowId> free_ids;
  std::vector<std::vector<FlowId>> link_flows;   // transferring flows per link
  std::vector<LinkId> dirty_links;               // links whose flow set changed since the last solve
  std::vector<FlowId> arrived;                   // flows that began transferring since the last solve
  std::vector<std::uint32_t> link_mark;          // solve epoch that last touched the link
  std::uint32_t epoch = 0;
  bool solve_pending = false;
  std::size_t active = 0;
  std::uint64_t solves = 0;
  std::uint64_t started = 0;
  std::uint64_t refilled = 0;
  // Scratch space of a solve, kept to avoid allocating per solve: the solve's set (the flows
  // whose rates it recomputes, marked with the epoch in state[].mark) and the links it touched.
  std::vector<double> achievable;                // per link, copied from the topology: read in every scan
  // Per link, what start() reads of each link of a path, packed (LinkInfo is large).
  struct LinkFacts {
    VertexId from, to;
    double latency_s, flow_cap;
  };
  std::vector<LinkFacts> facts;
  std::vector<double> capacity;                  // touched link: capacity left to its unfixed flows
  std::vector<std::uint32_t> unfixed;            // touched link: the set's flows not yet fixed on it
  std::vector<double> queued;                    // touched link: its lowest entry in the heap (or infinity)
  std::vector<LinkId> component_links;
  std::vector<FlowId> component_flows;
  std::vector<double> previous_rates;            // of component_flows, before the solve
  std::vector<Candidate> heap_storage;           // full solve: lazy heap of candidate links
  LinkHeap link_heap;                            // incremental solve: one entry per queued link
  std::vector<FlowAt> caps;                      // incremental: the set's finite caps
  std::vector<FlowAt> checks;                    // incremental: held flows whose bottleneck to check
  std::vector<FlowId> by_cap;
  std::vector<char> flow_fixed;


  FlowId allocate() {
    if (!free_ids.empty()) {
      const FlowId id = free_ids.back();
      free_ids.pop_back();
      return id;
    }
    flows.emplace_back();
    flow_fixed.push_back(0);
    state.emplace_back();
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
    arrived.push_back(id);
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
    state[id].rate = 0;
    f.remaining = 0;
    --active;
    auto done = std::move(f.on_done);
    f.on_done = nullptr;
    free_ids.push_back(id);
    done();  // last: it may start new flows, which can reuse this id
  }

  bool in_solve(FlowId id) const { return state[id].mark == epoch; }
  bool unfixed_in_solve(FlowId id) const { return in_solve(id) && !flow_fixed[id]; }

  // Adds a flow to the solve's set, not yet fixed: its progress at its old rate is brought up to
  // now (its rate may change) and its old rate kept to tell whether its completion must move.
  void enter(FlowId id) {
    state[id].mark = epoch;
    flow_fixed[id] = 0;
    component_flows.push_back(id);
    Flow& f = flows[id];
    const sim::Time now = engine.now();
    f.remaining = std::max(0.0, f.remaining - state[id].rate * (now - f.updated).seconds());
    f.updated = now;
    previous_rates.push_back(state[id].rate);
  }

  // Fixes a flow at `rate` (set by `bottleneck`, a link or its cap) and takes it off its links.
  void fix(FlowId id, double rate, LinkId bottleneck) {
    flow_fixed[id] = 1;
    state[id].rate = rate;
    state[id].bottleneck = bottleneck;
    for (LinkId l : flows[id].path) {
      capacity[l] = std::max(0.0, capacity[l] - rate);
      --unfixed[l];
    }
  }

  void begin_solve_set();
  void collect_component();
  void fill_rates();
  void touch_link(LinkId l);
  // Keeps the link's heap entry at or below its share (its key is queued[l]): lowers it only where
  // the share fell below it, as joins may make it; fixings only raise shares.
  void queue_link(LinkId l) {
    const double share = capacity[l] / unfixed[l];
    if (share >= queued[l]) return;
    queued[l] = share;
    link_heap.push_or_raise(l, queued);
  }
  void join(FlowId id);
  bool join_faster_than(LinkId l, double share);
  void check_bottleneck(FlowId id);
  void fill_incrementally();
  void reschedule_completions();
  void solve();
};

// A new solve's set: no flows yet.
void FlowNetwork::Impl::begin_solve_set() {
  ++epoch;
  component_links.clear();
  component_flows.clear();
  previous_rates.clear();
}

// The full solve's set: links and flows connected to the dirty links through shared links. A
// breadth-first walk alternating link -> flows on it -> links of those flows.
void FlowNetwork::Impl::collect_component() {
  const auto visit = [this](LinkId l) {
    if (link_mark[l] == epoch) return;
    link_mark[l] = epoch;
    component_links.push_back(l);
  };
  for (LinkId l : dirty_links) visit(l);
  for (std::size_t i = 0; i < component_links.size(); ++i) {
    for (FlowId id : link_flows[component_links[i]]) {
      if (in_solve(id)) continue;
      enter(id);
      for (LinkId l : flows[id].path) visit(l);
    }
  }
}

// The full solve: max-min fair rates by progressive filling over the component. The link with
// the smallest fair share (remaining capacity / unfixed flows) fixes all its unfixed flows at
// that share; a flow whose own cap is below the smallest share is fixed at its cap first.
//
// Fixing flows at the current minimum never lowers another link's share: with capacity C, n
// unfixed flows and a fixed rate r <= C/n, (C - r)/(n - 1) >= C/n. So a heap entry can only be
// too low, never too high: entries are not updated when flows are fixed; a popped entry whose
// link's share has since risen is pushed back with its current share. The heap then holds about
// one entry per link instead of one per (flow, link) fixing.
void FlowNetwork::Impl::fill_rates() {
  std::vector<Candidate>& heap = heap_storage;
  heap.clear();
  for (LinkId l : component_links) {
    capacity[l] = achievable[l];
    unfixed[l] = static_cast<std::uint32_t>(link_flows[l].size());
    if (unfixed[l] > 0) heap_push(heap, {capacity[l] / unfixed[l], l});
  }
  refilled += component_flows.size();
  by_cap.clear();
  for (FlowId id : component_flows) {
    if (std::isfinite(flows[id].cap)) by_cap.push_back(id);
  }
  std::sort(by_cap.begin(), by_cap.end(), [&](FlowId a, FlowId b) {
    return flows[a].cap < flows[b].cap || (flows[a].cap == flows[b].cap && a < b);
  });
  std::size_t next_cap = 0;
  while (true) {
    while (next_cap < by_cap.size() && flow_fixed[by_cap[next_cap]]) ++next_cap;
    const bool have_link = !heap.empty();
    const bool have_cap = next_cap < by_cap.size();
    if (!have_link && !have_cap) break;
    // The heap's top is a lower bound of every link's share, so a cap at or below it is the minimum.
    if (have_cap && (!have_link || flows[by_cap[next_cap]].cap <= heap.front().share)) {
      fix(by_cap[next_cap], flows[by_cap[next_cap]].cap, kCapBottleneck);
      continue;
    }
    const Candidate c = heap.front();
    heap_pop(heap);
    if (unfixed[c.link] == 0) continue;
    const double share = capacity[c.link] / unfixed[c.link];
    if (share > c.share) {
      heap_push(heap, {share, c.link});  // risen since pushed: requeue at its current share
      continue;
    }
    // Fixing flows edits other links' counters, never this list of flows.
    for (FlowId id : link_flows[c.link]) {
      if (!flow_fixed[id]) fix(id, share, c.link);
    }
  }
}

// The incremental solve touches a link when a flow of its set crosses it (or its flow set
// changed): it then offers its capacity less the rates of the flows held (those outside the set
// and those of the set already fixed), and the held flows bottlenecked on it are to be checked
// once the filling reaches their rates.
void FlowNetwork::Impl::touch_link(LinkId l) {
  link_mark[l] = epoch;
  component_links.push_back(l);
  double held = 0;
  std::uint32_t open = 0;
  for (FlowId id : link_flows[l]) {
    if (unfixed_in_solve(id)) {
      ++open;
      continue;
    }
    const FlowState& held_flow = state[id];
    held += held_flow.rate;
    if (held_flow.mark != epoch && held_flow.bottleneck == l) heap_push(checks, {held_flow.rate, id});
  }
  capacity[l] = std::max(0.0, achievable[l] - held);
  unfixed[l] = open;
  queued[l] = kInfinity;
  if (open > 0) queue_link(l);
}

// A held flow joins the set, unfixed, while the filling is at a level not above its rate: its
// rate goes back to the capacities of its links, which count it among their unfixed flows. The
// filling below that level stays right: a link where the set's flows were fixed below the flow's
// rate would have made it join then (join_faster_than).
void FlowNetwork::Impl::join(FlowId id) {
  enter(id);
  const Flow& f = flows[id];
  if (std::isfinite(f.cap)) heap_push(caps, {f.cap, id});
  for (LinkId l : f.path) {
    if (link_mark[l] != epoch) {
      touch_link(l);
      continue;
    }
    capacity[l] += state[id].rate;
    ++unfixed[l];
    queue_link(l);  // its share may have fallen below its entry in the heap
  }
}

// Before link l fixes its unfixed flows at `share`, the held flows faster than that on it must
// slow down: they join. Returns whether any did (the link's share then rose).
bool FlowNetwork::Impl::join_faster_than(LinkId l, double share) {
  const double slack = kSlack * achievable[l];
  bool joined = false;
  for (std::size_t k = 0; k < link_flows[l].size(); ++k) {  // joining never edits this list
    const FlowId id = link_flows[l][k];
    if (!in_solve(id) && state[id].rate > share + slack) {
      join(id);
      joined = true;
    }
  }
  return joined;
}

// Once the filling has fixed everything up to a held flow's rate, the flow keeps its rate if
// its bottleneck link is still saturated with no flow faster on it: that link has no unfixed
// flows left (they would get more) and no capacity left. Otherwise it joins (it may speed up).
void FlowNetwork::Impl::check_bottleneck(FlowId id) {
  if (in_solve(id)) return;  // joined since
  const LinkId b = state[id].bottleneck;
  const bool saturated = unfixed[b] == 0 && capacity[b] <= kSlack * achievable[b];
  if (!saturated) join(id);
}

// The incremental solve: progressive filling over the flows whose rates can change, found as
// the filling goes (a bottleneck-ordered update). Flows held at their rates keep them as long as
// they keep a bottleneck (their cap, or a saturated link where no flow is faster), which
// characterises the max-min allocation (Bertsekas and Gallager, "Data Networks", 6.5.2). In
// increasing order of level:
// - a link about to fix its flows first makes join the held flows faster than its share;
// - a held flow whose bottleneck link is touched is checked once the level reaches its rate;
// - a cap, as in fill_rates.
// A flow joins at a level not above its rate, so no link fixed below that level is affected by
// its joining. Starts from the arrivals (unfixed) and the links whose flow sets changed.
void FlowNetwork::Impl::fill_incrementally() {
  LinkHeap& heap = link_heap;
  heap.clear();
  caps.clear();
  checks.clear();
  for (FlowId id : arrived) {
    if (flows[id].transferring && !in_solve(id)) enter(id);
  }
  arrived.clear();
  for (FlowId id : component_flows) {
    if (std::isfinite(flows[id].cap)) heap_push(caps, {flows[id].cap, id});
    for (LinkId l : flows[id].path) {
      if (link_mark[l] != epoch) touch_link(l);
    }
  }
  for (LinkId l : dirty_links) {
    if (link_mark[l] != epoch) touch_link(l);
  }
  dirty_links.clear();
  while (true) {
    while (!caps.empty() && flow_fixed[caps.front().flow]) heap_pop(caps);
    const double link_level = heap.empty() ? kInfinity : queued[heap.top()];
    const double cap_level = caps.empty() ? kInfinity : caps.front().level;
    const double check_level = checks.empty() ? kInfinity : checks.front().level;
    if (link_level == kInfinity && cap_level == kInfinity && check_level == kInfinity) break;
    // Fixings at a level come before the checks at it (a check needs its link settled).
    if (check_level * (1 + kSlack) < std::min(link_level, cap_level)) {
      const FlowId id = checks.front().flow;
      heap_pop(checks);
      check_bottleneck(id);
      continue;
    }
    if (cap_level <= link_level) {
      const FlowId id = caps.front().flow;
      heap_pop(caps);
      fix(id, flows[id].cap, kCapBottleneck);
      continue;
    }
    const LinkId link = heap.pop(queued);
    const double level = queued[link];
    queued[link] = kInfinity;  // out of the heap
    if (unfixed[link] == 0) continue;
    const double share = capacity[link] / unfixed[link];
    if (share > level || join_faster_than(link, share)) {
      queue_link(link);  // risen since queued (or by joins): requeue at its current share
      continue;
    }
    for (FlowId id : link_flows[link]) {
      if (unfixed_in_solve(id)) fix(id, share, link);
    }
  }
  refilled += component_flows.size();
}

void FlowNetwork::Impl::reschedule_completions() {
  const sim::Time now = engine.now();
  for (std::size_t i = 0; i < component_flows.size(); ++i) {
    const FlowId id = component_flows[i];
    Flow& f = flows[id];
    // Same rate as before: the completion already scheduled still holds, to the nanosecond.
    const double rate = state[id].rate;
    if (rate == previous_rates[i] && engine.is_pending(f.completion)) continue;
    engine.cancel(f.completion);
    if (!(rate > 0)) {
      throw std::logic_error("FlowNetwork: an active flow got no bandwidth");
    }
    const double seconds = f.remaining / rate;
    f.completion = engine.schedule_at(now + sim::Time::from_seconds(seconds), [this, id] { complete(id); });
  }
}

void FlowNetwork::Impl::solve() {
  solve_pending = false;
  ++solves;
  begin_solve_set();
  if (solver == MaxMinSolver::full) {
    arrived.clear();
    collect_component();
    dirty_links.clear();
    fill_rates();
  } else {
    fill_incrementally();
  }
  reschedule_completions();
}

FlowNetwork::FlowNetwork(sim::Engine& engine, const Topology& topology, MaxMinSolver solver)
    : impl_(std::make_unique<Impl>(engine, topology, solver)) {}

FlowNetwork::~FlowNetwork() = default;

FlowId FlowNetwork::start(FlowSpec spec, std::function<void()> on_done) {
  Impl& m = *impl_;
  if (!(spec.bytes >= 0) || !std::isfinite(spec.bytes) || !(spec.rate_cap > 0) || !(spec.extra_latency_s >= 0)) {
    throw std::invalid_argument("FlowNetwork: a flow needs bytes >= 0, a positive rate cap, latency >= 0");
  }
  for (std::size_t i = 0; i < spec.path.size(); ++i) {
    if (spec.path[i] >= m.facts.size() || (i > 0 && m.facts[spec.path[i - 1]].to != m.facts[spec.path[i]].from)) {
      throw std::invalid_argument("FlowNetwork: the path is not a chain of existing links");
    }
  }
  const FlowId id = m.allocate();
  Flow& f = m.flows[id];
  double latency = spec.extra_latency_s;
  double cap = spec.rate_cap;
  for (LinkId l : spec.path) {
    latency += m.facts[l].latency_s;
    cap = std::min(cap, m.facts[l].flow_cap);  // e.g. one TCP stream's CPU-bound rate
  }
  f.path = std::move(spec.path);
  f.remaining = spec.bytes;
  f.cap = cap;
  m.state[id].rate = 0;
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
double FlowNetwork::rate(FlowId id) const { return impl_->state.at(id).rate; }
double FlowNetwork::remaining_bytes(FlowId id) const { return impl_->flows.at(id).remaining; }
std::uint64_t FlowNetwork::solves() const { return impl_->solves; }
std::uint64_t FlowNetwork::flows_started() const { return impl_->started; }
std::uint64_t FlowNetwork::flows_refilled() const { return impl_->refilled; }

double FlowNetwork::link_load(LinkId link) const {
  double load = 0;
  for (FlowId id : impl_->link_flows.at(link)) load += impl_->state[id].rate;
  return load;
}

}  // namespace dlsim::network
