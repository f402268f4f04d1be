// The cluster scenarios through the dlsim command: spot versus on-demand with checkpointing,
// scheduling policies on a Philly-shaped trace, and auto-scaling policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

TEST(ClusterScenarios, SpotVersusOnDemandTable) {
  const auto dir = fresh_folder("spot");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("spot-vs-on-demand.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row : {"on-demand", "spot 12h, no checkpoints", "spot 48h, Young/Daly", "spot 192h, every 4 h"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing:\n" << r.out;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "results/spot-vs-on-demand.h5"));
  const std::string jobs = slurp(dir / "results/spot-vs-on-demand-jobs.csv");
  EXPECT_EQ(jobs.rfind("variant,job,gpus,state,", 0), 0u) << jobs.substr(0, 200);
  const CommandResult check = run_dlsim(dir, "check '" + scenario_path("spot-vs-on-demand.yaml") + "'");
  EXPECT_NE(check.out.find("ok (cluster scenario: 1 pool, 1 jobs, 13 variants)"), std::string::npos) << check.out;
}

TEST(ClusterScenarios, PoliciesOnATraceAndABadSetNamesTheKey) {
  const auto dir = fresh_folder("policies");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("trace-policies.yaml") + "' --set trace.jobs=500");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("las+backfill"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("500/500"), std::string::npos) << r.out;
  const CommandResult bad = run_dlsim(dir, "run '" + scenario_path("trace-policies.yaml") + "' --set scheduler.placement=random");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("scheduler.placement"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("topology-aware"), std::string::npos) << bad.err;
}

// Issue 19: the recipe in trace-policies.yaml's header (the real Philly jobs) works as written.
TEST(ClusterScenarios, TracePoliciesHeaderRecipeForThePhillyTraceWorks) {
  const std::string scenario = scenario_path("trace-policies.yaml");
  const std::string text = slurp(scenario);
  const std::string marker = "#   --set '";
  const auto at = text.find(marker);
  ASSERT_NE(at, std::string::npos) << "the header states no --set recipe";
  const std::string recipe = text.substr(at + 4, text.find('\n', at) - at - 4);
  if (!std::filesystem::exists(std::string(DLSIM_SOURCE_DIR) + "/../shared/data/traces/philly_pollux/philly.csv")) {
    GTEST_SKIP() << "../shared/data/traces absent";
  }
  const auto dir = fresh_folder("philly-recipe");
  const CommandResult r = run_dlsim(dir, "check '" + scenario + "' " + recipe);
  EXPECT_EQ(r.exit_code, 0) << recipe << "\n" << r.err;
  EXPECT_NE(r.out.find("4000 jobs"), std::string::npos) << r.out;
}

TEST(ClusterScenarios, TopologyPlacementComparesThreePlacementsOfModelJobs) {
  const auto dir = fresh_folder("topology");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("topology-placement.yaml") + "' --set trace.jobs=120");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row : {"placement=spread", "placement=packed", "placement=topology-aware", "comm GPU-h", "job USD"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing:\n" << r.out;
  }
  EXPECT_NE(r.out.find("120/120"), std::string::npos) << r.out;
  const std::string jobs = slurp(dir / "results/topology-placement-jobs.csv");
  EXPECT_NE(jobs.substr(0, jobs.find('\n')).find(",network_time,"), std::string::npos) << jobs.substr(0, 300);
}

// One CSV line split into cells ("..." cells may hold commas).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.emplace_back();
    else cells.back() += c;
  }
  return cells;
}

TEST(ClusterScenarios, AutoscalingPoliciesTradeCostAgainstQueueing) {
  const auto dir = fresh_folder("autoscaling");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("autoscaling.yaml") + "' --csv table.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream csv(slurp(dir / "table.csv"));
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = csv_cells(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::map<std::string, std::vector<std::string>> rows;
  while (std::getline(csv, line)) {
    const auto cells = csv_cells(line);
    rows[cells[0]] = cells;
  }
  const auto value = [&](const std::string& variant, const std::string& name) {
    EXPECT_TRUE(rows.count(variant)) << variant << " missing:\n" << r.out;
    return rows.count(variant) ? std::stod(rows[variant][column(name)]) : 0.0;
  };
  ASSERT_EQ(rows.size(), 9u) << r.out;
  for (const auto& [variant, cells] : rows) EXPECT_EQ(value(variant, "done"), 2000) << variant;
  // A fixed pool at the auto-scalers' maximum holds every node all the time: each auto-scaled
  // variant (never above that maximum) costs less.
  for (const auto& [variant, cells] : rows) {
    if (variant.rfind("fixed", 0) != 0) {
      EXPECT_LT(value(variant, "total_cost"), value("fixed 24 nodes", "total_cost")) << variant;
    }
  }
  // Predictive requests, in any state, at least the nodes the reactive rule requests plus
  // headroom for the forecast arrivals, and releases no more: with the same idle timeout,
  // cool-down and max it holds more free GPUs when jobs arrive, so fewer of them wait.
  EXPECT_LT(value("predictive, window 1 h, idle 30 min", "mean_queueing"), value("autoscale, idle 30 min", "mean_queueing"));
  // A lower utilization target keeps more GPUs per busy one: more cost, less queueing.
  EXPECT_GT(value("utilization 0.5, idle 30 min", "total_cost"), value("utilization 0.8, idle 30 min", "total_cost"));
  EXPECT_LT(value("utilization 0.5, idle 30 min", "mean_queueing"), value("utilization 0.8, idle 30 min", "mean_queueing"));
}

}  // namespace
}  // namespace dlsim::cli_test
