// Reads a scenario's `validation:` section (validation.hpp; scenarios/published/README.md):
//
//   validation:
//     source: "Goyal et al. 2017, Table 1"
//     reference: measured | claims
//     fast: true                      # optional: in the test suite's quick subset
//     checks:
//       - id: goyal17-epoch-8gpu
//         quantity: time per epoch, 8 GPUs
//         published: 16 minutes        # or "[10, 15] %", ">= 90 %", "<= 50 %" (quoted)
//         predicted: {column: time_per_epoch, where: {nodes: 1}}
//                    # or {ratio|change|saving: [A, B]}, {megatron_tflops_per_gpu: {where: ...}}
//         explanation: "why dlsim differs"
//
// Every error is a ConfigError at the key (file:line:column, key path).
#pragma once
#include <yaml-cpp/yaml.h>

#include "experiment/validation.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

ValidationSpec read_validation(MapReader& validation);

// A published unit: its factor to SI and the dimension it measures; nullopt for an unknown unit.
struct PublishedUnit {
  double factor = 1;
  std::string dimension;
};
std::optional<PublishedUnit> published_unit(const std::string& unit);
std::string published_units_list();

}  // namespace dlsim::experiment
