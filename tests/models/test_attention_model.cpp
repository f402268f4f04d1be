// Tests of the FlashAttention time model (attention_model.cpp): it reproduces the published figures it
// tabulates on the papers' own benchmark shapes, and behaves as the mechanism says elsewhere.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/attention_model.hpp"
#include "models/catalog.hpp"

namespace dlsim::models {
namespace {

const DeviceSpec& device(const std::string& name) {
  static const Catalog catalog = Catalog::builtin();
  const DeviceSpec* d = catalog.find_device(name);
  if (d == nullptr) throw std::runtime_error("no device " + name);
  return *d;
}

// The FA2/FA3 papers' benchmark: 16k tokens per batch, hidden 2048.
AttentionShape paper_shape(double length, double head_dim, bool causal) {
  AttentionShape s;
  s.batch = 16384 / length;
  s.heads = 2048 / head_dim;
  s.kv_heads = s.heads;
  s.query_length = length;
  s.key_length = length;
  s.head_dim = head_dim;
  s.causal = causal;
  return s;
}

double forward_tflops(const AttentionShape& s, Precision p, const DeviceSpec& d) {
  const AttentionTime t = flash_attention_time(s, p, d);
  return t.forward_flops / t.forward_s / 1e12;
}
double backward_tflops(const AttentionShape& s, Precision p, const DeviceSpec& d) {
  const AttentionTime t = flash_attention_time(s, p, d);
  return t.backward_flops / t.backward_s / 1e12;
}
double fwd_bwd_tflops(const AttentionShape& s, Precision p, const DeviceSpec& d) {
  const AttentionTime t = flash_attention_time(s, p, d);
  return (t.forward_flops + t.backward_flops) / (t.forward_s + t.backward_s) / 1e12;
}

TEST(AttentionModel, CountsFlopsAsThePapers) {
  const AttentionShape s = paper_shape(2048, 128, false);
  const AttentionTime t = flash_attention_time(s, Precision::bf16, device("A100-80GB"));
  EXPECT_DOUBLE_EQ(t.forward_flops, 4.0 * 2048 * 2048 * 128 * 16 * 8);
  EXPECT_DOUBLE_EQ(t.backward_flops, 2.5 * t.forward_flops);
  const AttentionTime c = flash_attention_time(paper_shape(2048, 128, true), Precision::bf16, device("A100-80GB"));
  EXPECT_DOUBLE_EQ(c.forward_flops, 0.5 * t.forward_flops);
}

// FA2 paper Fig. 5(b): 227 TFLOP/s forward, A100, 2k, hdim 128, non-causal.
TEST(AttentionModel, ReproducesA100ForwardFigure) {
  const double tflops = forward_tflops(paper_shape(2048, 128, false), Precision::fp16, device("A100-80GB"));
  EXPECT_NEAR(tflops, 227.0, 0.01 * 227.0);
  // Fig. 5(c): 183 at 16k, hdim 64, causal.
  EXPECT_NEAR(forward_tflops(paper_shape(16384, 64, true), Precision::bf16, device("A100-80GB")), 183.0, 1.83);
}

// FA2 paper Fig. 4: forward+backward 203 (hdim 128, 16k, non-causal) and 140 (hdim 64, 2k, causal).
TEST(AttentionModel, ReproducesA100ForwardBackwardFigure) {
  EXPECT_NEAR(fwd_bwd_tflops(paper_shape(16384, 128, false), Precision::bf16, device("A100-80GB")), 203.0, 2.03);
  EXPECT_NEAR(fwd_bwd_tflops(paper_shape(2048, 64, true), Precision::bf16, device("A100-80GB")), 140.0, 1.40);
  // FA2 paper Sec. 1: backward "up to 63% of the theoretical max throughput".
  const double best = backward_tflops(paper_shape(16384, 128, false), Precision::bf16, device("A100-80GB"));
  EXPECT_NEAR(best / 312.0, 0.63, 0.01);
}

// FA3 paper Fig. 5(c)/6(b): FA2 on H100, hdim 128, non-causal: forward 362 at 2k, backward 322 at 16k;
// and the FA2 paper's "up to 335 TFLOPs/s" fwd+bwd on H100.
TEST(AttentionModel, ReproducesH100Fa2Figures) {
  const DeviceSpec& h100 = device("H100-SXM");
  EXPECT_NEAR(forward_tflops(paper_shape(2048, 128, false), Precision::bf16, h100), 362.0, 3.62);
  EXPECT_NEAR(backward_tflops(paper_shape(16384, 128, false), Precision::bf16, h100), 322.0, 3.22);
  EXPECT_NEAR(fwd_bwd_tflops(paper_shape(16384, 128, false), Precision::bf16, h100), 335.0, 0.02 * 335.0);
}

// FA3 paper Fig. 7: FP8 forward, hdim 256, non-causal, 16896: 1171 TFLOP/s.
TEST(AttentionModel, ReproducesH100Fp8Figure) {
  const DeviceSpec& h100 = device("H100-SXM");
  AttentionShape s = paper_shape(16384, 256, false);
  s.query_length = s.key_length = 16896;
  const double forward = forward_tflops(s, Precision::fp8, h100);
  EXPECT_NEAR(forward, 1171.0, 11.71);
  // FP8's backward runs at FA3's BF16 rate (no FP8 backward): Fig. 6(b), 561 at 16k, hdim 128 (256 clamps).
  EXPECT_NEAR(backward_tflops(s, Precision::fp8, h100), 561.0, 5.61);
  EXPECT_LT(backward_tflops(s, Precision::fp8, h100), 0.6 * forward);
}

TEST(AttentionModel, CausalIsSlowerPerFlopButFasterInTime) {
  for (const char* name : {"A100-80GB", "H100-SXM"}) {
    for (double length : {512.0, 2048.0, 16384.0}) {
      const AttentionTime full = flash_attention_time(paper_shape(length, 128, false), Precision::bf16, device(name));
      const AttentionTime causal = flash_attention_time(paper_shape(length, 128, true), Precision::bf16, device(name));
      EXPECT_GT(causal.forward_s / causal.forward_flops, full.forward_s / full.forward_flops) << name << length;
      EXPECT_GT(causal.backward_s / causal.backward_flops, full.backward_s / full.backward_flops) << name << length;
      EXPECT_LT(causal.forward_s, full.forward_s) << name << length;
      EXPECT_LT(causal.backward_s, full.backward_s) << name << length;
    }
  }
}

TEST(AttentionModel, H100IsFasterThanA100) {
  for (bool causal : {false, true}) {
    for (double head_dim : {64.0, 128.0}) {
      const AttentionShape s = paper_shape(4096, head_dim, causal);
      const AttentionTime a = flash_attention_time(s, Precision::bf16, device("A100-80GB"));
      const AttentionTime h = flash_attention_time(s, Precision::bf16, device("H100-SXM"));
      EXPECT_LT(h.forward_s, a.forward_s);
      EXPECT_LT(h.backward_s, a.backward_s);
    }
  }
}

// R8: the Triton FlashAttention kernel (MPT's attn_impl: triton) takes the FA2 paper's "around
// 1.3-1.5x" (forward) and "around 2x" (backward) over FA2, on any device; the FLOPs are the same.
TEST(AttentionModel, TheTritonKernelIsTheFa2PapersFactorsSlower) {
  for (const char* name : {"A100-80GB", "H100-SXM"}) {
    AttentionShape s = paper_shape(2048, 128, true);
    const AttentionTime fa2 = flash_attention_time(s, Precision::bf16, device(name));
    s.kernel = FlashKernel::triton;
    const AttentionTime triton = flash_attention_time(s, Precision::bf16, device(name));
    EXPECT_NEAR(triton.forward_s / fa2.forward_s, 1.4, 1e-12) << name;
    EXPECT_NEAR(triton.backward_s / fa2.backward_s, 2.0, 1e-12) << name;
    EXPECT_DOUBLE_EQ(triton.forward_flops, fa2.forward_flops);
  }
}

// R9: FlashAttention-3 on Hopper runs at the FA3 paper's own rates (hdim 128, non-causal, 16k
// tokens: 648 TFLOP/s forward, 561 backward, at the H100's 989.4 TFLOP/s peak), faster than FA2
// in both passes; it runs on Hopper only.
TEST(AttentionModel, FlashAttention3RunsAtItsPapersRatesOnHopperOnly) {
  AttentionShape s = paper_shape(16384, 128, false);
  s.kernel = FlashKernel::fa3;
  const AttentionTime fa3 = flash_attention_time(s, Precision::bf16, device("H100-SXM"));
  EXPECT_NEAR(fa3.forward_flops / fa3.forward_s / 1e12, 648, 1e-6);
  EXPECT_NEAR(fa3.backward_flops / fa3.backward_s / 1e12, 561, 1e-6);
  for (bool causal : {false, true}) {
    for (double head_dim : {64.0, 128.0}) {
      AttentionShape p = paper_shape(4096, head_dim, causal);
      const AttentionTime fa2 = flash_attention_time(p, Precision::bf16, device("H100-SXM"));
      p.kernel = FlashKernel::fa3;
      const AttentionTime three = flash_attention_time(p, Precision::bf16, device("H100-SXM"));
      EXPECT_LT(three.forward_s, fa2.forward_s) << head_dim << causal;
      EXPECT_LT(three.backward_s, fa2.backward_s) << head_dim << causal;
    }
  }
  // In FP8 the FP8 forward of FA3 runs whichever kernel was named (FA3's is the only FP8 one).
  AttentionShape q = paper_shape(4096, 128, true);
  const AttentionTime fp8_default = flash_attention_time(q, Precision::fp8, device("H100-SXM"));
  q.kernel = FlashKernel::fa3;
  const AttentionTime fp8_fa3 = flash_attention_time(q, Precision::fp8, device("H100-SXM"));
  EXPECT_DOUBLE_EQ(fp8_fa3.forward_s, fp8_default.forward_s);
  EXPECT_DOUBLE_EQ(fp8_fa3.backward_s, fp8_default.backward_s);
  EXPECT_THROW(flash_attention_time(s, Precision::bf16, device("A100-80GB")), std::invalid_argument);
  EXPECT_NE(flash_attention_unavailable(Precision::bf16, device("A100-80GB"), FlashKernel::fa3).find("Hopper"),
            std::string::npos);
  EXPECT_EQ(flash_attention_unavailable(Precision::bf16, device("H100-SXM"), FlashKernel::fa3), "");
}

// R1 for the generations no figure is tabulated for: Blackwell runs cuDNN's attention, FA2-on-A100's
// fraction of its own peak (FlashAttention-4's 71% of the B200's) over FA4's 1.3x lead on cuDNN;
// MI300X at FA2-on-H100's. On the papers' shape (enough tiles to fill every SM) the rates are the
// peaks' ratios exactly; 1.3x the B200 forward rate at its best is within 3% of the FA4 paper's
// 1,613 TFLOP/s.
TEST(AttentionModel, NewerGenerationsTakeTheirNearestPublishedFractions) {
  const AttentionShape s = paper_shape(16384, 128, false);
  const double a100 = forward_tflops(s, Precision::bf16, device("A100-80GB"));
  const double b200 = forward_tflops(s, Precision::bf16, device("B200"));
  EXPECT_NEAR(b200 / a100, 2250.0 / 312.0 / 1.3, 1e-9);
  EXPECT_NEAR(1.3 * b200, 1613, 0.03 * 1613);
  EXPECT_NEAR(backward_tflops(s, Precision::bf16, device("B200")) / backward_tflops(s, Precision::bf16, device("A100-80GB")),
              2250.0 / 312.0 / 1.3, 1e-9);
  const double h100 = forward_tflops(s, Precision::bf16, device("H100-SXM"));
  EXPECT_NEAR(forward_tflops(s, Precision::bf16, device("MI300X")) / h100, 1307.4 / 989.4, 1e-9);
  // FA3's FP8 forward is Hopper's alone; under fp8 training attention runs in bf16 (fp8_recipe).
  EXPECT_FALSE(flash_attention_unavailable(Precision::fp8, device("B200")).empty());
  EXPECT_TRUE(flash_attention_unavailable(Precision::bf16, device("B200")).empty());
  EXPECT_TRUE(flash_attention_unavailable(Precision::bf16, device("GB200")).empty());
}

// The published fwd+bwd and backward curves rise with length (the forward ones are flat within 1-2%).
TEST(AttentionModel, BackwardRateRisesWithLength) {
  for (const char* name : {"A100-80GB", "H100-SXM"}) {
    for (bool causal : {false, true}) {
      double previous = 0;
      for (double length = 256; length <= 32768; length *= 1.25) {
        AttentionShape s = paper_shape(1024, 128, causal);
        s.batch = 64;  // enough tiles at every length
        s.query_length = s.key_length = length;
        const double tflops = backward_tflops(s, Precision::bf16, device(name));
        EXPECT_GE(tflops, previous - 1e-9) << name << " " << length;
        previous = tflops;
      }
    }
  }
}

TEST(AttentionModel, ShortSequencesRunBelowThe512Figure) {
  const DeviceSpec& a100 = device("A100-80GB");
  AttentionShape s = paper_shape(512, 64, true);
  const double at512 = forward_tflops(s, Precision::bf16, a100);
  s.query_length = s.key_length = 128;
  s.batch = 128;  // same tokens, enough tiles: only the per-tile cost differs
  const double at128 = forward_tflops(s, Precision::bf16, a100);
  EXPECT_LT(at128, at512);
  EXPECT_GT(at128, 0.3 * at512);
}

TEST(AttentionModel, FewTilesLeaveSmsIdle) {
  const DeviceSpec& a100 = device("A100-80GB");  // 108 SMs
  AttentionShape s = paper_shape(2048, 128, false);
  s.batch = 1;
  s.heads = 2;  // 2 x 16 = 32 tiles
  s.kv_heads = 2;
  EXPECT_NEAR(forward_tflops(s, Precision::bf16, a100), 227.0 * 32 / 108, 0.01 * 227.0 * 32 / 108);
}

TEST(AttentionModel, GroupedQueryAttentionDoesTheSameWork) {
  AttentionShape mha = paper_shape(4096, 128, true);
  AttentionShape gqa = mha;
  gqa.kv_heads = 2;
  const AttentionTime a = flash_attention_time(mha, Precision::bf16, device("H100-SXM"));
  const AttentionTime b = flash_attention_time(gqa, Precision::bf16, device("H100-SXM"));
  EXPECT_DOUBLE_EQ(a.forward_flops, b.forward_flops);
  EXPECT_DOUBLE_EQ(a.forward_s, b.forward_s);
  EXPECT_DOUBLE_EQ(a.backward_s, b.backward_s);
}

TEST(AttentionModel, HeadDimInterpolatesBetweenPanels) {
  const DeviceSpec& a100 = device("A100-80GB");
  const double d64 = forward_tflops(paper_shape(2048, 64, false), Precision::bf16, a100);
  const double d128 = forward_tflops(paper_shape(2048, 128, false), Precision::bf16, a100);
  const double d96 = forward_tflops(paper_shape(2048, 96, false), Precision::bf16, a100);
  EXPECT_GT(d96, d64);
  EXPECT_LT(d96, d128);
  // Outside the published head dims: clamped.
  EXPECT_DOUBLE_EQ(forward_tflops(paper_shape(2048, 256, false), Precision::bf16, a100), d128);
}

TEST(AttentionModel, RejectsWhatFlashAttentionDoesNotRun) {
  const AttentionShape s = paper_shape(2048, 128, true);
  EXPECT_THROW(flash_attention_time(s, Precision::fp16, device("V100-16GB")), std::invalid_argument);
  EXPECT_THROW(flash_attention_time(s, Precision::fp16, device("T4")), std::invalid_argument);
  EXPECT_THROW(flash_attention_time(s, Precision::bf16, device("TPU-v4")), std::invalid_argument);
  EXPECT_THROW(flash_attention_time(s, Precision::fp32, device("A100-80GB")), std::invalid_argument);
  EXPECT_THROW(flash_attention_time(s, Precision::tf32, device("H100-SXM")), std::invalid_argument);
  EXPECT_THROW(flash_attention_time(s, Precision::fp8, device("A100-80GB")), std::invalid_argument);  // no peak
  EXPECT_THROW(flash_attention_time(s, Precision::fp8, device("L4")), std::invalid_argument);  // Ada: no FA fp8
  AttentionShape bad = s;
  bad.head_dim = 0;
  EXPECT_THROW(flash_attention_time(bad, Precision::bf16, device("A100-80GB")), std::invalid_argument);
  bad = s;
  bad.kv_heads = bad.heads + 1;
  EXPECT_THROW(flash_attention_time(bad, Precision::bf16, device("A100-80GB")), std::invalid_argument);
  bad = s;
  bad.query_length = 0.5;
  EXPECT_THROW(flash_attention_time(bad, Precision::bf16, device("A100-80GB")), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::models
