// The ZeRO-3 / FSDP schedule of a rank's passes (see zero3_schedule.hpp).
#include "models/zero3_schedule.hpp"

#include <algorithm>

#include "models/zero3_builder.hpp"

namespace dlsim::models {

ZeroHostCosts zero_host_costs(const DeviceProfile& profile) {
  ZeroHostCosts h;
  if (profile.kernels.present()) {
    h.python_kernel_s = profile.kernels.host.forward_kernel_s;
    h.cpp_kernel_s = profile.kernels.host.backward_kernel_s;
  }
  return h;
}

std::vector<double> parameter_tensors(const Layer& share, const Layer& layer) {
  const double p = share.parameters;
  if (p <= 0) return {};
  const double copies = layer.experts > 0 ? std::max(1.0, share.parameters / (layer.parameters / layer.experts)) : 1.0;
  const double each = p / copies;
  std::vector<double> one;
  if (share.kind == LayerKind::linear) {
    const MatmulDims d = share.matmul.cols > 0 ? share.matmul : derive_matmul(share);
    const double weight = std::min(each, d.depth * d.cols * std::max(1.0, d.count));
    one.push_back(weight);
    if (each - weight > 0.5) one.push_back(each - weight);
  } else if (share.kind == LayerKind::norm && memory_kernel_of(share) == MemoryKernel::layer_norm) {
    one = {each / 2, each / 2};   // scale and shift
  } else {
    one = {each};
  }
  std::vector<double> out;
  for (int c = 0; c < static_cast<int>(copies); ++c) out.insert(out.end(), one.begin(), one.end());
  return out;
}

Zero3Schedule build_zero3_schedule(const ModelGraph& model, const ParallelPlan& plan, LayerRange range,
                                   const ZeroHostCosts& host) {
  return plan.zero.implementation == ZeroImplementation::fsdp ? zero3_detail::fsdp_schedule(model, plan, range, host)
                                                              : zero3_detail::deepspeed_schedule(model, plan, range, host);
}

}  // namespace dlsim::models
