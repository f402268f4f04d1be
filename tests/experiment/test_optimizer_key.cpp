// workload.optimizer: every optimizer the models know, its step timed by its traffic, and a
// misspelt name reported with the nearest one; workload.mlm_positions, BERT's masked-LM head.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

std::string bert(const std::string& optimizer) {
  return "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model: bert-large\n  precision: fp16\n  optimizer: " + optimizer +
         "\n  batch: {per_device: 32}\n  iterations: 10\n";
}

TEST(OptimizerKey, EachOptimizerRunsWithItsStepCost) {
  const Results adam = run(load_scenario_text(bert("adam"), "a.yaml"));
  const Results lamb = run(load_scenario_text(bert("lamb"), "l.yaml"));
  const Results eight = run(load_scenario_text(bert("adam-8bit"), "e.yaml"));
  ASSERT_EQ(adam.rows.size(), 1u);
  EXPECT_GT(lamb.rows[0].optimizer_s, adam.rows[0].optimizer_s);   // the trust-ratio pass
  EXPECT_LT(eight.rows[0].optimizer_s, adam.rows[0].optimizer_s);  // 8-bit states
  EXPECT_LT(eight.rows[0].memory_bytes, adam.rows[0].memory_bytes);
  EXPECT_NE(lamb.resolved_yaml.find("optimizer: lamb"), std::string::npos);
}

TEST(OptimizerKey, AMisspeltNameIsAnErrorWithTheNearest) {
  const std::string text = bert("lamm");
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "workload.optimizer");
  EXPECT_NE(e.message().find("lamb"), std::string::npos) << e.what();
}

TEST(MlmPositionsKey, OnlyBertHasAMaskedLmHead) {
  const Results all = run(load_scenario_text(bert("adam"), "a.yaml"));
  std::string text = bert("adam");
  text.replace(text.find("  optimizer:"), 0, "  mlm_positions: 20\n");
  const Results masked = run(load_scenario_text(text, "m.yaml"));
  EXPECT_GT(masked.rows[0].samples_per_s, all.rows[0].samples_per_s);
  const ConfigError e = test::error_loading(
      "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model: resnet50\n  mlm_positions: 20\n  batch: {per_device: 32}\n"
      "  iterations: 10\n");
  EXPECT_EQ(e.key_path(), "workload.mlm_positions");
  EXPECT_NE(e.message().find("has none"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace dlsim::experiment
