// The dlsim commands, each returning its exit code. They print to `out`; errors propagate as
// exceptions for main() to report.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace dlsim::cli {

struct ScenarioOptions {
  std::string scenario;
  std::vector<std::string> set_arguments;
  std::string output;   // overrides output.results
  std::string csv;      // overrides output.csv
  bool quiet = false;
  std::string what;     // catalog: devices, instances, models, or empty for all
};

int run_command(std::ostream& out, const ScenarioOptions& options);
int check_command(std::ostream& out, const ScenarioOptions& options);
// Runs a collective scenario, or without a file the built-in all-reduce sweep.
int collective_command(std::ostream& out, const ScenarioOptions& options);
int catalog_command(std::ostream& out, const std::string& what);
int version_command(std::ostream& out);

struct SweepFlags {
  int threads = 0;      // -j: local threads (0: one per core)
  bool resume = false;  // --resume: run only the variants the journal lacks
};
// sweep_command.cpp; argc/argv go to MPI_Init when launched by mpirun.
int sweep_command(std::ostream& out, std::ostream& err, const ScenarioOptions& options, const SweepFlags& flags, int& argc,
                  char**& argv);
// plan_command.cpp: `dlsim plan`, the planner on a scenario with a plan: section, on `threads`
// threads (0: one per core); the front printed, every candidate in output.results / output.csv.
int plan_command(std::ostream& out, const ScenarioOptions& options, int threads);
struct ValidateFlags {
  std::string folder;              // default scenarios/published
  bool fast = false;               // --fast: only scenarios marked validation.fast
  std::vector<std::string> only;   // --only PREFIX: file-name prefixes (repeatable)
  int threads = 0;                 // -j
  std::string format = "text";     // --format text|markdown
  std::string csv;                 // --csv FILE: the report as CSV
  bool quiet = false;              // no progress line
  bool kernels = false;            // --kernels: the shipped kernel profiles' held-out errors instead
  std::string collectives;         // --collectives TABLE.csv: measured collective times instead
  bool rows = false;               // --rows: with --collectives, every size too
};
// validate_command.cpp; exit 1 when a figure beyond 15% has no explanation.
int validate_command(std::ostream& out, std::ostream& err, const ValidateFlags& flags);
struct KernelFlags {
  std::string input;       // --input TABLE.csv: predict every row of a measured table
  std::string output;      // --output OUT.csv: the table with predicted_ms
  std::string device;      // --device CATALOG-NAME
  std::string gpu;         // --gpu LABEL: a table's label, e.g. A100
  std::string gemm;        // --gemm MxNxK: one GEMM
  std::string precision;   // --precision (default fp16)
  std::string layout;      // --layout nt|nn|tn (default nt)
  std::string batch;       // --batch N (default 1)
  std::string memory;      // --memory CLASS: one memory-bound kernel
  std::string bytes;       // --bytes N, with --memory
};
// kernel_command.cpp: `dlsim kernel`, one kernel or a whole table (experiment/kernel_*predict.hpp).
int kernel_command(std::ostream& out, const KernelFlags& flags);
// `dlsim plot results.h5 [--out DIR]`: runs `python3 -m dlsim.plot_command` with these arguments
// (every plot of the file as PNG) and returns its exit code; 1 when Python cannot be started.
int plot_command(const std::vector<std::string>& arguments, std::ostream& err);

}  // namespace dlsim::cli
