// One kernel timed by the kernel-level model of the shipped profiles, for `dlsim kernel` and
// dlsim.kernel_time: a GEMM by shape (models/gemm_model.hpp) or a memory-bound kernel by class
// and bytes (models/memory_kernel_model.hpp) on a catalog device, with what the model decided and
// the interval the profile's held-out errors give (KernelProfile::band). Whole measured tables:
// kernel_table_predict.hpp.
#pragma once
#include <ostream>
#include <string>

#include "experiment/config_error.hpp"
#include "models/catalog.hpp"
#include "models/kernel_profile.hpp"

namespace dlsim::experiment {

// The catalog with the shipped kernel profiles (builtin_catalog()), built once per process.
const models::Catalog& kernel_catalog();

// A catalog device the kernel model can time.
struct KernelDevice {
  std::string name;  // catalog name, e.g. "A100-80GB"
  const models::DeviceSpec* spec = nullptr;
  const models::DeviceProfile* profile = nullptr;  // profile->kernels.present()
};

// A catalog device name ("A100-80GB") or the GPU label of a measured table ("A100": see
// catalog_device_of_gpu_label). Throws ConfigError(where, key, why) for an unknown name and for a
// device without a kernel profile (TPUs: no kernel was measured on one, they run on the roofline).
KernelDevice kernel_device(const std::string& device_or_gpu, const SourceLocation& where, const std::string& key);

// Where a prediction is likely to fall: the predicted time times the p10 and p90 of measured /
// predicted over the family's held-out kernels. Without held-out cases (band.cases 0) the
// interval is the prediction itself.
struct KernelInterval {
  models::ErrorBand band;
  double low_s = 0, high_s = 0;
};
KernelInterval interval_of(const models::KernelProfile& kernels, models::KernelFamilyKind family, double seconds);

struct GemmPrediction {
  KernelDevice device;
  models::GemmShape shape;
  models::Precision precision = models::Precision::fp16;
  models::Precision fitted = models::Precision::fp16;  // whose constants were used (gemm_for)
  models::GemmEstimate estimate;
  double tflops = 0;  // achieved: 2 m n k batch / seconds, TFLOP/s
  KernelInterval interval;
};
// Throws ConfigError(where, "precision", why) when the device has no peak for `precision`,
// ConfigError(where, "shape", why) unless m, n, k and batch are >= 1.
GemmPrediction predict_gemm(const KernelDevice& device, const models::GemmShape& shape, models::Precision precision,
                            const SourceLocation& where);

struct MemoryPrediction {
  KernelDevice device;
  models::MemoryKernel kernel = models::MemoryKernel::stream;
  bool has_curve = false;                                     // false: bytes / (bandwidth x memory_efficiency)
  models::MemoryKernel curve = models::MemoryKernel::stream;  // the measured class it ran on (fallback_chain)
  double bytes = 0, seconds = 0;
  KernelInterval interval;
};
// Throws ConfigError(where, "bytes", why) unless bytes > 0.
MemoryPrediction predict_memory_kernel(const KernelDevice& device, models::MemoryKernel kernel, double bytes,
                                       const SourceLocation& where);

// Command-line values; ConfigError(where, key, why) when malformed.
// "4096x4096x4096": m x n x k, whole numbers >= 1.
models::GemmShape parse_gemm_shape(const std::string& text, const SourceLocation& where, const std::string& key);
models::GemmLayout parse_gemm_layout(const std::string& text, const SourceLocation& where, const std::string& key);
models::Precision parse_kernel_precision(const std::string& text, const SourceLocation& where, const std::string& key);
models::MemoryKernel parse_memory_kernel(const std::string& text, const SourceLocation& where, const std::string& key);
// A whole number >= 1 (a GEMM batch).
double parse_kernel_count(const std::string& text, const SourceLocation& where, const std::string& key);
// Bytes: a whole number, or a size with a unit ("64MiB", units.hpp).
double parse_kernel_bytes(const std::string& text, const SourceLocation& where, const std::string& key);
std::string_view to_string(models::GemmLayout layout);

// What `dlsim kernel --gemm` and `--memory` print: the time, the achieved rate, the model's
// decision and the error interval, a few lines.
void print_gemm_prediction(std::ostream& out, const GemmPrediction& p);
void print_memory_prediction(std::ostream& out, const MemoryPrediction& p);

}  // namespace dlsim::experiment
