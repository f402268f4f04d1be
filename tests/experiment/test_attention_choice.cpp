// workload.attention (zoo decoders and encoders) and transformer.attention (defined transformers): auto picks
// FlashAttention where the device and precision run it, as current frameworks do, and the
// unfused product elsewhere; an explicit choice the device cannot run is an error at its key.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "models/model_graph.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

std::string decoder_scenario(const std::string& instance, const std::string& precision, const std::string& attention) {
  return "cluster:\n  instance: " + instance +
         "\nworkload:\n  model: gpt3-125m\n  sequence_length: 1024\n" + attention + "  precision: " + precision +
         "\n  optimizer: adam\n  batch: {global: 16}\n  iterations: 10\n  plan: {micro_batch_size: 1}\n";
}

// A bf16 decoder on `instance` with workload.attention `choice`: the loaded scenario (whose
// decoder must run FlashAttention with `kernel`) and its results.
std::pair<Scenario, Results> flash_run(const std::string& instance, const std::string& choice, models::FlashKernel kernel) {
  Scenario s = load_scenario_text(decoder_scenario(instance, "bf16", "  attention: " + choice + "\n"), "s.yaml");
  EXPECT_TRUE(s.workload.decoder->flash_attention) << choice;
  EXPECT_EQ(s.workload.decoder->flash_kernel, kernel) << choice;
  Results r = run(s);
  return {std::move(s), std::move(r)};
}

TEST(AttentionChoice, AutoPicksFlashWhereItRunsAndUnfusedElsewhere) {
  const Scenario a100 = load_scenario_text(decoder_scenario("aws/p4d.24xlarge", "bf16", ""), "a.yaml");
  ASSERT_TRUE(a100.workload.decoder);
  EXPECT_TRUE(a100.workload.decoder->flash_attention);
  const Results flash = run(a100);
  ASSERT_EQ(flash.rows.size(), 1u);
  EXPECT_GT(flash.rows[0].attention_s, 0);  // one FlashAttention kernel per layer and pass
  EXPECT_NE(flash.resolved_yaml.find("attention: flash"), std::string::npos) << flash.resolved_yaml;
  // V100 (Volta): FlashAttention-2 needs Ampere or newer.
  const Scenario v100 = load_scenario_text(decoder_scenario("aws/p3.16xlarge", "fp16", ""), "v.yaml");
  EXPECT_FALSE(v100.workload.decoder->flash_attention);
  EXPECT_EQ(run(v100).rows[0].attention_s, 0);
  // fp32 on an A100: no FlashAttention kernel either.
  EXPECT_FALSE(load_scenario_text(decoder_scenario("aws/p4d.24xlarge", "fp32", ""), "f.yaml").workload.decoder->flash_attention);
}

// The newer catalog devices train in bf16 by default and run FlashAttention (FlashAttention-4 and
// cuDNN on Blackwell, the ROCm ports on MI300X), and a B200 step is faster than an H100's.
TEST(AttentionChoice, NewerDevicesDefaultToBf16WithFlash) {
  const std::string no_precision = "cluster:\n  instance: nvidia/dgx-b200\nworkload:\n  model: gpt3-125m\n  sequence_length: "
                                   "1024\n  optimizer: adam\n  batch: {global: 16}\n  iterations: 10\n  plan: {micro_batch_size: 1}\n";
  const Scenario b200 = load_scenario_text(no_precision, "b.yaml");
  EXPECT_EQ(b200.workload.precision, models::Precision::bf16);
  EXPECT_TRUE(b200.workload.decoder->flash_attention);
  for (const char* instance : {"amd/instinct-mi300x-platform", "aws/g6e.xlarge"}) {
    const Scenario s = load_scenario_text(decoder_scenario(instance, "bf16", ""), "s.yaml");
    EXPECT_TRUE(s.workload.decoder->flash_attention) << instance;
  }
  const Results b = run(b200);
  const Results h = run(load_scenario_text(decoder_scenario("nvidia/dgx-h100", "bf16", ""), "h.yaml"));
  ASSERT_EQ(b.rows.size(), 1u);
  ASSERT_EQ(h.rows.size(), 1u);
  EXPECT_LT(b.rows[0].compute_s, h.rows[0].compute_s);
}

