#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiment/columns.hpp"
#include "experiment/config_error.hpp"
#include "experiment/results.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/serving_run.hpp"
#include "models/inference_pass.hpp"
#include "models/memory_model.hpp"
#include "models/training_replay.hpp"
#include "network/topology_builders.hpp"
#include "scheduler/billing.hpp"
#include "scheduler/fixed_cluster_job.hpp"
#include "sim/engine.hpp"
#include "sim/recorder.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One evaluation pass (workload.evaluation): as measured, or the validation set split over every
// accelerator, each running forward passes of the training's per-device batch (the last one
// shorter), beside the input pipeline loading the node's share. The validation set is decoded
// but not read from workload.input.storage: it is small, and kept after its first pass.
double evaluation_pass_s(const Scenario& s, int nodes, int accelerators, int per_device_batch) {
  const EvaluationConfig& e = s.workload.evaluation;
  if (e.every_epochs == 0) return 0;
  if (e.time_s > 0) return e.time_s;
  const models::InferencePass pass(s.workload.model, s.cluster.device, s.cluster.profile, s.workload.precision);
  const auto per_device = static_cast<std::int64_t>(std::ceil(e.samples / accelerators));
  const std::int64_t full = per_device / per_device_batch;
  const auto rest = static_cast<int>(per_device % per_device_batch);
  const double forward_s = static_cast<double>(full) * pass.batch_s(per_device_batch) + (rest > 0 ? pass.batch_s(rest) : 0.0);
  return models::with_input(forward_s, e.samples / nodes, s.workload.input).iteration_s;
}

ResultRow evaluate(const Scenario& s, int nodes, int plan_index, models::IterationTrace* trace) {
  const models::ParallelPlan plan = s.plan_for(nodes, plan_index);
  const network::Topology topology = s.topology_for(nodes);
  models::TrainingConfig config;
  config.model = &s.workload.model;
  config.plan = plan;
  config.device = s.cluster.device;
  config.profile = s.cluster.profile;
  config.topology = &topology;
  config.all_reduce = s.network.all_reduce;
  const models::IterationBreakdown step = models::replay_iteration(config, trace);
  // Dedicated parameter servers are billed beside the nodes (at plan.parameter_server.server_price).
  // (Scenario::plans() returns a copy: keep the price, not a reference into it.)
  const double server_price = s.plans().at(static_cast<std::size_t>(plan_index)).server_price_per_hour;
  const double servers_per_hour = plan.parameter_server.enabled && plan.parameter_server.placement == models::ServerPlacement::dedicated
                                      ? plan.parameter_server.servers * server_price
                                      : 0.0;
  ResultRow row = training_row(s, nodes, plan, step, servers_per_hour);
  row.plan_index = plan_index;
  return row;
}

}  // namespace

