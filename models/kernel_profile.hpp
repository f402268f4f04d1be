// KernelProfile: what the kernel-level compute model knows of one device, fitted on measured
// kernel times (calibration/kernel_fit.hpp, `dlsim calibrate --import`): the GEMM constants
// per precision, the memory-bound kernel curves, the convolution algorithm factors, and the
// spread of the held-out errors per kernel family (the error bands of a prediction).
// An empty profile (no GEMM fitted) means the device runs on the roofline (roofline.hpp).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "models/conv_model.hpp"
#include "models/gemm_model.hpp"
#include "models/memory_kernel_model.hpp"

namespace dlsim::models {

// Kernel families whose errors are tracked separately.
enum class KernelFamilyKind { gemm, memory, conv, attention, count_ };
inline constexpr std::size_t kKernelFamilies = static_cast<std::size_t>(KernelFamilyKind::count_);
std::string_view to_string(KernelFamilyKind f);

// Held-out error of a family: quantiles of measured / predicted over kernels predicted by a
// fit that did not see their model (leave-one-model-out) or their fold. 0 cases: unknown.
struct ErrorBand {
  int cases = 0;
  double p10 = 1, p50 = 1, p90 = 1;   // measured / predicted
  double median_abs = 0;              // median |predicted / measured - 1|
  double p90_abs = 0;                 // 90th percentile of the same
};

// The host side of a training step: CPU seconds to issue one kernel. The kernel model's times
// are device times (the measured tables exclude launches); a pass whose kernels are shorter than
// this is launch-bound (iteration_program.cpp). Defaults, for PyTorch eager mode on a modern
// server CPU:
// - launch: cudaLaunchKernel costs the host 2.6-3.8 us per asynchronous launch (NVIDIA,
//   "Getting Started with CUDA Graphs", 2019: 3.8 us per overlapped launch on V100; 2.65 us per
//   enqueue measured in ahrefs/ocannl issue 488);
// - forward: a Python-level op adds its dispatch and autograd recording, about 5 us
//   (pytorch/pytorch issue 41383: 5-7 us per eager op with requires_grad): 8 us in all;
// - backward: ops run from the C++ autograd engine, about 1-2 us of dispatch (pytorch issue
//   62032: 0.7 us per C++ dispatcher call) plus the launch: 5 us.
struct HostOverhead {
  double forward_kernel_s = 8e-6;
  double backward_kernel_s = 5e-6;
};

struct KernelProfile {
  std::array<GemmParams, 6> gemm;     // by Precision; a precision not fitted borrows (gemm_for)
  MemoryKernelParams memory;
  ConvParams conv;
  std::array<ErrorBand, kKernelFamilies> bands;
  HostOverhead host;
  // The fraction of the fitted tensor-core rate the device keeps when its tensor cores run back to
  // back (power_limit.hpp); 1: not measured, the fitted (cool, short-burst) rate throughout.
  double sustained_tensor_rate = 1;
  std::string source;                 // the tables it was fitted on

  bool present() const;               // some GEMM precision fitted
  // The GEMM constants for `p`: its own; else bf16 <-> fp16 (one tensor-core rate on every GPU
  // that has both); else the nearest fitted precision's, whose fractions then apply to p's peak.
  // nullptr when none is fitted.
  const GemmParams* gemm_for(Precision p) const;
  const ErrorBand& band(KernelFamilyKind f) const { return bands[static_cast<std::size_t>(f)]; }
};

}  // namespace dlsim::models
