// Scheduling passes: the generic one (the policy decides on the full view), the keyed one
// (FIFO, SJF: the queue kept in key order) and the ranked one (LAS: rank_walk.hpp).
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

void Simulation::request_pass() {
  if (pass_pending_) return;
  pass_pending_ = true;
  engine_.schedule_in(sim::Time{}, [this] {
    pass_pending_ = false;
    schedule_pass();
  });
}

int Simulation::smallest_queued() const {
  int smallest = std::numeric_limits<int>::max();
  for (int id : queued_) smallest = std::min(smallest, jobs_[static_cast<std::size_t>(id)].spec->start_gpus());
  return smallest;
}

JobView Simulation::view_of(int id) const {
  const Job& j = jobs_[static_cast<std::size_t>(id)];
  JobView v;
  v.id = id;
  v.gpus = j.state == JobState::queued ? j.spec->start_gpus() : j.gpus;
  v.submit_s = j.spec->submit_s;
  v.total_s = static_cast<double>(j.spec->iterations) * j.base_iter.seconds();
  const std::int64_t done = j.state == JobState::running ? progress(j) : (j.state == JobState::queued ? j.saved : j.done_at_start);
  v.remaining_s = static_cast<double>(j.spec->iterations - done) * j.base_iter.seconds();
  v.attained_gpu_s = j.attained_gpu_s + (j.state == JobState::running ? (engine_.now() - j.spell_start).seconds() * j.gpus : 0.0);
  v.priority = j.spec->priority;
  v.queue = queue_of(j.spec->queue);
  v.running = j.state != JobState::queued;
  return v;
}

int Simulation::queue_of(const std::string& name) const {
  return static_cast<int>(std::find(queue_names_.begin(), queue_names_.end(), name) - queue_names_.begin());
}

std::vector<double> Simulation::queue_weights(const std::vector<std::pair<std::string, double>>& given) const {
  std::vector<double> w(queue_names_.size(), 1.0);
  for (const auto& [name, weight] : given) {
    const auto q = static_cast<std::size_t>(queue_of(name));
    if (q >= queue_names_.size()) throw std::invalid_argument("queue_weights: no job is in queue '" + name + "'");
    if (!(weight > 0) || !std::isfinite(weight)) throw std::invalid_argument("queue_weights: weight of '" + name + "' must be > 0");
    w[q] = weight;
  }
  return w;
}

void Simulation::keyed_pass() {
  const bool backfill = policy_->backfills();
  for (auto it = keyed_queue_.begin(); it != keyed_queue_.end();) {
    const int free_now = ready_gpus_ - busy_gpus_;
    if (free_now <= 0) break;
    const int id = std::get<2>(*it);
    const JobSpec& js = *jobs_[static_cast<std::size_t>(id)].spec;
    std::vector<Allocation> alloc;
    if (js.start_gpus() <= free_now) alloc = find_nodes(js.start_gpus(), js.pool);
    if (alloc.empty()) {
      if (!backfill) break;
      ++it;
      continue;
    }
    it = keyed_queue_.erase(it);
    place(id, alloc);
  }
  // The arrival-order list only serves the auto-scaler and elastic jobs here: compact it now
  // and then rather than on every pass.
  if (queued_.size() > 2 * keyed_queue_.size() + 64) drop_left_queue();
  if (elastic_) adjust_elastic();
  if (autoscaling_) {
    int unplaced = 0;
    for (const auto& k : keyed_queue_) unplaced += jobs_[static_cast<std::size_t>(std::get<2>(k))].spec->start_gpus();
    autoscale(ScaleTrigger::pass, unplaced);
  }
}

int Simulation::rank_position_of(int id) const {
  return policy_->rank_level(view_of(id)) * static_cast<int>(jobs_.size()) + arrival_rank_[static_cast<std::size_t>(id)];
}

void Simulation::rank_update(int id) {
  if (!rank_walk_) return;
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.rank_position >= 0) {
    if (j.rank_running) rank_walk_->remove_running(j.rank_position, j.rank_gpus);
    else rank_walk_->remove_queued(j.rank_position);
    j.rank_position = -1;
  }
  const bool placed = j.state == JobState::restarting || j.state == JobState::running || j.state == JobState::checkpointing ||
                      j.state == JobState::resizing;
  if (j.state != JobState::queued && !placed) return;
  j.rank_position = rank_position_of(id);
  j.rank_running = placed;
  j.rank_gpus = j.gpus;
  if (placed) rank_walk_->add_running(j.rank_position, j.gpus);
  else rank_walk_->add_queued(j.rank_position);
}

