// workload.input in training scenarios: the loader's workers from the instance's vCPUs, the
// step paced by its input, and located errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "experiment/load.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {
namespace {

std::string resnet(const std::string& instance, const std::string& input) {
  return "cluster: {instance: " + instance + ", nodes: 1}\n"
         "workload:\n"
         "  model: resnet50\n"
         "  precision: fp16\n"
         "  batch: {per_device: 256}\n"
         "  iterations: 10\n"
         "  input: " + input + "\n";
}

TEST(InputPipelineScenario, AFourVcpuInstanceStarvesItsGpuAndEightFeedIt) {
  const Scenario four = load_scenario_text(resnet("aws/g5.xlarge", "{loader: pytorch}"), "s.yaml");
  EXPECT_EQ(four.workload.input.workers, 4) << "default: the node's vCPUs";
  const ResultRow starved = run(four).rows.at(0);
  const ResultRow alone = run(load_scenario_text(resnet("aws/g5.xlarge", "{loader: none}"), "s.yaml")).rows.at(0);
  ASSERT_GT(alone.samples_per_s, 4 * 117.0) << "the A10G alone trains faster than 4 PIL workers load";
  EXPECT_NEAR(starved.samples_per_s, 4 * 117.0, 1e-6) << "input-bound: the loader's rate";
  EXPECT_NEAR(starved.input_stall_s, starved.iteration_s - alone.iteration_s, 1e-9);
  EXPECT_NEAR(starved.input_s, 256 / (4 * 117.0), 1e-12);
  EXPECT_LT(starved.mfu, alone.mfu);
  EXPECT_EQ(starved.bound, "input pipeline");
  EXPECT_EQ(alone.bound, "compute");
  const ResultRow eight = run(load_scenario_text(resnet("aws/g5.2xlarge", "{loader: pytorch}"), "s.yaml")).rows.at(0);
  EXPECT_EQ(eight.input_stall_s, 0) << "8 workers load 936 images/s, more than the step uses";
  EXPECT_DOUBLE_EQ(eight.samples_per_s, alone.samples_per_s);
  const ResultRow serial = run(load_scenario_text(resnet("aws/g5.2xlarge", "{loader: pytorch, prefetch: 0}"), "s.yaml")).rows.at(0);
  EXPECT_NEAR(serial.iteration_s, alone.iteration_s + 256 / (8 * 117.0), 1e-9) << "no prefetch: load, then step";
}

TEST(InputPipelineScenario, BadLoaderSettingsAreLocated) {
  const auto key_of = [](const std::string& text) {
    try {
      load_scenario_text(text, "s.yaml");
    } catch (const ConfigError& e) {
      return e.key_path();
    }
    return std::string("(accepted)");
  };
  const std::string unrecorded = "amd/instinct-mi300x-platform";  // its vCPUs are not in the catalog (no fixed host)
  EXPECT_EQ(key_of(resnet(unrecorded, "{loader: pytorch}")), "workload.input.workers");
  EXPECT_EQ(key_of(resnet(unrecorded, "{loader: pytorch, workers: 4}")), "(accepted)");
  EXPECT_EQ(key_of(resnet("aws/g5.xlarge", "{loader: custom}")), "workload.input.samples_per_worker");
  EXPECT_EQ(key_of(resnet("aws/g5.xlarge", "{loader: pytorch, samples_per_worker: 50}")), "workload.input.samples_per_worker");
  EXPECT_EQ(key_of(resnet("aws/g5.xlarge", "{loader: pil}")), "workload.input.loader");
  EXPECT_EQ(key_of(resnet("aws/g5.xlarge", "{loader: pytorch, prefetch: -1}")), "workload.input.prefetch");
  // A plan search does not search the loader yet: refused, not silently mis-sized.
  std::string plan = resnet("aws/g5.xlarge", "{loader: pytorch}") + "plan: {instances: [aws/g5.xlarge, aws/g5.2xlarge], nodes: [1]}\n";
  plan.replace(plan.find("per_device"), 10, "global");
  EXPECT_EQ(key_of(plan), "workload.input");
}

}  // namespace
}  // namespace dlsim::experiment
