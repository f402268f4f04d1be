// Issue 19: the printed training table keeps significant digits of small numbers, shows tokens/s
// for language models, and shows scaling efficiency only when there are sizes to compare.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "experiment/results.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {
namespace {

ResultRow row(int nodes, double samples_per_s, double tokens_per_sample) {
  ResultRow r;
  r.nodes = nodes;
  r.accelerators = 8 * nodes;
  r.plan = "d" + std::to_string(8 * nodes);
  r.global_batch = 64;
  r.iteration_s = 64 / samples_per_s;
  r.samples_per_s = samples_per_s;
  r.samples_per_s_per_accelerator = samples_per_s / r.accelerators;
  r.tokens_per_s = samples_per_s * tokens_per_sample;
  r.tflops_per_accelerator = 0.0123e12 / 1e12;
  r.compute_s = r.iteration_s;
  r.iterations = 10;
  r.scaling_efficiency = 1;
  return r;
}

std::string header_of(const Results& results) {
  std::ostringstream out;
  print_table(out, results);
  return out.str().substr(0, out.str().find('\n'));
}

std::string first_row_of(const Results& results) {
  std::ostringstream out;
  print_table(out, results);
  const std::string text = out.str();
  const auto start = text.find('\n') + 1;
  return text.substr(start, text.find('\n', start) - start);
}

TEST(TablePrinter, SmallThroughputsKeepThreeSignificantDigits) {
  Results results;
  results.rows = {row(1, 7.234, 2048)};
  const std::string line = first_row_of(results);
  EXPECT_NE(line.find(" 7.23 "), std::string::npos) << line;   // samples/s, not "7"
  EXPECT_NE(line.find(" 0.904 "), std::string::npos) << line;  // per accelerator, not "0.9"
  Results cpu;
  cpu.rows = {row(1, 0.04123, 1)};
  const std::string cpu_line = first_row_of(cpu);
  EXPECT_NE(cpu_line.find(" 0.0412 "), std::string::npos) << cpu_line;  // not "0"
  // Large values print as before: whole samples.
  Results big;
  big.rows = {row(1, 9232.4, 1)};
  EXPECT_NE(first_row_of(big).find(" 9232 "), std::string::npos) << first_row_of(big);
}

TEST(TablePrinter, TokensColumnForLanguageModelsEfficiencyOnlyAcrossSizes) {
  Results llm;
  llm.rows = {row(1, 7.234, 2048)};
  const std::string header = header_of(llm);
  EXPECT_NE(header.find("tokens/s"), std::string::npos) << header;
  EXPECT_EQ(header.find("efficiency"), std::string::npos) << header;  // one size: nothing to compare
  EXPECT_NE(first_row_of(llm).find(" 14815 "), std::string::npos) << first_row_of(llm);  // 7.234 x 2048

  Results cnn;
  cnn.rows = {row(1, 1000, 1), row(2, 1900, 1)};
  const std::string cnn_header = header_of(cnn);
  EXPECT_EQ(cnn_header.find("tokens/s"), std::string::npos) << cnn_header;
  EXPECT_NE(cnn_header.find("efficiency"), std::string::npos) << cnn_header;
}

}  // namespace
}  // namespace dlsim::experiment
