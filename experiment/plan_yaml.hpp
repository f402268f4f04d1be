// workload.plan: how a training job splits over the accelerators (models/parallel_plan.hpp).
//   plan: {data, tensor, pipeline, expert, sequence_parallel, schedule, virtual_stages,
//          micro_batch_size, micro_batches, zero_stage, recompute, order, scatter_gather,
//          recompute_layers, overlap_p2p, tp_comm_overlap, overlap_param_gather,
//          zero: {implementation, fetch, prefetch_bucket_size, max_live_parameters,
//                 max_reuse_distance, param_persistence_threshold, reduce_bucket_size,
//                 overlap_comm, backward_prefetch},
//          activation_checkpointing: {partition_activations, cpu_checkpointing,
//                                     contiguous_memory_optimization},
//          gradient_compression: {method: none|fp16|bf16|int8|one-bit|top-k|powersgd, ratio, rank},
//          parameter_server: {servers, placement: dedicated|colocated, synchronous, staleness,
//                             server_nic, server_memory_bandwidth, server_price}}
// Every key is optional; an absent plan is plain data parallelism over every accelerator.
#pragma once

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// A parameter server's memory bandwidth when the scenario gives none: the peak DRAM bandwidth of
// the two-socket Xeon E5-2686 v4 of AWS p3 hosts (Intel ARK: 4 channels of DDR4-2400 per socket,
// 76.8 GB/s; two sockets). The optimizer step streams every shard element through it.
inline constexpr double kDefaultServerMemoryBandwidth = 153.6e9;

// Reads the plan mapping (allow_empty reader) and calls finish(). Throws ConfigError.
PlanConfig read_plan(MapReader& plan);

// The plan `c` for `workload` (its model, numerics and batch) on `accelerators` of `instance`
// (`device`): data parallelism for what tensor x pipeline x context leave, micro-batches from the
// replica batch. Throws std::invalid_argument saying which key does not split what.
models::ParallelPlan resolve_plan(const PlanConfig& c, const WorkloadConfig& workload, const models::InstanceType& instance,
                                  const models::DeviceSpec& device, int accelerators);

// The plan in words for tables: "d8 t8 p16 m64 1f1b" (only what differs from 1 / the default).
std::string describe_plan(const models::ParallelPlan& plan);

}  // namespace dlsim::experiment
