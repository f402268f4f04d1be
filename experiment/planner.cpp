// The planner's search (planner.hpp): enumerate, reject by memory, bound, simulate in waves.
#include "experiment/planner.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <memory>
#include <mutex>
#include <optional>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/sweep.hpp"
#include "experiment/units.hpp"
#include "models/iteration_program.hpp"
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

// The most bytes per second an accelerator of the topology can receive: the sum of the raw
// bandwidths of the links into it (the largest over the accelerators).
double accelerator_ingress(const network::Topology& topology) {
  std::vector<double> into(topology.vertex_count(), 0.0);
  for (std::size_t l = 0; l < topology.link_count(); ++l) {
    const network::LinkInfo& link = topology.link(static_cast<network::LinkId>(l));
    into[static_cast<std::size_t>(link.to)] += link.bandwidth;
  }
  double most = 0;
  for (network::VertexId a : topology.accelerators()) most = std::max(most, into[static_cast<std::size_t>(a)]);
  return most;
}

// The node each vertex lies in: accelerators and NICs their own; a switch whose accelerator and
// NIC neighbours all lie in one node (an NVSwitch, a PCIe switch) that node; other switches
// (leaf, rail, spine) none (-1).
std::vector<int> node_of_vertices(const network::Topology& topology) {
  constexpr int kNone = -1, kMany = -2;
  std::vector<int> owner(topology.vertex_count(), kNone);
  for (std::size_t v = 0; v < owner.size(); ++v) {
    const network::VertexInfo& info = topology.vertex(static_cast<network::VertexId>(v));
    if (info.kind != network::VertexKind::switch_) owner[v] = info.node;
  }
  std::vector<int> seen(owner.size(), kNone);  // switches: the one node of their host neighbours, or kMany
  for (std::size_t l = 0; l < topology.link_count(); ++l) {
    const network::LinkInfo& link = topology.link(static_cast<network::LinkId>(l));
    for (const auto& [sw, other] : {std::pair{link.from, link.to}, std::pair{link.to, link.from}}) {
      if (topology.vertex(sw).kind != network::VertexKind::switch_) continue;
      const bool host = topology.vertex(other).kind != network::VertexKind::switch_;
      const int node = host ? topology.vertex(other).node : kMany;  // a switch beside another switch is shared
      int& s = seen[static_cast<std::size_t>(sw)];
      s = s == kNone ? node : (s == node ? s : kMany);
    }
  }
  for (std::size_t v = 0; v < owner.size(); ++v) {
    if (topology.vertex(static_cast<network::VertexId>(v)).kind == network::VertexKind::switch_ && seen[v] >= 0) owner[v] = seen[v];
  }
  return owner;
}

// The most bytes per second a node of the topology can receive from outside it: the sum of the
// raw bandwidths of the links that enter its vertices (node_of_vertices) from other vertices,
// the largest over the nodes. (Links from the node's own NVSwitch to its GPUs do not count.)
double node_ingress(const network::Topology& topology) {
  const std::vector<int> owner = node_of_vertices(topology);
  std::vector<double> into(static_cast<std::size_t>(std::max(1, topology.nodes())), 0.0);
  for (std::size_t l = 0; l < topology.link_count(); ++l) {
    const network::LinkInfo& link = topology.link(static_cast<network::LinkId>(l));
    const int to = owner[static_cast<std::size_t>(link.to)], from = owner[static_cast<std::size_t>(link.from)];
    if (to >= 0 && to != from && static_cast<std::size_t>(to) < into.size()) into[static_cast<std::size_t>(to)] += link.bandwidth;
  }
  return *std::max_element(into.begin(), into.end());
}

// What a pass holds its rank's compute stream for, at least: its compute segments (kernel model
// times, recomputation included), the GEMMs and attention kernels run inside overlapped
// collectives (the pair lasts at least as long), and each blocking tensor-parallel collective no
// faster than the (t - 1)/t of its buffer that every rank must receive, over all its links at
// their raw rate. Expert all-to-alls and ZeRO-3 waits count as nothing.
double pass_bound_s(const models::PassProgram& pass, const models::ParallelPlan& plan, double ingress) {
  double t = 0;
  for (const models::Segment& s : pass.segments) {
    if (s.kind == models::SegmentKind::compute) t += s.seconds;
    if (s.kind == models::SegmentKind::context) t += s.overlap_s;
    if (s.kind == models::SegmentKind::tensor) {
      t += s.overlap_s > 0 ? s.overlap_s : (ingress > 0 ? s.bytes * (plan.tensor - 1) / plan.tensor / ingress : 0.0);
    }
  }
  return t;
}

