// The top-level plan: section of a plan scenario (`dlsim plan`, experiment/planner.hpp):
//   plan: {objective: cheapest|fastest, deadline: 30d, budget: 2e6 (USD), max_accelerators: 4096,
//          instances: [aws/p5.48xlarge, ...], nodes: [16, 32, 64] | {from: 8, to: 512} (doubling)}
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
PlanSearchConfig read_plan_search(MapReader& plan, const models::Catalog& catalog, const ClusterConfig& cluster);

}  // namespace dlsim::experiment
