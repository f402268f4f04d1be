#include "calibration/cuda/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>

#include "calibration/cuda/cuda_context.cuh"
#include "calibration/cuda/cuda_host.hpp"

namespace dlsim::calibration::cuda {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_cuda_error(call, file, line, std::string(cublasGetStatusName(status)) + ": " + cublasGetStatusString(status));
}

DeviceMemory::DeviceMemory(std::uint64_t bytes) : bytes_(bytes) {
  DLSIM_CUDA(cudaMalloc(&data_, bytes == 0 ? 16 : bytes));
}
DeviceMemory::~DeviceMemory() { cudaFree(data_); }
std::vector<unsigned char> DeviceMemory::to_host() const {
  std::vector<unsigned char> host(bytes_);
  // The cases run on a non-blocking stream, which cudaMemcpy's default stream does not wait for.
  DLSIM_CUDA(cudaDeviceSynchronize());
  DLSIM_CUDA(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost));
  return host;
}

PinnedMemory::PinnedMemory(std::uint64_t bytes) {
  void* p = nullptr;
  DLSIM_CUDA(cudaMallocHost(&p, bytes == 0 ? 16 : bytes));
  data_ = static_cast<unsigned char*>(p);
}
PinnedMemory::~PinnedMemory() { cudaFreeHost(data_); }

