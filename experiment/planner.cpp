// The planner's search (planner.hpp): enumerate, reject by memory, bound, simulate in waves.
#include "experiment/planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <memory>
#include <mutex>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/sweep.hpp"
#include "experiment/units.hpp"
#include "models/memory_model.hpp"

namespace dlsim::experiment {
namespace {

// Billing and sim::Time round time up (nanoseconds, seconds); the bound keeps a hair of room
// below so that rounding never makes it exceed what is simulated.
constexpr double kBoundSlack = 1 - 1e-9;

// "1234567 USD"
std::string usd(double v) { return std::to_string(std::llround(v)) + " USD"; }

// "activations 52.1 GiB": the largest term of a rank's memory.
std::string dominant_term(const models::MemoryBreakdown& m) {
  const std::pair<const char*, double> terms[] = {{"weights", m.weights},
                                                  {"gradients", m.gradients},
                                                  {"optimizer state", m.optimizer_state},
                                                  {"activations", m.activations},
                                                  {"communication buffers", m.communication},
                                                  {"workspace", m.workspace}};
  const auto* top = std::max_element(std::begin(terms), std::end(terms), [](const auto& a, const auto& b) { return a.second < b.second; });
  return std::string(top->first) + " " + format_size(top->second);
}

// A candidate's objective and the other coordinate, for ordering and choosing the best.
std::pair<double, double> objective_of(PlanObjective o, double time_s, double cost) {
  return o == PlanObjective::cheapest ? std::pair{cost, time_s} : std::pair{time_s, cost};
}

// Does (time_a, cost_a) beat (time_b, cost_b): no worse on both, better on one?
bool dominates(double time_a, double cost_a, double time_b, double cost_b) {
  return (time_a < time_b && cost_a <= cost_b) || (time_a <= time_b && cost_a < cost_b);
}

// The candidates of one instance type and node count, each checked against memory and bounded.
std::vector<PlanCandidate> candidates_of(const Scenario& s, std::size_t index, int nodes, const PlanSearchConfig& search) {
  const WorkloadConfig& wl = s.workload;
  const int accelerators = nodes * s.cluster.instance.accelerators_per_node;
  const double memory = s.cluster.device.memory_bytes;
  const double iterations = wl.iterations > 0 ? static_cast<double>(wl.iterations) : std::ceil(wl.epochs * wl.dataset_samples / wl.batch);
  // 100% MFU: the model's training FLOPs of an iteration over every accelerator at its peak.
  const double bound_iteration_s =
      wl.model.training_flops_per_sample() * wl.batch / (accelerators * s.cluster.device.peak(wl.precision)) * kBoundSlack;
  const double bound_time = bound_iteration_s * iterations;
  const double bound_cost = s.cluster.instance.price_per_hour * nodes * bound_time / 3600.0;
  std::vector<PlanCandidate> out;
  for (const models::ParallelPlan& plan : enumerate_plans(s, nodes)) {
    PlanCandidate c;
    c.scenario = index;
    c.instance = s.cluster.instance_name;
    c.nodes = nodes;
    c.accelerators = accelerators;
    c.plan = plan;
    c.label = describe_plan(plan);
    c.bound_iteration_s = bound_iteration_s;
    c.bound_time_to_train_s = bound_time;
    c.bound_cost = bound_cost;
    const models::MemoryBreakdown mem = models::peak_memory(wl.model, plan);
    c.memory_bytes = mem.total();
    if (c.memory_bytes > memory) {
      c.status = "no-fit";
      c.reason = "needs " + format_size(c.memory_bytes) + " on pipeline rank " + std::to_string(mem.pipeline_rank) + ", " +
                 format_size(c.memory_bytes - memory) + " over the " + format_size(memory) + " of " + s.cluster.device.name +
                 "; largest term: " + dominant_term(mem);
    } else if (search.deadline_s > 0 && bound_time > search.deadline_s) {
      c.status = "deadline";
      c.reason = "needs at least " + format_duration(bound_time) + " even at 100% MFU; the deadline is " + format_duration(search.deadline_s);
    } else if (search.budget_usd > 0 && bound_cost > search.budget_usd) {
      c.status = "budget";
      c.reason = "costs at least " + usd(bound_cost) + " even at 100% MFU; the budget is " + usd(search.budget_usd);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The node topologies, built once per (instance, node count) when first needed, shared read-only.
class Topologies {
 public:
  explicit Topologies(std::size_t groups) : topologies_(groups), once_(groups) {}
  const network::Topology& get(std::size_t group, const Scenario& s, int nodes) {
    std::call_once(once_[group], [&] { topologies_[group] = std::make_unique<network::Topology>(s.topology_for(nodes)); });
    return *topologies_[group];
  }

 private:
  std::vector<std::unique_ptr<network::Topology>> topologies_;
  std::vector<std::once_flag> once_;
};

}  // namespace

std::vector<Scenario> load_plan_scenarios(const std::string& path, const std::vector<std::string>& set_arguments) {
  Scenario first = load_scenario(path, set_arguments);
  if (!first.search) {
    throw ConfigError({path, 0, 0}, "plan", "the scenario has no plan: section (objective, deadline, budget, instances, nodes): 'dlsim plan' searches one");
  }
  std::vector<Scenario> out;
  for (const std::string& name : first.search->instances) {
    if (name == first.cluster.instance_name) {
      out.push_back(first);
      continue;
    }
    std::vector<std::string> sets = set_arguments;
    sets.push_back("cluster.instance=" + name);
    out.push_back(load_scenario(path, sets));
  }
  return out;
}

PlanResults search_plans(const std::vector<Scenario>& scenarios, const PlanOptions& options, const sim::InterruptFlag* interrupt) {
  const PlanSearchConfig& search = *scenarios.front().search;
  PlanResults results;
  results.objective = search.objective;

  // 1. Enumerate, check memory, bound: per (instance, node count) group on the threads, joined in order.
  struct Group {
    std::size_t scenario;
    int nodes;
  };
  std::vector<Group> groups;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    for (int nodes : search.nodes) {
      const int accelerators = nodes * scenarios[i].cluster.instance.accelerators_per_node;
      if (search.max_accelerators > 0 && accelerators > search.max_accelerators) continue;
      groups.push_back({i, nodes});
    }
  }
  std::vector<std::vector<PlanCandidate>> per_group(groups.size());
  for_each_on_threads(groups.size(), options.threads, true, [&](std::size_t g) {
    sim::check_interrupt(interrupt);
    per_group[g] = candidates_of(scenarios[groups[g].scenario], groups[g].scenario, groups[g].nodes, search);
  });
  std::vector<std::size_t> group_of;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (PlanCandidate& c : per_group[g]) {
      results.candidates.push_back(std::move(c));
      group_of.push_back(g);
    }
  }
  std::vector<PlanCandidate>& cands = results.candidates;
  PlanCounts& counts = results.counts;
  counts.enumerated = cands.size();

  // 2. The open candidates by their objective's lower bound (ties: the other coordinate, then
  // enumeration order), so that good points are simulated first and prune the rest.
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < cands.size(); ++k) {
    if (cands[k].status.empty() || (options.exhaustive && (cands[k].status == "deadline" || cands[k].status == "budget"))) {
      cands[k].status.clear();
      order.push_back(k);
    }
  }
  const auto bound_key = [&](std::size_t k) {
    return std::tuple{objective_of(search.objective, cands[k].bound_time_to_train_s, cands[k].bound_cost), k};
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bound_key(a) < bound_key(b); });

