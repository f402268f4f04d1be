// DeviceProfile: the fraction of a DeviceSpec's (device_spec.hpp) peaks that real kernels achieve (0 < e <= 1),
// and the kernel-level model fitted on measured kernels (kernel_profile.hpp).
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "models/device_spec.hpp"
#include "models/kernel_profile.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

// Achieved fraction of peak, per resource. Defaults come from published measurements
// (see catalog.cpp); calibration (issue 6) replaces them with measured ones.
// Efficiency as a function of an operation's size, from measurements (calibration/): points
// (size, efficiency), sizes strictly increasing and > 0, efficiencies in (0, 1]. Between points
// it is linear in log(size); outside them it is the nearest end point, and the lookup counts the
// use as out of range (an explicit, counted fallback, never an extrapolation).
struct EfficiencyCurve {
  std::vector<double> size;         // GEMM: FLOPs of one call; memory: bytes moved by one call
  std::vector<double> efficiency;   // achieved / peak at that size
  bool empty() const { return size.empty(); }
  // Throws std::invalid_argument naming what is wrong (sizes not increasing, NaN, out of (0, 1]).
  void validate(const std::string& what) const;
  // The efficiency at `s` (> 0); increments *out_of_range when s lies outside the points.
  double at(double s, long long* out_of_range = nullptr) const;
};

// How fast real kernels run on a device, as fractions of its datasheet peaks. The scalars are
// the whole story for catalog devices (published efficiencies); a calibrated profile adds
// measured curves, which take precedence where present.
struct DeviceProfile {
  double matmul_efficiency = 0.8;   // dense GEMM/conv FLOP/s achieved / peak
  double memory_efficiency = 0.8;   // stream bandwidth achieved / peak
  double kernel_launch_overhead_s = 5e-6;  // fixed cost per kernel, seconds
  std::array<EfficiencyCurve, 6> matmul_curve{};  // by Precision: vs GEMM FLOPs per call
  EfficiencyCurve memory_curve;     // vs bytes moved per call
  std::string source;               // "" (catalog figures), or where the curves were measured,
                                    // e.g. "measured on H100-SXM (2026-11-22)", "transferred from ..."
  // The kernel-level model (kernel_profile.hpp) fitted on measured kernels; when present it times
  // every layer, and the scalars and curves above serve only devices without it.
  KernelProfile kernels;

  // Efficiencies for one operation: the curve where there is one, else the scalar.
  double matmul_at(Precision p, double flops, long long* out_of_range = nullptr) const;
  double memory_at(double bytes, long long* out_of_range = nullptr) const;
  bool calibrated() const;          // any curve present
  // A number that changes whenever a curve does (for memo keys).
  double fingerprint() const;
};

}  // namespace dlsim::models
