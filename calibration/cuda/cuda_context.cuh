// What the CUDA backend's case runners share: owned device and pinned memory, the stream and
// library handles of device 0, and the timing loop. Included only by .cu files of calibration/cuda/.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "calibration/backend.hpp"
#include "calibration/cuda/cuda_kernels.cuh"

namespace dlsim::calibration::cuda {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);
#define DLSIM_CUBLAS(call) ::dlsim::calibration::cuda::check_cublas((call), #call, __FILE__, __LINE__)

// cudaMalloc'd bytes, freed on destruction (never managed memory).
class DeviceMemory {
 public:
  explicit DeviceMemory(std::uint64_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return data_; }
  template <class T>
  T* as() const { return static_cast<T*>(data_); }
  std::uint64_t bytes() const { return bytes_; }
  // A host copy of the whole buffer, after all work on the device (synchronous).
  std::vector<unsigned char> to_host() const;

 private:
  void* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

// cudaMallocHost'd (pinned) bytes, freed on destruction.
class PinnedMemory {
 public:
  explicit PinnedMemory(std::uint64_t bytes);
  ~PinnedMemory();
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  unsigned char* get() const { return data_; }

 private:
  unsigned char* data_ = nullptr;
};

// The stream and handles the cases run on; the cuBLAS and cublasLt handles and the cublasLt
// workspace are created on first use.
class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t blas();
  cublasLtHandle_t lt();
  void* lt_workspace() { lt(); return workspace_; }
  static constexpr std::uint64_t lt_workspace_bytes = 32ull << 20;   // cuBLAS's advice for Hopper: 32 MiB
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
};

// Warm-up calls, one call to size the batch (calls_per_sample), then `repeats` samples, each a
// batch of calls between two CUDA events on the stream; returns seconds per call of each sample.
std::vector<double> time_calls(Context& context, const std::function<void()>& call, const RunOptions& options);

// Case runners: fill `m.times_s`, `m.output_ok` and, when the check fails, `m.note`.
// Inputs draw from buffer_seed(run_seed, index, buffer).
void run_gemm(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index);
void run_typed(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index);
void run_rows(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index);
void run_memory(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index);
void run_host_copy(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed,
                   std::size_t index);
void run_launch(Context& context, Measurement& m, const RunOptions& options);

}  // namespace dlsim::calibration::cuda
