// Runner statistics (median, p10/p90, spread), re-measuring unstable cases, the refusal of an
// unstable family, and the CPU backend's kernels (outputs checked, times positive).
#include <gtest/gtest.h>

#include <algorithm>

#include "calibration/cpu_backend.hpp"
#include "calibration/runner.hpp"

namespace dlsim::calibration {
namespace {

using models::Precision;

TEST(Runner, MedianAndSpread) {
  Measurement m;
  m.output_ok = true;
  m.times_s = {7e-3, 1e-3, 10e-3, 4e-3, 2e-3, 9e-3, 3e-3, 8e-3, 6e-3, 5e-3};
  const CaseStats s = summarize(m);
  // Sorted 1..10 ms: median at position 4.5 -> 5.5 ms; p10 at 0.9 -> 1.9 ms; p90 at 8.1 -> 9.1 ms.
  EXPECT_NEAR(s.median_s, 5.5e-3, 1e-15);
  EXPECT_NEAR(s.p10_s, 1.9e-3, 1e-15);
  EXPECT_NEAR(s.p90_s, 9.1e-3, 1e-15);
  EXPECT_NEAR(s.spread, 7.2 / 5.5, 1e-12);
  EXPECT_TRUE(s.ok);
  Measurement bad;
  bad.times_s = {1.0};
  bad.output_ok = false;
  EXPECT_FALSE(summarize(bad).ok);
}

// A backend whose gemm fp32 times are noisy for its first `noisy_calls` measure() calls.
class FakeBackend : public Backend {
 public:
  explicit FakeBackend(int noisy_calls) : noisy_calls_(noisy_calls) {}
  DeviceInfo info() const override { return {"fake", "cpu", "", "", 1}; }
  bool available() const override { return true; }
  bool supports(const KernelCase&) const override { return true; }
  std::vector<Measurement> measure(const std::vector<KernelCase>& cases, const RunOptions& o, const Progress&) override {
    const bool noisy = calls_++ < noisy_calls_;
    std::vector<Measurement> out;
    for (const KernelCase& c : cases) {
      Measurement m{c, {}, true, ""};
      for (int i = 0; i < o.repeats; ++i) {
        // Noisy: alternating 1 and 3 ms (spread (3 - 1) / 2 = 1 > 0.5); quiet: 1 ms flat.
        m.times_s.push_back(noisy && c.family == KernelFamily::gemm ? (i % 2 ? 3e-3 : 1e-3) : 1e-3);
      }
      out.push_back(m);
    }
    return out;
  }
  int calls_ = 0;

