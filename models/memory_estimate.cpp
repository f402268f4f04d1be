#include "models/memory_estimate.hpp"

namespace dlsim::models {

MemoryEstimate estimate_data_parallel_memory(const ModelGraph& model, Precision precision,
                                             Precision gradient_precision, Optimizer optimizer,
                                             int per_device_batch) {
  const double params = model.parameters();
  const double element = bytes_per_element(precision);
  const bool mixed = precision == Precision::fp16 || precision == Precision::bf16 ||
                     precision == Precision::fp8;
  MemoryEstimate m;
  m.weights = params * element + (mixed ? params * 4.0 : 0.0);
  m.gradients = params * bytes_per_element(gradient_precision);
  m.optimizer_state = params * (optimizer == Optimizer::adam ? 8.0 : 4.0);
  double saved_elements = 0;
  for (const Layer& layer : model.layers) {
    if (layer.kind != LayerKind::elementwise) saved_elements += layer.activation_elements;
  }
  m.activations = saved_elements * per_device_batch * element;
  m.workspace = kFrameworkWorkspaceBytes;
  return m;
}

}  // namespace dlsim::models
