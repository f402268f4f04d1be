// Optimizers: their names, the state they keep and the traffic of their step, as the memory
// model and the replay use them.
#include <gtest/gtest.h>

#include "models/memory_model.hpp"
#include "models/optimizer.hpp"
#include "models/parallel_plan.hpp"
#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

TEST(Optimizer, NamesRoundTrip) {
  for (const std::string& name : optimizer_names()) {
    const auto o = optimizer_from_string(name);
    ASSERT_TRUE(o.has_value()) << name;
    EXPECT_EQ(to_string(*o), name);
  }
  EXPECT_FALSE(optimizer_from_string("adagrad").has_value());
  EXPECT_EQ(optimizer_names().size(), 6u);
}

TEST(Optimizer, StateAndStepFollowWhatEachKeeps) {
  EXPECT_EQ(optimizer_state_bytes(Optimizer::adam), 8.0);
  EXPECT_EQ(optimizer_state_bytes(Optimizer::adamw), optimizer_state_bytes(Optimizer::adam));
  EXPECT_EQ(optimizer_state_bytes(Optimizer::lamb), optimizer_state_bytes(Optimizer::adam));
  EXPECT_EQ(optimizer_state_bytes(Optimizer::sgd_momentum), 4.0);
  EXPECT_EQ(optimizer_state_bytes(Optimizer::adafactor), 0.0);  // factored: rows + columns only
  EXPECT_NEAR(optimizer_state_bytes(Optimizer::adam_8bit), 2.0, 0.01);
  // LAMB's second pass (the trust ratio) costs more traffic than Adam; 8-bit states less.
  const Precision bf16 = Precision::bf16;
  EXPECT_GT(optimizer_bytes_per_parameter(Optimizer::lamb, bf16), optimizer_bytes_per_parameter(Optimizer::adam, bf16));
  EXPECT_LT(optimizer_bytes_per_parameter(Optimizer::adam_8bit, bf16), optimizer_bytes_per_parameter(Optimizer::adam, bf16));
  EXPECT_EQ(optimizer_bytes_per_parameter(Optimizer::adam, Precision::fp32) + 2.0, optimizer_bytes_per_parameter(Optimizer::adam, bf16));
}

TEST(Optimizer, MixedPrecisionStepsPassOverGradientsAndMasterWeights) {
  const Precision fp16 = Precision::fp16, bf16 = Precision::bf16, fp32 = Precision::fp32;
  EXPECT_EQ(mixed_precision_step_bytes(fp32, fp32), 0.0);
  // BF16 with FP32 gradients: only the master's read by the copy to the model's weights.
  EXPECT_EQ(mixed_precision_step_bytes(bf16, fp32), 4.0);
  // Megatron-LM 2021's FP16 optimizer with FP16 gradients: copy them to FP32 (2 + 4), unscale
  // and check them (4 + 4), read the master for the copy back (4).
  EXPECT_EQ(mixed_precision_step_bytes(fp16, fp16), 18.0);
  EXPECT_EQ(mixed_precision_step_bytes(fp16, fp32), 12.0);
  EXPECT_EQ(mixed_precision_step_bytes(Precision::fp8, bf16), 10.0);
}

TEST(Optimizer, MemoryCountsEachOptimizersState) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  const double params = model.parameters();
  const double adam = peak_memory(model, plan).optimizer_state;
  EXPECT_NEAR(adam, params * (4 + 8), 1e-6 * adam);  // FP32 master + m, v
  plan.optimizer = Optimizer::adam_8bit;
  EXPECT_NEAR(adam - peak_memory(model, plan).optimizer_state, params * 6, 0.01 * params);
  plan.optimizer = Optimizer::adafactor;
  EXPECT_NEAR(peak_memory(model, plan).optimizer_state, params * 4, 1e-6 * adam);
}

}  // namespace
}  // namespace dlsim::models
