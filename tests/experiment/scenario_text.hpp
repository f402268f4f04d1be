// Helpers for tests that edit scenario text and check where an error is reported.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"

namespace dlsim::experiment::test {

// 1-based line and column of the first occurrence of `needle` in `text`; {0, 0} if absent.
inline std::pair<int, int> position_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  if (at == std::string::npos) return {0, 0};
  const auto line_start = text.rfind('\n', at);
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  const int column = static_cast<int>(at - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
  return {line, column};
}

// The ConfigError loading `text` throws; fails the test when none is thrown.
inline ConfigError error_loading(const std::string& text, const std::string& file = "scenario.yaml") {
  try {
    load_scenario_text(text, file);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError({}, "<none>", "<none>");
}

}  // namespace dlsim::experiment::test
