// Helpers for tests that edit scenario text and check where an error is reported.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

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

// A row's compute-family time (gemm_s, conv_s, ...) without what the SMs of overlapped
// data-parallel collectives cost its kernels (comm_sm_time, spread over the families by their
// shares): the part that depends on the kernels alone, not on how long the network runs beside them.
inline double without_held_sms(const ResultRow& row, double family_s) {
  return row.compute_s > 0 ? family_s * (row.compute_s - row.held_sm_s) / row.compute_s : family_s;
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

// A scenario edit that must be rejected, and where: the error's key path, text on the line it
// points at, and part of its message (for parameterized tests of a section's keys).
struct KeyErrorCase {
  const char* name;
  std::string edit;
  std::string key_path;
  std::string at;
  std::string message;
};

inline void expect_error_at(const std::string& text, const KeyErrorCase& c) {
  const ConfigError e = error_loading(text);
  EXPECT_EQ(e.key_path(), c.key_path) << e.what();
  EXPECT_EQ(e.where().line, position_of(text, c.at).first) << e.what();
  EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
}

// `text` with the first `from` replaced by `to`; a test failure (and `text` unchanged) when
// `from` is absent.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "not in the scenario: " << from;
    return text;
  }
  return text.replace(at, from.size(), to);
}

// An edit of a base scenario that must be rejected: `from` replaced by `to` (first occurrence),
// the error's key path, and part of its message.
struct ReplacementCase {
  std::string from, to, key, why;
};

// Each case's edited text is refused at its key, at a line of the file, with its message.
inline void expect_replacements_rejected(const std::string& base, const std::vector<ReplacementCase>& cases) {
  for (const ReplacementCase& c : cases) {
    ASSERT_NE(base.find(c.from), std::string::npos) << c.from;
    const ConfigError e = error_loading(replaced(base, c.from, c.to));
    EXPECT_EQ(e.key_path(), c.key) << e.what();
    EXPECT_GT(e.where().line, 0) << e.what();
    EXPECT_NE(e.message().find(c.why), std::string::npos) << e.what();
  }
}

inline std::string case_name(const ::testing::TestParamInfo<KeyErrorCase>& info) { return info.param.name; }

// ResNet-50 (AMP, 256 images per V100) on one aws/p3.16xlarge, over `samples` images for
// `epochs` epochs, with `extra` appended to the workload mapping (lines indented by two).
inline std::string resnet_on_one_p3(int samples, int epochs, const std::string& extra) {
  return "cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
         "workload:\n"
         "  model: resnet50\n"
         "  precision: fp16\n"
         "  batch: {per_device: 256}\n"
         "  data: {samples: " + std::to_string(samples) + ", epochs: " + std::to_string(epochs) + "}\n" +
         extra;
}

// The first result row of running a scenario given as text.
inline ResultRow first_row(const std::string& text) { return run(load_scenario_text(text, "s.yaml")).rows.at(0); }

}  // namespace dlsim::experiment::test
