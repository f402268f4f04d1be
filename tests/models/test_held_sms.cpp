// SMs held by communication kernels (DeviceSpec::busy_units): tiled kernels keep the tiles
// planned for the whole GPU and run their waves on the SMs left; a stage's kernels slow by the
// ratio of their times; the replay stretches a compute segment only while a data-parallel
// collective of its rank runs beside it.
#include <gtest/gtest.h>

#include "kernel_test_devices.hpp"
#include "models/attention_model.hpp"
#include "models/catalog.hpp"
#include "models/conv_model.hpp"
#include "models/gemm_model.hpp"
#include "models/iteration_program.hpp"
#include "models/zoo.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

TEST(HeldSms, AGemmKeepsThePlannedTilesAndRunsItsWavesOnTheSmsLeft) {
  // 512 x 512 x 4096 on 4 SMs at 1 TFLOP/s each: the 256x128 tile (first of the tiles that tie
  // on 4 SMs) gives 8 tiles = 2 waves of 268.4 us. With one SM held, the 8 tiles run on 3 SMs: 3
  // waves, 805.3 us. (Planned for 3 SMs, 64x64 tiles would take 22 waves of 33.6 us = 738 us: the
  // heuristic does not know, as cuBLAS's does not.)
  const DeviceSpec whole = dlsim::test::test_gpu("test-gpu", 4, 4e12, 1e12);
  DeviceSpec held = whole;
  held.busy_units = 1;
  const GemmEstimate a = gemm_mechanism({512, 512, 4096}, Precision::fp16, whole, dlsim::test::ideal_gemm());
  const GemmEstimate b = gemm_mechanism({512, 512, 4096}, Precision::fp16, held, dlsim::test::ideal_gemm());
  const double tile_s = 2.0 * 256 * 128 * 4096 / 1e12;
  EXPECT_NEAR(a.seconds, 2 * tile_s, 1e-12);
  EXPECT_NEAR(b.seconds, 3 * tile_s, 1e-12);
  EXPECT_EQ(b.tile_m, a.tile_m);
  EXPECT_EQ(b.tile_n, a.tile_n);
  EXPECT_EQ(b.tiles, 8);
  EXPECT_EQ(b.waves, 3);
  // No SM held: the same estimate, bit for bit; all held: one SM still runs (no division by zero).
  held.busy_units = 0;
  EXPECT_EQ(gemm_mechanism({512, 512, 4096}, Precision::fp16, held, dlsim::test::ideal_gemm()).seconds, a.seconds);
  held.busy_units = 9;
  EXPECT_NEAR(gemm_mechanism({512, 512, 4096}, Precision::fp16, held, dlsim::test::ideal_gemm()).seconds, 8 * tile_s, 1e-12);
  // A memory-bound GEMM does not notice: it streams its weights at the same bandwidth.
  DeviceSpec wide = dlsim::test::test_gpu("wide", 100, 400e12, 1e12);
  const double streamed = gemm_mechanism({1, 8192, 8192}, Precision::fp16, wide, dlsim::test::ideal_gemm()).seconds;
  wide.busy_units = 24;
  EXPECT_EQ(gemm_mechanism({1, 8192, 8192}, Precision::fp16, wide, dlsim::test::ideal_gemm()).seconds, streamed);
}

TEST(HeldSms, AnImplicitGemmConvolutionRunsItsWavesOnTheSmsLeft) {
  // N=2, C=8, 8x8, K=64, 3x3 pad 1 (test_conv_model.cpp's hand case): 128x32 tiles, 2 tiles in one
  // wave of 589.8 ns on 10 SMs; with 9 held, the two tiles run one after the other on the last.
  const ConvShape c{2, 8, 8, 8, 64, 3, 3, 1, 1, 1, 1};
  DeviceSpec d = dlsim::test::test_gpu("test-gpu", 10, 1e14, 1e12, Generation::pascal, 1e13);
  const double whole = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, dlsim::test::ideal_gemm(), 0, 1);
  d.busy_units = 9;
  const double held = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, dlsim::test::ideal_gemm(), 0, 1);
  EXPECT_NEAR(whole, 72.0 * 2 * 128 * 32 / 1e12, 1e-15);
  EXPECT_NEAR(held, 2 * 72.0 * 2 * 128 * 32 / 1e12, 1e-15);
}

TEST(HeldSms, FlashAttentionLosesTheHeldSmsWhenItsTilesFillTheGpu) {
  // 8 sequences of 2,048 tokens, 16 heads of 128: 8 x 16 x 16 = 2,048 tiles of 128 rows, many waves
  // on the A100's 108 SMs: with 24 held, the kernel runs at 84/108 of its rate. One sequence of
  // 128 tokens and 64 heads (64 tiles) uses 64 of the 108 SMs, and still 64 of the 84 left.
  const Catalog catalog = Catalog::builtin();
  DeviceSpec a100 = *catalog.find_device("A100-80GB");
  AttentionShape s;
  s.batch = 8;
  s.heads = s.kv_heads = 16;
  s.query_length = s.key_length = 2048;
  s.head_dim = 128;
  AttentionShape small = s;
  small.batch = 1;
  small.heads = small.kv_heads = 64;
  small.query_length = small.key_length = 128;
  const AttentionTime whole = flash_attention_time(s, Precision::bf16, a100);
  const AttentionTime whole_small = flash_attention_time(small, Precision::bf16, a100);
  a100.busy_units = 24;
  const AttentionTime held = flash_attention_time(s, Precision::bf16, a100);
  EXPECT_NEAR(held.forward_s, whole.forward_s * 108 / 84, 1e-9 * whole.forward_s);
  EXPECT_NEAR(held.backward_s, whole.backward_s * 108 / 84, 1e-9 * whole.backward_s);
  EXPECT_EQ(flash_attention_time(small, Precision::bf16, a100).forward_s, whole_small.forward_s);
}

