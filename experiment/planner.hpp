// The planner (`dlsim plan`, issue 20): the cheapest or fastest way to train a workload, found by
// simulation. For each instance type of plan.instances and node count of plan.nodes it
// enumerates the parallel plans (enumerate_plans), rejects those that do not fit in memory
// before simulating (with the memory term that dominates), orders the rest by a lower bound on
// their time and cost to train and simulates them in fixed-size waves on a thread pool, skipping
// a candidate only when a simulated point that meets the deadline and budget already beats its
// lower bound on both time and cost: such a candidate can be neither on the Pareto front nor the
// best point, so the pruned search returns exactly the exhaustive search's best point and front.
//
// The lower bound on an iteration: the larger of the model's training FLOPs over the accelerators
// at their peak (100% MFU) and the compute stream's own work on the busiest pipeline rank (every
// kernel of its passes as the kernel model times it, once per micro-batch: what the replay runs
// whole before adding communication, bubbles and the optimizer) and, when the model-parallel group
// fills whole nodes, the data-parallel traffic its node must move across its boundary (gradients,
// ZeRO-2's per micro-batch, ZeRO-3's gathers and reduce-scatters); times the iterations to train,
// and times the candidate's price per node-hour (on-demand, or spot).
//
// Capacity (plan.capacity): every plan is a candidate once per capacity type. On-demand runs are
// failure-free, costed at the catalog price. Spot candidates reuse the same replayed iteration
// (memoized: one replay per instance, node count and plan) and are run in the cluster model with
// reclamations, checkpoints and restarts (plan_spot.hpp); their time and cost are the means over
// the runs, never below the failure-free bound, so the pruning stays exact.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/plan_spot.hpp"
#include "experiment/results.hpp"
#include "experiment/table.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::experiment {

// One point of the search: an instance type, a node count and a plan, and what became of it.
struct PlanCandidate {
  std::size_t scenario = 0;         // index into the per-instance scenarios
  std::string instance;
  int nodes = 0;
  int accelerators = 0;
  models::ParallelPlan plan;
  std::string label;                // describe_plan()
  scheduler::Capacity capacity = scheduler::Capacity::on_demand;
  double price_per_hour = 0;        // per node, on its capacity
  std::size_t replay = 0;           // its (instance, nodes, plan): candidates of one plan share the replay
  // "feasible" (simulated, meets the constraints), "no-fit" (memory), "pruned" (its lower bound
  // is beaten on time and cost by a simulated feasible point), "deadline", "budget" (simulated,
  // or already by its lower bound), "unfinished" (spot: a cluster-model run had not finished by
  // its horizon).
  std::string status;
  std::string reason;
  double memory_bytes = 0;          // peak per accelerator
  double bound_iteration_s = 0, bound_time_to_train_s = 0, bound_cost = 0;
  bool simulated = false;
  bool pareto = false, best = false;
  ResultRow row;                    // when simulated (spot: time and cost to train are the runs' means)
  SpotOutcome spot;                 // spot candidates, when simulated
};

struct PlanCounts {
  std::size_t enumerated = 0;       // valid plans (that split the model and the batch)
  std::size_t no_fit = 0;           // rejected by the memory model
  std::size_t pruned = 0;           // skipped by the lower bound
  std::size_t simulated = 0;
  std::size_t memoized = 0;         // of the simulated: iteration replays found in the cache
  std::size_t deadline = 0, budget = 0;  // rejected (simulated or by the bound)
  std::size_t unfinished = 0;       // spot candidates with a run unfinished at its horizon
  std::size_t spot_runs = 0;        // cluster-model runs of spot candidates
  std::size_t feasible = 0;
  std::size_t bound_violations = 0; // simulated faster than the bound: a bug if ever non-zero
};

struct PlanResults {
  std::vector<PlanCandidate> candidates;  // in enumeration order (instance, nodes, plan)
  PlanCounts counts;
  std::optional<std::size_t> best;        // index into candidates
  std::vector<std::size_t> front;         // Pareto front of (time to train, cost), by time
  PlanObjective objective = PlanObjective::cheapest;
};

struct PlanOptions {
  int threads = 0;                  // 0: one per core
  bool exhaustive = false;          // simulate every candidate that fits (no bound pruning; tests)
  std::size_t wave = 16;            // candidates simulated between pruning decisions (not the thread count: results must not depend on it)
};

// The plans searched for `scenario` (its workload and cluster) at `nodes` nodes: data x tensor
// (powers of two up to the GPUs per node) x pipeline (every size up to the blocks) x context
// (1, 2, 4 with fused attention and sequences of 8K tokens or more), sequence parallelism with
// tensor > 1, 1F1B or interleaved 1F1B with 2 or 4 virtual stages, ZeRO 0 and 1 (2 and 3 without
// a pipeline), micro-batch sizes (powers of two dividing the replica batch), recomputation none,
// selective (models with unfused attention only) or full; only those validate_plan accepts.
std::vector<models::ParallelPlan> enumerate_plans(const Scenario& scenario, int nodes);

// The per-instance scenarios of a plan scenario: the file as loaded, and again with
// cluster.instance set to each other instance of plan.instances. Throws ConfigError.
std::vector<Scenario> load_plan_scenarios(const std::string& path, const std::vector<std::string>& set_arguments = {});
// The same from text (Python's dicts and strings): `name` stands for the file in messages,
// `base_dir` resolves relative paths inside it.
std::vector<Scenario> load_plan_scenarios_text(const std::string& text, const std::string& name, const std::string& base_dir,
                                               const std::vector<std::string>& set_arguments = {});

// The search over the scenarios (each a plan scenario; the first's plan: section is used). Throws
// ConfigError at plan when no candidate fits and meets the constraints, sim::Interrupted.
PlanResults search_plans(const std::vector<Scenario>& scenarios, const PlanOptions& options = {},
                         const sim::InterruptFlag* interrupt = nullptr);

// Every candidate as a table (the CSV and HDF5 columns).
Table plan_table(const PlanResults& results);
// The printed answer: counts, the Pareto front with the best point marked, the best point.
void print_plan(std::ostream& out, const std::vector<Scenario>& scenarios, const PlanResults& results);

}  // namespace dlsim::experiment
