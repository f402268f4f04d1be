#include "experiment/columns.hpp"

namespace dlsim::experiment {

const std::vector<Column>& result_columns() {
  static const std::vector<Column> columns{
      {"nodes", "", "nodes (instances) in the cluster", true, [](const ResultRow& r) { return double(r.nodes); }},
      {"accelerators", "", "accelerators in the cluster", true, [](const ResultRow& r) { return double(r.accelerators); }},
      {"per_device_batch", "samples", "samples per accelerator per iteration", true,
       [](const ResultRow& r) { return double(r.per_device_batch); }},
      {"global_batch", "samples", "samples per iteration, all accelerators", true,
       [](const ResultRow& r) { return double(r.global_batch); }},
      {"iteration_time", "s", "time of one training iteration", false, [](const ResultRow& r) { return r.iteration_s; }},
      {"samples_per_second", "samples/s", "training throughput of the cluster", false,
       [](const ResultRow& r) { return r.samples_per_s; }},
      {"samples_per_second_per_accelerator", "samples/s", "throughput per accelerator", false,
       [](const ResultRow& r) { return r.samples_per_s_per_accelerator; }},
      {"time_per_epoch", "s", "time of one pass over the dataset (NaN without a dataset size)", false,
       [](const ResultRow& r) { return r.time_per_epoch_s; }},
      {"cost_per_hour", "USD/h", "on-demand price of the cluster", false, [](const ResultRow& r) { return r.cost_per_hour; }},
      {"cost_per_epoch", "USD", "cost_per_hour x time_per_epoch", false, [](const ResultRow& r) { return r.cost_per_epoch; }},
      {"scaling_efficiency", "1", "per-accelerator throughput relative to the smallest configuration", false,
       [](const ResultRow& r) { return r.scaling_efficiency; }},
      {"iterations", "", "iterations to finish the work", true, [](const ResultRow& r) { return double(r.iterations); }},
      {"time_to_train", "s", "time to finish the work", false, [](const ResultRow& r) { return r.time_to_train_s; }},
      {"cost_to_train", "USD", "billed cost to finish the work (per second, one-minute minimum)", false,
       [](const ResultRow& r) { return r.cost_to_train; }},
      {"compute_time", "s", "forward and backward compute per iteration", false, [](const ResultRow& r) { return r.compute_s; }},
      {"optimizer_time", "s", "optimizer step per iteration", false, [](const ResultRow& r) { return r.optimizer_s; }},
      {"exposed_communication_time", "s", "communication not overlapped with compute, per iteration", false,
       [](const ResultRow& r) { return r.exposed_comm_s; }},
      {"allreduce_busy_time", "s", "time the gradient all-reduce stream is busy per iteration", false,
       [](const ResultRow& r) { return r.allreduce_s; }},
  };
  return columns;
}

}  // namespace dlsim::experiment
