// The compute cases of the CUDA backend: GEMM (cuBLAS, cublasLt FP8, the plain tiled kernel), the
// typed elementwise kernels (axpy, GELU, reduction) and the row kernels (softmax, layer norm).
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>

#include "calibration/cuda/cuda_context.cuh"
#include "calibration/cuda/cuda_host.hpp"

namespace dlsim::calibration::cuda {
namespace {

using models::Precision;

// A cublasLt FP8 (e4m3 x e4m3 -> bf16, fp32 accumulate) plan for one shape, in the "TN" layout
// FP8 requires: A^T (A stored k x m) times B (k x n). Descriptors are freed on destruction.
class Fp8Plan {
 public:
  Fp8Plan(Context& context, int m, int n, int k) : context_(context) {
    DLSIM_CUBLAS(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    DLSIM_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    DLSIM_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    DLSIM_CUBLAS(cublasLtMatrixLayoutCreate(&a_, CUDA_R_8F_E4M3, k, m, k));
    DLSIM_CUBLAS(cublasLtMatrixLayoutCreate(&b_, CUDA_R_8F_E4M3, k, n, k));
    DLSIM_CUBLAS(cublasLtMatrixLayoutCreate(&c_, CUDA_R_16BF, m, n, m));
    DLSIM_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_));
    const std::uint64_t workspace = Context::lt_workspace_bytes;
    DLSIM_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                      sizeof workspace));
    int found = 0;
    DLSIM_CUBLAS(cublasLtMatmulAlgoGetHeuristic(context.lt(), op_, a_, b_, c_, c_, pref_, 1, &heuristic_, &found));
    if (found == 0) throw CudaError("cublasLt found no FP8 algorithm for this shape");
  }
  ~Fp8Plan() {
    cublasLtMatmulPreferenceDestroy(pref_);
    cublasLtMatrixLayoutDestroy(c_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatmulDescDestroy(op_);
  }
  Fp8Plan(const Fp8Plan&) = delete;
  Fp8Plan& operator=(const Fp8Plan&) = delete;
  void run(const void* a, const void* b, void* c) {
    const float alpha = 1, beta = 0;
    DLSIM_CUBLAS(cublasLtMatmul(context_.lt(), op_, &alpha, a, a_, b, b_, &beta, c, c_, c, c_, &heuristic_.algo,
                                context_.lt_workspace(), Context::lt_workspace_bytes, context_.stream()));
  }

 private:
  Context& context_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

// The cuBLAS call of a row-major layout (backend.hpp, KernelCase::layout): operations and leading
// dimensions of A and B, C always m x n with leading dimension m.
struct BlasCall {
  cublasOperation_t ta, tb;
  int lda, ldb;
};
BlasCall blas_call(models::GemmLayout layout, int m, int n, int k) {
  switch (layout) {
    case models::GemmLayout::nn: return {CUBLAS_OP_N, CUBLAS_OP_N, m, k};
    case models::GemmLayout::tn: return {CUBLAS_OP_N, CUBLAS_OP_T, m, n};
    case models::GemmLayout::nt: break;
  }
  return {CUBLAS_OP_T, CUBLAS_OP_N, k, k};
}

// Element (i, l) of op(A) and (l, j) of op(B) in the stored buffers, for the reference check.
std::int64_t a_index(models::GemmLayout layout, std::int64_t i, std::int64_t l, std::int64_t m, std::int64_t k) {
  return layout == models::GemmLayout::nt ? i * k + l : i + m * l;
}
std::int64_t b_index(models::GemmLayout layout, std::int64_t l, std::int64_t j, std::int64_t n, std::int64_t k) {
  return layout == models::GemmLayout::tn ? j + n * l : l + k * j;
}

// cublasGemmEx: C (m x n) = op(A) op(B) in the case's layout, FP32 accumulation for
// FP32/TF32/FP16/BF16.
void gemm_ex(Context& context, Precision p, models::GemmLayout layout, int m, int n, int k, const void* a, const void* b,
             void* c) {
  const BlasCall call = blas_call(layout, m, n, k);
  const cublasOperation_t ta = call.ta, tb = call.tb;
  if (p == Precision::fp64) {
    const double alpha = 1, beta = 0;
    DLSIM_CUBLAS(cublasGemmEx(context.blas(), ta, tb, m, n, k, &alpha, a, CUDA_R_64F, call.lda, b, CUDA_R_64F, call.ldb,
                              &beta, c, CUDA_R_64F, m, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
    return;
  }
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (p == Precision::tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  if (p == Precision::fp16) type = CUDA_R_16F;
  if (p == Precision::bf16) type = CUDA_R_16BF;
  const float alpha = 1, beta = 0;
  DLSIM_CUBLAS(cublasGemmEx(context.blas(), ta, tb, m, n, k, &alpha, a, type, call.lda, b, type, call.ldb, &beta, c, type,
                            m, compute, CUBLAS_GEMM_DEFAULT));
}

// Checks sampled entries of C (the four corners and 128 random ones) against double-precision
// dot products of the host copies of A and B.
void check_gemm(Measurement& m, const DeviceMemory& a, const DeviceMemory& b, const DeviceMemory& c,
                std::uint64_t seed) {
  const KernelCase& kc = m.kernel;
  const Precision out = kc.precision == Precision::fp8 ? Precision::bf16 : kc.precision;
  const auto ha = a.to_host(), hb = b.to_host(), hc = c.to_host();
  const Tolerance tol = tolerance(kc.family, kc.precision);
  CheckResult r;
  std::vector<std::pair<std::int64_t, std::int64_t>> at{{0, 0}, {kc.m - 1, 0}, {0, kc.n - 1}, {kc.m - 1, kc.n - 1}};
  for (std::uint64_t s = 0; s < 128; ++s) {
    const std::uint64_t x = mix64(seed + s);
    at.emplace_back(static_cast<std::int64_t>(x % static_cast<std::uint64_t>(kc.m)),
                    static_cast<std::int64_t>((x >> 32) % static_cast<std::uint64_t>(kc.n)));
  }
  for (const auto& [i, j] : at) {
    double ref = 0, scale = 0;
    for (std::int64_t l = 0; l < kc.k; ++l) {
      const double t = host_value(kc.precision, ha.data(), a_index(kc.layout, i, l, kc.m, kc.k)) *
                       host_value(kc.precision, hb.data(), b_index(kc.layout, l, j, kc.n, kc.k));
      ref += t;
      scale += std::fabs(t);
    }
    check_value(r, "C", i + kc.m * j, host_value(out, hc.data(), i + kc.m * j), ref, scale, tol);
  }
  m.output_ok = r.ok;
  if (!r.ok) m.note = "GEMM output check failed: " + r.failure;
}

}  // namespace

void run_gemm(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index) {
  const KernelCase& c = m.kernel;
  const std::uint64_t e = element_bytes(c.precision), out_e = c.precision == Precision::fp8 ? 2 : e;
  DeviceMemory a(static_cast<std::uint64_t>(c.m * c.k) * e), b(static_cast<std::uint64_t>(c.k * c.n) * e);
  DeviceMemory out(static_cast<std::uint64_t>(c.m * c.n) * out_e);
  const cudaStream_t s = context.stream();
  launch_fill(c.precision, a.get(), c.m * c.k, buffer_seed(run_seed, index, 0), s);
  launch_fill(c.precision, b.get(), c.k * c.n, buffer_seed(run_seed, index, 1), s);
  DLSIM_CUDA(cudaMemsetAsync(out.get(), 0, out.bytes(), s));
  const int m_ = static_cast<int>(c.m), n_ = static_cast<int>(c.n), k_ = static_cast<int>(c.k);
  if (c.family == KernelFamily::gemm_naive) {
    m.times_s = time_calls(
        context, [&] { launch_gemm_naive(a.as<float>(), b.as<float>(), out.as<float>(), c.m, c.n, c.k, s); }, options);
  } else if (c.precision == Precision::fp8) {
    Fp8Plan plan(context, m_, n_, k_);
    m.times_s = time_calls(context, [&] { plan.run(a.get(), b.get(), out.get()); }, options);
  } else {
    m.times_s = time_calls(
        context, [&] { gemm_ex(context, c.precision, c.layout, m_, n_, k_, a.get(), b.get(), out.get()); }, options);
  }
  context.synchronize();
  check_gemm(m, a, b, out, buffer_seed(run_seed, index, 2));
}

namespace {

// Up to 2^20 evenly spaced indices of n (all of them when n is smaller), and the last one.
template <class F>
void for_sampled(std::int64_t n, F&& f) {
  const std::int64_t stride = std::max<std::int64_t>(1, n >> 20);
  for (std::int64_t i = 0; i < n; i += stride) f(i);
  if ((n - 1) % stride != 0) f(n - 1);
}

}  // namespace

void run_typed(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index) {
  const KernelCase& c = m.kernel;
  const Precision p = c.precision;
  const std::uint64_t bytes = static_cast<std::uint64_t>(c.elements) * element_bytes(p);
  const cudaStream_t s = context.stream();
  DeviceMemory x(bytes);
  launch_fill(p, x.get(), c.elements, buffer_seed(run_seed, index, 0), s);
  const Tolerance tol = tolerance(c.family, p);
  CheckResult r;
  if (c.family == KernelFamily::reduction) {
    DeviceMemory partials(static_cast<std::uint64_t>(max_blocks) * 4), sum(4);
    m.times_s = time_calls(
        context, [&] { launch_reduce(p, x.get(), c.elements, partials.as<float>(), sum.as<float>(), s); }, options);
    context.synchronize();
    const auto hx = x.to_host(), hs = sum.to_host();
    double ref = 0, scale = 0;
    for (std::int64_t i = 0; i < c.elements; ++i) {
      const double v = host_value(p, hx.data(), i);
      ref += v;
      scale += std::fabs(v);
    }
    check_value(r, "sum", 0, host_value(Precision::fp32, hs.data(), 0), ref, scale, tol);
  } else {
    DeviceMemory y(bytes);
    launch_fill(p, y.get(), c.elements, buffer_seed(run_seed, index, 1), s);
    const auto hy0 = y.to_host();   // waits for the fills
    const float a = 0.5f + 0.5f * std::fabs(input_value(buffer_seed(run_seed, index, 2), 0));   // in [0.625, 1]
    const bool axpy = c.family == KernelFamily::elementwise;
    auto call = [&] {
      if (axpy) launch_axpy(p, a, x.get(), y.get(), c.elements, s);
      else launch_gelu(p, x.get(), y.get(), c.elements, s);
    };
    m.times_s = time_calls(context, call, options);
    if (axpy) {   // the timed calls accumulated into y: restore it and check one call
      DLSIM_CUDA(cudaMemcpyAsync(y.get(), hy0.data(), bytes, cudaMemcpyHostToDevice, s));
      call();
    }
    context.synchronize();
    const auto hx = x.to_host(), hy = y.to_host();
    for_sampled(c.elements, [&](std::int64_t i) {
      const double xv = host_value(p, hx.data(), i);
      if (axpy) {
        const double y0 = host_value(p, hy0.data(), i);
        check_value(r, "y", i, host_value(p, hy.data(), i), a * xv + y0, std::fabs(a * xv) + std::fabs(y0), tol);
      } else {
        const double ref = gelu_reference(xv);
        check_value(r, "y", i, host_value(p, hy.data(), i), ref, ref, tol);
      }
    });
  }
  m.output_ok = r.ok;
  if (!r.ok) m.note = "output check failed: " + r.failure;
}

void run_rows(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index) {
  const KernelCase& c = m.kernel;
  const Precision p = c.precision;
  const std::uint64_t e = element_bytes(p), bytes = static_cast<std::uint64_t>(c.m * c.n) * e;
  const cudaStream_t s = context.stream();
  const bool softmax = c.family == KernelFamily::softmax;
  DeviceMemory x(bytes), y(bytes), gamma(static_cast<std::uint64_t>(c.n) * e), beta(static_cast<std::uint64_t>(c.n) * e);
  launch_fill(p, x.get(), c.m * c.n, buffer_seed(run_seed, index, 0), s);
  launch_fill(p, gamma.get(), c.n, buffer_seed(run_seed, index, 1), s);
  launch_fill(p, beta.get(), c.n, buffer_seed(run_seed, index, 2), s);
  m.times_s = time_calls(
      context,
      [&] {
        if (softmax) launch_softmax(p, x.get(), y.get(), c.m, c.n, s);
        else launch_layernorm(p, x.get(), gamma.get(), beta.get(), y.get(), c.m, c.n, static_cast<float>(layernorm_eps), s);
      },
      options);
  context.synchronize();
  const auto hx = x.to_host(), hy = y.to_host(), hg = gamma.to_host(), hb = beta.to_host();
  std::vector<double> g(static_cast<std::size_t>(c.n)), b(g.size()), row(g.size()), ref;
  for (std::int64_t j = 0; j < c.n; ++j) {
    g[j] = host_value(p, hg.data(), j);
    b[j] = host_value(p, hb.data(), j);
  }
  const Tolerance tol = tolerance(c.family, p);
  CheckResult r;
  // The first, the last and up to 62 rows between them.
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < c.m; i += std::max<std::int64_t>(1, c.m / 62)) rows.push_back(i);
  if (rows.back() != c.m - 1) rows.push_back(c.m - 1);
  for (const std::int64_t i : rows) {
    for (std::int64_t j = 0; j < c.n; ++j) row[j] = host_value(p, hx.data(), i * c.n + j);
    if (softmax) softmax_reference(row, ref);
    else layernorm_reference(row, g, b, layernorm_eps, ref);
    for (std::int64_t j = 0; j < c.n; ++j) {
      // Layer norm's scale is the sum of its absolute terms |gamma x^| + |beta|.
      const double scale = softmax ? ref[j] : std::fabs(ref[j] - b[j]) + std::fabs(b[j]);
      check_value(r, "y", i * c.n + j, host_value(p, hy.data(), i * c.n + j), ref[j], scale, tol);
    }
  }
  m.output_ok = r.ok;
  if (!r.ok) m.note = "output check failed: " + r.failure;
}

}  // namespace dlsim::calibration::cuda