// A lower bound on the iteration from the passes of the busiest pipeline rank r: before its
// first pass, micro-batch 0 runs forward through the r virtual stages ahead of it (chunk 0 of
// ranks 0 .. r-1); then the rank runs all its passes, one micro-batch after another; after its
// last (the backward of chunk 0 under 1F1B, GPipe and the interleaved schedule), the last
// micro-batch's gradient runs backward through those r stages again (not counted under ZB-H1,
// whose last pass may be a W). The replay adds sends, waits, bubbles beyond these, exposed
// data-parallel communication and the optimizer step: far tighter than 100% MFU, never above.
//
// And the data-parallel gradient reduction must end within the iteration, however it overlaps:
// when the model-parallel group (tensor x pipeline, placed innermost) fills whole nodes, every
// replica of a rank sits in another node, so each GPU's gradients reach the others through its
// node's links from outside, at least (d - 1)/d of them per GPU (a reduce-scatter's share; an
// all-reduce moves more). With context parallelism the reduction also runs over context ranks,
// possibly inside a node: no such bound then.
double iteration_bound_s(const Scenario& s, const models::ParallelPlan& plan, double ingress, double node_in) {
  const models::IterationProgram program = models::build_iteration_program(s.workload.model, plan, s.cluster.device, s.cluster.profile);
  const int per_node = s.cluster.instance.accelerators_per_node;
  const models::ParallelPlan placement;  // the default rank order: tensor innermost, data outermost
  double reduction = 0;
  if (plan.data > 1 && plan.context == 1 && node_in > 0 && plan.order == placement.order &&
      plan.tensor * plan.pipeline >= per_node && (plan.tensor * plan.pipeline) % per_node == 0) {
    double fewest = std::numeric_limits<double>::infinity();  // gradient bytes of the lightest rank
    for (std::size_t r = 0; r < static_cast<std::size_t>(plan.pipeline); ++r) {
      double params = 0;
      for (std::size_t v = r; v < program.stages.size(); v += static_cast<std::size_t>(plan.pipeline)) {
        params += program.stages[v].parameters - program.stages[v].expert_parameters;
      }
      fewest = std::min(fewest, params * models::bytes_per_element(plan.gradient_precision));
    }
    // ZeRO-2 reduce-scatters each micro-batch's gradients (DeepSpeed's stage 2; the replay's
    // buckets fill in every backward), not only the last's.
    const double reductions = plan.zero_stage == 2 ? plan.micro_batches : 1;
    reduction = per_node * fewest * reductions * (plan.data - 1) / plan.data / node_in;
    // ZeRO-3 (no pipeline: one rank holds every stage): the schedule's all-gathers and
    // reduce-scatters of every pass, once per micro-batch, and the gathers after the step. A rank
    // receives at least (d - 1)/d of each all-gather's output and sends at least (d - 1)/d of each
    // reduce-scatter's input, whatever the algorithm; the two directions may overlap, so the
    // larger of the two counts.
    if (plan.zero_stage == 3) {
      double gathered = 0, scattered = 0;
      const auto add = [&](const std::vector<models::ZeroCollective>& collectives, double times) {
        for (const models::ZeroCollective& c : collectives) {
          (c.kind == network::CollectiveKind::all_gather ? gathered : scattered) += c.bytes * times;
        }
      };
      for (const models::StageProgram& stage : program.stages) {
        for (const models::PassProgram* pass : {&stage.forward, &stage.backward, &stage.weight}) add(pass->collectives, plan.micro_batches);
      }
      add(program.after_step, 1);
      reduction = std::max(reduction, per_node * std::max(gathered, scattered) * (plan.data - 1) / plan.data / node_in);
    }
  }
  const std::size_t p = static_cast<std::size_t>(plan.pipeline);
  double best = 0, head = 0, tail = 0;
  for (std::size_t r = 0; r < p; ++r) {
    double passes = 0;
    for (std::size_t v = r; v < program.stages.size(); v += p) {
      const models::StageProgram& stage = program.stages[v];
      passes += pass_bound_s(stage.forward, plan, ingress) + pass_bound_s(stage.backward, plan, ingress) +
                pass_bound_s(stage.weight, plan, ingress);
    }
    const bool tail_counts = plan.schedule != models::PipelineSchedule::zb_h1;
    best = std::max(best, head + passes * plan.micro_batches + (tail_counts ? tail : 0.0));
    head += pass_bound_s(program.stages[r].forward, plan, ingress);
    tail += pass_bound_s(program.stages[r].backward, plan, ingress);
  }
  return std::max(best, reduction);
}

