// The top-level plan: section of a plan scenario (`dlsim plan`, experiment/planner.hpp):
//   plan: {objective: cheapest|fastest, deadline: 30d, budget: 2e6 (USD), max_accelerators: 4096,
//          instances: [aws/p5.48xlarge, ...], nodes: [16, 32, 64] | {from: 8, to: 512} (doubling),
//          capacity: [on-demand, spot],
//          spot: {discount: 0.6, reclaim: {mean: 24h} | {fit: probe log, zone, gpu, gpus},
//                 notice: 30s, provisioning: 5min,
//                 replications: 8, checkpoint: {policy: young-daly, size, write_bandwidth, ...}}}
// (spot: the per-node reclamation hazard as in cluster pools; the checkpoint as in cluster jobs;
// discount defaults to the catalog's spot price of each instance type.)
// The workload is a training workload whose batch is global and which has no workload.plan (the
// search chooses it); a plan scenario has no sweep.
#pragma once
#include <string>

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"
#include "models/catalog.hpp"

namespace dlsim::experiment {

// Reads the mapping; instance names are checked against `catalog`, node counts against the
// cluster's. Throws ConfigError.
// `base_dir` resolves plan.spot.reclaim.fit (a probe log).
PlanSearchConfig read_plan_search(MapReader& plan, const models::Catalog& catalog, const ClusterConfig& cluster,
                                  const std::string& base_dir);

}  // namespace dlsim::experiment
