// workload.fused_kernels: a decoder transformer's bias-GeLU, bias-dropout-add and scale-mask-
// softmax fused as Megatron-LM runs them (the default) or each a kernel of its own
// (models/zoo_decoder.cpp); an encoder's (BERT, ViT) scale-mask-softmax and dropout-add likewise
// (models/zoo_transformer.cpp). Unfused costs memory-bound kernels, not FLOPs or memory.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

std::string gpt_on(const std::string& precision, const std::string& extra) {
  return "cluster:\n  instance: aws/p4d.24xlarge\n  nodes: 1\nworkload:\n  model: gpt2\n  attention: unfused\n" + extra +
         "  precision: " + precision + "\n  optimizer: adam\n  batch: {per_device: 2}\n  iterations: 10\n";
}

ResultRow row_of(const std::string& text) {
  const Results r = run(load_scenario_text(text, "f.yaml"));
  EXPECT_EQ(r.rows.size(), 1u);
  return r.rows.at(0);
}

TEST(KernelFusion, UnfusedKernelsCostMemoryPassesNotFlops) {
  const ResultRow fused = row_of(gpt_on("fp16", ""));
  const ResultRow unfused = row_of(gpt_on("fp16", "  fused_kernels: false\n"));
  EXPECT_EQ(row_of(gpt_on("fp16", "  fused_kernels: true\n")).iteration_s, fused.iteration_s);
  EXPECT_GT(unfused.memory_kernels_s, fused.memory_kernels_s * 1.3);
  EXPECT_NEAR(test::without_held_sms(unfused, unfused.gemm_s), test::without_held_sms(fused, fused.gemm_s), 1e-9 * fused.gemm_s);
  EXPECT_GT(unfused.iteration_s, fused.iteration_s);
  // The model's FLOPs are the same: the TFLOP/s per accelerator fall with the time.
  EXPECT_NEAR(unfused.tflops_per_accelerator * unfused.iteration_s, fused.tflops_per_accelerator * fused.iteration_s,
              1e-9 * fused.tflops_per_accelerator * fused.iteration_s);
  const Results r = run(load_scenario_text(gpt_on("fp16", "  fused_kernels: false\n"), "f.yaml"));
  EXPECT_NE(r.resolved_yaml.find("fused_kernels: false"), std::string::npos);
  EXPECT_EQ(run(load_scenario_text(gpt_on("fp16", ""), "f.yaml")).resolved_yaml.find("fused_kernels"), std::string::npos);
}

TEST(KernelFusion, TheFp32SoftmaxOfSixteenBitTrainingCostsItsConversions) {
  // In FP32 training the unfused softmax is already FP32: no conversion kernels, so the unfused
  // step's extra memory time is a smaller share of its memory-bound time than in FP16.
  const double fp16 = row_of(gpt_on("fp16", "  fused_kernels: false\n")).memory_kernels_s /
                      row_of(gpt_on("fp16", "")).memory_kernels_s;
  const double fp32 = row_of(gpt_on("fp32", "  fused_kernels: false\n")).memory_kernels_s /
                      row_of(gpt_on("fp32", "")).memory_kernels_s;
  EXPECT_GT(fp32, 1.0);
  EXPECT_GT(fp16, fp32 * 1.1);
}

TEST(KernelFusion, AnUnfusedCrossEntropyMovesTheLogitsSeveralTimes) {
  const ResultRow fused = row_of(gpt_on("fp16", ""));
  const ResultRow unfused = row_of(gpt_on("fp16", "  fused_cross_entropy: false\n"));
  // GPT-2's 1,024 x 50,257 logits per sequence: about 52 bytes per logit moved (conversion, five
  // passes forward, one backward, conversion back) where the fused kernel moves about 5.
  EXPECT_GT(unfused.memory_kernels_s, fused.memory_kernels_s);
  EXPECT_GT(unfused.iteration_s, fused.iteration_s * 1.01);
  EXPECT_NEAR(unfused.tflops_per_accelerator * unfused.iteration_s, fused.tflops_per_accelerator * fused.iteration_s,
              1e-9 * fused.tflops_per_accelerator * fused.iteration_s);
  EXPECT_NE(run(load_scenario_text(gpt_on("fp16", "  fused_cross_entropy: false\n"), "f.yaml")).resolved_yaml.find("fused_cross_entropy: false"),
            std::string::npos);
}

