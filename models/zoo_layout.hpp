// Private to the zoo builders (zoo_*.cpp): appending a layer, and marking its parallel layout
// and its saved activations (model_graph.hpp) as it is pushed. Each returns the layer for chaining.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "models/model_graph.hpp"

namespace dlsim::models::zoo_layout {

using Layers = std::vector<Layer>;

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

}  // namespace dlsim::models::zoo_layout
