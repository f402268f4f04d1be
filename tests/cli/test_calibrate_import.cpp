// `dlsim calibrate --import`: measured kernel tables (here small synthetic ones in vidur's
// columns) become a profile with a kernel model and its held-out errors; bad input exits 2 and
// writes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

// GEMMs of two "models" timed as 2mnk at 200 TFLOP/s plus 5 us, and streams at 1.5 TB/s plus 3 us.
void write_tables(const std::filesystem::path& dir) {
  std::ofstream gemm(dir / "gemm.csv");
  gemm << "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\n";
  for (const char* model : {"a", "b"}) {
    const double n = model[0] == 'a' ? 4096 : 5120;
    for (double m = 1; m <= 4096; m *= 2) {
      for (double k : {n, 3 * n}) gemm << "A100," << model << ",op,1," << m << "," << n << "," << k << ",0,fp16," << (5e-6 + 2 * m * n * k / 200e12) * 1e3 << ",0,0\n";
    }
  }
  std::ofstream ew(dir / "ew.csv");
  ew << "gpu,source_model,op,tp,num_tokens,elements,bytes,dtype,median_ms,mean_ms,std_ms,n_runs\n";
  for (const char* model : {"a", "b"}) {
    for (double t = 1; t <= 4096; t *= 2) {
      const double e = t * (model[0] == 'a' ? 4096 : 5120), bytes = 6 * e;
      ew << "A100," << model << ",add,0," << t << "," << e << "," << bytes << ",fp16," << (3e-6 + bytes / 1.5e12) * 1e3 << ",0,0,1\n";
    }
  }
}

TEST(CalibrateImport, FitsTablesIntoAProfileWithHeldOutErrors) {
  const auto dir = fresh_folder("import");
  write_tables(dir);
  const CommandResult r = run_dlsim(dir, "calibrate --import gemm.csv --import ew.csv --gpu A100 --out p.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("fitting the kernel model of A100-80GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm fp16, m >= 64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory stream"), std::string::npos) << r.out;
  const std::string profile = slurp(dir / "p.yaml");
  EXPECT_NE(profile.find("kernel_model:"), std::string::npos);
  EXPECT_NE(profile.find("backend: import"), std::string::npos);
  EXPECT_NE(profile.find("held_out_errors:"), std::string::npos);
  // A scenario on an A100 instance uses it through cluster.profile.
  std::ofstream(dir / "s.yaml") << "cluster: {instance: azure/Standard_ND96amsr_A100_v4, nodes: 1, profile: p.yaml}\n"
                                   "workload: {model: gpt2, precision: fp16, batch: {per_device: 4}, iterations: 10}\n";
  const CommandResult run = run_dlsim(dir, "run s.yaml --quiet --output s.h5");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// The reference (dlsim's own tables carry a layout column) measured the A100-80GB's three
// layouts: its data gradients at 1.2x and weight gradients at 1.5x the forward time of the same
// work. The fit on forward rows alone takes those ratios for its NN and TN factors.
TEST(CalibrateImport, ALayoutReferenceSetsTheFactorsOfLayoutsTheTablesLack) {
  const auto dir = fresh_folder("import-layout");
  write_tables(dir);
  std::ofstream ref(dir / "ref.csv");
  ref << "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms,layout\n";
  for (const auto& [layout, factor] : {std::pair{"NT", 1.0}, std::pair{"NN", 1.2}, std::pair{"TN", 1.5}}) {
    for (double m = 64; m <= 8192; m *= 2) {
      ref << "A100-80GB,ref,op,1," << m << ",4096,4096,0,fp16," << factor * (5e-6 + 2 * m * 4096 * 4096 / 200e12) * 1e3
          << ",0,0," << layout << "\n";
    }
  }
  ref.close();
  const CommandResult r =
      run_dlsim(dir, "calibrate --import gemm.csv --gpu A100 --layout-reference ref.csv --out p.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("layout reference: gemm fp16 nn: factor x 1.2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layout reference: gemm fp16 tn: factor x 1.5"), std::string::npos) << r.out;
  EXPECT_NE(slurp(dir / "p.yaml").find("layout factors relative to the best-measured layout from ref.csv"), std::string::npos);
  // Without --import, or with a reference of another device: exit 2, nothing written.
  std::filesystem::remove(dir / "p.yaml");
  const CommandResult alone = run_dlsim(dir, "calibrate --backend cpu --quick --layout-reference ref.csv --out p.yaml");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--layout-reference goes with --import"), std::string::npos) << alone.err;
  std::ofstream(dir / "other.csv") << "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms,layout\n"
                                      "V100,x,op,1,64,64,64,0,fp16,0.01,0,0,TN\n";
  const CommandResult other = run_dlsim(dir, "calibrate --import gemm.csv --gpu A100 --layout-reference other.csv --out p.yaml");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("other.csv"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("no GEMM row is for A100-80GB"), std::string::npos) << other.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "p.yaml"));
}

TEST(CalibrateImport, BadInputExitsTwoAndWritesNothing) {
  const auto dir = fresh_folder("import-bad");
  write_tables(dir);
  const CommandResult gpu = run_dlsim(dir, "calibrate --import gemm.csv --gpu H100 --out p.yaml");
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.err.find("no row of the tables is for GPU 'H100'"), std::string::npos) << gpu.err;
  std::ofstream(dir / "bad.csv") << "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\nA100,a,op,1,x,1,1,0,fp16,1,1,0\n";
  const CommandResult bad = run_dlsim(dir, "calibrate --import bad.csv --out p.yaml");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.csv:2: m: 'x' is not a number"), std::string::npos) << bad.err;
  const CommandResult both = run_dlsim(dir, "calibrate --import gemm.csv --backend cpu --out p.yaml");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "p.yaml"));
}

}  // namespace
}  // namespace dlsim::cli_test