std::string bert_on(const std::string& precision, const std::string& extra) {
  return "cluster:\n  instance: aws/p4d.24xlarge\n  nodes: 1\nworkload:\n  model: bert-large\n  attention: unfused\n" +
         extra + "  precision: " + precision + "\n  optimizer: lamb\n  batch: {per_device: 32}\n  iterations: 10\n";
}

TEST(KernelFusion, AnUnfusedEncoderRunsItsSoftmaxInFp32UnderSixteenBitTraining) {
  // BERT eager under autocast: scale, mask, an FP32 softmax between two conversions, dropout
  // and a separate residual add; the same FLOPs, more memory-bound time, and in FP32 training
  // no conversions (a smaller share more).
  const ResultRow fused = row_of(bert_on("fp16", ""));
  const ResultRow unfused = row_of(bert_on("fp16", "  fused_kernels: false\n"));
  EXPECT_GT(unfused.memory_kernels_s, fused.memory_kernels_s * 1.3);
  EXPECT_NEAR(test::without_held_sms(unfused, unfused.gemm_s), test::without_held_sms(fused, fused.gemm_s), 1e-9 * fused.gemm_s);
  EXPECT_NEAR(unfused.tflops_per_accelerator * unfused.iteration_s, fused.tflops_per_accelerator * fused.iteration_s,
              1e-9 * fused.tflops_per_accelerator * fused.iteration_s);
  const double fp16 = unfused.memory_kernels_s / fused.memory_kernels_s;
  const double fp32 = row_of(bert_on("fp32", "  fused_kernels: false\n")).memory_kernels_s /
                      row_of(bert_on("fp32", "")).memory_kernels_s;
  EXPECT_GT(fp32, 1.0);
  EXPECT_GT(fp16, fp32 * 1.1);
  EXPECT_NE(run(load_scenario_text(bert_on("fp16", "  fused_kernels: false\n"), "f.yaml")).resolved_yaml.find("fused_kernels: false"),
            std::string::npos);
  // The loss's fusion is a decoder's choice: BERT's masked-LM loss is not modelled as a kernel.
  const std::string loss = bert_on("fp16", "  fused_cross_entropy: false\n");
  const ConfigError e = test::error_loading(loss);
  EXPECT_EQ(e.key_path(), "workload.fused_cross_entropy");
  EXPECT_EQ(e.where().line, test::position_of(loss, "fused_cross_entropy").first);
}

TEST(KernelFusion, IsRefusedForModelsThatAreNotTransformers) {
  const std::string resnet =
      "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model: resnet50\n  fused_kernels: false\n"
      "  batch: {per_device: 32}\n  iterations: 10\n";
  const ConfigError e = test::error_loading(resnet);
  EXPECT_EQ(e.key_path(), "workload.fused_kernels");
  EXPECT_EQ(e.where().line, test::position_of(resnet, "fused_kernels").first);
  EXPECT_NE(e.message().find("transformer's kernel fusion"), std::string::npos) << e.what();
  EXPECT_EQ(test::error_loading(gpt_on("fp16", "  fused_kernels: sometimes\n")).key_path(), "workload.fused_kernels");
  const std::string loss =
      "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model: resnet50\n  fused_cross_entropy: false\n"
      "  batch: {per_device: 32}\n  iterations: 10\n";
  EXPECT_EQ(test::error_loading(loss).key_path(), "workload.fused_cross_entropy");
}

}  // namespace
}  // namespace dlsim::experiment
