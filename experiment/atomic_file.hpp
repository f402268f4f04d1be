// Writing result files so that a failure never leaves a half-written file: the content goes to
// a temporary file beside the target, which is renamed over the target only when complete.
#pragma once
#include <functional>
#include <string>

namespace dlsim::experiment {

// "-" names standard output: the content is written to a temporary file first and copied to
// standard output whole when it is complete, so a failure prints nothing (as a file target is left
// untouched). A command that sends an output there prints its own report on standard error.
bool is_standard_output(const std::string& target);

// Why `target` cannot be an output file, or "" when it can ("-" can): an existing folder, FIFO, device or
// socket is refused (renaming over it would replace the node; writing into it is not a result
// file). A symbolic link is judged by what it points to.
std::string unwritable_reason(const std::string& target);

// The file a write to `target` lands in: a symbolic link (or a chain of them) is followed, so
// that the link stays and its target is replaced. Throws std::runtime_error for a link loop.
std::string resolve_output(const std::string& target);

// Creates the target's parent folders, calls write(temporary_path), then renames. On any
// exception the temporary file is removed and the exception propagates; the target is untouched.
// Throws std::runtime_error when unwritable_reason(target) is not empty. Temporary files that a
// killed run left beside the target ("<target>.tmp-<pid>" of a process that is gone) are removed.
void write_atomically(const std::string& target, const std::function<void(const std::string&)>& write);

}  // namespace dlsim::experiment
