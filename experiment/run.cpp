#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiment/columns.hpp"
#include "experiment/results.hpp"
#include "models/data_parallel_step.hpp"
#include "network/topology_builders.hpp"
#include "scheduler/fixed_cluster_job.hpp"
#include "sim/engine.hpp"
#include "sim/recorder.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

models::DataParallelConfig step_config(const Scenario& s, int nodes, int per_device_batch,
                                       const network::Topology& topology) {
  const auto& wl = s.workload;
  const auto& inst = s.cluster.instance;
  models::DataParallelConfig c;
  c.model = &wl.model;
  c.device = s.cluster.device;
  c.profile = s.cluster.profile;
  c.precision = wl.precision;
  c.gradient_precision = wl.gradient_precision;
  c.optimizer = wl.optimizer;
  c.per_device_batch = per_device_batch;
  c.nodes = nodes;
  c.accelerators_per_node = inst.accelerators_per_node;
  c.topology = &topology;
  c.all_reduce = s.network.all_reduce;
  c.overlap = wl.overlap;
  c.bucket_bytes = wl.bucket_bytes;
  return c;
}

ResultRow evaluate(const Scenario& s, int nodes) {
  const auto& wl = s.workload;
  ResultRow row;
  row.nodes = nodes;
  row.accelerators = nodes * s.cluster.instance.accelerators_per_node;
  row.per_device_batch = wl.batch_mode == BatchMode::per_device ? wl.batch : wl.batch / row.accelerators;
  row.global_batch = std::int64_t{row.per_device_batch} * row.accelerators;

  const network::Topology topology = s.topology_for(nodes);
  const models::StepBreakdown step =
      models::simulate_data_parallel_step(step_config(s, nodes, row.per_device_batch, topology));
  row.iteration_s = step.iteration_s;
  row.samples_per_s = static_cast<double>(row.global_batch) / step.iteration_s;
  row.samples_per_s_per_accelerator = row.samples_per_s / row.accelerators;
  row.compute_s = step.forward_s + step.backward_s;
  row.optimizer_s = step.optimizer_s;
  row.exposed_comm_s = step.exposed_comm_s;
  row.allreduce_s = step.allreduce_busy_s;
  row.cost_per_hour = s.cluster.instance.price_per_hour * nodes;

  const bool has_dataset = wl.dataset_samples > 0;
  row.time_per_epoch_s = has_dataset ? wl.dataset_samples / row.samples_per_s : kNaN;
  row.cost_per_epoch = has_dataset ? row.cost_per_hour * row.time_per_epoch_s / 3600.0 : kNaN;

  const std::int64_t per_epoch = has_dataset ? static_cast<std::int64_t>(std::ceil(wl.dataset_samples / row.global_batch)) : 0;
  row.iterations = wl.iterations > 0 ? wl.iterations
                                     : static_cast<std::int64_t>(std::ceil(wl.epochs * wl.dataset_samples / row.global_batch));
  scheduler::FixedClusterJob job{nodes, s.cluster.instance.price_per_hour, step.iteration_s, row.iterations, per_epoch, {}};
  sim::Engine engine;
  sim::Recorder recorder;
  try {
    const scheduler::JobOutcome outcome = scheduler::run_fixed_cluster_job(engine, recorder, job);
    row.time_to_train_s = outcome.time_to_train_s;
    row.cost_to_train = outcome.cost_usd;
  } catch (const std::out_of_range&) {
    throw std::runtime_error("the training run on " + std::to_string(nodes) +
                             " nodes would last beyond the simulator's time range (about 292 years)");
  }
  return row;
}

}  // namespace

std::vector<ResultRow> run_training(const Scenario& scenario) {
  std::vector<ResultRow> rows;
  for (int nodes : scenario.node_counts()) rows.push_back(evaluate(scenario, nodes));
  // Efficiency is relative to the smallest configuration evaluated, whatever the sweep order.
  const auto smallest = std::min_element(rows.begin(), rows.end(), [](const ResultRow& a, const ResultRow& b) {
    return a.accelerators < b.accelerators;
  });
  for (ResultRow& row : rows) {
    row.scaling_efficiency = row.samples_per_s_per_accelerator / smallest->samples_per_s_per_accelerator;
  }
  return rows;
}

Results run(const Scenario& scenario) {
  Results results;
  results.dlsim_version = dlsim_version();
  results.seed = scenario.seed;
  results.scenario_source = scenario.source;
  results.scenario_yaml = scenario.input_yaml;
  results.resolved_yaml = resolved_yaml(scenario);
  if (scenario.collective) {
    results.collective_rows = run_collectives(scenario);
    results.table = make_table(collective_columns(), results.collective_rows);
  } else {
    results.rows = run_training(scenario);
    results.table = make_table(training_columns(), results.rows);
  }
  return results;
}

std::string dlsim_version() { return DLSIM_VERSION; }

}  // namespace dlsim::experiment
