// The device kernels of the CUDA calibration backend and their launchers (cuda_kernels.cu).
// Included only by .cu files of calibration/cuda/. Every launcher enqueues on `stream` and checks
// the launch (throws CudaError). Buffers are untyped; `p` names the element type: fp64 double,
// fp32/tf32 float, fp16 __half, bf16 __nv_bfloat16, fp8 __nv_fp8_e4m3. Sizes in elements unless
// the name says bytes.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/precision.hpp"

namespace dlsim::calibration::cuda {

// A failed CUDA runtime, cuBLAS or cublasLt call: what was called, where, and why.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void throw_cuda_error(const char* call, const char* file, int line, const std::string& why);
void check_cuda(cudaError_t status, const char* call, const char* file, int line);
#define DLSIM_CUDA(call) ::dlsim::calibration::cuda::check_cuda((call), #call, __FILE__, __LINE__)

// Grid-stride kernels use at most this many blocks of 256 threads (enough to fill 132 SMs of an
// H100 several times over); per-block partial sums have this many slots.
constexpr int max_blocks = 8192;
constexpr int threads_per_block = 256;

void launch_fill(models::Precision p, void* data, std::int64_t n, std::uint64_t seed, cudaStream_t stream);
// C (m x n, column-major, ldc m) = A^T B with A stored k x m (lda k) and B k x n (ldb k), fp32.
void launch_gemm_naive(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k,
                       cudaStream_t stream);
void launch_copy(const void* src, void* dst, std::uint64_t bytes, cudaStream_t stream);
// Sums the 32-bit words of `src` (mod 2^32) into one partial per block; returns the block count.
int launch_read(const void* src, std::uint64_t bytes, std::uint32_t* partials, cudaStream_t stream);
void launch_write(void* dst, std::uint64_t bytes, std::uint32_t word, cudaStream_t stream);
void launch_axpy(models::Precision p, float a, const void* x, void* y, std::int64_t n, cudaStream_t stream);
void launch_gelu(models::Precision p, const void* x, void* y, std::int64_t n, cudaStream_t stream);
// Sum of x in fp32: per-block partials, then one block sums them into *out.
void launch_reduce(models::Precision p, const void* x, std::int64_t n, float* partials, float* out,
                   cudaStream_t stream);
void launch_softmax(models::Precision p, const void* x, void* y, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream);
void launch_layernorm(models::Precision p, const void* x, const void* gamma, const void* beta, void* y,
                      std::int64_t rows, std::int64_t cols, float eps, cudaStream_t stream);
void launch_empty(cudaStream_t stream);

// Element i of a host copy of a device buffer, as a double.
double host_value(models::Precision p, const void* data, std::int64_t i);

}  // namespace dlsim::calibration::cuda
