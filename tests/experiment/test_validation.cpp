// The validation: section and the comparison of predictions with published figures.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/validation.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// A two-node-count ResNet-50 run: rows nodes 1 and 2.
const std::string kTraining = R"(seed: 1
cluster: {instance: aws/p3.16xlarge, nodes: 1}
workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, data: {samples: 1281167, epochs: 1}}
sweep: {nodes: [1, 2]}
)";

Scenario with_checks(const std::string& checks, const std::string& head = kTraining) {
  return load_scenario_text(head + "validation:\n  source: test\n  reference: measured\n  checks:\n" + checks, "v.yaml");
}

const TableColumn& column(const Results& r, const std::string& name) {
  for (const TableColumn& c : r.table.columns) {
    if (c.name == name) return c;
  }
  throw std::out_of_range(name);
}

TEST(ValidationSection, ReadsValuesRangesBoundsAndUnits) {
  const Scenario s = with_checks(R"(    - {id: a, quantity: q, published: 938 images/s, predicted: {column: samples_per_second, where: {nodes: 1}}}
    - {id: b, quantity: q, published: "[10, 15] %", predicted: {change: [{column: iteration_time, where: {nodes: 2}}, {column: iteration_time, where: {nodes: 1}}]}}
    - {id: c, quantity: q, published: ">= 90 %", predicted: {column: scaling_efficiency, where: {nodes: 2}}, explanation: why}
    - {id: d, quantity: q, published: 24 minutes, predicted: {column: time_per_epoch, where: {nodes: 2}}}
)");
  ASSERT_EQ(s.validation.checks.size(), 4u);
  EXPECT_EQ(s.validation.source, "test");
  EXPECT_FALSE(s.validation.fast);
  const auto& a = s.validation.checks[0].published;
  EXPECT_EQ(a.kind, PublishedValue::Kind::value);
  EXPECT_EQ(a.low, 938);
  EXPECT_EQ(a.dimension, "samples/s");
  const auto& b = s.validation.checks[1].published;
  EXPECT_EQ(b.kind, PublishedValue::Kind::range);
  EXPECT_DOUBLE_EQ(b.low, 0.10);   // 10 % = 0.10
  EXPECT_DOUBLE_EQ(b.high, 0.15);
  EXPECT_EQ(s.validation.checks[1].predicted.kind, ValidationMetric::Kind::change);
  ASSERT_EQ(s.validation.checks[1].predicted.operands.size(), 2u);
  EXPECT_EQ(s.validation.checks[2].published.kind, PublishedValue::Kind::at_least);
  EXPECT_EQ(s.validation.checks[2].explanation, "why");
  EXPECT_EQ(s.validation.checks[3].published.low, 24 * 60.0);  // minutes to seconds
}

TEST(ValidationSection, BadChecksAreReportedWhereTheyAre) {
  struct Case {
    std::string check, key, needle, message;
  };
  const Case cases[] = {
      {"    - {id: a, quantity: q, published: 938 furlongs, predicted: {column: nodes}}\n", "validation.checks[0].published",
       "938 furlongs", "unknown unit 'furlongs'"},
      {"    - {id: a, quantity: q, published: 938, predicted: {column: nodes}}\n", "validation.checks[0].published", "938", "has no unit"},
      {"    - {id: a, quantity: q, published: \"[15, 10] %\", predicted: {column: nodes}}\n", "validation.checks[0].published",
       "\"[15, 10] %\"", "low end is above its high end"},
      {"    - {id: a, quantity: q, published: 1 s, predicted: {colum: nodes}}\n", "validation.checks[0].predicted", "{colum",
       "expected one of {column"},
      {"    - {id: a, quantity: q, published: 1 s, predicted: {ratio: [{column: nodes}]}}\n", "validation.checks[0].predicted.ratio",
       "[{column", "a list of two metrics"},
      {"    - {id: a, quantity: q, published: 1 s}\n", "validation.checks[0].predicted", "{id", "missing"},
  };
  for (const Case& c : cases) {
    const std::string text = kTraining + "validation:\n  source: test\n  reference: measured\n  checks:\n" + c.check;
    const ConfigError e = test::error_loading(text);
    EXPECT_EQ(e.key_path(), c.key) << c.check;
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, test::position_of(text, c.needle).first) << e.what();
  }
  // A reference other than measured or claims.
  const ConfigError r = test::error_loading(kTraining + "validation: {source: s, reference: blog, checks: [{id: a, quantity: q, published: 1 s, predicted: {column: nodes}}]}\n");
  EXPECT_EQ(r.key_path(), "validation.reference");
}

