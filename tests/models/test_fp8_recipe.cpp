// Transformer Engine's FP8 recipe (models/fp8_recipe.hpp): which layers run FP8 GEMMs, the
// casts around them, the GEMM constants FP8 borrows, and the memory the recipe keeps.
#include <gtest/gtest.h>

#include "kernel_test_devices.hpp"
#include "models/fp8_recipe.hpp"
#include "models/iteration_program.hpp"
#include "models/memory_model.hpp"
#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

DeviceSpec hopper() {
  DeviceSpec d = test::test_gpu("test-hopper", 4, 4e12, 1e12, Generation::hopper);
  d.peak_flops[static_cast<int>(Precision::bf16)] = 4e12;
  d.peak_flops[static_cast<int>(Precision::fp8)] = 8e12;
  return d;
}

DeviceProfile profile() {
  DeviceProfile p;
  p.kernels.gemm[static_cast<std::size_t>(Precision::fp16)] = test::ideal_gemm();
  // Every memory-bound class on the stream curve: 1 us + 1 ns per byte (1 GB/s beyond 1 MB).
  p.kernels.memory.curves[static_cast<std::size_t>(MemoryKernel::stream)] = {{1e3, 1e6}, {1e-6, 1e-3}};
  return p;
}

// A column-parallel linear of block 0: tokens x in -> tokens x out.
Layer block_linear(double tokens, double in, double out) {
  Layer l{.name = "mlp.up", .kind = LayerKind::linear, .parameters = in * out, .forward_flops = 2 * tokens * in * out,
          .activation_elements = tokens * out, .input_elements = tokens * in, .block = 0, .tensor = TensorSplit::split};
  l.matmul = {tokens, out, in};
  return l;
}

TEST(Fp8Recipe, OnlyTheBlocksTensorSplitAndExpertLinearsRunInFp8) {
  Layer l = block_linear(128, 256, 512);
  EXPECT_TRUE(runs_in_fp8(l, Precision::fp8));
  EXPECT_FALSE(runs_in_fp8(l, Precision::bf16));
  Layer head = l;
  head.block = -1;  // the output layer
  EXPECT_FALSE(runs_in_fp8(head, Precision::fp8));
  Layer router = l;
  router.tensor = TensorSplit::replicated;
  EXPECT_FALSE(runs_in_fp8(router, Precision::fp8));
  router.experts = 8;  // an expert layer (TE's GroupedLinear)
  EXPECT_TRUE(runs_in_fp8(router, Precision::fp8));
  Layer norm = l;
  norm.kind = LayerKind::norm;
  EXPECT_FALSE(runs_in_fp8(norm, Precision::fp8));
  EXPECT_EQ(storage_precision(Precision::fp8), Precision::bf16);
  EXPECT_EQ(storage_precision(Precision::fp16), Precision::fp16);
}

TEST(Fp8Recipe, BorrowsTheSixteenBitConstantsAtTheMeasuredPeakFractions) {
  KernelProfile k = profile().kernels;
  EXPECT_DOUBLE_EQ(fp8_gemm_params(k, Fp8Accumulation::fast).peak_fraction, kFp8FastAccumulationScale);
  EXPECT_DOUBLE_EQ(fp8_gemm_params(k, Fp8Accumulation::split).peak_fraction, kFp8SplitAccumulatorScale);
  EXPECT_LT(kFp8SplitAccumulatorScale, kFp8FastAccumulationScale);  // the FP32 promotions cost time
  EXPECT_DOUBLE_EQ(lone_gemm_params(k, Precision::fp8).peak_fraction, kFp8FastAccumulationScale);
  EXPECT_DOUBLE_EQ(lone_gemm_params(k, Precision::bf16).peak_fraction, 1.0);
  k.gemm[static_cast<std::size_t>(Precision::fp8)] = test::ideal_gemm();  // measured FP8 wins
  EXPECT_DOUBLE_EQ(fp8_gemm_params(k, Fp8Accumulation::split).peak_fraction, 1.0);
  EXPECT_THROW(fp8_gemm_params(KernelProfile{}, Fp8Accumulation::fast), std::invalid_argument);
  EXPECT_THROW(lone_gemm_params(KernelProfile{}, Precision::bf16), std::invalid_argument);
}

