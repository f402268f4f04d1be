// The convolution model (models/conv_model.hpp) on hand-computed cases: the implicit-GEMM and
// Winograd shapes of each pass, Winograd's eligibility, the tile/wave mechanism of one kernel,
// the algorithm choice, the factors that apply, and the constants by name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernel_test_devices.hpp"
#include "models/conv_model.hpp"

namespace dlsim::models {
namespace {

// A small GPU: 10 SMs, 1e13 FLOP/s FP32 (1e12 per SM), 1e14 FP16, 1e12 B/s.
DeviceSpec small_gpu(Generation g) { return test::test_gpu("test-gpu", 10, 1e14, 1e12, g, 1e13); }

// Every tile runs at the peak (e_max 1, no tile overhead), no fixed time.
GemmParams ideal_gemm() { return test::ideal_gemm(); }

ConvPrecisionParams unit_factors(double winograd) {
  ConvPrecisionParams p;
  p.k_overhead = 0;
  p.bandwidth_fraction = 1;
  for (std::size_t pass = 0; pass < 3; ++pass) {
    p.factor[0][pass] = 1;
    p.factor[1][pass] = winograd;
  }
  return p;
}

// N=2, C=3, 8x8, K=16, 3x3, stride 1, pad 1: P = Q = 8.
ConvShape small_conv() { return {2, 3, 8, 8, 16, 3, 3, 1, 1, 1, 1}; }

void expect_shape(const GemmShape& s, double m, double n, double k, double batch) {
  EXPECT_DOUBLE_EQ(s.m, m);
  EXPECT_DOUBLE_EQ(s.n, n);
  EXPECT_DOUBLE_EQ(s.k, k);
  EXPECT_DOUBLE_EQ(s.batch, batch);
}

TEST(ConvModel, OutputSize) {
  const ConvShape c{1, 3, 224, 224, 64, 7, 7, 2, 2, 3, 3};
  EXPECT_DOUBLE_EQ(c.out_h(), 112);
  EXPECT_DOUBLE_EQ(c.out_w(), 112);
  EXPECT_DOUBLE_EQ(small_conv().out_h(), 8);
}

TEST(ConvModel, ImplicitGemmShapesOfEachPass) {
  const ConvShape c = small_conv();
  expect_shape(implicit_gemm_shape(c, ConvPass::forward), 2 * 64, 16, 3 * 9, 1);          // N P Q, K, C R S
  expect_shape(implicit_gemm_shape(c, ConvPass::data_gradient), 2 * 64, 3, 16 * 9, 1);    // N H W, C, K R S
  expect_shape(implicit_gemm_shape(c, ConvPass::weight_gradient), 16, 3 * 9, 2 * 64, 1);  // K, C R S, N P Q
}

TEST(ConvModel, TensorCoreChannelPadding) {
  // C = 3 and K = 12 pad to 8 and 16.
  ConvShape c = small_conv();
  c.filters = 12;
  expect_shape(implicit_gemm_shape(c, ConvPass::forward, 8), 128, 16, 8 * 9, 1);
  expect_shape(implicit_gemm_shape(c, ConvPass::data_gradient, 8), 128, 8, 16 * 9, 1);
  expect_shape(implicit_gemm_shape(c, ConvPass::weight_gradient, 8), 16, 8 * 9, 128, 1);
  EXPECT_DOUBLE_EQ(channel_multiple(Precision::fp16, small_gpu(Generation::volta)), 8);
  EXPECT_DOUBLE_EQ(channel_multiple(Precision::fp32, small_gpu(Generation::volta)), 1);
  EXPECT_DOUBLE_EQ(channel_multiple(Precision::fp16, small_gpu(Generation::pascal)), 1);
}

TEST(ConvModel, StridedDataGradientIsDecomposedIntoPhases) {
  // 1x1 stride 2, 8x8 -> 4x4: one phase has taps; m = N 4 4, k = K.
  const ConvShape one{1, 4, 8, 8, 6, 1, 1, 2, 2, 0, 0};
  expect_shape(implicit_gemm_shape(one, ConvPass::data_gradient), 16, 4, 6, 1);
  // 3x3 stride 2 pad 1: four phases, each at most a 2 x 2 slice of the filter.
  const ConvShape three{1, 4, 8, 8, 6, 3, 3, 2, 2, 1, 1};
  expect_shape(implicit_gemm_shape(three, ConvPass::data_gradient), 16, 4, 6 * 4, 4);
  // The other passes are not affected by the stride beyond P, Q.
  expect_shape(implicit_gemm_shape(three, ConvPass::forward), 16, 6, 36, 1);
}

TEST(ConvModel, WinogradEligibility) {
  const ConvShape c = small_conv();
  EXPECT_TRUE(winograd_applies(c, Precision::fp32));
  EXPECT_FALSE(winograd_applies(c, Precision::fp16));        // without a device: tensor cores assumed
  ConvShape strided = c;
  strided.stride_h = strided.stride_w = 2;
  EXPECT_FALSE(winograd_applies(strided, Precision::fp32));
  ConvShape one = c;
  one.kernel_h = one.kernel_w = 1;
  EXPECT_FALSE(winograd_applies(one, Precision::fp32));
  ConvShape five = c;
  five.kernel_h = five.kernel_w = 5;
  EXPECT_TRUE(winograd_applies(five, Precision::fp32));
  ConvShape seven = c;
  seven.kernel_h = seven.kernel_w = 7;
  EXPECT_FALSE(winograd_applies(seven, Precision::fp32));
  // FP16 runs on tensor cores on Volta (implicit GEMM only), on CUDA cores on Pascal.
  EXPECT_FALSE(winograd_applies(c, Precision::fp16, small_gpu(Generation::volta)));
  EXPECT_TRUE(winograd_applies(c, Precision::fp16, small_gpu(Generation::pascal)));
  EXPECT_TRUE(winograd_applies(c, Precision::fp32, small_gpu(Generation::volta)));
}

TEST(ConvModel, WinogradBatchedShape) {
  // F(4x4, 3x3): 8x8 outputs in 2 x 2 tiles of 4x4, N = 2: 8 tiles; 36 products.
  const ConvShape c = small_conv();
  expect_shape(winograd_gemm_shape(c, ConvPass::forward), 8, 16, 3, 36);
  expect_shape(winograd_gemm_shape(c, ConvPass::data_gradient), 8, 3, 16, 36);
  expect_shape(winograd_gemm_shape(c, ConvPass::weight_gradient), 16, 3, 8, 36);
  // F(2x2, 5x5): 8x8 outputs (pad 2) in 4 x 4 tiles of 2x2, N = 2: 32 tiles.
  ConvShape five = c;
  five.kernel_h = five.kernel_w = 5;
  five.pad_h = five.pad_w = 2;
  expect_shape(winograd_gemm_shape(five, ConvPass::forward), 32, 16, 3, 36);
}

TEST(ConvModel, ImplicitGemmMechanismByHand) {
  // N=2, C=8, 8x8, K=64, 3x3 pad 1: m = 128, n = 64, k = 72. On CUDA-core tiles 128 x {128, 64,
  // 32} with 10 SMs, 128x32 gives 2 tiles (one wave) of 72 x 2 x 128 x 32 FLOPs at 1e12 FLOP/s
  // per SM: 589.824 ns, the least. Memory: (2*8*64 + 2*64*64 + 64*8*9) x 4 B / 1e12 B/s = 55.3 ns.
  const ConvShape c{2, 8, 8, 8, 64, 3, 3, 1, 1, 1, 1};
  const DeviceSpec d = small_gpu(Generation::pascal);
  const double t = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, ideal_gemm(), 0, 1);
  EXPECT_NEAR(t, 72.0 * 2 * 128 * 32 / 1e12, 1e-15);
  // k0 = 8 adds 8 steps of k per tile.
  const double t8 = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, ideal_gemm(), 8, 1);
  EXPECT_NEAR(t8, 80.0 * 2 * 128 * 32 / 1e12, 1e-15);
  // A tenth of the bandwidth makes it memory-bound: 553 ns.
  const double slow = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, ideal_gemm(), 0, 0.001);
  EXPECT_NEAR(slow, (2.0 * 8 * 64 + 2.0 * 64 * 64 + 64.0 * 8 * 9) * 4 / 1e9, 1e-12);
  // Winograd does not apply to a stride-2 layer.
  ConvShape strided = c;
  strided.stride_h = strided.stride_w = 2;
  EXPECT_TRUE(std::isinf(conv_mechanism(strided, ConvPass::forward, ConvAlgorithm::winograd, Precision::fp32, d,
                                        ideal_gemm(), 0, 1)));
}

