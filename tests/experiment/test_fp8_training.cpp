// FP8 training as Transformer Engine runs it (models/fp8_recipe.hpp) on the shipped H100 kernel
// profile: faster than bf16 but far from the 2x of the peaks, and refused where the device has
// no FP8 peak.
#include <gtest/gtest.h>

#include <string>

#include "experiment/builtin_profiles.hpp"
#include "models/fp8_recipe.hpp"
#include "models/iteration_program.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "models/replay_fixtures.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

using models::KernelFamilyKind;
using models::Precision;

// A GPT-3 6.7B-sized stack on one H100 (Megatron-Core with TE: FlashAttention, bf16 elsewhere).
struct H100Gpt {
  models::Catalog catalog = builtin_catalog();
  models::DeviceSpec device = *catalog.find_device("H100-SXM");
  models::DeviceProfile profile = *catalog.find_profile("H100-SXM");
  models::ModelGraph model;
  H100Gpt() {
    models::DecoderConfig c = models::decoder_config("gpt3-6.7b");
    c.flash_attention = true;
    model = models::decoder_transformer(c, 2048);
  }
  models::ParallelPlan plan(Precision p) const {
    models::ParallelPlan plan;
    plan.precision = p;
    plan.gradient_precision = Precision::bf16;
    plan.micro_batches = 8;
    return plan;
  }
  // Forward plus backward of one micro-batch, and the memory-bound kernels' part of it.
  std::pair<double, double> pass_seconds(Precision p) const {
    const models::IterationProgram program = models::build_iteration_program(model, plan(p), device, profile);
    const models::StageProgram& s = program.stages.front();
    const std::size_t memory = static_cast<std::size_t>(KernelFamilyKind::memory);
    return {s.forward.compute_s + s.backward.compute_s, s.forward.family_s[memory] + s.backward.family_s[memory]};
  }
};

TEST(Fp8Training, H100GptIsFasterThanBf16ButFarFromTwice) {
  const H100Gpt h;
  ASSERT_TRUE(h.profile.kernels.present());
  const auto [bf16, bf16_memory] = h.pass_seconds(Precision::bf16);
  const auto [fp8, fp8_memory] = h.pass_seconds(Precision::fp8);
  EXPECT_LT(fp8, bf16);
  EXPECT_LT(bf16 / fp8, 1.6);   // attention, bf16 elementwise kernels and the casts do not speed up
  EXPECT_GT(bf16 / fp8, 1.15);
  EXPECT_GT(fp8_memory, bf16_memory);  // the cast-transposes
}

// Held out: cuBLASLt FP8 GEMMs measured on Azure ND H100 v5 (reference record
// azure-h100-gemm-fp8: 1216.9 and 1290.1 TFLOP/s at 4096^3 and 8192^3, calls repeated back to
// back, so under the power limit). The FP8 constants measured on an H200 (fp8_recipe.hpp), at the
// H100 profile's rate under continuous load (power_limit.hpp), reproduce them within 6%.
TEST(Fp8Training, Fp8GemmUnderLoadMatchesTheMeasuredH100Figures) {
  const H100Gpt h;
  ASSERT_LT(h.profile.kernels.sustained_tensor_rate, 1.0);
  const models::GemmParams params = models::fp8_gemm_params(h.profile.kernels, models::Fp8Accumulation::fast);
  for (const auto& [size, measured] : {std::pair{4096.0, 1216.9e12}, std::pair{8192.0, 1290.1e12}}) {
    const double s = models::gemm_time({size, size, size, 1, models::GemmLayout::nt}, Precision::fp8, h.device, params).seconds /
                     h.profile.kernels.sustained_tensor_rate;
    EXPECT_NEAR(2 * size * size * size / s / measured, 1.0, 0.06) << size;
  }
}

TEST(Fp8Training, ReplayIsBitIdenticalRunToRun) {
  const H100Gpt h;
  const network::Topology topology = models::test::dgx_cluster(1);
  models::TrainingConfig c;
  c.model = &h.model;
  c.device = h.device;
  c.profile = h.profile;
  c.topology = &topology;
  c.plan = h.plan(Precision::fp8);
  c.plan.tensor = 8;
  c.plan.sequence_parallel = true;
  const models::IterationBreakdown a = models::replay_iteration(c);
  const models::IterationBreakdown b = models::replay_iteration(c);
  EXPECT_EQ(a.iteration_s, b.iteration_s);
  EXPECT_EQ(a.compute_s, b.compute_s);
  c.plan.precision = Precision::bf16;
  EXPECT_LT(a.iteration_s, models::replay_iteration(c).iteration_s);
}

TEST(Fp8Training, Fp8OnA100IsRefusedWhereItIsAsked) {
  const std::string text = R"(seed: 1
cluster:
  instance: aws/p4d.24xlarge
  nodes: 1
workload:
  model: gpt3-1.3b
  precision: fp8
  batch: {global: 8}
  iterations: 10
)";
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "workload.precision");
  EXPECT_EQ(e.where().line, 7);
  EXPECT_NE(std::string(e.what()).find("has no fp8 support"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace dlsim::experiment
