// The planner's answer as a table of every candidate and as printed text (planner.hpp).
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <ostream>

#include "experiment/planner.hpp"
#include "experiment/units.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string number(double v, const char* format) { return format_number(v, format); }

}  // namespace

Table plan_table(const PlanResults& results) {
  Table t;
  using Type = TableColumn::Type;
  const auto text = [&](std::string name, std::string description, auto get) {
    TableColumn c{std::move(name), "", std::move(description), Type::text, {}, {}};
    for (const PlanCandidate& k : results.candidates) c.texts.push_back(get(k));
    t.columns.push_back(std::move(c));
  };
  const auto num = [&](std::string name, std::string unit, std::string description, Type type, auto get) {
    TableColumn c{std::move(name), std::move(unit), std::move(description), type, {}, {}};
    for (const PlanCandidate& k : results.candidates) c.numbers.push_back(get(k));
    t.columns.push_back(std::move(c));
  };
  // Simulated figures, NaN for candidates never simulated.
  const auto simulated = [](const PlanCandidate& k, double v) { return k.simulated ? v : kNaN; };
  text("instance", "catalog instance type", [](const PlanCandidate& k) { return k.instance; });
  num("nodes", "", "nodes (instances)", Type::integer, [](const PlanCandidate& k) { return double(k.nodes); });
  num("accelerators", "", "accelerators", Type::integer, [](const PlanCandidate& k) { return double(k.accelerators); });
  text("plan", "parallel plan (as workload.plan describes it)", [](const PlanCandidate& k) { return k.label; });
  text("status", "feasible, no-fit (memory), pruned (lower bound beaten), deadline or budget",
       [](const PlanCandidate& k) { return k.status; });
  text("reason", "why the candidate was rejected or pruned (empty when feasible)", [](const PlanCandidate& k) { return k.reason; });
  num("pareto", "", "1 on the Pareto front of time to train against cost", Type::integer,
      [](const PlanCandidate& k) { return k.pareto ? 1.0 : 0.0; });
  num("best", "", "1 for the best point of the objective", Type::integer, [](const PlanCandidate& k) { return k.best ? 1.0 : 0.0; });
  num("memory_per_accelerator", "B", "peak memory of one accelerator (the fullest pipeline rank)", Type::real,
      [](const PlanCandidate& k) { return k.memory_bytes; });
  num("iteration_time_bound", "s", "lower bound on the iteration time: the busiest pipeline rank's compute kernels (or model FLOPs at the accelerators' peak where that is more)", Type::real,
      [](const PlanCandidate& k) { return k.bound_iteration_s; });
  num("time_to_train_bound", "s", "lower bound on the time to train", Type::real, [](const PlanCandidate& k) { return k.bound_time_to_train_s; });
  num("cost_to_train_bound", "USD", "lower bound on the cost to train (on-demand)", Type::real, [](const PlanCandidate& k) { return k.bound_cost; });
  num("iteration_time", "s", "simulated iteration time", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.iteration_s); });
  num("samples_per_second", "samples/s", "simulated throughput", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.samples_per_s); });
  num("tokens_per_second", "tokens/s", "simulated throughput in tokens", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.tokens_per_s); });
  num("mfu", "1", "model FLOPs utilization", Type::real, [&](const PlanCandidate& k) { return simulated(k, k.row.mfu); });
  num("cost_per_hour", "USD/h", "on-demand price of the nodes", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.cost_per_hour); });
  num("time_to_train", "s", "simulated time to train", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.time_to_train_s); });
  num("cost_to_train", "USD", "billed cost to train (on-demand, per second, one-minute minimum)", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.cost_to_train); });
  return t;
}

void print_plan(std::ostream& out, const std::vector<Scenario>& scenarios, const PlanResults& r) {
  const Scenario& s = scenarios.front();
  const PlanSearchConfig& search = *s.search;
  const PlanCounts& n = r.counts;
  out << "plan: " << s.workload.model_name;
  if (s.workload.sequence_length > 0) out << ", " << s.workload.sequence_length << " tokens per sample";
  out << ", " << models::to_string(s.workload.precision) << ", global batch " << s.workload.batch << ", objective "
      << (search.objective == PlanObjective::cheapest ? "cheapest" : "fastest");
  if (search.deadline_s > 0) out << ", deadline " << format_duration(search.deadline_s);
  if (search.budget_usd > 0) out << ", budget " << number(search.budget_usd, "%.0f") << " USD";
  out << "; " << scenarios.size() << " instance type" << (scenarios.size() == 1 ? "" : "s") << ", on-demand prices\n";
  out << "candidates: " << n.enumerated << " enumerated, " << n.no_fit << " do not fit in memory, " << n.pruned
      << " pruned by the lower bound, " << n.simulated << " simulated; " << n.deadline << " miss the deadline, " << n.budget
      << " over budget, " << n.feasible << " feasible\n";
  out << "Pareto front (time to train against cost; * best):\n";
  const std::vector<std::string> header{"", "instance", "nodes", "accel", "plan", "samples/s", "MFU", "memory/accel", "time to train", "cost USD"};
  std::vector<std::vector<std::string>> cells{header};
  for (std::size_t f : r.front) {
    const PlanCandidate& c = r.candidates[f];
    cells.push_back({c.best ? "*" : "", c.instance, std::to_string(c.nodes), std::to_string(c.accelerators), c.label,
                     number(c.row.samples_per_s, "%.1f"), number(100.0 * c.row.mfu, "%.1f%%"), format_size(c.memory_bytes),
                     format_duration(c.row.time_to_train_s), number(c.row.cost_to_train, "%.0f")});
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool left = i == 1 || i == 4;
      out << (i ? "  " : "") << (left ? std::left : std::right) << std::setw(static_cast<int>(width[i])) << row[i];
    }
    out << std::right << "\n";
  }
  if (r.best) {
    const PlanCandidate& b = r.candidates[*r.best];
    out << (search.objective == PlanObjective::cheapest ? "cheapest" : "fastest") << ": " << b.instance << " x " << b.nodes << " ("
        << b.accelerators << " accelerators), plan " << b.label << ": " << format_duration(b.row.time_to_train_s) << ", "
        << number(b.row.cost_to_train, "%.0f") << " USD, " << number(100.0 * b.row.mfu, "%.1f%%") << " MFU\n";
  }
}

}  // namespace dlsim::experiment
