// The power limit: a GPU whose tensor cores run back to back holds its board power at the limit by
// lowering its SM clock, so a training step's GEMMs run slower than the same kernels timed in
// short bursts on a cool GPU, which is how every kernel table the model is fitted on was timed.
//
// Measured by dlsim on H200s (700 W, the H100 SXM's limit and SMs; calibration/measured/h200/):
// back-to-back 8192^3 BF16 GEMMs run at 1,980 MHz and 760-825 TFLOP/s for the first 50 ms, then
// at 1,425-1,485 MHz, 690 W and 655-695 TFLOP/s (h200-sustained*.csv); FP8 GEMMs the same way,
// 1,560 then 1,260-1,300 TFLOP/s (h200-fp8-sustained.csv). The 96 training GEMMs each timed after
// 0.4 s of such load, on two machines (h200-training-gemm-sustained.csv and its repeat, 192
// rows), take 1.143x the time dlsim's default kernel model gives them (median): under continuous
// load a Hopper GPU keeps 1 / 1.143 = 0.875 of the model's tensor-core rate
// (tests/experiment/test_h200_measured.cpp recomputes it from those files).
//
// A step is not all tensor-core work: its memory-bound kernels draw less power, so the clock
// sits between the two ends. The replay takes the simplest law that meets both measured ends:
// with a share `duty` of the step's kernel time in tensor-core kernels (GEMMs, attention,
// convolutions with tensor-core math, timed at the model's rates), tensor-core kernels keep
// 1 - (1 - rate) x duty of their rate; a step of GEMMs alone keeps `rate`, one without any
// keeps its clock. Exposed communication, which idles the GPU, is not counted (not measured).
//
// Blackwell, not measured by dlsim: FlashInfer's maintainers timed BF16 FlashAttention-4 (batch 4,
// 8,192 tokens, 16 heads of 128) 100 times back to back on a B200 (flashinfer-ai/flashinfer pull
// request 2899, 2026-03-26): 1,450 TFLOP/s at its best (iterations 10-19), 1,237 once fully
// throttled (iterations 70-79), the SM clock down from 1,965 MHz to about 1,580 at about 1,000 W.
// A Blackwell GPU keeps 1,237 / 1,450 = 0.853 of its tensor-core rate under continuous load, by
// the same law. Measured on a B200 (1,000 W); taken for the GB200 (1,200 W, higher clocks) too.
#pragma once
#include <cstdio>
#include <string>

#include "models/device_spec.hpp"
#include "models/kernel_profile.hpp"

namespace dlsim::models {

// The fraction of the kernel model's tensor-core rate a Hopper GPU keeps under continuous load.
inline constexpr double kHopperSustainedTensorRate = 0.875;
// The same for a Blackwell GPU (the B200 measurement above).
inline constexpr double kBlackwellSustainedTensorRate = 1237.0 / 1450.0;

// What has been measured for a generation: the rate its tensor cores keep under continuous load
// and where (named in the profile's source); rate 1 and no source where nothing was measured.
struct SustainedTensorRate {
  double rate = 1.0;
  const char* measured_on = "";
};
inline SustainedTensorRate measured_sustained_tensor(Generation generation) {
  if (generation == Generation::hopper) return {kHopperSustainedTensorRate, "an H200"};
  if (generation == Generation::blackwell) return {kBlackwellSustainedTensorRate, "a B200, FlashInfer PR 2899"};
  return {};
}
inline double measured_sustained_tensor_rate(Generation generation) {
  return measured_sustained_tensor(generation).rate;
}

// How much longer a tensor-core kernel runs in a step with that `duty` (0-1) on a device whose
// profile keeps `sustained_rate` (KernelProfile::sustained_tensor_rate) under continuous load.
inline double power_limited_slowdown(double sustained_rate, double duty) {
  if (!(sustained_rate > 0) || sustained_rate >= 1 || !(duty > 0)) return 1.0;
  return 1.0 / (1.0 - (1.0 - sustained_rate) * (duty < 1 ? duty : 1.0));
}

// A kernel profile timed in short bursts (every calibration, the shipped tables alike) that states
// no rate under load (1) takes its generation's measured rate (Hopper, Blackwell). Returns the
// note to append to the profile's source, or "" when nothing changed.
inline std::string adopt_power_limit(KernelProfile& kernels, const DeviceSpec& device) {
  const SustainedTensorRate measured = measured_sustained_tensor(device.generation);
  if (!kernels.present() || kernels.sustained_tensor_rate < 1 || !(measured.rate < 1)) return "";
  kernels.sustained_tensor_rate = measured.rate;
  char note[136];
  std::snprintf(note, sizeof note, "; tensor-core rate under continuous load x %.3g (power limit, measured on %s)",
                measured.rate, measured.measured_on);
  return note;
}

}  // namespace dlsim::models