TEST(ValidationCompare, ColumnRatiosAndErrorsComeFromTheSelectedRows) {
  const Scenario s = with_checks(R"(    - {id: one, quantity: q, published: 1000 images/s, predicted: {column: samples_per_second, where: {nodes: 1}}}
    - {id: eff, quantity: q, published: 100 %, predicted: {ratio: [{column: samples_per_second_per_accelerator, where: {nodes: 2}}, {column: samples_per_second_per_accelerator, where: {nodes: 1}}]}}
    - {id: save, quantity: q, published: "[0, 100] %", predicted: {saving: [{column: iteration_time, where: {nodes: 1}}, {column: iteration_time, where: {nodes: 2}}]}}
)");
  const Results r = run(s);
  const auto rows = compare_checks(s, r.table, "v.yaml");
  ASSERT_EQ(rows.size(), 3u);
  const double one = column(r, "samples_per_second").numbers[0];
  EXPECT_EQ(rows[0].predicted, one);
  EXPECT_DOUBLE_EQ(rows[0].error, (one - 1000) / 1000);
  const auto& per = column(r, "samples_per_second_per_accelerator").numbers;
  EXPECT_DOUBLE_EQ(rows[1].predicted, per[1] / per[0]);
  // The scaling_efficiency column is the same ratio (relative to the smallest node count).
  EXPECT_DOUBLE_EQ(rows[1].predicted, column(r, "scaling_efficiency").numbers[1]);
  const auto& it = column(r, "iteration_time").numbers;
  EXPECT_DOUBLE_EQ(rows[2].predicted, 1 - it[0] / it[1]);
}

TEST(ValidationCompare, AWhereThatDoesNotSelectOneRowOrAWrongUnitIsAnError) {
  const Scenario none = with_checks("    - {id: a, quantity: q, published: 1 s, predicted: {column: iteration_time, where: {nodes: 3}}}\n");
  const Results r = run(none);
  try {
    compare_checks(none, r.table, "v.yaml");
    FAIL() << "accepted a where that selects no row";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "validation.checks[0].predicted");
    EXPECT_NE(e.message().find("selects 0 of the 2 result rows"), std::string::npos) << e.what();
  }
  const Scenario two = with_checks("    - {id: a, quantity: q, published: 1 s, predicted: {column: iteration_time}}\n");
  EXPECT_THROW(compare_checks(two, r.table, "v.yaml"), ConfigError);
  const Scenario missing = with_checks("    - {id: a, quantity: q, published: 1 s, predicted: {column: no_such, where: {nodes: 1}}}\n");
  EXPECT_THROW(compare_checks(missing, r.table, "v.yaml"), ConfigError);
  const Scenario unit = with_checks("    - {id: a, quantity: q, published: 1 GB/s, predicted: {column: iteration_time, where: {nodes: 1}}}\n");
  try {
    compare_checks(unit, r.table, "v.yaml");
    FAIL() << "compared a bandwidth with a time";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("measures B/s but the prediction is in s"), std::string::npos) << e.what();
  }
}

TEST(ValidationCompare, ErrorIsZeroInsideARangeOrBoundAndMeasuredFromTheNearestEnd) {
  PublishedValue range;
  range.kind = PublishedValue::Kind::range;
  range.low = 0.10;
  range.high = 0.15;
  EXPECT_EQ(validation_error(range, 0.12), 0);
  EXPECT_DOUBLE_EQ(validation_error(range, 0.05), -0.5);   // (0.05 - 0.10) / 0.10
  EXPECT_DOUBLE_EQ(validation_error(range, 0.30), 1.0);    // (0.30 - 0.15) / 0.15
  PublishedValue at_least;
  at_least.kind = PublishedValue::Kind::at_least;
  at_least.low = at_least.high = 0.9;
  EXPECT_EQ(validation_error(at_least, 0.95), 0);
  EXPECT_DOUBLE_EQ(validation_error(at_least, 0.45), -0.5);
  PublishedValue value;
  value.low = value.high = 200;
  EXPECT_DOUBLE_EQ(validation_error(value, 150), -0.25);
}

