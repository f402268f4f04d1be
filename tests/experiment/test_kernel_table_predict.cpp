// Measured kernel tables predicted row by row (experiment/kernel_table_predict.hpp): the rows come
// back byte for byte with predicted_ms appended, each value the model's own, and bad rows are
// located by file, line and column. The tables are small and written here by hand, in the formats
// of ../shared/reference/kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/kernel_predict.hpp"
#include "experiment/kernel_table_predict.hpp"

namespace dlsim::experiment {
namespace {

using models::GemmLayout;
using models::Precision;

const SourceLocation kHere{"test", 0, 0};

KernelTablePrediction predict(const std::string& text, const std::string& name = "t.csv") {
  std::istringstream in(text);
  return predict_kernel_table(in, name);
}

std::string written(const KernelTablePrediction& p) {
  std::ostringstream out;
  write_predicted_table(out, p);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double gemm_seconds(const std::string& gpu, const models::GemmShape& shape, Precision precision) {
  const KernelDevice d = kernel_device(gpu, kHere, "gpu");
  return models::gemm_time(shape, precision, *d.spec, *d.profile->kernels.gemm_for(precision)).seconds;
}

// Every output line is its input line, then "," and a number: the predicted milliseconds.
void expect_appended(const std::string& input, const std::string& output, const std::vector<double>& seconds) {
  const auto in = lines_of(input);
  const auto out = lines_of(output);
  ASSERT_EQ(in.size(), out.size()) << output;
  EXPECT_EQ(out[0], in[0] + ",predicted_ms");
  std::size_t row = 0;
  for (std::size_t i = 1; i < in.size(); ++i) {
    if (in[i].empty()) {
      EXPECT_EQ(out[i], "");  // blank lines stay blank
      continue;
    }
    ASSERT_EQ(out[i].rfind(in[i] + ",", 0), 0u) << "line " << i + 1 << ": " << out[i];
    ASSERT_LT(row, seconds.size());
    const double ms = std::stod(out[i].substr(in[i].size() + 1));
    EXPECT_NEAR(ms, seconds[row] * 1e3, seconds[row] * 1e3 * 1e-5) << "line " << i + 1;
    ++row;
  }
  EXPECT_EQ(row, seconds.size());
}

const std::string kVidurGemm =
    "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\n"
    "A100,Llama-2-7b-hf,attn_pre_proj,1,2048,12288,4096,0,fp16,0.7,0.70,0.01\n"
    "\n"
    "H100,Llama-2-7b-hf,mlp_down_proj,2,512,4096,5504,0,fp16,0.05,0.0510,0.001\n"
    "A40,\"Llama-2-7b-hf\",attn_pre_proj,1,8,12288,4096,0,fp16,0.2,0.2,0.0\n";

TEST(KernelTablePredict, VidurGemmRowsComeBackWithTheModelsTime) {
  const KernelTablePrediction p = predict(kVidurGemm);
  EXPECT_EQ(p.format, calibration::TableFormat::vidur_gemm);
  EXPECT_TRUE(p.measured);
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_EQ(p.rows[1].line, 4);
  EXPECT_EQ(p.rows[1].device, "H100-SXM");
  EXPECT_EQ(p.rows[2].op, "attn_pre_proj");
  EXPECT_DOUBLE_EQ(p.rows[1].measured_s, 0.05e-3);
  const std::vector<double> expected = {gemm_seconds("A100", {2048, 12288, 4096, 1, GemmLayout::nt}, Precision::fp16),
                                        gemm_seconds("H100", {512, 4096, 5504, 1, GemmLayout::nt}, Precision::fp16),
                                        gemm_seconds("A40", {8, 12288, 4096, 1, GemmLayout::nt}, Precision::fp16)};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(p.rows[i].predicted_s, expected[i]);
  expect_appended(kVidurGemm, written(p), expected);

  const auto errors = errors_by_op(p);
  ASSERT_EQ(errors.size(), 3u);  // attn_pre_proj, mlp_down_proj, all
  EXPECT_EQ(errors[0].op, "attn_pre_proj");
  EXPECT_EQ(errors[0].cases, 2);
  EXPECT_EQ(errors[2].op, "all");
  EXPECT_EQ(errors[2].cases, 3);
  EXPECT_NEAR(errors[1].median_abs, std::abs(expected[1] / 0.05e-3 - 1), 1e-12);
  const std::string summary = prediction_summary(p);
  EXPECT_EQ(summary.rfind(
                "predicted 3 rows of t.csv (vidur GEMM); |predicted / measured - 1| median / p90: attn_pre_proj ", 0),
            0u)
      << summary;
  EXPECT_EQ(summary.find('\n'), std::string::npos);
}

TEST(KernelTablePredict, KeepsCarriageReturnsAndAMissingFinalNewline) {
  const std::string text =
      "gpu,source_model,op,m,n,k,dtype,median_ms\r\nA100,x,attn_post_proj,64,4096,4096,fp16,0.02\r\n"
      "A100,x,attn_post_proj,128,4096,4096,fp16,0.03";
  const KernelTablePrediction p = predict(text);
  const std::string out = written(p);
  char a[32], b[32];
  std::snprintf(a, sizeof a, "%.6g", p.rows[0].predicted_s * 1e3);
  std::snprintf(b, sizeof b, "%.6g", p.rows[1].predicted_s * 1e3);
  EXPECT_EQ(out,
            "gpu,source_model,op,m,n,k,dtype,median_ms,predicted_ms\r\nA100,x,attn_post_proj,64,4096,4096,fp16,0.02," +
                std::string(a) + "\r\nA100,x,attn_post_proj,128,4096,4096,fp16,0.03," + b);
}

TEST(KernelTablePredict, ElementwiseRowsByTheirKernelClass) {
  // E = 4096: RMSNorm moves 4 T E + 2 E bytes; SiLU-and-mul 6 bytes per output element.
  const std::string text =
      "gpu,source_model,op,tp,num_tokens,elements,bytes,dtype,median_ms,mean_ms,std_ms,n_runs\n"
      "A100,Llama-2-7b-hf,input_layernorm,0,1024,4194304,16785408,fp16,0.02,0.02,0,4\n"
      "A100,Llama-2-7b-hf,mlp_act,1,1024,11272192,67633152,fp16,0.05,0.05,0,1\n";
  const KernelTablePrediction p = predict(text);
  EXPECT_EQ(p.format, calibration::TableFormat::vidur_elementwise);
  const KernelDevice d = kernel_device("A100", kHere, "gpu");
  const auto& memory = d.profile->kernels.memory;
  const std::vector<double> expected = {
      models::memory_kernel_time(models::MemoryKernel::rms_norm, 16785408, memory, d.spec->memory_bandwidth,
                                 d.profile->memory_efficiency),
      models::memory_kernel_time(models::MemoryKernel::gated_act, 67633152, memory, d.spec->memory_bandwidth,
                                 d.profile->memory_efficiency)};
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(p.rows[0].predicted_s, expected[0]);
  EXPECT_DOUBLE_EQ(p.rows[1].predicted_s, expected[1]);
  expect_appended(text, written(p), expected);
}

// DeepBench's column-major M x N with transposes is row-major n x m with the layout swapped
// (calibration/kernel_tables.hpp): a_transpose T, b_transpose N is NT.
TEST(KernelTablePredict, DeepBenchGemmOnV100) {
  const std::string text =
      "gpu,precision,source,m,n,k,a_transpose,b_transpose,time_ms,tflops_sheet,note\n"
      "V100,fp16_mixed,DeepSpeech,1760,128,1760,T,N,0.05,15.9,\n";
  const KernelTablePrediction p = predict(text);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].device, "V100-16GB");
  EXPECT_EQ(p.rows[0].op, "gemm");
  EXPECT_DOUBLE_EQ(p.rows[0].predicted_s, gemm_seconds("V100", {128, 1760, 1760, 1, GemmLayout::nt}, Precision::fp16));
}

TEST(KernelTablePredict, ShapesWithoutMeasuredTimes) {
  const std::string text = "gpu,source_model,op,m,n,k,dtype\nH100,mine,proj,4096,4096,4096,bf16\n";
  const KernelTablePrediction p = predict(text);
  EXPECT_FALSE(p.measured);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].measured_s, 0);
  const double expected = gemm_seconds("H100", {4096, 4096, 4096, 1, GemmLayout::nt}, Precision::bf16);
  expect_appended(text, written(p), {expected});
  EXPECT_TRUE(errors_by_op(p).empty());
  EXPECT_NE(prediction_summary(p).find("no measured times"), std::string::npos);
}