TEST(Fp8Recipe, ALinearLayerRunsThreeFp8GemmsAndItsCastTransposes) {
  const Layer l = block_linear(1024, 2048, 4096);
  const double b = 2, m = 2048;
  const DeviceSpec d = hopper();
  const DeviceProfile p = profile();
  const LayerKernelTimes t = fp8_linear_kernel_times(l, b, {true, 1, false}, d, p);
  // The forward product with fast accumulation, the gradient products with the split accumulator.
  const GemmParams fast = fp8_gemm_params(p.kernels, Fp8Accumulation::fast);
  const GemmParams split = fp8_gemm_params(p.kernels, Fp8Accumulation::split);
  const auto gemm = [&](double gm, double gn, double gk, const GemmParams& g) {
    return gemm_time({gm, gn, gk, 1, GemmLayout::nt}, Precision::fp8, d, g).seconds;
  };
  const auto stream = [&](double bytes) { return memory_kernel_time(MemoryKernel::stream, bytes, p.kernels.memory, 1e12, 1); };
  const double history = kAmaxHistoryLength * 8;
  const std::size_t memory = static_cast<std::size_t>(KernelFamilyKind::memory);
  // Forward: X and W each read in bf16 and written as FP8 and its FP8 transpose (4 B/element).
  EXPECT_DOUBLE_EQ(t.forward.by_family[memory], stream(m * 2048 * 4 + 2 * history) + stream(2048.0 * 4096 * 4));
  EXPECT_DOUBLE_EQ(t.forward.seconds - t.forward.by_family[memory], gemm(m, 4096, 2048, fast));
  EXPECT_EQ(t.forward.kernels, 3);
  // Backward: dY's cast-transpose, then data and weight gradients, all as TN FP8 GEMMs.
  EXPECT_DOUBLE_EQ(t.backward.by_family[memory], stream(m * 4096 * 4 + history));
  EXPECT_DOUBLE_EQ(t.backward.seconds - t.backward.by_family[memory], gemm(m, 2048, 4096, split) + gemm(2048, 4096, m, split));
  EXPECT_GT(gemm(m, 2048, 4096, split), gemm(m, 2048, 4096, fast));
  EXPECT_EQ(t.backward.kernels, 3);
  // FP8's GEMMs beat bf16's, by less than the 2x of the peaks (a lower fraction of the peak).
  const LayerKernelTimes bf16 = layer_kernel_times(l, b, Precision::bf16, d, p);
  const double fp8_gemm = t.forward.seconds - t.forward.by_family[memory];
  EXPECT_LT(fp8_gemm, bf16.forward.seconds);
  EXPECT_GT(fp8_gemm, bf16.forward.seconds / 2);
}

// One sample of a 1024 x 2048 -> 4096 FP8 linear on the made-up Hopper, and a stream kernel's time.
LayerKernelTimes fp8_up(const Fp8Casts& casts) { return fp8_linear_kernel_times(block_linear(1024, 2048, 4096), 1, casts, hopper(), profile()); }
double stream_s(double bytes) { return memory_kernel_time(MemoryKernel::stream, bytes, profile().kernels.memory, 1e12, 1); }

TEST(Fp8Recipe, CachedWeightsAreCastOncePerIteration) {
  const LayerKernelTimes each = fp8_up({false, 8, false});
  const LayerKernelTimes cached = fp8_up({true, 8, false});
  EXPECT_NEAR(each.forward.seconds - cached.forward.seconds, stream_s(2048.0 * 4096 * 4) * 7 / 8, 1e-15);
  EXPECT_EQ(each.forward.kernels, cached.forward.kernels + 1);
  EXPECT_DOUBLE_EQ(each.backward.seconds, cached.backward.seconds);
}

TEST(Fp8Recipe, ANormWritesItsInputInFp8AndBackwardTransposesIt) {
  const LayerKernelTimes own = fp8_up({true, 1, false});
  const LayerKernelTimes fused = fp8_up({true, 1, true});
  EXPECT_EQ(fused.forward.kernels, own.forward.kernels - 1);   // no cast kernel of X
  EXPECT_EQ(fused.backward.kernels, own.backward.kernels + 1); // X's FP8 transpose
  EXPECT_DOUBLE_EQ(fused.backward.seconds - own.backward.seconds, stream_s(1024.0 * 2048 * 2));
}

