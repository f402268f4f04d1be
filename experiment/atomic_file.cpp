#include "experiment/atomic_file.hpp"

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace dlsim::experiment {

void write_atomically(const std::string& target, const std::function<void(const std::string&)>& write) {
  namespace fs = std::filesystem;
  const fs::path path(target);
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create folder '" + path.parent_path().string() + "': " + ec.message());
  }
  // The pid keeps two concurrent runs writing the same target from sharing a temporary file.
  const fs::path temporary = path.string() + ".tmp-" + std::to_string(::getpid());
  try {
    write(temporary.string());
    fs::rename(temporary, path);
  } catch (...) {
    fs::remove(temporary, ec);
    throw;
  }
}

}  // namespace dlsim::experiment
