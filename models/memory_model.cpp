// Per-rank memory under a parallel plan (see memory_model.hpp).
#include "models/memory_model.hpp"

#include <algorithm>
#include <cstdio>

#include "models/fp8_recipe.hpp"
#include "models/iteration_program.hpp"
#include "models/layer_kernels.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/zero3_schedule.hpp"

namespace dlsim::models {
namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

bool mixed(Precision p) { return p == Precision::fp16 || p == Precision::bf16 || p == Precision::fp8; }

// Activation elements one rank keeps per sample for one virtual stage's layers, and the most one
// block rebuilds while it is recomputed (all it saves under full recomputation, its attention core
// under selective, nothing where it is not recomputed), in elements of the storage precision: an
// FP8 linear layer's saved input is its FP8 transpose (fp8_recipe.hpp), counted at its bytes.
struct StageActivations {
  double kept = 0;
  double largest_block = 0;  // the largest recompute working set of one block
  double weight_inputs = 0;  // ZB-H1: what W reads, held from B to W
  // What the layers after the model's last block save (the final norm, the output layer and the
  // loss, on the last stage): its backward follows its forward at once in 1F1B-style schedules,
  // so one micro-batch's worth is held, not one per micro-batch in flight.
  double tail = 0;
};

// The index of the model's last layer inside a block (-1 when none).
int last_block_layer(const ModelGraph& model) {
  for (int i = static_cast<int>(model.layers.size()) - 1; i >= 0; --i) {
    if (model.layers[static_cast<std::size_t>(i)].block >= 0) return i;
  }
  return -1;
}

double checkpoint_elements(const Layer& share, const ParallelPlan& plan) {
  const ActivationCheckpointing& c = plan.checkpointing;
  if (c.cpu_checkpointing) return 0;
  const bool partitioned = c.partition_activations && plan.tensor > 1 && !plan.sequence_parallel;
  return share.input_elements / (partitioned ? plan.tensor : 1.0);
}

StageActivations stage_activations(const ModelGraph& model, const ParallelPlan& plan, LayerRange range) {
  StageActivations a;
  double rebuilt = 0;  // what recomputation rebuilds of the current block
  int block = -2;
  int ordinal = -1;  // the stage's transformer blocks, counted from 0
  const int tail_from = last_block_layer(model) + 1;
  for (int i = range.first; i < range.last; ++i) {
    const Layer& layer = model.layers[static_cast<std::size_t>(i)];
    if (layer.block >= 0 && layer.block != block) ++ordinal;
    const Layer share = rank_share(layer, plan);
    const double element = bytes_per_element(storage_precision(plan.precision));
    const double saved = share.saved_elements * (runs_in_fp8(layer, plan.precision) ? kFp8Bytes / element : 1.0);
    if (layer.block != block) {
      a.largest_block = std::max(a.largest_block, rebuilt);
      rebuilt = 0;
      // Full recomputation keeps each block's input only (one hidden-state tensor): split over
      // the tensor group by partition_activations (unless sequence parallelism already split
      // it), in host memory with cpu_checkpointing.
      if (layer.block >= 0 && recomputes_block(plan, ordinal)) a.kept += checkpoint_elements(share, plan);
      block = layer.block;
    }
    // A weight gradient dW = X^T dY reads the layer's input X (what it saved) and the gradient
    // of its output dY (B computed it): a micro-batch whose W is deferred keeps both, even
    // where recomputation dropped X after forward (B recomputed it).
    if (has_weight_gradient(share)) {
      a.weight_inputs += saved + share.activation_elements;
    }
    const bool dropped = layer.block >= 0 && (recomputes_block(plan, ordinal) ||
                                              (plan.recompute == Recompute::selective && layer.attention_core));
    if (tail_from > 0 && i >= tail_from) {
      a.tail += saved;
    } else if (dropped) {
      rebuilt += saved;
    } else {
      a.kept += saved;
    }
  }
  a.largest_block = std::max(a.largest_block, rebuilt);
  return a;
}

// Gradient compression's error-feedback buffers (and PowerSGD's P and Q) of pipeline rank r.
double compression_state(const ModelGraph& model, const ParallelPlan& plan, const std::vector<LayerRange>& ranges, int r, double params) {
  if (plan.compression.method == CompressionMethod::none || plan.data <= 1) return 0;
  std::vector<WeightMatrix> matrices;
  if (plan.compression.method == CompressionMethod::powersgd) {
    for (int k = 0; k < plan.virtual_stages; ++k) {
      const LayerRange range = ranges[static_cast<std::size_t>(k * plan.pipeline + r)];
      for (int i = range.first; i < range.last; ++i) {
        for (const WeightMatrix& m : weight_matrices(rank_share(model.layers[static_cast<std::size_t>(i)], plan), model.tokens_per_sample)) matrices.push_back(m);
      }
    }
  }
  return compression_memory_bytes(plan.compression, params, matrices, plan.data, plan.gradient_precision);
}

}  // namespace

