#include "models/roofline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dlsim::models {

bool is_matrix_layer(LayerKind kind) {
  return kind == LayerKind::conv || kind == LayerKind::linear || kind == LayerKind::matmul;
}

namespace {

// Vector units: the FP32 peak (the precision's on devices without an FP32 figure, TPUs).
double vector_peak(Precision precision, const DeviceSpec& device) {
  return device.peak(Precision::fp32) > 0 ? device.peak(Precision::fp32) : device.peak(precision);
}

}  // namespace

LayerTime layer_time(const Layer& layer, int batch, Precision precision, const DeviceSpec& device,
                     const DeviceProfile& profile, long long* out_of_range) {
  if (!device.supports(precision)) {
    throw std::invalid_argument("device " + device.name + " has no " +
                                std::string(to_string(precision)) + " support");
  }
  if (batch < 1) throw std::invalid_argument("layer_time: batch must be >= 1");
  const double b = batch;
  const double element = bytes_per_element(precision);
  const bool matrix = is_matrix_layer(layer.kind);

  const double activations = (layer.input_elements + layer.activation_elements) * b * element;
  const double weights = layer.parameters * element;
  const double forward_flops = layer.forward_flops * b;
  const double backward_total = backward_flops(layer) * b;
  // Two kernels where the layer has weights (input gradient, weight gradient), else one.
  const double backward_kernels = layer.parameters > 0 ? 2.0 : 1.0;

  // Time of `kernels` equal kernels doing `flops` and moving `bytes` in all.
  const auto kernel_time = [&](double flops, double bytes, double kernels) {
    const double per_flops = flops / kernels, per_bytes = bytes / kernels;
    const double flop_rate = matrix ? device.peak(precision) * profile.matmul_at(precision, per_flops, out_of_range)
                                    : vector_peak(precision, device) * profile.matmul_efficiency;
    const double byte_rate = device.memory_bandwidth * profile.memory_at(per_bytes, out_of_range);
    return kernels * (std::max(per_flops / flop_rate, per_bytes / byte_rate) + profile.kernel_launch_overhead_s);
  };
  LayerTime t;
  t.forward_s = kernel_time(forward_flops, activations + weights, 1.0);
  t.backward_s = kernel_time(backward_total, 2.0 * (activations + weights), backward_kernels);
  return t;
}

}  // namespace dlsim::models
