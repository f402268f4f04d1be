// `dlsim validate --kernels`: the held-out errors of the shipped kernel profiles
// (builtin_profiles.hpp), as their fits recorded them (`held_out_errors` of each profile file,
// written by `dlsim calibrate --import`): per device, kernel family, precision or class, and size
// range. Rows that the accuracy goals name (GEMMs with m >= 64, memory-bound kernels above 1 MB:
// median |error| <= 10%, 90th percentile <= 25%) say whether they meet them.
#pragma once
#include <string>

namespace dlsim::experiment {

// `format`: "text" or "markdown".
std::string format_kernel_validation(const std::string& format);

}  // namespace dlsim::experiment
