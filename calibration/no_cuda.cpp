// make_cuda_backend() for builds without CUDA (nvcc not found): there is no CUDA backend.
#include "calibration/backend.hpp"

namespace dlsim::calibration {

std::unique_ptr<Backend> make_cuda_backend() { return nullptr; }

}  // namespace dlsim::calibration
