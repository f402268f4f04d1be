// Cluster scenarios (top-level pools:): reading pools, jobs, traces, the scheduler, variants
// and sweeps; errors located at their key; the results table, the jobs table and the HDF5 groups.
#include <gtest/gtest.h>

#include <hdf5.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/writers.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

const std::string kBase =
    "seed: 3\n"
    "pools:\n"
    "  - {name: a, instance: aws/p3.16xlarge, nodes: 2}\n"
    "jobs:\n"
    "  - {name: big, gpus: 16, iterations: 1000, iteration_time: 1s}\n"
    "  - {name: small, submit: 10s, gpus: 1, iterations: 100, iteration_time: 1s}\n";

ConfigError error_of(const std::string& text) { return test::error_loading(text, "c.yaml"); }

TEST(ClusterScenario, JobsRunAndFillTheTables) {
  const Scenario s = load_scenario_text(kBase, "c.yaml");
  ASSERT_TRUE(s.cluster_sim.has_value());
  ASSERT_EQ(s.cluster_sim->variants.size(), 1u);
  EXPECT_EQ(s.cluster_sim->variants[0].spec.pools[0].gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster_sim->variants[0].spec.pools[0].price_per_node_hour, 24.48);  // catalog on-demand
  const Results r = run(s);
  ASSERT_EQ(r.cluster_rows.size(), 1u);
  EXPECT_EQ(r.cluster_rows[0].done, 2);
  EXPECT_EQ(r.cluster_rows[0].variant, "base");
  EXPECT_EQ(r.jobs_table.rows(), 2u);
  // FIFO: the small job waits for the 16-GPU job holding both nodes.
  EXPECT_DOUBLE_EQ(r.cluster_rows[0].makespan_s, 1100);
}

TEST(ClusterScenario, SweepAndVariantsMakeOneRowEach) {
  const std::string text = kBase +
                           "variants:\n  - {name: fifo}\n  - {name: sjf, scheduler.policy: sjf}\n"
                           "sweep:\n  pools[0].nodes: [2, 4]\n";
  const Results r = run(load_scenario_text(text, "c.yaml"));
  ASSERT_EQ(r.cluster_rows.size(), 4u);
  EXPECT_EQ(r.cluster_rows[0].variant, "fifo, pools[0].nodes=2");
  EXPECT_EQ(r.cluster_rows[3].variant, "sjf, pools[0].nodes=4");
  EXPECT_EQ(r.cluster_rows[3].policy, "sjf");
  EXPECT_LT(r.cluster_rows[1].makespan_s, r.cluster_rows[0].makespan_s);  // 4 nodes: both run at once
  EXPECT_DOUBLE_EQ(r.cluster_rows[0].cost_vs_first, 1.0);
}

TEST(ClusterScenario, ErrorsNameTheKey) {
  {
    const ConfigError e = error_of("pools:\n  - {name: a, instance: aws/p3.16xlarg, nodes: 2}\njobs: []\n");
    EXPECT_EQ(e.key_path(), "pools[0].instance");
    EXPECT_NE(e.message().find("did you mean"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of("pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 2, capacity: spot}\njobs: []\n");
    EXPECT_EQ(e.key_path(), "pools[0].discount");
  }
  {
    const ConfigError e = error_of("pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 2, reclaim: {mean: 5h}}\njobs: []\n");
    EXPECT_EQ(e.key_path(), "pools[0].reclaim");
    EXPECT_NE(e.message().find("only spot"), std::string::npos);
  }
  {
    const std::string text = "pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 1}\n"
                             "jobs:\n  - {name: j, gpus: 9, iterations: 1, iteration_time: 1s}\n";
    const ConfigError e = error_of(text);
    EXPECT_EQ(e.key_path(), "jobs[0].gpus");
    EXPECT_EQ(e.where().line, 4) << e.what();
  }
  {
    const ConfigError e = error_of(kBase + "scheduler: {policy: lifo}\n");
    EXPECT_EQ(e.key_path(), "scheduler.policy");
    EXPECT_NE(e.message().find("fifo"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(kBase + "sweep:\n  scheduler.policy: [fifo, nope]\n");
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of("pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 1}\n"
                                   "trace: {format: philly, path: no-such-file.csv}\n");
    EXPECT_EQ(e.key_path(), "trace.path");
    EXPECT_NE(e.message().find("does not exist"), std::string::npos);
  }
  {
    const ConfigError e = error_of("pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 1}\n");
    EXPECT_NE(e.message().find("jobs"), std::string::npos);
  }
}

TEST(ClusterScenario, SyntheticTraceIsTheSameForTheSameSeed) {
  const std::string text = "seed: 5\npools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 4}\n"
                           "trace: {format: synthetic, jobs: 300, mean_interarrival: 60s, duration_max: 1d}\n";
  const Results a = run(load_scenario_text(text, "c.yaml"));
  const Results b = run(load_scenario_text(text, "c.yaml"));
  ASSERT_EQ(a.cluster_rows[0].done, 300);
  EXPECT_EQ(a.cluster_rows[0].mean_jct_s, b.cluster_rows[0].mean_jct_s);
  EXPECT_EQ(a.cluster_rows[0].total_cost, b.cluster_rows[0].total_cost);
  std::string other = text;
  other.replace(0, 7, "seed: 6");
  EXPECT_NE(run(load_scenario_text(other, "c.yaml")).cluster_rows[0].mean_jct_s, a.cluster_rows[0].mean_jct_s);
}

TEST(ClusterScenario, PhillyTraceFromTheSharedFolder) {
  // ../shared beside the checkout, or the shared folder of this machine.
  const char* source = std::getenv("DLSIM_SOURCE_DIR");
  auto file = std::filesystem::path(source ? source : ".") / ".." / "shared" / "data" / "traces" / "philly_pollux" / "philly.csv";
  if (!std::filesystem::exists(file)) file = "/work/shared/data/traces/philly_pollux/philly.csv";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no Philly trace at " << file << " (../shared/data/traces absent)";
  const std::string text = "pools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 16}\n"
                           "trace: {format: philly, path: '" + file.string() + "', jobs: 200}\n";
  const Scenario s = load_scenario_text(text, "c.yaml");
  EXPECT_EQ(s.cluster_sim->variants[0].spec.jobs.size(), 200u);
  const Results r = run(s);
  EXPECT_EQ(r.cluster_rows[0].done + r.cluster_rows[0].failed, 200);
}

TEST(ClusterScenario, HdfFileHoldsJobsAndSeriesPerVariant) {
  const auto dir = std::filesystem::temp_directory_path() / ("dlsim-cluster-h5-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "c.h5").string();
  write_hdf5(path, run(load_scenario_text(kBase, "c.yaml")));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* object : {"/results/mean_jct", "/jobs/jct", "/jobs/useful_iterations", "/variants/0/series/busy_gpus/time",
                             "/variants/0/series/busy_gpus/value"}) {
    EXPECT_GT(H5Lexists(file, object, H5P_DEFAULT), 0) << object;
  }
  H5Fclose(file);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dlsim::experiment
