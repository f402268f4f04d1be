// workload.plan and sweep.plan: the plan derived per node count, errors located at the plan key
// that decides them, memory rejection with the breakdown, sweeps over plans, a model defined in
// the scenario, and the trace written by a run.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/results.hpp"
#include "models/zoo.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// GPT-3 1.3B (24 layers) on p4d nodes with a plan.
std::string gpt_scenario(const std::string& plan, int nodes = 2, const std::string& batch = "{global: 64}") {
  return "cluster:\n  instance: aws/p4d.24xlarge\n  nodes: " + std::to_string(nodes) +
         "\nworkload:\n  model: gpt3-1.3b\n  sequence_length: 2048\n  precision: bf16\n  optimizer: adam\n"
         "  batch: " + batch + "\n  iterations: 100\n" + plan;
}

Scenario load(const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_scenario_text(text, "plan.yaml", sets);
}

ConfigError error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load(text, sets);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError({"", 0, 0}, "", "");
}

TEST(PlanSection, DataParallelSizeAndMicroBatchesAreDerivedPerNodeCount) {
  const Scenario s = load(gpt_scenario("  plan: {tensor: 4, pipeline: 2, micro_batch_size: 2}\nsweep:\n  nodes: [2, 4]\n"));
  const models::ParallelPlan two = s.plan_for(2);
  EXPECT_EQ(two.data, 2);             // 16 GPUs / (4 x 2)
  EXPECT_EQ(two.micro_batches, 16);   // 64 / 2 replicas / 2 per micro-batch
  const models::ParallelPlan four = s.plan_for(4);
  EXPECT_EQ(four.data, 4);
  EXPECT_EQ(four.micro_batches, 8);
  EXPECT_EQ(four.tensor, 4);
  EXPECT_EQ(four.precision, models::Precision::bf16);
}

