// The kernel model against kernels dlsim measured itself on an NVIDIA H200 (calibration/measured/
// h200/, README there): training GEMMs of three layouts, vocabulary projections of misaligned
// widths, FlashAttention-2 and ResNet-50's convolutions. None of these rows was fitted on except
// the misaligned projections (which set the Hopper alignment slowdowns): the default H200 kernel
// model is the H100's (vidur's tables) transferred by datasheet ratios. Each test prints its
// comparison (docs/validation.md quotes it) and bounds the error where the model is meant to hold,
// so that a change that makes these held-out predictions worse fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "calibration/kernel_tables.hpp"
#include "experiment/kernel_predict.hpp"
#include "experiment/kernel_table_predict.hpp"
#include "models/attention_model.hpp"
#include "models/conv_model.hpp"

namespace dlsim::experiment {
namespace {

using models::Precision;

const SourceLocation kHere{"test", 0, 0};

std::string measured_path(const std::string& file) {
  const char* root = std::getenv("DLSIM_SOURCE_DIR");
  return std::string(root ? root : ".") + "/calibration/measured/h200/" + file;
}

// Rows of a CSV as column -> text.
std::vector<std::map<std::string, std::string>> read_rows(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::map<std::string, std::string>> rows;
  std::string line;
  if (!std::getline(in, line)) return rows;
  const auto header = calibration::split_csv_line(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = calibration::split_csv_line(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

double number(const std::map<std::string, std::string>& row, const std::string& column) {
  return std::stod(row.at(column));
}

double quantile_abs(std::vector<double> errors, double q) {
  for (double& e : errors) e = std::abs(e);
  std::sort(errors.begin(), errors.end());
  const double at = q * (errors.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, errors.size() - 1);
  return errors[lo] + (at - lo) * (errors[hi] - errors[lo]);
}

double median_signed(std::vector<double> errors) {
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  return n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
}

void print_summary(const char* what, const std::vector<double>& errors) {
  std::printf("%-46s %3zu kernels: median |e| %5.1f%%, p90 |e| %5.1f%%, median e %+6.1f%%\n", what, errors.size(),
              100 * quantile_abs(errors, 0.5), 100 * quantile_abs(errors, 0.9), 100 * median_signed(errors));
}

// Training GEMMs (forward NT, data gradient NN, weight gradient TN at 2,048 and 8,192 tokens):
// shapes and layouts vidur never measured, on a GPU none of the tables measured.
// A measured GEMM table with each row's prediction (same order: one record per non-blank row).
struct PredictedGemms {
  calibration::KernelTables tables;
  KernelTablePrediction prediction;
};
PredictedGemms predicted_gemms(const std::string& file) {
  PredictedGemms p;
  calibration::read_kernel_table_file(measured_path(file), p.tables);
  p.prediction = predict_kernel_table_file(measured_path(file));
  EXPECT_EQ(p.tables.gemm.size(), p.prediction.rows.size());
  return p;
}

TEST(H200Measured, TrainingGemmsOfEveryLayoutArePredictedWithin10PercentMedian) {
  const PredictedGemms p = predicted_gemms("h200-training-gemm.csv");
  ASSERT_EQ(p.tables.gemm.size(), 96u);
  std::map<models::GemmLayout, std::vector<double>> by_layout;
  std::vector<double> all;
  for (std::size_t i = 0; i < p.tables.gemm.size(); ++i) {
    const double e = p.prediction.rows[i].predicted_s / p.tables.gemm[i].seconds - 1;
    by_layout[p.tables.gemm[i].shape.layout].push_back(e);
    all.push_back(e);
  }
  EXPECT_EQ(by_layout.size(), 3u);
  for (const auto& [layout, errors] : by_layout) {
    print_summary(("H200 training GEMMs, layout " + std::string(to_string(layout))).c_str(), errors);
  }
  print_summary("H200 training GEMMs, all", all);
  EXPECT_LT(quantile_abs(all, 0.5), 0.10);
  EXPECT_LT(quantile_abs(all, 0.9), 0.20);
}

// The same training GEMMs timed after 0.4 s of running back to back (continuous load, as in a
// training step): the H200 holds 700 W by lowering its SM clock from 1,980 MHz to about 1,470
// (h200-sustained.csv), and the kernels take about 5% longer than the first measurement, whose
// long kernels were already partly under load. The kernel model knows no power limit: its
// constants come from short bursts of kernels, so it is more optimistic here (printed; the bound
// says the gap stays below 20% median, so that a change making it larger shows).
TEST(H200Measured, TrainingGemmsUnderContinuousLoadRunAtThePowerLimitedClock) {
  const PredictedGemms p = predicted_gemms("h200-training-gemm-sustained.csv");
  ASSERT_EQ(p.tables.gemm.size(), 96u);
  std::vector<double> errors;
  for (std::size_t i = 0; i < p.tables.gemm.size(); ++i) {
    errors.push_back(p.prediction.rows[i].predicted_s / p.tables.gemm[i].seconds - 1);
  }
  print_summary("H200 training GEMMs under continuous load", errors);
  const auto clocks = read_rows(measured_path("h200-sustained.csv"));
  ASSERT_FALSE(clocks.empty());
  double late_clock = 0, late = 0;
  for (const auto& r : clocks) {
    if (number(r, "t_s") < 2.0) continue;  // the controller settles within about a second
    late_clock += number(r, "sm_clock_mhz");
    late += 1;
  }
  ASSERT_GT(late, 0);
  std::printf("H200 SM clock after 2 s of back-to-back GEMMs: %.0f MHz (maximum 1980)\n", late_clock / late);
  EXPECT_LT(late_clock / late, 1700);  // the power limit, measured
  EXPECT_LT(median_signed(errors), 0);
  EXPECT_LT(quantile_abs(errors, 0.5), 0.20);
}

// Vocabulary projections of widths 50,257 and 32,001 (2-byte rows) and 30,522 (4-byte rows)
// against padded widths: the alignment slowdown is what keeps them from being 4-7x too fast.
TEST(H200Measured, MisalignedVocabularyProjectionsPayTheMeasuredSlowdown) {
  const PredictedGemms p = predicted_gemms("h200-alignment-gemm.csv");
  ASSERT_EQ(p.tables.gemm.size(), 36u);
  std::vector<double> aligned, misaligned, misaligned_without_factor;
  for (std::size_t i = 0; i < p.tables.gemm.size(); ++i) {
    const calibration::MeasuredGemm& g = p.tables.gemm[i];
    const double e = p.prediction.rows[i].predicted_s / g.seconds - 1;
    if (models::alignment_class(g.shape.alignment_bytes) < 0) {
      aligned.push_back(e);
      continue;
    }
    misaligned.push_back(e);
    models::GemmShape as_if_aligned = g.shape;
    as_if_aligned.alignment_bytes = 16;
    const KernelDevice d = kernel_device(g.gpu, kHere, "gpu");
    const double t = models::gemm_time(as_if_aligned, g.precision, *d.spec, *d.profile->kernels.gemm_for(g.precision)).seconds;
    misaligned_without_factor.push_back(t / g.seconds - 1);
  }
  EXPECT_EQ(aligned.size(), 18u);
  EXPECT_EQ(misaligned.size(), 18u);
  print_summary("H200 vocabulary projections, padded widths", aligned);
  print_summary("H200 vocabulary projections, misaligned", misaligned);
  print_summary("the same without the alignment slowdown", misaligned_without_factor);
  EXPECT_LT(median_signed(misaligned_without_factor), -0.6);  // the mechanism matters: 3-7x
  EXPECT_LT(quantile_abs(misaligned, 0.5), 0.15);
  EXPECT_LT(quantile_abs(aligned, 0.5), 0.10);
}

// PyTorch's FlashAttention-2 (scaled_dot_product_attention, flash backend), bf16, batch x heads x
// sequence x head_dim with 32K tokens per call, causal and not, head dimensions 64 and 128.
// dlsim's attention model takes FA2's published H100 throughput on Hopper (attention_model.cpp),
// from the FA3 paper's FA2 bars, never from these rows.
TEST(H200Measured, FlashAttention2IsPredictedWithin10PercentMedian) {
  const auto rows = read_rows(measured_path("h200-attention.csv"));
  ASSERT_EQ(rows.size(), 24u);
  const models::Catalog& catalog = kernel_catalog();
  const models::DeviceSpec* h200 = catalog.find_device("H200");
  ASSERT_NE(h200, nullptr);
  std::vector<double> forward, backward;
  for (const auto& r : rows) {
    models::AttentionShape s;
    s.batch = number(r, "batch");
    s.heads = s.kv_heads = number(r, "heads");
    s.query_length = s.key_length = number(r, "seq");
    s.head_dim = number(r, "head_dim");
    s.causal = r.at("causal") == "1";
    const models::AttentionTime t = models::flash_attention_time(s, Precision::bf16, *h200);
    const double fwd = number(r, "forward_ms") * 1e-3;
    const double bwd = number(r, "forward_backward_ms") * 1e-3 - fwd;
    forward.push_back(t.forward_s / fwd - 1);
    backward.push_back(t.backward_s / bwd - 1);
  }
  print_summary("H200 FlashAttention-2 forward", forward);
  print_summary("H200 FlashAttention-2 backward", backward);
  EXPECT_LT(quantile_abs(forward, 0.5), 0.10);
  EXPECT_LT(quantile_abs(backward, 0.5), 0.10);
}

// cuDNN's convolutions of ResNet-50 (bf16, NHWC, batch 128) against the convolution model, which
// has constants from DeepBench's V100 only (no convolution was measured on an A100 or Hopper).
// Printed for docs/validation.md; the bound is on the sum of the 69 kernels (a step's
// convolution time): within 20%.
TEST(H200Measured, ResNet50ConvolutionsArePrintedAgainstTheModel) {
  const auto rows = read_rows(measured_path("h200-conv.csv"));
  ASSERT_EQ(rows.size(), 23u);
  const KernelDevice d = kernel_device("H200", kHere, "gpu");
  const models::GemmParams& gemm = *d.profile->kernels.gemm_for(Precision::bf16);
  std::map<std::string, std::vector<double>> errors;
  double measured_total = 0, predicted_total = 0;
  for (const auto& r : rows) {
    const models::ConvShape c{number(r, "n"), number(r, "c"), number(r, "h"), number(r, "w"), number(r, "k"),
                              number(r, "r"), number(r, "s"), number(r, "stride"), number(r, "stride"),
                              number(r, "pad"), number(r, "pad")};
    for (const auto& [pass, column] : {std::pair{models::ConvPass::forward, "forward_ms"},
                                       std::pair{models::ConvPass::data_gradient, "data_gradient_ms"},
                                       std::pair{models::ConvPass::weight_gradient, "weight_gradient_ms"}}) {
      const double measured = number(r, column) * 1e-3;
      const double predicted = models::conv_time(c, pass, Precision::bf16, *d.spec, gemm, d.profile->kernels.conv).seconds;
      errors[column].push_back(predicted / measured - 1);
      measured_total += measured;
      predicted_total += predicted;
    }
  }
  for (const auto& [column, e] : errors) print_summary(("H200 ResNet-50 convolutions, " + column).c_str(), e);
  std::printf("H200 ResNet-50 convolutions, sum of 69 kernels: measured %.3f ms, predicted %.3f ms (%+.1f%%)\n",
              1e3 * measured_total, 1e3 * predicted_total, 100 * (predicted_total / measured_total - 1));
  EXPECT_LT(std::abs(predicted_total / measured_total - 1), 0.20);
}

}  // namespace
}  // namespace dlsim::experiment