  // 3. Waves of a fixed size (never the thread count: which candidates are pruned must not
  // depend on it): prune against the current front of feasible points, simulate the rest.
  Topologies topologies(groups.size());
  std::vector<std::size_t> front;  // feasible simulated points no other feasible one beats
  std::size_t next = 0;
  while (next < order.size()) {
    sim::check_interrupt(interrupt);
    std::vector<std::size_t> wave;
    while (next < order.size() && wave.size() < std::max<std::size_t>(1, options.wave)) {
      PlanCandidate& c = cands[order[next++]];
      const auto beaten_by = std::find_if(front.begin(), front.end(), [&](std::size_t f) {
        return dominates(cands[f].row.time_to_train_s, cands[f].row.cost_to_train, c.bound_time_to_train_s, c.bound_cost);
      });
      if (!options.exhaustive && beaten_by != front.end()) {
        const PlanCandidate& b = cands[*beaten_by];
        c.status = "pruned";
        c.reason = "at best " + format_duration(c.bound_time_to_train_s) + " and " + usd(c.bound_cost) +
                   " (100% MFU), beaten by " + b.instance + " x " + std::to_string(b.nodes) + " " + b.label + " (" +
                   format_duration(b.row.time_to_train_s) + ", " + usd(b.row.cost_to_train) + ")";
        continue;
      }
      wave.push_back(order[next - 1]);
    }
    for_each_on_threads(wave.size(), options.threads, true, [&](std::size_t w) {
      sim::check_interrupt(interrupt);
      PlanCandidate& c = cands[wave[w]];
      const Scenario& s = scenarios[c.scenario];
      models::TrainingConfig config;
      config.model = &s.workload.model;
      config.plan = c.plan;
      config.device = s.cluster.device;
      config.profile = s.cluster.profile;
      config.topology = &topologies.get(group_of[wave[w]], s, c.nodes);
      config.all_reduce = s.network.all_reduce;
      const models::IterationBreakdown step = models::replay_iteration(config, nullptr);
      c.row = training_row(s, c.nodes, c.plan, step);
      c.row.scaling_efficiency = std::numeric_limits<double>::quiet_NaN();
      c.simulated = true;
    });
    for (std::size_t k : wave) {
      PlanCandidate& c = cands[k];
      ++counts.simulated;
      if (c.row.iteration_s < c.bound_iteration_s) ++counts.bound_violations;
      if (search.deadline_s > 0 && c.row.time_to_train_s > search.deadline_s) {
        c.status = "deadline";
        c.reason = "takes " + format_duration(c.row.time_to_train_s) + "; the deadline is " + format_duration(search.deadline_s);
      } else if (search.budget_usd > 0 && c.row.cost_to_train > search.budget_usd) {
        c.status = "budget";
        c.reason = "costs " + usd(c.row.cost_to_train) + "; the budget is " + usd(search.budget_usd);
      } else {
        c.status = "feasible";
        const double t = c.row.time_to_train_s, cost = c.row.cost_to_train;
        const bool beaten = std::any_of(front.begin(), front.end(), [&](std::size_t f) {
          return dominates(cands[f].row.time_to_train_s, cands[f].row.cost_to_train, t, cost);
        });
        if (!beaten) {
          std::erase_if(front, [&](std::size_t f) { return dominates(t, cost, cands[f].row.time_to_train_s, cands[f].row.cost_to_train); });
          front.push_back(k);
        }
      }
    }
  }

