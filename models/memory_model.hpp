// Memory one rank needs under a parallel plan, by component, against its device's capacity.
// Computed for every pipeline rank; the largest is what must fit.
//
// - weights: the rank's parameters (1/t of tensor-split layers, experts/e experts, its stages
//   only) in the compute precision (bf16 under fp8); 1/d of them under ZeRO-3, except the tensors
//   it keeps gathered (DeepSpeed's persistent ones; the gathered ones are communication buffers).
//   Under fp8 also Transformer Engine's cached FP8 copy and FP8 transpose of each FP8 linear
//   layer's weights (fp8_recipe.hpp; none under ZeRO-3).
// - gradients: the same parameters in the gradient precision; 1/d under ZeRO-2 and -3.
// - optimizer state: FP32 master weights under mixed precision (fp16/bf16/fp8), plus one
//   momentum (SGD) or two moments (Adam) in FP32; 1/d under ZeRO-1, -2 and -3
//   (Rajbhandari et al. 2020, sec. 5); none with parameter servers (they hold it).
// - activations: the elements each layer keeps for backward (model_graph.hpp), for the rank's
//   share of the layer (in bf16 under fp8, but an FP8 linear layer's saved input in FP8: TE
//   keeps the FP8 transpose its weight-gradient GEMM reads), times the micro-batch size, times
//   the micro-batches in flight at the schedule's peak on that rank (pipeline_schedule.hpp: p on the first rank under 1F1B, m under
//   GPipe). Recomputation keeps, per block, only its input (full) or drops the attention core
//   (selective); the block being recomputed needs its full activations once more. DeepSpeed's
//   partition_activations divides the kept inputs by the tensor-parallel size (not again under
//   sequence parallelism), cpu_checkpointing moves them to host memory. Under ZB-H1 a micro-
//   batch whose W pass is deferred keeps, from its B to its W, the input and the output gradient
//   of each layer with weights (what dW = X^T dY reads), recomputed or not; the peak is taken
//   over the schedule's passes (peak_held). Without recomputation that peak is 1F1B's (the
//   first rank's), as Qi et al. state; with recomputation the deferred W inputs (the output
//   layer's logit gradients above all) can raise it above 1F1B's.
// - communication buffers: two gradient buckets (one filling, one reducing) without ZeRO-3; with
//   it, the most parameters its schedule holds gathered at once (in use and prefetched: the
//   prefetch window), its gradient buckets and the largest module's unreduced gradients
//   (zero3_schedule.hpp); the pipeline's send and receive buffers (one micro-batch's boundary
//   activation each way); gradient compression's error-feedback buffers (and PowerSGD's P and Q,
//   gradient_compression.hpp).
// - workspace: the framework's fixed overhead (CUDA context, library workspaces, allocator slack).
#pragma once
#include <string>
#include <vector>

#include "models/model_graph.hpp"
#include "models/parallel_plan.hpp"

namespace dlsim::models {

struct MemoryBreakdown {
  int pipeline_rank = 0;
  double weights = 0;
  double gradients = 0;
  double optimizer_state = 0;
  double activations = 0;
  double communication = 0;
  double workspace = 0;
  double total() const { return weights + gradients + optimizer_state + activations + communication + workspace; }
};

// CUDA context, cuDNN/cuBLAS workspaces and allocator fragmentation: about 1 GiB is commonly
// observed; an assumption, not a measurement.
inline constexpr double kFrameworkWorkspaceBytes = 1024.0 * 1024 * 1024;

// One breakdown per pipeline rank. The plan must be valid for the model (validate_plan).
std::vector<MemoryBreakdown> memory_per_rank(const ModelGraph& model, const ParallelPlan& plan);
// The pipeline rank that needs the most.
MemoryBreakdown peak_memory(const ModelGraph& model, const ParallelPlan& plan);

// "needs 93.2 GiB (weights 40.1 GiB, gradients ..., workspace 1.0 GiB) on pipeline rank 0"
std::string describe(const MemoryBreakdown& m);

}  // namespace dlsim::models