std::vector<MemoryBreakdown> memory_per_rank(const ModelGraph& model, const ParallelPlan& plan) {
  const auto ranges = stage_partition(plan, model);
  const double element = bytes_per_element(storage_precision(plan.precision));
  const double d = plan.gradient_replicas();  // ZeRO shards over data x context ranks
  std::vector<MemoryBreakdown> out;
  for (int r = 0; r < plan.pipeline; ++r) {
    MemoryBreakdown m;
    m.pipeline_rank = r;
    double params = 0, fp8_params = 0, kept = 0, largest_block = 0, boundary = 0, weight_inputs = 0, tail = 0;
    Zero3Schedule zero;
    for (int k = 0; k < plan.virtual_stages; ++k) {
      const LayerRange range = ranges[static_cast<std::size_t>(k * plan.pipeline + r)];
      for (int i = range.first; i < range.last; ++i) {
        const Layer& layer = model.layers[static_cast<std::size_t>(i)];
        params += rank_share(layer, plan).parameters;
        if (runs_in_fp8(layer, plan.precision)) fp8_params += rank_share(layer, plan).parameters;
      }
      if (plan.zero_stage == 3) zero = build_zero3_schedule(model, plan, range, ZeroHostCosts{});
      const StageActivations a = stage_activations(model, plan, range);
      kept = std::max(kept, a.kept);  // chunks hold about the same; the peak count below weights them equally
      weight_inputs = std::max(weight_inputs, a.weight_inputs);
      largest_block = std::max(largest_block, a.largest_block);
      tail += a.tail;
      boundary = std::max(boundary, model.layers[static_cast<std::size_t>(range.last - 1)].activation_elements / plan.context);
    }
    const double mb = plan.micro_batch_size;
    // ZeRO-3 keeps 1/d of the parameters, except the persistent ones (zero3_schedule.hpp).
    m.weights = plan.zero_stage == 3 ? ((params - zero.persistent_elements) / d + zero.persistent_elements) * element : params * element;
    // Transformer Engine's cached FP8 weight copies and their transposes (not kept under ZeRO-3,
    // whose weights are gathered for each use).
    if (plan.zero_stage != 3) m.weights += fp8_params * kFp8WeightCopyBytes;
    m.gradients = params * bytes_per_element(plan.gradient_precision) / (plan.zero_stage >= 2 ? d : 1.0);
    const double state_per_param = (mixed(plan.precision) ? 4.0 : 0.0) + optimizer_state_bytes(plan.optimizer);
    // Parameter servers hold the optimizer state in their host memory.
    m.optimizer_state = plan.parameter_server.enabled ? 0.0 : params * state_per_param / (plan.zero_stage >= 1 ? d : 1.0);
    // Micro-batches between forward and backward hold `kept`; under ZB-H1 those between B and W
    // hold `weight_inputs` (pipeline_schedule.hpp: peak_held).
    // The tail (output layer, loss) is held for one micro-batch, except under GPipe, where every
    // forward runs before the first backward.
    const double tail_held = plan.schedule == PipelineSchedule::gpipe ? peak_held(plan, r, 1.0, 0.0) : 1.0;
    m.activations = (peak_held(plan, r, kept, weight_inputs) + largest_block + tail * tail_held) * mb * element;
    const double pipeline_buffers = plan.pipeline > 1 ? 2.0 * boundary * mb * element : 0.0;
    const double gradient_element = bytes_per_element(plan.gradient_precision);
    const double dp_buffers = plan.zero_stage == 3
                                  ? zero.peak_buffer_bytes
                              : d > 1 ? 2.0 * std::min(plan.bucket_bytes, params * gradient_element)
                                      : 0.0;
    m.communication = pipeline_buffers + dp_buffers + compression_state(model, plan, ranges, r, params);
    m.workspace = kFrameworkWorkspaceBytes;
    out.push_back(m);
  }
  return out;
}

MemoryBreakdown peak_memory(const ModelGraph& model, const ParallelPlan& plan) {
  const auto all = memory_per_rank(model, plan);
  return *std::max_element(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.total() < b.total(); });
}

std::string describe(const MemoryBreakdown& m) {
  return "needs " + gib(m.total()) + " (weights " + gib(m.weights) + ", gradients " + gib(m.gradients) + ", optimizer state " +
         gib(m.optimizer_state) + ", activations " + gib(m.activations) + ", communication buffers " + gib(m.communication) +
         ", workspace " + gib(m.workspace) + ") on pipeline rank " + std::to_string(m.pipeline_rank);
}

}  // namespace dlsim::models
