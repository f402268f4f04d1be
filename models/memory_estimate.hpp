// Memory one data-parallel rank needs, by component, against the device's capacity.
// A first estimate (the parallel-plan memory model of issue 4 refines it):
// - weights in the compute precision, plus FP32 master weights under mixed precision (fp16/bf16);
// - gradients in the gradient precision;
// - optimizer state in FP32: one momentum buffer (SGD) or two moments (Adam);
// - activations kept for backward: the outputs of matrix, norm, pooling, softmax and embedding
//   layers (elementwise layers such as ReLU and residual adds run in place), per sample times
//   the batch, in the compute precision;
// - a fixed workspace for the framework, library handles and allocator slack.
#pragma once

#include "models/data_parallel_step.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

struct MemoryEstimate {
  double weights = 0;
  double gradients = 0;
  double optimizer_state = 0;
  double activations = 0;
  double workspace = 0;
  double total() const { return weights + gradients + optimizer_state + activations + workspace; }
};

// CUDA context, cuDNN/cuBLAS workspaces and allocator fragmentation: about 1 GiB is commonly
// observed; an assumption, not a measurement.
inline constexpr double kFrameworkWorkspaceBytes = 1024.0 * 1024 * 1024;

MemoryEstimate estimate_data_parallel_memory(const ModelGraph& model, Precision precision,
                                             Precision gradient_precision, Optimizer optimizer,
                                             int per_device_batch);

}  // namespace dlsim::models
