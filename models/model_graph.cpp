// Totals and default rules over the layers of a ModelGraph (see model_graph.hpp).
#include "models/model_graph.hpp"

#include <algorithm>
#include <cmath>

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

MemoryKernel memory_kernel_of(const Layer& layer) {
  if (layer.memory_kernel) return *layer.memory_kernel;
  switch (layer.kind) {
    case LayerKind::norm: return MemoryKernel::layer_norm;
    case LayerKind::softmax: return MemoryKernel::softmax;
    case LayerKind::embedding: return MemoryKernel::embedding;
    case LayerKind::pool: return MemoryKernel::pool;
    default: return MemoryKernel::stream;
  }
}

MatmulDims derive_matmul(const Layer& layer) {
  MatmulDims d = layer.matmul;
  if (d.rows > 0 && d.cols > 0 && d.depth > 0) return d;
  if (layer.parameters > 0 && layer.forward_flops > 0) {
    d.rows = std::max(1.0, layer.forward_flops / (2 * layer.parameters));
    d.cols = std::max(1.0, layer.activation_elements / d.rows);
    d.depth = std::max(1.0, layer.parameters / d.cols);
  } else {
    const double side = std::max(1.0, std::cbrt(std::max(0.0, layer.forward_flops) / 2));
    d.rows = d.cols = d.depth = side;
  }
  d.count = 1;
  return d;
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
