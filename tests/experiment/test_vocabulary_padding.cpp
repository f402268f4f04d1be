// workload.pad_vocabulary: a framework that pads the vocabulary projection (Megatron-LM, NeMo,
// DeepLearningExamples; the default) against one that keeps the model's own width (Hugging Face).
// An unpadded width that is not a multiple of 16 bytes pays Hopper's measured alignment slowdown
// in the projection's three GEMMs (models/gemm_model.hpp); earlier GPUs have none.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

std::string gpt2_on(const std::string& instance, const std::string& extra) {
  return "cluster:\n  instance: " + instance + "\n  nodes: 1\nworkload:\n  model: gpt2\n  sequence_length: 1024\n" + extra +
         "  precision: bf16\n  optimizer: adam\n  batch: {per_device: 8}\n  iterations: 10\n";
}

double iteration_s(const std::string& text) {
  const Results r = run(load_scenario_text(text, "v.yaml"));
  EXPECT_EQ(r.rows.size(), 1u);
  return r.rows.at(0).iteration_s;
}

TEST(VocabularyPadding, AnUnpaddedGpt2HeadIsSlowerOnHopperOnly) {
  // GPT-2's 50,257 columns are 2-byte aligned in bf16: on an H100 the LM head's three GEMMs run
  // at the measured 2-byte slowdown (about 5-6x); everything else is the same.
  const double padded = iteration_s(gpt2_on("aws/p5.48xlarge", ""));
  const double unpadded = iteration_s(gpt2_on("aws/p5.48xlarge", "  pad_vocabulary: false\n"));
  EXPECT_EQ(iteration_s(gpt2_on("aws/p5.48xlarge", "  pad_vocabulary: true\n")), padded);
  EXPECT_GT(unpadded, padded * 1.2);
  EXPECT_LT(unpadded, padded * 3.0);
  // On an A100 the fallback kernels are no class of their own: the same time either way.
  EXPECT_EQ(iteration_s(gpt2_on("aws/p4d.24xlarge", "  pad_vocabulary: false\n")), iteration_s(gpt2_on("aws/p4d.24xlarge", "")));
  // Resolved YAML says so only when it is not the default.
  const Results r = run(load_scenario_text(gpt2_on("aws/p5.48xlarge", "  pad_vocabulary: false\n"), "v.yaml"));
  EXPECT_NE(r.resolved_yaml.find("pad_vocabulary: false"), std::string::npos);
  EXPECT_EQ(run(load_scenario_text(gpt2_on("aws/p5.48xlarge", ""), "v.yaml")).resolved_yaml.find("pad_vocabulary"), std::string::npos);
}

TEST(VocabularyPadding, IsRefusedForModelsWithoutAVocabularyAndForNonBooleans) {
  const std::string resnet =
      "cluster:\n  instance: aws/p5.48xlarge\nworkload:\n  model: resnet50\n  pad_vocabulary: false\n"
      "  batch: {per_device: 32}\n  iterations: 10\n";
  const ConfigError e = test::error_loading(resnet);
  EXPECT_EQ(e.key_path(), "workload.pad_vocabulary");
  EXPECT_EQ(e.where().line, test::position_of(resnet, "pad_vocabulary").first);
  EXPECT_NE(e.message().find("no projection to a vocabulary"), std::string::npos) << e.what();
  const ConfigError b = test::error_loading(gpt2_on("aws/p5.48xlarge", "  pad_vocabulary: maybe\n"));
  EXPECT_EQ(b.key_path(), "workload.pad_vocabulary");
}

}  // namespace
}  // namespace dlsim::experiment