// The candidates of one instance type and node count, each checked against memory and bounded.
std::vector<PlanCandidate> candidates_of(const Scenario& s, std::size_t index, int nodes, const PlanSearchConfig& search,
                                         double ingress, double node_in) {
  const WorkloadConfig& wl = s.workload;
  const int accelerators = nodes * s.cluster.instance.accelerators_per_node;
  const double memory = s.cluster.device.memory_bytes;
  const double iterations = wl.iterations > 0 ? static_cast<double>(wl.iterations) : std::ceil(wl.epochs * wl.dataset_samples / wl.batch);
  // 100% MFU: the model's training FLOPs of an iteration over every accelerator at its peak.
  const double peak_bound_s = wl.model.training_flops_per_sample() * wl.batch / (accelerators * s.cluster.device.peak(wl.precision));
  std::vector<PlanCandidate> out;
  std::size_t replay = 0;
  for (const models::ParallelPlan& plan : enumerate_plans(s, nodes)) {
    PlanCandidate first;
    first.scenario = index;
    first.instance = s.cluster.instance_name;
    first.nodes = nodes;
    first.accelerators = accelerators;
    first.plan = plan;
    first.label = describe_plan(plan);
    first.replay = replay++;
    const models::MemoryBreakdown mem = models::peak_memory(wl.model, plan);
    first.memory_bytes = mem.total();
    const bool fits = first.memory_bytes <= memory;
    // Only what fits is simulated, so only that needs the tighter bound (it costs a kernel model pass).
    first.bound_iteration_s = std::max(peak_bound_s, fits ? iteration_bound_s(s, plan, ingress, node_in) : 0.0) * kBoundSlack;
    first.bound_time_to_train_s = first.bound_iteration_s * iterations;
    for (scheduler::Capacity capacity : search.capacities) {
      PlanCandidate c = first;
      c.capacity = capacity;
      c.price_per_hour = capacity == scheduler::Capacity::spot ? spot_price_per_hour(s.cluster.instance, *search.spot)
                                                               : s.cluster.instance.price_per_hour;
      // Reclamations, restarts and checkpoints only add time and node-hours: the failure-free
      // compute at the candidate's price bounds spot candidates too.
      c.bound_cost = c.price_per_hour * nodes * c.bound_time_to_train_s / 3600.0;
      const double bound_time = c.bound_time_to_train_s, bound_cost = c.bound_cost;
      if (!fits) {
        c.status = "no-fit";
        c.reason = "needs " + format_size(c.memory_bytes) + " on pipeline rank " + std::to_string(mem.pipeline_rank) + ", " +
                   format_size(c.memory_bytes - memory) + " over the " + format_size(memory) + " of " + s.cluster.device.name +
                   "; largest term: " + dominant_term(mem);
      } else if (search.deadline_s > 0 && bound_time > search.deadline_s) {
        c.status = "deadline";
        c.reason = "needs at least " + format_duration(bound_time) + " for its compute alone; the deadline is " + format_duration(search.deadline_s);
      } else if (search.budget_usd > 0 && bound_cost > search.budget_usd) {
        c.status = "budget";
        c.reason = "costs at least " + usd(bound_cost) + " for its compute alone; the budget is " + usd(search.budget_usd);
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

// "aws/p5.48xlarge x 16 spot tensor 8 ...": a candidate in messages.
std::string describe(const PlanCandidate& c) {
  return c.instance + " x " + std::to_string(c.nodes) + (c.capacity == scheduler::Capacity::spot ? " spot " : " ") + c.label;
}

// How long a spot candidate's cluster-model runs may go: ten times its failure-free time (a run
// still going then is reported unfinished), at least a day and twice the deadline.
double spot_horizon_s(double failure_free_s, double deadline_s) {
  return std::max({10 * failure_free_s, 86400.0, 2 * deadline_s});
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

namespace {

// The plan scenario once per instance type of its plan: section, each loaded by `load` with the
// overrides given and cluster.instance set.
std::vector<Scenario> per_instance(const std::function<Scenario(const std::vector<std::string>&)>& load,
                                   const std::vector<std::string>& set_arguments) {
  Scenario first = load(set_arguments);
  if (!first.search) {
    throw ConfigError({first.source, 0, 0}, "plan",
                      "the scenario has no plan: section (objective, deadline, budget, instances, nodes): 'dlsim plan' searches one");
  }
  std::vector<Scenario> out;
  for (const std::string& name : first.search->instances) {
    if (name == first.cluster.instance_name) {
      out.push_back(first);
      continue;
    }
    std::vector<std::string> sets = set_arguments;
    sets.push_back("cluster.instance=" + name);
    out.push_back(load(sets));
  }
  return out;
}

}  // namespace

std::vector<Scenario> load_plan_scenarios(const std::string& path, const std::vector<std::string>& set_arguments) {
  return per_instance([&path](const std::vector<std::string>& sets) { return load_scenario(path, sets); }, set_arguments);
}

std::vector<Scenario> load_plan_scenarios_text(const std::string& text, const std::string& name, const std::string& base_dir,
                                               const std::vector<std::string>& set_arguments) {
  return per_instance([&](const std::vector<std::string>& sets) { return load_scenario_text(text, name, sets, base_dir); },
                      set_arguments);
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
  Topologies topologies(groups.size());
  for_each_on_threads(groups.size(), options.threads, true, [&](std::size_t g) {
    sim::check_interrupt(interrupt);
    const Scenario& s = scenarios[groups[g].scenario];
    const network::Topology& topology = topologies.get(g, s, groups[g].nodes);
    per_group[g] = candidates_of(s, groups[g].scenario, groups[g].nodes, search, accelerator_ingress(topology), node_ingress(topology));
  });
  std::vector<std::size_t> group_of;
  std::size_t replays = 0;  // the search's distinct (instance, nodes, plan): one replay each at most
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::size_t in_group = 0;
    for (PlanCandidate& c : per_group[g]) {
      in_group = std::max(in_group, c.replay + 1);
      c.replay += replays;
      results.candidates.push_back(std::move(c));
      group_of.push_back(g);
    }
    replays += in_group;
  }
  std::vector<std::optional<models::IterationBreakdown>> replayed(replays);
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
                   " (its compute alone), beaten by " + describe(b) + " (" + format_duration(b.row.time_to_train_s) + ", " +
                   usd(b.row.cost_to_train) + ")";
        continue;
      }
      wave.push_back(order[next - 1]);
    }
    // The wave's replays not made yet, each once (a plan's candidates of other capacities share
    // it: memoized), then each candidate's row (and a spot candidate's cluster-model runs).
    std::vector<std::size_t> to_replay;  // a candidate of each replay to make
    for (std::size_t k : wave) {
      const bool made = replayed[cands[k].replay].has_value() ||
                        std::any_of(to_replay.begin(), to_replay.end(), [&](std::size_t o) { return cands[o].replay == cands[k].replay; });
      if (made) {
        ++counts.memoized;
      } else {
        to_replay.push_back(k);
      }
    }
    for_each_on_threads(to_replay.size(), options.threads, true, [&](std::size_t w) {
      sim::check_interrupt(interrupt);
      const PlanCandidate& c = cands[to_replay[w]];
      const Scenario& s = scenarios[c.scenario];
      models::TrainingConfig config;
      config.model = &s.workload.model;
      config.plan = c.plan;
      config.device = s.cluster.device;
      config.profile = s.cluster.profile;
      config.topology = &topologies.get(group_of[to_replay[w]], s, c.nodes);
      config.all_reduce = s.network.all_reduce;
      replayed[c.replay] = models::replay_iteration(config, nullptr);
    });
    for_each_on_threads(wave.size(), options.threads, true, [&](std::size_t w) {
      sim::check_interrupt(interrupt);
      PlanCandidate& c = cands[wave[w]];
      const Scenario& s = scenarios[c.scenario];
      c.row = training_row(s, c.nodes, c.plan, *replayed[c.replay]);
      c.row.scaling_efficiency = std::numeric_limits<double>::quiet_NaN();
      if (c.capacity == scheduler::Capacity::spot) {
        const double iteration_s = c.row.time_to_train_s / static_cast<double>(std::max<std::int64_t>(c.row.iterations, 1));
        c.spot = simulate_spot(s, c.nodes, c.row.iterations, iteration_s, *search.spot, s.seed,
                               spot_horizon_s(c.row.time_to_train_s, search.deadline_s));
        // Means of the runs that finished; none when any did not (the candidate is "unfinished").
        const bool finished = c.spot.unfinished == 0;
        c.row.time_to_train_s = finished ? c.spot.time_mean_s : std::numeric_limits<double>::quiet_NaN();
        c.row.cost_to_train = finished ? c.spot.cost_mean : std::numeric_limits<double>::quiet_NaN();
        c.row.cost_per_hour = c.price_per_hour * c.nodes;
      }
      c.simulated = true;
    });
    for (std::size_t k : wave) {
      PlanCandidate& c = cands[k];
      ++counts.simulated;
      if (c.capacity == scheduler::Capacity::spot) counts.spot_runs += static_cast<std::size_t>(c.spot.runs);
      if (c.row.iteration_s < c.bound_iteration_s) ++counts.bound_violations;
      if (c.capacity == scheduler::Capacity::spot && c.spot.unfinished > 0) {
        c.status = "unfinished";
        c.reason = std::to_string(c.spot.unfinished) + " of " + std::to_string(c.spot.runs) + " spot runs had not finished after " +
                   format_duration(c.spot.horizon_s) + " (it needs " + format_duration(c.spot.failure_free_s) +
                   " without reclamations): its nodes are reclaimed faster than it can make progress";
      } else if (search.deadline_s > 0 && c.row.time_to_train_s > search.deadline_s) {
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
    counts.unfinished += st == "unfinished";
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
