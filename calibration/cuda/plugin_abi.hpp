// What the plugin dlsim-cuda.so exports, shared by the plugin (plugin_entry.cpp) and its loader
// (../cuda_plugin.cpp). No CUDA header: the loader is built without CUDA too.
#pragma once
#include "calibration/backend.hpp"

namespace dlsim::calibration::cuda {

inline constexpr const char* kPluginFile = "dlsim-cuda.so";
inline constexpr const char* kPluginEntry = "dlsim_make_cuda_backend";
// A new CUDA backend (owned by the caller, deleted through Backend's virtual destructor).
using MakeBackendFunction = Backend* (*)();

}  // namespace dlsim::calibration::cuda
