// Writing result files so that a failure never leaves a half-written file: the content goes to
// a temporary file beside the target, which is renamed over the target only when complete.
#pragma once
#include <functional>
#include <string>

namespace dlsim::experiment {

// Creates the target's parent folders, calls write(temporary_path), then renames. On any
// exception the temporary file is removed and the exception propagates; the target is untouched.
void write_atomically(const std::string& target, const std::function<void(const std::string&)>& write);

}  // namespace dlsim::experiment
