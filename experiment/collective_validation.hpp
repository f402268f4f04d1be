// `dlsim validate --collectives TABLE.csv [folder]`: dlsim's collective times against a measured
// table, such as ../shared/reference/kernels/collectives_vidur.csv (NCCL all_reduce and
// send_recv times versus size on several systems).
//
// The table has a header and the columns system, collective (all_reduce or send_recv),
// size_bytes, num_workers, devices_per_node and median_ms (others are ignored). Each measured
// series (system, collective, num_workers, devices_per_node) runs on the set-up of the system's
// scenario, <folder>/nccl-vidur-<system>.yaml (underscores as dashes; default folder
// scenarios/published), with cluster.nodes = num_workers / devices_per_node and the first
// devices_per_node accelerators of each node taking part (collective.ranks_per_node). Errors
// are (predicted - measured) / measured; the report gives, per series and per system, the mean
// absolute error at sizes >= 1 MiB and the median absolute error below, and whether the
// series' rows were used to fit a constant ("fit") or not ("held out").
#pragma once
#include <string>
#include <vector>

namespace dlsim::experiment {

struct CollectiveMeasurement {
  std::string system;
  std::string collective;  // as in the table: all_reduce, send_recv
  double bytes = 0;
  int workers = 0;
  int per_node = 0;
  double seconds = 0;      // median
};

// Throws ConfigError located at the file, line and column of a bad cell.
std::vector<CollectiveMeasurement> read_collective_table(const std::string& path);

struct CollectiveSeries {
  std::string system;
  std::string collective;
  int workers = 0;
  int per_node = 0;
  std::string scenario;         // the set-up's file
  std::vector<double> bytes, measured_s, predicted_s;
  std::vector<std::string> choice;  // algorithm/protocol per size
  std::vector<bool> fit;            // per row: used to fit a constant
};

struct CollectiveValidation {
  std::vector<CollectiveSeries> series;
  std::vector<std::string> skipped;  // series without a set-up, and why
};

CollectiveValidation validate_collectives(const std::vector<CollectiveMeasurement>& table, const std::string& folder);

// `format`: "text" or "markdown"; `rows`: every size, not only the summaries.
std::string format_collective_validation(const CollectiveValidation& report, const std::string& format, bool rows);

// The best line time = latency + bytes / bandwidth through measured points, least squares in
// relative error (each residual divided by its measured time), and its mean |relative error|:
// the floor below which no model affine in size gets on those points. Needs two distinct sizes;
// otherwise all fields are NaN.
struct AffineFit {
  double latency_s = 0;
  double bandwidth = 0;       // bytes/s (algorithm bandwidth: payload bytes over time)
  double mean_abs_error = 0;
};
AffineFit fit_affine(const std::vector<double>& bytes, const std::vector<double>& seconds);

// Which measured rows fit a constant of the model (see collective_validation.cpp); choice: the
// predicted "algorithm/protocol" of the row.
bool fit_row(const std::string& system, const std::string& collective, int workers, int per_node, double bytes,
             const std::string& choice);

}  // namespace dlsim::experiment