ResultRow training_row(const Scenario& s, int nodes, const models::ParallelPlan& plan, const models::IterationBreakdown& step,
                       double extra_price_per_hour) {
  const auto& wl = s.workload;
  ResultRow row;
  row.nodes = nodes;
  row.accelerators = nodes * s.cluster.instance.accelerators_per_node;
  row.plan = describe_plan(plan);
  row.per_device_batch = plan.micro_batches * plan.micro_batch_size;
  row.global_batch = plan.global_batch();
  // The data loader beside the step (models/input_pipeline.hpp): each node loads its share of
  // the global batch.
  const double samples_per_node = static_cast<double>(row.global_batch) / nodes;
  // Reading from storage (models/storage.hpp): every epoch, or the first only when cached.
  models::InputPipeline reading = wl.input;
  if (wl.storage.present()) {
    const models::ReadCost read = models::read_cost(wl.storage, nodes, s.cluster.instance.network_bandwidth);
    reading.read_s_per_sample = read.worker_s_per_sample;
    reading.node_read_samples_per_s = read.node_samples_per_s;
  }
  const models::InputPipeline& steady_input = wl.storage.cached ? wl.input : reading;
  const models::InputStep input = models::with_input(step.iteration_s, samples_per_node, steady_input);
  row.first_epoch_iteration_s = models::with_input(step.iteration_s, samples_per_node, reading).iteration_s;
  row.input_s = input.input_s;
  row.input_stall_s = input.stall_s;
  row.iteration_s = input.iteration_s;
  row.samples_per_s = static_cast<double>(row.global_batch) / row.iteration_s;
  row.samples_per_s_per_accelerator = row.samples_per_s / row.accelerators;
  row.compute_s = step.compute_s;
  row.recompute_s = step.recompute_s;
  row.optimizer_s = step.optimizer_s;
  row.exposed_comm_s = step.exposed_dp_comm_s + step.gather_wait_s + step.reduce_wait_s;
  row.framework_overhead_s = step.zero_host_s + step.activation_offload_s;
  row.allreduce_s = step.dp_comm_busy_s;
  row.gradient_compression = models::to_string(plan.compression.method);
  row.gradient_wire_bytes = step.gradient_wire_bytes;
  row.compression_s = step.compression_s;
  row.compression_blocking_s = step.compression_blocking_s;
  row.held_sm_s = step.held_sm_s;
  row.staleness = step.staleness;
  row.tensor_comm_s = step.tensor_comm_s;
  row.expert_comm_s = step.expert_comm_s;
  row.context_comm_s = step.context_comm_s;
  row.pipeline_comm_s = step.pipeline_comm_s;
  row.pipeline_bubble_s = step.pipeline_bubble_s;
  row.pipeline_imbalance_s = step.pipeline_imbalance_s;
  // Rates of the step, slowed by what it waits for its input.
  const double paced = step.iteration_s / row.iteration_s;
  row.tokens_per_s = step.tokens_per_s * paced;
  row.tflops_per_accelerator = step.tflops_per_device * paced;
  row.mfu = step.mfu * paced;
  row.hfu = step.hfu * paced;
  row.hardware_tflops_per_accelerator = step.hardware_flops_per_iteration / row.iteration_s / row.accelerators / 1e12;
  row.profile_out_of_range = step.profile_out_of_range;
  using Family = models::KernelFamilyKind;
  const auto family = [&](Family f) { return step.compute_by_family_s[static_cast<std::size_t>(f)]; };
  row.gemm_s = family(Family::gemm);
  row.memory_kernels_s = family(Family::memory);
  row.conv_s = family(Family::conv);
  row.attention_s = family(Family::attention);
  // The bound: the input when the step waits for it, else the largest of the step's parts.
  if (input.input_bound) {
    row.bound = input.storage_bound ? "storage" : "input pipeline";
  } else {
    const double network_s = row.exposed_comm_s + row.tensor_comm_s + row.expert_comm_s + row.context_comm_s + row.pipeline_comm_s;
    const double compute_s = row.compute_s + row.optimizer_s;
    row.bound = network_s > compute_s && network_s >= row.pipeline_bubble_s ? "network"
                : row.pipeline_bubble_s > compute_s                        ? "pipeline bubble"
                                                                           : "compute";
  }
  row.iteration_p10_s = models::with_input(step.iteration_p10_s, samples_per_node, steady_input).iteration_s;
  row.iteration_p90_s = models::with_input(step.iteration_p90_s, samples_per_node, steady_input).iteration_s;
  row.memory_bytes = models::peak_memory(wl.model, plan).total();
  row.cost_per_hour = s.cluster.instance.price_per_hour * nodes + extra_price_per_hour;

  const bool has_dataset = wl.dataset_samples > 0;
  row.time_per_epoch_s = has_dataset ? wl.dataset_samples / row.samples_per_s : kNaN;
  row.cost_per_epoch = has_dataset ? row.cost_per_hour * row.time_per_epoch_s / 3600.0 : kNaN;

  const std::int64_t per_epoch = has_dataset ? static_cast<std::int64_t>(std::ceil(wl.dataset_samples / row.global_batch)) : 0;
  const double samples_to_train = wl.tokens > 0 ? wl.tokens / wl.model.tokens_per_sample : wl.epochs * wl.dataset_samples;
  row.iterations = wl.iterations > 0 ? wl.iterations : static_cast<std::int64_t>(std::ceil(samples_to_train / row.global_batch));
  scheduler::FixedClusterJob job{nodes, row.cost_per_hour / nodes, row.iteration_s, row.iterations, per_epoch, {}};
  job.startup_s = wl.startup_s;
  if (row.first_epoch_iteration_s != row.iteration_s && per_epoch > 0) job.first_epoch_iteration_s = row.first_epoch_iteration_s;
  row.startup_s = wl.startup_s;
  if (wl.evaluation.every_epochs > 0) {
    row.evaluation_s = evaluation_pass_s(s, nodes, row.accelerators, row.per_device_batch);
    job.evaluation_s = row.evaluation_s;
    job.evaluation_every_epochs = wl.evaluation.every_epochs;
  }
  sim::Engine engine;
  sim::Recorder recorder;
  try {
    const scheduler::JobOutcome outcome = scheduler::run_fixed_cluster_job(engine, recorder, job);
    row.time_to_train_s = outcome.time_to_train_s;
    row.cost_to_train = outcome.cost_usd;
    row.evaluations = outcome.evaluations;
    if (wl.storage.present()) {
      // The dataset held for the whole run; read once when cached, else every epoch.
      const double samples_read = static_cast<double>(row.iterations) * row.global_batch;
      const double dataset_samples = has_dataset ? wl.dataset_samples : samples_read;
      const double reads = wl.storage.cached ? 1.0 : samples_read / dataset_samples;
      row.storage_cost = models::storage_cost_usd(wl.storage, dataset_samples * wl.storage.sample_bytes, nodes, row.time_to_train_s, reads);
      row.cost_to_train += row.storage_cost;
    }
    // Before training, one after the other: the dataset moved, then prepared on CPU nodes.
    if (wl.transfer.present()) {
      row.transfer_s = wl.transfer.seconds(wl.dataset_bytes);
      row.transfer_cost = wl.transfer.cost_usd(wl.dataset_bytes);
    }
    if (wl.preparation.present()) {
      row.preparation_s = wl.preparation.seconds(wl.dataset_samples);
      row.preparation_cost = scheduler::billed_cost(wl.preparation.price_per_hour, wl.preparation.nodes, row.preparation_s);
    }
    row.time_to_train_s += row.transfer_s + row.preparation_s;
    row.cost_to_train += row.transfer_cost + row.preparation_cost;
  } catch (const std::out_of_range&) {
    throw std::runtime_error("the training run on " + std::to_string(nodes) +
                             " nodes would last beyond the simulator's time range (about 292 years)");
  }
  return row;
}

