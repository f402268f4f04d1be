// ParallelPlan: how one training job splits its model and batch over accelerators, and the
// numerics it trains with. Plain data; validate_plan() checks it against a model and a device
// count, stage_partition() cuts the model into pipeline stages.
//
// Ranks: data x pipeline x tensor accelerators. By default tensor parallelism is innermost (the
// t ranks of a tensor group are consecutive, so inside one node when t <= GPUs per node), then
// pipeline stages, then data-parallel replicas outermost: `order` lists the axes from innermost
// to outermost and may state any other mapping. Expert parallelism (mixture of experts) splits
// each data-parallel group into groups of e consecutive replicas that share their experts
// (DeepSpeed-MoE / Megatron-LM style: e divides d).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "models/model_graph.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

enum class Optimizer { sgd_momentum, adam };
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };
enum class Recompute { none, selective, full };
enum class Axis { tensor, pipeline, data };

struct ParallelPlan {
  int data = 1;
  int tensor = 1;
  int pipeline = 1;
  int expert = 1;                 // expert-parallel group size (divides data)
  bool sequence_parallel = false; // Megatron sequence parallelism (needs tensor > 1)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;         // model chunks per pipeline rank (interleaved schedule)
  int micro_batches = 1;          // per iteration and replica (gradient accumulation steps)
  int micro_batch_size = 1;       // samples per micro-batch
  int zero_stage = 0;             // 0: none; 1: optimizer state; 2: + gradients; 3: + parameters (FSDP)
  Recompute recompute = Recompute::none;
  Precision precision = Precision::fp32;           // compute, weights and activations
  Precision gradient_precision = Precision::fp32;  // gradients as reduced and accumulated
  Optimizer optimizer = Optimizer::sgd_momentum;
  bool overlap_grad_reduce = true;  // reduce gradient buckets while backward runs
  double bucket_bytes = 25.0 * 1024 * 1024;  // PyTorch DDP's bucket_cap_mb default (25 MB)
  bool scatter_gather = true;     // Megatron: pipeline sends 1/t per tensor rank, all-gather after
  std::array<Axis, 3> order{Axis::tensor, Axis::pipeline, Axis::data};  // innermost first

  int devices() const { return data * tensor * pipeline; }
  int virtual_pipeline() const { return pipeline * virtual_stages; }
  int global_batch() const { return data * micro_batches * micro_batch_size; }
};

std::string to_string(PipelineSchedule s);   // "gpipe", "1f1b", "interleaved-1f1b"
std::string to_string(Recompute r);          // "none", "selective", "full"
std::string to_string(Optimizer o);          // "sgd-momentum", "adam"
std::string to_string(Axis a);               // "tensor", "pipeline", "data"

// Throws std::invalid_argument, naming the plan field and why, when the plan cannot run `model`
// on `devices` accelerators: sizes that do not multiply to the device count, a pipeline that does
// not divide the model's blocks, tensor parallelism on a model without a tensor layout, expert
// parallelism without experts, an interleaved schedule without chunks, ...
void validate_plan(const ParallelPlan& plan, const ModelGraph& model, int devices);

// The layers of each virtual pipeline stage, as [first, last) index ranges into model.layers,
// in virtual-stage order: chunk c of pipeline rank r is virtual stage c * pipeline + r.
// Models with blocks are cut at block boundaries into equal block counts (layers outside blocks
// stay with the block before them; those before the first block join the first stage); models without blocks
// are cut between layers so that forward FLOPs are as even as a greedy cut allows.
struct LayerRange {
  int first = 0;
  int last = 0;
};
std::vector<LayerRange> stage_partition(const ParallelPlan& plan, const ModelGraph& model);

// Global rank (index into the job's accelerators) of (data replica, pipeline rank, tensor rank).
int global_rank(const ParallelPlan& plan, int data_index, int pipeline_index, int tensor_index);

}  // namespace dlsim::models
