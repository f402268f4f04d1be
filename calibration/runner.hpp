// The calibration runner: which cases to measure (grids), and from repeats to statistics.
// A case's statistic is the median of its repeats; its spread is (p90 - p10) / median (p10 and
// p90 by linear interpolation between order statistics). A case whose spread exceeds
// max_spread is unstable: the runner measures it again (fresh inputs), up to `remeasures`
// times, and keeps the attempt with the smallest spread. A kernel family (per precision) is
// unstable when more than half of its cases stay unstable; then the run is refused
// (UnstableError) and no profile may be written from it.
#pragma once
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/backend.hpp"

namespace dlsim::calibration {

enum class Grid { full, quick, held_out };

// Cases spanning launch-bound to compute/bandwidth-bound sizes. `quick` (CI) is a subset of
// `full` with smaller tops; `held_out` uses sizes in neither, for --validate. The CPU grid;
// gpu_case_grid() is sized for a data-centre GPU (every GEMM precision, larger sizes, host copies);
// cases a device cannot run come back unmeasured with a note (Backend::supports).
std::vector<KernelCase> case_grid(Grid grid);
std::vector<KernelCase> gpu_case_grid(Grid grid);

struct CaseStats {
  KernelCase kernel;
  double median_s = 0;
  double p10_s = 0, p90_s = 0;
  double spread = 0;          // (p90 - p10) / median
  bool ok = false;            // measured, output checked
  bool stable = false;        // spread <= max_spread
  int attempts = 0;
  std::string note;
};

// Median, p10, p90 and spread of `times` (not empty, all > 0).
CaseStats summarize(const Measurement& m);

struct RunnerOptions {
  RunOptions run;
  double max_spread = 0.5;
  int remeasures = 3;
};

class UnstableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Measures `cases`, re-measures unstable ones, throws UnstableError when a family stays unstable.
std::vector<CaseStats> run_cases(Backend& backend, const std::vector<KernelCase>& cases, const RunnerOptions& options,
                                 const Progress& progress);
// Throws UnstableError naming each family with more than half its cases unstable.
void check_stability(const std::vector<CaseStats>& stats, double max_spread);

// "gemm fp32", "copy", ...: a family, with the precision where a family has several.
std::string family_label(const KernelCase& c);
// "256x256x256", "1048576", "64x1024", "-".
std::string shape_label(const KernelCase& c);

// A summary table: one row per family label (cases, smallest and largest size, best rate,
// worst spread).
void print_summary(std::ostream& out, const std::vector<CaseStats>& stats);

}  // namespace dlsim::calibration
