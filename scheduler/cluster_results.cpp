// The results of a run: jobs, pools, costs, JCT statistics.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

ClusterResult Simulation::finish() {
  for (Node& n : nodes_) {
    if (n.state == NodeState::ready || n.state == NodeState::busy || n.state == NodeState::draining) {
      if (n.state == NodeState::ready) set_state(n, NodeState::terminated);
      close_node(n);
    } else if (n.state == NodeState::provisioning) {
      close_node(n);  // requested, never ready: billed while provisioning
    }
  }
  ClusterResult& r = result_;
  // Jobs still under way at the horizon: count what they computed and kept, and the GPUs they
  // hold (GPU-hours and their share of node time, as give_back counts them when a job lets go)
  // without letting go, so that utilization and jobs_cost cover the whole run.
  for (Job& j : jobs_) {
    if (j.state == JobState::done || j.state == JobState::failed) continue;
    if (j.state == JobState::running) pause_running(j);
    for (const Allocation& a : j.alloc) {
      const Node& n = nodes_[static_cast<std::size_t>(a.node)];
      const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
      j.result.gpu_hours += a.gpus * (engine_.now() - a.since).seconds() / 3600.0;
      const double share = node_value(ps, n.committed, a.since.seconds(), engine_.now().seconds()) * a.gpus / ps.gpus_per_node;
      j.result.cost_usd += share;
      node_category(j.result.costs, ps, n.committed) += share;
    }
    if (j.spec->submit_s <= engine_.now().seconds()) close_state(j);  // not if it never arrived
    j.result.state = j.state;
    j.result.useful_iterations = j.saved;
    ++r.unfinished;
    r.makespan_s = engine_.now().seconds();
  }
  std::vector<double> jct;
  double queueing = 0;
  double storage = 0;
  for (std::size_t id = 0; id < jobs_.size(); ++id) {
    Job& j = jobs_[id];
    JobResult jr = j.result;
    if (jr.state == JobState::done) {
      jr.jct_s = jr.finish_s - jr.submit_s;
      jct.push_back(jr.jct_s);
      r.makespan_s = std::max(r.makespan_s, jr.finish_s);
      queueing += jr.queueing_s;
    }
    // Checkpoints are stored from the first until the job ends, or until the horizon for a job
    // still under way there.
    if (jr.state != JobState::failed) {
      const CheckpointSpec& c = j.spec->checkpoint;
      const double end_s = jr.state == JobState::done ? jr.finish_s : engine_.now().seconds();
      if (first_checkpoint_s_[static_cast<int>(id)] >= 0) {
        const double months = (end_s - first_checkpoint_s_[static_cast<int>(id)]) / (30.0 * 86400.0);
        const double s = c.size_bytes / 1e9 * c.storage_price_per_gb_month * months;
        jr.cost_usd += s;
        jr.costs.storage += s;
        storage += s;
      }
    }
    r.lost_gpu_hours += jr.lost_gpu_s / 3600.0;
    r.jobs.push_back(jr);
  }
  std::sort(jct.begin(), jct.end());
  if (jct.empty()) {
    r.mean_jct_s = r.median_jct_s = r.p99_jct_s = r.mean_queueing_s = std::numeric_limits<double>::quiet_NaN();
  } else {
    double sum = 0;
    for (double v : jct) sum += v;
    r.mean_jct_s = sum / jct.size();
    r.median_jct_s = jct[jct.size() / 2];
    r.p99_jct_s = jct[std::min(jct.size() - 1, static_cast<std::size_t>(std::ceil(0.99 * jct.size())) - 1)];
    r.mean_queueing_s = queueing / jct.size();
  }
  double gpu_hours = 0, busy_gpu_hours = 0;
  for (std::size_t p = 0; p < pool_results_.size(); ++p) {
    gpu_hours += pool_results_[p].node_hours * spec_.pools[p].gpus_per_node;
  }
  for (const JobResult& jr : r.jobs) busy_gpu_hours += jr.gpu_hours;
  r.gpu_utilization = gpu_hours > 0 ? busy_gpu_hours / gpu_hours : 0;
  settle_pools();
  r.pools = pool_results_;
  for (const PoolResult& pr : r.pools) r.costs += pr.costs;
  r.costs.storage = storage;
  r.compute_cost_usd = r.costs.node_time();
  r.idle_cost_usd = r.costs.idle;
  r.storage_cost_usd = storage;
  r.total_cost_usd = r.costs.total();
  r.events = static_cast<std::int64_t>(engine_.events_executed());
  return std::move(result_);
}

}  // namespace dlsim::scheduler::detail
