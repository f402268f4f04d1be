// workload.plan.zero and workload.plan.activation_checkpointing: the settings reach the plan with
// DeepSpeed's defaults, and every error is located at the key that decides it.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// GPT-3 1.3B on two p4d nodes with a plan.
std::string scenario(const std::string& plan) {
  return "cluster:\n  instance: aws/p4d.24xlarge\n  nodes: 2\n"
         "workload:\n  model: gpt3-1.3b\n  sequence_length: 2048\n  precision: bf16\n  optimizer: adam\n"
         "  batch: {global: 32}\n  iterations: 10\n  plan:\n" + plan;
}

TEST(ZeroPlanKeys, DefaultsAreDeepSpeedsAndKeysReachThePlan) {
  const models::ParallelPlan defaults = load_scenario_text(scenario("    zero_stage: 3\n"), "z.yaml").plan_for(2);
  EXPECT_EQ(defaults.zero.implementation, models::ZeroImplementation::deepspeed);
  EXPECT_EQ(defaults.zero.fetch, models::DeepSpeedFetch::coalesced);
  EXPECT_EQ(defaults.zero.prefetch_bucket_size, 5e7);
  EXPECT_EQ(defaults.zero.max_live_parameters, 1e9);
  EXPECT_EQ(defaults.zero.param_persistence_threshold, 1e5);
  EXPECT_EQ(defaults.zero.reduce_bucket_size, 5e8);
  EXPECT_FALSE(defaults.checkpointing.partition_activations);
  EXPECT_FALSE(defaults.checkpointing.cpu_checkpointing);

  const Scenario s = load_scenario_text(
      scenario("    zero_stage: 3\n    recompute: full\n    tensor: 2\n"
               "    zero: {fetch: per-parameter, prefetch_bucket_size: 2e7, param_persistence_threshold: 0}\n"
               "    activation_checkpointing: {partition_activations: true, contiguous_memory_optimization: true}\n"),
      "z.yaml");
  const models::ParallelPlan p = s.plan_for(2);
  EXPECT_EQ(p.zero.fetch, models::DeepSpeedFetch::per_parameter);
  EXPECT_EQ(p.zero.prefetch_bucket_size, 2e7);
  EXPECT_EQ(p.zero.param_persistence_threshold, 0);
  EXPECT_TRUE(p.checkpointing.partition_activations);
  EXPECT_TRUE(p.checkpointing.contiguous_memory_optimization);
  const Results r = run(s);
  EXPECT_NE(r.resolved_yaml.find("fetch: per-parameter"), std::string::npos) << r.resolved_yaml;
  EXPECT_NE(r.resolved_yaml.find("partition_activations: true"), std::string::npos);
  EXPECT_GT(r.rows.at(0).framework_overhead_s, 0);

  const models::ParallelPlan fsdp =
      load_scenario_text(scenario("    zero_stage: 3\n    zero: {implementation: fsdp, backward_prefetch: post}\n"), "z.yaml").plan_for(2);
  EXPECT_EQ(fsdp.zero.implementation, models::ZeroImplementation::fsdp);
  EXPECT_EQ(fsdp.zero.backward_prefetch, models::BackwardPrefetch::post);
}

using Case = test::KeyErrorCase;

class ZeroPlanKeyErrors : public ::testing::TestWithParam<Case> {};

TEST_P(ZeroPlanKeyErrors, AreLocatedAtTheKey) { test::expect_error_at(scenario(GetParam().edit), GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Plan, ZeroPlanKeyErrors,
    ::testing::Values(
        Case{"zero_without_stage_3", "    zero_stage: 2\n    zero: {fetch: coalesced}\n", "workload.plan.zero", "{fetch", "needs zero_stage: 3"},
        Case{"unknown_implementation", "    zero_stage: 3\n    zero: {implementation: megatron}\n", "workload.plan.zero.implementation",
             "megatron", "deepspeed"},
        Case{"unknown_fetch", "    zero_stage: 3\n    zero: {fetch: eager}\n", "workload.plan.zero.fetch", "eager", "per-parameter"},
        Case{"deepspeed_key_for_fsdp", "    zero_stage: 3\n    zero: {implementation: fsdp, prefetch_bucket_size: 1e7}\n",
             "workload.plan.zero.prefetch_bucket_size", "1e7", "DeepSpeed setting"},
        Case{"fsdp_key_for_deepspeed", "    zero_stage: 3\n    zero: {backward_prefetch: post}\n", "workload.plan.zero.backward_prefetch",
             "post", "FSDP setting"},
        Case{"negative_bucket", "    zero_stage: 3\n    zero: {reduce_bucket_size: -5}\n", "workload.plan.zero.reduce_bucket_size", "-5",
             "out of range"},
        Case{"unknown_zero_key", "    zero_stage: 3\n    zero: {stage3_prefetch_bucket_size: 1e7}\n",
             "workload.plan.zero.stage3_prefetch_bucket_size", "stage3_prefetch", "prefetch_bucket_size"},
        Case{"partition_without_recompute", "    tensor: 2\n    activation_checkpointing: {partition_activations: true}\n",
             "workload.plan.activation_checkpointing.partition_activations", "true", "needs plan.recompute: full"},
        Case{"cpu_with_selective", "    recompute: selective\n    activation_checkpointing: {cpu_checkpointing: true}\n",
             "workload.plan.activation_checkpointing.cpu_checkpointing", "true", "needs plan.recompute: full"},
        Case{"contiguous_without_partition", "    recompute: full\n    activation_checkpointing: {contiguous_memory_optimization: true}\n",
             "workload.plan.activation_checkpointing.contiguous_memory_optimization", "true", "needs partition_activations"},
        Case{"not_a_bool", "    recompute: full\n    activation_checkpointing: {cpu_checkpointing: maybe}\n",
             "workload.plan.activation_checkpointing.cpu_checkpointing", "maybe", ""}),
    test::case_name);

}  // namespace
}  // namespace dlsim::experiment
