// `dlsim kernel`: one GEMM or memory-bound kernel printed, a measured table predicted into a new
// file, and bad input answered with exit 2, a located message and no file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"
#include "experiment/config_error.hpp"
#include "experiment/kernel_predict.hpp"
#include "experiment/units.hpp"

namespace dlsim::cli_test {
namespace {

const experiment::SourceLocation kHere{"test", 0, 0};

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(KernelCommand, OneGemmPrintsTheModelsDecision) {
  const auto dir = fresh_folder("kernel-gemm");
  const CommandResult r = run_dlsim(dir, "kernel --gpu A100 --gemm 4096x4096x4096");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const experiment::KernelDevice d = experiment::kernel_device("A100-80GB", kHere, "--device");
  const experiment::GemmPrediction p =
      experiment::predict_gemm(d, {4096, 4096, 4096, 1, models::GemmLayout::nt}, models::Precision::fp16, kHere);
  const std::string tile = "tile " + std::to_string(p.estimate.tile_m) + " x " + std::to_string(p.estimate.tile_n) +
                           ", split-K " + std::to_string(p.estimate.split_k);
  for (const std::string& expected :
       {std::string("GEMM 4096 x 4096 x 4096 (m x n x k), fp16, layout nt, batch 1, on A100-80GB"),
        "predicted   " + experiment::format_duration(p.estimate.seconds) + ", ", tile, std::string("over 108 SMs"),
        std::string("compute-bound"), std::string("TFLOP/s ("),
        experiment::format_duration(p.interval.low_s) + " .. " + experiment::format_duration(p.interval.high_s)}) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << r.out;
  }
  // The catalog name and the table label are the same device.
  EXPECT_EQ(
      run_dlsim(dir, "kernel --device A100-80GB --gemm 4096x4096x4096 --precision fp16 --layout nt --batch 1").out,
      r.out);
  const CommandResult b =
      run_dlsim(dir, "kernel --device H100-SXM --gemm 8x12288x4096 --precision bf16 --layout tn --batch 4");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("GEMM 8 x 12288 x 4096 (m x n x k), bf16, layout tn, batch 4, on H100-SXM"), std::string::npos)
      << b.out;
}

// GPT-2's unpadded head (50,257 columns: 2-byte rows in bf16) on Hopper pays the measured
// alignment slowdown, and says so; the padded width (50,304) does not, and an A100 has none.
TEST(KernelCommand, AMisalignedGemmShowsItsAlignmentSlowdown) {
  const auto dir = fresh_folder("kernel-alignment");
  const CommandResult odd = run_dlsim(dir, "kernel --device H100-SXM --gemm 8192x50257x768 --precision bf16");
  ASSERT_EQ(odd.exit_code, 0) << odd.err;
  EXPECT_NE(odd.out.find("alignment   leading dimensions aligned to 2 B, not 16: x "), std::string::npos) << odd.out;
  const CommandResult padded = run_dlsim(dir, "kernel --device H100-SXM --gemm 8192x50304x768 --precision bf16");
  EXPECT_EQ(padded.out.find("alignment"), std::string::npos) << padded.out;
  const experiment::KernelDevice h100 = experiment::kernel_device("H100-SXM", kHere, "--device");
  const double slow = experiment::predict_gemm(h100, {8192, 50257, 768}, models::Precision::bf16, kHere).estimate.seconds;
  const double fast = experiment::predict_gemm(h100, {8192, 50304, 768}, models::Precision::bf16, kHere).estimate.seconds;
  EXPECT_GT(slow, 3 * fast);
  const CommandResult a100 = run_dlsim(dir, "kernel --device A100-80GB --gemm 8192x50257x768 --precision bf16");
  EXPECT_NE(a100.out.find("no slowdown of its own before Hopper"), std::string::npos) << a100.out;
}

