// Fitting the kernel model (calibration/kernel_fit.hpp) on synthetic tables made by a known
// model: the fit must reproduce the times it was made from, report held-out errors per source,
// and fall back between memory classes as the model does.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_test_devices.hpp"
#include "calibration/kernel_fit.hpp"
#include "calibration/nelder_mead.hpp"

namespace dlsim::calibration {
namespace {

models::DeviceSpec gpu() { return test::test_gpu("test-gpu", 40, 100e12, 1e12); }

models::GemmParams truth() {
  models::GemmParams p;
  p.peak_fraction = 0.85;
  p.tile_overhead = 12;
  p.k_overhead = 40;
  p.bandwidth_fraction = 0.8;
  p.fixed_s = 3e-6;
  return p;
}

// GEMM rows of two made-up "models" (different n, k), tokens 1 .. 4096, timed by `truth`.
KernelTables synthetic_gemms() {
  KernelTables t;
  const std::pair<const char*, std::vector<std::pair<double, double>>> sources[] = {
      {"model-a", {{4096, 4096}, {12288, 4096}, {4096, 11008}}}, {"model-b", {{5120, 5120}, {15360, 5120}, {5120, 13824}}}};
  for (const auto& [source, shapes] : sources) {
    for (const auto& [n, k] : shapes) {
      for (double m = 1; m <= 4096; m *= 2) {
        for (double mm : {m, 1.5 * m}) {
          MeasuredGemm g;
          g.gpu = "G";
          g.source = source;
          g.shape = {std::round(mm), n, k, 1, models::GemmLayout::nt};
          g.seconds = models::gemm_time(g.shape, models::Precision::fp16, gpu(), truth()).seconds;
          t.gemm.push_back(g);
        }
      }
    }
  }
  return t;
}

TEST(NelderMead, FindsTheMinimumOfAQuadratic) {
  const auto f = [](const std::vector<double>& x) { return (x[0] - 3) * (x[0] - 3) + 10 * (x[1] + 1) * (x[1] + 1); };
  const SimplexResult r = nelder_mead(f, {0, 0}, 1, 2000, 1e-14);
  EXPECT_NEAR(r.x[0], 3, 1e-4);
  EXPECT_NEAR(r.x[1], -1, 1e-4);
}

TEST(KernelFit, ReproducesTheGemmTimesItWasMadeFrom) {
  const KernelTables t = synthetic_gemms();
  const KernelFit fit = fit_kernel_profile(t, "G", gpu(), true);
  const models::GemmParams& p = fit.profile.gemm[static_cast<std::size_t>(models::Precision::fp16)];
  ASSERT_TRUE(p.fitted());
  for (const MeasuredGemm& g : t.gemm) {
    const double predicted = models::gemm_time(g.shape, models::Precision::fp16, gpu(), p).seconds;
    EXPECT_NEAR(predicted / g.seconds, 1.0, 0.05) << g.shape.m << "x" << g.shape.n << "x" << g.shape.k;
  }
  // Held out by source: every row predicted once, by a fit on the other model.
  int held = 0;
  for (const HeldOut& h : fit.held_out) {
    if (h.family != models::KernelFamilyKind::gemm) continue;
    ++held;
    EXPECT_TRUE(h.group == "model-a" || h.group == "model-b") << h.group;
  }
  EXPECT_EQ(held, static_cast<int>(t.gemm.size()));
  const auto summary = summarize_held_out(fit.held_out);
  ASSERT_FALSE(summary.empty());
  EXPECT_EQ(summary[0].label, "gemm fp16");
  EXPECT_LT(summary[0].median_abs, 0.05);
  const models::ErrorBand& band = fit.profile.band(models::KernelFamilyKind::gemm);
  EXPECT_GT(band.cases, 0);
  EXPECT_LE(band.p10, band.p50);
  EXPECT_LE(band.p50, band.p90);
}

// A fit on forward (NT) rows only cannot tell the other layouts; a reference table of the same
// device that measured all three, at another level (here 20% faster throughout), sets their
// factors relative to NT: its data gradients 1.1x and weight gradients 1.3x the NT time of the
// same work, so the factors become 1.1 and 1.3 times NT's, whatever the reference's level.
TEST(KernelFit, ALayoutReferenceSetsTheLayoutsTheFitDidNotMeasure) {
  const KernelTables main = synthetic_gemms();
  KernelFit fit = fit_kernel_profile(main, "G", gpu(), false);
  models::GemmParams& p = fit.profile.gemm[static_cast<std::size_t>(models::Precision::fp16)];
  const double nt_before = p.layout_factor[static_cast<std::size_t>(models::GemmLayout::nt)];
  ASSERT_DOUBLE_EQ(p.layout_factor[static_cast<std::size_t>(models::GemmLayout::tn)], nt_before);
  KernelTables reference;
  const std::pair<models::GemmLayout, double> slower[] = {
      {models::GemmLayout::nt, 1.0}, {models::GemmLayout::nn, 1.1}, {models::GemmLayout::tn, 1.3}};
  for (const auto& [layout, factor] : slower) {
    for (const MeasuredGemm& g : main.gemm) {
      MeasuredGemm r = g;
      r.gpu = "G-reference";
      r.shape.layout = layout;
      // Timed as the fitted model times it, 20% faster, and slower by the layout's factor.
      models::GemmShape as_nt = r.shape;
      as_nt.layout = models::GemmLayout::nt;
      r.seconds = 0.8 * factor * models::gemm_time(as_nt, models::Precision::fp16, gpu(), p).seconds;
      reference.gemm.push_back(r);
    }
  }
  const std::vector<std::string> notes = apply_layout_reference(fit.profile, main, "G", reference, "G-reference", gpu());
  ASSERT_EQ(notes.size(), 2u);  // nn and tn; nt was measured
  EXPECT_NE(notes[0].find("gemm fp16 nn: factor x 1.1000"), std::string::npos) << notes[0];
  EXPECT_DOUBLE_EQ(p.layout_factor[static_cast<std::size_t>(models::GemmLayout::nt)], nt_before);
  EXPECT_NEAR(p.layout_factor[static_cast<std::size_t>(models::GemmLayout::nn)] / nt_before, 1.1, 1e-9);
  EXPECT_NEAR(p.layout_factor[static_cast<std::size_t>(models::GemmLayout::tn)] / nt_before, 1.3, 1e-9);
  // Too few reference rows of a layout: its factor stays, said in a note.
  KernelFit again = fit_kernel_profile(main, "G", gpu(), false);
  KernelTables few;
  int tn_rows = 0;
  for (const MeasuredGemm& r : reference.gemm) {
    const bool tn = r.shape.layout == models::GemmLayout::tn;
    if (!tn || ++tn_rows <= 3) few.gemm.push_back(r);
  }
  const auto kept = apply_layout_reference(again.profile, main, "G", few, "G-reference", gpu());
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_NE(kept[1].find("tn: too few reference rows"), std::string::npos) << kept[1];
  EXPECT_DOUBLE_EQ(again.profile.gemm[static_cast<std::size_t>(models::Precision::fp16)]
                       .layout_factor[static_cast<std::size_t>(models::GemmLayout::tn)],
                   nt_before);
}

TEST(KernelFit, FoldsWhenOneSourceHoldsMostRows) {
  KernelTables t = synthetic_gemms();
  for (MeasuredGemm& g : t.gemm) g.source = "";
  const KernelFit fit = fit_kernel_profile(t, "G", gpu(), true);
  for (const HeldOut& h : fit.held_out) EXPECT_EQ(h.group.rfind("fold ", 0), 0u) << h.group;
}

TEST(KernelFit, MemoryCurvesFitEachClassAndHeldOutModelsBorrow) {
  KernelTables t = synthetic_gemms();
  // Streams at 1 TB/s plus 2 us; the layer norm of one model only, at half the bandwidth.
  for (const char* source : {"model-a", "model-b"}) {
    for (double bytes = 1e4; bytes < 1e9; bytes *= 1.5) {
      MeasuredMemoryKernel e;
      e.gpu = "G";
      e.source = source;
      e.kernel = models::MemoryKernel::stream;
      e.bytes = bytes;
      e.seconds = 2e-6 + bytes / 1e12;
      t.memory.push_back(e);
      if (std::string(source) == "model-b") {
        e.kernel = models::MemoryKernel::layer_norm;
        e.seconds = 2e-6 + bytes / 0.5e12;
      } else {  // as many rows per source, so that each model is held out in turn
        e.bytes = 1.2 * bytes;
        e.seconds = 2e-6 + e.bytes / 1e12;
      }
      t.memory.push_back(e);
    }
  }
  const KernelFit fit = fit_kernel_profile(t, "G", gpu(), true);
  const models::MemoryCurve* stream = fit.profile.memory.curve(models::MemoryKernel::stream);
  const models::MemoryCurve* norm = fit.profile.memory.curve(models::MemoryKernel::layer_norm);
  ASSERT_NE(stream, nullptr);
  ASSERT_NE(norm, nullptr);
  EXPECT_NEAR(stream->at(3e8) / (2e-6 + 3e8 / 1e12), 1.0, 0.05);
  EXPECT_NEAR(norm->at(3e8) / (2e-6 + 3e8 / 0.5e12), 1.0, 0.05);
  // Holding model-b out leaves no layer-norm rows: its norms are predicted on the stream curve,
  // half the time they take.
  for (const HeldOut& h : fit.held_out) {
    if (h.label == "memory layer_norm" && h.size > 1e8) EXPECT_NEAR(h.predicted_s / h.measured_s, 0.5, 0.05);
  }
}

TEST(KernelFit, RefusesTablesWithoutTheGpuOrWithoutGemms) {
  const KernelTables t = synthetic_gemms();
  EXPECT_THROW(fit_kernel_profile(t, "other", gpu(), false), std::invalid_argument);
  KernelTables memory_only;
  MeasuredMemoryKernel e;
  e.gpu = "G";
  e.bytes = 1e6;
  e.seconds = 1e-5;
  memory_only.memory.assign(5, e);
  EXPECT_THROW(fit_kernel_profile(memory_only, "G", gpu(), false), std::invalid_argument);
}

TEST(KernelFit, APrecisionWithTooFewRowsIsSkippedWithANote) {
  KernelTables t = synthetic_gemms();
  // dlsim calibrate --backend cuda measures FP64 at 8 square sizes only: not enough to fit.
  for (double side = 64; side <= 8192; side *= 2) {
    MeasuredGemm g;
    g.gpu = "G";
    g.source = "square";
    g.shape = {side, side, side, 1, models::GemmLayout::nt};
    g.precision = models::Precision::fp32;
    g.seconds = 1e-3;
    t.gemm.push_back(g);
  }
  const KernelFit fit = fit_kernel_profile(t, "G", test::test_gpu("test-gpu", 40, 100e12, 1e12, models::Generation::ampere, 20e12), false);
  EXPECT_TRUE(fit.profile.gemm[static_cast<std::size_t>(models::Precision::fp16)].fitted());
  EXPECT_FALSE(fit.profile.gemm[static_cast<std::size_t>(models::Precision::fp32)].fitted());
  ASSERT_EQ(fit.notes.size(), 1u);
  EXPECT_NE(fit.notes[0].find("gemm fp32: 8 rows"), std::string::npos) << fit.notes[0];
}

// On Hopper, rows whose operands are not 16-byte aligned are left out of the mechanism's fit and
// set their class's slowdown: here 4x for 2-byte rows, made by the known model.
TEST(KernelFit, MisalignedRowsSetTheAlignmentSlowdownOnHopper) {
  const models::DeviceSpec hopper = test::test_gpu("hopper", 40, 100e12, 1e12, models::Generation::hopper);
  KernelTables t;
  for (const MeasuredGemm& g : synthetic_gemms().gemm) {
    MeasuredGemm h = g;
    h.seconds = models::gemm_time(h.shape, models::Precision::fp16, hopper, truth()).seconds;
    t.gemm.push_back(h);
  }
  for (double m : {2048.0, 4096.0, 8192.0}) {
    MeasuredGemm g;
    g.gpu = "G";
    g.source = "odd-vocabulary";
    g.shape = {m, 50257, 768, 1, models::GemmLayout::nt};
    g.shape.alignment_bytes = models::operand_alignment_bytes(g.shape, 2);
    ASSERT_EQ(g.shape.alignment_bytes, 2);
    models::GemmShape aligned = g.shape;
    aligned.alignment_bytes = 16;
    const models::GemmParams p = truth();
    g.seconds = p.fixed_s + 4 * (models::gemm_time(aligned, models::Precision::fp16, hopper, p).seconds - p.fixed_s);
    t.gemm.push_back(g);
  }
  const KernelFit fit = fit_kernel_profile(t, "G", hopper, false);
  const models::GemmParams& p = fit.profile.gemm[static_cast<std::size_t>(models::Precision::fp16)];
  EXPECT_NEAR(p.alignment_factor[1], 4.0, 0.2);
  EXPECT_EQ(p.alignment_factor[0], 0);
  EXPECT_EQ(p.alignment_factor[2], 0);
  // Before Hopper the same rows stay in the ordinary fit and set no slowdown.
  const KernelFit ampere = fit_kernel_profile(t, "G", gpu(), false);
  for (double f : ampere.profile.gemm[static_cast<std::size_t>(models::Precision::fp16)].alignment_factor) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace dlsim::calibration
