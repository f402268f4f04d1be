// The planner (issue 20): pruning never changes the answer, reasons for every rejection, located
// errors for bad plan: keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/planner.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// GPT-2 small on one 8 x V100 node of two instance types: a few hundred plans.
const std::string kPlanScenario = R"(cluster:
  instance: aws/p3.16xlarge
workload:
  model: gpt2
  sequence_length: 1024
  precision: fp16
  optimizer: adam
  batch: {global: 8}
  data: {tokens: 1e9, epochs: 1}
plan:
  objective: cheapest
  instances: [aws/p3.16xlarge, aws/p3dn.24xlarge]
  nodes: [1]
)";

std::filesystem::path write_scenario(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("dlsim-test-planner-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / (name + ".yaml");
  std::ofstream(path) << text;
  return path;
}

PlanResults search(const std::string& name, const std::string& text, bool exhaustive, int threads = 2,
                   const std::vector<std::string>& sets = {}) {
  const auto scenarios = load_plan_scenarios(write_scenario(name, text).string(), sets);
  PlanOptions options;
  options.exhaustive = exhaustive;
  options.threads = threads;
  return search_plans(scenarios, options);
}

std::vector<std::string> labels_of(const PlanResults& r, const std::vector<std::size_t>& indices) {
  std::vector<std::string> out;
  for (std::size_t i : indices) out.push_back(r.candidates[i].instance + " x" + std::to_string(r.candidates[i].nodes) + " " + r.candidates[i].label);
  return out;
}

TEST(Planner, PrunedSearchFindsTheExhaustiveBestPointAndFront) {
  for (const char* objective : {"cheapest", "fastest"}) {
    const std::vector<std::string> sets{std::string("plan.objective=") + objective};
    const PlanResults all = search("exhaustive", kPlanScenario, true, 2, sets);
    const PlanResults pruned = search("pruned", kPlanScenario, false, 2, sets);
    ASSERT_TRUE(all.best && pruned.best);
    EXPECT_EQ(all.candidates.size(), pruned.candidates.size());
    EXPECT_EQ(labels_of(all, {*all.best}), labels_of(pruned, {*pruned.best})) << objective;
    EXPECT_EQ(labels_of(all, all.front), labels_of(pruned, pruned.front)) << objective;
    EXPECT_EQ(all.candidates[*all.best].row.cost_to_train, pruned.candidates[*pruned.best].row.cost_to_train);
    // Every candidate is accounted for, and the bound never exceeds a simulated time (every
    // plan that fits is simulated in the exhaustive run: pipelines, tensor parallelism,
    // interleaving, ZeRO). The bound from each plan's own kernels and pipeline path prunes.
    const PlanCounts& n = pruned.counts;
    EXPECT_EQ(n.no_fit + n.pruned + n.deadline + n.budget + n.feasible, n.enumerated);
    EXPECT_GT(n.pruned, 0u) << objective;
    EXPECT_LT(n.simulated, all.counts.simulated) << objective;
    EXPECT_EQ(all.counts.bound_violations, 0u);
    for (const PlanCandidate& c : all.candidates) {
      if (c.simulated) EXPECT_LE(c.bound_time_to_train_s, c.row.time_to_train_s) << c.label;
    }
    // Every pruned candidate's bound is beaten by a front point on both coordinates.
    for (const PlanCandidate& c : pruned.candidates) {
      if (c.status != "pruned") continue;
      EXPECT_NE(c.reason.find("beaten by"), std::string::npos) << c.reason;
    }
  }
}

// The bound holds where the program has context-parallel rings (their attention kernels counted)
// and sequence-parallel collectives on an H100 node with NVLS: a small decoder with fused
// attention and 8K-token sequences, every fitting plan simulated.
TEST(Planner, BoundNeverExceedsTheReplayWithContextParallelismAndNvls) {
  const std::string text = R"(cluster:
  instance: nvidia/dgx-h100
workload:
  model:
    name: small-decoder
    transformer: {attention: flash, layers: 4, hidden: 1024, heads: 16, kv_heads: 8, ffn: 4096, ffn_kind: swiglu,
                  vocab: 32000, sequence_length: 8192, tied_embeddings: false, positions: rotary, norm: rmsnorm,
                  bias: false, dropout: false}
  precision: bf16
  optimizer: adam
  batch: {global: 8}
  data: {tokens: 1e9, epochs: 1}
plan:
  objective: fastest
  instances: [nvidia/dgx-h100]
  nodes: [1]
)";
  const PlanResults all = search("bound-cp", text, true);
  std::size_t context = 0;
  for (const PlanCandidate& c : all.candidates) {
    if (!c.simulated) continue;
    context += c.plan.context > 1;
    EXPECT_LE(c.bound_iteration_s, c.row.iteration_s) << c.label;
  }
  EXPECT_GT(context, 0u);
  EXPECT_GT(all.counts.simulated, 50u);
  EXPECT_EQ(all.counts.bound_violations, 0u);
}