// The error of a bad table: its what(), file, line and column name.
struct TableError {
  std::string what, file, key;
  int line = 0;
};
TableError error_of(const std::string& text) {
  try {
    predict(text);
  } catch (const ConfigError& e) {
    return {e.what(), e.where().file, e.key_path(), e.where().line};
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

TEST(KernelTablePredict, BadRowsAreLocated) {
  const std::string header = "gpu,source_model,op,m,n,k,dtype,median_ms\n";
  const std::string good = "A100,x,attn_post_proj,64,4096,4096,fp16,0.02\n";
  TableError e = error_of(header + good + "X900,x,attn_post_proj,64,4096,4096,fp16,0.02\n");
  EXPECT_EQ(e.file, "t.csv");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.key, "gpu");
  EXPECT_EQ(e.what.rfind("t.csv:3: gpu: unknown device or GPU label 'X900'", 0), 0u) << e.what;

  e = error_of(header + good + good + "A100,x,attn_post_proj,64,4096,x4096,fp16,0.02\n");
  EXPECT_EQ(e.what, "t.csv:4: k: 'x4096' is not a number");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.key, "k");

  e = error_of(
      "gpu,source_model,op,num_tokens,elements,bytes,dtype,median_ms\nA100,x,swiglu,8,32768,196608,fp16,0.01\n");
  EXPECT_EQ(e.what.rfind("t.csv:2: op: unknown element-wise op 'swiglu'", 0), 0u) << e.what;

  e = error_of(header + "TPU-v4,x,attn_post_proj,64,4096,4096,fp16,0.02\n");
  EXPECT_NE(e.what.find("t.csv:2: gpu: TPU-v4 has no kernel profile"), std::string::npos) << e.what;

  e = error_of("gpu,source_model,op,m,n,k,dtype,median_ms,predicted_ms\n" + good);
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.key, "predicted_ms");

  e = error_of("gpu,model,m\nA100,x,1\n");
  EXPECT_EQ(e.what.rfind("t.csv:1: unknown table", 0), 0u) << e.what;

  e = error_of(
      "gpu,precision,source,w,h,c,n,k,s_filter_w,r_filter_h,pad_w,pad_h,stride_w,stride_h,fwd_ms,bwd_inputs_ms,"
      "bwd_params_ms,fwd_algorithm\nV100,fp32,x,7,7,8,4,8,3,3,1,1,1,1,0.1,0.1,0.1,IMPLICIT_GEMM\n");
  EXPECT_NE(e.what.find("convolution"), std::string::npos) << e.what;
}

}  // namespace
}  // namespace dlsim::experiment
