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