TEST(ConvModel, StridedOneByOneReadsAQuarterOfItsInput) {
  // A memory-bound 1x1 stride-2 layer: its input traffic is the touched pixels only.
  const ConvShape c{1, 64, 16, 16, 64, 1, 1, 2, 2, 0, 0};  // P = Q = 8
  const DeviceSpec d = small_gpu(Generation::pascal);
  const double t = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, ideal_gemm(), 0, 1e-6);
  const double bytes = (64.0 * 8 * 8 + 64.0 * 8 * 8 + 64.0 * 64) * 4;
  EXPECT_NEAR(t, bytes / 1e6, 1e-9);
}

TEST(ConvModel, PicksWinogradWhenItsFactorMakesItFaster) {
  // A compute-bound 3x3 stride-1 FP32 layer: Winograd does 4x fewer multiplies.
  const ConvShape c{32, 256, 28, 28, 256, 3, 3, 1, 1, 1, 1};
  const DeviceSpec d = small_gpu(Generation::volta);
  ConvParams p;
  p.fp32 = unit_factors(1.0);
  const ConvEstimate w = conv_time(c, ConvPass::forward, Precision::fp32, d, ideal_gemm(), p);
  EXPECT_EQ(w.algorithm, ConvAlgorithm::winograd);
  EXPECT_DOUBLE_EQ(w.gemm.batch, 36);
  const double implicit = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, ideal_gemm(), 0, 1);
  EXPECT_LT(w.seconds, implicit);
  // A large Winograd factor gives the choice back to the implicit GEMM.
  p.fp32 = unit_factors(100.0);
  const ConvEstimate g = conv_time(c, ConvPass::forward, Precision::fp32, d, ideal_gemm(), p);
  EXPECT_EQ(g.algorithm, ConvAlgorithm::implicit_gemm);
  EXPECT_NEAR(g.seconds, implicit, 1e-15);
  // Uncalibrated Winograd (factor 0) is no candidate.
  p.fp32 = unit_factors(0.0);
  EXPECT_EQ(conv_time(c, ConvPass::forward, Precision::fp32, d, ideal_gemm(), p).algorithm, ConvAlgorithm::implicit_gemm);
  // Tensor-core FP16 runs implicit GEMM even with a Winograd factor.
  p.fp16 = unit_factors(0.01);
  EXPECT_EQ(conv_time(c, ConvPass::forward, Precision::fp16, d, ideal_gemm(), p).algorithm, ConvAlgorithm::implicit_gemm);
}