ResultRow infeasible_row(const Scenario& s, const InfeasiblePoint& point) {
  ResultRow row;
  row.status = "infeasible";
  row.reason = point.reason;
  row.nodes = point.nodes;
  row.accelerators = point.nodes * s.cluster.instance.accelerators_per_node;
  row.plan = point.plan;
  row.plan_index = point.plan_index;
  try {
    const models::ParallelPlan plan = s.plan_for(point.nodes, point.plan_index);
    row.per_device_batch = plan.micro_batches * plan.micro_batch_size;
    row.global_batch = plan.global_batch();
    const auto& wl = s.workload;
    row.iterations = wl.iterations > 0 ? wl.iterations
                                       : static_cast<std::int64_t>(std::ceil(wl.epochs * wl.dataset_samples / row.global_batch));
  } catch (const std::invalid_argument&) {
    // The plan could not be derived: its sizes stay 0.
  }
  row.cost_per_hour = s.cluster.instance.price_per_hour * point.nodes;
  return row;
}

Table training_table(const std::vector<ResultRow>& rows) {
  Table table = make_table(training_columns(), rows);
  for (TableColumn& c : table.columns) {
    if (c.type != TableColumn::Type::real) continue;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].status != "ok") c.numbers[i] = kNaN;
    }
  }
  return table;
}

