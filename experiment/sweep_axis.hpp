// The axes of a sweep: keys and the values they take, as --set overrides take them. Plain
// structs, read from YAML in sweep_spec.cpp (a scenario's sweep section) or given by callers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "experiment/config_error.hpp"

namespace dlsim::experiment {

// One key and the values it takes, each a YAML value as --set takes it ("8", "fp16", "[1, 2]").
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

// A key drawn at random: uniform or log-uniform over [lo, hi] (a unit may follow the number),
// a uniform integer in [lo, hi], or one of a list.
struct RandomAxis {
  enum class Kind { uniform, log_uniform, integer, choice };
  std::string key;
  Kind kind = Kind::uniform;
  double lo = 0, hi = 0;
  std::string unit;                  // appended to drawn numbers ("GB/s": "12.5GB/s"), "" for none
  std::vector<std::string> choices;  // Kind::choice: YAML values
};

struct VariantSweep {
  std::vector<SweepAxis> grid;
  std::vector<SweepAxis> zip;        // all the same length
  std::vector<RandomAxis> random;
  int samples = 0;                   // random samples (> 0 when random keys are given)
  std::uint64_t random_seed = 0;     // default: the scenario's seed
  SourceLocation where;              // the scenario's `sweep` key (for errors about the sweep as a whole)
  bool empty() const { return grid.empty() && zip.empty() && random.empty(); }
};

// The variants of a grid in order, the first axis varying slowest. Throws ConfigError for an axis
// without a key or without values, or a key given twice.
std::vector<std::vector<std::string>> grid_variants(const std::vector<SweepAxis>& axes);

}  // namespace dlsim::experiment
