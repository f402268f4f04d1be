// Results of a scenario: one row per evaluated node count, and what produced them.
// Units: seconds, samples/s, USD, USD/hour. NaN marks a value that does not apply (epoch
// figures of a job given in iterations without a dataset size).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiment/scenario.hpp"
#include "experiment/table.hpp"
#include "models/iteration_trace.hpp"
#include "models/training_replay.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::experiment {

struct ResultRow {
  // "ok", or "infeasible" (the plan does not split the model or does not fit in memory: `reason`
  // says why, the numbers are NaN, the integers those the plan implies or 0).
  std::string status = "ok";
  std::string reason;
  int nodes = 0;
  int accelerators = 0;
  std::string plan;                // describe_plan(): "d8 t8 p16 m64x1 1f1b"
  int plan_index = 0;              // index into Scenario::plans()
  int per_device_batch = 0;        // samples per data-parallel replica per iteration
  std::int64_t global_batch = 0;
  double iteration_s = 0;
  double samples_per_s = 0;
  double samples_per_s_per_accelerator = 0;
  double time_per_epoch_s = 0;
  double cost_per_hour = 0;
  double cost_per_epoch = 0;
  double scaling_efficiency = 0;   // per-accelerator throughput / that of the smallest node count
  std::int64_t iterations = 0;     // to finish the work
  double time_to_train_s = 0;
  double cost_to_train = 0;        // billed: per second, one-minute minimum
  double compute_s = 0;            // forward + backward (+ recomputation) per iteration
  double optimizer_s = 0;
  double exposed_comm_s = 0;       // data-parallel communication not hidden behind compute
  double allreduce_s = 0;          // time the data-parallel stream is busy per iteration
  double tokens_per_s = 0;         // samples/s x tokens per sample
  double tflops_per_accelerator = 0;  // model FLOP/s (no recomputation) per accelerator / 1e12
  double mfu = 0;                  // model FLOPs utilization
  double hardware_tflops_per_accelerator = 0;  // with recomputation's FLOPs / 1e12
  double hfu = 0;                  // hardware FLOPs utilization (recomputation counted)
  long long profile_out_of_range = 0;  // kernel lookups outside the calibrated profile's sizes
  double recompute_s = 0;
  double tensor_comm_s = 0;        // blocking tensor-parallel collectives
  double expert_comm_s = 0;        // blocking expert all-to-alls
  double context_comm_s = 0;       // ring attention's exchange beyond the attention it overlaps
  double pipeline_comm_s = 0;      // compute stream blocked on its own pipeline sends
  double pipeline_bubble_s = 0;
  double pipeline_imbalance_s = 0;   // of the bubble: its stage lighter than the busiest (IterationBreakdown)
  double input_s = 0;                // the data loader's time for one iteration's samples on a node (0: no loader)
  double input_stall_s = 0;          // the step waiting for its input (iteration minus compute)
  double startup_s = 0;              // before the first step (workload.startup), in time_to_train
  double evaluation_s = 0;           // one evaluation pass (workload.evaluation), 0 without
  std::int64_t evaluations = 0;      // evaluation passes in time_to_train
  double first_epoch_iteration_s = 0;  // an iteration of the first epoch (the dataset read from storage)
  double storage_cost = 0;           // the dataset's storage bill, in cost_to_train (USD)
  double transfer_s = 0;             // the dataset moved before training (workload.input.transfer), in time_to_train
  double transfer_cost = 0;          // its data-transfer charge, in cost_to_train (USD)
  double preparation_s = 0;          // the one-off preparation job (workload.input.preparation), in time_to_train
  double preparation_cost = 0;       // its CPU nodes' bill, in cost_to_train (USD)
  // What bounds a steady iteration: "compute", "network" (communication the step waits for),
  // "pipeline bubble", "input pipeline" (decoding) or "storage" (reading the dataset).
  std::string bound;
  double framework_overhead_s = 0;   // ZeRO-3 host work the device waits for, blocking activation copies
  std::string gradient_compression = "none";  // plan.gradient_compression.method
  double gradient_wire_bytes = 0;  // bytes one data-parallel rank (parameter servers: worker node) sends per iteration
  double compression_s = 0;        // gradient compression kernels per iteration
  double compression_blocking_s = 0;  // of which delayed backward's compute stream
  double held_sm_s = 0;            // of compute: kernels slowed by the SMs overlapped data-parallel collectives held
  double staleness = 0;            // asynchronous parameter servers: iterations behind (0 otherwise)
  double memory_bytes = 0;         // peak memory of one accelerator (the fullest pipeline rank)
  // Compute time by kernel family and the iteration time's error band (models/training_replay.hpp).
  double gemm_s = 0, memory_kernels_s = 0, conv_s = 0, attention_s = 0;
  double iteration_p10_s = 0, iteration_p90_s = 0;
};

// One collective of one group at one node count and size (collective scenarios).
struct CollectiveRow {
  int nodes = 0;
  int group = 0;
  int groups = 1;
  int ranks = 0;
  std::string operation;
  std::string algorithm;
  std::string protocol;     // NCCL's protocol (simple, ll, ll128)
  int channels = 0;         // NCCL's channels: CTAs, each holding an SM while the collective runs (0: not NCCL-tuned)
  double bytes = 0;
  double time_s = 0;        // with every group running at once
  double algbw = 0;         // bytes/s
  double busbw = 0;         // bytes/s
  double time_alone_s = 0;  // the same group with the fabric to itself
  // Routing (network/routing.hpp): the fabric's scheme; the group alone under the balanced
  // reference (no avoidable collisions); its most shared switch-to-switch link when alone and
  // how many of its routes cross it ("" and 0 when none).
  std::string routing;
  double time_balanced_s = 0;
  std::string shared_link;
  int shared_link_routes = 0;
};