TEST(ConvModel, FactorsMultiplyTheMechanism) {
  const ConvShape c = small_conv();  // C = 3: a first layer
  const DeviceSpec d = small_gpu(Generation::pascal);
  ConvParams p;
  ConvPrecisionParams& fp32 = p.fp32;
  fp32 = unit_factors(0.0);
  fp32.factor[0][0] = 1.5;
  const double mechanism = conv_mechanism(c, ConvPass::forward, ConvAlgorithm::implicit_gemm, Precision::fp32, d, ideal_gemm(), 0, 1);
  EXPECT_NEAR(conv_time(c, ConvPass::forward, Precision::fp32, d, ideal_gemm(), p).seconds, 1.5 * mechanism, 1e-18);
  fp32.first_layer[0] = 3;  // C < 8: the first-layer factor wins
  const ConvEstimate e = conv_time(c, ConvPass::forward, Precision::fp32, d, ideal_gemm(), p);
  EXPECT_NEAR(e.seconds, 3 * mechanism, 1e-18);
  EXPECT_DOUBLE_EQ(e.factor, 3);
  EXPECT_NEAR(e.mechanism_s, mechanism, 1e-18);
  // A strided data gradient takes its own factor; a stride-1 one the plain factor.
  ConvShape wide = c;
  wide.channels = 16;
  fp32.strided_data_gradient = 2;
  EXPECT_DOUBLE_EQ(fp32.factor_for(ConvAlgorithm::implicit_gemm, wide, ConvPass::data_gradient), 1);
  wide.stride_h = wide.stride_w = 2;
  EXPECT_DOUBLE_EQ(fp32.factor_for(ConvAlgorithm::implicit_gemm, wide, ConvPass::data_gradient), 2);
  EXPECT_DOUBLE_EQ(fp32.factor_for(ConvAlgorithm::implicit_gemm, wide, ConvPass::forward), 1.5);
  EXPECT_DOUBLE_EQ(fp32.factor_for(ConvAlgorithm::winograd, wide, ConvPass::data_gradient), 0);
}

