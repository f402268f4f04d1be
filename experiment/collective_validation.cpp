// The measured-collectives comparison of collective_validation.hpp: read the table, run each
// series on its system's scenario, summarise the errors.
#include "experiment/collective_validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
const char* const kColumns[] = {"system", "collective", "size_bytes", "num_workers", "devices_per_node", "median_ms"};

struct Cell {
  std::string text;
  int column = 0;  // 1-based character position
};

std::vector<Cell> split(const std::string& line) {
  std::vector<Cell> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    cells.push_back({line.substr(start, comma == std::string::npos ? std::string::npos : comma - start), int(start) + 1});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (Cell& c : cells) {
    while (!c.text.empty() && (c.text.back() == '\r' || c.text.back() == ' ')) c.text.pop_back();
  }
  return cells;
}

double number(const Cell& c, const std::string& path, int line, const std::string& column, double min) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(c.text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != c.text.size() || c.text.empty() || !std::isfinite(v) || v < min) {
    throw ConfigError({path, line, c.column}, column,
                      "expected a number >= " + std::to_string(static_cast<long long>(min)) + ", got '" + c.text + "'");
  }
  return v;
}

std::string dashed(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::string sizes_list(const std::vector<double>& sizes) {
  std::ostringstream out;
  out.precision(17);
  out << "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i] << "B";
  out << "]";
  return out.str();
}

double error_of(const CollectiveSeries& s, std::size_t i) { return (s.predicted_s[i] - s.measured_s[i]) / s.measured_s[i]; }

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// |errors| of a set of series, split at 1 MiB, for rows that are (not) fit.
struct Errors {
  std::vector<double> large, small;
  void add(const CollectiveSeries& s, bool fit) {
    for (std::size_t i = 0; i < s.bytes.size(); ++i) {
      if (s.fit[i] != fit) continue;
      (s.bytes[i] >= kMiB ? large : small).push_back(std::fabs(error_of(s, i)));
    }
  }
};

std::string percent(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

}  // namespace

AffineFit fit_affine(const std::vector<double>& bytes, const std::vector<double>& seconds) {
  // Minimises sum ((a + b x_i) / t_i - 1)^2: the normal equations of the weighted problem, with
  // u_i = 1 / t_i and v_i = x_i / t_i, are [Suu Suv; Suv Svv] [a; b] = [Su; Sv].
  double suu = 0, suv = 0, svv = 0, su = 0, sv = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const double u = 1 / seconds[i], v = bytes[i] / seconds[i];
    suu += u * u;
    suv += u * v;
    svv += v * v;
    su += u;
    sv += v;
  }
  const double det = suu * svv - suv * suv;
  AffineFit f;
  if (bytes.size() < 2 || !(std::fabs(det) > 1e-12 * suu * svv)) return {NAN, NAN, NAN};
  f.latency_s = (su * svv - sv * suv) / det;
  const double per_byte = (suu * sv - suv * su) / det;
  f.bandwidth = 1 / per_byte;
  double sum = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) sum += std::fabs((f.latency_s + per_byte * bytes[i]) / seconds[i] - 1);
  f.mean_abs_error = sum / static_cast<double>(bytes.size());
  return f;
}

