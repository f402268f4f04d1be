// From scenario YAML to a validated Scenario: the only way in. Every failure is a ConfigError
// naming where and why; nothing is written and nothing is run before loading succeeds.
#pragma once
#include <string>
#include <vector>

#include "experiment/scenario.hpp"

namespace dlsim::experiment {

struct LoadOptions {
  // Points of a training scenario that cannot run (Scenario::infeasible) are kept as such even
  // when every point is one: a variant of `dlsim sweep` becomes rows with its reasons. Without
  // it, a scenario none of whose points can run is an error (the first point's).
  bool keep_infeasible = false;
};

// `set_arguments` are "key.path=value" overrides (the CLI's --set), applied in order on top
// of the file before validation; values are YAML ("8", "[1, 2, 4]", "aws/p3.8xlarge").
Scenario load_scenario(const std::string& path, const std::vector<std::string>& set_arguments = {},
                       const LoadOptions& options = {});
// The same from text; `name` stands for the file in messages, `base_dir` resolves relative
// paths inside the scenario (the catalog file).
Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const std::vector<std::string>& set_arguments = {},
                            const std::string& base_dir = ".", const LoadOptions& options = {});

}  // namespace dlsim::experiment
