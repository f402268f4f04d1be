// The power limit (models/power_limit.hpp): the law between the measured ends, and the replay's
// tensor-core kernels slowed by it while everything else keeps its time.
#include <gtest/gtest.h>

#include "kernel_test_devices.hpp"
#include "models/iteration_program.hpp"
#include "models/power_limit.hpp"
#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

TEST(PowerLimit, SlowdownRunsFromNoneWithoutTensorWorkToTheSustainedRateUnderContinuousLoad) {
  EXPECT_DOUBLE_EQ(power_limited_slowdown(0.875, 0), 1.0);
  EXPECT_DOUBLE_EQ(power_limited_slowdown(0.875, 1), 1 / 0.875);
  EXPECT_DOUBLE_EQ(power_limited_slowdown(0.8, 0.5), 1 / 0.9);
  EXPECT_DOUBLE_EQ(power_limited_slowdown(0.8, 2), 1 / 0.8);   // a duty is at most 1
  EXPECT_DOUBLE_EQ(power_limited_slowdown(1, 0.7), 1.0);       // not measured: the fitted rate
  EXPECT_DOUBLE_EQ(power_limited_slowdown(0, 0.7), 1.0);       // nonsense rates change nothing
  EXPECT_DOUBLE_EQ(power_limited_slowdown(0.8, -1), 1.0);
  EXPECT_GT(kHopperSustainedTensorRate, 0.8);
  EXPECT_LT(kHopperSustainedTensorRate, 0.95);
}

DeviceSpec hopper() {
  DeviceSpec d = test::test_gpu("test-hopper", 8, 4e12, 1e12, Generation::hopper);
  d.peak_flops[static_cast<int>(Precision::bf16)] = 4e12;
  d.peak_flops[static_cast<int>(Precision::fp32)] = 1e12;
  return d;
}

DeviceProfile profile(double sustained_rate) {
  DeviceProfile p;
  p.kernels.gemm[static_cast<std::size_t>(Precision::fp16)] = test::ideal_gemm();
  // Every memory-bound class on the stream curve: 10 us + 10 ps per byte (100 GB/s).
  p.kernels.memory.curves[static_cast<std::size_t>(MemoryKernel::stream)] = {{1e3, 1e9}, {1e-5, 1e-5 + 1e-2}};
  p.kernels.sustained_tensor_rate = sustained_rate;
  return p;
}

struct Pass {
  double gemm = 0, memory = 0, total = 0;
};

Pass forward_and_backward(double sustained_rate, Precision precision = Precision::bf16) {
  DecoderConfig c = decoder_config("gpt3-125m");
  c.layers = 2;
  const ModelGraph model = decoder_transformer(c, 1024);
  ParallelPlan plan;
  plan.precision = precision;
  plan.micro_batch_size = 4;
  const IterationProgram program = build_iteration_program(model, plan, hopper(), profile(sustained_rate));
  const StageProgram& s = program.stages.front();
  const auto family = [&](KernelFamilyKind f) {
    const std::size_t i = static_cast<std::size_t>(f);
    return s.forward.family_s[i] + s.backward.family_s[i];
  };
  return {family(KernelFamilyKind::gemm), family(KernelFamilyKind::memory), s.forward.compute_s + s.backward.compute_s};
}

TEST(PowerLimit, ReplaySlowsTheTensorCoreKernelsByTheStepsDuty) {
  const Pass cool = forward_and_backward(1.0), loaded = forward_and_backward(0.8);
  ASSERT_GT(cool.gemm, 0);
  ASSERT_GT(cool.memory, 0);
  // Without attention kernels (no FlashAttention here), the tensor-core share is the GEMMs'.
  const double duty = cool.gemm / cool.total;
  EXPECT_GT(duty, 0.05);
  EXPECT_LT(duty, 0.95);
  // (The replay's duty leaves out the host's launch stalls, which the pass totals include.)
  EXPECT_NEAR(loaded.gemm / cool.gemm, power_limited_slowdown(0.8, duty), 1e-3);
  EXPECT_NEAR(loaded.memory, cool.memory, 1e-12 + 1e-9 * cool.memory);
  EXPECT_GT(loaded.total, cool.total);
  EXPECT_LT(loaded.total, cool.total / 0.8);
}

TEST(PowerLimit, FloatingPointWithoutTensorCoresIsNotSlowed) {
  const Pass cool = forward_and_backward(1.0, Precision::fp32), loaded = forward_and_backward(0.8, Precision::fp32);
  EXPECT_DOUBLE_EQ(loaded.total, cool.total);
}

}  // namespace
}  // namespace dlsim::models