Context::Context() { DLSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
Context::~Context() {
  if (lt_) cublasLtDestroy(lt_);
  if (blas_) cublasDestroy(blas_);
  cudaFree(workspace_);
  cudaStreamDestroy(stream_);
}
cublasHandle_t Context::blas() {
  if (!blas_) {
    DLSIM_CUBLAS(cublasCreate(&blas_));
    DLSIM_CUBLAS(cublasSetStream(blas_, stream_));
    // Default math: FP32 stays FP32 (TF32 only where a case asks for it).
    DLSIM_CUBLAS(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
  }
  return blas_;
}
cublasLtHandle_t Context::lt() {
  if (!lt_) {
    DLSIM_CUBLAS(cublasLtCreate(&lt_));
    DLSIM_CUDA(cudaMalloc(&workspace_, lt_workspace_bytes));
  }
  return lt_;
}
void Context::synchronize() const { DLSIM_CUDA(cudaStreamSynchronize(stream_)); }

namespace {

class Event {
 public:
  Event() { DLSIM_CUDA(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream) { DLSIM_CUDA(cudaEventRecord(event_, stream)); }
  // Seconds from `start` to this event, after waiting for this event.
  double seconds_since(const Event& start) const {
    DLSIM_CUDA(cudaEventSynchronize(event_));
    float ms = 0;
    DLSIM_CUDA(cudaEventElapsedTime(&ms, start.event_, event_));
    return 1e-3 * ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

std::vector<double> time_calls(Context& context, const std::function<void()>& call, const RunOptions& options) {
  for (int i = 0; i < options.warmup; ++i) call();
  context.synchronize();
  Event start, stop;
  start.record(context.stream());
  call();
  stop.record(context.stream());
  const int calls = calls_per_sample(stop.seconds_since(start));
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(std::max(options.repeats, 0)));
  for (int r = 0; r < options.repeats; ++r) {
    start.record(context.stream());
    for (int c = 0; c < calls; ++c) call();
    stop.record(context.stream());
    times.push_back(stop.seconds_since(start) / calls);
  }
  return times;
}

void run_memory(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed, std::size_t index) {
  const KernelCase& c = m.kernel;
  const std::uint64_t bytes = static_cast<std::uint64_t>(c.elements) * element_bytes(c.precision);
  const cudaStream_t s = context.stream();
  if (c.family == KernelFamily::write) {
    DeviceMemory dst(bytes);
    // A nonzero word drawn from the seed, so that a skipped write cannot pass the check.
    const std::uint32_t word = static_cast<std::uint32_t>(mix64(buffer_seed(run_seed, index, 0))) | 1u;
    m.times_s = time_calls(context, [&] { launch_write(dst.get(), bytes, word, s); }, options);
    context.synchronize();
    const auto host = dst.to_host();
    m.output_ok = true;
    for (std::uint64_t i = 0; i + 4 <= host.size() && m.output_ok; i += 4) {
      std::uint32_t w;
      std::memcpy(&w, host.data() + i, 4);
      if (w != word) {
        m.output_ok = false;
        m.note = "write: word " + std::to_string(i / 4) + " differs from the value written";
      }
    }
    return;
  }
  DeviceMemory src(bytes);
  launch_fill(c.precision, src.get(), c.elements, buffer_seed(run_seed, index, 0), s);
  if (c.family == KernelFamily::copy) {
    DeviceMemory dst(bytes);
    DLSIM_CUDA(cudaMemsetAsync(dst.get(), 0, bytes, s));
    m.times_s = time_calls(context, [&] { launch_copy(src.get(), dst.get(), bytes, s); }, options);
    context.synchronize();
    m.output_ok = src.to_host() == dst.to_host();
    if (!m.output_ok) m.note = "copy: the destination differs from the source";
    return;
  }
  DeviceMemory partials(static_cast<std::uint64_t>(max_blocks) * 4);
  int blocks = 0;
  m.times_s = time_calls(context, [&] { blocks = launch_read(src.get(), bytes, partials.as<std::uint32_t>(), s); },
                         options);
  context.synchronize();
  const auto data = src.to_host();
  const auto sums = partials.to_host();
  std::uint32_t expected = 0, got = 0;
  for (std::uint64_t i = 0; i + 4 <= data.size(); i += 4) {
    std::uint32_t w;
    std::memcpy(&w, data.data() + i, 4);
    expected += w;
  }
  for (int b = 0; b < blocks; ++b) {
    std::uint32_t w;
    std::memcpy(&w, sums.data() + 4 * b, 4);
    got += w;
  }
  m.output_ok = expected == got;
  if (!m.output_ok) m.note = "read: the checksum of the words read differs from the host's";
}

void run_host_copy(Context& context, Measurement& m, const RunOptions& options, std::uint64_t run_seed,
                   std::size_t index) {
  const KernelCase& c = m.kernel;
  const std::uint64_t bytes = static_cast<std::uint64_t>(c.elements) * element_bytes(c.precision);
  const cudaStream_t s = context.stream();
  DeviceMemory device(bytes);
  PinnedMemory host(bytes);
  launch_fill(c.precision, device.get(), c.elements, buffer_seed(run_seed, index, 0), s);
  context.synchronize();
  if (c.family == KernelFamily::host_to_device) {
    // The pinned source holds the random values; the device buffer is cleared first.
    DLSIM_CUDA(cudaMemcpy(host.get(), device.get(), bytes, cudaMemcpyDeviceToHost));
    DLSIM_CUDA(cudaMemset(device.get(), 0, bytes));
    m.times_s = time_calls(
        context, [&] { DLSIM_CUDA(cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, s)); },
        options);
    context.synchronize();
    const auto back = device.to_host();
    m.output_ok = std::memcmp(back.data(), host.get(), bytes) == 0;
  } else {
    std::memset(host.get(), 0xA5, bytes);
    m.times_s = time_calls(
        context, [&] { DLSIM_CUDA(cudaMemcpyAsync(host.get(), device.get(), bytes, cudaMemcpyDeviceToHost, s)); },
        options);
    context.synchronize();
    const auto expected = device.to_host();
    m.output_ok = std::memcmp(expected.data(), host.get(), bytes) == 0;
  }
  if (!m.output_ok) m.note = "host copy: the destination differs from the source";
}

void run_launch(Context& context, Measurement& m, const RunOptions& options) {
  m.times_s = time_calls(context, [&] { launch_empty(context.stream()); }, options);
  context.synchronize();
  m.output_ok = true;   // nothing to check: the launches completed without an error
}

namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    reason_ = unavailable_reason();
    info_.backend = "cuda";
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) info_.runtime = version_text(runtime);
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) info_.driver = version_text(driver);
    if (!reason_.empty()) return;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      reason_ = "cudaGetDeviceProperties failed for device 0";
      return;
    }
    info_.name = prop.name;
    info_.units = prop.multiProcessorCount;
    caps_.cc_major = prop.major;
    caps_.cc_minor = prop.minor;
  }

  DeviceInfo info() const override { return info_; }
  bool available() const override { return reason_.empty(); }

  bool supports(const KernelCase& c) const override { return available() && why_not(c).empty(); }

  std::vector<Measurement> measure(const std::vector<KernelCase>& cases, const RunOptions& options,
                                   const Progress& progress) override {
    std::vector<Measurement> out;
    out.reserve(cases.size());
    if (available() && !context_) {
      DLSIM_CUDA(cudaSetDevice(0));
      context_ = std::make_unique<Context>();
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (progress) progress(i, cases.size(), cases[i]);
      out.push_back(measure_one(cases[i], i, options));
    }
    if (progress && !cases.empty()) progress(cases.size(), cases.size(), cases.back());
    return out;
  }

 private:
  std::string why_not(const KernelCase& c) const {
    if (!available()) return "no CUDA device: " + reason_;
    if (std::string invalid = validate_case(c); !invalid.empty()) return invalid;
    DeviceCaps caps = caps_;
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) caps.free_bytes = free_bytes;
    return device_support(c, caps);
  }

  Measurement measure_one(const KernelCase& c, std::size_t index, const RunOptions& options) {
    Measurement m;
    m.kernel = c;
    m.note = why_not(c);
    if (!m.note.empty()) return m;
    try {
      switch (c.family) {
        case KernelFamily::gemm:
        case KernelFamily::gemm_naive: run_gemm(*context_, m, options, options.seed, index); break;
        case KernelFamily::elementwise:
        case KernelFamily::activation:
        case KernelFamily::reduction: run_typed(*context_, m, options, options.seed, index); break;
        case KernelFamily::softmax:
        case KernelFamily::layernorm: run_rows(*context_, m, options, options.seed, index); break;
        case KernelFamily::copy:
        case KernelFamily::read:
        case KernelFamily::write: run_memory(*context_, m, options, options.seed, index); break;
        case KernelFamily::host_to_device:
        case KernelFamily::device_to_host: run_host_copy(*context_, m, options, options.seed, index); break;
        case KernelFamily::launch: run_launch(*context_, m, options); break;
      }
    } catch (const std::exception& e) {
      // A failed call fails this case only; the message names the call and the CUDA error.
      m.times_s.clear();
      m.output_ok = false;
      m.note = e.what();
    }
    return m;
  }

  std::string reason_;
  DeviceInfo info_;
  DeviceCaps caps_;
  std::unique_ptr<Context> context_;
};

}  // namespace

std::string unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();   // clear the error so that later calls start clean
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  }
  if (count == 0) return "cudaGetDeviceCount found no CUDA device";
  return "";
}

std::unique_ptr<Backend> make_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace dlsim::calibration::cuda
