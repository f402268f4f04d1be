#include "models/profile_transfer.hpp"

#include <cstdio>
#include <string>

namespace dlsim::models {
namespace {

EfficiencyCurve scaled(const EfficiencyCurve& c, double ratio) {
  EfficiencyCurve out = c;
  for (double& s : out.size) s *= ratio;
  return out;
}

}  // namespace

DeviceProfile transfer_profile(const DeviceProfile& measured, const DeviceSpec& measured_on, const DeviceSpec& target) {
  if (measured_on.name == target.name) return measured;
  DeviceProfile out = measured;
  for (std::size_t p = 0; p < out.matmul_curve.size(); ++p) {
    const double from = measured_on.peak_flops[p], to = target.peak_flops[p];
    out.matmul_curve[p] = (from > 0 && to > 0 && !measured.matmul_curve[p].empty()) ? scaled(measured.matmul_curve[p], to / from)
                                                                                    : EfficiencyCurve{};
  }
  const double bandwidth = measured_on.memory_bandwidth > 0 ? target.memory_bandwidth / measured_on.memory_bandwidth : 1.0;
  if (!measured.memory_curve.empty()) out.memory_curve = scaled(measured.memory_curve, bandwidth);
  if (measured.kernels.present()) out.kernels = transfer_kernels(measured.kernels, measured_on, target);
  char ratios[96];
  std::snprintf(ratios, sizeof ratios, "bandwidth x %.3g", bandwidth);
  out.source = "transferred from " + measured_on.name + " to " + target.name + " by datasheet ratios (" + ratios +
               "; compute per precision)" + (measured.source.empty() ? "" : "; " + measured.source);
  return out;
}

KernelProfile transfer_kernels(const KernelProfile& measured, const DeviceSpec& measured_on, const DeviceSpec& target) {
  if (measured_on.name == target.name) return measured;
  KernelProfile out = measured;
  const double ratio = measured_on.memory_bandwidth > 0 && target.memory_bandwidth > 0
                           ? measured_on.memory_bandwidth / target.memory_bandwidth
                           : 1.0;
  for (MemoryCurve& c : out.memory.curves) {
    if (c.empty()) continue;
    const double t0 = c.seconds.front();
    for (double& s : c.seconds) s = t0 + (s - t0) * ratio;
  }
  char note[96];
  std::snprintf(note, sizeof note, " (memory-bound times x %.3g)", ratio);
  out.source = "transferred from " + measured_on.name + " to " + target.name + " by datasheet ratios" + note +
               (measured.source.empty() ? "" : "; " + measured.source);
  return out;
}

}  // namespace dlsim::models
