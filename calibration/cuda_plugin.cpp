// make_cuda_backend(): loads the CUDA backend from its plugin, dlsim-cuda.so (built by cuda/ when
// nvcc is found), only when it is asked for (sim/shared_library.hpp says why).
#include <memory>

#include "calibration/backend.hpp"
#include "calibration/cuda/plugin_abi.hpp"
#include "sim/shared_library.hpp"

namespace dlsim::calibration {

std::unique_ptr<Backend> make_cuda_backend() {
  const std::string path = sim::find_plugin(cuda::kPluginFile);
  if (path.empty()) return nullptr;  // this build has no CUDA backend
  const auto make = reinterpret_cast<cuda::MakeBackendFunction>(sim::load_plugin_symbol(path, cuda::kPluginEntry));
  return std::unique_ptr<Backend>(make());
}

}  // namespace dlsim::calibration
