// Spot-aware costing in the planner (issue 20): spot candidates are run in the cluster model
// (the same outcome as simulating the cluster directly), never beat their failure-free bound, the
// pruned search still finds the exhaustive answer, and the plan.spot keys are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/plan_spot.hpp"
#include "experiment/planner.hpp"
#include "scenario_text.hpp"
#include "scheduler/cluster_simulation.hpp"

namespace dlsim::experiment {
namespace {

// GPT-2 small for 2e10 tokens (hours) on one or two nodes of an AWS type without a catalog spot
// price (so the discount prices it) and a GCP type with one.
const std::string kSpotScenario = R"(seed: 3
cluster:
  instance: aws/p3.16xlarge
workload:
  model: gpt2
  sequence_length: 1024
  precision: fp16
  optimizer: adam
  batch: {global: 64}
  data: {tokens: 2e10, epochs: 1}
plan:
  objective: cheapest
  instances: [aws/p3.16xlarge, gcp/a2-highgpu-8g]
  nodes: [1, 2]
  capacity: [on-demand, spot]
  spot:
    discount: 0.6
    reclaim: {mean: 3h}
    replications: 4
    checkpoint: {write_bandwidth: 200MB/s, warmup: 2min}
)";

std::filesystem::path write_scenario(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("dlsim-test-plan-spot-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / (name + ".yaml");
  std::ofstream(path) << text;
  return path;
}

std::vector<Scenario> load(const std::string& name, const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_plan_scenarios(write_scenario(name, text).string(), sets);
}

PlanResults search(const std::vector<Scenario>& scenarios, bool exhaustive) {
  PlanOptions options;
  options.exhaustive = exhaustive;
  options.threads = 2;
  return search_plans(scenarios, options);
}

std::string key_of(const PlanCandidate& c) {
  return c.instance + " x" + std::to_string(c.nodes) + " " + scheduler::to_string(c.capacity) + " " + c.label;
}

TEST(PlanSpot, SpotCandidatesAreTheClusterModelsRunsOfTheReplayedIteration) {
  const std::vector<Scenario> scenarios = load("costed", kSpotScenario);
  const PlanResults r = search(scenarios, false);
  std::size_t checked = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.simulated || c.capacity != scheduler::Capacity::spot || checked >= 3) continue;
    ++checked;
    const Scenario& s = scenarios[c.scenario];
    const PlanSpotConfig& spot = *s.search->spot;
    EXPECT_EQ(c.price_per_hour, s.cluster.instance.price_per_hour * 0.4) << key_of(c);  // the discount wins
    // The same runs, made here directly in the cluster model.
    const double iteration_s = c.spot.failure_free_s / static_cast<double>(c.row.iterations);
    const scheduler::ClusterSpec spec = spot_cluster(s, c.nodes, c.row.iterations, iteration_s, spot);
    ASSERT_EQ(spec.pools.size(), 1u);
    EXPECT_EQ(spec.pools[0].capacity, scheduler::Capacity::spot);
    EXPECT_EQ(spec.pools[0].notice_s, c.instance.rfind("gcp/", 0) == 0 ? 30.0 : 120.0);
    EXPECT_EQ(spec.jobs[0].checkpoint.policy, scheduler::CheckpointPolicy::young_daly);
    EXPECT_EQ(spec.jobs[0].checkpoint.size_bytes, checkpoint_bytes(s.workload));
    std::vector<double> times, costs;
    for (int k = 0; k < spot.replications; ++k) {
      scheduler::SimulationOptions options;
      options.seed = s.seed + static_cast<std::uint64_t>(k);
      options.horizon_s = c.spot.horizon_s;
      const scheduler::ClusterResult run = scheduler::simulate_cluster(spec, options);
      ASSERT_EQ(run.jobs[0].state, scheduler::JobState::done);
      times.push_back(run.jobs[0].finish_s);
      costs.push_back(run.total_cost_usd);
    }
    EXPECT_DOUBLE_EQ(c.row.time_to_train_s, std::accumulate(times.begin(), times.end(), 0.0) / times.size()) << key_of(c);
    EXPECT_DOUBLE_EQ(c.row.cost_to_train, std::accumulate(costs.begin(), costs.end(), 0.0) / costs.size()) << key_of(c);
    EXPECT_EQ(c.spot.time_p10_s, *std::min_element(times.begin(), times.end()));  // nearest rank of 4 runs
    EXPECT_EQ(c.spot.time_p90_s, *std::max_element(times.begin(), times.end()));
    // Reclamations, checkpoints and restarts only add: never below the failure-free run or bound.
    EXPECT_GT(c.row.time_to_train_s, c.spot.failure_free_s) << key_of(c);
    EXPECT_GE(c.row.time_to_train_s, c.bound_time_to_train_s);
    EXPECT_GE(c.row.cost_to_train, c.bound_cost);
    EXPECT_GT(c.spot.reclaims_mean, 0) << "hours of work on nodes reclaimed every 3 h on average";
  }
  EXPECT_EQ(checked, 3u);
  // The catalog's spot price where the plan gives no discount (GCP a2-highgpu-8g: 15.42 USD/h).
  const std::vector<Scenario> catalog_priced =
      load("catalog-price", test::replaced(kSpotScenario, "    discount: 0.6\n", ""), {"plan.instances=[gcp/a2-highgpu-8g]"});
  EXPECT_EQ(spot_price_per_hour(catalog_priced.front().cluster.instance, *catalog_priced.front().search->spot), 15.42416);
}

