// Totals and default rules over the layers of a ModelGraph (see model_graph.hpp).
#include "models/model_graph.hpp"

#include <algorithm>

namespace dlsim::models {
namespace {
bool matrix(LayerKind k) { return k == LayerKind::conv || k == LayerKind::linear || k == LayerKind::matmul; }
}  // namespace

double backward_flops(const Layer& layer) {
  if (layer.backward_flops >= 0) return layer.backward_flops;
  return (matrix(layer.kind) ? 2.0 : 1.0) * layer.forward_flops;
}

double saved_elements(const Layer& layer) {
  if (layer.saved_elements >= 0) return layer.saved_elements;
  return layer.kind == LayerKind::elementwise ? 0.0 : layer.input_elements;
}

double forward_bytes_read(const Layer& layer, double batch, double element_bytes) {
  return (batch * layer.input_elements + layer.parameters) * element_bytes;
}

double forward_bytes_written(const Layer& layer, double batch, double element_bytes) {
  return batch * layer.activation_elements * element_bytes;
}

double ModelGraph::parameters() const {
  double total = 0;
  for (const Layer& layer : layers) total += layer.parameters;
  return total;
}

double ModelGraph::forward_flops_per_sample() const {
  double total = 0;
  for (const Layer& layer : layers) total += layer.forward_flops;
  return total;
}

double ModelGraph::backward_flops_per_sample() const {
  double total = 0;
  for (const Layer& layer : layers) total += backward_flops(layer);
  return total;
}

int ModelGraph::blocks() const {
  int last = -1;
  for (const Layer& layer : layers) last = std::max(last, layer.block);
  return last + 1;
}

bool ModelGraph::has_tensor_layout() const {
  return std::any_of(layers.begin(), layers.end(), [](const Layer& l) { return l.tensor == TensorSplit::split; });
}

bool ModelGraph::has_experts() const {
  return std::any_of(layers.begin(), layers.end(), [](const Layer& l) { return l.experts > 0; });
}

}  // namespace dlsim::models
