// Jobs: arrival, placement, running in whole iterations, checkpoints, completion, preemption,
// and the GPUs they take and give back.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

void Simulation::set_state(Job& j, JobState to) {
  if (!allowed(j.state, to)) throw std::logic_error("job " + j.spec->name + " transition " + to_string(j.state) + " -> " + to_string(to));
  close_state(j);
  j.state = to;
  j.state_since = engine_.now();
}

void Simulation::close_state(Job& j) {
  const double spent = (engine_.now() - j.state_since).seconds();
  if (j.state == JobState::queued) j.result.queueing_s += spent;
  if (j.state == JobState::restarting) j.result.restart_s += spent;
  if (j.state == JobState::checkpointing) j.result.checkpoint_s += spent;
  if (j.state == JobState::running) j.result.run_s += spent;
  record_span(j);
}

void Simulation::record_span(const Job& j) {
  if (engine_.now() <= j.state_since || j.state == JobState::done || j.state == JobState::failed) return;
  result_.timeline.push_back({static_cast<int>(&j - jobs_.data()), j.state, j.state_since.seconds(), engine_.now().seconds()});
}

void Simulation::arrive(int id) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  j.state_since = engine_.now();
  if (!fits_anywhere(*j.spec)) {
    set_state(j, JobState::failed);
    j.result.state = JobState::failed;
    job_finished();
    return;
  }
  if (autoscaling_) arrivals_.push_back({engine_.now().seconds(), j.spec->start_gpus(), pool_index(j.spec->pool)});
  enqueue(id);
  request_pass();
}

void Simulation::job_finished() {
  ++finished_;
  if (options_.progress && (all_jobs_finished() || engine_.events_executed() - reported_at_ >= kProgressEvents)) report_progress();
  if (all_jobs_finished()) engine_.stop();
}

void Simulation::report_progress() {
  reported_ = finished_;
  reported_at_ = engine_.events_executed();
  options_.progress(finished_, static_cast<double>(jobs_.size()));
}

int Simulation::pool_index(const std::string& name) const {
  for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
    if (spec_.pools[p].name == name) return static_cast<int>(p);
  }
  return -1;
}

void Simulation::enqueue(int id) {
  queued_.push_back(id);
  rank_update(id);
  if (keyed_) {
    const JobView v = view_of(id);
    keyed_queue_.insert({policy_->queue_key(v), v.submit_s, id});
  }
}

bool Simulation::fits_anywhere(const JobSpec& s) const { return s.start_gpus() <= max_gpus_for(spec_, s); }

std::int64_t Simulation::progress(const Job& j) const {
  if (j.state != JobState::running) return j.done_at_start;
  return j.done_at_start + (engine_.now() - j.run_start).count_ns() / j.t_iter.count_ns();
}

sim::Time Simulation::iteration_at(const Job& j, int g) const {
  if (g == j.spec->gpus) return j.base_iter;
  for (const JobSpec::Size& z : j.spec->sizes) {
    if (z.gpus == g) return sim::Time::from_seconds(z.iteration_s);
  }
  return sim::Time::ns(std::max<std::int64_t>(1, std::llround(static_cast<double>(j.base_iter.count_ns()) * j.spec->gpus / g)));
}

int Simulation::held_gpus(const Job& j) const {
  int g = 0;
  for (const Allocation& a : j.alloc) g += a.gpus;
  return g;
}

void Simulation::place(int id, const std::vector<Allocation>& alloc) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  set_state(j, JobState::restarting);
  j.alloc = alloc;
  for (Allocation& a : j.alloc) a.since = engine_.now();
  if (j.result.first_start_s < 0) j.result.first_start_s = engine_.now().seconds();
  for (const Allocation& a : alloc) take(a.node, a.gpus, id);
  j.gpus = held_gpus(j);
  j.t_iter = iteration_at(j, j.gpus);
  update_fabric(id);
  j.active_key = placements_++;
  active_.emplace(j.active_key, id);
  rank_update(id);
  queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] += j.gpus;
  j.interval_s = checkpoint_interval(j);
  j.result.checkpoint_interval_s = j.interval_s;
  std::vector<std::pair<int, int>> leaves;
  for (const Allocation& a : alloc) {
    const Node& n = nodes_[static_cast<std::size_t>(a.node)];
    if (std::find(leaves.begin(), leaves.end(), std::make_pair(n.pool, n.leaf)) == leaves.end()) leaves.emplace_back(n.pool, n.leaf);
  }
  j.result.max_leaves = std::max(j.result.max_leaves, static_cast<int>(leaves.size()));
  const CheckpointSpec& c = j.spec->checkpoint;
  const double restore = (j.saved > 0 ? c.read_s(j.node_count()) : 0.0) + c.warmup_s;
  if (j.saved > 0) charge_checkpoint_transfer(j, false);
  ++j.generation;
  const int gen = j.generation;
  engine_.schedule_in(sim::Time::from_seconds(restore), [this, id, gen] { start_running(id, gen); });
}

