// Elastic jobs: growing into free GPUs, shrinking for waiting jobs.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

void Simulation::adjust_elastic() {
  const bool waiting = std::any_of(queued_.begin(), queued_.end(),
                                   [this](int id) { return jobs_[static_cast<std::size_t>(id)].state == JobState::queued; });
  if (waiting) {
    int freed = 0;
    for (int id : active_ids()) {
      Job& j = jobs_[static_cast<std::size_t>(id)];
      if (j.spec->elastic() && j.state == JobState::running && j.gpus > j.spec->min_gpus) {
        freed += j.gpus - j.spec->min_gpus;
        resize(id, j.spec->min_gpus, {});
      }
    }
    if (freed > 0) request_pass();
    return;
  }
  for (int id : active_ids()) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    const int free_now = ready_gpus_ - busy_gpus_;
    if (free_now <= 0) break;
    if (!j.spec->elastic() || j.state != JobState::running || j.gpus >= j.spec->max_gpus) continue;
    int extra = std::min(free_now, j.spec->max_gpus - j.gpus);
    if (!j.spec->sizes.empty()) {
      // Only to a size it has a plan for: the largest that the free GPUs allow.
      int to = 0;
      for (const JobSpec::Size& z : j.spec->sizes) {
        if (z.gpus > j.gpus && z.gpus <= j.gpus + extra) to = z.gpus;
      }
      if (to == 0) continue;
      extra = to - j.gpus;
    }
    auto alloc = find_nodes(extra, j.spec->pool);
    if (alloc.empty()) continue;
    resize(id, j.gpus + extra, alloc);
  }
}

void Simulation::resize(int id, int to, const std::vector<Allocation>& extra) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  pause_running(j);
  set_state(j, JobState::resizing);
  ++j.result.resizes;
  queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] -= j.gpus;
  if (to > j.gpus) {
    for (Allocation a : extra) {
      a.since = engine_.now();
      take(a.node, a.gpus, id);
      j.alloc.push_back(a);
    }
  } else {
    int surplus = j.gpus - to;
    while (surplus > 0) {
      const std::size_t k = j.alloc.size() - 1;
      const int g = std::min(surplus, j.alloc[k].gpus);
      give_back(id, k, g);
      surplus -= g;
    }
    record_gpus();
  }
  j.gpus = held_gpus(j);
  j.t_iter = iteration_at(j, j.gpus);
  update_fabric(id);
  rank_update(id);
  queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] += j.gpus;
  ++j.generation;
  const int gen = j.generation;
  engine_.schedule_in(sim::Time::from_seconds(j.spec->resize_pause_s), [this, id, gen] {
    Job& job = jobs_[static_cast<std::size_t>(id)];
    if (job.generation != gen || job.state != JobState::resizing) return;
    set_state(job, JobState::running);
    resume(id);
    request_pass();
  });
}

}  // namespace dlsim::scheduler::detail