// flash-triton: the same FlashAttention kernels, as the Triton implementation runs them (slower,
// models/attention_model.cpp R8), for zoo decoders, defined transformers and encoders; refused
// where FlashAttention cannot run, at its key, as flash is.
TEST(AttentionChoice, FlashTritonIsFlashAtTheTritonKernelsSpeed) {
  const Results fa2 = flash_run("aws/p4d.24xlarge", "flash", models::FlashKernel::fa2).second;
  const Results triton = flash_run("aws/p4d.24xlarge", "flash-triton", models::FlashKernel::triton).second;
  EXPECT_GT(triton.rows[0].attention_s, 1.4 * fa2.rows[0].attention_s);
  EXPECT_LT(triton.rows[0].attention_s, 2.0 * fa2.rows[0].attention_s);
  EXPECT_DOUBLE_EQ(test::without_held_sms(triton.rows[0], triton.rows[0].gemm_s), test::without_held_sms(fa2.rows[0], fa2.rows[0].gemm_s));
  EXPECT_NE(triton.resolved_yaml.find("attention: flash-triton"), std::string::npos);
  const std::string v100 = decoder_scenario("aws/p3.16xlarge", "fp16", "  attention: flash-triton\n");
  EXPECT_EQ(test::error_loading(v100, "v.yaml").key_path(), "workload.attention");
  const std::string defined =
      "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model:\n    name: mpt-125m\n    transformer: {layers: 12, "
      "hidden: 768, heads: 12, vocab: 50368, sequence_length: 2048, bias: false, attention: flash-triton}\n  precision: "
      "bf16\n  optimizer: adamw\n  batch: {global: 16}\n  iterations: 10\n  plan: {micro_batch_size: 1}\n";
  const Scenario d = load_scenario_text(defined, "d.yaml");
  EXPECT_EQ(d.workload.decoder->flash_kernel, models::FlashKernel::triton);
  EXPECT_GT(run(d).rows[0].attention_s, 0);
  const std::string bert = "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model: bert-large\n  attention: flash-triton\n"
                           "  precision: bf16\n  optimizer: lamb\n  batch: {per_device: 8}\n  iterations: 10\n";
  EXPECT_NE(run(load_scenario_text(bert, "b.yaml")).resolved_yaml.find("attention: flash-triton"), std::string::npos);
}

// flash3: FlashAttention-3 on Hopper, faster than FA2 there (models/attention_model.cpp R9); refused
// on any other GPU at its key.
TEST(AttentionChoice, Flash3IsFasterThanFlashOnHopperAndRefusedElsewhere) {
  const Results fa2 = flash_run("nvidia/dgx-h100", "flash", models::FlashKernel::fa2).second;
  const Results fa3 = flash_run("nvidia/dgx-h100", "flash3", models::FlashKernel::fa3).second;
  EXPECT_LT(fa3.rows[0].attention_s, fa2.rows[0].attention_s);
  EXPECT_GT(fa3.rows[0].attention_s, 0.4 * fa2.rows[0].attention_s);
  // The GEMMs are the same kernels; with less tensor-core time in the step the power limit slows
  // them a little less (models/power_limit.hpp).
  EXPECT_LE(fa3.rows[0].gemm_s, fa2.rows[0].gemm_s);
  EXPECT_GT(fa3.rows[0].gemm_s, 0.98 * fa2.rows[0].gemm_s);
  EXPECT_NE(fa3.resolved_yaml.find("attention: flash3"), std::string::npos);
  const ConfigError a100 = test::error_loading(decoder_scenario("aws/p4d.24xlarge", "bf16", "  attention: flash3\n"), "v.yaml");
  EXPECT_EQ(a100.key_path(), "workload.attention");
  EXPECT_NE(std::string(a100.what()).find("Hopper"), std::string::npos) << a100.what();
  const std::string defined =
      "cluster:\n  instance: nvidia/dgx-h100\nworkload:\n  model:\n    name: llama-1b\n    transformer: {layers: 4, "
      "hidden: 2048, heads: 32, kv_heads: 8, ffn: 8192, ffn_kind: swiglu, vocab: 128256, sequence_length: 4096, "
      "positions: rotary, norm: rmsnorm, bias: false, attention: flash3}\n  precision: bf16\n  optimizer: adamw\n"
      "  batch: {global: 16}\n  iterations: 10\n  plan: {micro_batch_size: 1}\n";
  EXPECT_EQ(load_scenario_text(defined, "d.yaml").workload.decoder->flash_kernel, models::FlashKernel::fa3);
}

TEST(AttentionChoice, UnfusedKeepsTheScoresAndCostsMemory) {
  const Scenario flash = load_scenario_text(decoder_scenario("aws/p4d.24xlarge", "bf16", "  attention: flash\n"), "a.yaml");
  const Scenario unfused = load_scenario_text(decoder_scenario("aws/p4d.24xlarge", "bf16", "  attention: unfused\n"), "u.yaml");
  EXPECT_TRUE(flash.workload.decoder->flash_attention);
  EXPECT_FALSE(unfused.workload.decoder->flash_attention);
  const Results f = run(flash), u = run(unfused);
  EXPECT_GT(u.rows[0].memory_bytes, f.rows[0].memory_bytes);  // the 1024 x 1024 scores per head
  EXPECT_EQ(u.rows[0].attention_s, 0);
}

TEST(AttentionChoice, AFlashChoiceTheDeviceCannotRunIsAnErrorAtItsKey) {
  const std::string text = decoder_scenario("aws/p3.16xlarge", "fp16", "  attention: flash\n");
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "workload.attention");
  EXPECT_EQ(e.where().line, test::position_of(text, "attention: flash").first);
  EXPECT_NE(e.message().find("Ampere or newer"), std::string::npos) << e.what();
  // Only transformers have the choice.
  const ConfigError r = test::error_loading(
      "cluster:\n  instance: aws/p3.16xlarge\nworkload:\n  model: resnet50\n  attention: flash\n  batch: {per_device: 32}\n"
      "  iterations: 10\n");
  EXPECT_EQ(r.key_path(), "workload.attention");
  EXPECT_NE(r.message().find("not one"), std::string::npos) << r.what();
}