double Simulation::checkpoint_interval(const Job& j) const {
  const CheckpointSpec& c = j.spec->checkpoint;
  if (c.policy == CheckpointPolicy::none) return kInf;
  if (c.policy == CheckpointPolicy::fixed) return c.interval_s;
  // Young/Daly from the failure rate of the nodes the job holds.
  double rate = 0;
  for (const Allocation& a : j.alloc) {
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(nodes_[static_cast<std::size_t>(a.node)].pool)];
    rate += 1.0 / ps.reclaim.mean() + 1.0 / ps.failure.mean();
  }
  if (rate <= 0) return kInf;
  return daly_interval(c.write_s(j.node_count()), 1.0 / rate);
}

void Simulation::start_running(int id, int gen) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.generation != gen || j.state != JobState::restarting) return;
  set_state(j, JobState::running);
  j.done_at_start = j.saved;
  resume(id);
  if (j.spec->elastic()) request_pass();  // it may grow now
}

void Simulation::resume(int id, sim::Time into) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  j.spell_start = engine_.now();
  j.run_start = engine_.now() - into;
  ++j.generation;
  const int gen = j.generation;
  const std::int64_t left = j.spec->iterations - j.done_at_start;
  const sim::Time finish = sim::Time::ns(left * j.t_iter.count_ns()) - into;
  engine_.schedule_in(finish, [this, id, gen] { complete(id, gen); });
  if (j.interval_s < kInf) {
    // At the first iteration boundary after the interval (checkpoints happen between steps).
    const std::int64_t steps = static_cast<std::int64_t>(std::ceil(j.interval_s / j.t_iter.seconds()));
    const sim::Time every = sim::Time::ns(std::max<std::int64_t>(1, steps) * j.t_iter.count_ns()) - into;
    if (every < finish) engine_.schedule_in(every, [this, id, gen] { if (jobs_[static_cast<std::size_t>(id)].generation == gen) begin_checkpoint(id, false); });
  }
  JobView v = view_of(id);
  const double review = policy_->next_review_gpu_s(v);
  if (review < kInf) {
    const double after_s = (review - v.attained_gpu_s) / j.gpus;
    if (sim::Time::from_seconds(after_s) < finish) {
      engine_.schedule_in(sim::Time::from_seconds(after_s) + sim::Time::ns(1), [this, id, gen] {
        if (jobs_[static_cast<std::size_t>(id)].generation != gen) return;
        rank_update(id);  // its level may have changed
        request_pass();
      });
    }
  }
}

sim::Time Simulation::pause_running(Job& j) {
  const std::int64_t now_done = progress(j);
  const sim::Time spell = engine_.now() - j.spell_start;
  j.result.computed_iterations += now_done - j.done_at_start;
  charge_traffic_egress(j, now_done - j.done_at_start);
  j.attained_gpu_s += spell.seconds() * j.gpus;
  const sim::Time own = iteration_at(j, j.gpus);
  if (j.t_iter > own) j.result.network_s += spell.seconds() * (1.0 - own.seconds() / j.t_iter.seconds());
  const sim::Time into = sim::Time::ns((engine_.now() - j.run_start).count_ns() - (now_done - j.done_at_start) * j.t_iter.count_ns());
  j.done_at_start = now_done;
  return into;
}

void Simulation::begin_checkpoint(int id, bool emergency) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.state != JobState::running) return;
  pause_running(j);
  set_state(j, JobState::checkpointing);
  charge_checkpoint_transfer(j, true);
  j.emergency = emergency;
  ++j.generation;
  const int gen = j.generation;
  engine_.schedule_in(sim::Time::from_seconds(j.spec->checkpoint.write_s(j.node_count())),
                      [this, id, gen] { end_checkpoint(id, gen); });
}