// A kernel profile of ideal FP16 GEMMs, every memory-bound class on one stream curve (10 us +
// 10 ps per byte).
DeviceProfile ideal_profile() {
  DeviceProfile p;
  p.kernels.gemm[static_cast<std::size_t>(Precision::fp16)] = dlsim::test::ideal_gemm();
  p.kernels.memory.curves[static_cast<std::size_t>(MemoryKernel::stream)] = {{1e3, 1e9}, {1e-5, 1e-5 + 1e-2}};
  return p;
}

// GPT-3 125M cut to two layers, 1,024 tokens per sequence.
const ModelGraph& two_layers() {
  static const ModelGraph model = [] {
    DecoderConfig c = decoder_config("gpt3-125m");
    c.layers = 2;
    return decoder_transformer(c, 1024);
  }();
  return model;
}

// FP16, micro-batches of 4 sequences, one replica.
ParallelPlan fp16_plan() {
  ParallelPlan plan;
  plan.precision = Precision::fp16;
  plan.micro_batch_size = 4;
  return plan;
}

// The two-layer stage on an 8-SM test GPU with ideal GEMMs, `busy` SMs held.
StageProgram stage_with(int busy) {
  DeviceSpec d = dlsim::test::test_gpu("test-gpu", 8, 4e12, 1e12, Generation::ampere);
  d.peak_flops[static_cast<int>(Precision::fp32)] = 1e12;
  return build_iteration_program(two_layers(), fp16_plan(), d, ideal_profile(), busy).stages.front();
}

TEST(HeldSms, AStageSlowsByItsKernelsTimeWithTheSmsHeld) {
  const StageProgram none = stage_with(0);
  EXPECT_EQ(none.forward_busy_slowdown, 1.0);
  EXPECT_EQ(none.backward_busy_slowdown, 1.0);
  const StageProgram two = stage_with(2);
  // GEMMs run on 6 of 8 SMs: at most 4/3 slower where waves divide evenly, up to 2x for a one-wave
  // GEMM split in two; the memory-bound kernels keep their time, so the stage slows by less.
  EXPECT_GT(two.forward_busy_slowdown, 1.05);
  EXPECT_LT(two.forward_busy_slowdown, 2.0);
  EXPECT_GT(two.backward_busy_slowdown, 1.05);
  EXPECT_LT(two.backward_busy_slowdown, 2.0);
  // The program itself (segments, their times) does not change: the slowdown applies in the replay.
  EXPECT_EQ(two.forward.compute_s, none.forward.compute_s);
  EXPECT_EQ(two.backward.compute_s, none.backward.compute_s);
}

// GPT-3 125M (2 layers) on one DGX-A100-like node running NCCL (15 channels: 15 of 108 SMs
// held), `data` replicas, DDP's buckets reduced while backward runs (or after it).
IterationBreakdown ddp(int data, bool overlap = true) {
  static const network::Topology node = test::dgx_cluster(1, 200, 80);  // NCCL's channels: only NCCL holds SMs
  ParallelPlan plan = fp16_plan();
  plan.data = data;
  plan.overlap_grad_reduce = overlap;
  plan.bucket_bytes = 4.0 * 1024 * 1024;
  TrainingConfig config = test::config(two_layers(), node, plan);  // the A100-80GB's figures (108 SMs)
  config.profile = ideal_profile();
  return replay_iteration(config);
}

TEST(HeldSms, TheReplayStretchesComputeOnlyWhileADataParallelCollectiveRunsBesideIt) {
  const IterationBreakdown alone = ddp(1);
  const IterationBreakdown eight = ddp(8);
  const IterationBreakdown after = ddp(8, false);  // every bucket reduced after backward
  EXPECT_EQ(alone.held_sm_s, 0.0);
  EXPECT_EQ(after.held_sm_s, 0.0);
  EXPECT_DOUBLE_EQ(after.compute_s, alone.compute_s);
  EXPECT_GT(eight.held_sm_s, 0.0);
  // The kernels are the same; the held SMs add to compute, and the parts still add up.
  EXPECT_NEAR(eight.compute_s - eight.held_sm_s, alone.compute_s, 1e-9 * alone.compute_s);
  EXPECT_NEAR(test::sum_of_parts(eight), eight.iteration_s, 1e-6 * eight.iteration_s);
  // Less than the time the reductions ran, and no more than backward stretched all along by its
  // stage's slowdown at 15 SMs held (the reductions run during backward and after it only).
  EXPECT_LT(eight.held_sm_s, eight.dp_comm_busy_s);
  const network::Topology node = test::dgx_cluster(1);
  const DeviceSpec a100 = test::config(two_layers(), node, fp16_plan()).device;
  const StageProgram stage = build_iteration_program(two_layers(), fp16_plan(), a100, ideal_profile(), 15).stages.front();
  EXPECT_GT(stage.backward_busy_slowdown, 1.0);
  EXPECT_LE(eight.held_sm_s, (stage.backward_busy_slowdown - 1) * alone.backward_s * (1 + 1e-9));
  // Deterministic: the same run, bit for bit.
  EXPECT_EQ(ddp(8).iteration_s, eight.iteration_s);
}

}  // namespace
}  // namespace dlsim::models
