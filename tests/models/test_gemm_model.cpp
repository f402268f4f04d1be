// The tiled-GEMM mechanism (models/gemm_model.hpp) against hand-computed cases: tile and wave
// quantization, the short-K term, the memory-bound regime, split-K, the layout factor and the
// correction.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_test_devices.hpp"
#include "models/gemm_model.hpp"

namespace dlsim::models {
namespace {

// A made-up GPU: 4 SMs at 1 TFLOP/s each in fp16, 1 TB/s.
DeviceSpec small_gpu() { return test::test_gpu("test-gpu", 4, 4e12, 1e12); }

// e_max 1, no tile overhead (every tile at the peak), no short-K steps, full bandwidth.
GemmParams ideal() { return test::ideal_gemm(); }

TEST(GemmModel, WaveQuantizationCountsWholeWaves) {
  // 512 x 512 x 4096: the 256x128 tile gives 2 x 4 = 8 tiles = 2 waves on 4 SMs; each tile does
  // 2 x 256 x 128 x 4096 FLOPs at 1 TFLOP/s = 268.4 us; 2 waves = 536.9 us. Every tile choice
  // gives the same work per SM here (no padding), so the time is exactly that.
  const GemmEstimate e = gemm_mechanism({512, 512, 4096}, Precision::fp16, small_gpu(), ideal());
  EXPECT_NEAR(e.seconds, 2 * (2.0 * 256 * 128 * 4096 / 1e12), 1e-12);
  EXPECT_EQ(e.waves, 2);
  EXPECT_FALSE(e.memory_bound);
  // Memory: (512*4096 + 4096*512 + 512*512) * 2 B / 1e12 = 8.9 us, far below.
}

TEST(GemmModel, AnExtraRowCostsAWholeWave) {
  // m = 513 pads to three 256-row tiles: best is 64x256 tiles? The model picks the least time;
  // by hand: 128x128 tiles -> ceil(513/128) = 5 x 4 = 20 tiles = 5 waves of 2*128*128*4096 FLOPs
  // (134.2 us each) = 671.1 us; 64x64 tiles -> 9 x 8 = 72 tiles = 18 waves x 33.55 us = 604.0 us;
  // 64x128 -> 9 x 4 = 36 tiles = 9 waves x 67.1 us = 604.0 us; 64x256 -> 9 x 2 = 18 tiles = 5 waves x
  // 134.2 us = 671.1 us. The least is 604.0 us (the 64-row tiles), 12.5% above the 536.9 us of m = 512.
  const GemmEstimate e = gemm_mechanism({513, 512, 4096}, Precision::fp16, small_gpu(), ideal());
  EXPECT_NEAR(e.seconds, 18 * (2.0 * 64 * 64 * 4096 / 1e12), 1e-12);
  EXPECT_EQ(e.tile_m, 64);
}

TEST(GemmModel, ASystolicArrayChipPadsToItsOnlyTile) {
  // TPUs and Trainium run every product on 128 x 128 systolic arrays: m = 513 pads to 5 row tiles
  // (where a GPU takes 64-row tiles, above), 5 x 4 = 20 tiles on the 4 units = 5 waves of
  // 2 x 128 x 128 x 4096 FLOPs at 1 TFLOP/s (134.2 us each) = 671.1 us, 25% above m = 512.
  for (const Generation g : {Generation::tpu, Generation::trainium}) {
    const DeviceSpec chip = test::test_gpu("systolic", 4, 4e12, 1e12, g);
    const GemmEstimate e = gemm_mechanism({513, 512, 4096}, Precision::fp16, chip, ideal());
    EXPECT_EQ(e.tile_m, 128) << to_string(g);
    EXPECT_EQ(e.tile_n, 128) << to_string(g);
    EXPECT_NEAR(e.seconds, 5 * (2.0 * 128 * 128 * 4096 / 1e12), 1e-12) << to_string(g);
    const GemmEstimate even = gemm_mechanism({512, 512, 4096}, Precision::fp16, chip, ideal());
    EXPECT_NEAR(e.seconds / even.seconds, 1.25, 1e-9) << to_string(g);
  }
}

TEST(GemmModel, TileEfficiencyAndShortKTerm) {
  // With c = 64 a tile of reuse r = tm tn / (tm + tn) runs at r / (r + 64) of the peak; k0 = 64
  // adds 64 steps of k to every tile. 256 x 128 x 128 (k too short to split: a slice keeps >= 128):
  //   256x128: 1 tile,  r = 85.33, e = 0.571: (128 + 64) x 2 x 256 x 128 / 0.571e12 = 22.0 us
  //   128x128: 2 tiles, r = 64,    e = 0.5:   192 x 2 x 128 x 128 / 0.5e12           = 12.6 us
  //   128x64:  4 tiles, r = 42.67, e = 0.4:   192 x 2 x 128 x 64 / 0.4e12            = 7.86 us
  //   64x128:  4 tiles, the same 7.86 us (128x64 comes first in the menu and is kept)
  //   64x64:   8 tiles = 2 waves, e = 1/3:    2 x 192 x 2 x 64 x 64 / 0.333e12       = 9.44 us
  //   256x64, 64x256: e = 0.444, 14.2 us. Memory: 0.16 us.
  GemmParams p = ideal();
  p.tile_overhead = 64;
  p.k_overhead = 64;
  const GemmEstimate e = gemm_mechanism({256, 128, 128}, Precision::fp16, small_gpu(), p);
  EXPECT_NEAR(e.seconds, 192.0 * 2 * 128 * 64 / (1e12 * 0.4), 1e-12);
  EXPECT_EQ(e.tile_m, 128);
  EXPECT_EQ(e.tile_n, 64);
  EXPECT_EQ(e.tiles, 4);
  EXPECT_EQ(e.split_k, 1);
}

TEST(GemmModel, SmallMIsMemoryBound) {
  // m = 1, n = k = 8192 on 100 SMs (400 TFLOP/s): the weights (8192 x 8192 x 2 B = 134 MB)
  // stream at 1 TB/s in 134.2 us; the padded compute of the best tiles is less (64x64: 128 tiles,
  // 2 waves x 2 x 64 x 64 x 8192 / 4 TFLOP/s = 33.6 us). (On the 4-SM GPU the padding of m = 1
  // to 64 rows makes the same product compute-bound: 2.1 ms.)
  DeviceSpec d = small_gpu();
  d.compute_units = 100;
  d.peak_flops[static_cast<int>(Precision::fp16)] = 400e12;
  const GemmEstimate e = gemm_mechanism({1, 8192, 8192}, Precision::fp16, d, ideal());
  EXPECT_TRUE(e.memory_bound);
  EXPECT_NEAR(e.seconds, (8192.0 + 8192.0 * 8192 + 8192) * 2 / 1e12, 1e-12);
}

TEST(GemmModel, SplitKFillsTheSmsForALongK) {
  // 64 x 64 x 65536: one output tile; split 4 ways it occupies the 4 SMs: 4 x 16384 steps of a
  // 64x64 tile at 1 TFLOP/s = 134.2 us, plus the fp32 partial sums (64 x 64 x 4 B x (4 + 1) =
  // 81.9 KB at 1 TB/s = 0.08 us); unsplit it would take 536.9 us on one SM.
  const GemmEstimate e = gemm_mechanism({64, 64, 65536}, Precision::fp16, small_gpu(), ideal());
  EXPECT_EQ(e.split_k, 4);
  EXPECT_NEAR(e.seconds, 2.0 * 64 * 64 * 16384 / 1e12 + 64.0 * 64 * 4 * 5 / 1e12, 1e-12);
}

TEST(GemmModel, LayoutFactorCorrectionAndFixedTime) {
  GemmParams p = ideal();
  p.layout_factor = {1.25, 1.0, 1.5};
  p.fixed_s = 2e-6;
  p.correction[0] = {{0, 10}, {0.0, std::log(2.0)}};  // m: x1 at m = 1, x2 from m = 1024 (log-linear between)
  const GemmShape nn{1024, 512, 4096, 1, GemmLayout::nn};
  const GemmEstimate e = gemm_time(nn, Precision::fp16, small_gpu(), p);
  EXPECT_NEAR(e.seconds, e.mechanism_s * 1.25 * 2.0 + 2e-6, 1e-15);
  // Halfway in log2(m) (m = 32) the correction is sqrt(2).
  const GemmEstimate half = gemm_time({32, 512, 4096, 1, GemmLayout::nt}, Precision::fp16, small_gpu(), p);
  EXPECT_NEAR(half.seconds, half.mechanism_s * std::sqrt(2.0) + 2e-6, 1e-15);
}

TEST(GemmModel, BatchMultipliesTilesAndTraffic) {
  const GemmEstimate one = gemm_mechanism({512, 512, 4096}, Precision::fp16, small_gpu(), ideal());
  const GemmEstimate eight = gemm_mechanism({512, 512, 4096, 8}, Precision::fp16, small_gpu(), ideal());
  EXPECT_EQ(eight.tiles, 8 * one.tiles);
  EXPECT_NEAR(eight.seconds, 8 * one.seconds, 1e-12);
}

TEST(GemmModel, RejectsBadInput) {
  EXPECT_THROW(gemm_mechanism({0, 1, 1}, Precision::fp16, small_gpu(), ideal()), std::invalid_argument);
  EXPECT_THROW(gemm_mechanism({1, 1, 1}, Precision::fp32, small_gpu(), ideal()), std::invalid_argument);  // no fp32 peak
  DeviceSpec no_sms = small_gpu();
  no_sms.compute_units = 0;
  EXPECT_THROW(gemm_mechanism({1, 1, 1}, Precision::fp16, no_sms, ideal()), std::invalid_argument);
  EXPECT_THROW(gemm_mechanism({1, 1, 1}, Precision::fp16, small_gpu(), GemmParams{}), std::invalid_argument);
}

TEST(LogLinear, InterpolatesInLog2AndClampsAtTheEnds) {
  const LogLinear f{{2, 4}, {1.0, 3.0}};
  EXPECT_DOUBLE_EQ(f.at(1), 1.0);    // below the first node
  EXPECT_DOUBLE_EQ(f.at(8), 2.0);    // log2 8 = 3: halfway
  EXPECT_DOUBLE_EQ(f.at(64), 3.0);   // above the last node
  EXPECT_DOUBLE_EQ(LogLinear{}.at(5), 0.0);
}

TEST(GemmModel, OperandAlignmentFollowsTheLeadingDimensionsOfEachLayout) {
  // bf16 (2 bytes). nt: A[m,k] and B[n,k] have rows of k, C[m,n] rows of n.
  EXPECT_EQ(operand_alignment_bytes({8192, 50257, 768, 1, GemmLayout::nt}, 2), 2);   // n odd: 2 B rows
  EXPECT_EQ(operand_alignment_bytes({8192, 50304, 768, 1, GemmLayout::nt}, 2), 16);  // padded
  EXPECT_EQ(operand_alignment_bytes({8191, 4096, 4096, 1, GemmLayout::nt}, 2), 16);  // m is no row length
  // nn: A[m,k] rows of k; tn: A stored [k,m], rows of m.
  EXPECT_EQ(operand_alignment_bytes({8192, 768, 50257, 1, GemmLayout::nn}, 2), 2);
  EXPECT_EQ(operand_alignment_bytes({50257, 768, 8192, 1, GemmLayout::tn}, 2), 2);
  EXPECT_EQ(operand_alignment_bytes({50257, 768, 8192, 1, GemmLayout::nt}, 2), 16);
  // 30,522 = 2 x 15,261: 4-byte rows in 16-bit types, 8-byte rows in fp32; 12 fp16 = 24 B -> 8.
  EXPECT_EQ(operand_alignment_bytes({4096, 30522, 768, 1, GemmLayout::nt}, 2), 4);
  EXPECT_EQ(operand_alignment_bytes({4096, 30522, 768, 1, GemmLayout::nt}, 4), 8);
  EXPECT_EQ(operand_alignment_bytes({64, 12, 64, 1, GemmLayout::nt}, 2), 8);
  // A width split unevenly over ranks (50257 / 8) is aligned to one element only.
  EXPECT_EQ(operand_alignment_bytes({8192, 50257.0 / 8, 768, 1, GemmLayout::nt}, 2), 2);
  EXPECT_EQ(alignment_class(16), -1);
  EXPECT_EQ(alignment_class(8), 3);
  EXPECT_EQ(alignment_class(4), 2);
  EXPECT_EQ(alignment_class(2), 1);
  EXPECT_EQ(alignment_class(1), 0);
}

TEST(GemmModel, AlignmentSlowdownAppliesOnHopperToItsClassOnly) {
  const DeviceSpec hopper = test::test_gpu("hopper", 4, 4e12, 1e12, Generation::hopper);
  const DeviceSpec ampere = test::test_gpu("ampere", 4, 4e12, 1e12, Generation::ampere);
  GemmParams p = ideal();
  p.alignment_factor = {0, 5, 3, 0};  // 2-byte rows 5x slower, 4-byte 3x; 1 and 8 bytes not measured
  GemmShape s{512, 512, 4096};
  const double aligned = gemm_time(s, Precision::fp16, hopper, p).seconds;
  s.alignment_bytes = 2;
  const GemmEstimate two = gemm_time(s, Precision::fp16, hopper, p);
  EXPECT_NEAR(two.seconds, 5 * aligned, 1e-15);
  EXPECT_EQ(two.alignment_factor, 5);
  s.alignment_bytes = 4;
  EXPECT_NEAR(gemm_time(s, Precision::fp16, hopper, p).seconds, 3 * aligned, 1e-15);
  s.alignment_bytes = 8;  // a class without a measured slowdown
  EXPECT_EQ(gemm_time(s, Precision::fp16, hopper, p).seconds, aligned);
  s.alignment_bytes = 2;  // before Hopper the fallback kernels are not a class of their own
  EXPECT_EQ(gemm_time(s, Precision::fp16, ampere, p).seconds, gemm_time({512, 512, 4096}, Precision::fp16, ampere, p).seconds);
  // The fixed time is not multiplied.
  p.fixed_s = 1e-3;
  EXPECT_NEAR(gemm_time(s, Precision::fp16, hopper, p).seconds, 5 * aligned + 1e-3, 1e-12);
}

}  // namespace
}  // namespace dlsim::models