// Across nodes, with the model-parallel group filling each node, the bound counts the
// data-parallel traffic through the node's links: gradients once (ZeRO-0/1), every micro-batch
// (ZeRO-2), every ZeRO-3 gather and reduce-scatter of every micro-batch. It must still never
// exceed the replay, and it must be what makes tensor-8 ZeRO-3 plans far from free.
TEST(Planner, DataParallelTrafficBoundsNeverExceedTheReplayAcrossNodes) {
  const std::string text = R"(cluster:
  instance: aws/p4d.24xlarge
workload:
  model: gpt2-medium
  sequence_length: 1024
  precision: fp16
  optimizer: adam
  batch: {global: 32}
  data: {tokens: 1e9, epochs: 1}
plan:
  objective: fastest
  nodes: [2]
)";
  const PlanResults all = search("bound-zero", text, true);
  std::map<std::string, double> bound;  // tensor-8 plans over both nodes, by label
  for (const PlanCandidate& c : all.candidates) {
    if (!c.simulated) continue;
    EXPECT_LE(c.bound_iteration_s, c.row.iteration_s) << c.label;
    if (c.plan.tensor == 8 && c.plan.data == 2) bound[c.label] = c.bound_iteration_s;
  }
  EXPECT_EQ(all.counts.bound_violations, 0u);
  // 16 micro-batches of one sample: ZeRO-2 reduce-scatters the gradients 16 times through the
  // 400 Gbps NIC (16 x 8 GPUs x 44 MB x 1/2 / 50 GB/s = 0.23 s), ZeRO-1 once; ZeRO-3 gathers and
  // reduce-scatters as much at least. The compute alone bounds the iteration at 0.12 s.
  ASSERT_TRUE(bound.count("d2 t8+sp m16x1 zero1") && bound.count("d2 t8+sp m16x1 zero2") && bound.count("d2 t8+sp m16x1 zero3"));
  EXPECT_NEAR(bound["d2 t8+sp m16x1 zero1"], 0.115, 0.01);
  EXPECT_NEAR(bound["d2 t8+sp m16x1 zero2"], 0.2275, 0.01);
  EXPECT_GE(bound["d2 t8+sp m16x1 zero3"], bound["d2 t8+sp m16x1 zero2"]);
}

TEST(Planner, ResultsDoNotDependOnTheThreadCount) {
  const PlanResults one = search("threads1", kPlanScenario, false, 1);
  const PlanResults two = search("threads2", kPlanScenario, false, 2);
  ASSERT_EQ(one.candidates.size(), two.candidates.size());
  for (std::size_t i = 0; i < one.candidates.size(); ++i) {
    EXPECT_EQ(one.candidates[i].status, two.candidates[i].status);
    if (one.candidates[i].simulated) EXPECT_EQ(one.candidates[i].row.iteration_s, two.candidates[i].row.iteration_s);
  }
  EXPECT_EQ(one.best, two.best);
}

TEST(Planner, SpaceHoldsOnlyValidPlansAndTheStatedAxes) {
  const Scenario s = load_plan_scenarios(write_scenario("space", kPlanScenario).string()).front();
  const auto plans = enumerate_plans(s, 2);  // 16 accelerators
  ASSERT_FALSE(plans.empty());
  bool pipeline = false, tensor = false, interleaved = false, zero3 = false;
  for (const models::ParallelPlan& p : plans) {
    EXPECT_EQ(p.devices(), 16);
    EXPECT_EQ(p.global_batch(), 8);
    EXPECT_EQ(p.sequence_parallel, p.tensor > 1);
    if (p.zero_stage >= 2) EXPECT_EQ(p.pipeline, 1);
    EXPECT_EQ(p.context, 1);  // 1024 tokens: no context parallelism
    pipeline |= p.pipeline > 1;
    tensor |= p.tensor == 8;
    interleaved |= p.virtual_stages == 4;
    zero3 |= p.zero_stage == 3;
  }
  EXPECT_TRUE(pipeline && tensor && interleaved && zero3);
}