TEST(PlanSpot, SpotBeatsOnDemandOnlyWhenItsReclamationsCostLessThanItsDiscount) {
  // Rare reclamations: spot is the cheapest. Every 5 minutes per node, with a restart of 7
  // (provisioning 5, warm-up 2): Daly's expected time is about 5x the work, more than the 60%
  // discount saves, so on-demand is.
  const PlanResults rare = search(load("rare", kSpotScenario, {"plan.spot.reclaim.mean=30d"}), false);
  ASSERT_TRUE(rare.best);
  EXPECT_EQ(rare.candidates[*rare.best].capacity, scheduler::Capacity::spot);
  const PlanResults often = search(load("often", kSpotScenario, {"plan.spot.reclaim.mean=5min"}), false);
  ASSERT_TRUE(often.best);
  EXPECT_EQ(often.candidates[*often.best].capacity, scheduler::Capacity::on_demand);
}

TEST(PlanSpot, PrunedSearchFindsTheExhaustiveAnswerWithSpotCandidates) {
  for (const char* objective : {"cheapest", "fastest"}) {
    const auto scenarios = load(std::string("prune-") + objective, kSpotScenario, {std::string("plan.objective=") + objective, "workload.batch.global=16"});
    const PlanResults all = search(scenarios, true);
    const PlanResults pruned = search(scenarios, false);
    ASSERT_TRUE(all.best && pruned.best);
    EXPECT_EQ(key_of(all.candidates[*all.best]), key_of(pruned.candidates[*pruned.best])) << objective;
    std::vector<std::string> front_all, front_pruned;
    for (std::size_t f : all.front) front_all.push_back(key_of(all.candidates[f]));
    for (std::size_t f : pruned.front) front_pruned.push_back(key_of(pruned.candidates[f]));
    EXPECT_EQ(front_all, front_pruned) << objective;
    EXPECT_GT(pruned.counts.pruned, 0u);
    EXPECT_EQ(all.counts.bound_violations, 0u);
    // Each plan is a candidate once per capacity; a plan's second capacity reuses its replay.
    std::size_t spot = 0;
    for (const PlanCandidate& c : all.candidates) spot += c.capacity == scheduler::Capacity::spot;
    EXPECT_EQ(2 * spot, all.candidates.size());
    EXPECT_GT(all.counts.memoized, 0u);
    EXPECT_EQ(all.counts.simulated - all.counts.memoized, all.candidates.size() / 2 - all.counts.no_fit / 2);
  }
}

TEST(PlanSpot, RunsThatCannotFinishAreRejectedWithTheReason) {
  // Two nodes each reclaimed every 10 minutes, a checkpoint that takes minutes to write and read:
  // the job never keeps its nodes long enough to make progress.
  const PlanResults r = search(load("unfinished", kSpotScenario,
                                    {"plan.spot.reclaim.mean=10min", "plan.spot.checkpoint.write_bandwidth=2MB/s",
                                     "plan.nodes=[2]", "plan.instances=[aws/p3.16xlarge]", "plan.spot.replications=2", "workload.batch.global=16", "workload.data.tokens=2e9"}),
                               false);
  std::size_t unfinished = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (c.status != "unfinished") continue;
    ++unfinished;
    EXPECT_EQ(c.capacity, scheduler::Capacity::spot);
    EXPECT_NE(c.reason.find("spot runs had not finished after"), std::string::npos) << c.reason;
  }
  EXPECT_GT(unfinished, 0u);
  EXPECT_EQ(r.counts.unfinished, unfinished);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.candidates[*r.best].capacity, scheduler::Capacity::on_demand);
}

