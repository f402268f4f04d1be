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
  char ratios[96];
  std::snprintf(ratios, sizeof ratios, "bandwidth x %.3g", bandwidth);
  out.source = "transferred from " + measured_on.name + " to " + target.name + " by datasheet ratios (" + ratios +
               "; compute per precision)" + (measured.source.empty() ? "" : "; " + measured.source);
  return out;
}

}  // namespace dlsim::models