// Rows that fit a constant; every other row is held out:
// - network/nccl_tuning.cpp's launch overhead per GPU generation: the DGX systems' single-node
//   all-reduce rows below 1 MiB (a100_dgx: Ampere, h100_dgx: Hopper); its send/recv overhead:
//   their single-node send/recv rows below 1 MiB;
// - nccl-vidur-a100-dgx.yaml's socket_bandwidth (the unknown 2-node network): the all-reduce
//   across 2 nodes with 1 GPU each, at >= 1 MiB;
// - nccl_tuning.cpp's LL128 bandwidth and latency, and Simple's per-step latency, on Ampere
//   NVLink: the a100_dgx all-reduce on 8 GPUs of one node at >= 1 MiB, where NCCL runs
//   ring/LL128 or ring/Simple (`choice`, as predicted);
// - nccl_tuning.cpp's NVLS chunk cost and latency on Hopper: the h100_dgx all-reduce on 8 GPUs of
//   one node at >= 1 MiB, where NCCL runs NVLS.
bool fit_row(const std::string& system, const std::string& collective, int workers, int per_node, double bytes,
             const std::string& choice) {
  const bool dgx = system == "a100_dgx" || system == "h100_dgx";
  // The launch and send/recv overheads: small collectives inside one DGX node.
  const bool small_in_one_dgx = dgx && workers == per_node && bytes < kMiB;
  if (collective == "send_recv") return small_in_one_dgx;
  if (collective != "all_reduce") return false;
  if (small_in_one_dgx) return true;
  const bool ring_of_8 = system == "a100_dgx" && workers == 8 && per_node == 8 && bytes >= kMiB;
  if (ring_of_8 && (choice == "ring/ll128" || choice == "ring/simple")) return true;
  const bool nvls_of_8 = system == "h100_dgx" && workers == 8 && per_node == 8 && bytes >= kMiB;
  if (nvls_of_8 && choice == "nvls/simple") return true;
  return system == "a100_dgx" && workers == 2 && per_node == 1 && bytes >= kMiB;
}

std::vector<CollectiveMeasurement> read_collective_table(const std::string& path) {
  std::ifstream in(path);
  if (!std::filesystem::is_regular_file(path) || !in) {
    throw ConfigError({path, 0, 0}, "", "cannot read the measured table (missing, unreadable or not a file)");
  }
  std::string line;
  if (!std::getline(in, line)) throw ConfigError({path, 1, 1}, "", "the table is empty: expected a header line");
  const std::vector<Cell> header = split(line);
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at[header[i].text] = i;
  for (const char* column : kColumns) {
    if (at.count(column) == 0) {
      throw ConfigError({path, 1, 1}, column, std::string("missing column '") + column + "' in the header");
    }
  }
  std::vector<CollectiveMeasurement> rows;
  for (int number_of_line = 2; std::getline(in, line); ++number_of_line) {
    if (line.empty() || line == "\r") continue;
    const std::vector<Cell> cells = split(line);
    if (cells.size() < header.size()) {
      throw ConfigError({path, number_of_line, int(line.size()) + 1}, "",
                        "expected " + std::to_string(header.size()) + " cells, found " + std::to_string(cells.size()));
    }
    const auto cell = [&](const char* column) { return cells[at[column]]; };
    CollectiveMeasurement m;
    m.system = cell("system").text;
    m.collective = cell("collective").text;
    if (m.collective != "all_reduce" && m.collective != "send_recv") {
      throw ConfigError({path, number_of_line, cell("collective").column}, "collective",
                        "expected all_reduce or send_recv, got '" + m.collective + "'");
    }
    m.bytes = number(cell("size_bytes"), path, number_of_line, "size_bytes", 1);
    m.workers = static_cast<int>(number(cell("num_workers"), path, number_of_line, "num_workers", 1));
    m.per_node = static_cast<int>(number(cell("devices_per_node"), path, number_of_line, "devices_per_node", 1));
    if (m.workers % m.per_node != 0) {
      throw ConfigError({path, number_of_line, cell("devices_per_node").column}, "devices_per_node",
                        "must divide num_workers (" + std::to_string(m.workers) + ")");
    }
    m.seconds = number(cell("median_ms"), path, number_of_line, "median_ms", 0) * 1e-3;
    if (!(m.seconds > 0)) throw ConfigError({path, number_of_line, cell("median_ms").column}, "median_ms", "must be > 0");
    rows.push_back(std::move(m));
  }
  return rows;
}

