// Held-out kernel errors of the shipped profiles (kernel_validation.hpp).
#include "experiment/kernel_validation.hpp"

#include <cstdio>
#include <sstream>

#include "experiment/builtin_profiles.hpp"
#include "experiment/profile_yaml.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kMedianGoal = 0.10;
constexpr double kP90Goal = 0.25;

bool is_goal_row(const std::string& label) {
  const auto ends = [&](const std::string& tail) {
    return label.size() >= tail.size() && label.compare(label.size() - tail.size(), tail.size(), tail) == 0;
  };
  return (label.rfind("gemm ", 0) == 0 && ends(", m >= 64")) || label == "memory (every class), > 1 MB";
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

std::string signed_percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * v);
  return buf;
}

}  // namespace

std::string format_kernel_validation(const std::string& format) {
  const bool markdown = format == "markdown";
  std::ostringstream out;
  if (markdown) {
    out << "| device | measured on | kernels | cases | median abs. error | p90 abs. error | median error | goal |\n";
    out << "|---|---|---|---|---|---|---|---|\n";
  } else {
    char line[200];
    std::snprintf(line, sizeof line, "%-11s %-38s %7s %10s %10s %10s  %s\n", "device", "kernels", "cases", "median |e|",
                  "p90 |e|", "median e", "goal");
    out << line;
  }
  for (const EmbeddedProfile& e : embedded_profiles()) {
    const ProfileDocument doc = read_profile_text(e.text, std::string("calibration/profiles/") + e.file);
    const std::string device = doc.calibration.spec.name;
    const std::string tables = doc.calibration.profile.kernels.source;
    // The tables the profile was fitted on: its source after " of ", up to any "; " note (e.g.
    // where its layout factors came from, which the held-out rows do not depend on).
    std::string from = tables.substr(tables.find(" of ") == std::string::npos ? 0 : tables.find(" of ") + 4);
    from = from.substr(0, from.find("; "));
    for (const auto& row : doc.held_out) {
      std::string goal;
      if (is_goal_row(row.label)) {
        goal = row.median_abs <= kMedianGoal && row.p90_abs <= kP90Goal ? "met" : "not met";
      }
      if (markdown) {
        out << "| " << device << " | " << from << " | " << row.label << " | " << row.cases << " | " << percent(row.median_abs)
            << " | " << percent(row.p90_abs) << " | " << signed_percent(row.median_signed) << " | " << goal << " |\n";
      } else {
        char line[200];
        std::snprintf(line, sizeof line, "%-11s %-38s %7d %10s %10s %10s  %s\n", device.c_str(), row.label.c_str(), row.cases,
                      percent(row.median_abs).c_str(), percent(row.p90_abs).c_str(), signed_percent(row.median_signed).c_str(),
                      goal.c_str());
        out << line;
      }
    }
  }
  if (!markdown) {
    out << "held out: each source model (vidur) or application (DeepBench; five folds where one holds most rows) predicted\n"
           "by a fit without it; goal: median |e| <= 10% and p90 <= 25% for GEMMs with m >= 64 and memory-bound kernels > 1 MB\n";
  }
  return out.str();
}

}  // namespace dlsim::experiment
