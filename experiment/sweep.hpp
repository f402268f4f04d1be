// Sweep: one scenario run over a grid of values of any keys (the cartesian product), each point
// a variant loaded with those values as --set overrides, so every variant passes the same
// validation as a single run. Variants run on a pool of threads, each on its own engines and
// random streams: the results are the same, bit for bit, whatever the thread count.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "experiment/results.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::experiment {

// One key of the grid and the values it takes, each a YAML value as --set takes it ("8", "fp16",
// "[1, 2]").
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

// Where the base scenario comes from: a file (path), or text (name stands for it in messages,
// base_dir resolves its relative paths). `set_arguments` apply to every variant, before the grid.
struct SweepSource {
  std::string path;
  std::string text;
  std::string name = "<scenario>";
  std::string base_dir = ".";
  std::vector<std::string> set_arguments;
};

struct SweepResults {
  std::vector<std::vector<std::string>> variants;  // each variant's grid overrides ("key=value")
  // Every row of every variant's results table, in variant order, after a "variant" column and
  // one text column per axis (named by its key) holding the variant's value.
  Table table;
  std::string kind;                                // of the scenario: training, collective, cluster
};

// The grid's variants in order, the first axis varying slowest. Throws ConfigError for an axis
// without a key or without values, or a key given twice.
std::vector<std::vector<std::string>> grid_variants(const std::vector<SweepAxis>& axes);

// Loads every variant first (a bad one throws its ConfigError, prefixed by the variant, before
// anything runs), then runs them on `threads` threads (0: one per core). Throws sim::Interrupted
// once `interrupt` is set, or the error of the first failing variant.
SweepResults run_sweep(const SweepSource& source, const std::vector<SweepAxis>& axes, int threads = 0,
                       const sim::InterruptFlag* interrupt = nullptr);

}  // namespace dlsim::experiment
