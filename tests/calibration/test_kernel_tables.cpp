// Reading the measured kernel tables (calibration/kernel_tables.hpp) in each format, from small
// hand-written tables in the formats of ../shared/reference/kernels (never the data files), and
// the tables a CUDA calibration writes (kernel_cases.hpp).
#include <gtest/gtest.h>

#include <sstream>

#include "calibration/kernel_cases.hpp"
#include "calibration/kernel_tables.hpp"

namespace dlsim::calibration {
namespace {

KernelTables read(const std::string& text, TableFormat* format = nullptr) {
  KernelTables t;
  std::istringstream in(text);
  const TableFormat f = read_kernel_table(in, "t.csv", t);
  if (format != nullptr) *format = f;
  return t;
}

std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(KernelTables, VidurGemmRowsAreLinearForwardsInMilliseconds) {
  TableFormat f{};
  const KernelTables t = read(
      "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\n"
      "A100,Llama-2-7b-hf,attn_pre_proj,1,128,12288,4096,0,fp16,0.25,0.26,0.01\n",
      &f);
  EXPECT_EQ(f, TableFormat::vidur_gemm);
  ASSERT_EQ(t.gemm.size(), 1u);
  const MeasuredGemm& g = t.gemm[0];
  EXPECT_EQ(g.gpu, "A100");
  EXPECT_EQ(g.source, "Llama-2-7b-hf");
  EXPECT_EQ(g.shape.m, 128);
  EXPECT_EQ(g.shape.n, 12288);
  EXPECT_EQ(g.shape.k, 4096);
  EXPECT_EQ(g.shape.layout, models::GemmLayout::nt);
  EXPECT_EQ(g.precision, models::Precision::fp16);
  EXPECT_DOUBLE_EQ(g.seconds, 0.25e-3);
  EXPECT_EQ(g.line, 2);
}

TEST(KernelTables, VidurElementwiseRowsGetTheirKernelClassFromTheirTraffic) {
  // E = 4096 per token, 16 tokens: RMSNorm moves 4TE + 2E bytes, LayerNorm 4TE + 4E; the gated
  // activation 6 bytes per output element, GELU 4.
  const KernelTables t = read(
      "gpu,source_model,op,tp,num_tokens,elements,bytes,dtype,median_ms,mean_ms,std_ms,n_runs\n"
      "A100,m,input_layernorm,0,16,65536,270336,fp16,0.005,0.005,0,4\n"
      "A100,phi,input_layernorm,1,16,65536,278528,fp16,0.006,0.006,0,1\n"
      "A100,m,mlp_act,1,16,176128,1056768,fp16,0.007,0.007,0,1\n"
      "A100,phi,mlp_act,1,16,163840,655360,fp16,0.007,0.007,0,1\n"
      "A100,m,add,0,16,65536,393216,fp16,0.004,0.004,0,4\n"
      "A100,m,attn_rope,1,16,131072,524416,fp16,0.004,0.004,0,1\n"
      "A100,m,emb,0,16,65536,262272,fp16,0.004,0.004,0,4\n"
      "H100,dlsim-calibrate,softmax,1,16,65536,262144,fp16,0.004,0.004,0,1\n");
  ASSERT_EQ(t.memory.size(), 8u);
  using K = models::MemoryKernel;
  const K expected[] = {K::rms_norm, K::layer_norm, K::gated_act, K::activation, K::stream, K::rotary, K::embedding, K::softmax};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(t.memory[i].kernel, expected[i]) << i;
  EXPECT_DOUBLE_EQ(t.memory[0].bytes, 270336);
}

TEST(KernelTables, DeepBenchGemmsAreColumnMajorCalls) {
  // cuBLAS C[M x N] = op(A) op(B) column-major is C^T[N x M] row-major: m and n swap, and the
  // transposes map NN -> NN, TN -> NT, NT -> TN.
  const KernelTables t = read(
      "gpu,precision,source,m,n,k,a_transpose,b_transpose,time_ms,tflops_sheet,note\n"
      "V100,fp16_mixed,DeepSpeech,1760,16,1760,N,N,0.03,3.3,\n"
      "V100,fp32,DeepSpeech,512,24000,2560,T,N,4.6,13.7,\n"
      "P100,fp16_pseudo,,2560,64,2560,N,T,0.1,8.4,\n");
  ASSERT_EQ(t.gemm.size(), 3u);
  EXPECT_EQ(t.gemm[0].shape.m, 16);
  EXPECT_EQ(t.gemm[0].shape.n, 1760);
  EXPECT_EQ(t.gemm[0].shape.layout, models::GemmLayout::nn);
  EXPECT_EQ(t.gemm[1].shape.layout, models::GemmLayout::nt);
  EXPECT_EQ(t.gemm[1].precision, models::Precision::fp32);
  EXPECT_EQ(t.gemm[2].shape.layout, models::GemmLayout::tn);
  EXPECT_EQ(t.gemm[2].precision, models::Precision::fp16);  // pseudo-fp16: FP16 storage
  EXPECT_EQ(t.gemm[2].source, "");
}

TEST(KernelTables, DeepBenchConvolutionsGiveARowPerMeasuredPass) {
  const std::string header =
      "gpu,precision,source,w,h,c,n,k,s_filter_w,r_filter_h,pad_w,pad_h,stride_w,stride_h,p,q,fwd_ms,bwd_inputs_ms,"
      "bwd_params_ms,total_ms,fwd_tflops_sheet,bwd_inputs_tflops_sheet,bwd_params_tflops_sheet,fwd_algorithm,over_peak\n";
  const KernelTables t = read(header +
                              "V100,fp32,Vision,224,224,3,16,64,3,3,1,1,1,1,224,224,0.4,,0.6,1.0,6.8,,4.1,IMPLICIT_GEMM,\n"
                              "V100,fp32,Resnet,56,56,64,16,64,3,3,1,1,1,1,56,56,0.1,0.12,0.13,0.35,1,1,1,WINOGRAD,\n");
  ASSERT_EQ(t.conv.size(), 5u);  // the first layer has no input-gradient time
  EXPECT_EQ(t.conv[0].pass, models::ConvPass::forward);
  EXPECT_EQ(t.conv[1].pass, models::ConvPass::weight_gradient);
  EXPECT_EQ(t.conv[2].algorithm, "WINOGRAD");
  EXPECT_EQ(t.conv[0].shape.channels, 3);
  EXPECT_EQ(t.conv[0].shape.batch, 16);
  EXPECT_EQ(t.conv[0].shape.out_h(), 224);
  EXPECT_DOUBLE_EQ(t.conv[3].seconds, 0.12e-3);
}

TEST(KernelTables, BadTablesAreRefusedWithTheirLine) {
  EXPECT_NE(error_of("a,b,c\n1,2,3\n").find("t.csv:1: unknown table"), std::string::npos);
  EXPECT_NE(error_of("").find("t.csv:1: the table is empty"), std::string::npos);
  const std::string gemm = "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms\n";
  EXPECT_NE(error_of(gemm).find("t.csv:2: the table has a header but no rows"), std::string::npos);
  EXPECT_NE(error_of(gemm + "A100,x,op,1,abc,1,1,0,fp16,1,1,0\n").find("t.csv:2: m: 'abc' is not a number"), std::string::npos);
  EXPECT_NE(error_of(gemm + "A100,x,op,1,1,1,1,0,fp16,1,1,0\nA100,x,op,1,1,1,1,0,fp16,-1,1,0\n").find("t.csv:3: median_ms"),
            std::string::npos);
  EXPECT_NE(error_of(gemm + "A100,x,op,1,1,1,1,0,int4,1,1,0\n").find("dtype: unknown precision 'int4'"), std::string::npos);
  EXPECT_NE(error_of(gemm + "A100,x,op,1,1\n").find("fewer cells"), std::string::npos);
  EXPECT_NE(error_of("gpu,source_model,op,tp,num_tokens,elements,bytes,dtype,median_ms\nA100,m,conv,0,1,1,1,fp16,1\n")
                .find("op: unknown element-wise op 'conv'"),
            std::string::npos);
}

// The tables calibration/pytorch_kernels.py writes: vidur's columns plus the layout of the
// product, and the FP64 rows dlsim calibrate --backend cuda writes among its GEMMs.
TEST(KernelTables, VidurGemmRowsMayNameTheirLayoutAndAlignmentFollowsTheShape) {
  const KernelTables t = read(
      "gpu,source_model,op,pass,tp,m,n,k,layout,dtype,median_ms,error\n"
      "H200,gpt2,lm_head,forward,1,8192,50257,768,NT,bf16,6.7,\n"
      "H200,gpt2,lm_head,data_gradient,1,8192,768,50257,nn,bf16,4.5,\n"
      "H200,gpt2,lm_head,weight_gradient,1,50257,768,8192,TN,bf16,4.3,\n"
      "H200,gpt2-padded,lm_head,forward,1,8192,50304,768,,bf16,0.9,\n"
      "H200,dlsim-calibrate,gemm,,1,64,64,64,,fp64,0.009,\n");
  ASSERT_EQ(t.gemm.size(), 5u);
  EXPECT_EQ(t.gemm[0].shape.layout, models::GemmLayout::nt);
  EXPECT_EQ(t.gemm[1].shape.layout, models::GemmLayout::nn);
  EXPECT_EQ(t.gemm[2].shape.layout, models::GemmLayout::tn);
  EXPECT_EQ(t.gemm[3].shape.layout, models::GemmLayout::nt);  // blank: vidur's NT
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t.gemm[i].shape.alignment_bytes, 2) << i;
  EXPECT_EQ(t.gemm[3].shape.alignment_bytes, 16);
  EXPECT_EQ(t.gemm[4].precision, models::Precision::fp64);
  EXPECT_EQ(t.gemm[4].shape.alignment_bytes, 16);  // 64 x 8 B rows
  const std::string bad = error_of(
      "gpu,source_model,op,m,n,k,layout,dtype,median_ms\n"
      "H200,x,y,64,64,64,TT,bf16,1\n");
  EXPECT_NE(bad.find("t.csv:2: layout: 'TT' must be NT, NN or TN"), std::string::npos) << bad;
}

TEST(KernelTables, CsvQuotingIsRfc4180) {
  EXPECT_EQ(split_csv_line(R"(a,"b,c","d""e",)"), (std::vector<std::string>{"a", "b,c", "d\"e", ""}));
}

TEST(KernelCases, CalibrationStatisticsBecomeTablesThatReadBack) {
  // A cuBLAS TN case m = 4096 features, n = 128 tokens, k = 4096 is the row-major 128 x 4096 x 4096.
  std::vector<CaseStats> stats(3);
  stats[0].kernel = {KernelFamily::gemm, models::Precision::bf16, 4096, 128, 4096, 0};
  stats[1].kernel = {KernelFamily::layernorm, models::Precision::fp32, 64, 1024, 0, 0};
  stats[2].kernel = {KernelFamily::read, models::Precision::fp32, 0, 0, 0, 1024};  // not a table kernel
  for (CaseStats& s : stats) {
    s.ok = s.stable = true;
    s.median_s = 2e-5;
  }
  const KernelTables t = tables_from_stats(stats, "H100-SXM");
  ASSERT_EQ(t.gemm.size(), 1u);
  EXPECT_EQ(t.gemm[0].shape.m, 128);
  EXPECT_EQ(t.gemm[0].shape.n, 4096);
  ASSERT_EQ(t.memory.size(), 1u);
  EXPECT_EQ(t.memory[0].kernel, models::MemoryKernel::layer_norm);
  std::ostringstream gemm, memory;
  write_gemm_table(gemm, t.gemm);
  write_memory_table(memory, t.memory);
  const KernelTables back = read(gemm.str());
  ASSERT_EQ(back.gemm.size(), 1u);
  EXPECT_EQ(back.gemm[0].shape.m, 128);
  EXPECT_EQ(back.gemm[0].precision, models::Precision::bf16);
  EXPECT_DOUBLE_EQ(back.gemm[0].seconds, 2e-5);
  const KernelTables mem = read(memory.str());
  ASSERT_EQ(mem.memory.size(), 1u);
  EXPECT_EQ(mem.memory[0].kernel, models::MemoryKernel::layer_norm);
  EXPECT_DOUBLE_EQ(mem.memory[0].bytes, 2.0 * 64 * 1024 * 4);
  EXPECT_FALSE(llm_gemm_cases(Grid::full).empty());
  EXPECT_TRUE(llm_gemm_cases(Grid::held_out).empty());
}

// The backward products of the LLM-layer grid: a data gradient (nn) and a weight gradient (tn, k =
// tokens) per shape at training token counts, which come back as row-major NN and TN rows.
TEST(KernelCases, BackwardLayoutsAreMeasuredAndWrittenWithTheirLayout) {
  const std::vector<KernelCase> cases = llm_gemm_cases(Grid::full);
  int nn = 0, tn = 0;
  for (const KernelCase& c : cases) {
    nn += c.layout == models::GemmLayout::nn;
    tn += c.layout == models::GemmLayout::tn;
  }
  EXPECT_EQ(nn, 16 * 5 * 2);  // 16 layer shapes x 5 token counts x fp16, bf16
  EXPECT_EQ(tn, nn);
  // dW of a 4096 x 11008 layer over 8192 tokens: cuBLAS m = 11008, n = 4096, k = 8192.
  std::vector<CaseStats> stats(1);
  stats[0].kernel = {KernelFamily::gemm, models::Precision::bf16, 11008, 4096, 8192, 0, models::GemmLayout::tn};
  stats[0].ok = stats[0].stable = true;
  stats[0].median_s = 1e-3;
  const KernelTables t = tables_from_stats(stats, "H200");
  ASSERT_EQ(t.gemm.size(), 1u);
  EXPECT_EQ(t.gemm[0].shape.layout, models::GemmLayout::tn);
  EXPECT_EQ(t.gemm[0].shape.m, 4096);
  EXPECT_EQ(t.gemm[0].shape.n, 11008);
  EXPECT_EQ(t.gemm[0].shape.k, 8192);
  std::ostringstream out;
  write_gemm_table(out, t.gemm);
  EXPECT_NE(out.str().find(",TN\n"), std::string::npos) << out.str();
  const KernelTables back = read(out.str());
  ASSERT_EQ(back.gemm.size(), 1u);
  EXPECT_EQ(back.gemm[0].shape.layout, models::GemmLayout::tn);
  EXPECT_EQ(back.gemm[0].shape.k, 8192);
}

}  // namespace
}  // namespace dlsim::calibration
