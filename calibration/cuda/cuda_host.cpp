#include "calibration/cuda/cuda_host.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dlsim::calibration::cuda {
namespace {

using models::Precision;

bool is_one_of(Precision p, std::initializer_list<Precision> allowed) {
  return std::find(allowed.begin(), allowed.end(), p) != allowed.end();
}

bool is_memory_family(KernelFamily f) {
  return f == KernelFamily::copy || f == KernelFamily::read || f == KernelFamily::write;
}

bool is_row_family(KernelFamily f) { return f == KernelFamily::softmax || f == KernelFamily::layernorm; }

bool is_gemm_family(KernelFamily f) { return f == KernelFamily::gemm || f == KernelFamily::gemm_naive; }

std::string precision_name(Precision p) { return std::string(models::to_string(p)); }

}  // namespace

std::uint64_t element_bytes(Precision p) {
  switch (p) {
    case Precision::fp64: return 8;
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8: return 1;
  }
  return 4;
}

std::string validate_case(const KernelCase& c) {
  const Precision p = c.precision;
  if (is_gemm_family(c.family)) {
    if (c.m <= 0 || c.n <= 0 || c.k <= 0) return "GEMM needs positive m, n, k";
    constexpr std::int64_t int_max = 2147483647;   // cuBLAS takes int dimensions
    if (c.m > int_max || c.n > int_max || c.k > int_max) return "GEMM dimensions must be below 2^31 (cuBLAS)";
    // The plain kernel's grid has n / 16 blocks in y, at most 65535 (CUDA's limit).
    if (c.family == KernelFamily::gemm_naive && c.n > 65535 * 16)
      return "the plain GEMM kernel takes n up to 1048560";
    if (c.family == KernelFamily::gemm_naive && p != Precision::fp32)
      return "the plain GEMM kernel runs in fp32 only, not " + precision_name(p);
    if (c.layout != models::GemmLayout::nt && (c.family == KernelFamily::gemm_naive || p == Precision::fp8))
      return "the plain GEMM kernel and FP8 (cublasLt's TN) time the nt layout only";
    return "";
  }
  if (is_row_family(c.family)) {
    if (c.m <= 0 || c.n <= 0) return "row kernels need positive m (rows) and n (columns)";
    if (c.m > 2147483647) return "row kernels take fewer than 2^31 rows (one block per row)";
  } else if (c.family == KernelFamily::launch) {
    if (c.elements != 0) return "the launch kernel takes no elements (elements must be 0)";
    return "";
  } else if (c.elements <= 0) {
    return "the kernel needs a positive element count";
  }
  if (is_memory_family(c.family)) {
    if ((static_cast<std::uint64_t>(c.elements) * element_bytes(p)) % 16 != 0)
      return "memory kernels move whole 16-byte vectors: elements x bytes per element must be a multiple of 16";
    return "";
  }
  if (c.family == KernelFamily::host_to_device || c.family == KernelFamily::device_to_host) return "";
  // elementwise, activation, reduction, softmax, layernorm: typed kernels.
  if (!is_one_of(p, {Precision::fp32, Precision::fp16, Precision::bf16}))
    return "this kernel runs in fp32, fp16 or bf16, not " + precision_name(p);
  return "";
}

std::uint64_t device_bytes(const KernelCase& c) {
  const std::uint64_t e = element_bytes(c.precision);
  const auto m = static_cast<std::uint64_t>(std::max<std::int64_t>(c.m, 0));
  const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(c.n, 0));
  const auto k = static_cast<std::uint64_t>(std::max<std::int64_t>(c.k, 0));
  const auto elements = static_cast<std::uint64_t>(std::max<std::int64_t>(c.elements, 0));
  switch (c.family) {
    case KernelFamily::gemm:
    case KernelFamily::gemm_naive: {
      // FP8 writes BF16; every other precision writes its own format.
      const std::uint64_t out = c.precision == Precision::fp8 ? 2 : e;
      return (m * k + k * n) * e + m * n * out;
    }
    case KernelFamily::copy:
    case KernelFamily::elementwise:
    case KernelFamily::activation: return 2 * elements * e;
    case KernelFamily::read:
    case KernelFamily::reduction: return elements * e + 65536 * 8;   // + per-block partial sums
    case KernelFamily::write:
    case KernelFamily::host_to_device:
    case KernelFamily::device_to_host: return elements * e;
    case KernelFamily::softmax: return 2 * m * n * e;
    case KernelFamily::layernorm: return 2 * m * n * e + 2 * n * e;   // + gamma, beta
    case KernelFamily::launch: return 0;
  }
  return 0;
}