TEST(ConvModel, WithoutConvolutionConstantsTheImplicitGemmRunsThroughTheGemmModel) {
  const ConvShape c = small_conv();
  const DeviceSpec d = small_gpu(Generation::volta);
  GemmParams g = ideal_gemm();
  g.k_overhead = 4;
  g.bandwidth_fraction = 0.5;
  g.fixed_s = 1e-6;
  g.layout_factor = {1.1, 1.2, 1.3};
  for (ConvPass pass : {ConvPass::forward, ConvPass::data_gradient, ConvPass::weight_gradient}) {
    const ConvEstimate e = conv_time(c, pass, Precision::fp16, d, g, ConvParams{});
    EXPECT_EQ(e.algorithm, ConvAlgorithm::implicit_gemm);
    EXPECT_DOUBLE_EQ(e.factor, 1);
    EXPECT_DOUBLE_EQ(e.gemm.k, implicit_gemm_shape(c, pass, 8).k);  // tensor cores: C padded to 8
    EXPECT_DOUBLE_EQ(e.seconds, gemm_time(implicit_gemm_shape(c, pass, 8), Precision::fp16, d, g).seconds);
  }
}

TEST(ConvModel, PrecisionSlotsAndFallback) {
  EXPECT_TRUE(ConvParams::sixteen_bit(Precision::bf16));
  EXPECT_TRUE(ConvParams::sixteen_bit(Precision::tf32));
  EXPECT_FALSE(ConvParams::sixteen_bit(Precision::fp64));
  ConvParams p;
  EXPECT_EQ(p.for_precision(Precision::fp32), nullptr);
  p.fp16 = unit_factors(1);
  EXPECT_EQ(p.for_precision(Precision::bf16), &p.fp16);
  EXPECT_EQ(p.for_precision(Precision::fp32), &p.fp16);  // the other slot, while fp32 is not fitted
  p.fp32 = unit_factors(1);
  EXPECT_EQ(p.for_precision(Precision::fp64), &p.fp32);
  EXPECT_EQ(p.for_precision(Precision::fp16), &p.fp16);
}

TEST(ConvModel, NamedRoundTrip) {
  // The list is fixed: a default ConvParams names every constant (profile readers rely on it).
  const auto names = ConvParams{}.named();
  ASSERT_EQ(names.size(), 24u);  // 12 constants x 2 slots
  EXPECT_EQ(names.front().first, "fp32.k_overhead");
  EXPECT_EQ(names[12].first, "fp16.k_overhead");
  EXPECT_EQ(names.back().first, "fp16.strided_data_gradient");
  ConvParams p;
  p.fp32.k_overhead = 16;
  p.fp32.bandwidth_fraction = 0.7;
  p.fp32.factor = {{{1.1, 1.2, 1.3}, {0.9, 0.8, 0}}};
  p.fp32.first_layer = {2.5, 0, 3.5};
  p.fp32.strided_data_gradient = 2.25;
  p.fp16 = unit_factors(0);
  const auto named = p.named();
  ConvParams q;
  for (const auto& [name, value] : named) EXPECT_TRUE(q.set(name, value)) << name;
  EXPECT_EQ(q.named(), named);
  EXPECT_DOUBLE_EQ(q.fp32.at(ConvAlgorithm::winograd, ConvPass::data_gradient), 0.8);
  EXPECT_DOUBLE_EQ(q.fp32.strided_data_gradient, 2.25);
  EXPECT_DOUBLE_EQ(q.fp16.bandwidth_fraction, 1);
  EXPECT_FALSE(q.set("fp32.implicit_gemm.sideways", 1));
  EXPECT_FALSE(q.set("bf16.k_overhead", 1));
  EXPECT_FALSE(q.set("implicit_gemm.forward", 1));  // the names before slots
}

TEST(ConvModel, RejectsBadShapes) {
  const DeviceSpec d = small_gpu(Generation::pascal);
  ConvShape c = small_conv();
  c.channels = 0;
  EXPECT_THROW(conv_time(c, ConvPass::forward, Precision::fp32, d, ideal_gemm(), ConvParams{}), std::invalid_argument);
  ConvShape big = small_conv();
  big.kernel_h = big.kernel_w = 11;  // larger than the padded 10 x 10 input
  EXPECT_THROW(conv_time(big, ConvPass::forward, Precision::fp32, d, ideal_gemm(), ConvParams{}), std::invalid_argument);
  EXPECT_THROW(conv_time(small_conv(), ConvPass::forward, Precision::fp32, d, GemmParams{}, ConvParams{}),
               std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::models
