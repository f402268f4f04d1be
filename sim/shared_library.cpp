#include "sim/shared_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace dlsim::sim {
namespace {

namespace fs = std::filesystem;

// The folder of the object (executable or shared library) that holds this function.
fs::path folder_of_this_code() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&folder_of_this_code), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const fs::path object = fs::canonical(info.dli_fname, ec);
  return ec ? fs::path{} : object.parent_path();
}

fs::path folder_of_executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : exe.parent_path();
}

}  // namespace

std::string find_plugin(const std::string& file_name) {
  std::vector<fs::path> folders;
  if (const char* dir = std::getenv("DLSIM_PLUGIN_DIR"); dir != nullptr && *dir != '\0') folders.emplace_back(dir);
  folders.push_back(folder_of_executable());
  folders.push_back(folder_of_this_code());
#ifdef DLSIM_BUILD_DIR
  folders.emplace_back(DLSIM_BUILD_DIR);
#endif
  for (const fs::path& folder : folders) {
    if (folder.empty()) continue;
    std::error_code ec;
    const fs::path candidate = folder / file_name;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  return {};
}

void* load_plugin_symbol(const std::string& path, const std::string& symbol, bool export_symbols) {
  // Loading an already loaded object returns the same handle; the handle is kept for the
  // process's lifetime on purpose (see the header).
  void* handle = dlopen(path.c_str(), RTLD_NOW | (export_symbols ? RTLD_GLOBAL : RTLD_LOCAL));
  if (handle == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error("cannot load " + path + ": " + (why != nullptr ? why : "unknown reason"));
  }
  dlerror();  // clear
  void* address = dlsym(handle, symbol.c_str());
  if (address == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error("cannot load " + path + ": no symbol " + symbol + (why != nullptr ? std::string(" (") + why + ")" : ""));
  }
  return address;
}

}  // namespace dlsim::sim
