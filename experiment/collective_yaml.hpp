// The scenario's `collective` section (a collective sweep instead of a training workload).
#pragma once

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

CollectiveConfig read_collective(MapReader& r);
// Checks what depends on the node counts: every group has a node, and the algorithm suits the
// group sizes. Throws ConfigError located at the collective section.
void check_collective(const Scenario& s, const YAML::Node& root, const Source& source);

}  // namespace dlsim::experiment