// The reclamation rate may be fitted to a probe log of spot lifetimes, as a cluster pool's is.
TEST(PlanSpot, TheReclamationHazardMayBeFittedToAProbeLogAsAPoolsIs) {
  const char* source = std::getenv("DLSIM_SOURCE_DIR");
  const std::string log = "spot_aws_gcp_training_on_a_dime/availability/aws_persistent_2020-03-15.out";
  auto file = std::filesystem::path(source ? source : ".") / ".." / "shared" / "data" / "traces" / log;
  if (!std::filesystem::exists(file)) file = std::filesystem::path("/work/shared/data/traces") / log;
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no probe log at " << file << " (../shared/data/traces absent)";
  const Scenario plan =
      load_scenario_text(test::replaced(kSpotScenario, "reclaim: {mean: 3h}", "reclaim: {fit: '" + file.string() + "'}"), "p.yaml");
  const std::string pool = "pools:\n  - {name: s, instance: aws/p3.16xlarge, nodes: 1, capacity: spot, discount: 0.6, reclaim: {fit: '" +
                           file.string() + "'}}\njobs:\n  - {name: j, gpus: 8, iteration_time: 1s, iterations: 10}\n";
  const Scenario cluster = load_scenario_text(pool, "c.yaml");
  const scheduler::Hazard& fitted = plan.search->spot->reclaim;
  EXPECT_EQ(fitted.kind, scheduler::Hazard::Kind::exponential);
  EXPECT_GT(fitted.mean_s, 0);
  EXPECT_EQ(fitted.mean_s, cluster.cluster_sim->variants.at(0).spec.pools.at(0).reclaim.mean_s);
}

TEST(PlanSpot, BadSpotKeysAreLocated) {
  test::expect_replacements_rejected(kSpotScenario, {
      {"  capacity: [on-demand, spot]\n", "  capacity: [on-demand, spto]\n", "plan.capacity[1]", "did you mean"},
      {"  capacity: [on-demand, spot]\n", "  capacity: [spot, spot]\n", "plan.capacity[1]", "appears twice"},
      {"  capacity: [on-demand, spot]\n", "  capacity: []\n", "plan.capacity", "non-empty"},
      {"    reclaim: {mean: 3h}\n", "", "plan.spot.reclaim", "reclamation rate"},
      {"    discount: 0.6\n", "", "plan.spot.discount", "aws/p3.16xlarge has no spot price"},
      {"    discount: 0.6\n", "    discount: 1.5\n", "plan.spot.discount", "from 0 to 0.99"},
      {"    replications: 4\n", "    replications: 0\n", "plan.spot.replications", "from 1 to 1000"},
      {"    checkpoint: {write_bandwidth: 200MB/s, warmup: 2min}\n", "    checkpoint: {policy: fixed}\n", "plan.spot.checkpoint.interval",
       "missing required key 'interval'"},
      {"    reclaim: {mean: 3h}\n", "    reclaim: {mean: 3h}\n    notise: 30s\n", "plan.spot.notise", "notice"},
  });
  // With on-demand capacity only, plan.spot is still checked but not used (so --set
  // plan.capacity=[on-demand] compares the same scenario without spot).
  const std::string on_demand = test::replaced(kSpotScenario, "[on-demand, spot]", "[on-demand]");
  EXPECT_FALSE(load_scenario_text(on_demand, "od.yaml").search->spot.has_value());
  EXPECT_EQ(test::error_loading(test::replaced(on_demand, "replications: 4", "replications: -1")).key_path(), "plan.spot.replications");
  // spot capacity without a plan.spot section
  std::string text = kSpotScenario;
  text.erase(text.find("  spot:\n"));
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "plan.capacity") << e.what();
  EXPECT_NE(e.message().find("plan.spot section"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace dlsim::experiment