std::vector<ResultRow> run_training(const Scenario& scenario, std::vector<models::IterationTrace>* traces,
                                    const sim::InterruptFlag* interrupt, const RunProgress& progress) {
  std::vector<ResultRow> rows;
  const int plans = static_cast<int>(scenario.plans().size());
  const double total = static_cast<double>(scenario.node_counts().size()) * plans;
  if (progress) progress(0, total);
  for (int nodes : scenario.node_counts()) {
    for (int index = 0; index < plans; ++index) {
      sim::check_interrupt(interrupt);
      models::IterationTrace* trace = nullptr;
      if (traces != nullptr) trace = &traces->emplace_back();  // stays empty for an infeasible point
      const InfeasiblePoint* infeasible = scenario.infeasible_at(nodes, index);
      rows.push_back(infeasible != nullptr ? infeasible_row(scenario, *infeasible) : evaluate(scenario, nodes, index, trace));
      if (progress) progress(static_cast<double>(rows.size()), total);
    }
  }
  // Efficiency is relative to the smallest feasible configuration of the same plan, whatever the
  // sweep order.
  for (ResultRow& row : rows) {
    if (row.status != "ok") continue;
    const ResultRow* smallest = nullptr;
    for (const ResultRow& other : rows) {
      if (other.status == "ok" && other.plan_index == row.plan_index &&
          (smallest == nullptr || other.accelerators < smallest->accelerators)) {
        smallest = &other;
      }
    }
    row.scaling_efficiency = row.samples_per_s_per_accelerator / smallest->samples_per_s_per_accelerator;
  }
  return rows;
}

Results run(const Scenario& scenario, const sim::InterruptFlag* interrupt, const RunProgress& progress) {
  if (!scenario.sweep.variants.empty()) {
    throw ConfigError(scenario.sweep.variants.where, "sweep",
                      "the scenario sweeps variants (sweep.grid, zip or random): run it with 'dlsim sweep' (Python: dlsim.sweep)");
  }
  if (scenario.search) {
    throw ConfigError({scenario.source, 0, 0}, "plan", "the scenario searches plans (plan:): run it with 'dlsim plan' (Python: dlsim.plan)");
  }
  Results results;
  results.dlsim_version = dlsim_version();
  results.seed = scenario.seed;
  results.scenario_source = scenario.source;
  results.scenario_yaml = scenario.input_yaml;
  results.resolved_yaml = resolved_yaml(scenario);
  results.kind = scenario.kind();
  if (scenario.serving) {
    // One row (serving_table): what sweeps stack and validation checks, and the per-request and
    // replica tables; `dlsim run` prints more.
    serving_tables(run_serving(scenario), results);
  } else if (scenario.cluster_sim) {
    run_cluster(scenario, results, interrupt, progress);
  } else if (scenario.collective) {
    results.collective_rows = run_collectives(scenario, interrupt);
    results.table = make_table(collective_columns(), results.collective_rows);
  } else {
    results.rows = run_training(scenario, scenario.output.trace.empty() ? nullptr : &results.traces, interrupt, progress);
    results.table = training_table(results.rows);
  }
  return results;
}

double progress_total(const Scenario& scenario) {
  if (scenario.cluster_sim) {
    double jobs = 0;
    for (const ClusterVariant& v : scenario.cluster_sim->variants) jobs += static_cast<double>(v.spec.jobs.size());
    return jobs;
  }
  if (scenario.collective) return 0;
  return static_cast<double>(scenario.node_counts().size() * scenario.plans().size());
}

std::string progress_unit(const Scenario& scenario) { return scenario.cluster_sim ? "jobs" : "configurations"; }

std::string dlsim_version() { return DLSIM_VERSION; }

}  // namespace dlsim::experiment
