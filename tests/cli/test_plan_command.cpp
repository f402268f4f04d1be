// `dlsim plan`: the printed front, every candidate in the CSV file, exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

const char* const kScenario = R"(cluster:
  instance: aws/p3.16xlarge
workload:
  model: gpt2
  sequence_length: 512
  precision: fp16
  optimizer: adam
  batch: {global: 16}
  data: {tokens: 1e9, epochs: 1}
plan:
  objective: cheapest
  nodes: [1]
)";

TEST(PlanCommand, PrintsTheFrontAndWritesEveryCandidate) {
  const auto dir = fresh_folder("plan");
  std::ofstream(dir / "plan.yaml") << kScenario;
  const CommandResult r = run_dlsim(dir, "plan plan.yaml -j 2 --csv plan.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"candidates: ", "enumerated", "pruned by the lower bound", "Pareto front", "cheapest: aws/p3.16xlarge x ",
                           "wrote plan.csv"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " missing:\n" << r.out;
  }
  const std::string csv = slurp(dir / "plan.csv");
  EXPECT_EQ(csv.rfind("instance,nodes,accelerators,plan,capacity,status,reason,pareto,best", 0), 0u) << csv.substr(0, 200);
  EXPECT_NE(csv.find(",feasible,"), std::string::npos);
}

TEST(PlanCommand, BadInputAndNoAnswerExitTwoWritingNothing) {
  const auto dir = fresh_folder("plan-bad");
  std::ofstream(dir / "plan.yaml") << kScenario;
  const CommandResult typo = run_dlsim(dir, "plan plan.yaml --set plan.objectiv=fastest --csv out.csv");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("plan.objectiv"), std::string::npos) << typo.err;
  const CommandResult late = run_dlsim(dir, "plan plan.yaml --set plan.deadline=1s --csv out.csv");
  EXPECT_EQ(late.exit_code, 2);
  EXPECT_NE(late.err.find("miss the deadline"), std::string::npos) << late.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.csv"));
  const CommandResult missing = run_dlsim(dir, "plan");
  EXPECT_EQ(missing.exit_code, 2);
  // A training scenario without a plan: section is not a plan search.
  const CommandResult training = run_dlsim(dir, "plan '" + scenario_path("quickstart.yaml") + "'");
  EXPECT_EQ(training.exit_code, 2);
  EXPECT_NE(training.err.find("no plan: section"), std::string::npos) << training.err;
  // And `dlsim run` points at `dlsim plan`.
  const CommandResult run = run_dlsim(dir, "run plan.yaml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("dlsim plan"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace dlsim::cli_test