TEST(Fp8Recipe, RefusesADeviceWithoutAnFp8Peak) {
  const DeviceSpec ampere = test::test_gpu("test-ampere", 4, 4e12, 1e12);
  EXPECT_THROW(fp8_linear_kernel_times(block_linear(128, 256, 512), 1, {}, ampere, profile()), std::invalid_argument);
}

// GPT-3 1.3B with FlashAttention, as Megatron-Core with Transformer Engine runs it.
ModelGraph gpt_flash() {
  DecoderConfig c = decoder_config("gpt3-1.3b");
  c.flash_attention = true;
  return decoder_transformer(c, 2048);
}

TEST(Fp8Recipe, PassesRunBf16AroundFp8Gemms) {
  const ModelGraph model = gpt_flash();
  ParallelPlan plan;
  plan.precision = Precision::bf16;
  plan.micro_batches = 4;
  const DeviceSpec d = hopper();
  const DeviceProfile p = profile();
  const IterationProgram bf16 = build_iteration_program(model, plan, d, p);
  plan.precision = Precision::fp8;
  const IterationProgram fp8 = build_iteration_program(model, plan, d, p);
  const PassProgram& f = fp8.stages.front().forward;
  const PassProgram& b = bf16.stages.front().forward;
  const std::size_t gemm = static_cast<std::size_t>(KernelFamilyKind::gemm);
  const std::size_t attention = static_cast<std::size_t>(KernelFamilyKind::attention);
  const std::size_t memory = static_cast<std::size_t>(KernelFamilyKind::memory);
  EXPECT_LT(f.family_s[gemm], b.family_s[gemm]);               // the linears' GEMMs in FP8
  ASSERT_GT(b.family_s[attention], 0);
  EXPECT_DOUBLE_EQ(f.family_s[attention], b.family_s[attention]);  // attention stays bf16
  EXPECT_GT(f.family_s[memory], b.family_s[memory]);           // bf16 elementwise plus the casts
  // A cast per FP8 linear whose input no norm wrote (the weights' casts are cached).
  int casts = 0;
  for (std::size_t i = 1; i < model.layers.size(); ++i) {
    casts += runs_in_fp8(model.layers[i], Precision::fp8) && model.layers[i - 1].kind != LayerKind::norm ? 1 : 0;
  }
  EXPECT_EQ(casts, 2 * 24);  // attention projection and MLP down; QKV and MLP up follow a norm
  EXPECT_EQ(f.kernels, b.kernels + casts);
  // Same inputs, same program: bit-identical.
  const IterationProgram again = build_iteration_program(model, plan, d, p);
  EXPECT_EQ(again.stages.front().forward.compute_s, f.compute_s);
  EXPECT_EQ(again.stages.front().backward.compute_s, fp8.stages.front().backward.compute_s);
}

TEST(Fp8Recipe, MemoryKeepsBf16WeightsFp8CopiesAndFp8SavedInputs) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.precision = Precision::bf16;
  plan.gradient_precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  const MemoryBreakdown bf16 = peak_memory(model, plan);
  plan.precision = Precision::fp8;
  const MemoryBreakdown fp8 = peak_memory(model, plan);
  double fp8_params = 0, fp8_saved = 0;
  for (const Layer& l : model.layers) {
    if (!runs_in_fp8(l, Precision::fp8)) continue;
    fp8_params += l.parameters;
    fp8_saved += saved_elements(l);
  }
  ASSERT_GT(fp8_params, 0.5 * model.parameters());
  EXPECT_DOUBLE_EQ(fp8.weights, bf16.weights + 2 * fp8_params);    // + FP8 copy and transpose
  EXPECT_DOUBLE_EQ(fp8.gradients, bf16.gradients);
  EXPECT_DOUBLE_EQ(fp8.optimizer_state, bf16.optimizer_state);     // fp32 master weights, Adam's moments
  EXPECT_NEAR(fp8.activations, bf16.activations - fp8_saved * plan.micro_batch_size, 1e-6 * bf16.activations);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter(Optimizer::adam, Precision::fp8),
                   optimizer_bytes_per_parameter(Optimizer::adam, Precision::bf16));
  // ZeRO-3 gathers the weights for each use: no cached FP8 copies.
  plan.zero_stage = 3;
  plan.data = 1;
  const MemoryBreakdown z3 = peak_memory(model, plan);
  plan.precision = Precision::bf16;
  EXPECT_DOUBLE_EQ(z3.weights, peak_memory(model, plan).weights);
}

}  // namespace
}  // namespace dlsim::models
