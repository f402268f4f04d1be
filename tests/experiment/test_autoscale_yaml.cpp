// Auto-scaling policies and fair-share weights in cluster scenarios: the keys reach the specs,
// bad values are rejected at their key, nodes-by-state series reach the HDF5 file.
#include <gtest/gtest.h>

#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/writers.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

const std::string kJobs =
    "jobs:\n"
    "  - {name: a, gpus: 16, iterations: 1000, iteration_time: 1s, queue: team-a}\n"
    "  - {name: b, submit: 10s, gpus: 8, iterations: 100, iteration_time: 1s, queue: team-b}\n";

std::string with_autoscale(const std::string& autoscale) {
  return "pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 0, autoscale: " + autoscale + "}\n" + kJobs;
}

ConfigError error_of(const std::string& text) {
  try {
    load_scenario_text(text, "c.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError({"", 0, 0}, "", "");
}

TEST(AutoscaleYaml, PoliciesAndTheirKnobsReachThePool) {
  const Scenario u = load_scenario_text(with_autoscale("{policy: utilization, max: 4, target: 0.7, interval: 2min}"), "c.yaml");
  const auto& pu = u.cluster_sim->variants[0].spec.pools[0];
  EXPECT_EQ(pu.autoscaler, "utilization");
  EXPECT_DOUBLE_EQ(pu.target_utilization, 0.7);
  EXPECT_DOUBLE_EQ(pu.low_utilization, 0.35);  // default: half the target
  EXPECT_DOUBLE_EQ(pu.scale_interval_s, 120);
  const Scenario p = load_scenario_text(with_autoscale("{policy: predictive, max: 4, window: 30min}"), "c.yaml");
  const auto& pp = p.cluster_sim->variants[0].spec.pools[0];
  EXPECT_EQ(pp.autoscaler, "predictive");
  EXPECT_DOUBLE_EQ(pp.forecast_window_s, 1800);
  EXPECT_DOUBLE_EQ(pp.scale_interval_s, 60);  // default 1 min
  EXPECT_EQ(load_scenario_text(with_autoscale("{max: 4}"), "c.yaml").cluster_sim->variants[0].spec.pools[0].autoscaler,
            "reactive");
  // Each runs both jobs to the end.
  for (const char* policy : {"reactive", "utilization", "predictive"}) {
    const Results r = run(load_scenario_text(with_autoscale(std::string("{policy: ") + policy + ", max: 3}"), "c.yaml"));
    EXPECT_EQ(r.cluster_rows[0].done, 2) << policy;
  }
}

TEST(AutoscaleYaml, BadPolicyAndKnobsNameTheKey) {
  {
    const ConfigError e = error_of(with_autoscale("{policy: hpa, max: 4}"));
    EXPECT_EQ(e.key_path(), "pools[0].autoscale.policy");
    EXPECT_NE(e.message().find("predictive, reactive, utilization"), std::string::npos) << e.what();
  }
  for (const char* target : {"0", "1.5", "-0.2"}) {
    const ConfigError e = error_of(with_autoscale(std::string("{policy: utilization, max: 4, target: ") + target + "}"));
    EXPECT_EQ(e.key_path(), "pools[0].autoscale.target") << target;
  }
  {
    const ConfigError e = error_of(with_autoscale("{policy: utilization, max: 4, target: 0.6, low: 0.6}"));
    EXPECT_EQ(e.key_path(), "pools[0].autoscale.low");
  }
  {
    const ConfigError e = error_of(with_autoscale("{max: 4, target: 0.8}"));
    EXPECT_EQ(e.key_path(), "pools[0].autoscale.target");
    EXPECT_NE(e.message().find("utilization"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(with_autoscale("{policy: utilization, max: 4, window: 1h}"));
    EXPECT_EQ(e.key_path(), "pools[0].autoscale.window");
    EXPECT_NE(e.message().find("predictive"), std::string::npos) << e.what();
  }
}

TEST(AutoscaleYaml, QueueWeightsForKnownQueuesOnly) {
  const std::string base = "pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 2}\n" + kJobs;
  const Scenario s = load_scenario_text(base + "scheduler: {policy: fair-share, queue_weights: {team-a: 2, team-b: 1}}\n", "c.yaml");
  const auto& w = s.cluster_sim->variants[0].options.queue_weights;
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].first, "team-a");
  EXPECT_DOUBLE_EQ(w[0].second, 2);
  const ConfigError e = error_of(base + "scheduler:\n  policy: fair-share\n  queue_weights: {team-a: 2, team-c: 1}\n");
  EXPECT_EQ(e.key_path(), "scheduler.queue_weights.team-c");
  EXPECT_EQ(e.where().line, 8) << e.what();
  EXPECT_NE(e.message().find("team-a, team-b"), std::string::npos) << e.what();
  EXPECT_EQ(error_of(base + "scheduler: {queue_weights: {team-a: 0}}\n").key_path(), "scheduler.queue_weights.team-a");
}

TEST(AutoscaleYaml, HdfFileHoldsNodesByState) {
  const auto dir = std::filesystem::temp_directory_path() / ("dlsim-autoscale-h5-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "c.h5").string();
  write_hdf5(path, run(load_scenario_text(with_autoscale("{policy: predictive, max: 3}"), "c.yaml")));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* state : {"provisioning", "ready", "busy", "draining"}) {
    const std::string object = std::string("/variants/0/series/nodes_") + state + "/value";
    EXPECT_GT(H5Lexists(file, object.c_str(), H5P_DEFAULT), 0) << object;
  }
  H5Fclose(file);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dlsim::experiment
