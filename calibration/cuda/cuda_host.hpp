// The host-side rules of the CUDA calibration backend, apart from any CUDA header so that they
// build and are tested on machines without nvcc or a GPU: which cases are valid, which a device
// supports, how much device memory a case needs, the random inputs (the same function runs on
// the device and here), the output tolerances per precision, the CPU references the outputs are
// checked against, and how many calls one timed sample holds. Units: bytes, seconds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/backend.hpp"

// Functions that run on the host and on the device (nvcc marks them __host__ __device__).
#ifdef __CUDACC__
#define DLSIM_HOST_DEVICE __host__ __device__
#else
#define DLSIM_HOST_DEVICE
#endif

namespace dlsim::calibration::cuda {

// What decides whether a device supports a case.
struct DeviceCaps {
  int cc_major = 0, cc_minor = 0;     // compute capability (9.0: H100/H200)
  std::uint64_t free_bytes = 0;       // free device memory
};

// Why a case cannot be measured by this backend on any device ("" when it can): shapes must be
// positive, memory kernels need whole 16-byte vectors, each family takes only some precisions.
std::string validate_case(const KernelCase& c);
// Why this device cannot run a valid case ("" when it can): TF32 and BF16 need compute
// capability 8.0 (Ampere), FP8 needs 8.9 (Ada, Hopper) and m, n, k multiples of 16 (cublasLt's
// FP8 rule), and the buffers must fit in 90% of the free memory.
std::string device_support(const KernelCase& c, const DeviceCaps& caps);
// Device memory the case allocates (inputs, outputs, partial sums), in bytes.
std::uint64_t device_bytes(const KernelCase& c);
// Bytes one element of the case occupies on the device (tf32 is stored as fp32; fp8 one byte).
std::uint64_t element_bytes(models::Precision p);

// Random inputs: a pure function of (seed, index), so the device fills buffers and the host can
// recompute any element. Magnitudes lie in [0.25, 1], signs are random: never zero, exactly
// representable ranges for every precision, no overflow in FP8 or FP16.
DLSIM_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  // splitmix64's finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom number
  // generators", OOPSLA 2014).
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
DLSIM_HOST_DEVICE inline float input_value(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t r = mix64(seed * 0x100000001B3ull ^ mix64(index));
  const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);   // 24 bits: [0, 1)
  const float magnitude = 0.25f + 0.75f * u;
  return (r & 1u) ? -magnitude : magnitude;
}
// The seed of one buffer of one case: cases and buffers draw different numbers from one seed.
std::uint64_t buffer_seed(std::uint64_t run_seed, std::size_t case_index, int buffer);

// Output tolerances. An output y passes when |y - ref| <= rel * scale + abs, where scale is the
// sum of the absolute terms (GEMM: sum_k |a b|; reduction: sum |x|) or |ref| for the others.
struct Tolerance {
  double rel = 0, abs = 0;
};
// Unit roundoff of a precision's storage format: 2^-(mantissa bits + 1).
double unit_roundoff(models::Precision p);
// The rule: 4 roundoffs of the output format (rounding the result, plus slack for the inputs'
// rounding where the library converts them, as TF32 does) plus the accumulator's error,
// 128 roundoffs of FP32 (about sqrt(16384) for sums of up to 16k random-signed terms) where
// the kernel sums many terms, 16 for one transcendental (erf in GELU), 4 for one fused
// multiply-add. GEMM in FP8 writes BF16, so its output format is BF16. Byte copies and the
// integer checksum of `read` are exact: {0, 0}.
Tolerance tolerance(KernelFamily family, models::Precision p);

// CPU references in double (inputs already rounded to the case's precision).
double gelu_reference(double x);   // x * Phi(x), the erf form PyTorch uses by default
void softmax_reference(const std::vector<double>& row, std::vector<double>& out);
void layernorm_reference(const std::vector<double>& row, const std::vector<double>& gamma,
                         const std::vector<double>& beta, double eps, std::vector<double>& out);
constexpr double layernorm_eps = 1e-5;   // PyTorch's nn.LayerNorm default

// Compares outputs with references; the first failure is described in `failure`.
struct CheckResult {
  bool ok = true;
  double worst_ratio = 0;   // max over elements of |y - ref| / (rel * scale + abs)
  std::string failure;
};
void check_value(CheckResult& r, const char* what, std::int64_t index, double value, double reference,
                 double scale, const Tolerance& tol);

// How many calls one timed sample holds so that it lasts at least `target_s` (CUDA events
// resolve about half a microsecond): 1 for a call that long, at most `max_calls`.
int calls_per_sample(double single_call_s, double target_s = 1e-3, int max_calls = 1000);

}  // namespace dlsim::calibration::cuda
