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
  text("capacity", "on-demand (failure-free) or spot (run in the cluster model: reclamations, checkpoints, restarts)",
       [](const PlanCandidate& k) { return scheduler::to_string(k.capacity); });
  text("status", "feasible, no-fit (memory), pruned (lower bound beaten), deadline, budget or unfinished (spot runs not done by their horizon)",
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
  num("cost_to_train_bound", "USD", "lower bound on the cost to train (failure-free, at its capacity's price)", Type::real,
      [](const PlanCandidate& k) { return k.bound_cost; });
  num("iteration_time", "s", "simulated iteration time", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.iteration_s); });
  num("samples_per_second", "samples/s", "simulated throughput", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.samples_per_s); });
  num("tokens_per_second", "tokens/s", "simulated throughput in tokens", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.tokens_per_s); });
  num("mfu", "1", "model FLOPs utilization", Type::real, [&](const PlanCandidate& k) { return simulated(k, k.row.mfu); });
  num("cost_per_hour", "USD/h", "price of the nodes on its capacity", Type::real,
      [](const PlanCandidate& k) { return k.price_per_hour * k.nodes; });
  num("time_to_train", "s", "simulated time to train (spot: the mean of its cluster-model runs; NaN when one did not finish)", Type::real,
      [&](const PlanCandidate& k) { return simulated(k, k.row.time_to_train_s); });
  num("cost_to_train", "USD", "billed cost to train (per second, one-minute minimum; spot: the mean of its runs, checkpoint storage included)",
      Type::real, [&](const PlanCandidate& k) { return simulated(k, k.row.cost_to_train); });
  // Spot candidates' spread over their runs (NaN for on-demand: failure-free, one outcome).
  const auto spot = [](const PlanCandidate& k, double v) {
    return k.simulated && k.capacity == scheduler::Capacity::spot && k.spot.unfinished == 0 ? v : kNaN;
  };
  num("time_to_train_p10", "s", "spot: 10th percentile of the runs' time to train (nearest rank)", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.time_p10_s); });
  num("time_to_train_p90", "s", "spot: 90th percentile of the runs' time to train (nearest rank)", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.time_p90_s); });
  num("cost_to_train_p10", "USD", "spot: 10th percentile of the runs' cost (nearest rank)", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.cost_p10); });
  num("cost_to_train_p90", "USD", "spot: 90th percentile of the runs' cost (nearest rank)", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.cost_p90); });
  num("spot_runs", "", "spot: cluster-model runs (seeds seed, seed + 1, ...)", Type::integer,
      [](const PlanCandidate& k) { return k.simulated && k.capacity == scheduler::Capacity::spot ? double(k.spot.runs) : 0.0; });
  num("reclaims", "", "spot: times the job lost a node, mean per run", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.reclaims_mean); });
  num("checkpoint_interval", "s", "spot: running time between checkpoints (Young/Daly's unless plan.spot.checkpoint says)", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.checkpoint_interval_s); });
  num("checkpoint_size", "B", "spot: bytes a checkpoint writes", Type::real,
      [&](const PlanCandidate& k) { return spot(k, k.spot.checkpoint_bytes); });
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
  const bool spot = search.spot.has_value();
  out << "; " << scenarios.size() << " instance type" << (scenarios.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < search.capacities.size(); ++i) {
    out << (i == 0 ? ", " : " and ") << scheduler::to_string(search.capacities[i]);
  }
  if (spot) {
    out << " (spot: " << search.spot->replications << " cluster-model run" << (search.spot->replications == 1 ? "" : "s")
        << " each, reclaimed at a mean of " << format_duration(search.spot->reclaim.mean()) << " per node)";
  }
  out << "\n";
  out << "candidates: " << n.enumerated << " enumerated, " << n.no_fit << " do not fit in memory, " << n.pruned
      << " pruned by the lower bound, " << n.simulated << " simulated";
  if (search.capacities.size() > 1) out << " (" << n.memoized << " reusing another capacity's replay)";
  if (spot) out << " with " << n.spot_runs << " spot runs";
  out << "; " << n.deadline << " miss the deadline, " << n.budget << " over budget, ";
  if (spot) out << n.unfinished << " unfinished, ";
  out << n.feasible << " feasible\n";
  out << "Pareto front (time to train against cost" << (spot ? ", spot: mean [p10-p90] of its runs" : "") << "; * best):\n";
  std::vector<std::string> header{"", "instance", "nodes", "accel", "plan", "samples/s", "MFU", "memory/accel", "time to train", "cost USD"};
  if (spot) header.insert(header.begin() + 4, "capacity");
  std::vector<std::vector<std::string>> cells{header};
  for (std::size_t f : r.front) {
    const PlanCandidate& c = r.candidates[f];
    const bool on_spot = c.capacity == scheduler::Capacity::spot;
    std::string time = format_duration(c.row.time_to_train_s), cost = number(c.row.cost_to_train, "%.0f");
    if (on_spot) {
      time += " [" + format_duration(c.spot.time_p10_s) + "-" + format_duration(c.spot.time_p90_s) + "]";
      cost += " [" + number(c.spot.cost_p10, "%.0f") + "-" + number(c.spot.cost_p90, "%.0f") + "]";
    }
    std::vector<std::string> row{c.best ? "*" : "", c.instance, std::to_string(c.nodes), std::to_string(c.accelerators), c.label,
                                 number(c.row.samples_per_s, "%.1f"), number(100.0 * c.row.mfu, "%.1f%%"), format_size(c.memory_bytes),
                                 time, cost};
    if (spot) row.insert(row.begin() + 4, scheduler::to_string(c.capacity));
    cells.push_back(std::move(row));
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool left = i == 1 || i == 4 || (spot && i == 5);
      out << (i ? "  " : "") << (left ? std::left : std::right) << std::setw(static_cast<int>(width[i])) << row[i];
    }
    out << std::right << "\n";
  }
  if (r.best) {
    const PlanCandidate& b = r.candidates[*r.best];
    out << (search.objective == PlanObjective::cheapest ? "cheapest" : "fastest") << ": " << b.instance << " x " << b.nodes << " ("
        << b.accelerators << " accelerators" << (b.capacity == scheduler::Capacity::spot ? ", spot" : "") << "), plan " << b.label
        << ": " << format_duration(b.row.time_to_train_s) << ", " << number(b.row.cost_to_train, "%.0f") << " USD, "
        << number(100.0 * b.row.mfu, "%.1f%%") << " MFU";
    if (b.capacity == scheduler::Capacity::spot) {
      out << "; " << number(b.spot.reclaims_mean, "%.1f") << " reclamations per run, ";
      if (std::isfinite(b.spot.checkpoint_interval_s)) {
        out << "a " << format_size(b.spot.checkpoint_bytes) << " checkpoint every " << format_duration(b.spot.checkpoint_interval_s);
      } else {
        out << "no checkpoints";
      }
    }
    out << "\n";
  }
}

}  // namespace dlsim::experiment
