// Helpers for the tests that compare the kernel model with kernels dlsim measured itself on a GPU
// (calibration/measured/<device>/, tools/gpu-calibrate.sh): reading the tables, predicting them,
// and summarising signed errors (predicted / measured - 1; negative means dlsim is too fast).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibration/kernel_tables.hpp"
#include "experiment/kernel_predict.hpp"
#include "experiment/kernel_table_predict.hpp"
#include "models/attention_model.hpp"
#include "models/conv_model.hpp"

namespace dlsim::experiment::measured {

inline const SourceLocation kHere{"test", 0, 0};

// calibration/measured/<folder>/<file> under the source tree (DLSIM_SOURCE_DIR, set by CTest).
inline std::string path(const std::string& folder, const std::string& file) {
  const char* root = std::getenv("DLSIM_SOURCE_DIR");
  return std::string(root ? root : ".") + "/calibration/measured/" + folder + "/" + file;
}

// Rows of a CSV as column -> text.
inline std::vector<std::map<std::string, std::string>> read_rows(const std::string& file) {
  std::ifstream in(file);
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

inline double number(const std::map<std::string, std::string>& row, const std::string& column) {
  return std::stod(row.at(column));
}

inline double quantile_abs(std::vector<double> errors, double q) {
  for (double& e : errors) e = std::abs(e);
  std::sort(errors.begin(), errors.end());
  const double at = q * (errors.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, errors.size() - 1);
  return errors[lo] + (at - lo) * (errors[hi] - errors[lo]);
}

inline double median_signed(std::vector<double> errors) {
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  return n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
}

inline void print_summary(const std::string& what, const std::vector<double>& errors) {
  std::printf("%-46s %3zu kernels: median |e| %5.1f%%, p90 |e| %5.1f%%, median e %+6.1f%%\n", what.c_str(),
              errors.size(), 100 * quantile_abs(errors, 0.5), 100 * quantile_abs(errors, 0.9),
              100 * median_signed(errors));
}

// A measured GEMM table with each row's prediction (same order: one record per non-blank row).
struct PredictedGemms {
  calibration::KernelTables tables;
  KernelTablePrediction prediction;
  double error(std::size_t i) const { return prediction.rows[i].predicted_s / tables.gemm[i].seconds - 1; }
};
inline PredictedGemms predicted_gemms(const std::string& file) {
  PredictedGemms p;
  calibration::read_kernel_table_file(file, p.tables);
  p.prediction = predict_kernel_table_file(file);
  EXPECT_EQ(p.tables.gemm.size(), p.prediction.rows.size());
  return p;
}

// Signed errors of a GEMM table per layout ("all" holds every row).
inline std::map<std::string, std::vector<double>> gemm_errors_by_layout(const PredictedGemms& p) {
  std::map<std::string, std::vector<double>> errors;
  for (std::size_t i = 0; i < p.tables.gemm.size(); ++i) {
    errors[std::string(to_string(p.tables.gemm[i].shape.layout))].push_back(p.error(i));
    errors["all"].push_back(p.error(i));
  }
  return errors;
}

// pytorch_kernels.py's FlashAttention-2 table (batch x heads x seq x head_dim, causal or not)
// against models::flash_attention_time on `device`: signed errors of forward and backward.
struct AttentionErrors {
  std::vector<double> forward, backward;
};
inline AttentionErrors flash_attention_errors(const std::string& file, const std::string& device) {
  AttentionErrors out;
  const models::DeviceSpec* spec = kernel_catalog().find_device(device);
  EXPECT_NE(spec, nullptr) << device;
  if (spec == nullptr) return out;
  for (const auto& r : read_rows(file)) {
    models::AttentionShape s;
    s.batch = number(r, "batch");
    s.heads = s.kv_heads = number(r, "heads");
    s.query_length = s.key_length = number(r, "seq");
    s.head_dim = number(r, "head_dim");
    s.causal = r.at("causal") == "1";
    const models::AttentionTime t = models::flash_attention_time(s, models::Precision::bf16, *spec);
    const double fwd = number(r, "forward_ms") * 1e-3;
    const double bwd = number(r, "forward_backward_ms") * 1e-3 - fwd;
    out.forward.push_back(t.forward_s / fwd - 1);
    out.backward.push_back(t.backward_s / bwd - 1);
  }
  return out;
}

// pytorch_kernels.py's convolution table (ResNet-50's convolutions, bf16, three passes each)
// against models::conv_time with `device`'s default kernel model.
struct ConvErrors {
  std::map<std::string, std::vector<double>> by_pass;  // the table's column: forward_ms, ...
  double measured_total_s = 0;
  double predicted_total_s = 0;
  std::size_t kernels = 0;
};
inline ConvErrors conv_errors(const std::string& file, const std::string& device) {
  ConvErrors out;
  const KernelDevice d = kernel_device(device, kHere, "gpu");
  const models::GemmParams& gemm = *d.profile->kernels.gemm_for(models::Precision::bf16);
  for (const auto& r : read_rows(file)) {
    const models::ConvShape c{number(r, "n"), number(r, "c"),      number(r, "h"),   number(r, "w"),
                              number(r, "k"), number(r, "r"),      number(r, "s"),   number(r, "stride"),
                              number(r, "stride"), number(r, "pad"), number(r, "pad")};
    for (const auto& [pass, column] : {std::pair{models::ConvPass::forward, "forward_ms"},
                                       std::pair{models::ConvPass::data_gradient, "data_gradient_ms"},
                                       std::pair{models::ConvPass::weight_gradient, "weight_gradient_ms"}}) {
      const double measured = number(r, column) * 1e-3;
      const double predicted =
          models::conv_time(c, pass, models::Precision::bf16, *d.spec, gemm, d.profile->kernels.conv).seconds;
      out.by_pass[column].push_back(predicted / measured - 1);
      out.measured_total_s += measured;
      out.predicted_total_s += predicted;
      ++out.kernels;
    }
  }
  return out;
}

inline void print_conv(const std::string& device, const ConvErrors& e) {
  for (const auto& [column, errors] : e.by_pass) print_summary(device + " ResNet-50 convolutions, " + column, errors);
  std::printf("%s ResNet-50 convolutions, sum of %zu kernels: measured %.3f ms, predicted %.3f ms (%+.1f%%)\n",
              device.c_str(), e.kernels, 1e3 * e.measured_total_s, 1e3 * e.predicted_total_s,
              100 * (e.predicted_total_s / e.measured_total_s - 1));
}

}  // namespace dlsim::experiment::measured
