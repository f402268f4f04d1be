// The spot market and billing keys of cluster scenarios (scenarios/README.md, "Spot market and
// billing"): a pool's spot_trace (a price history file), reclaim: {fit: probe log}, fallback,
// region and zone; a checkpoint's storage region; the top-level billing map. Files are read here,
// once per scenario (TraceFiles caches them across variants); the scheduler gets plain data.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/yaml_reader.hpp"
#include "scheduler/cluster_spec.hpp"
#include "scheduler/spot_trace.hpp"

namespace dlsim::experiment {

struct TraceFiles {
  std::map<std::string, std::vector<scheduler::SpotPriceSeries>> prices;         // by full path
  std::map<std::string, std::vector<scheduler::InstanceLifetime>> lifetimes;     // by full path
};

// A pool's market keys: spot_trace (into p.market), fallback, region, zone. `instance` is the
// pool's catalog instance name ("aws/p3.8xlarge"), `on_demand_price` its catalog price (the
// default maximum price, as on AWS).
void read_pool_market(MapReader& pool, scheduler::PoolSpec& p, const std::string& instance, double on_demand_price,
                      const std::string& base_dir, TraceFiles& files);

// `key: {fit: probe log, zone, gpu, gpus}`: the exponential hazard fitted to the log's instance
// lifetimes (scheduler::fit_exponential_hazard, censoring included); nullopt without `fit`.
std::optional<scheduler::Hazard> read_fitted_hazard(MapReader& pool, const std::string& key, const std::string& base_dir,
                                                    TraceFiles& files);

// Each fallback names another pool and never leads back (errors at pools[i].fallback).
void check_fallbacks(const YAML::Node& pools, const Source& source, const std::vector<scheduler::PoolSpec>& specs);

// Checkpoints without storage_region: the region of the job's pool (the first pool for a job
// that names none).
void default_storage_regions(scheduler::ClusterSpec& spec);

// billing: {granularity, minimum, inter_zone_usd_per_gb, inter_region_usd_per_gb} into
// spec.billing and spec.egress.
void read_billing(MapReader& billing, scheduler::ClusterSpec& spec);

}  // namespace dlsim::experiment
