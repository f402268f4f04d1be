// Sweeps: a grid of --set overrides over one scenario, run on threads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/sweep.hpp"

namespace dlsim::experiment {
namespace {

const char* const kScenario = R"(seed: 1
cluster:
  instance: aws/p3.16xlarge
  nodes: 1
workload:
  model: resnet50
  precision: fp16
  batch: {per_device: 64}
  iterations: 100
sweep:
  nodes: [1, 2]
)";

SweepSource text_source() {
  SweepSource s;
  s.text = kScenario;
  s.name = "sweep.yaml";
  return s;
}

const TableColumn& column(const Table& t, const std::string& name) {
  for (const TableColumn& c : t.columns) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no column " + name);
}

// Bit for bit (NaN marks values that do not apply, and NaN != NaN).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

TEST(SweepGrid, IsTheCartesianProductWithTheFirstAxisSlowest) {
  const auto v = grid_variants({{"a", {"1", "2"}}, {"b.c", {"x", "y", "z"}}});
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0], (std::vector<std::string>{"a=1", "b.c=x"}));
  EXPECT_EQ(v[2], (std::vector<std::string>{"a=1", "b.c=z"}));
  EXPECT_EQ(v[3], (std::vector<std::string>{"a=2", "b.c=x"}));
  EXPECT_EQ(grid_variants({}).size(), 1u);  // no axis: the scenario itself
}

TEST(SweepGrid, RejectsEmptyAxesAndKeysSweptTwice) {
  EXPECT_THROW(grid_variants({{"a", {}}}), ConfigError);
  EXPECT_THROW(grid_variants({{"", {"1"}}}), ConfigError);
  EXPECT_THROW(grid_variants({{"a", {"1"}}, {"a", {"2"}}}), ConfigError);
}

TEST(Sweep, EachVariantHoldsTheRowsOfItsOwnRunAndThreadsChangeNothing) {
  const std::vector<SweepAxis> axes{{"workload.precision", {"fp16", "fp32"}}, {"workload.batch.per_device", {"32", "64"}}};
  const SweepResults one = run_sweep(text_source(), axes, 1);
  const SweepResults two = run_sweep(text_source(), axes, 2);
  EXPECT_EQ(one.kind, "training");
  ASSERT_EQ(one.variants.size(), 4u);
  // Two node counts per variant: 8 rows.
  ASSERT_EQ(one.table.rows(), 8u);
  EXPECT_EQ(column(one.table, "sweep_variant").numbers, (std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(column(one.table, "workload.precision").texts[4], "fp32");
  EXPECT_EQ(column(one.table, "workload.batch.per_device").texts[2], "64");
  // Variant 2 (fp32, batch 32) gives what a single run with those overrides gives.
  const Results single = run(load_scenario_text(kScenario, "sweep.yaml", {"workload.precision=fp32", "workload.batch.per_device=32"}));
  EXPECT_EQ(column(one.table, "samples_per_second").numbers[4], single.rows[0].samples_per_s);
  EXPECT_EQ(column(one.table, "samples_per_second").numbers[5], single.rows[1].samples_per_s);
  // fp16 is faster than fp32 on V100 tensor cores at the same batch.
  EXPECT_GT(column(one.table, "samples_per_second").numbers[0], column(one.table, "samples_per_second").numbers[4]);
  for (std::size_t c = 0; c < one.table.columns.size(); ++c) {
    EXPECT_TRUE(same_bits(one.table.columns[c].numbers, two.table.columns[c].numbers)) << one.table.columns[c].name;
    EXPECT_EQ(one.table.columns[c].texts, two.table.columns[c].texts) << one.table.columns[c].name;
  }
}

TEST(Sweep, ABadVariantIsReportedWithItsValuesBeforeAnythingRuns) {
  try {
    run_sweep(text_source(), {{"cluster.nodes", {"2", "0"}}}, 2);
    FAIL() << "accepted nodes: 0";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "cluster.nodes");
    EXPECT_NE(std::string(e.what()).find("[in sweep variant 1 (cluster.nodes=0)]"), std::string::npos) << e.what();
  }
}

// `dlsim check` validates variants one at a time and keeps none (issue 19: 10^6 variants held
// 5 GB); the error is the first bad variant's by index, whatever the thread count.
TEST(Sweep, CheckVariantsReportsTheFirstBadVariantOnAnyThreadCount) {
  std::vector<std::vector<std::string>> variants;
  for (int n = 1; n <= 40; ++n) variants.push_back({"cluster.nodes=" + std::to_string(n == 17 || n == 30 ? 0 : n)});
  for (int threads : {1, 2, 4}) {
    try {
      check_variants(text_source(), variants, threads);
      ADD_FAILURE() << "accepted a bad variant";
    } catch (const ConfigError& e) {
      EXPECT_NE(e.message().find("[in sweep variant 16 (cluster.nodes=0)]"), std::string::npos) << e.what();
    }
  }
  variants[16] = {"cluster.nodes=17"};
  variants[29] = {"cluster.nodes=30"};
  EXPECT_NO_THROW(check_variants(text_source(), variants, 2));
}

TEST(Sweep, ASetInterruptFlagStopsItWithInterrupted) {
  sim::InterruptFlag flag{true};
  EXPECT_THROW(run_sweep(text_source(), {{"workload.precision", {"fp16", "fp32"}}}, 2, &flag), sim::Interrupted);
}

}  // namespace
}  // namespace dlsim::experiment
