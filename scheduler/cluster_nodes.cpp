// Nodes: provisioning, readiness, spot notices and reclamation, failures, billing on release,
// and the GPU and node series.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

void Simulation::add_node(int pool, bool initial) {
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
  Node n;
  n.pool = pool;
  n.leaf = pool_node_count(pool) / std::max(1, ps.nodes_per_leaf);
  n.free = ps.gpus_per_node;
  n.requested = engine_.now();
  if (ps.nic_bandwidth > 0) n.nic_link = fabric_.add_link(ps.nic_bandwidth);
  if (ps.capacity == Capacity::reserved && committed_live_[static_cast<std::size_t>(pool)] < ps.nodes) {
    n.committed = true;  // takes a free place in the commitment
    ++committed_live_[static_cast<std::size_t>(pool)];
  }
  nodes_.push_back(n);
  ++pool_results_[static_cast<std::size_t>(pool)].nodes_requested;
  count_node(pool, NodeState::provisioning, +1);
  if (autoscaling_) pool_live_[static_cast<std::size_t>(pool)].push_back(id_of_last_node());
  const int id = static_cast<int>(nodes_.size()) - 1;
  if (initial) {
    node_ready(id);
  } else {
    const double delay = ps.provisioning_random ? streams_.stream("provisioning").exponential(ps.provisioning_s) : ps.provisioning_s;
    engine_.schedule_in(sim::Time::from_seconds(delay), [this, id] { node_ready(id); });
  }
}

int Simulation::live_nodes(int pool) const {
  const auto& c = pool_nodes_[static_cast<std::size_t>(pool)];
  int n = 0;
  for (NodeState s : kCountedStates) n += c[state_index(s)];
  return n;
}

void Simulation::set_state(Node& n, NodeState to) {
  if (!allowed(n.state, to)) throw std::logic_error("node transition " + to_string(n.state) + " -> " + to_string(to));
  count_node(n.pool, n.state, -1);
  n.state = to;
  count_node(n.pool, to, +1);
  index_node(n);
}

void Simulation::index_node(const Node& n) {
  const bool in_service = n.state == NodeState::ready || n.state == NodeState::busy;
  free_index_.update(static_cast<int>(&n - nodes_.data()), n.pool, in_service ? n.free : 0);
}

void Simulation::count_node(int pool, NodeState s, int change) {
  if (state_index(s) >= kCountedStates.size()) return;
  pool_nodes_[static_cast<std::size_t>(pool)][state_index(s)] += change;
  nodes_in_[state_index(s)] += change;
  if (options_.series_interval_s <= 0) record_nodes();  // else sampled by the tick
}

void Simulation::record_nodes() {
  for (NodeState s : kCountedStates) recorder().record(node_series_[state_index(s)], engine_.now(), nodes_in_[state_index(s)]);
}

void Simulation::node_ready(int id) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  set_state(n, NodeState::ready);
  n.ready_at = engine_.now();
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
  ready_gpus_ += ps.gpus_per_node;
  record_gpus();
  if (!market_open_[static_cast<std::size_t>(n.pool)]) {
    node_lost(id, n.generation, true);  // the price passed the maximum while it booted
    return;
  }
  arm_hazards(id);
  note_idle(id);
  request_pass();
}

void Simulation::arm_hazards(int id) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
  const int gen = n.generation;
  // A draw beyond the horizon never happens in this run: it is not scheduled. Long-tailed draws
  // (a mean of decades) would otherwise overflow sim::Time; the draws themselves are unchanged, so
  // the random streams stay in step.
  const double left_s = options_.horizon_s - engine_.now().seconds();
  if (ps.reclaim.kind != Hazard::Kind::none) {
    const double t = sample_time_to_event(ps.reclaim, 0.0, streams_.stream("reclaim/" + ps.name));
    const double notice = std::min(ps.notice_s, t);
    if (t - notice <= left_s) engine_.schedule_in(sim::Time::from_seconds(t - notice), [this, id, gen] { spot_notice(id, gen); });
    if (t <= left_s) engine_.schedule_in(sim::Time::from_seconds(t), [this, id, gen] { node_lost(id, gen, true); });
  }
  if (ps.failure.kind != Hazard::Kind::none) {
    const double t = sample_time_to_event(ps.failure, 0.0, streams_.stream("failure/" + ps.name));
    if (t <= left_s) engine_.schedule_in(sim::Time::from_seconds(t), [this, id, gen] { node_lost(id, gen, false); });
  }
}

