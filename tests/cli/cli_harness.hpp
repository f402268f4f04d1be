// Runs the dlsim executable in a fresh temporary folder and captures its exit code and output.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace dlsim::cli_test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A folder of this process alone: ctest runs tests of one file in parallel processes.
inline std::filesystem::path fresh_folder(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("dlsim-cli-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `dlsim <arguments>` with `dir` as the working folder.
inline CommandResult run_dlsim(const std::filesystem::path& dir, const std::string& arguments) {
  const std::string command = "cd '" + dir.string() + "' && '" DLSIM_EXECUTABLE "' " + arguments +
                              " >stdout.txt 2>stderr.txt";
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "stdout.txt");
  r.err = slurp(dir / "stderr.txt");
  return r;
}

inline std::string scenario_path(const std::string& name) {
  return std::string(DLSIM_SOURCE_DIR) + "/scenarios/" + name;
}

}  // namespace dlsim::cli_test