TEST(Planner, RejectionsSayWhy) {
  // GPT-3 2.7B on 16 GB V100s: plans without enough sharding do not fit; the reason names the
  // term that dominates and the excess.
  std::string text = kPlanScenario;
  text.replace(text.find("model: gpt2"), 11, "model: gpt3-2.7b");
  const PlanResults r = search("nofit", text, false);
  ASSERT_GT(r.counts.no_fit, 0u);
  for (const PlanCandidate& c : r.candidates) {
    if (c.status != "no-fit") continue;
    EXPECT_NE(c.reason.find("over the"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("largest term: "), std::string::npos) << c.reason;
    EXPECT_GT(c.memory_bytes, 16e9);
  }
  // A deadline at the median feasible time and a budget at the median cost reject some.
  const PlanResults all = search("constraints", kPlanScenario, true);
  std::vector<double> times, costs;
  for (const PlanCandidate& c : all.candidates) {
    if (c.status == "feasible") {
      times.push_back(c.row.time_to_train_s);
      costs.push_back(c.row.cost_to_train);
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(costs.begin(), costs.end());
  const double deadline = times[times.size() / 2], budget = costs[costs.size() / 2];
  const PlanResults late = search("deadline", kPlanScenario, false, 2, {"plan.deadline=" + std::to_string(deadline) + "s"});
  EXPECT_GT(late.counts.deadline, 0u);
  for (const PlanCandidate& c : late.candidates) {
    if (c.status == "deadline") EXPECT_NE(c.reason.find("the deadline is"), std::string::npos) << c.reason;
    if (c.status == "feasible") EXPECT_LE(c.row.time_to_train_s, deadline + 1);
  }
  const PlanResults poor = search("budget", kPlanScenario, false, 2, {"plan.budget=" + std::to_string(budget)});
  EXPECT_GT(poor.counts.budget, 0u);
  for (const PlanCandidate& c : poor.candidates) {
    if (c.status == "budget") EXPECT_NE(c.reason.find("the budget is"), std::string::npos) << c.reason;
    if (c.status == "feasible") EXPECT_LE(c.row.cost_to_train, budget);
  }
  // Nothing meets an impossible deadline: an error naming the counts.
  try {
    search("impossible", kPlanScenario, false, 2, {"plan.deadline=1s"});
    ADD_FAILURE() << "an impossible deadline was met";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "plan");
    EXPECT_NE(e.message().find("miss the deadline"), std::string::npos) << e.what();
  }
}

TEST(Planner, BadPlanKeysAreLocated) {
  test::expect_replacements_rejected(kPlanScenario, {
      {"  objective: cheapest\n", "  objective: cheapest\n  deadlin: 3d\n", "plan.deadlin", "deadline"},
      {"  objective: cheapest\n", "  objective: cheap\n", "plan.objective", "cheapest"},
      {"aws/p3dn.24xlarge]", "aws/p3dn.24xlarg]", "plan.instances[1]", "unknown instance type"},
      {"aws/p3dn.24xlarge]", "aws/p3.16xlarge]", "plan.instances[1]", "appears twice"},
      {"  nodes: [1]\n", "  nodes: {from: 4, to: 2}\n", "plan.nodes.to", "at least from"},
      {"  objective: cheapest\n", "  objective: cheapest\n  deadline: 3 parsecs\n", "plan.deadline", "bad value"},
      {"  batch: {global: 8}\n", "  batch: {per_device: 2}\n", "workload.batch", "global"},
      {"  batch: {global: 8}\n", "  batch: {global: 8}\n  plan: {tensor: 2}\n", "workload.plan", "searches the parallel plan"},
      {"  data: {tokens: 1e9, epochs: 1}\n", "  data: {tokens: 1e9, samples: 5, epochs: 1}\n", "workload.data.tokens", "not both"},
  });
  // A plan scenario is not a run.
  const Scenario s = load_scenario_text(kPlanScenario, "plan.yaml");
  EXPECT_EQ(s.kind(), "plan");
  EXPECT_THROW(run(s), ConfigError);
}

}  // namespace
}  // namespace dlsim::experiment