std::string device_support(const KernelCase& c, const DeviceCaps& caps) {
  const int cc = caps.cc_major * 10 + caps.cc_minor;
  const Precision p = c.precision;
  if ((p == Precision::tf32 || p == Precision::bf16) && cc < 80)
    return precision_name(p) + " needs compute capability 8.0 (the device has " + std::to_string(caps.cc_major) + "." +
           std::to_string(caps.cc_minor) + ")";
  if (p == Precision::fp8 && c.family == KernelFamily::gemm) {
    if (cc < 89)
      return "fp8 unsupported: FP8 GEMM needs compute capability 8.9 (the device has " + std::to_string(caps.cc_major) +
             "." + std::to_string(caps.cc_minor) + ")";
    if (c.m % 16 != 0 || c.n % 16 != 0 || c.k % 16 != 0) return "FP8 GEMM needs m, n, k multiples of 16 (cublasLt)";
  }
  const std::uint64_t need = device_bytes(c);
  if (static_cast<double>(need) > 0.9 * static_cast<double>(caps.free_bytes)) {
    char text[160];
    std::snprintf(text, sizeof text, "needs %.2f GiB of device memory, more than 90%% of the %.2f GiB free",
                  static_cast<double>(need) / (1u << 30), static_cast<double>(caps.free_bytes) / (1u << 30));
    return text;
  }
  return "";
}

std::uint64_t buffer_seed(std::uint64_t run_seed, std::size_t case_index, int buffer) {
  return mix64(mix64(run_seed) ^ (static_cast<std::uint64_t>(case_index) << 8) ^ static_cast<std::uint64_t>(buffer));
}

double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::fp64: return std::ldexp(1.0, -53);
    case Precision::fp32: return std::ldexp(1.0, -24);
    case Precision::tf32:
    case Precision::fp16: return std::ldexp(1.0, -11);   // 10 stored mantissa bits
    case Precision::bf16: return std::ldexp(1.0, -8);    // 7 stored mantissa bits
    case Precision::fp8: return std::ldexp(1.0, -4);     // e4m3: 3 stored mantissa bits
  }
  return 1;
}

Tolerance tolerance(KernelFamily family, Precision p) {
  const double u32 = unit_roundoff(Precision::fp32);
  switch (family) {
    case KernelFamily::gemm:
    case KernelFamily::gemm_naive: {
      if (p == Precision::fp64) return {132 * unit_roundoff(Precision::fp64), 0};
      const Precision out = p == Precision::fp8 ? Precision::bf16 : p;
      return {4 * unit_roundoff(out) + 128 * u32, 0};
    }
    case KernelFamily::elementwise: return {4 * unit_roundoff(p) + 4 * u32, 0};
    case KernelFamily::activation: return {4 * unit_roundoff(p) + 16 * u32, 16 * u32};
    case KernelFamily::reduction: return {4 * u32 + 128 * u32, 0};   // the sum is written in fp32
    // Softmax outputs of long rows fall below fp16's smallest normal (6.1e-5), where its spacing is
    // 2^-24 = u32: the absolute term covers their rounding.
    case KernelFamily::softmax: return {4 * unit_roundoff(p) + 128 * u32, 4 * u32};
    case KernelFamily::layernorm: return {4 * unit_roundoff(p) + 128 * u32, 0};
    case KernelFamily::copy:
    case KernelFamily::read:
    case KernelFamily::write:
    case KernelFamily::host_to_device:
    case KernelFamily::device_to_host:
    case KernelFamily::launch: return {0, 0};
  }
  return {0, 0};
}

double gelu_reference(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

void softmax_reference(const std::vector<double>& row, std::vector<double>& out) {
  out.resize(row.size());
  if (row.empty()) return;
  const double top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (std::size_t i = 0; i < row.size(); ++i) sum += out[i] = std::exp(row[i] - top);
  for (double& v : out) v /= sum;
}

void layernorm_reference(const std::vector<double>& row, const std::vector<double>& gamma,
                         const std::vector<double>& beta, double eps, std::vector<double>& out) {
  out.resize(row.size());
  if (row.empty()) return;
  double mean = 0;
  for (double v : row) mean += v;
  mean /= static_cast<double>(row.size());
  double var = 0;
  for (double v : row) var += (v - mean) * (v - mean);
  var /= static_cast<double>(row.size());   // biased, as nn.LayerNorm
  const double inv = 1.0 / std::sqrt(var + eps);
  for (std::size_t i = 0; i < row.size(); ++i) out[i] = (row[i] - mean) * inv * gamma[i] + beta[i];
}

void check_value(CheckResult& r, const char* what, std::int64_t index, double value, double reference, double scale,
                 const Tolerance& tol) {
  const double err = std::fabs(value - reference);
  const double allowed = tol.rel * std::fabs(scale) + tol.abs;
  const bool bad = !(err <= allowed);   // NaN fails
  const double ratio = allowed > 0 ? err / allowed : (err == 0 ? 0 : HUGE_VAL);
  if (!(ratio <= r.worst_ratio)) r.worst_ratio = std::isnan(ratio) ? HUGE_VAL : ratio;
  if (bad && r.ok) {
    r.ok = false;
    char text[256];
    std::snprintf(text, sizeof text, "%s[%lld] = %.9g, reference %.9g: error %.3g exceeds the tolerance %.3g", what,
                  static_cast<long long>(index), value, reference, err, allowed);
    r.failure = text;
  }
}

int calls_per_sample(double single_call_s, double target_s, int max_calls) {
  if (!(single_call_s > 0)) return max_calls;
  const double calls = std::ceil(target_s / single_call_s - 1e-9);   // 1e-3 / 4e-6 is 250.00000000000003
  if (calls <= 1) return 1;
  return calls >= max_calls ? max_calls : static_cast<int>(calls);
}

}  // namespace dlsim::calibration::cuda