// One variant of a cluster scenario: what the whole cluster did.
struct ClusterRow {
  std::string variant;
  std::string policy;
  std::string placement;
  int jobs = 0, done = 0, failed = 0, unfinished = 0;
  double makespan_s = 0;
  double mean_jct_s = 0, median_jct_s = 0, p99_jct_s = 0, mean_queueing_s = 0;
  double gpu_utilization = 0;
  int preemptions = 0, suspensions = 0, checkpoints = 0;
  int nodes_requested = 0, nodes_reclaimed = 0, nodes_failed = 0;
  double lost_gpu_hours = 0;
  double comm_gpu_hours = 0;   // GPU-hours of running jobs spent in exposed inter-node communication
  double jobs_cost = 0;        // node time attributed to jobs (GPU share) + their checkpoint storage
  double total_cost = 0, compute_cost = 0, idle_cost = 0, storage_cost = 0;
  scheduler::CostBreakdown costs;  // total_cost by category (on-demand, spot, reserved, ..., egress)
  int fallback_nodes = 0;          // nodes fallback pools gave in place of others
  double unavailable_s = 0;        // spot markets: pool-seconds with the price above the maximum
  double cost_vs_first = 0, makespan_vs_first = 0;  // ratios to the first variant
  std::int64_t events = 0;
};

// One pool of one variant (the pools table).
struct PoolRow {
  int variant = 0;
  std::string capacity;
  scheduler::PoolResult pool;
};

// One job of one variant (the jobs table).
struct JobRow {
  int variant = 0;
  scheduler::JobResult job;
};

// One state span of one job of one variant (the job_timeline table).
struct JobSpanRow {
  int variant = 0;
  std::string job;
  scheduler::JobSpan span;
};

// One preemption of one job of one variant (the job_preemptions table).
struct PreemptionRow {
  int variant = 0;
  std::string job;
  scheduler::JobPreemption preemption;
};

struct Results {
  std::string kind;                // "training", "collective" or "cluster"
  std::vector<ResultRow> rows;     // training scenarios: in the order of Scenario::node_counts()
  std::vector<CollectiveRow> collective_rows;  // collective scenarios
  std::vector<ClusterRow> cluster_rows;        // cluster scenarios: one per variant
  Table jobs_table;                            // cluster scenarios: every job of every variant
  // More tables for the HDF5 file, each under its group path ("variants/0/series/busy_gpus").
  std::vector<std::pair<std::string, Table>> extra_tables;
  Table table;                     // what the files hold: the rows above as typed columns
  std::string dlsim_version;
  std::uint64_t seed = 0;
  std::string scenario_source;
  std::string scenario_yaml;       // the scenario as given (after --set)
  std::string resolved_yaml;       // every default, catalog figure and unit resolved (SI)
  // Training scenarios with output.trace: one iteration's trace per node count, in row order.
  std::vector<models::IterationTrace> traces;
};

// How far a run is, reported on the calling thread: cluster scenarios count jobs finished
// (done or failed) over all variants, training scenarios configurations evaluated. Collective
// scenarios report nothing. Empty: nothing is reported. Results never depend on it.
using RunProgress = std::function<void(double done, double total)>;

// Runs every node count of the scenario. Throws std::runtime_error for a run that cannot be
// represented (e.g. a time to train beyond sim::Time's range), and sim::Interrupted once
// `interrupt` is set (checked between configurations and inside cluster simulations).
Results run(const Scenario& scenario, const sim::InterruptFlag* interrupt = nullptr, const RunProgress& progress = {});
// run.cpp; with `traces`, one iteration's trace per row is appended to it.
std::vector<ResultRow> run_training(const Scenario& scenario, std::vector<models::IterationTrace>* traces = nullptr,
                                    const sim::InterruptFlag* interrupt = nullptr, const RunProgress& progress = {});
std::vector<CollectiveRow> run_collectives(const Scenario& scenario, const sim::InterruptFlag* interrupt = nullptr);  // collective_run.cpp
void run_cluster(const Scenario& scenario, Results& results, const sim::InterruptFlag* interrupt = nullptr,
                 const RunProgress& progress = {});  // cluster_run.cpp

// A training row of `scenario` at `nodes` with `plan`, from its replayed iteration `step`: the
// throughput, utilization, memory, time and cost to train (billed per second, one-minute
// minimum), `extra_price_per_hour` (dedicated parameter servers) added to the nodes' price.
// Scaling efficiency is left for the caller. Throws std::runtime_error when the training run
// would last beyond sim::Time's range.
ResultRow training_row(const Scenario& scenario, int nodes, const models::ParallelPlan& plan, const models::IterationBreakdown& step,
                       double extra_price_per_hour = 0);
// The row of a point that cannot run: its nodes and plan, status "infeasible", the reason.
ResultRow infeasible_row(const Scenario& scenario, const InfeasiblePoint& point);
// The training columns as a Table, real numbers blanked (NaN) on rows whose status is not "ok".
Table training_table(const std::vector<ResultRow>& rows);

// What a run of `scenario` reports progress in: the total run() passes to its callback (jobs of
// all variants, or configurations; 0 for collective scenarios), and the unit ("jobs",
// "configurations").
double progress_total(const Scenario& scenario);
std::string progress_unit(const Scenario& scenario);

std::string dlsim_version();
std::string resolved_yaml(const Scenario& scenario);

}  // namespace dlsim::experiment