void Simulation::ranked_pass() {
  const RankWalk::Decision d = rank_walk_->walk(ready_gpus_, [this](int position) {
    return jobs_[static_cast<std::size_t>(job_at(position))].spec->start_gpus();
  });
  if (d.preempt_from >= 0) {
    for (int position : rank_walk_->running_from(d.preempt_from)) preempt_job(job_at(position), true);
  }
  for (int position : d.start) {
    if (ready_gpus_ - busy_gpus_ <= 0) break;
    const int id = job_at(position);
    const JobSpec& js = *jobs_[static_cast<std::size_t>(id)].spec;
    const auto alloc = find_nodes(js.start_gpus(), js.pool);
    if (alloc.empty()) break;
    place(id, alloc);
  }
  if (queued_.size() > 2 * rank_walk_->queued_size() + 64) drop_left_queue();
  if (elastic_) adjust_elastic();
  if (autoscaling_) autoscale(ScaleTrigger::pass, queued_gpus());
}

void Simulation::drop_left_queue() {
  queued_.erase(std::remove_if(queued_.begin(), queued_.end(),
                               [this](int id) { return jobs_[static_cast<std::size_t>(id)].state != JobState::queued; }),
                queued_.end());
}

void Simulation::schedule_pass() {
  if (keyed_) {
    keyed_pass();
    return;
  }
  if (rank_walk_) {
    ranked_pass();
    return;
  }
  ClusterView view;
  view.now_s = engine_.now().seconds();
  view.total_gpus = ready_gpus_;
  view.free_gpus = ready_gpus_ - busy_gpus_;
  view.queue_gpus = queue_gpus_;
  view.queue_weight = queue_weight_;
  // Keep the queue in order of (re)entry, dropping jobs that left it.
  queued_.erase(std::remove_if(queued_.begin(), queued_.end(),
                               [this](int id) { return jobs_[static_cast<std::size_t>(id)].state != JobState::queued; }),
                queued_.end());
  if (queued_.empty()) {
    if (elastic_) adjust_elastic();
    return;
  }
  // Nothing can start and nothing may be preempted: no need to ask (unless the pools may grow).
  const int free_now = ready_gpus_ - busy_gpus_;
  if (!policy_->preemptive() && !autoscaling_ && free_now < smallest_queued()) {
    if (elastic_) adjust_elastic();  // elastic jobs may make room
    return;
  }
  int asked = 0;
  for (int id : queued_) {
    view.queued.push_back(view_of(id));
    asked += view.queued.back().gpus;
  }
  // A preemptive policy needs the running jobs only when the queue asks for more than is free:
  // otherwise its ranking keeps every running job and starts every queued one anyway.
  if (policy_->preemptive() && asked > view.free_gpus) {
    for (const auto& [key, id] : active_) view.running.push_back(view_of(id));
  }
  const Decisions d = policy_->decide(view);
  for (int id : d.preempt) {
    const Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.state == JobState::running || j.state == JobState::checkpointing || j.state == JobState::restarting ||
        j.state == JobState::resizing) {
      preempt_job(id, true);
    }
  }
  for (int id : d.start) {
    if (ready_gpus_ - busy_gpus_ <= 0) break;
    if (jobs_[static_cast<std::size_t>(id)].state != JobState::queued) continue;
    const JobSpec& js = *jobs_[static_cast<std::size_t>(id)].spec;
    const auto alloc = find_nodes(js.start_gpus(), js.pool);
    if (alloc.empty()) {
      if (!d.backfill) break;
      continue;
    }
    place(id, alloc);
  }
  if (elastic_) adjust_elastic();
  if (autoscaling_) {
    int unplaced = 0;
    for (int id : queued_) {
      if (jobs_[static_cast<std::size_t>(id)].state == JobState::queued) unplaced += jobs_[static_cast<std::size_t>(id)].spec->start_gpus();
    }
    autoscale(ScaleTrigger::pass, unplaced);
  }
}

}  // namespace dlsim::scheduler::detail
