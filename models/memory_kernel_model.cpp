// Memory-bound kernel curves (memory_kernel_model.hpp).
#include "models/memory_kernel_model.hpp"

#include <algorithm>
#include <cmath>

namespace dlsim::models {

std::string_view to_string(MemoryKernel k) {
  switch (k) {
    case MemoryKernel::stream: return "stream";
    case MemoryKernel::rms_norm: return "rms_norm";
    case MemoryKernel::layer_norm: return "layer_norm";
    case MemoryKernel::gated_act: return "gated_act";
    case MemoryKernel::activation: return "activation";
    case MemoryKernel::rotary: return "rotary";
    case MemoryKernel::embedding: return "embedding";
    case MemoryKernel::softmax: return "softmax";
    case MemoryKernel::dropout: return "dropout";
    case MemoryKernel::batch_norm: return "batch_norm";
    case MemoryKernel::relu: return "relu";
    case MemoryKernel::pool: return "pool";
    case MemoryKernel::cross_entropy: return "cross_entropy";
    case MemoryKernel::optimizer: return "optimizer";
    case MemoryKernel::count_: break;
  }
  return "?";
}

MemoryPasses memory_passes(MemoryKernel k) {
  switch (k) {
    case MemoryKernel::batch_norm: return {1.5, 2.5};
    case MemoryKernel::rms_norm:
    case MemoryKernel::layer_norm:
    case MemoryKernel::activation:
    case MemoryKernel::relu:
    case MemoryKernel::softmax:
    case MemoryKernel::cross_entropy: return {1, 1.5};
    case MemoryKernel::gated_act: return {1, 5.0 / 3.0};
    default: return {1, 1};
  }
}

std::array<MemoryKernel, 3> fallback_chain(MemoryKernel k) {
  using K = MemoryKernel;
  switch (k) {
    case K::rms_norm: return {K::rms_norm, K::layer_norm, K::stream};
    case K::layer_norm: return {K::layer_norm, K::rms_norm, K::stream};
    case K::softmax:
    case K::cross_entropy: return {K::layer_norm, K::rms_norm, K::stream};
    case K::gated_act: return {K::gated_act, K::activation, K::stream};
    case K::activation: return {K::activation, K::gated_act, K::stream};
    default: return {k, K::stream, K::stream};
  }
}

double MemoryCurve::at(double b) const {
  if (bytes.empty()) return 0;
  if (!(b > bytes.front())) return seconds.front();
  if (b >= bytes.back()) return seconds.back() * b / bytes.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(bytes.begin(), bytes.end(), b) - bytes.begin());
  const std::size_t lo = hi - 1;
  const double f = std::log(b / bytes[lo]) / std::log(bytes[hi] / bytes[lo]);
  return std::exp(std::log(seconds[lo]) + f * (std::log(seconds[hi]) - std::log(seconds[lo])));
}

const MemoryCurve* MemoryKernelParams::curve(MemoryKernel k) const {
  for (MemoryKernel c : fallback_chain(k)) {
    const MemoryCurve& found = curves[static_cast<std::size_t>(c)];
    if (!found.empty()) return &found;
  }
  return nullptr;
}

double memory_kernel_time(MemoryKernel k, double bytes, const MemoryKernelParams& params, double memory_bandwidth,
                          double fallback_efficiency) {
  if (const MemoryCurve* c = params.curve(k)) return c->at(bytes);
  return bytes / (memory_bandwidth * fallback_efficiency);
}

}  // namespace dlsim::models