TEST(KernelCommand, OneMemoryKernel) {
  const auto dir = fresh_folder("kernel-memory");
  const CommandResult r = run_dlsim(dir, "kernel --gpu H100 --memory rms_norm --bytes 64MiB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("memory-bound kernel rms_norm moving 64 MiB (67108864 B), on H100-SXM"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("error band"), std::string::npos) << r.out;
}

TEST(KernelCommand, PredictsATableIntoANewFile) {
  const auto dir = fresh_folder("kernel-table");
  const std::string table =
      "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\n"
      "A100,Llama-2-7b-hf,attn_pre_proj,1,2048,12288,4096,0,fp16,0.7,0.70,0.01\n"
      "A40,Llama-2-7b-hf,mlp_down_proj,2,512,4096,5504,0,fp16,0.2,0.21,0.002\n";
  write(dir / "t.csv", table);
  const CommandResult r = run_dlsim(dir, "kernel --input t.csv --output out/predicted.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out.rfind("predicted 2 rows of t.csv (vidur GEMM); |predicted / measured - 1| median / p90: attn_pre_proj ", 0),
      0u)
      << r.out;
  EXPECT_NE(r.out.find("; wrote out/predicted.csv\n"), std::string::npos) << r.out;
  const std::string out = slurp(dir / "out" / "predicted.csv");
  const std::size_t first = out.find('\n');
  EXPECT_EQ(out.substr(0, first), "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms,predicted_ms");
  const experiment::KernelDevice d = experiment::kernel_device("A100", kHere, "gpu");
  const double s = models::gemm_time({2048, 12288, 4096, 1, models::GemmLayout::nt}, models::Precision::fp16, *d.spec,
                                     *d.profile->kernels.gemm_for(models::Precision::fp16))
                       .seconds;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.6g", s * 1e3);
  EXPECT_EQ(out.substr(first + 1, out.find('\n', first + 1) - first),
            "A100,Llama-2-7b-hf,attn_pre_proj,1,2048,12288,4096,0,fp16,0.7,0.70,0.01," + std::string(ms) + "\n");
}

TEST(KernelCommand, BadTablesExitTwoAndWriteNothing) {
  const auto dir = fresh_folder("kernel-bad");
  const std::string header = "gpu,source_model,op,m,n,k,dtype,median_ms\n";
  const std::string good = "A100,x,attn_post_proj,64,4096,4096,fp16,0.02\n";
  const std::pair<std::string, std::string> cases[] = {
      {header + good + "X900,x,attn_post_proj,64,4096,4096,fp16,0.02\n",
       "error: t.csv:3: gpu: unknown device or GPU label 'X900'"},
      {header + good + good + "A100,x,attn_post_proj,64,4096,4o96,fp16,0.02\n",
       "error: t.csv:4: k: '4o96' is not a number\n"},
      {"gpu,source_model,op,num_tokens,elements,bytes,dtype,median_ms\nA100,x,swiglu,8,32768,196608,fp16,0.01\n",
       "error: t.csv:2: op: unknown element-wise op 'swiglu'"}};
  for (const auto& [text, message] : cases) {
    write(dir / "t.csv", text);
    const CommandResult r = run_dlsim(dir, "kernel --input t.csv --output out.csv");
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(r.err.rfind(message, 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.csv")) << text;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(KernelCommand, BadUseExitsTwo) {
  const auto dir = fresh_folder("kernel-usage");
  const std::pair<const char*, const char*> cases[] = {
      {"kernel --device TPU-v4 --gemm 128x128x128", "TPU-v4 has no kernel profile"},
      {"kernel --device A100-80GB", "give one of --gemm"},
      {"kernel --gemm 128x128x128", "--device: name the device"},
      {"kernel --device A100-80GB --gpu A100 --gemm 128x128x128", "--device: name the device"},
      {"kernel --device A100-80GB --gemm 128x128", "--gemm: expected m x n x k"},
      {"kernel --device A100-80GB --gemm 8x8x8 --layout tt", "--layout: unknown layout 'tt'"},
      {"kernel --device A100-80GB --gemm 8x8x8 --precision fp12", "--precision: unknown precision 'fp12'"},
      {"kernel --device A100-80GB --memory rms_norm", "--bytes: missing"},
      {"kernel --device A100-80GB --memory rmsnorm --bytes 1MiB", "did you mean 'rms_norm'"},
      {"kernel --device A100-80GB --memory stream --bytes 1MiB --precision fp16", "--precision, --layout and --batch"},
      {"kernel --input t.csv", "--output: missing"},
      {"kernel --input t.csv --output o.csv --gpu A100", "takes no --device or --gpu"},
      {"kernel --device A100-80GB --gemm 8x8x8 --input t.csv", "give one of"},
      {"kernel --device A100-80GB --gemm 8x8x8 --output o.csv", "--output: goes with --input"},
      {"kernel scenario.yaml", "dlsim kernel: takes no positional argument ('scenario.yaml')"},
      {"kernel --input t.csv --output ./t.csv", "--output: is the input table"}};
  const std::string table = "gpu,source_model,op,m,n,k,dtype,median_ms\nA100,x,attn_post_proj,64,4096,4096,fp16,0.02\n";
  write(dir / "t.csv", table);
  for (const auto& [arguments, message] : cases) {
    const CommandResult r = run_dlsim(dir, arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments;
    EXPECT_NE(r.err.find(message), std::string::npos) << arguments << ":\n" << r.err;
  }
  EXPECT_EQ(slurp(dir / "t.csv"), table);  // the measured table is never overwritten
}

}  // namespace
}  // namespace dlsim::cli_test
