// Auto-scaling: asking each pool's auto-scaler (autoscaler.hpp) and applying its decision.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

void Simulation::autoscale(ScaleTrigger trigger, int unplaced_gpus, int only_pool, int idle_node) {
  for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
    if (!autoscalers_[p] || (only_pool >= 0 && static_cast<int>(p) != only_pool)) continue;
    const int pool = static_cast<int>(p);
    const int demand = std::max(0, std::min(unplaced_gpus, demand_for(pool, unplaced_gpus)));
    const int coming = pool_nodes_[p][state_index(NodeState::provisioning)] * spec_.pools[p].gpus_per_node;
    const ScaleDecision d = autoscalers_[p]->decide(scale_view(pool, trigger, demand, idle_node));
    int requested = apply_scaling(pool, d) * spec_.pools[p].gpus_per_node;
    // What the pool cannot give for the queued jobs (its market closed, or at max_nodes) goes
    // down its fallback chain.
    if (trigger == ScaleTrigger::pass && fallback_[p] >= 0) requested += overflow(pool, demand - coming - requested);
    unplaced_gpus -= requested;
  }
}

int Simulation::overflow(int pool, int gpus) {
  int requested = 0;
  for (int f = fallback_[static_cast<std::size_t>(pool)]; f >= 0 && f != pool && gpus > 0; f = fallback_[static_cast<std::size_t>(f)]) {
    const PoolSpec& fs = spec_.pools[static_cast<std::size_t>(f)];
    if (!fs.autoscaled() || !market_open_[static_cast<std::size_t>(f)]) continue;
    const int coming = pool_nodes_[static_cast<std::size_t>(f)][state_index(NodeState::provisioning)] * fs.gpus_per_node;
    const int need = gpus - coming;
    gpus -= coming;
    if (need <= 0) break;
    const int n = std::min((need + fs.gpus_per_node - 1) / fs.gpus_per_node, std::max(0, fs.max_nodes - live_nodes(f)));
    for (int i = 0; i < n; ++i) add_node(f, false);
    pool_results_[static_cast<std::size_t>(f)].fallback_nodes += n;
    if (n > 0) last_scale_up_[static_cast<std::size_t>(f)] = engine_.now().seconds();
    gpus -= n * fs.gpus_per_node;
    requested += n * fs.gpus_per_node;
  }
  return requested;
}

AutoscaleView Simulation::scale_view(int pool, ScaleTrigger trigger, int unplaced_gpus, int idle_node) {
  AutoscaleView v;
  v.now_s = engine_.now().seconds();
  v.trigger = trigger;
  v.idle_node = idle_node;
  v.unplaced_gpus = unplaced_gpus;
  v.arrivals = arrivals_;
  PoolScaleView& pv = v.pool;
  const auto& c = pool_nodes_[static_cast<std::size_t>(pool)];
  pv.pool = pool;
  pv.gpus_per_node = spec_.pools[static_cast<std::size_t>(pool)].gpus_per_node;
  pv.nodes_provisioning = c[state_index(NodeState::provisioning)];
  pv.nodes_ready = c[state_index(NodeState::ready)];
  pv.nodes_busy = c[state_index(NodeState::busy)];
  pv.nodes_draining = c[state_index(NodeState::draining)];
  pv.last_scale_up_s = last_scale_up_[static_cast<std::size_t>(pool)];
  // The pool's live nodes (those released or lost since the last view drop out here).
  std::vector<int>& live = pool_live_[static_cast<std::size_t>(pool)];
  live.erase(std::remove_if(live.begin(), live.end(), [this](int id) { return !is_live(nodes_[static_cast<std::size_t>(id)]); }),
             live.end());
  for (int id : live) {
    const Node& n = nodes_[static_cast<std::size_t>(id)];
    if (n.state == NodeState::busy) pv.busy_gpus += pv.gpus_per_node - n.free;
    if (n.state == NodeState::ready) pv.idle.push_back({id, n.idle_since.seconds()});
  }
  std::stable_sort(pv.idle.begin(), pv.idle.end(), [](const IdleNode& a, const IdleNode& b) { return a.idle_since_s < b.idle_since_s; });
  return v;
}

int Simulation::apply_scaling(int pool, const ScaleDecision& d) {
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
  const int add = market_open_[static_cast<std::size_t>(pool)] ? std::min(d.add_nodes, std::max(0, ps.max_nodes - live_nodes(pool))) : 0;
  for (int i = 0; i < add; ++i) add_node(pool, false);
  if (add > 0) last_scale_up_[static_cast<std::size_t>(pool)] = engine_.now().seconds();
  for (int id : d.release) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    if (n.pool != pool || n.state != NodeState::ready || live_nodes(pool) <= ps.min_nodes) continue;
    remove_ready(n);
    set_state(n, NodeState::terminated);
    ++n.generation;
    close_node(n);
  }
  return add;
}

int Simulation::demand_for(int pool, int unplaced_gpus) const {
  if (!pinned_jobs_) return unplaced_gpus;
  int demand = 0;
  const auto add = [&](int id) {
    const Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.state == JobState::queued && (j.spec->pool.empty() || serves(pool, j.spec->pool))) demand += j.spec->start_gpus();
  };
  if (keyed_) {
    for (const auto& k : keyed_queue_) add(std::get<2>(k));
  } else {
    for (int id : queued_) add(id);
  }
  return demand;
}

int Simulation::queued_gpus() const {
  int g = 0;
  for (int id : queued_) {
    if (jobs_[static_cast<std::size_t>(id)].state == JobState::queued) g += jobs_[static_cast<std::size_t>(id)].spec->start_gpus();
  }
  return g;
}

void Simulation::scale_tick(int pool) {
  autoscale(ScaleTrigger::tick, queued_gpus(), pool);
  if (all_jobs_finished()) return;
  engine_.schedule_in(sim::Time::from_seconds(autoscalers_[static_cast<std::size_t>(pool)]->interval_s()),
                      [this, pool] { scale_tick(pool); });
}

void Simulation::idle_check(int id, int gen, sim::Time since) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  if (n.generation != gen || n.state != NodeState::ready || n.idle_since != since) return;
  autoscale(ScaleTrigger::idle_timeout, queued_gpus(), n.pool, id);
}

void Simulation::note_idle(int id) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
  n.idle_since = engine_.now();
  if (!ps.autoscaled()) return;
  const int gen = n.generation;
  const sim::Time since = n.idle_since;
  engine_.schedule_in(sim::Time::from_seconds(ps.idle_timeout_s), [this, id, gen, since] { idle_check(id, gen, since); });
}

}  // namespace dlsim::scheduler::detail
