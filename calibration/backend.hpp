// What a calibration backend measures and how it reports it. A backend (CPU: cpu_backend.hpp;
// CUDA: cuda/cuda_backend.hpp, built only when nvcc is found) runs micro-kernel cases on its
// local device and returns one Measurement per case: every timed repeat after warm-up, on fresh
// random inputs, with the output checked against a reference. The runner (runner.hpp) turns the
// repeats into medians and spreads and refuses unstable ones; the fitter (fit.hpp) turns
// measurements into a models::DeviceProfile. Units: seconds, bytes, FLOPs.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/gemm_model.hpp"
#include "models/precision.hpp"

namespace dlsim::calibration {

enum class KernelFamily {
  gemm,          // C = A x B through the vendor library (cuBLAS; Eigen on the CPU)
  gemm_naive,    // our own plain GEMM kernel: a floor for the library
  copy,          // device memory: read one buffer, write another
  read,          // read a buffer (reduce it to one value so the reads cannot be skipped)
  write,         // write a buffer
  elementwise,   // y = a * x + y
  activation,    // y = gelu(x)
  reduction,     // sum of a buffer
  softmax,       // row softmax of a rows x cols matrix
  layernorm,     // row layer norm of a rows x cols matrix
  host_to_device,
  device_to_host,
  launch,        // an empty kernel: the fixed cost of one launch
};
std::string to_string(KernelFamily f);

// One case to measure.
struct KernelCase {
  KernelFamily family = KernelFamily::gemm;
  models::Precision precision = models::Precision::fp32;
  std::int64_t m = 0, n = 0, k = 0;   // GEMM: shape; softmax/layernorm: m rows x n cols
  std::int64_t elements = 0;          // other kernels: elements processed (launch: 0)
  // GEMM: the row-major product timed (models/gemm_model.hpp), in cuBLAS's column-major terms
  // m = the product's columns (a layer's features), n = its rows (tokens): nt is cuBLAS's TN call
  // (A stored k x m, B k x n), nn its NN call (A m x k, B k x n), tn its NT call (A m x k, B n x k).
  models::GemmLayout layout = models::GemmLayout::nt;
  double flops() const;               // arithmetic of one call (GEMM: 2mnk)
  double bytes() const;               // memory traffic of one call (each operand read or written once)
};

struct Measurement {
  KernelCase kernel;
  std::vector<double> times_s;        // every timed repeat, in order
  bool output_ok = false;             // the output matched the reference within tolerance
  std::string note;                   // why a case was skipped or failed ("fp8 unsupported", ...)
};

struct DeviceInfo {
  std::string name;                   // "NVIDIA H100 80GB HBM3", "Intel(R) Xeon(R) ..."
  std::string backend;                // "cuda" or "cpu"
  std::string driver, runtime;        // CUDA driver and runtime versions ("" on the CPU)
  int units = 0;                      // SMs or CPU threads used
};

struct RunOptions {
  int warmup = 3;                     // untimed calls before the repeats
  int repeats = 15;                   // timed calls per case
  std::uint64_t seed = 1;             // random inputs
};

using Progress = std::function<void(std::size_t done, std::size_t total, const KernelCase& current)>;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo info() const = 0;
  // Whether the backend can run kernels here (a CUDA backend without a device: false).
  virtual bool available() const = 0;
  virtual bool supports(const KernelCase& c) const = 0;
  // Measures every case it supports (others come back with an empty times_s and a note).
  virtual std::vector<Measurement> measure(const std::vector<KernelCase>& cases, const RunOptions& options,
                                           const Progress& progress) = 0;
};

// The CPU backend (Eigen and plain loops; `threads` 0: what Eigen uses by default).
std::unique_ptr<Backend> make_cpu_backend(int threads = 0);
// The CUDA backend (calibration/cuda/, built when nvcc is found); nullptr when dlsim was built
// without CUDA. available() tells whether a device is present.
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace dlsim::calibration
