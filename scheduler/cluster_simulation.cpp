// The multi-job cluster simulation (see cluster_simulation.hpp): construction and the run;
// the event handlers are in cluster_*.cpp (see cluster_simulation_impl.hpp).
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler {

std::string to_string(Placement p) {
  switch (p) {
    case Placement::packed: return "packed";
    case Placement::spread: return "spread";
    case Placement::topology_aware: return "topology-aware";
  }
  return "?";
}

namespace detail {

Simulation::Simulation(const ClusterSpec& spec, const SimulationOptions& options)
    : spec_(spec), options_(options), policy_(make_policy(options.policy, options.backfill, options.las_thresholds_gpu_s)),
      streams_(options.seed), fabric_(spec.fabric_sharing) {
  engine_.set_interrupt(options.interrupt);
  fabric_.set_phase_source([this](int id) { return phase_of(id); });
  for (const JobSpec& j : spec.jobs) {
    Job job;
    job.spec = &j;
    job.t_iter = sim::Time::from_seconds(j.iteration_s);
    job.base_iter = job.t_iter;
    if (job.t_iter.count_ns() <= 0) throw std::invalid_argument("job " + j.name + ": iteration time below 1 ns");
    job.result.name = j.name;
    job.result.plan = j.plan;
    job.result.gpus = j.gpus;
    job.result.submit_s = j.submit_s;
    jobs_.push_back(job);
    if (std::find(queue_names_.begin(), queue_names_.end(), j.queue) == queue_names_.end()) queue_names_.push_back(j.queue);
  }
  queue_gpus_.assign(queue_names_.size(), 0.0);
  queue_weight_ = queue_weights(options.queue_weights);
  pool_results_.resize(spec.pools.size());
  last_scale_up_.assign(spec.pools.size(), -1.0);
  for (const PoolSpec& p : spec.pools) {
    autoscalers_.push_back(p.autoscaled() ? make_autoscaler(p) : nullptr);
    autoscaling_ = autoscaling_ || p.autoscaled();
  }
  pool_nodes_.assign(spec.pools.size(), {});
  pool_live_.resize(spec.pools.size());
  for (const JobSpec& j : spec.jobs) elastic_ = elastic_ || j.elastic();
  for (const JobSpec& j : spec.jobs) pinned_jobs_ = pinned_jobs_ || !j.pool.empty();
  keyed_ = policy_->has_queue_key() && !policy_->preemptive();
  if (options.rank_index && policy_->preemptive() && policy_->rank_levels() > 0) {
    // Rank positions: level x jobs + arrival order (submit time, then index), as by_arrival.
    by_arrival_.resize(jobs_.size());
    for (std::size_t i = 0; i < jobs_.size(); ++i) by_arrival_[i] = static_cast<int>(i);
    std::stable_sort(by_arrival_.begin(), by_arrival_.end(),
                     [&spec](int a, int b) { return spec.jobs[static_cast<std::size_t>(a)].submit_s < spec.jobs[static_cast<std::size_t>(b)].submit_s; });
    arrival_rank_.resize(jobs_.size());
    for (std::size_t r = 0; r < by_arrival_.size(); ++r) arrival_rank_[static_cast<std::size_t>(by_arrival_[r])] = static_cast<int>(r);
    rank_walk_ = std::make_unique<RankWalk>(policy_->rank_levels() * static_cast<int>(jobs_.size()));
  }
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    pool_results_[p].name = spec.pools[p].name;
    free_index_.add_pool(spec.pools[p].gpus_per_node);
  }
  init_markets();
  busy_series_ = recorder().series("busy_gpus");
  ready_series_ = recorder().series("ready_gpus");
  cost_series_ = recorder().series("cost_usd");
  for (NodeState s : kCountedStates) node_series_[state_index(s)] = recorder().series("nodes_" + to_string(s));
}

ClusterResult Simulation::run() {
  for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
    for (int i = 0; i < spec_.pools[p].nodes; ++i) {
      if (market_open_[p]) add_node(static_cast<int>(p), true);
      else request_node(static_cast<int>(p));  // closed at time 0: fallback, or wait
    }
    if (spec_.pools[p].market.enabled()) arm_market(static_cast<int>(p));
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    engine_.schedule_at(sim::Time::from_seconds(spec_.jobs[j].submit_s), [this, j] { arrive(static_cast<int>(j)); });
  }
  if (options_.series_interval_s > 0) sample_tick();
  for (std::size_t p = 0; p < autoscalers_.size(); ++p) {
    if (autoscalers_[p] && autoscalers_[p]->interval_s() > 0 && !jobs_.empty()) scale_tick(static_cast<int>(p));
  }
  if (!jobs_.empty()) engine_.run_until(sim::Time::from_seconds(options_.horizon_s));
  if (options_.progress && reported_ != finished_) report_progress();  // jobs left at the horizon
  return finish();
}

}  // namespace detail


ClusterResult simulate_cluster(const ClusterSpec& spec, const SimulationOptions& options) {
  validate(spec);
  detail::Simulation simulation(spec, options);
  return simulation.run();
}

}  // namespace dlsim::scheduler