  // 4. Counts, the exact front (ties kept) and the best point.
  for (std::size_t k = 0; k < cands.size(); ++k) {
    const std::string& st = cands[k].status;
    counts.no_fit += st == "no-fit";
    counts.pruned += st == "pruned";
    counts.deadline += st == "deadline";
    counts.budget += st == "budget";
    counts.feasible += st == "feasible";
  }
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return std::tuple{cands[a].row.time_to_train_s, cands[a].row.cost_to_train, a} <
           std::tuple{cands[b].row.time_to_train_s, cands[b].row.cost_to_train, b};
  });
  results.front = front;
  for (std::size_t f : front) cands[f].pareto = true;
  for (std::size_t f : front) {
    const auto key = [&](std::size_t k) {
      return std::tuple{objective_of(search.objective, cands[k].row.time_to_train_s, cands[k].row.cost_to_train), k};
    };
    if (!results.best || key(f) < key(*results.best)) results.best = f;
  }
  if (results.best) {
    cands[*results.best].best = true;
  } else {
    const PlanCounts& n = counts;
    throw ConfigError({scenarios.front().source, 0, 0}, "plan",
                      "no candidate fits in memory and meets the deadline and budget: " + std::to_string(n.enumerated) +
                          " plans, " + std::to_string(n.no_fit) + " do not fit, " + std::to_string(n.deadline) +
                          " miss the deadline, " + std::to_string(n.budget) +
                          " are over budget; allow more nodes, instance types, time or money");
  }
  return results;
}

}  // namespace dlsim::experiment
