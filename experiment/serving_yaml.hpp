// The scenario's `serving` section (serving_config.hpp shows it written out).
#pragma once
#include <string>

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// `base_dir` resolves a trace's relative path. Checks the replicas against the cluster (each on
// one node, all of them on its nodes) and the model against the tensor degree.
ServingConfig read_serving(MapReader& r, const ClusterConfig& cluster, const std::string& base_dir);

}  // namespace dlsim::experiment
