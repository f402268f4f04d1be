// Sweeps never abort on one infeasible point (issue 20): a plan that does not fit in memory or
// does not split the model over a node count is a row with its reason; a scenario (or a sweep)
// where nothing can run is still the located error.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/sweep.hpp"

namespace dlsim::experiment {
namespace {

// GPT-3 2.7B in fp16 with Adam on 16 GB V100s: plain data parallelism does not fit, tensor 8 does.
const std::string kBase = R"(cluster:
  instance: aws/p3.16xlarge
workload:
  model: gpt3-2.7b
  sequence_length: 512
  precision: fp16
  optimizer: adam
  batch: {global: 8}
  iterations: 10
)";

const TableColumn& column(const Table& t, const std::string& name) {
  for (const TableColumn& c : t.columns) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no column " + name);
}

TEST(InfeasiblePoints, APlanThatDoesNotFitIsARowWithItsReason) {
  const Scenario s = load_scenario_text(kBase + "sweep:\n  plan: [{data: 8}, {tensor: 8}]\n", "two-plans.yaml");
  ASSERT_EQ(s.infeasible.size(), 1u);
  const Results r = run(s);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].status, "infeasible");
  EXPECT_NE(r.rows[0].reason.find("does not fit in V100-16GB memory"), std::string::npos) << r.rows[0].reason;
  EXPECT_EQ(r.rows[0].plan, "d8 m1x1");
  EXPECT_EQ(r.rows[1].status, "ok");
  EXPECT_GT(r.rows[1].samples_per_s, 0);
  EXPECT_TRUE(std::isnan(column(r.table, "samples_per_second").numbers[0]));
  EXPECT_FALSE(std::isnan(column(r.table, "samples_per_second").numbers[1]));
  EXPECT_EQ(column(r.table, "status").texts, (std::vector<std::string>{"infeasible", "ok"}));
  EXPECT_EQ(column(r.table, "reason").texts[1], "");
  EXPECT_EQ(r.rows[1].scaling_efficiency, 1.0);
}

TEST(InfeasiblePoints, APlanThatDoesNotSplitANodeCountIsARow) {
  // data 1 x tensor 8 is 8 accelerators: right on one node, not on two.
  const Scenario s = load_scenario_text(kBase + "  plan: {data: 1, tensor: 8}\nsweep:\n  nodes: [1, 2]\n", "nodes.yaml");
  const Results r = run(s);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].status, "ok");
  EXPECT_EQ(r.rows[1].status, "infeasible");
  EXPECT_NE(r.rows[1].reason.find("2 nodes, 16 accelerators"), std::string::npos) << r.rows[1].reason;
}

TEST(InfeasiblePoints, NothingFeasibleIsStillTheLocatedError) {
  for (const std::string& extra : {std::string("  plan: {data: 8}\n"), std::string("sweep:\n  plan: [{data: 8}, {data: 8, zero_stage: 1}]\n")}) {
    try {
      load_scenario_text(kBase + extra, "none.yaml");
      ADD_FAILURE() << "accepted " << extra;
    } catch (const ConfigError& e) {
      EXPECT_GT(e.where().line, 0) << e.what();
      EXPECT_NE(e.message().find("does not fit"), std::string::npos) << e.what();
    }
  }
}

TEST(InfeasiblePoints, ASweepVariantThatCannotRunIsRows) {
  SweepSource source;
  source.text = kBase + "  plan: {tensor: 8}\n";
  source.name = "variants.yaml";
  const SweepResults r = run_sweep_variants(source, {{"workload.plan.tensor=1"}, {"workload.plan.tensor=8"}}, 2);
  const TableColumn& status = column(r.table, "status");
  EXPECT_EQ(status.texts, (std::vector<std::string>{"infeasible", "ok"}));
  EXPECT_NE(column(r.table, "reason").texts[0].find("does not fit"), std::string::npos);
  EXPECT_TRUE(std::isnan(column(r.table, "iteration_time").numbers[0]));
  // No variant can run: the first one's located error.
  try {
    run_sweep_variants(source, {{"workload.plan.tensor=1"}, {"workload.plan.tensor=2"}}, 2);
    ADD_FAILURE() << "a sweep where nothing fits ran";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("[in sweep variant 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