CollectiveValidation validate_collectives(const std::vector<CollectiveMeasurement>& table, const std::string& folder) {
  std::map<std::tuple<std::string, std::string, int, int>, std::vector<const CollectiveMeasurement*>> groups;
  for (const CollectiveMeasurement& m : table) groups[{m.system, m.collective, m.workers, m.per_node}].push_back(&m);
  CollectiveValidation report;
  for (auto& [key, rows] : groups) {
    const auto& [system, collective, workers, per_node] = key;
    std::sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->bytes < b->bytes; });
    CollectiveSeries s;
    s.system = system;
    s.collective = collective;
    s.workers = workers;
    s.per_node = per_node;
    s.scenario = (std::filesystem::path(folder) / ("nccl-vidur-" + dashed(system) + ".yaml")).string();
    const std::string name = system + " " + collective + " " + std::to_string(workers) + " ranks, " + std::to_string(per_node) + " per node";
    if (!std::filesystem::is_regular_file(s.scenario)) {
      report.skipped.push_back(name + ": no set-up (" + s.scenario + ")");
      continue;
    }
    for (const auto* r : rows) {
      s.bytes.push_back(r->bytes);
      s.measured_s.push_back(r->seconds);
    }
    // A scenario runs at most 200 sizes: run the series in slices.
    for (std::size_t first = 0; first < s.bytes.size(); first += 200) {
      const std::vector<double> slice(s.bytes.begin() + first, s.bytes.begin() + std::min(s.bytes.size(), first + 200));
      const Scenario scenario = load_scenario(
          s.scenario, {"cluster.nodes=" + std::to_string(workers / per_node), "collective.ranks_per_node=" + std::to_string(per_node),
                       "collective.operation=" + dashed(collective), "collective.sizes=" + sizes_list(slice)});
      for (const CollectiveRow& row : run_collectives(scenario)) {
        s.predicted_s.push_back(row.time_s);
        s.choice.push_back(row.algorithm + "/" + row.protocol);
      }
    }
    for (std::size_t i = 0; i < s.bytes.size(); ++i) {
      s.fit.push_back(fit_row(system, collective, workers, per_node, s.bytes[i], i < s.choice.size() ? s.choice[i] : ""));
    }
    report.series.push_back(std::move(s));
  }
  return report;
}

