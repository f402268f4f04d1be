#include "experiment/atomic_file.hpp"

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <system_error>

#include <signal.h>
#include <unistd.h>

namespace dlsim::experiment {
namespace {

namespace fs = std::filesystem;

const char* const kTemporaryInfix = ".tmp-";

// Removes "<name>.tmp-<pid>" files beside `target` whose process no longer exists: what a run
// killed while writing (SIGKILL, a crash, a power cut) left. A live pid's file is another run's
// write in progress and is kept.
void remove_stale_temporaries(const fs::path& target) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + kTemporaryInfix;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    long pid = 0;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    const auto [end_of_number, parse_error] = std::from_chars(first, last, pid);
    if (parse_error != std::errc() || end_of_number != last || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code ignored;
    if (it->is_regular_file(ignored)) fs::remove(it->path(), ignored);
  }
}

}  // namespace

std::string resolve_output(const std::string& target) {
  fs::path path(target);
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(path, ec)); ++hops) {
    if (hops == 40) throw std::runtime_error("cannot write '" + target + "': too many levels of symbolic links");
    const fs::path link = fs::read_symlink(path, ec);
    if (ec) throw std::runtime_error("cannot read the symbolic link '" + path.string() + "': " + ec.message());
    path = link.is_absolute() ? link : path.parent_path() / link;
  }
  return path.string();
}

bool is_standard_output(const std::string& target) { return target == "-"; }

std::string unwritable_reason(const std::string& target) {
  if (is_standard_output(target)) return "";
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);  // follows symbolic links
  switch (status.type()) {
    case fs::file_type::not_found:
    case fs::file_type::none:
    case fs::file_type::regular:
      return "";
    case fs::file_type::directory:
      return "'" + target + "' is a folder; give a file path";
    case fs::file_type::fifo:
      return "'" + target + "' is a FIFO (named pipe); output files must be regular files";
    case fs::file_type::character:
    case fs::file_type::block:
      return "'" + target + "' is a device; output files must be regular files";
    case fs::file_type::socket:
      return "'" + target + "' is a socket; output files must be regular files";
    default:
      return "'" + target + "' is not a regular file; output files must be regular files";
  }
}

namespace {

// "-": written to a temporary file in the system's temporary folder, then copied out whole.
void write_to_standard_output(const std::function<void(const std::string&)>& write) {
  std::error_code ec;
  const fs::path folder = fs::temp_directory_path(ec);
  if (ec) throw std::runtime_error("cannot find a temporary folder for standard output: " + ec.message());
  const fs::path temporary = folder / ("dlsim-stdout" + std::string(kTemporaryInfix) + std::to_string(::getpid()));
  try {
    write(temporary.string());
    std::ifstream in(temporary, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read back '" + temporary.string() + "'");
    if (fs::file_size(temporary) > 0) std::cout << in.rdbuf();  // an empty buffer would set failbit
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("cannot write to standard output");
    in.close();
    fs::remove(temporary, ec);
  } catch (...) {
    fs::remove(temporary, ec);
    throw;
  }
}

}  // namespace

void write_atomically(const std::string& target, const std::function<void(const std::string&)>& write) {
  if (is_standard_output(target)) return write_to_standard_output(write);
  if (const std::string why = unwritable_reason(target); !why.empty()) throw std::runtime_error("cannot write: " + why);
  // Through a symbolic link: the file it points to is replaced, the link stays.
  const fs::path path(resolve_output(target));
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create folder '" + path.parent_path().string() + "': " + ec.message());
  }
  remove_stale_temporaries(path);
  // The pid keeps two concurrent runs writing the same target from sharing a temporary file.
  const fs::path temporary = path.string() + kTemporaryInfix + std::to_string(::getpid());
  try {
    write(temporary.string());
    fs::rename(temporary, path);
  } catch (...) {
    fs::remove(temporary, ec);
    throw;
  }
}

}  // namespace dlsim::experiment
