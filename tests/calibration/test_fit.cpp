// The fitter recovers a known device from synthetic measurements: times generated exactly by
// t(s) = t0 + s / (e x peak) must give back e (with a datasheet), the launch overhead, and a
// profile whose predictions match the measurements.
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/fit.hpp"

namespace dlsim::calibration {
namespace {

using models::Precision;

CaseStats stat(KernelCase c, double seconds) {
  CaseStats s;
  s.kernel = c;
  s.median_s = s.p10_s = s.p90_s = seconds;
  s.ok = s.stable = true;
  return s;
}

// A synthetic device: launch 1 us; fp32 GEMM at 80% of 1e12 FLOP/s plus a 1 us fixed cost; fp64
// at 50% of 5e11; streams at 90% of 2e12 B/s plus 1 us.
constexpr double kLaunch = 1e-6;
std::vector<CaseStats> synthetic(double gemm_fixed = kLaunch) {
  std::vector<CaseStats> v{stat({KernelFamily::launch, Precision::fp32, 0, 0, 0, 0}, kLaunch)};
  for (std::int64_t n = 16; n <= 1024; n *= 2) {
    KernelCase g{KernelFamily::gemm, Precision::fp32, n, n, n, 0};
    v.push_back(stat(g, gemm_fixed + g.flops() / (0.8 * 1e12)));
    g.precision = Precision::fp64;
    v.push_back(stat(g, gemm_fixed + g.flops() / (0.5 * 5e11)));
  }
  for (KernelFamily f : {KernelFamily::copy, KernelFamily::read, KernelFamily::write}) {
    for (std::int64_t e = 1024; e <= (1 << 24); e *= 4) {
      KernelCase c{f, Precision::fp32, 0, 0, 0, e};
      v.push_back(stat(c, kLaunch + c.bytes() / (0.9 * 2e12)));
    }
  }
  return v;
}

TEST(Fit, RecoversEfficienciesAndLaunchWithADatasheet) {
  models::DeviceSpec sheet;
  sheet.name = "synthetic";
  sheet.peak_flops[static_cast<int>(Precision::fp32)] = 1e12;
  sheet.peak_flops[static_cast<int>(Precision::fp64)] = 5e11;
  sheet.memory_bandwidth = 2e12;
  const Calibration cal = fit(synthetic(), {"synthetic", "cpu", "", "", 1}, "2026-01-01", &sheet);
  EXPECT_DOUBLE_EQ(cal.profile.kernel_launch_overhead_s, kLaunch);
  // With t0 = launch, eff(s) = s / (peak x s / (e x peak)) = e at every size.
  for (double e : cal.profile.matmul_curve[static_cast<int>(Precision::fp32)].efficiency) EXPECT_NEAR(e, 0.8, 1e-9);
  for (double e : cal.profile.matmul_curve[static_cast<int>(Precision::fp64)].efficiency) EXPECT_NEAR(e, 0.5, 1e-9);
  for (double e : cal.profile.memory_curve.efficiency) EXPECT_NEAR(e, 0.9, 1e-9);
  EXPECT_NEAR(cal.profile.matmul_efficiency, 0.8, 1e-9);
  EXPECT_NEAR(cal.profile.memory_efficiency, 0.9, 1e-9);
  // Curve points at each measured size: 7 GEMM sides (16..1024); streams of 1 Ki..16 Mi floats by
  // 4 (8 counts): read/write move 4 KiB..64 MiB, copy twice that, 8 KiB..128 MiB, none shared
  // (8 x 4^i is never 4 x 4^j) -> 16 distinct sizes.
  EXPECT_EQ(cal.profile.matmul_curve[static_cast<int>(Precision::fp32)].size.size(), 7u);
  EXPECT_EQ(cal.profile.memory_curve.size.size(), 16u);
  // Exact data: every family's fit error is ~0.
  ASSERT_FALSE(cal.errors.empty());
  for (const FamilyError& e : cal.errors) EXPECT_LT(e.median_relative_error, 1e-9) << e.family;
}

TEST(Fit, WithoutADatasheetThePeaksAreTheBestMeasuredRates) {
  // GEMMs pay a 3 us fixed cost, 2 us more than a launch.
  const double fixed = 3e-6;
  const Calibration cal = fit(synthetic(fixed), {"a cpu", "cpu", "", "", 1}, "2026-01-01");
  // Best fp32 rate net of launch: the largest GEMM, 2 x 1024^3 FLOPs in 2 us + 2^31 / 8e11 s.
  const double flops = 2.0 * 1024 * 1024 * 1024;
  const double peak32 = flops / (fixed - kLaunch + flops / 8e11);
  EXPECT_NEAR(cal.spec.peak(Precision::fp32), peak32, 1e-9 * peak32);
  EXPECT_NEAR(cal.spec.peak(Precision::fp64), flops / (fixed - kLaunch + flops / 2.5e11), 1e-9 * peak32);
  EXPECT_GT(cal.spec.peak(Precision::fp32), cal.spec.peak(Precision::fp64));
  // Streams pay exactly the launch as fixed cost: their best net rate is the true 0.9 x 2e12.
  EXPECT_NEAR(cal.spec.memory_bandwidth, 1.8e12, 1.8e12 * 1e-12);  // rounding only
  EXPECT_EQ(cal.spec.name, "local-cpu");
  EXPECT_NE(cal.spec.source.find("best measured"), std::string::npos);
  // eff(s) = s / (peak x (2 us + s / 8e11)): 1 at the largest size, lower below; at 16^3 x 2 =
  // 8192 FLOPs it is 8192 / (peak32 x (2e-6 + 8192 / 8e11)).
  const auto& c = cal.profile.matmul_curve[static_cast<int>(Precision::fp32)];
  EXPECT_NEAR(c.efficiency.back(), 1.0, 1e-9);
  EXPECT_NEAR(c.efficiency.front(), 8192 / (peak32 * (2e-6 + 8192 / 8e11)), 1e-9);
  // Predictions from the profile reproduce the measurements (the model is exact here).
  for (const FamilyError& e : cal.errors) EXPECT_LT(e.median_relative_error, 1e-9) << e.family;
}

TEST(Fit, ReportsTheErrorOfAWrongModel) {
  // Read-family times twice what the streams' line predicts: copy/write stay on it, read is off.
  std::vector<CaseStats> v = synthetic();
  for (CaseStats& s : v) {
    if (s.kernel.family == KernelFamily::read) s.median_s *= 2;
  }
  const Calibration cal = fit(v, {"a cpu", "cpu", "", "", 1}, "2026-01-01");
  double read_error = -1;
  for (const FamilyError& e : cal.errors) {
    if (e.family == "read") read_error = e.median_relative_error;
  }
  // A prediction near the other families' line is about half of the doubled time: error ~50%.
  EXPECT_GT(read_error, 0.2);
  EXPECT_LT(read_error, 0.8);
}

TEST(Fit, NeedsLaunchAndTwoSizes) {
  std::vector<CaseStats> v = synthetic();
  v.erase(v.begin());  // no launch case
  EXPECT_THROW(fit(v, {"x", "cpu", "", "", 1}, "d"), std::invalid_argument);
  std::vector<CaseStats> one_size{stat({KernelFamily::launch, Precision::fp32, 0, 0, 0, 0}, kLaunch),
                                  stat({KernelFamily::gemm, Precision::fp32, 64, 64, 64, 0}, 1e-5),
                                  stat({KernelFamily::copy, Precision::fp32, 0, 0, 0, 1024}, 1e-6),
                                  stat({KernelFamily::copy, Precision::fp32, 0, 0, 0, 4096}, 2e-6)};
  EXPECT_THROW(fit(one_size, {"x", "cpu", "", "", 1}, "d"), std::invalid_argument);
}

TEST(KernelCase, FlopsAndBytes) {
  const KernelCase g{KernelFamily::gemm, Precision::fp32, 2, 3, 4, 0};
  EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 2 * 3 * 4);             // 2mnk = 48
  EXPECT_DOUBLE_EQ(g.bytes(), 4.0 * (2 * 4 + 4 * 3 + 2 * 3));  // A, B, C once: 26 floats
  const KernelCase copy{KernelFamily::copy, Precision::fp64, 0, 0, 0, 10};
  EXPECT_DOUBLE_EQ(copy.bytes(), 160.0);                     // 10 doubles read, 10 written
  EXPECT_DOUBLE_EQ((KernelCase{KernelFamily::elementwise, Precision::fp32, 0, 0, 0, 10}.bytes()), 120.0);
  EXPECT_EQ(to_string(KernelFamily::layernorm), "layernorm");
}

}  // namespace
}  // namespace dlsim::calibration
