// Made-up GPUs and ideal GEMM constants shared by the kernel-model tests (models/ and
// calibration/): a device whose numbers make hand computation easy.
#pragma once
#include <string>

#include "models/device_spec.hpp"
#include "models/gemm_model.hpp"

namespace dlsim::test {

inline models::DeviceSpec test_gpu(const std::string& name, int units, double fp16_peak, double bandwidth,
                                   models::Generation generation = models::Generation::ampere, double fp32_peak = 0) {
  models::DeviceSpec d;
  d.name = name;
  d.peak_flops[static_cast<int>(models::Precision::fp16)] = fp16_peak;
  d.peak_flops[static_cast<int>(models::Precision::fp32)] = fp32_peak;
  d.memory_bandwidth = bandwidth;
  d.generation = generation;
  d.compute_units = units;
  return d;
}

// Every tile at the peak (e_max 1, no tile overhead, no short-K steps), full bandwidth, no fixed time.
inline models::GemmParams ideal_gemm() {
  models::GemmParams p;
  p.peak_fraction = 1;
  p.tile_overhead = 0;
  p.k_overhead = 0;
  p.bandwidth_fraction = 1;
  p.fixed_s = 0;
  return p;
}

}  // namespace dlsim::test
