// CI check of the calibration pipeline: `dlsim calibrate --backend cpu --quick` writes a profile,
// the profile is sane, `--validate` compares held-out kernels, and the CPU scenario runs on the
// profile. Structure and sanity only, never a speed goal (CI machines differ and are shared).
#include <gtest/gtest.h>

#include <regex>

#include "cli_harness.hpp"
#include "experiment/profile_yaml.hpp"

namespace dlsim::cli_test {
namespace {

using models::Precision;

TEST(CalibrateCommand, CpuProfileIsWrittenValidatedAndUsedByAScenario) {
  const auto dir = fresh_folder("calibrate");
  // --max-spread 2: CI runners are shared; the refusal itself is tested in test_calibration.
  const CommandResult c = run_dlsim(dir, "calibrate --backend cpu --quick --max-spread 2 --out profiles/cpu.yaml");
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("gemm fp32"), std::string::npos);               // summary table
  EXPECT_NE(c.out.find("fit error per family"), std::string::npos);
  EXPECT_NE(c.err.find("] 46/46"), std::string::npos) << c.err;        // progress bar reached the end
  const experiment::ProfileDocument doc = experiment::read_profile((dir / "profiles" / "cpu.yaml").string());  // validates
  const auto& cal = doc.calibration;
  EXPECT_EQ(cal.info.backend, "cpu");
  // fp64 moves twice the bytes per FLOP and packs half the lanes per vector: below fp32.
  EXPECT_GT(cal.spec.peak(Precision::fp32), cal.spec.peak(Precision::fp64));
  EXPECT_GT(cal.spec.peak(Precision::fp64), 0);
  EXPECT_FALSE(cal.spec.supports(Precision::fp16));
  EXPECT_GT(cal.spec.memory_bandwidth, 0);
  EXPECT_GT(cal.profile.kernel_launch_overhead_s, 0);
  EXPECT_LT(cal.profile.kernel_launch_overhead_s, 1e-3);               // an empty call, not a millisecond
  for (const auto& curve : {cal.profile.matmul_curve[1], cal.profile.matmul_curve[0], cal.profile.memory_curve}) {
    ASSERT_FALSE(curve.empty());
    for (double e : curve.efficiency) {
      EXPECT_GT(e, 0);
      EXPECT_LE(e, 1);
    }
  }
  // Quick grid: GEMM sides 16..256 -> 2 x 16^3 = 8192 to 2 x 256^3 = 33554432 FLOPs.
  EXPECT_EQ(cal.profile.matmul_curve[1].size.front(), 8192);
  EXPECT_EQ(cal.profile.matmul_curve[1].size.back(), 33554432);

  const CommandResult v = run_dlsim(dir, "calibrate --validate profiles/cpu.yaml --max-spread 2");
  ASSERT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("held-out cases"), std::string::npos);
  EXPECT_NE(v.out.find("gemm fp32        384x384x384"), std::string::npos) << v.out;

  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("cpu-calibrated.yaml") + "' --set cluster.profile=" +
                                             (dir / "profiles" / "cpu.yaml").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("on local/cpu (1 x local-cpu per node)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device profile " + (dir / "profiles" / "cpu.yaml").string() + ": measured on local-cpu"), std::string::npos) << r.out;
  std::smatch m;
  // Any unit: a sanitizer build measures (and so simulates) a much slower CPU.
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("iteration on 1 nodes: ([0-9.e+-]+) (us|ms|s|min|h|d) "))) << r.out;
  EXPECT_GT(std::stod(m[1].str()), 0);
}

TEST(CalibrateCommand, CudaWithoutCudaOrDeviceIsAClearError) {
  const auto dir = fresh_folder("calibrate-cuda");
  const CommandResult c = run_dlsim(dir, "calibrate --backend cuda --out p.yaml");
  if (c.exit_code == 0) GTEST_SKIP() << "a CUDA device is present: the CUDA backend ran";
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("CUDA"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("--backend cpu"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "p.yaml"));
}

TEST(CalibrateCommand, BadOptions) {
  const auto dir = fresh_folder("calibrate-bad");
  EXPECT_EQ(run_dlsim(dir, "calibrate --backend tpu --out p.yaml").exit_code, 2);
  const CommandResult no_out = run_dlsim(dir, "calibrate --backend cpu");
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_NE(no_out.err.find("--out"), std::string::npos) << no_out.err;
  const CommandResult gpu_name = run_dlsim(dir, "calibrate --backend cpu --device H100-SXM --out p.yaml --quick");
  EXPECT_EQ(gpu_name.exit_code, 2);
  EXPECT_NE(gpu_name.err.find("--device"), std::string::npos) << gpu_name.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "p.yaml"));  // nothing half-written
}

}  // namespace
}  // namespace dlsim::cli_test
