// `dlsim validate [folder] [--fast] [--only PREFIX ...] [-j N] [--format text|markdown]
// [--csv FILE]`: runs the published scenarios of the folder (default scenarios/published) and
// prints, per published figure, dlsim's prediction and its error, then the mean absolute
// percentage error of the measurements and of the claims. Exit 1 when a figure differs by more
// than 15% and its check gives no explanation: a prediction that moved needs a look.
// `dlsim validate --kernels [--format ...]` prints the held-out kernel errors of the shipped
// kernel profiles instead (kernel_validation.hpp); `dlsim validate --collectives TABLE.csv
// [folder] [--rows]` compares collective times with a measured table (collective_validation.hpp).
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "experiment/atomic_file.hpp"
#include "experiment/collective_validation.hpp"
#include "experiment/config_error.hpp"
#include "experiment/kernel_validation.hpp"
#include "experiment/progress.hpp"
#include "experiment/validation.hpp"
#include "experiment/writers.hpp"

namespace dlsim::cli {

int validate_command(std::ostream& out, std::ostream& err, const ValidateFlags& flags) {
  if (flags.format != "text" && flags.format != "markdown") {
    throw experiment::ConfigError({"dlsim validate", 0, 0}, "", "--format must be text or markdown, not '" + flags.format + "'");
  }
  if (flags.kernels) {
    out << experiment::format_kernel_validation(flags.format);
    return 0;
  }
  if (!flags.collectives.empty()) {
    const auto table = experiment::read_collective_table(flags.collectives);
    const std::string folder = flags.folder.empty() ? "scenarios/published" : flags.folder;
    out << experiment::format_collective_validation(experiment::validate_collectives(table, folder), flags.format, flags.rows);
    return 0;
  }
  experiment::ValidateOptions options;
  options.fast_only = flags.fast;
  options.only = flags.only;
  options.threads = flags.threads;
  // Drawn only on a terminal; the total (scenario files) is known with the first report.
  std::optional<experiment::ProgressBar> bar;
  const bool draw = !flags.quiet && experiment::stderr_is_terminal();
  options.progress = [&](double done, double total) {
    if (!bar) bar.emplace(err, "scenarios", total, draw);
    bar->update(done);
  };
  const std::string folder = flags.folder.empty() ? "scenarios/published" : flags.folder;
  const experiment::ValidationReport report = experiment::validate_folder(folder, options);
  if (bar) bar->finish();
  // With --csv - the CSV is standard output and the report goes to standard error.
  std::ostream& shown = experiment::is_standard_output(flags.csv) ? err : out;
  if (!flags.csv.empty()) experiment::write_table_csv(flags.csv, experiment::validation_table(report));
  shown << (flags.format == "markdown" ? experiment::format_validation_markdown(report) : experiment::format_validation_text(report));
  if (!flags.csv.empty() && !experiment::is_standard_output(flags.csv)) out << "wrote " << flags.csv << "\n";
  if (!report.unexplained.empty()) {
    err << "error: " << report.unexplained.size() << " published figure" << (report.unexplained.size() == 1 ? "" : "s")
        << (report.unexplained.size() == 1 ? " differs" : " differ") << " by more than 15% without an explanation in its check:\n";
    for (const std::string& u : report.unexplained) err << "  " << u << "\n";
    return 1;
  }
  return 0;
}

}  // namespace dlsim::cli
