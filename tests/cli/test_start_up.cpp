// What a command loads: the CUDA runtime, cuBLAS, Open MPI and HDF5 only where a command needs them
// (sim/shared_library.hpp), seen through the dynamic loader's own log (LD_DEBUG=libs).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

// The loader's log of one dlsim command (its standard error).
CommandResult run_logging_libraries(const std::filesystem::path& dir, const std::string& arguments) {
  ::setenv("LD_DEBUG", "libs", 1);
  CommandResult r = run_dlsim(dir, arguments);
  ::unsetenv("LD_DEBUG");
  return r;
}

TEST(StartUp, VersionAndCheckLoadNeitherCudaNorMpiNorHdf5) {
  const auto dir = fresh_folder("start-up");
  for (const std::string& arguments : {std::string("--version"), "check '" + scenario_path("quickstart.yaml") + "'"}) {
    const CommandResult r = run_logging_libraries(dir, arguments);
    ASSERT_EQ(r.exit_code, 0) << arguments << ": " << r.err;
    // The log is there (else the checks below would pass for nothing).
    ASSERT_NE(r.err.find("libyaml-cpp"), std::string::npos) << arguments << ": " << r.err.substr(0, 2000);
    EXPECT_EQ(r.err.find("libcudart"), std::string::npos) << arguments;
    EXPECT_EQ(r.err.find("libcublas"), std::string::npos) << arguments;
    EXPECT_EQ(r.err.find("libmpi"), std::string::npos) << arguments;
    EXPECT_EQ(r.err.find("dlsim-cuda.so"), std::string::npos) << arguments;
    EXPECT_EQ(r.err.find("libhdf5"), std::string::npos) << arguments;
  }
}

TEST(StartUp, WritingAResultsFileLoadsTheHdf5Plugin) {
  const auto dir = fresh_folder("start-up-hdf5");
  const CommandResult r = run_logging_libraries(dir, "run '" + scenario_path("quickstart.yaml") + "' --output q.h5 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("dlsim-hdf5.so"), std::string::npos);
  EXPECT_NE(r.err.find("libhdf5"), std::string::npos);
  EXPECT_EQ(r.err.find("libcudart"), std::string::npos);
  EXPECT_GT(std::filesystem::file_size(dir / "q.h5"), 1000u);
}

TEST(StartUp, CalibrateOnCudaLoadsTheCudaPlugin) {
  const std::filesystem::path plugin = std::filesystem::path(DLSIM_EXECUTABLE).parent_path() / "dlsim-cuda.so";
  if (!std::filesystem::exists(plugin)) GTEST_SKIP() << "dlsim was built without CUDA (nvcc not found): no " << plugin;
  const auto dir = fresh_folder("start-up-cuda");
  const CommandResult r = run_logging_libraries(dir, "calibrate --backend cuda --out p.yaml --quick");
  EXPECT_NE(r.err.find("dlsim-cuda.so"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("libcudart"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_EQ(r.err.find("libmpi"), std::string::npos);
}

}  // namespace
}  // namespace dlsim::cli_test