 private:
  int noisy_calls_;
};

std::vector<KernelCase> small_grid() {
  return {{KernelFamily::gemm, Precision::fp32, 16, 16, 16, 0},
          {KernelFamily::gemm, Precision::fp32, 32, 32, 32, 0},
          {KernelFamily::copy, Precision::fp32, 0, 0, 0, 1024}};
}

TEST(Runner, RemeasuresAnUnstableCase) {
  FakeBackend b(1);  // noisy the first time only
  RunnerOptions o;
  o.run.repeats = 10;
  const auto stats = run_cases(b, small_grid(), o, nullptr);
  EXPECT_EQ(b.calls_, 2);  // one pass, one re-measure of the two gemm cases
  EXPECT_TRUE(std::all_of(stats.begin(), stats.end(), [](const CaseStats& s) { return s.stable; }));
  EXPECT_EQ(stats[0].attempts, 2);
  EXPECT_EQ(stats[2].attempts, 1);
}

TEST(Runner, RefusesAFamilyThatStaysUnstable) {
  FakeBackend b(100);
  RunnerOptions o;
  o.run.repeats = 10;
  o.remeasures = 3;
  try {
    run_cases(b, small_grid(), o, nullptr);
    FAIL() << "expected UnstableError";
  } catch (const UnstableError& e) {
    EXPECT_NE(std::string(e.what()).find("gemm fp32 (2 of 2 cases)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no profile written"), std::string::npos);
  }
  EXPECT_EQ(b.calls_, 4);  // first pass + 3 re-measures
  // A looser limit accepts the same data: spread 1 <= 1.5.
  FakeBackend lenient(100);
  o.max_spread = 1.5;
  EXPECT_NO_THROW(run_cases(lenient, small_grid(), o, nullptr));
}

TEST(CpuBackend, MeasuresEveryCpuKernelWithCheckedOutputs) {
  auto backend = make_cpu_backend();
  ASSERT_TRUE(backend->available());
  std::vector<KernelCase> cases = {
      {KernelFamily::launch, Precision::fp32, 0, 0, 0, 0},           {KernelFamily::gemm, Precision::fp32, 33, 17, 65, 0},
      {KernelFamily::gemm, Precision::fp64, 24, 24, 24, 0},          {KernelFamily::gemm_naive, Precision::fp32, 20, 30, 40, 0},
      {KernelFamily::copy, Precision::fp32, 0, 0, 0, 1000},          {KernelFamily::read, Precision::fp32, 0, 0, 0, 1001},
      {KernelFamily::write, Precision::fp32, 0, 0, 0, 1002},         {KernelFamily::elementwise, Precision::fp32, 0, 0, 0, 1003},
      {KernelFamily::activation, Precision::fp32, 0, 0, 0, 1004},    {KernelFamily::reduction, Precision::fp32, 0, 0, 0, 1005},
      {KernelFamily::softmax, Precision::fp32, 7, 300, 0, 0},        {KernelFamily::layernorm, Precision::fp32, 7, 300, 0, 0},
      {KernelFamily::host_to_device, Precision::fp32, 0, 0, 0, 1024}};
  RunOptions o;
  o.repeats = 3;
  o.warmup = 1;
  std::size_t progress_calls = 0;
  const auto ms = backend->measure(cases, o, [&](std::size_t, std::size_t, const KernelCase&) { ++progress_calls; });
  ASSERT_EQ(ms.size(), cases.size());
  EXPECT_EQ(progress_calls, cases.size() + 1);
  for (std::size_t i = 0; i + 1 < ms.size(); ++i) {
    EXPECT_TRUE(ms[i].output_ok) << to_string(cases[i].family) << ": " << ms[i].note;
    ASSERT_EQ(ms[i].times_s.size(), 3u);
    for (double t : ms[i].times_s) EXPECT_GT(t, 0);
  }
  // No host/device copies on a CPU: not measured, with a reason.
  EXPECT_TRUE(ms.back().times_s.empty());
  EXPECT_FALSE(ms.back().note.empty());
}

void expect_held_out_unfitted(const std::vector<KernelCase>& full, const std::vector<KernelCase>& held) {
  for (const KernelCase& h : held) {
    if (h.family == KernelFamily::launch) continue;
    for (const KernelCase& f : full) {
      const bool same = f.family == h.family && f.precision == h.precision && f.m == h.m && f.n == h.n && f.k == h.k && f.elements == h.elements;
      EXPECT_FALSE(same) << family_label(h) << " " << shape_label(h);
    }
  }
}

TEST(Grids, QuickIsSmallerAndHeldOutSizesAreNotFitted) {
  const auto full = case_grid(Grid::full), quick = case_grid(Grid::quick);
  EXPECT_LT(quick.size(), full.size());
  expect_held_out_unfitted(full, case_grid(Grid::held_out));
}

TEST(Grids, TheGpuGridCoversEveryGemmPrecisionAndHostCopies) {
  const auto full = gpu_case_grid(Grid::full);
  for (models::Precision p : {models::Precision::fp64, models::Precision::fp32, models::Precision::tf32, models::Precision::fp16,
                              models::Precision::bf16, models::Precision::fp8}) {
    // Square sides 64 .. 8192: 8 sizes per precision, from launch-bound to compute-bound; FP16 and
    // BF16 also the LLM-layer shapes of the kernel model (16 layer shapes x 16 token counts
    // forward, and x 5 training token counts for the data and the weight gradient).
    const bool llm = p == models::Precision::fp16 || p == models::Precision::bf16;
    EXPECT_EQ(std::count_if(full.begin(), full.end(), [p](const KernelCase& c) { return c.family == KernelFamily::gemm && c.precision == p; }),
              llm ? 8 + 16 * 16 + 16 * 5 * 2 : 8)
        << models::to_string(p);
  }
  for (KernelFamily f : {KernelFamily::host_to_device, KernelFamily::device_to_host, KernelFamily::launch, KernelFamily::softmax}) {
    EXPECT_TRUE(std::any_of(full.begin(), full.end(), [f](const KernelCase& c) { return c.family == f; })) << to_string(f);
  }
  // Every FP8 GEMM side is a multiple of 16 (cublasLt's requirement).
  for (const KernelCase& c : full) {
    if (c.precision == models::Precision::fp8) EXPECT_EQ(c.m % 16, 0);
  }
  EXPECT_LT(gpu_case_grid(Grid::quick).size(), full.size());
  expect_held_out_unfitted(full, gpu_case_grid(Grid::held_out));
}

}  // namespace
}  // namespace dlsim::calibration
