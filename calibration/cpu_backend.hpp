// The CPU calibration backend: the kernels of backend.hpp that make sense on a CPU, timed with
// std::chrono::steady_clock. GEMM through Eigen (fp32, fp64) and a plain triple loop (fp32, the
// floor); copy/read/write streams, axpy, gelu, sum, row softmax and row layer norm (fp32); and
// `launch`, the cost of calling an empty, non-inlined function. Host/device copies do not exist
// on a CPU and come back unsupported. Each case gets fresh random inputs in [0.5, 1.5) (never
// zeros) and its output is checked against a double-precision recomputation before timing.
// A timed repeat runs the kernel enough times back to back to last >= 20 us (the clock's
// resolution is far coarser than a 10 ns call) and reports the time of one call.
#pragma once
#include <memory>

#include "calibration/backend.hpp"

namespace dlsim::calibration {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads);
  DeviceInfo info() const override;
  bool available() const override { return true; }
  bool supports(const KernelCase& c) const override;
  std::vector<Measurement> measure(const std::vector<KernelCase>& cases, const RunOptions& options,
                                   const Progress& progress) override;
  Measurement measure_one(const KernelCase& c, const RunOptions& options, std::uint64_t case_seed);

 private:
  int threads_;
};

// The host's CPU model ("AMD EPYC ..."), from /proc/cpuinfo; "unknown CPU" when not found.
std::string cpu_model_name();

}  // namespace dlsim::calibration