std::string encoder_scenario(const std::string& model, const std::string& instance, const std::string& precision,
                             const std::string& attention) {
  return "cluster:\n  instance: " + instance + "\nworkload:\n  model: " + model + "\n" + attention + "  precision: " + precision +
         "\n  optimizer: adam\n  batch: {per_device: 32}\n  iterations: 10\n";
}

int attention_layers(const Scenario& s) {
  int n = 0;
  for (const models::Layer& l : s.workload.model.layers) n += l.kind == models::LayerKind::attention;
  return n;
}

// BERT and ViT choose too: PyTorch's SDPA takes their attention where FlashAttention runs.
TEST(AttentionChoice, EncodersPickFlashWhereItRunsAndKeepTheirFlops) {
  for (const char* model : {"bert-large", "vit-b16"}) {
    SCOPED_TRACE(model);
    const Scenario automatic = load_scenario_text(encoder_scenario(model, "aws/p4d.24xlarge", "bf16", ""), "a.yaml");
    const Scenario unfused = load_scenario_text(encoder_scenario(model, "aws/p4d.24xlarge", "bf16", "  attention: unfused\n"), "u.yaml");
    EXPECT_EQ(attention_layers(automatic), std::string(model) == "bert-large" ? 24 : 12);  // one per encoder layer
    EXPECT_EQ(attention_layers(unfused), 0);
    // The same model: its parameters, and its forward FLOPs but for the unfused softmax's 5 per
    // score and BERT's dropout on the probabilities, 2 per score (the matrix products count
    // 4 s^2 h either way, as the FlashAttention papers count).
    EXPECT_EQ(automatic.workload.model.parameters(), unfused.workload.model.parameters());
    const bool bert = model == std::string("bert-large");
    const double layers = bert ? 24 : 12, heads = bert ? 16 : 12, s = bert ? 128 : 197;
    EXPECT_NEAR(unfused.workload.model.forward_flops_per_sample() - automatic.workload.model.forward_flops_per_sample(),
                (bert ? 7 : 5) * heads * s * s * layers, 1e-9 * unfused.workload.model.forward_flops_per_sample());
    const Results f = run(automatic), u = run(unfused);
    EXPECT_GT(f.rows[0].attention_s, 0);
    EXPECT_EQ(u.rows[0].attention_s, 0);
    EXPECT_GT(u.rows[0].memory_bytes, f.rows[0].memory_bytes);  // the s x s scores per head, kept for backward
    EXPECT_NE(f.resolved_yaml.find("attention: flash"), std::string::npos) << f.resolved_yaml;
    EXPECT_NE(u.resolved_yaml.find("attention: unfused"), std::string::npos) << u.resolved_yaml;
    // Volta has no FlashAttention: auto stays unfused, flash is an error at its key.
    EXPECT_EQ(attention_layers(load_scenario_text(encoder_scenario(model, "aws/p3.16xlarge", "fp16", ""), "v.yaml")), 0);
    const ConfigError e = test::error_loading(encoder_scenario(model, "aws/p3.16xlarge", "fp16", "  attention: flash\n"));
    EXPECT_EQ(e.key_path(), "workload.attention");
  }
  // BERT's masked-LM positions survive the rebuild: the head on 20 positions is cheaper.
  const std::string masked = encoder_scenario("bert-large", "aws/p4d.24xlarge", "bf16", "  mlm_positions: 20\n");
  EXPECT_LT(load_scenario_text(masked, "m.yaml").workload.model.forward_flops_per_sample(),
            load_scenario_text(encoder_scenario("bert-large", "aws/p4d.24xlarge", "bf16", ""), "b.yaml").workload.model.forward_flops_per_sample());
  EXPECT_EQ(attention_layers(load_scenario_text(masked, "m.yaml")), 24);
}

TEST(AttentionChoice, ADefinedTransformerResolvesItsOwnKey) {
  const std::string text =
      "cluster:\n  instance: aws/p3.16xlarge\nworkload:\n  model:\n    name: tiny\n"
      "    transformer: {layers: 2, hidden: 256, heads: 4, vocab: 1000, sequence_length: 128, attention: flash}\n"
      "  precision: fp16\n  batch: {per_device: 4}\n  iterations: 10\n";
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "workload.model.transformer.attention");
  EXPECT_EQ(e.where().column, test::position_of(text, "flash}").second);
  std::string automatic = text;
  automatic.replace(automatic.find("attention: flash"), 16, "attention: auto");
  EXPECT_FALSE(load_scenario_text(automatic, "t.yaml").workload.decoder->flash_attention);  // Volta: unfused
}

}  // namespace
}  // namespace dlsim::experiment
