// Spot-aware costing of a plan candidate (plan_spot.hpp).
#include "experiment/plan_spot.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "models/optimizer.hpp"
#include "scheduler/cluster_simulation.hpp"

namespace dlsim::experiment {
namespace {

// Nearest-rank percentile of sorted values (q in (0, 1]).
double nearest_rank(const std::vector<double>& sorted, double q) {
  const std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

}  // namespace

double spot_price_per_hour(const models::InstanceType& instance, const PlanSpotConfig& spot) {
  return spot.discount >= 0 ? instance.price_per_hour * (1 - spot.discount) : instance.spot_price_per_hour;
}

double spot_notice_s(const models::InstanceType& instance, const PlanSpotConfig& spot) {
  if (spot.notice_s >= 0) return spot.notice_s;
  return instance.provider == "gcp" || instance.provider == "azure" ? 30.0 : 120.0;
}

double checkpoint_bytes(const WorkloadConfig& workload) {
  const bool mixed = workload.precision != models::Precision::fp32;
  const double per_parameter = (mixed ? 2.0 + 4.0 : 4.0) + models::optimizer_state_bytes(workload.optimizer);
  return workload.model.parameters() * per_parameter;
}

scheduler::ClusterSpec spot_cluster(const Scenario& scenario, int nodes, std::int64_t iterations, double iteration_s,
                                    const PlanSpotConfig& spot) {
  const models::InstanceType& instance = scenario.cluster.instance;
  scheduler::PoolSpec pool;
  pool.name = "spot";
  pool.instance = scenario.cluster.instance_name;
  pool.gpus_per_node = instance.accelerators_per_node;
  pool.nodes = nodes;
  pool.capacity = scheduler::Capacity::spot;
  pool.price_per_node_hour = spot_price_per_hour(instance, spot);
  pool.provisioning_s = spot.provisioning_s;
  pool.provisioning_random = spot.provisioning_s > 0;
  pool.reclaim = spot.reclaim;
  pool.notice_s = spot_notice_s(instance, spot);
  pool.replace_lost_nodes = true;

  scheduler::JobSpec job;
  job.name = "train";
  job.gpus = nodes * instance.accelerators_per_node;
  job.pool = pool.name;
  job.iterations = std::max<std::int64_t>(iterations, 1);
  job.iteration_s = iteration_s;
  job.checkpoint = spot.checkpoint;
  if (job.checkpoint.size_bytes <= 0) job.checkpoint.size_bytes = checkpoint_bytes(scenario.workload);

  scheduler::ClusterSpec spec;
  spec.pools.push_back(std::move(pool));
  spec.jobs.push_back(std::move(job));
  return spec;
}

SpotOutcome simulate_spot(const Scenario& scenario, int nodes, std::int64_t iterations, double iteration_s,
                          const PlanSpotConfig& spot, std::uint64_t seed, double horizon_s) {
  const scheduler::ClusterSpec spec = spot_cluster(scenario, nodes, iterations, iteration_s, spot);
  SpotOutcome out;
  out.runs = spot.replications;
  out.horizon_s = horizon_s;
  out.failure_free_s = static_cast<double>(spec.jobs.front().iterations) * iteration_s;
  out.checkpoint_bytes = spec.jobs.front().checkpoint.size_bytes;
  std::vector<double> times, costs;
  double reclaims = 0;
  for (int r = 0; r < spot.replications; ++r) {
    scheduler::SimulationOptions options;
    options.seed = seed + static_cast<std::uint64_t>(r);
    options.horizon_s = horizon_s;
    const scheduler::ClusterResult result = scheduler::simulate_cluster(spec, options);
    const scheduler::JobResult& job = result.jobs.front();
    if (r == 0) out.checkpoint_interval_s = job.checkpoint_interval_s;
    if (job.state != scheduler::JobState::done) {
      ++out.unfinished;
      continue;
    }
    times.push_back(job.finish_s - job.submit_s);
    costs.push_back(result.total_cost_usd);
    reclaims += job.preemptions;
  }
  if (times.empty()) return out;
  const double n = static_cast<double>(times.size());
  out.time_mean_s = std::accumulate(times.begin(), times.end(), 0.0) / n;
  out.cost_mean = std::accumulate(costs.begin(), costs.end(), 0.0) / n;
  out.reclaims_mean = reclaims / n;
  std::sort(times.begin(), times.end());
  std::sort(costs.begin(), costs.end());
  out.time_p10_s = nearest_rank(times, 0.1);
  out.time_p90_s = nearest_rank(times, 0.9);
  out.cost_p10 = nearest_rank(costs, 0.1);
  out.cost_p90 = nearest_rank(costs, 0.9);
  return out;
}

}  // namespace dlsim::experiment
