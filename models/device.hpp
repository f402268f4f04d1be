// DeviceSpec: what a datasheet says about one accelerator (GPU or TPU chip).
// Units: FLOP/s, bytes, bytes/s. A peak of 0 means the precision is not supported.
// DeviceProfile: the fraction of those peaks that real kernels achieve (0 < e <= 1).
#pragma once
#include <array>
#include <string>

#include "models/precision.hpp"

namespace dlsim::models {

struct DeviceSpec {
  std::string name;           // catalog name, e.g. "V100-16GB"
  std::string description;    // e.g. "NVIDIA Tesla V100 SXM2 16GB"
  std::array<double, 6> peak_flops{};  // indexed by Precision; FLOP/s, dense
  double memory_bytes = 0;             // device memory capacity
  double memory_bandwidth = 0;         // bytes/s
  double intra_node_link_bandwidth = 0;  // bytes/s per direction to peers in the node
  double pcie_bandwidth = 16e9;          // bytes/s per direction of its host link (x16)
  std::string source;                  // where the figures come from

  double peak(Precision p) const { return peak_flops[static_cast<int>(p)]; }
  bool supports(Precision p) const { return peak(p) > 0; }
};

// Achieved fraction of peak, per resource. Defaults come from published measurements
// (see catalog.cpp); calibration (issue 6) replaces them with measured ones.
struct DeviceProfile {
  double matmul_efficiency = 0.8;   // dense GEMM/conv FLOP/s achieved / peak
  double memory_efficiency = 0.8;   // stream bandwidth achieved / peak
  double kernel_launch_overhead_s = 5e-6;  // fixed cost per kernel, seconds
};

}  // namespace dlsim::models
