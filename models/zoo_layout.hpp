// Private to the zoo builders (zoo_*.cpp): appending a layer, and marking its parallel layout
// and its saved activations (model_graph.hpp) as it is pushed. Each returns the layer for chaining.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "models/model_graph.hpp"

namespace dlsim::models::zoo_layout {

using Layers = std::vector<Layer>;

// Element-wise costs the transformer builders share, in FLOPs per element, and a dropout mask's
// size: one byte per element, counted in two-byte elements.
constexpr double kSoftmaxFlops = 5;    // 1/sqrt(d) scale, max, exp, sum, divide
constexpr double kDropoutFlops = 2;    // random draw compared with p, then scale-or-zero
constexpr double kMaskElements = 0.5;

// Appends a layer with its per-sample costs; returns it for the annotations below (use the
// reference at once, before the next push).
inline Layer& push(Layers& out, std::string name, LayerKind kind, double params, double flops, double input_elements,
                   double output_elements) {
  out.push_back(Layer{std::move(name), kind, params, flops, output_elements, input_elements});
  return out.back();
}

// Tensor-parallel: 1/t of the work and parameters on each rank.
inline Layer& split(Layer& l) {
  l.tensor = TensorSplit::split;
  return l;
}
// Row-parallel (or vocabulary-parallel): split, and its output all-reduced over the group.
inline Layer& row_parallel(Layer& l) {
  split(l).tp_all_reduce = true;
  return l;
}
// Attention scores, softmax, dropout, context: split by heads, dropped by selective recompute.
inline Layer& attention_core(Layer& l) {
  split(l).attention_core = true;
  return l;
}
// The matrix product of a matrix layer per sample (model_graph.hpp MatmulDims): `count`
// products of rows x depth by depth x cols; batched products of activations (attention) take
// the batch into their count.
inline Layer& gemm(Layer& l, double rows, double depth, double cols, double count = 1, bool batch_in_count = false) {
  l.matmul.rows = rows;
  l.matmul.depth = depth;
  l.matmul.cols = cols;
  l.matmul.count = count;
  l.matmul.batch_in_count = batch_in_count;
  return l;
}
// Elements kept for backward per sample, where the default rule does not hold.
inline Layer& saves(Layer& l, double elements) {
  l.saved_elements = elements;
  return l;
}

// A dropout pass over `elements` (a memory-bound stream) that keeps its mask for backward.
inline Layer& dropout(Layers& out, std::string name, double elements) {
  Layer& drop = saves(push(out, std::move(name), LayerKind::elementwise, 0, kDropoutFlops * elements, elements, elements),
                      kMaskElements * elements);
  drop.memory_kernel = MemoryKernel::dropout;
  return drop;
}

// Steps that run on an FP32 copy of 16-bit activations (Megatron-LM's unfused softmax and
// cross-entropy, PyTorch autocast's softmax): their inputs and outputs at `in` and `out` bytes
// per element when `fp32`, else at the training precision's. What such a step saves counts at
// the precision's element size, so an FP32 tensor of n elements is 2n 16-bit ones.
constexpr double kHalfBytes = 2, kSingleBytes = 4;
inline void fp32_island(Layer& l, bool fp32, double in, double out) {
  if (!fp32) return;
  l.input_element_bytes = in;
  l.output_element_bytes = out;
}
inline double saved_at_fp32(bool fp32, double elements) { return fp32 ? elements * kSingleBytes / kHalfBytes : elements; }

// The attention softmax unfused: scale, then the mask where there is one (`masked`), then the
// softmax, each a kernel reading and writing the heads x s x s scores (`probabilities`
// elements); with `fp32` they run on an FP32 copy, made before and converted back after (each
// conversion one more pass; the FP32 softmax output is what backward keeps). `scores`: the
// (query, key) pairs actually scored, which carry the softmax's FLOPs as in the fused kernel.
// `convert_back` false leaves the probabilities in FP32 for the caller (PyTorch's autocast
// drops them out in FP32 and converts them at the next matrix product). Layer names are
// `prefix` + step.
inline void unfused_softmax(Layers& out, const std::string& prefix, bool fp32, bool masked, double probabilities,
                            double scores, bool convert_back = true) {
  const auto step = [&](const std::string& name, double in_bytes, double out_bytes) -> Layer& {
    Layer& l = attention_core(push(out, prefix + name, LayerKind::elementwise, 0, 0, probabilities, probabilities));
    fp32_island(l, fp32, in_bytes, out_bytes);
    return l;
  };
  if (fp32) step("softmax_to_fp32", kHalfBytes, kSingleBytes);
  step("scale", kSingleBytes, kSingleBytes);
  if (masked) step("mask", kSingleBytes, kSingleBytes);
  Layer& softmax = step("softmax", kSingleBytes, kSingleBytes);
  softmax.kind = LayerKind::softmax;
  softmax.forward_flops = kSoftmaxFlops * scores;
  saves(softmax, saved_at_fp32(fp32, probabilities));
  if (fp32 && convert_back) step("softmax_to_half", kSingleBytes, kHalfBytes);
}

}  // namespace dlsim::models::zoo_layout
