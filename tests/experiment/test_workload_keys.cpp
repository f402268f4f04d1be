// Issue 19: workload.tokens in training scenarios, --set of the other batch key, and the default
// precision (the device's usual training precision).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment/results.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

using test::error_loading;
using test::position_of;

std::string llm(const std::string& work) {
  return "cluster: {instance: aws/p4d.24xlarge, nodes: 1}\n"
         "workload:\n  model: gpt3-125m\n  sequence_length: 1024\n  precision: bf16\n  batch: {global: 64}\n" +
         work;
}

TEST(WorkloadTokens, SetTheIterationsFromTheGlobalBatchAndSequenceLength) {
  const Scenario s = load_scenario_text(llm("  tokens: 1e9\n"), "s.yaml");
  EXPECT_EQ(s.workload.tokens, 1e9);
  const Results r = run(s);
  ASSERT_EQ(r.rows.size(), 1u);
  // 1e9 tokens / (64 sequences x 1024 tokens) = 15258.8, rounded up.
  EXPECT_EQ(r.rows[0].iterations, static_cast<std::int64_t>(std::ceil(1e9 / (64.0 * 1024.0))));
  // The same work given as those iterations costs the same.
  const Results same = run(load_scenario_text(llm("  iterations: 15259\n"), "s.yaml"));
  EXPECT_EQ(same.rows[0].iterations, r.rows[0].iterations);
  EXPECT_EQ(same.rows[0].time_to_train_s, r.rows[0].time_to_train_s);
}

TEST(WorkloadTokens, RefusedWithIterationsOrEpochsOrForAModelWithoutSequence) {
  const std::string both = llm("  tokens: 1e9\n  iterations: 10\n");
  const ConfigError e = error_loading(both);
  EXPECT_EQ(e.key_path(), "workload.tokens");
  EXPECT_EQ(e.where().line, position_of(both, "tokens: 1e9").first);
  EXPECT_NE(std::string(e.what()).find("tokens or iterations, not both"), std::string::npos) << e.what();

  const ConfigError epochs = error_loading(llm("  tokens: 1e9\n  data: {samples: 1000, epochs: 1}\n"));
  EXPECT_EQ(epochs.key_path(), "workload.tokens");

  const ConfigError cnn = error_loading(
      "cluster: {instance: aws/p3.16xlarge}\nworkload: {model: resnet50, precision: fp16, batch: {per_device: 64}, tokens: 1e9}\n");
  EXPECT_EQ(cnn.key_path(), "workload.tokens");
  EXPECT_NE(std::string(cnn.what()).find("has no sequence"), std::string::npos) << cnn.what();
}

TEST(WorkloadOverrides, SettingOneBatchOrWorkKeyReplacesTheOther) {
  const std::string text = "cluster: {instance: aws/p3.16xlarge, nodes: 2}\n"
                           "workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, iterations: 10}\n";
  const Scenario s = load_scenario_text(text, "s.yaml", {"workload.batch.global=1024"});
  EXPECT_EQ(s.workload.batch_mode, BatchMode::global);
  EXPECT_EQ(s.workload.batch, 1024);
  const Scenario back = load_scenario_text(llm("  iterations: 10\n"), "s.yaml", {"workload.batch.per_device=4", "workload.tokens=1e8"});
  EXPECT_EQ(back.workload.batch_mode, BatchMode::per_device);
  EXPECT_EQ(back.workload.iterations, 0);
  EXPECT_EQ(back.workload.tokens, 1e8);
  // In the file itself both are still one too many.
  const ConfigError e = error_loading("cluster: {instance: aws/p3.16xlarge}\n"
                                      "workload: {model: resnet50, precision: fp16, batch: {per_device: 64, global: 128}, iterations: 10}\n");
  EXPECT_EQ(e.key_path(), "workload.batch");
}

models::Precision default_precision_on(const std::string& instance) {
  const std::string text = "cluster: {instance: " + instance + "}\nworkload: {model: resnet50, batch: {per_device: 8}, iterations: 10}\n";
  const Scenario s = load_scenario_text(text, "s.yaml");
  EXPECT_TRUE(s.workload.precision_is_default);
  return s.workload.precision;
}

TEST(WorkloadPrecision, DefaultsToTheDevicesUsualTrainingPrecision) {
  EXPECT_EQ(default_precision_on("aws/p4d.24xlarge"), models::Precision::bf16);  // A100: Ampere
  EXPECT_EQ(default_precision_on("aws/p5.48xlarge"), models::Precision::bf16);   // H100: Hopper
  EXPECT_EQ(default_precision_on("aws/p3.16xlarge"), models::Precision::fp16);   // V100: Volta
  EXPECT_EQ(default_precision_on("aws/p2.xlarge"), models::Precision::fp32);     // K80
  EXPECT_EQ(default_precision_on("gcp/tpu-v3-8"), models::Precision::bf16);
  EXPECT_EQ(default_precision_on("aws/trn1.32xlarge"), models::Precision::bf16);  // Trainium
  const Scenario given = load_scenario_text(llm("  iterations: 10\n"), "s.yaml");
  EXPECT_FALSE(given.workload.precision_is_default);
}

}  // namespace
}  // namespace dlsim::experiment
