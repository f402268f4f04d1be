// Single-kernel predictions (experiment/kernel_predict.hpp): a GEMM worked out by hand on a toy
// device, the memory-kernel fallback, device names and labels, and the command-line parsers.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "experiment/config_error.hpp"
#include "experiment/kernel_predict.hpp"

namespace dlsim::experiment {
namespace {

using models::Precision;

const SourceLocation kHere{"test", 0, 0};

// A toy device: 4 units of 1e12 FLOP/s each in fp16 and bf16, 1e12 B/s, and the TPU generation
// so that one tile (128 x 128) is the only candidate. Its GEMM constants: half of peak for every
// tile (no tile overhead, no k overhead), the full bandwidth, 1 us fixed, NT layout x 1.25.
struct ToyDevice {
  models::DeviceSpec spec;
  models::DeviceProfile profile;
  ToyDevice() {
    spec.name = "toy";
    spec.generation = models::Generation::tpu;
    spec.compute_units = 4;
    spec.peak_flops[static_cast<int>(Precision::fp16)] = 4e12;
    spec.peak_flops[static_cast<int>(Precision::bf16)] = 4e12;
    spec.memory_bandwidth = 1e12;
    models::GemmParams& g = profile.kernels.gemm[static_cast<std::size_t>(Precision::fp16)];
    g.peak_fraction = 0.5;
    g.bandwidth_fraction = 1;
    g.fixed_s = 1e-6;
    g.layout_factor = {1, 1.25, 1};
    models::ErrorBand& b = profile.kernels.bands[static_cast<std::size_t>(models::KernelFamilyKind::gemm)];
    b.cases = 100;
    b.p10 = 0.8;
    b.p90 = 1.5;
    // A stream curve only: 10 us at 1 MB, 100 us at 100 MB.
    profile.kernels.memory.curves[static_cast<std::size_t>(models::MemoryKernel::stream)] = {{1e6, 1e8}, {1e-5, 1e-4}};
  }
  KernelDevice device() const { return {"toy", &spec, &profile}; }
};

// C[640 x 384] = A[640 x 1024] B[1024 x 384], fp16, NT, on the toy device (1e12 FLOP/s per unit at
// e = 0.5: 5e11), memory = (640 1024 + 1024 384 + 640 384) x 2 B / 1e12 B/s = 2.588672 us:
//   split 1: 5 x 3 = 15 tiles, ceil(15 / 4) = 4 waves (the last 3/4 full) of
//            1024 x 2 x 128 x 128 / 5e11 = 67.108864 us: 268.435456 us
//   split 2: 30 tiles, 8 waves of 33.554432 us = 268.435456 us + partial sums 640 x 384 x 4 B x 3 / 1e12
//            = 2.94912 us: 271.384576 us
//   split 3: 45 tiles, 12 waves of 342 x 32768 / 5e11 = 22.413312 us: 268.959744 + 3.93216 us
//   split 4: 60 tiles, 15 full waves of 16.777216 us = 251.65824 us + 640 x 384 x 4 x 5 / 1e12 = 4.9152 us
//            = 256.57344 us  <- the least: split-K fills the wave that 15 tiles left a quarter empty
//   split 6: 90 tiles, 23 waves of 171 x 32768 / 5e11 = 257.753088 + 6.88128 us; split 8: 251.65824 +
//            8.84736 us; split 12 would leave 86 < 128 of k per slice.
// time = 256.57344 us x 1.25 (NT) + 1 us = 321.7168 us; compute-bound (2.59 us of memory).
// TFLOP/s = 2 x 640 x 384 x 1024 / 321.7168 us = 503316480 / 321.7168e-6 = 1.56447 TFLOP/s.
// band: 321.7168 us x 0.8 = 257.37344 us .. x 1.5 = 482.5752 us.
TEST(KernelPredict, GemmWorkedOutByHand) {
  const ToyDevice toy;
  const GemmPrediction p =
      predict_gemm(toy.device(), {640, 384, 1024, 1, models::GemmLayout::nt}, Precision::fp16, kHere);
  EXPECT_EQ(p.estimate.tile_m, 128);
  EXPECT_EQ(p.estimate.tile_n, 128);
  EXPECT_EQ(p.estimate.split_k, 4);
  EXPECT_DOUBLE_EQ(p.estimate.tiles, 60);
  EXPECT_DOUBLE_EQ(p.estimate.waves, 15);
  EXPECT_FALSE(p.estimate.memory_bound);
  EXPECT_NEAR(p.estimate.mechanism_s, 256.57344e-6, 1e-15);
  EXPECT_NEAR(p.estimate.seconds, 321.7168e-6, 1e-15);
  EXPECT_NEAR(p.tflops, 1.56447, 1e-5);
  EXPECT_NEAR(p.interval.low_s, 257.37344e-6, 1e-15);
  EXPECT_NEAR(p.interval.high_s, 482.5752e-6, 1e-15);
  EXPECT_EQ(p.fitted, Precision::fp16);

  // bf16 has no constants of its own: it borrows fp16's (same peak here, so the same time).
  const GemmPrediction b =
      predict_gemm(toy.device(), {640, 384, 1024, 1, models::GemmLayout::nt}, Precision::bf16, kHere);
  EXPECT_EQ(b.fitted, Precision::fp16);
  EXPECT_DOUBLE_EQ(b.estimate.seconds, p.estimate.seconds);
  // NN runs at the mechanism's time (layout factor 1): 256.57344 + 1 us.
  const GemmPrediction nn =
      predict_gemm(toy.device(), {640, 384, 1024, 1, models::GemmLayout::nn}, Precision::fp16, kHere);
  EXPECT_NEAR(nn.estimate.seconds, 257.57344e-6, 1e-15);
}

TEST(KernelPredict, GemmRejectsWhatTheDeviceCannotRun) {
  const ToyDevice toy;
  try {
    predict_gemm(toy.device(), {64, 64, 64, 1, models::GemmLayout::nt}, Precision::fp32, kHere);
    FAIL() << "fp32 has no peak on the toy device";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "precision");
    EXPECT_NE(e.message().find("toy has no fp32 peak"), std::string::npos) << e.what();
  }
  EXPECT_THROW(predict_gemm(toy.device(), {0, 64, 64, 1, models::GemmLayout::nt}, Precision::fp16, kHere), ConfigError);
}

// rms_norm was not measured on the toy device: it runs on the stream curve (fallback_chain), at
// 10 MB halfway in log-log between 10 us and 100 us: sqrt(1e-5 x 1e-4) = 31.6228 us.
TEST(KernelPredict, MemoryKernelFallsBackOnAMeasuredCurve) {
  const ToyDevice toy;
  const MemoryPrediction p = predict_memory_kernel(toy.device(), models::MemoryKernel::rms_norm, 1e7, kHere);
  EXPECT_TRUE(p.has_curve);
  EXPECT_EQ(p.curve, models::MemoryKernel::stream);
  EXPECT_NEAR(p.seconds, std::sqrt(1e-5 * 1e-4), 1e-12);
  EXPECT_EQ(p.interval.band.cases, 0);  // no memory band: the interval is the prediction
  EXPECT_DOUBLE_EQ(p.interval.low_s, p.seconds);
  EXPECT_THROW(predict_memory_kernel(toy.device(), models::MemoryKernel::stream, 0, kHere), ConfigError);
}

TEST(KernelPredict, DevicesByCatalogNameOrTableLabel) {
  const KernelDevice a = kernel_device("A100", kHere, "--gpu");
  const KernelDevice b = kernel_device("A100-80GB", kHere, "--device");
  EXPECT_EQ(a.name, "A100-80GB");
  EXPECT_EQ(a.spec, b.spec);
  EXPECT_TRUE(a.profile->kernels.present());
  EXPECT_EQ(kernel_device("P100", kHere, "gpu").name, "P100-PCIe");
  try {
    kernel_device("A100-80G", kHere, "--device");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "--device");
    EXPECT_NE(e.message().find("did you mean 'A100-80GB'"), std::string::npos) << e.what();
  }
  try {
    kernel_device("TPU-v4", kHere, "--device");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("TPU-v4 has no kernel profile"), std::string::npos) << e.what();
  }
}

