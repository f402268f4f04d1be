#include "experiment/columns.hpp"

namespace dlsim::experiment {

namespace {
constexpr auto kReal = TableColumn::Type::real;
constexpr auto kInteger = TableColumn::Type::integer;
constexpr auto kText = TableColumn::Type::text;
}  // namespace

const std::vector<Column<ResultRow>>& training_columns() {
  static const std::vector<Column<ResultRow>> columns{
      {"nodes", "", "nodes (instances) in the cluster", kInteger, [](const ResultRow& r) { return double(r.nodes); }},
      {"accelerators", "", "accelerators in the cluster", kInteger, [](const ResultRow& r) { return double(r.accelerators); }},
      {"plan", "", "parallel plan: data, tensor, pipeline, expert sizes, micro-batches x size, schedule, ZeRO, recomputation",
       kText, nullptr, [](const ResultRow& r) { return r.plan; }},
      {"per_device_batch", "samples", "samples per data-parallel replica per iteration (per accelerator without model parallelism)", kInteger,
       [](const ResultRow& r) { return double(r.per_device_batch); }},
      {"global_batch", "samples", "samples per iteration, all accelerators", kInteger,
       [](const ResultRow& r) { return double(r.global_batch); }},
      {"iteration_time", "s", "time of one training iteration", kReal, [](const ResultRow& r) { return r.iteration_s; }},
      {"iteration_time_p10", "s",
       "iteration_time with every kernel family at the 10th percentile of its held-out measured / predicted time "
       "(the kernel model's error band; communication as predicted)",
       kReal, [](const ResultRow& r) { return r.iteration_p10_s; }},
      {"iteration_time_p90", "s", "the same at the 90th percentile", kReal, [](const ResultRow& r) { return r.iteration_p90_s; }},
      {"samples_per_second", "samples/s", "training throughput of the cluster", kReal,
       [](const ResultRow& r) { return r.samples_per_s; }},
      {"samples_per_second_per_accelerator", "samples/s", "throughput per accelerator", kReal,
       [](const ResultRow& r) { return r.samples_per_s_per_accelerator; }},
      {"time_per_epoch", "s", "time of one pass over the dataset (NaN without a dataset size)", kReal,
       [](const ResultRow& r) { return r.time_per_epoch_s; }},
      {"cost_per_hour", "USD/h", "on-demand price of the cluster", kReal, [](const ResultRow& r) { return r.cost_per_hour; }},
      {"cost_per_epoch", "USD", "cost_per_hour x time_per_epoch", kReal, [](const ResultRow& r) { return r.cost_per_epoch; }},
      {"scaling_efficiency", "1", "per-accelerator throughput relative to the smallest configuration", kReal,
       [](const ResultRow& r) { return r.scaling_efficiency; }},
      {"iterations", "", "iterations to finish the work", kInteger, [](const ResultRow& r) { return double(r.iterations); }},
      {"time_to_train", "s", "time to finish the work", kReal, [](const ResultRow& r) { return r.time_to_train_s; }},
      {"cost_to_train", "USD", "billed cost to finish the work (per second, one-minute minimum)", kReal,
       [](const ResultRow& r) { return r.cost_to_train; }},
      {"compute_time", "s", "forward and backward compute per iteration", kReal, [](const ResultRow& r) { return r.compute_s; }},
      {"gemm_time", "s", "of compute_time: matrix multiplications (linear layers, batched attention products)", kReal,
       [](const ResultRow& r) { return r.gemm_s; }},
      {"memory_bound_time", "s", "of compute_time: memory-bound kernels (norms, activations, softmax, dropout, adds, gathers)",
       kReal, [](const ResultRow& r) { return r.memory_kernels_s; }},
      {"conv_time", "s", "of compute_time: convolutions", kReal, [](const ResultRow& r) { return r.conv_s; }},
      {"attention_time", "s", "of compute_time: fused (FlashAttention) attention", kReal,
       [](const ResultRow& r) { return r.attention_s; }},
      {"optimizer_time", "s", "optimizer step per iteration", kReal, [](const ResultRow& r) { return r.optimizer_s; }},
      {"exposed_communication_time", "s", "communication not overlapped with compute, per iteration", kReal,
       [](const ResultRow& r) { return r.exposed_comm_s; }},
      {"allreduce_busy_time", "s", "time the data-parallel gradient stream is busy per iteration", kReal,
       [](const ResultRow& r) { return r.allreduce_s; }},
      {"recompute_time", "s", "forward recomputation inside backward, per iteration (part of compute_time)", kReal,
       [](const ResultRow& r) { return r.recompute_s; }},
      {"tensor_parallel_time", "s", "blocking tensor-parallel collectives per iteration", kReal,
       [](const ResultRow& r) { return r.tensor_comm_s; }},
      {"expert_all_to_all_time", "s", "blocking expert-parallel all-to-alls per iteration", kReal,
       [](const ResultRow& r) { return r.expert_comm_s; }},
      {"pipeline_bubble_time", "s", "compute stream idle waiting for other pipeline stages, per iteration", kReal,
       [](const ResultRow& r) { return r.pipeline_bubble_s; }},
      {"framework_overhead_time", "s",
       "device idle while the host runs ZeRO-3's hooks, collective launches and synchronizations, and blocking activation "
       "copies to and from the host, per iteration",
       kReal, [](const ResultRow& r) { return r.framework_overhead_s; }},
      {"gradient_compression", "", "how data-parallel gradients are compressed (plan.gradient_compression.method)", kText, nullptr,
       [](const ResultRow& r) { return r.gradient_compression; }},
      {"gradient_wire_bytes", "B",
       "bytes one data-parallel rank sends for its gradients per iteration (collectives by nccl-tests' bus factors; "
       "parameter servers: a worker node's pushes)",
       kReal, [](const ResultRow& r) { return r.gradient_wire_bytes; }},
      {"compression_time", "s", "gradient compression and decompression kernels per iteration (on the data-parallel stream)", kReal,
       [](const ResultRow& r) { return r.compression_s; }},
      {"compression_blocking_time", "s",
       "of compression_time: kernels issued while backward runs, which delay its next kernels (they share its stream)", kReal,
       [](const ResultRow& r) { return r.compression_blocking_s; }},
      {"staleness", "iterations",
       "asynchronous parameter servers: iterations of a worker's own updates missing from the parameters it computes on", kReal,
       [](const ResultRow& r) { return r.staleness; }},
      {"tokens_per_second", "tokens/s", "samples_per_second x tokens per sample", kReal,
       [](const ResultRow& r) { return r.tokens_per_s; }},
      {"tflops_per_accelerator", "TFLOP/s", "model FLOPs (forward + backward, no recomputation) per second per accelerator",
       kReal, [](const ResultRow& r) { return r.tflops_per_accelerator; }},
      {"mfu", "1", "model FLOPs utilization: model FLOP/s over the accelerators' peak at the precision", kReal,
       [](const ResultRow& r) { return r.mfu; }},
      {"profile_out_of_range", "", "kernels whose size lies outside a calibrated profile's measured sizes (the nearest point was used)",
       kInteger, [](const ResultRow& r) { return double(r.profile_out_of_range); }},
      {"memory_per_accelerator", "B", "peak memory of one accelerator (the fullest pipeline rank)", kReal,
       [](const ResultRow& r) { return r.memory_bytes; }},
  };
  return columns;
}

const std::vector<Column<CollectiveRow>>& collective_columns() {
  static const std::vector<Column<CollectiveRow>> columns{
      {"nodes", "", "nodes in the cluster", kInteger, [](const CollectiveRow& r) { return double(r.nodes); }},
      {"group", "", "index of the concurrent group (0 when alone)", kInteger,
       [](const CollectiveRow& r) { return double(r.group); }},
      {"groups", "", "groups running the collective at the same time", kInteger,
       [](const CollectiveRow& r) { return double(r.groups); }},
      {"ranks", "", "accelerators in the group", kInteger, [](const CollectiveRow& r) { return double(r.ranks); }},
      {"operation", "", "collective operation", kText, nullptr, [](const CollectiveRow& r) { return r.operation; }},
      {"algorithm", "", "algorithm used (NCCL's tuner's choice when automatic)", kText, nullptr,
       [](const CollectiveRow& r) { return r.algorithm; }},
      {"protocol", "", "NCCL protocol used: simple, ll or ll128 (simple when the GPUs do not run NCCL)", kText, nullptr,
       [](const CollectiveRow& r) { return r.protocol; }},
      {"size", "B", "message size per rank (nccl-tests convention)", kReal,
       [](const CollectiveRow& r) { return r.bytes; }},
      {"time", "s", "time of the collective with all groups running", kReal,
       [](const CollectiveRow& r) { return r.time_s; }},
      {"algbw", "B/s", "algorithm bandwidth: size / time", kReal, [](const CollectiveRow& r) { return r.algbw; }},
      {"busbw", "B/s", "bus bandwidth: algbw x the operation's factor (nccl-tests PERFORMANCE.md)", kReal,
       [](const CollectiveRow& r) { return r.busbw; }},
      {"time_alone", "s", "time of the same group's collective with no other group running", kReal,
       [](const CollectiveRow& r) { return r.time_alone_s; }},
      {"slowdown", "1", "time / time_alone: what the other groups' traffic costs", kReal,
       [](const CollectiveRow& r) { return r.time_s / r.time_alone_s; }},
      {"routing", "", "how the fabric's switches choose among equal-cost paths (network.fabric.routing)", kText, nullptr,
       [](const CollectiveRow& r) { return r.routing; }},
      {"time_balanced", "s", "time_alone with every route on the least-loaded equal-cost path (balanced reference)",
       kReal, [](const CollectiveRow& r) { return r.time_balanced_s; }},
      {"routing_cost", "1", "time_alone / time_balanced: what the routing's collisions (ECMP's hash) cost", kReal,
       [](const CollectiveRow& r) { return r.time_alone_s / r.time_balanced_s; }},
      {"shared_link", "", "the group's most shared switch-to-switch link, alone", kText, nullptr,
       [](const CollectiveRow& r) { return r.shared_link; }},
      {"shared_link_flows", "", "the group's routes on shared_link (all phases; a ring's flows at once)", kInteger,
       [](const CollectiveRow& r) { return double(r.shared_link_routes); }},
  };
  return columns;
}

}  // namespace dlsim::experiment
