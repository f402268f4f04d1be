// Plugins: where they are looked for, and what loading a bad one says.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include "sim/shared_library.hpp"

namespace dlsim::sim {
namespace {

namespace fs = std::filesystem;

// Sets DLSIM_PLUGIN_DIR for one test.
class PluginDir {
 public:
  explicit PluginDir(const fs::path& dir) { ::setenv("DLSIM_PLUGIN_DIR", dir.c_str(), 1); }
  ~PluginDir() { ::unsetenv("DLSIM_PLUGIN_DIR"); }
};

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(SharedLibrary, AMissingPluginIsNotFound) {
  EXPECT_EQ(find_plugin("dlsim-no-such-plugin.so"), "");
}

TEST(SharedLibrary, ThePluginDirectoryIsSearchedFirst) {
  const fs::path dir = fresh_folder("plugin-dir");
  std::ofstream(dir / "dlsim-test-plugin.so") << "not an ELF file";
  const PluginDir env(dir);
  EXPECT_EQ(find_plugin("dlsim-test-plugin.so"), (dir / "dlsim-test-plugin.so").string());
  EXPECT_EQ(find_plugin("dlsim-other.so"), "");
  fs::remove_all(dir);
}

TEST(SharedLibrary, LoadingABadFileSaysWhichAndWhy) {
  const fs::path dir = fresh_folder("plugin-bad");
  const fs::path bad = dir / "dlsim-bad.so";
  std::ofstream(bad) << "not an ELF file";
  try {
    load_plugin_symbol(bad.string(), "anything");
    FAIL() << "a file that is not a shared object loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load " + bad.string() + ": "), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(SharedLibrary, FindsASymbolAndNamesAMissingOne) {
  // libm is on every machine that runs dlsim.
  const auto cosine = reinterpret_cast<double (*)(double)>(load_plugin_symbol("libm.so.6", "cos"));
  ASSERT_NE(cosine, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  try {
    load_plugin_symbol("libm.so.6", "dlsim_no_such_symbol");
    FAIL() << "a missing symbol was found";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no symbol dlsim_no_such_symbol"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::sim
