// One forward pass of a batch for serving (inference_pass.hpp).
#include "models/inference_pass.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/layer_kernels.hpp"
#include "models/memory_kernel_model.hpp"
#include "models/roofline.hpp"

namespace dlsim::models {
namespace {

// Kernels evaluation mode does not run: dropout is the identity, and nothing computes a loss.
bool runs_in_inference(const Layer& layer) {
  if (layer.kind == LayerKind::conv || layer.kind == LayerKind::linear || layer.kind == LayerKind::matmul ||
      layer.kind == LayerKind::attention) {
    return true;
  }
  const MemoryKernel k = memory_kernel_of(layer);
  return k != MemoryKernel::dropout && k != MemoryKernel::cross_entropy;
}

}  // namespace

InferencePass::InferencePass(ModelGraph model, DeviceSpec device, DeviceProfile profile, Precision precision)
    : model_(std::move(model)), device_(std::move(device)), profile_(std::move(profile)), precision_(precision) {
  if (!device_.supports(precision_)) {
    throw std::invalid_argument(device_.name + " has no " + std::string(to_string(precision_)) + " support");
  }
  if (model_.layers.empty()) throw std::invalid_argument("model " + model_.name + " has no layer");
  weight_bytes_ = model_.parameters() * bytes_per_element(precision_);
}

double InferencePass::workspace_bytes(int batch) const {
  double largest = 0;
  for (const Layer& layer : model_.layers) {
    if (runs_in_inference(layer)) largest = std::max(largest, layer.input_elements + layer.activation_elements);
  }
  return largest * batch * bytes_per_element(precision_);
}

int InferencePass::kernels() const {
  int n = 0;
  for (const Layer& layer : model_.layers) n += runs_in_inference(layer) && !layer.fused;
  return n;
}

double InferencePass::batch_s(int batch) const {
  if (batch < 1) throw std::invalid_argument("an inference batch holds >= 1 sample");
  if (const auto it = memo_.find(batch); it != memo_.end()) return it->second;
  double device_s = 0;
  int launches = 0;
  for (std::size_t i = 0; i < model_.layers.size(); ++i) {
    const Layer& layer = model_.layers[i];
    if (!runs_in_inference(layer)) continue;
    if (!profile_.kernels.present()) {
      device_s += layer_time(layer, batch, precision_, device_, profile_).forward_s;
      ++launches;
      continue;
    }
    const double chained = layer.fused && i > 0 ? model_.layers[i - 1].activation_elements : 0;
    const LayerKernelTimes t = layer_kernel_times(layer, batch, precision_, device_, profile_, chained);
    device_s += t.forward.seconds;
    launches += t.forward.kernels;
  }
  // Without a kernel profile the roofline's times hold their launch cost already.
  const double host_s = profile_.kernels.present() ? launches * profile_.kernels.host.forward_kernel_s : 0;
  const double seconds = std::max(device_s, host_s);
  memo_.emplace(batch, seconds);
  return seconds;
}

}  // namespace dlsim::models
