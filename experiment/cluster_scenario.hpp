// A cluster scenario, resolved: one ClusterSpec and simulation options per variant of its sweep
// (cluster_yaml.hpp reads it; run_cluster in cluster_run.cpp runs it).
#pragma once
#include <string>
#include <vector>

#include "scheduler/cluster_simulation.hpp"

namespace dlsim::experiment {

struct ClusterVariant {
  std::string label;                       // "scheduler.policy=las, pools[0].capacity=spot" or "base"
  scheduler::ClusterSpec spec;
  scheduler::SimulationOptions options;
};

struct ClusterScenario {
  std::vector<ClusterVariant> variants;
};

}  // namespace dlsim::experiment
