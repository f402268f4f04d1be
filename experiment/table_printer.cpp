#include <cmath>
#include <cstdio>
#include <iomanip>
#include <string>
#include <vector>

#include "experiment/units.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {
namespace {

std::string number(double v, const char* format) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

void print_table(std::ostream& out, const Results& results) {
  const std::vector<std::string> header{"nodes", "accel", "samples/s", "per accel", "epoch time",
                                        "USD/hour", "USD/epoch", "efficiency", "exposed comm"};
  std::vector<std::vector<std::string>> cells;
  for (const ResultRow& r : results.rows) {
    cells.push_back({std::to_string(r.nodes), std::to_string(r.accelerators), number(r.samples_per_s, "%.0f"),
                     number(r.samples_per_s_per_accelerator, "%.1f"),
                     std::isnan(r.time_per_epoch_s) ? "-" : format_duration(r.time_per_epoch_s),
                     number(r.cost_per_hour, "%.2f"), number(r.cost_per_epoch, "%.2f"),
                     number(100.0 * r.scaling_efficiency, "%.1f%%"),
                     number(100.0 * r.exposed_comm_s / r.iteration_s, "%.1f%%")});
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  const auto line = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "  " : "") << std::setw(int(width[c])) << row[c];
    out << "\n";
  };
  line(header);
  for (const auto& row : cells) line(row);
  if (!results.rows.empty()) {
    const ResultRow& last = results.rows.back();
    out << "time to train on " << last.nodes << " nodes: " << format_duration(last.time_to_train_s) << " ("
        << last.iterations << " iterations), billed cost " << number(last.cost_to_train, "%.2f") << " USD\n";
  }
}

}  // namespace dlsim::experiment
