// Validation against published results: a scenario's `validation:` section names the published
// figures its set-up reproduces (a source, and checks: a published value, range or bound in a
// unit, and which result of the run it compares with). validate_folder() runs every such
// scenario of a folder and reports, per check, dlsim's prediction and its error; the overall
// error is the mean absolute percentage error, kept apart for measurements (measured.yaml) and
// for the survey papers' claims (published-claims.md).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/table.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::experiment {

struct Scenario;

// What a check compares with: one number of the run's results table.
struct ValidationMetric {
  enum class Kind { column, ratio, change, saving, megatron_tflops_per_gpu };
  Kind kind = Kind::column;
  std::string column;                                  // column (and megatron: "" )
  std::vector<std::pair<std::string, std::string>> where;  // column = value (text as written)
  std::vector<ValidationMetric> operands;              // ratio / change / saving: A, B
  std::string key_path;                                // "validation.checks[2].predicted" (messages)
  SourceLocation where_written;                        // file:line:column of the metric
};

// The published figure: a value, a range [low, high] or a one-sided bound, in SI units (the
// unit's factor applied), and the unit it was published in (for printing).
struct PublishedValue {
  enum class Kind { value, range, at_least, at_most };
  Kind kind = Kind::value;
  double low = 0, high = 0;      // value: low == high; at_least: low; at_most: high
  std::string text;              // as written: "938 images/s", "[10, 15] %"
  std::string unit;              // "images/s", "%", "minutes"
  double factor = 1;             // SI value = written value x factor
  std::string dimension;         // "samples/s", "s", "B/s", "FLOP/s", "USD", "USD/h", "1"
};

struct ValidationCheck {
  std::string id;                // measured.yaml record id, or a claim's label
  std::string quantity;
  PublishedValue published;
  ValidationMetric predicted;
  std::string explanation;       // why dlsim differs (shown when |error| > the threshold)
  std::string key_path;          // "validation.checks[2]"
  SourceLocation where_written;
};

struct ValidationSpec {
  std::string source;            // short citation
  std::string group;             // the body of work it belongs to (summaries); default: source
  std::string reference;         // "measured" or "claims"
  bool fast = false;             // part of the test suite's quick subset
  // (validation.requires: files outside the repository the scenario reads, relative to its
  // folder. validate_folder reads them from the YAML before loading, since loading fails
  // without them; here the key is only checked.)
  std::vector<ValidationCheck> checks;
  bool empty() const { return checks.empty(); }
};

// One compared figure.
struct ValidationRow {
  std::string scenario;          // file name, relative to the folder
  std::string source, group, reference, id, quantity;
  PublishedValue published;
  double predicted = 0;          // SI
  double error = 0;              // signed relative error; 0 inside a range or bound
  std::string explanation;       // the check's, shown when |error| > kExplainAbove
};

// Errors larger than this (relative) need an explanation (issue 9: 15%).
constexpr double kExplainAbove = 0.15;

struct ValidationReport {
  std::vector<ValidationRow> rows;   // in file-name order, then check order
  int scenarios = 0;
  // Mean absolute percentage error (as a fraction) over the rows of each reference; NaN when
  // there are none.
  double mape_measured = 0, mape_claims = 0;
  int measured_points = 0, claim_points = 0;
  // Rows beyond kExplainAbove whose check has no explanation ("file: id").
  std::vector<std::string> unexplained;
  // Scenarios not run because a file of validation.requires is absent ("file (needs path)").
  std::vector<std::string> skipped;
};

struct ValidateOptions {
  bool fast_only = false;                 // only scenarios with validation.fast
  std::vector<std::string> only;          // file-name prefixes to keep (empty: all)
  int threads = 0;                        // scenarios run at once (0: one per core)
  const sim::InterruptFlag* interrupt = nullptr;
  // Called as scenarios finish (done, total), one call at a time, from the pool's threads.
  std::function<void(double, double)> progress;
};

// Runs the scenario files (*.yaml) of `folder` that have a validation section, sorted by name,
// after the options' filters, each on a thread of a pool (results do not depend on the count),
// and compares. Throws ConfigError for a bad scenario or check (e.g. a `where` that selects no
// row), std::runtime_error for runs that fail.
ValidationReport validate_folder(const std::string& folder, const ValidateOptions& options = {});

// The checks of one scenario against its results table (the stacked table of its variants when
// it has sweep.grid/zip/random). `file` names it in the rows.
std::vector<ValidationRow> compare_checks(const Scenario& scenario, const Table& table, const std::string& file);

// Evaluates one metric on a results table (SI). Throws ConfigError naming the check's key path.
double evaluate_metric(const ValidationMetric& metric, const Scenario& scenario, const Table& table);

// Relative error of `predicted` against a published value, range or bound (0 inside).
double validation_error(const PublishedValue& published, double predicted);

// Megatron-LM's FLOPs per iteration with full recomputation (Narayanan et al. SC21, eq. 3):
// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double megatron_flops_per_iteration(double batch, double sequence, double layers, double hidden, double vocab);

// The report as a table: plain text (fixed-width, for terminals) or Markdown (docs/validation.md).
std::string format_validation_text(const ValidationReport& report);
std::string format_validation_markdown(const ValidationReport& report);
// The report as a results table (the CSV `dlsim validate --csv` writes).
Table validation_table(const ValidationReport& report);
// Formats a published value or a prediction in the published unit ("938 images/s", "[10, 15] %").
std::string format_published(const PublishedValue& published);
std::string format_in_unit(double value_si, const PublishedValue& published);

}  // namespace dlsim::experiment