TEST(KernelPredict, CommandLineValues) {
  const models::GemmShape s = parse_gemm_shape("4096x1024X8", kHere, "--gemm");
  EXPECT_EQ(s.m, 4096);
  EXPECT_EQ(s.n, 1024);
  EXPECT_EQ(s.k, 8);
  for (const char* bad : {"4096x4096", "4096x4096x", "1x2x3x4", "0x1x1", "ax1x1", "1.5x2x2", ""}) {
    EXPECT_THROW(parse_gemm_shape(bad, kHere, "--gemm"), ConfigError) << bad;
  }
  EXPECT_EQ(parse_gemm_layout("tn", kHere, "--layout"), models::GemmLayout::tn);
  EXPECT_THROW(parse_gemm_layout("tt", kHere, "--layout"), ConfigError);
  EXPECT_EQ(parse_memory_kernel("softmax", kHere, "--memory"), models::MemoryKernel::softmax);
  EXPECT_THROW(parse_memory_kernel("sofmax", kHere, "--memory"), ConfigError);
  EXPECT_EQ(parse_kernel_bytes("1024", kHere, "--bytes"), 1024);
  EXPECT_EQ(parse_kernel_bytes("64MiB", kHere, "--bytes"), 64.0 * 1024 * 1024);
  EXPECT_THROW(parse_kernel_bytes("64 parsecs", kHere, "--bytes"), ConfigError);
  EXPECT_EQ(parse_kernel_count("8", kHere, "--batch"), 8);
  EXPECT_THROW(parse_kernel_count("0", kHere, "--batch"), ConfigError);
  EXPECT_EQ(parse_kernel_precision("bf16", kHere, "--precision"), Precision::bf16);
  EXPECT_THROW(parse_kernel_precision("fp12", kHere, "--precision"), ConfigError);
}

TEST(KernelPredict, PrintsTheDecisionAndTheBand) {
  const ToyDevice toy;
  std::ostringstream out;
  print_gemm_prediction(
      out, predict_gemm(toy.device(), {640, 384, 1024, 1, models::GemmLayout::nt}, Precision::fp16, kHere));
  const std::string text = out.str();
  for (const char* expected : {"GEMM 640 x 384 x 1024 (m x n x k), fp16, layout nt, batch 1, on toy", "321.7 us",
                               "1.564 TFLOP/s (39% of the fp16 peak, 4 TFLOP/s)",
                               "tile 128 x 128, split-K 4: 60 tiles in 15 waves over 4 SMs, compute-bound",
                               "x 1.25 (layout factor and shape correction)", "257.4 us .. 482.6 us",
                               "p10 0.8, p90 1.5 over 100 held-out GEMMs"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << text;
  }
}

}  // namespace
}  // namespace dlsim::experiment
