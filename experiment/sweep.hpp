// Sweep: one scenario run over a grid of values of any keys (the cartesian product), each point
// a variant loaded with those values as --set overrides, so every variant passes the same
// validation as a single run. Variants run on a pool of threads, each on its own engines and
// random streams: the results are the same, bit for bit, whatever the thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiment/results.hpp"
#include "experiment/sweep_axis.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::experiment {

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
  // Every row of every variant's results table, in variant order, after a "sweep_variant" column
  // and one text column per axis (named by its key) holding the variant's value.
  Table table;
  std::string kind;                                // of the scenario: training, collective, cluster
};

// Loads every variant (the source with the variant's overrides; the scenario's own sweep.grid,
// zip and random are set aside, a variant being one run). A bad one throws its ConfigError,
// its message ending "[in sweep variant i (key=value, ...)]", before anything runs.
// On `threads` threads (0: one per core); the error reported is the first bad variant's by index.
std::vector<Scenario> load_variants(const SweepSource& source, const std::vector<std::vector<std::string>>& variants,
                                    int threads = 0);
// The same validation as load_variants, each variant dropped once loaded: `dlsim check` of a
// sweep of up to kMaxSweepVariants in memory that does not grow with the variant count. The
// first bad variant by index throws; none after it is loaded.
void check_variants(const SweepSource& source, const std::vector<std::vector<std::string>>& variants, int threads = 0);
// One variant (index: for messages).
Scenario load_variant(const SweepSource& source, const std::vector<std::string>& overrides, std::size_t index);

// Runs the variants `todo` (indices into `scenarios`) on `threads` threads (0: one per core),
// calling `finished(index, results)` as each ends, one call at a time (under a lock), in the
// order they end. Throws sim::Interrupted once `interrupt` is set, or the first error by index
// after the running variants end (no new variant starts after an error).
void run_variants(const std::vector<Scenario>& scenarios, const std::vector<std::size_t>& todo, int threads,
                  const sim::InterruptFlag* interrupt, const std::function<void(std::size_t, Results&&)>& finished);

// The variants' main tables stacked in variant order: a "sweep_variant" column, one text column
// per swept key (the keys of the first variant's overrides; "set:<key>" when a result column has
// that name) holding the variant's value, then the result columns. Throws std::runtime_error when the variants' columns differ.
Table stack_variants(const std::vector<std::vector<std::string>>& variants, const std::vector<std::size_t>& indices,
                     const std::vector<const Table*>& tables);

// Calls task(k) once for every k in [0, count) on `threads` threads (0: one per core). With
// `stop_on_error`, no thread starts a task after one has thrown. Rethrows the error of the lowest
// k that failed, so that which error is reported does not depend on the thread count.
void for_each_on_threads(std::size_t count, int threads, bool stop_on_error, const std::function<void(std::size_t)>& task);

// A sweep in memory: load, run on threads, stack. `variants` from grid_variants() or expand().
SweepResults run_sweep_variants(const SweepSource& source, const std::vector<std::vector<std::string>>& variants, int threads = 0,
                       const sim::InterruptFlag* interrupt = nullptr);
// The same over a grid of axes.
SweepResults run_sweep(const SweepSource& source, const std::vector<SweepAxis>& axes, int threads = 0,
                       const sim::InterruptFlag* interrupt = nullptr);

}  // namespace dlsim::experiment
