// The training scenarios of issue 4 through the dlsim command: GPT-3 175B with Megatron's plan,
// Llama-2-70B on H100, BERT-large data versus model parallelism; memory reports and rejections;
// the Perfetto trace files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

TEST(TrainingScenarios, Gpt3MegatronPlanFitsAndWithoutRecomputationDoesNot) {
  const auto dir = fresh_folder("gpt3-check");
  const CommandResult ok = run_dlsim(dir, "check '" + scenario_path("gpt3-175b-a100.yaml") + "'");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("128 nodes, d8 t8 p16 m192x1 1f1b rc-full: needs"), std::string::npos) << ok.out;
  const CommandResult bad = run_dlsim(dir, "check '" + scenario_path("gpt3-175b-a100.yaml") + "' --set workload.plan.recompute=none");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("workload.plan"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("does not fit in A100-80GB memory"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("activations"), std::string::npos) << bad.err;
  // Data parallelism alone on one node: rejected before any simulation, nothing written.
  const CommandResult dp = run_dlsim(dir, "run '" + scenario_path("gpt3-175b-a100.yaml") +
                                              "' --set cluster.nodes=1 --set workload.plan.tensor=1 --set workload.plan.pipeline=1"
                                              " --set workload.batch.global=8");
  EXPECT_EQ(dp.exit_code, 2);
  EXPECT_NE(dp.err.find("does not fit"), std::string::npos) << dp.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "results"));
}

TEST(TrainingScenarios, Gpt3RunPrintsTheBreakdownAndWritesATrace) {
  const auto dir = fresh_folder("gpt3-run");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("gpt3-175b-a100.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"compute", "recompute", "tensor-parallel comm", "pipeline bubble", "tokens/s", "time to train"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " missing:\n" << r.out;
  }
  const auto trace = dir / "results/gpt3-175b-a100-iteration.json";
  ASSERT_TRUE(std::filesystem::exists(trace)) << r.out;
  const std::string text = slurp(trace);
  EXPECT_EQ(text.rfind("{\"traceEvents\":", 0), 0u);
  EXPECT_NE(text.find("pipeline rank 15"), std::string::npos);
}

// A device whose collectives dlsim idealizes says so in the run's header; others do not.
TEST(TrainingScenarios, AnMi300xRunSaysItsCollectivesAreIdeal) {
  const auto dir = fresh_folder("mi300x-run");
  const auto run_on = [&](const std::string& instance) {
    return run_dlsim(dir, "run '" + scenario_path("llama2-70b-h100.yaml") + "' --set cluster.instance=" + instance +
                              " --set 'sweep.nodes=[4]' --set output.results=null --set output.trace=null");
  };
  const CommandResult amd = run_on("amd/instinct-mi300x-platform");
  ASSERT_EQ(amd.exit_code, 0) << amd.err;
  EXPECT_NE(amd.out.find("note: MI300X collectives run as ideal phases at line rate (RCCL is not modelled)"), std::string::npos)
      << amd.out;
  const CommandResult b200 = run_on("nvidia/dgx-b200");
  ASSERT_EQ(b200.exit_code, 0) << b200.err;
  EXPECT_EQ(b200.out.find("note:"), std::string::npos) << b200.out;
}

TEST(TrainingScenarios, BertComparisonWritesARowAndATracePerPlan) {
  const auto dir = fresh_folder("bert-dp-mp");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("bert-large-dp-vs-mp.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* plan : {"d32 m1x8", "d32 m1x8 zero2", "d4 t8 m1x64", "d4 t8+sp m1x64", "d8 p4 m16x2 1f1b"}) {
    EXPECT_NE(r.out.find(plan), std::string::npos) << plan << " missing:\n" << r.out;
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(std::filesystem::exists(dir / ("results/bert-large-dp-vs-mp-plan" + std::to_string(i) + ".json")));
  }
  const std::string csv = slurp(dir / "results/bert-large-dp-vs-mp.csv");
  EXPECT_NE(csv.find("pipeline_bubble_time"), std::string::npos);
  EXPECT_NE(csv.find("memory_per_accelerator"), std::string::npos);
}

TEST(TrainingScenarios, LlamaSweepRuns) {
  const auto dir = fresh_folder("llama");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("llama2-70b-h100.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("d16 t8+sp p4 v2 m64x1 interleaved-1f1b rc-selective"), std::string::npos) << r.out;
}

// TPU v4 slices and pods: the scenario validates; a pod count that does not divide the slice
// exits 2 with the key and why, and nothing is written.
TEST(TrainingScenarios, TpuPodScenarioChecksAndRejectsBadPods) {
  const auto dir = fresh_folder("tpu-v4-pod");
  const CommandResult ok = run_dlsim(dir, "check '" + scenario_path("tpu-v4-pod.yaml") + "'");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const CommandResult bad = run_dlsim(dir, "run '" + scenario_path("tpu-v4-pod.yaml") + "' --set network.fabric.pods=3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("network.fabric"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("whole hosts of 4 chips"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "results"));
}

}  // namespace
}  // namespace dlsim::cli_test