std::string format_collective_validation(const CollectiveValidation& report, const std::string& format, bool rows) {
  const bool md = format == "markdown";
  const std::string sep = md ? " | " : "  ";
  std::ostringstream out;
  const auto line = [&](const std::vector<std::string>& cells) {
    if (md) out << "| ";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, md ? "%s" : (i == 0 ? "%-34s" : "%12s"), cells[i].c_str());
      out << (i ? sep : "") << buf;
    }
    out << (md ? " |" : "") << "\n";
  };
  const std::vector<std::string> head{"series", "rows>=1MiB", "mean|err|", "rows<1MiB", "median|err|"};
  for (bool fit : {false, true}) {
    out << (md ? "\n### " : "\n") << (fit ? "rows that fit a constant" : "held-out rows") << "\n\n";
    line(head);
    if (md) out << "|---|---:|---:|---:|---:|\n";
    std::map<std::string, Errors> by_system;
    std::map<std::string, Errors> overall;
    for (const CollectiveSeries& s : report.series) {
      Errors e;
      e.add(s, fit);
      if (e.large.empty() && e.small.empty()) continue;
      line({s.system + " " + s.collective + " " + std::to_string(s.workers) + "/" + std::to_string(s.per_node), std::to_string(e.large.size()),
            percent(mean(e.large)), std::to_string(e.small.size()), percent(median(e.small))});
      by_system[s.system + " " + s.collective].add(s, fit);
      overall[s.collective].add(s, fit);
    }
    for (const auto& [name, e] : by_system) {
      line({"system " + name, std::to_string(e.large.size()), percent(mean(e.large)), std::to_string(e.small.size()),
            percent(median(e.small))});
    }
    for (const auto& [name, e] : overall) {
      line({"all " + name, std::to_string(e.large.size()), percent(mean(e.large)), std::to_string(e.small.size()),
            percent(median(e.small))});
    }
  }
  // The floor of a model affine in size: each all-reduce series' own best latency + bytes /
  // bandwidth through its rows >= 1 MiB (fit_affine), whatever the model predicts. Its bandwidth
  // as bus bandwidth (nccl-tests' 2 (n - 1) / n) shows how the measured rate depends on the ranks.
  out << (md ? "\n### " : "\n") << "each all-reduce series' own best latency + size / bandwidth, rows >= 1 MiB\n\n";
  line({"series", "rows>=1MiB", "latency", "busbw", "mean|err|"});
  if (md) out << "|---|---:|---:|---:|---:|\n";
  std::vector<double> floor_errors;
  for (const CollectiveSeries& s : report.series) {
    if (s.collective != "all_reduce") continue;
    std::vector<double> bytes, seconds;
    for (std::size_t i = 0; i < s.bytes.size(); ++i) {
      if (s.bytes[i] < kMiB) continue;
      bytes.push_back(s.bytes[i]);
      seconds.push_back(s.measured_s[i]);
    }
    const AffineFit f = fit_affine(bytes, seconds);
    if (std::isnan(f.mean_abs_error)) continue;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      floor_errors.push_back(std::fabs((f.latency_s + bytes[i] / f.bandwidth) / seconds[i] - 1));
    }
    char latency[32], busbw[32];
    std::snprintf(latency, sizeof latency, "%.0f us", 1e6 * f.latency_s);
    std::snprintf(busbw, sizeof busbw, "%.0f GB/s", 1e-9 * f.bandwidth * 2.0 * (s.workers - 1) / s.workers);
    line({s.system + " " + s.collective + " " + std::to_string(s.workers) + "/" + std::to_string(s.per_node), std::to_string(bytes.size()),
          latency, busbw, percent(f.mean_abs_error)});
  }
  line({"all all_reduce", std::to_string(floor_errors.size()), "", "", percent(mean(floor_errors))});
  out << "\n";
  // What the fit rows say, pooled per system, operation and node count (one node or several):
  // the median residual, which a fitted latency (the launch overhead) brings to about 0; a
  // fitted bandwidth (the 2-node socket rate) shows as the small mean |error| above instead.
  std::map<std::string, std::vector<double>> residuals;
  for (const CollectiveSeries& s : report.series) {
    const std::string name = s.system + " " + s.collective + (s.workers == s.per_node ? " (one node)" : " (several nodes)");
    for (std::size_t i = 0; i < s.bytes.size(); ++i) {
      if (s.fit[i]) residuals[name].push_back(s.measured_s[i] - s.predicted_s[i]);
    }
  }
  for (const auto& [name, r] : residuals) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "fit rows of %s: median(measured - predicted) = %+.1f us over %zu rows\n", name.c_str(),
                  1e6 * median(r), r.size());
    out << buf;
  }
  out << "\n(series: system collective ranks/ranks-per-node; errors (predicted - measured) / measured; goal for NCCL "
         "all-reduce: mean |err| <= 5% at >= 1 MiB, median |err| <= 15% below)\n";
  if (rows) {
    out << "\nsystem  collective  ranks/per-node  size_bytes  measured_us  predicted_us  error  choice  fit\n";
    for (const CollectiveSeries& s : report.series) {
      for (std::size_t i = 0; i < s.bytes.size(); ++i) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s  %s  %d/%d  %.0f  %.1f  %.1f  %+.1f%%  %s  %s\n", s.system.c_str(), s.collective.c_str(),
                      s.workers, s.per_node, s.bytes[i], s.measured_s[i] * 1e6, s.predicted_s[i] * 1e6, 100 * error_of(s, i),
                      s.choice[i].c_str(), s.fit[i] ? "fit" : "held-out");
        out << buf;
      }
    }
  }
  for (const std::string& skipped : report.skipped) out << "skipped: " << skipped << "\n";
  return out.str();
}

}  // namespace dlsim::experiment
