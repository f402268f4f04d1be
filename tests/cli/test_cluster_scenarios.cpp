// The cluster scenarios through the dlsim command: spot versus on-demand with checkpointing,
// and scheduling policies on a Philly-shaped trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

}  // namespace
}  // namespace dlsim::cli_test
