// workload.plan: how a training job splits over the accelerators (models/parallel_plan.hpp).
//   plan: {data, tensor, pipeline, expert, sequence_parallel, schedule, virtual_stages,
//          micro_batch_size, micro_batches, zero_stage, recompute, order, scatter_gather,
//          zero: {implementation, fetch, prefetch_bucket_size, max_live_parameters,
//                 max_reuse_distance, param_persistence_threshold, reduce_bucket_size,
//                 overlap_comm, backward_prefetch},
//          activation_checkpointing: {partition_activations, cpu_checkpointing,
//                                     contiguous_memory_optimization}}
// Every key is optional; an absent plan is plain data parallelism over every accelerator.
#pragma once

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// Reads the plan mapping (allow_empty reader) and calls finish(). Throws ConfigError.
PlanConfig read_plan(MapReader& plan);

// The plan in words for tables: "d8 t8 p16 m64 1f1b" (only what differs from 1 / the default).
std::string describe_plan(const models::ParallelPlan& plan);

}  // namespace dlsim::experiment
