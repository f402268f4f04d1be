#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <string>
#include <utility>
#include <vector>

#include "experiment/units.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {
namespace {

std::string number(double v, const char* format) { return format_number(v, format); }

// At least `decimals` decimals and at least three significant digits: an LLM's 7.23 samples/s or a
// CPU's 0.0412 must not print as "7" or "0" (no exponent: values below 1e-6 print as 0).
std::string significant(double v, int decimals) {
  if (std::isnan(v)) return "-";
  if (v != 0 && std::isfinite(v)) {
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    decimals = std::clamp(2 - magnitude, decimals, 6);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

// nccl-tests style: one line per size (and group), times in microseconds, bandwidths in GB/s.
void print_collective_table(std::ostream& out, const Results& results) {
  out << "   nodes  ranks  group  operation       algorithm           protocol  channels          size       time(us)"
         "  algbw(GB/s)  busbw(GB/s)  slowdown  routing  route cost  shared link flows\n";
  for (const CollectiveRow& r : results.collective_rows) {
    char line[320];
    std::snprintf(line, sizeof line, "%8d %6d %6d  %-14s  %-18s  %-8s %9d %13.0f %14.2f %12.3f %12.3f %9.2f  %-7s  %10.2f  %17d\n",
                  r.nodes, r.ranks, r.group, r.operation.c_str(), r.algorithm.c_str(), r.protocol.c_str(), r.channels, r.bytes,
                  r.time_s * 1e6, r.algbw / 1e9, r.busbw / 1e9, r.time_s / r.time_alone_s, r.routing.c_str(),
                  r.time_alone_s / r.time_balanced_s, r.shared_link_routes);
    out << line;
  }
}

// Cluster scenarios: one line per variant.
void print_cluster_table(std::ostream& out, const Results& results) {
  const std::vector<std::string> header{"variant", "policy", "done", "makespan", "mean JCT", "p99 JCT", "queueing",
                                        "GPU util", "preempt", "lost GPU-h", "comm GPU-h", "cost USD", "idle USD", "job USD",
                                        "cost/first", "time/first"};
  std::vector<std::vector<std::string>> cells;
  for (const ClusterRow& r : results.cluster_rows) {
    const auto duration = [](double s) { return std::isnan(s) ? std::string("-") : format_duration(s); };
    cells.push_back({r.variant, r.policy, std::to_string(r.done) + "/" + std::to_string(r.jobs), duration(r.makespan_s),
                     duration(r.mean_jct_s), duration(r.p99_jct_s), duration(r.mean_queueing_s),
                     number(100.0 * r.gpu_utilization, "%.1f%%"), std::to_string(r.preemptions),
                     number(r.lost_gpu_hours, "%.1f"), number(r.comm_gpu_hours, "%.1f"), number(r.total_cost, "%.0f"),
                     number(r.idle_cost, "%.0f"), number(r.jobs_cost, "%.0f"),
                     number(r.cost_vs_first, "%.3f"), number(r.makespan_vs_first, "%.3f")});
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : std::vector<std::vector<std::string>>{header}) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "  " : "") << (c == 0 ? std::left : std::right) << std::setw(int(width[c])) << row[c];
    out << std::right << "\n";
  }
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "  " : "") << (c == 0 ? std::left : std::right) << std::setw(int(width[c])) << row[c];
    out << std::right << "\n";
  }
}