TEST(PlanSection, ErrorsPointAtThePlanKeyThatDecidesThem) {
  {
    const std::string text = gpt_scenario("  plan: {pipeline: 32}\n", 4);  // 32 GPUs, 24 layers
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path(), "workload.plan.pipeline");
    EXPECT_EQ(e.where().line, test::position_of(text, "32}").first);
    EXPECT_NE(e.message().find("24 blocks"), std::string::npos) << e.what();
  }
  {
    const std::string text = gpt_scenario("  plan: {pipeline: 4, stage_layers: [6, 6, 6, 7]}\n", 4);
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path(), "workload.plan.stage_layers");
    EXPECT_NE(e.message().find("adds up to 25 layers"), std::string::npos) << e.what();
  }
  {
    const std::string text = gpt_scenario("  plan: {pipeline: 4, stage_layers: [6, 6, -1, 7]}\n", 4);
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path(), "workload.plan.stage_layers[2]");
    EXPECT_EQ(e.where().column, test::position_of(text, "-1,").second);
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {tensor: 8, tp_comm_overlap: true}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan.tp_comm_overlap");
    EXPECT_NE(e.message().find("needs sequence_parallel: true"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {first_stage_layers: 5}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan.first_stage_layers");
    EXPECT_NE(e.message().find("needs pipeline >= 2"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {pipeline: 4, stage_layers: [6, 6, 6, 6], account_for_loss: true}\n", 4));
    EXPECT_EQ(e.key_path(), "workload.plan.stage_layers");
    EXPECT_NE(e.message().find("drop first/last_stage_layers"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {tensor: 3}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan.tensor");
    EXPECT_NE(e.message().find("does not divide the 16 accelerators"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {tensr: 2}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan.tensr");
    EXPECT_NE(e.message().find("did you mean 'tensor'"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {order: [tensor, data, tensor]}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan.order[2]");
    EXPECT_NE(e.message().find("appears twice"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {pipeline: 2, micro_batches: 3}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan.micro_batches");
    EXPECT_NE(e.message().find("do not split"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(gpt_scenario("  plan: {schedule: interleaved-1f1b, pipeline: 2}\n"));
    EXPECT_EQ(e.key_path(), "workload.plan");  // virtual_stages is not written: blame the plan mapping
    EXPECT_NE(e.message().find("virtual_stages >= 2"), std::string::npos) << e.what();
  }
}

TEST(PlanSection, ZeroBubbleScheduleIsReadAndItsRestrictionsAreLocated) {
  const Scenario s = load(gpt_scenario("  plan: {pipeline: 4, schedule: zb-h1}\n"));
  EXPECT_EQ(s.plan_for(2).schedule, models::PipelineSchedule::zb_h1);
  // {plan, the key blamed, the value's text (located there), a piece of the message}
  const std::vector<std::array<std::string, 4>> bad = {
      {"{pipeline: 4, schedule: zb-h1, virtual_stages: 2}", "virtual_stages", "2}", "zb-h1 runs one model chunk per rank"},
      {"{schedule: zb-h1, zero_stage: 3}", "schedule", "zb-h1,", "use zero_stage 0, 1 or 2"},
      {"{schedule: zb-h2}", "schedule", "zb-h2", "zb-h1"},
  };
  for (const auto& [plan, key, value, why] : bad) {
    const std::string text = gpt_scenario("  plan: " + plan + "\n");
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path(), "workload.plan." + key) << plan;
    EXPECT_EQ(e.where().line, test::position_of(text, value).first) << plan;
    EXPECT_EQ(e.where().column, test::position_of(text, value).second) << plan;
    EXPECT_NE(e.message().find(why), std::string::npos) << e.what();
  }
}

TEST(PlanSection, AModelThatDoesNotFitIsRejectedWithItsBreakdown) {
  // GPT-3 175B data-parallel only on one node of A100-80GB.
  const std::string text =
      "cluster:\n  instance: azure/Standard_ND96amsr_A100_v4\nworkload:\n  model: gpt3-175b\n  precision: fp16\n"
      "  optimizer: adam\n  batch: {global: 8}\n  iterations: 1\n  plan: {data: 8}\n";
  const ConfigError e = error_of(text);
  EXPECT_EQ(e.key_path(), "workload.plan");
  for (const char* part : {"does not fit in A100-80GB memory", "weights", "optimizer state", "activations", "has 74.51 GiB"}) {
    EXPECT_NE(e.message().find(part), std::string::npos) << part << " missing: " << e.what();
  }
  // Megatron's plan for it (tensor 8, pipeline 16, full recomputation) fits on 128 such nodes.
  const Scenario ok = load(
      "cluster:\n  instance: azure/Standard_ND96amsr_A100_v4\n  nodes: 128\nworkload:\n  model: gpt3-175b\n"
      "  precision: fp16\n  optimizer: adam\n  batch: {global: 1536}\n  iterations: 1\n"
      "  plan: {tensor: 8, pipeline: 16, micro_batch_size: 1, recompute: full}\n");
  EXPECT_EQ(ok.plan_for(128).data, 8);
}

TEST(PlanSection, SweepOverPlansGivesARowPerNodeCountAndPlan) {
  const std::string text = gpt_scenario(
      "sweep:\n  nodes: [1, 2]\n  plan:\n    - {recompute: full}\n    - {tensor: 8, micro_batch_size: 1}\n"
      "    - {pipeline: 4, micro_batch_size: 1}\n",
      1, "{global: 16}");
  const Scenario s = load(text);
  const Results r = run(s);
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(r.rows[0].plan, "d8 m1x2 rc-full");
  EXPECT_EQ(r.rows[1].plan, "d1 t8 m16x1");
  EXPECT_EQ(r.rows[2].plan, "d2 p4 m8x1 1f1b");
  EXPECT_EQ(r.rows[3].nodes, 2);
  EXPECT_GT(r.rows[2].pipeline_bubble_s, 0);
  EXPECT_GT(r.rows[1].tensor_comm_s, 0);
  EXPECT_EQ(r.rows[0].tensor_comm_s, 0);
  for (const ResultRow& row : r.rows) {
    EXPECT_GT(row.mfu, 0) << row.plan;
    EXPECT_LT(row.mfu, 1) << row.plan;
    EXPECT_GT(row.memory_bytes, 0) << row.plan;
  }
  // A plan inside the sweep that cannot split the model is an infeasible row, located there
  // (issue 20: one bad point does not abort a sweep); alone it is the error.
  const Scenario bad = load(gpt_scenario("sweep:\n  plan:\n    - {}\n    - {tensor: 3}\n", 2, "{global: 16}"));
  ASSERT_EQ(bad.infeasible.size(), 1u);
  EXPECT_EQ(bad.infeasible[0].plan_index, 1);
  EXPECT_EQ(bad.infeasible[0].key_path, "sweep.plan[1].tensor");
  EXPECT_GT(bad.infeasible[0].where.line, 0);
  const ConfigError e = error_of(gpt_scenario("sweep:\n  plan:\n    - {tensor: 3}\n", 2, "{global: 16}"));
  EXPECT_EQ(e.key_path(), "sweep.plan[0].tensor");
}

TEST(PlanSection, ADefinedTransformerRunsLikeTheZooModelOfTheSameShape) {
  const std::string zoo = gpt_scenario("  plan: {tensor: 2}\n", 2, "{global: 16}");
  std::string defined = zoo;
  const std::string zoo_lines = "model: gpt3-1.3b\n  sequence_length: 2048\n";
  defined.replace(defined.find(zoo_lines), zoo_lines.size(),
                  "model:\n    name: my-gpt\n    transformer: {layers: 24, hidden: 2048, heads: 16, vocab: 50257, "
                  "sequence_length: 2048, dropout: true}\n");
  const Results a = run(load(zoo));
  const Results b = run(load(defined));
  ASSERT_EQ(a.rows.size(), 1u);
  ASSERT_EQ(b.rows.size(), 1u);
  EXPECT_EQ(a.rows[0].iteration_s, b.rows[0].iteration_s);
  EXPECT_EQ(a.rows[0].memory_bytes, b.rows[0].memory_bytes);
  EXPECT_EQ(load(defined).workload.model_name, "my-gpt");
}

TEST(PlanSection, UnevenStagesRunAndAreSpelledOut) {
  // 24 layers over 5 stages (a count that does not divide), and as listed.
  const Results even = run(load(gpt_scenario("  plan: {pipeline: 5}\n", 5, "{global: 80}")));
  EXPECT_NE(even.resolved_yaml.find("account_for_loss: false"), std::string::npos) << even.resolved_yaml;
  const Results listed = run(load(gpt_scenario("  plan: {pipeline: 5, stage_layers: [2, 8, 6, 4, 4]}\n", 5, "{global: 80}")));
  EXPECT_NE(listed.resolved_yaml.find("stage_layers: [2, 8, 6, 4, 4]"), std::string::npos) << listed.resolved_yaml;
  // The slowest stage sets the pace: 8 layers on one stage is slower than 5 (and the head) on each.
  ASSERT_EQ(even.rows.size(), 1u);
  ASSERT_EQ(listed.rows.size(), 1u);
  EXPECT_LT(listed.rows[0].samples_per_s, even.rows[0].samples_per_s);
}

TEST(PlanSection, ContextParallelismIsAnAxisOfItsOwn) {
  // 16 GPUs = tensor 2 x context 4 x data 2; a three-axis order gets context just outside tensor.
  const Scenario s = load(gpt_scenario("  plan: {tensor: 2, sequence_parallel: true, context: 4, order: [tensor, pipeline, data]}\n"));
  const models::ParallelPlan p = s.plan_for(2);
  EXPECT_EQ(p.context, 4);
  EXPECT_EQ(p.data, 2);
  EXPECT_EQ(p.order, (std::array{models::Axis::tensor, models::Axis::context, models::Axis::pipeline, models::Axis::data}));
  EXPECT_NE(describe_plan(p).find(" c4"), std::string::npos) << describe_plan(p);
  const Results r = run(s);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_GE(r.rows[0].context_comm_s, 0);
  EXPECT_NE(r.resolved_yaml.find("context: 4"), std::string::npos) << r.resolved_yaml;
  EXPECT_NE(r.resolved_yaml.find("order: [tensor, context, pipeline, data]"), std::string::npos) << r.resolved_yaml;
  // Four axes in any order.
  const Scenario outer = load(gpt_scenario("  plan: {tensor: 2, context: 4, order: [tensor, data, pipeline, context]}\n"));
  EXPECT_EQ(outer.plan_for(2).order[3], models::Axis::context);
  {
    const std::string text = gpt_scenario("  plan: {tensor: 2, context: 4, order: [tensor, sequence, data]}\n");
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path(), "workload.plan.order[1]");
    EXPECT_NE(e.message().find("allowed: tensor, context, pipeline, data"), std::string::npos) << e.what();
  }
  {
    // 2048 tokens do not split into 2 x 3 chunks (and 3 does not divide 16 GPUs either way).
    const std::string text = gpt_scenario("  plan: {tensor: 1, context: 3, data: 5}\n", 2, "{global: 60}");
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path().rfind("workload.plan.", 0), 0u) << e.what();
  }
}

TEST(PlanSection, ResolvedScenarioSpellsOutThePlan) {
  const Results r = run(load(gpt_scenario("  plan: {tensor: 2, recompute: selective}\n")));
  EXPECT_NE(r.resolved_yaml.find("recompute: selective"), std::string::npos) << r.resolved_yaml;
  EXPECT_NE(r.resolved_yaml.find("tensor: 2"), std::string::npos);
  EXPECT_NE(r.resolved_yaml.find("data: derived"), std::string::npos);
}

TEST(PlanSection, TraceIsRecordedOnlyWhenAsked) {
  const Scenario without = load(gpt_scenario("  plan: {pipeline: 2}\n"));
  EXPECT_TRUE(run(without).traces.empty());
  const Scenario with = load(gpt_scenario("  plan: {pipeline: 2}\noutput:\n  trace: t.json\n"));
  const Results r = run(with);
  ASSERT_EQ(r.traces.size(), 1u);
  // 2 pipeline ranks x (compute, tensor/expert, pipeline to next, to previous, data-parallel).
  EXPECT_EQ(r.traces[0].lanes.size(), 2u * 5u);
}

}  // namespace
}  // namespace dlsim::experiment