TEST(ValidationCompare, MegatronFlopsFollowTheirFormula) {
  // Megatron SC21 eq. 3 for the 1.7B row (B 512, s 2048, l 24, h 2304, V 51200):
  // 96 B s l h^2 = 12,824,703,626,379,264; 1 + 2048/13824 + 51200/884736 = 1.2060185...;
  // product 1.54668e16 FLOPs per iteration.
  EXPECT_NEAR(megatron_flops_per_iteration(512, 2048, 24, 2304, 51200), 1.5466830067924994e16, 1e3);
  const std::string head = R"(seed: 1
cluster: {instance: azure/Standard_ND96amsr_A100_v4, nodes: 4}
workload:
  model: {name: gpt-1.7b, transformer: {layers: 24, hidden: 2304, heads: 24, vocab: 51200, sequence_length: 2048}}
  precision: fp16
  optimizer: adam
  batch: {global: 512}
  iterations: 10
  plan: {micro_batch_size: 16, recompute: full}
)";
  const Scenario s = with_checks("    - {id: t, quantity: q, published: 137 TFLOP/s, predicted: {megatron_tflops_per_gpu: {}}}\n", head);
  ASSERT_TRUE(s.workload.decoder.has_value());
  EXPECT_EQ(s.workload.decoder->hidden, 2304);
  const Results r = run(s);
  const auto rows = compare_checks(s, r.table, "v.yaml");
  ASSERT_EQ(rows.size(), 1u);
  const double iteration = column(r, "iteration_time").numbers[0];
  EXPECT_DOUBLE_EQ(rows[0].predicted, 1.5466830067924994e16 / (iteration * 32));
  // A CNN has no transformer sizes: the metric says so.
  const Scenario cnn = with_checks("    - {id: t, quantity: q, published: 137 TFLOP/s, predicted: {megatron_tflops_per_gpu: {where: {nodes: 1}}}}\n");
  EXPECT_THROW(compare_checks(cnn, run(cnn).table, "v.yaml"), ConfigError);
}

class ValidationFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("dlsim-validation-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
};

TEST_F(ValidationFolder, RunsTheScenariosWithChecksAndAveragesEachReference) {
  // Published values far from any prediction: 1 image/s and 1e9 images/s (errors known from the run).
  write("b.yaml", kTraining + "validation:\n  source: s\n  reference: measured\n  fast: true\n  checks:\n"
                              "    - {id: m, quantity: q, published: 1e9 images/s, predicted: {column: samples_per_second, where: {nodes: 1}}, explanation: e}\n");
  write("a.yaml", kTraining + "validation:\n  source: s\n  reference: claims\n  checks:\n"
                              "    - {id: c, quantity: q, published: \">= 0 %\", predicted: {column: scaling_efficiency, where: {nodes: 2}}}\n");
  write("plain.yaml", kTraining);  // no validation section: not run
  write("notes.txt", "not a scenario");
  const ValidationReport all = validate_folder(dir_.string());
  EXPECT_EQ(all.scenarios, 2);
  ASSERT_EQ(all.rows.size(), 2u);
  EXPECT_EQ(all.rows[0].scenario, "a.yaml");  // by file name
  EXPECT_EQ(all.rows[0].error, 0);            // inside the bound
  EXPECT_EQ(all.claim_points, 1);
  EXPECT_EQ(all.measured_points, 1);
  EXPECT_DOUBLE_EQ(all.mape_measured, std::fabs(all.rows[1].error));
  EXPECT_GT(all.mape_measured, 0.99);         // predicted << 1e9 images/s
  EXPECT_TRUE(all.unexplained.empty());       // the far-off check explains itself
  ValidateOptions fast;
  fast.fast_only = true;
  const ValidationReport quick = validate_folder(dir_.string(), fast);
  ASSERT_EQ(quick.rows.size(), 1u);
  EXPECT_EQ(quick.rows[0].id, "m");
  ValidateOptions only;
  only.only = {"a"};
  EXPECT_EQ(validate_folder(dir_.string(), only).rows.size(), 1u);
  // One thread or two: the same report.
  ValidateOptions one;
  one.threads = 1;
  EXPECT_EQ(format_validation_markdown(validate_folder(dir_.string(), one)), format_validation_markdown(all));
}

TEST_F(ValidationFolder, AFarOffFigureWithoutExplanationIsListed) {
  write("x.yaml", kTraining + "validation:\n  source: s\n  reference: measured\n  checks:\n"
                              "    - {id: far, quantity: q, published: 1 images/s, predicted: {column: samples_per_second, where: {nodes: 1}}}\n");
  const ValidationReport r = validate_folder(dir_.string());
  ASSERT_EQ(r.unexplained.size(), 1u);
  EXPECT_EQ(r.unexplained[0], "x.yaml: far");
  EXPECT_THROW(validate_folder((dir_ / "missing").string()), ConfigError);
}

}  // namespace
}  // namespace dlsim::experiment
