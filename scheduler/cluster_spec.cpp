// Validation of cluster specs (see cluster_spec.hpp).
#include "scheduler/cluster_spec.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "scheduler/autoscaler.hpp"

namespace dlsim::scheduler {

std::string to_string(Capacity c) {
  switch (c) {
    case Capacity::on_demand: return "on-demand";
    case Capacity::spot: return "spot";
    case Capacity::reserved: return "reserved";
  }
  return "?";
}

std::string to_string(CheckpointPolicy p) {
  switch (p) {
    case CheckpointPolicy::none: return "none";
    case CheckpointPolicy::fixed: return "fixed";
    case CheckpointPolicy::young_daly: return "young-daly";
  }
  return "?";
}

namespace {
[[noreturn]] void reject(const std::string& what, const std::string& field, const std::string& why) {
  throw std::invalid_argument(what + ": " + field + " " + why);
}
bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

// Every fallback names another pool, and following fallbacks never comes back to a pool.
void validate_fallbacks(const std::vector<PoolSpec>& pools) {
  const auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < pools.size(); ++i) {
      if (pools[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  for (const PoolSpec& p : pools) {
    if (p.fallback.empty()) continue;
    const std::string what = "pool '" + p.name + "'";
    if (p.fallback == p.name) reject(what, "fallback", "names the pool itself");
    if (index_of(p.fallback) < 0) reject(what, "fallback", "names no pool ('" + p.fallback + "')");
    std::string chain = p.name;
    for (int q = index_of(p.fallback), steps = 0; q >= 0; q = index_of(pools[static_cast<std::size_t>(q)].fallback), ++steps) {
      chain += " -> " + pools[static_cast<std::size_t>(q)].name;
      if (pools[static_cast<std::size_t>(q)].name == p.name || steps > static_cast<int>(pools.size())) {
        reject(what, "fallback", "makes a cycle (" + chain + ")");
      }
      if (pools[static_cast<std::size_t>(q)].fallback.empty()) break;
    }
  }
}
}  // namespace

void validate(const ClusterSpec& spec) {
  if (spec.pools.empty()) throw std::invalid_argument("cluster: no node pools");
  std::set<std::string> names;
  for (const PoolSpec& p : spec.pools) {
    const std::string what = "pool '" + p.name + "'";
    if (!names.insert(p.name).second) reject(what, "name", "appears twice");
    if (p.gpus_per_node < 1) reject(what, "gpus_per_node", "must be >= 1");
    if (p.nodes < 0) reject(what, "nodes", "must be >= 0");
    if (!finite_nonnegative(p.price_per_node_hour)) reject(what, "price", "must be >= 0");
    if (!finite_nonnegative(p.provisioning_s)) reject(what, "provisioning", "must be >= 0");
    if (!finite_nonnegative(p.notice_s)) reject(what, "notice", "must be >= 0");
    if (p.nodes_per_leaf < 1) reject(what, "nodes_per_leaf", "must be >= 1");
    if (!finite_nonnegative(p.nic_bandwidth)) reject(what, "nic_bandwidth", "must be >= 0");
    if (!(p.oversubscription >= 1) || !std::isfinite(p.oversubscription)) reject(what, "oversubscription", "must be >= 1");
    if (p.max_nodes >= 0 && (p.min_nodes < 0 || p.min_nodes > p.nodes || p.max_nodes < p.nodes)) {
      reject(what, "autoscale", "needs min_nodes <= nodes <= max_nodes");
    }
    if (!finite_nonnegative(p.idle_timeout_s) || !finite_nonnegative(p.scale_up_cooldown_s)) {
      reject(what, "autoscale", "idle timeout and cool-down must be >= 0");
    }
    if (p.autoscaled()) make_autoscaler(p);  // throws for an unknown auto-scaler or bad knobs
    validate(p.reclaim);
    validate(p.failure);
    if (p.market.enabled()) {
      if (p.capacity != Capacity::spot) reject(what, "spot_trace", "needs spot capacity");
      if (!(p.market.max_price_per_hour >= 0)) reject(what, "spot_trace.max_price", "must be >= 0");
      if (!finite_nonnegative(p.market.start_s)) reject(what, "spot_trace.start", "must be >= 0");
    }
    if (std::isnan(p.on_demand_price_per_node_hour) || std::isinf(p.on_demand_price_per_node_hour)) {
      reject(what, "on-demand price", "must be finite");
    }
  }
  validate_fallbacks(spec.pools);
  if (!(spec.wan_bandwidth > 0) || !std::isfinite(spec.wan_bandwidth)) reject("the cluster", "wan_bandwidth", "must be > 0");
  for (const JobSpec& j : spec.jobs) {
    const std::string what = "job '" + j.name + "'";
    if (!finite_nonnegative(j.submit_s)) reject(what, "submit", "must be >= 0");
    if (j.gpus < 1) reject(what, "gpus", "must be >= 1");
    if (j.iterations < 1) reject(what, "iterations", "must be >= 1");
    if (!(j.iteration_s > 0) || !std::isfinite(j.iteration_s)) reject(what, "iteration_time", "must be > 0");
    if (!finite_nonnegative(j.gradient_bytes)) reject(what, "gradient_bytes", "must be >= 0");
    if (!finite_nonnegative(j.overlap_s) || j.overlap_s > j.iteration_s) reject(what, "overlap", "must be between 0 and the iteration time");
    if (!j.pool.empty() && !names.count(j.pool)) reject(what, "pool", "names no pool ('" + j.pool + "')");
    const CheckpointSpec& c = j.checkpoint;
    if (!finite_nonnegative(c.size_bytes) || !(c.write_bandwidth > 0) || !(c.read_bandwidth > 0)) {
      reject(what, "checkpoint", "needs a size >= 0 and bandwidths > 0");
    }
    if (c.policy == CheckpointPolicy::fixed && !(c.interval_s > 0)) reject(what, "checkpoint.interval", "must be > 0");
    if (c.policy == CheckpointPolicy::young_daly && !(c.size_bytes > 0)) {
      reject(what, "checkpoint.size", "must be > 0 for young-daly (the interval depends on the write time)");
    }
    if (!finite_nonnegative(c.warmup_s)) reject(what, "checkpoint.warmup", "must be >= 0");
    if (j.elastic() && !(j.min_gpus >= 1 && j.min_gpus <= j.gpus && j.gpus <= j.max_gpus)) {
      reject(what, "elastic", "needs 1 <= min_gpus <= gpus <= max_gpus");
    }
    if (!j.sizes.empty()) {
      if (!j.elastic()) reject(what, "sizes", "are for elastic jobs");
      bool has_min = false, has_gpus = false;
      for (std::size_t k = 0; k < j.sizes.size(); ++k) {
        const JobSpec::Size& z = j.sizes[k];
        if (z.gpus < j.min_gpus || z.gpus > j.max_gpus || (k > 0 && z.gpus <= j.sizes[k - 1].gpus)) {
          reject(what, "sizes", "must ascend between min_gpus and max_gpus");
        }
        if (!(z.iteration_s > 0) || !std::isfinite(z.iteration_s)) reject(what, "sizes", "need iteration times > 0");
        has_min = has_min || z.gpus == j.min_gpus;
        has_gpus = has_gpus || z.gpus == j.gpus;
      }
      if (!has_min || !has_gpus) reject(what, "sizes", "must include min_gpus and gpus");
    }
    if (!finite_nonnegative(j.resize_pause_s)) reject(what, "resize_pause", "must be >= 0");
  }
}

int max_gpus_for(const ClusterSpec& spec, const JobSpec& job) {
  const auto largest = [](const PoolSpec& p) { return p.gpus_per_node * std::max(p.nodes, p.max_nodes); };
  int total = 0;
  if (job.pool.empty()) {
    for (const PoolSpec& p : spec.pools) total += largest(p);
    return total;
  }
  std::string name = job.pool;
  for (std::size_t hops = 0; !name.empty() && hops < spec.pools.size(); ++hops) {
    const auto it = std::find_if(spec.pools.begin(), spec.pools.end(), [&](const PoolSpec& p) { return p.name == name; });
    if (it == spec.pools.end()) break;
    total += largest(*it);
    name = it->fallback;
  }
  return total;
}

JobSpec job_spec_from_trace(const TraceJob& t) {
  JobSpec j;
  j.name = t.id;
  j.submit_s = t.submit_s;
  j.gpus = t.gpus;
  j.iterations = std::max<std::int64_t>(1, std::llround(t.duration_s));
  j.iteration_s = t.duration_s / static_cast<double>(j.iterations);
  j.queue = t.queue;
  j.checkpoint.warmup_s = 0;
  return j;
}

}  // namespace dlsim::scheduler
