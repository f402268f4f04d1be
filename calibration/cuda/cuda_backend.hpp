// The CUDA calibration backend: measures KernelCases on CUDA device 0 (cuBLAS and cublasLt GEMMs
// per precision, a plain tiled GEMM as a floor, memory copy/read/write, axpy, GELU, reduction, row
// softmax and layer norm, pinned host<->device copies, an empty kernel). make_backend() builds
// it, and the plugin dlsim-cuda.so (plugin_entry.cpp) hands it to make_cuda_backend()
// (backend.hpp). It never throws for a missing device: available() is false and
// unavailable_reason() says why. Timing: CUDA events around each repeat (a repeat of a short
// kernel is a batch of calls, divided), after warm-up; inputs are fresh random numbers per case
// (cuda_host.hpp); each output is checked against a CPU reference after the timed calls.
// measure() calls `progress` before each case (done = cases finished) and once after the last.
// This header includes no CUDA header, so that tests and the runner need none.
#pragma once
#include <memory>
#include <string>

#include "calibration/backend.hpp"

namespace dlsim::calibration::cuda {

// "" when a CUDA device can be used here; else why not ("cudaGetDeviceCount: no CUDA-capable
// device is detected", "no CUDA device").
std::string unavailable_reason();

std::unique_ptr<Backend> make_backend();

}  // namespace dlsim::calibration::cuda