void Simulation::spot_notice(int id, int gen) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  if (n.generation != gen || (n.state != NodeState::ready && n.state != NodeState::busy)) return;
  // A draining node stays counted in ready_gpus_ until it is gone (node_lost): its GPUs may still
  // be busy, and busy GPUs are counted until their job leaves, so busy <= ready always holds.
  set_state(n, NodeState::draining);
  // Jobs that can write a checkpoint within the notice do so now.
  const double notice = spec_.pools[static_cast<std::size_t>(n.pool)].notice_s;
  for (int j : std::vector<int>(n.jobs)) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    if (job.state == JobState::running && job.spec->checkpoint.policy != CheckpointPolicy::none &&
        job.spec->checkpoint.write_s(job.node_count()) <= notice) {
      begin_checkpoint(j, true);
    }
  }
}

void Simulation::remove_ready(Node& n) {
  // A node leaving service (lost, or released idle): its GPUs no longer count.
  ready_gpus_ -= spec_.pools[static_cast<std::size_t>(n.pool)].gpus_per_node;
  record_gpus();
}

void Simulation::node_lost(int id, int gen, bool reclaimed) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  if (n.generation != gen) return;
  if (n.state != NodeState::ready && n.state != NodeState::busy && n.state != NodeState::draining) return;
  if (reclaimed) {
    if (n.state != NodeState::draining) set_state(n, NodeState::draining);
    set_state(n, NodeState::preempted);
    ++pool_results_[static_cast<std::size_t>(n.pool)].reclaimed;
  } else {
    set_state(n, NodeState::failed);
    ++pool_results_[static_cast<std::size_t>(n.pool)].failed;
  }
  ++n.generation;
  close_node(n);
  for (int j : std::vector<int>(n.jobs)) preempt_job(j, false);
  remove_ready(n);  // after its jobs gave their GPUs back, so that busy <= ready at every record
  if (spec_.pools[static_cast<std::size_t>(n.pool)].replace_lost_nodes && !all_jobs_finished()) request_node(n.pool);
  request_pass();
}

void Simulation::close_node(Node& n) {
  PoolResult& pr = pool_results_[static_cast<std::size_t>(n.pool)];
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
  const double held = (engine_.now() - n.requested).seconds();
  if (n.free < ps.gpus_per_node) n.busy_s += (engine_.now() - n.busy_since).seconds();
  pr.node_hours += held / 3600.0;
  pr.busy_node_hours += n.busy_s / 3600.0;
  const double cost = node_bill(ps, n.committed, n.requested.seconds(), held, spec_.billing);
  const double provisioning_s = ((n.state == NodeState::provisioning ? engine_.now() : n.ready_at) - n.requested).seconds();
  pr.cost_usd += cost;
  billed_ += cost;
  busy_billed_ += held > 0 ? cost * std::min(1.0, n.busy_s / held) : 0.0;
  node_category(pr.costs, ps, n.committed) += cost;
  if (held > 0) {
    pr.costs.idle += cost * (1.0 - std::min(1.0, n.busy_s / held));
    pr.costs.provisioning += cost * std::min(1.0, provisioning_s / held);
  }
  if (n.committed) {
    // Covered by the commitment (billed in finish()): count what its time was worth.
    --committed_live_[static_cast<std::size_t>(n.pool)];
    committed_busy_usd_[static_cast<std::size_t>(n.pool)] += node_value(ps, true, 0, n.busy_s);
    committed_provisioning_usd_[static_cast<std::size_t>(n.pool)] += node_value(ps, true, 0, provisioning_s);
  }
  recorder().record(cost_series_, engine_.now(), billed_);
}

void Simulation::record_gpus() {
  if (options_.series_interval_s > 0) return;  // sampled by the tick instead
  recorder().record(busy_series_, engine_.now(), busy_gpus_);
  recorder().record(ready_series_, engine_.now(), ready_gpus_);
}

void Simulation::sample_tick() {
  recorder().record(busy_series_, engine_.now(), busy_gpus_);
  recorder().record(ready_series_, engine_.now(), ready_gpus_);
  record_nodes();
  if (all_jobs_finished()) return;
  engine_.schedule_in(sim::Time::from_seconds(options_.series_interval_s), [this] { sample_tick(); });
}

}  // namespace dlsim::scheduler::detail