void print_table(std::ostream& out, const Results& results) {
  if (!results.cluster_rows.empty()) {
    print_cluster_table(out, results);
    print_cost_breakdown(out, results);
    return;
  }
  if (!results.collective_rows.empty()) {
    print_collective_table(out, results);
    return;
  }
  // tokens/s for language models (more than one token per sample); scaling efficiency only when
  // there are sizes to compare.
  bool tokens = false;
  std::vector<int> sizes;
  for (const ResultRow& r : results.rows) {
    tokens = tokens || r.tokens_per_s > r.samples_per_s;
    if (std::find(sizes.begin(), sizes.end(), r.nodes) == sizes.end()) sizes.push_back(r.nodes);
  }
  const bool efficiency = sizes.size() > 1;
  std::vector<std::string> header{"nodes", "accel", "plan", "samples/s"};
  if (tokens) header.push_back("tokens/s");
  for (const char* h : {"p10-p90", "per accel", "TFLOP/s/accel", "MFU", "HFU", "memory/accel", "epoch time", "USD/hour", "USD/epoch"}) {
    header.push_back(h);
  }
  if (efficiency) header.push_back("efficiency");
  header.push_back("exposed comm");
  std::vector<std::vector<std::string>> cells;
  const ResultRow* last_ok = nullptr;
  std::vector<const ResultRow*> infeasible;
  for (const ResultRow& r : results.rows) {
    if (r.status != "ok") {
      cells.push_back({std::to_string(r.nodes), std::to_string(r.accelerators), r.plan.empty() ? "-" : r.plan, r.status});
      cells.back().resize(header.size(), "-");
      infeasible.push_back(&r);
      continue;
    }
    last_ok = &r;
    // The kernel model's error band (iteration_time_p10/p90) as throughputs: slow end first.
    const std::string band = r.iteration_p90_s > 0 ? significant(r.global_batch / r.iteration_p90_s, 0) + "-" +
                                                         significant(r.global_batch / r.iteration_p10_s, 0)
                                                   : "-";
    std::vector<std::string> row{std::to_string(r.nodes), std::to_string(r.accelerators), r.plan, significant(r.samples_per_s, 0)};
    if (tokens) row.push_back(significant(r.tokens_per_s, 0));
    for (std::string cell : {band, significant(r.samples_per_s_per_accelerator, 1), significant(r.tflops_per_accelerator, 1),
                             number(100.0 * r.mfu, "%.1f%%"), number(100.0 * r.hfu, "%.1f%%"), format_size(r.memory_bytes),
                             std::isnan(r.time_per_epoch_s) ? std::string("-") : format_duration(r.time_per_epoch_s),
                             number(r.cost_per_hour, "%.2f"), number(r.cost_per_epoch, "%.2f")}) {
      row.push_back(std::move(cell));
    }
    if (efficiency) row.push_back(number(100.0 * r.scaling_efficiency, "%.1f%%"));
    row.push_back(number(100.0 * r.exposed_comm_s / r.iteration_s, "%.1f%%"));
    cells.push_back(std::move(row));
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
  for (const ResultRow* r : infeasible) {
    out << r->nodes << " nodes, " << (r->plan.empty() ? "plan " + std::to_string(r->plan_index) : r->plan) << ": " << r->reason << "\n";
  }
  if (last_ok != nullptr) {
    const ResultRow& last = *last_ok;
    const double it = last.iteration_s;
    const auto part = [&](const char* name, double v) {
      return v > 0.0005 * it ? std::string(", ") + name + " " + number(100.0 * v / it, "%.1f%%") : std::string();
    };
    out << "iteration on " << last.nodes << " nodes: " << format_duration(it) << " = compute "
        << number(100.0 * (last.compute_s - last.recompute_s) / it, "%.1f%%") << part("recompute", last.recompute_s)
        << part("tensor-parallel comm", last.tensor_comm_s) << part("expert all-to-all", last.expert_comm_s)
        << part("context-parallel ring", last.context_comm_s)
        << part("pipeline sends", last.pipeline_comm_s) << part("pipeline bubble", last.pipeline_bubble_s)
        << (last.pipeline_imbalance_s > 0.0005 * it
                ? " (" + number(100.0 * last.pipeline_imbalance_s / it, "%.1f%%") + " of it stage imbalance)"
                : std::string())
        << part("exposed data-parallel comm", last.exposed_comm_s)
        << part("framework overhead", last.framework_overhead_s) << part("gradient compression", last.compression_blocking_s)
        << part("optimizer", last.optimizer_s) << part("waiting for input", last.input_stall_s);
    if (last.input_s > 0) {
      out << "; the loader takes " << format_duration(last.input_s) << " per iteration"
          << (last.input_stall_s > 0 ? " (input-bound)" : " (hidden behind the step)");
    }
    if (tokens) out << "; " << significant(last.tokens_per_s / last.accelerators, 0) << " tokens/s per accelerator";
    if (!last.bound.empty()) out << "; bound by " << last.bound;
    out << "\n";
    const double kernels = last.gemm_s + last.memory_kernels_s + last.conv_s + last.attention_s;
    if (kernels > 0) {
      std::string text;
      for (const auto& [name, v] : {std::pair<const char*, double>{"GEMM", last.gemm_s}, {"convolution", last.conv_s},
                                     {"attention", last.attention_s}, {"memory-bound", last.memory_kernels_s}}) {
        if (v > 0.0005 * kernels) text += (text.empty() ? "" : ", ") + std::string(name) + " " + number(100.0 * v / kernels, "%.0f%%");
      }
      out << "compute by kernel: " << text << "; iteration p10-p90 " << format_duration(last.iteration_p10_s) << " - "
          << format_duration(last.iteration_p90_s) << " (held-out kernel errors)\n";
    }
    out << "time to train on " << last.nodes << " nodes: " << format_duration(last.time_to_train_s) << " ("
        << last.iterations << " iterations";
    if (last.startup_s > 0) out << ", start-up " << format_duration(last.startup_s);
    if (last.evaluations > 0) out << ", " << last.evaluations << " evaluation" << (last.evaluations == 1 ? "" : "s") << " of " << format_duration(last.evaluation_s);
    if (last.first_epoch_iteration_s > last.iteration_s) out << ", the first epoch's from storage at " << format_duration(last.first_epoch_iteration_s);
    if (last.transfer_s > 0) out << ", the dataset's transfer " << format_duration(last.transfer_s);
    if (last.preparation_s > 0) out << ", its preparation " << format_duration(last.preparation_s);
    out << "), billed cost " << number(last.cost_to_train, "%.2f") << " USD";
    std::string parts;
    for (const auto& [name, usd] : {std::pair<const char*, double>{"dataset storage", last.storage_cost},
                                    {"transfer", last.transfer_cost}, {"preparation", last.preparation_cost}}) {
      if (usd > 0) parts += (parts.empty() ? "" : ", ") + std::string(name) + " " + number(usd, "%.2f") + " USD";
    }
    if (!parts.empty()) out << " (" << parts << ")";
    out << "\n";
  }
}

}  // namespace dlsim::experiment