void Simulation::end_checkpoint(int id, int gen) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.generation != gen || j.state != JobState::checkpointing) return;
  j.saved = j.done_at_start;
  ++j.result.checkpoints;
  if (first_checkpoint_s_[id] < 0) first_checkpoint_s_[id] = engine_.now().seconds();
  // After an emergency checkpoint the job computes on until the node goes; what it does
  // then is lost, as on a real spot node.
  set_state(j, JobState::running);
  resume(id);
}

void Simulation::complete(int id, int gen) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.generation != gen || j.state != JobState::running) return;
  pause_running(j);
  j.saved = j.done_at_start;
  set_state(j, JobState::done);
  release(id);
  j.result.state = JobState::done;
  j.result.finish_s = engine_.now().seconds();
  j.result.useful_iterations = j.saved;
  job_finished();
  request_pass();
}

void Simulation::preempt_job(int id, bool by_scheduler) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.state == JobState::running) pause_running(j);
  if (by_scheduler) {
    if (j.state == JobState::running || j.state == JobState::resizing) charge_checkpoint_transfer(j, true);
    if (j.state == JobState::running || j.state == JobState::checkpointing || j.state == JobState::resizing) j.saved = j.done_at_start;
    ++j.result.suspensions;
  } else {
    ++j.result.preemptions;
  }
  result_.preemptions.push_back({id, engine_.now().seconds(), by_scheduler});
  const std::int64_t lost = j.done_at_start - j.saved;
  j.result.lost_gpu_s += static_cast<double>(lost) * j.base_iter.seconds() * j.spec->gpus;
  j.done_at_start = j.saved;
  set_state(j, JobState::preempted);
  ++j.generation;
  release(id);
  set_state(j, JobState::queued);
  enqueue(id);
}

void Simulation::take(int node, int gpus, int job) {
  Node& n = nodes_[static_cast<std::size_t>(node)];
  const int per_node = spec_.pools[static_cast<std::size_t>(n.pool)].gpus_per_node;
  if (n.free == per_node) n.busy_since = engine_.now();
  n.free -= gpus;
  n.jobs.push_back(job);
  if (n.state == NodeState::ready) set_state(n, NodeState::busy);
  index_node(n);
  busy_gpus_ += gpus;
  record_gpus();
}

std::vector<int> Simulation::active_ids() const {
  std::vector<int> ids;
  ids.reserve(active_.size());
  for (const auto& [key, id] : active_) ids.push_back(id);
  return ids;
}

void Simulation::release(int id) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] -= j.gpus;
  while (!j.alloc.empty()) give_back(id, j.alloc.size() - 1, j.alloc.back().gpus);
  j.gpus = 0;
  update_fabric(id);
  if (active_.erase(j.active_key) != 1) throw std::logic_error("release: job " + std::to_string(id) + " was not placed");
  j.active_key = -1;
  rank_update(id);
  record_gpus();
}

void Simulation::give_back(int id, std::size_t k, int gpus) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  Allocation& a = j.alloc[k];
  {
    const double held_s = (engine_.now() - a.since).seconds();
    Node& n = nodes_[static_cast<std::size_t>(a.node)];
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
    n.free += gpus;
    if (gpus == a.gpus) n.jobs.erase(std::find(n.jobs.begin(), n.jobs.end(), id));
    if (n.free == ps.gpus_per_node) {
      n.busy_s += (engine_.now() - n.busy_since).seconds();
      if (n.state == NodeState::busy) {
        set_state(n, NodeState::ready);
        note_idle(a.node);
      }
    }
    index_node(n);
    busy_gpus_ -= gpus;
    j.result.gpu_hours += gpus * held_s / 3600.0;
    const double share = node_value(ps, n.committed, a.since.seconds(), engine_.now().seconds()) * gpus / ps.gpus_per_node;
    j.result.cost_usd += share;
    node_category(j.result.costs, ps, n.committed) += share;
  }
  a.gpus -= gpus;
  if (a.gpus == 0) j.alloc.erase(j.alloc.begin() + static_cast<long>(k));
}

}  // namespace dlsim::scheduler::detail
