#include "models/roofline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dlsim::models {

bool is_matrix_layer(LayerKind kind) {
  return kind == LayerKind::conv || kind == LayerKind::linear || kind == LayerKind::matmul;
}

namespace {

double achieved_flops(LayerKind kind, Precision precision, const DeviceSpec& device,
                      const DeviceProfile& profile) {
  double peak = device.peak(precision);
  if (!is_matrix_layer(kind) && device.peak(Precision::fp32) > 0) peak = device.peak(Precision::fp32);
  return peak * profile.matmul_efficiency;
}

double bound_time(double flops, double bytes, double flop_rate, double byte_rate) {
  return std::max(flops / flop_rate, bytes / byte_rate);
}

}  // namespace

LayerTime layer_time(const Layer& layer, int batch, Precision precision, const DeviceSpec& device,
                     const DeviceProfile& profile) {
  if (!device.supports(precision)) {
    throw std::invalid_argument("device " + device.name + " has no " +
                                std::string(to_string(precision)) + " support");
  }
  if (batch < 1) throw std::invalid_argument("layer_time: batch must be >= 1");
  const double b = batch;
  const double element = bytes_per_element(precision);
  const double flop_rate = achieved_flops(layer.kind, precision, device, profile);
  const double byte_rate = device.memory_bandwidth * profile.memory_efficiency;

  const double activations = (layer.input_elements + layer.activation_elements) * b * element;
  const double weights = layer.parameters * element;
  const double forward_flops = layer.forward_flops * b;

  LayerTime t;
  t.forward_s = bound_time(forward_flops, activations + weights, flop_rate, byte_rate) +
                profile.kernel_launch_overhead_s;
  // Two kernels where the layer has weights (input gradient, weight gradient), else one.
  const double backward_kernels = layer.parameters > 0 ? 2.0 : 1.0;
  t.backward_s = bound_time(backward_flops(layer) * b, 2.0 * (activations + weights), flop_rate, byte_rate) +
                 backward_kernels * profile.kernel_launch_overhead_s;
  return t;
}

}  // namespace dlsim::models
