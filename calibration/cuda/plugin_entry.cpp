// The entry point of the plugin dlsim-cuda.so: make_cuda_backend() (../cuda_plugin.cpp) loads
// the plugin only when a command asks for the CUDA backend, so that no other command loads
// cuBLAS and the CUDA runtime (sim/shared_library.hpp).
#include "calibration/cuda/cuda_backend.hpp"
#include "calibration/cuda/plugin_abi.hpp"

extern "C" dlsim::calibration::Backend* dlsim_make_cuda_backend() {
  return dlsim::calibration::cuda::make_backend().release();
}
