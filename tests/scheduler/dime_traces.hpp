// Where the training-on-a-dime spot traces are (never copied into the repository):
// $DLSIM_SOURCE_DIR/../shared/data/traces, else /work/shared/data/traces. Tests that need them
// skip visibly when neither exists.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace dlsim::scheduler {

// The folder, or "" when neither exists.
inline std::string dime_dir() {
  std::vector<std::string> roots;
  if (const char* src = std::getenv("DLSIM_SOURCE_DIR")) roots.push_back(std::string(src) + "/../shared/data/traces");
  roots.push_back("/work/shared/data/traces");
  for (const auto& root : roots) {
    const auto dir = root + "/spot_aws_gcp_training_on_a_dime";
    if (std::filesystem::is_directory(dir)) return dir;
  }
  return "";
}

}  // namespace dlsim::scheduler

#define REQUIRE_TRACES(dir)                                                                    \
  const std::string dir = dime_dir();                                                          \
  if (dir.empty()) GTEST_SKIP() << "spot traces not found (../shared/data/traces): skipped"
