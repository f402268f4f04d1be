// checkpoint.storage in cluster scenarios: the storage kinds of models/storage.hpp set where
// checkpoints go, how fast a job of n nodes writes and reads them, and their price.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {
namespace {

// A 32-GPU job (4 p3.16xlarge) checkpointing 100 GB every 10 min of running.
std::string cluster(const std::string& checkpoint) {
  return "pools: [{name: p, instance: aws/p3.16xlarge, nodes: 4}]\n"
         "jobs:\n"
         "  - {name: j, gpus: 32, iterations: 3600, iteration_time: 1s,\n"
         "     checkpoint: {policy: fixed, interval: 10min, size: 100GB" + checkpoint + "}}\n";
}

scheduler::CheckpointSpec checkpoint_of(const std::string& text) {
  return load_scenario_text(text, "c.yaml").cluster_sim->variants.at(0).spec.jobs.at(0).checkpoint;
}

TEST(CheckpointStorage, EachKindSetsItsBandwidthsAndPrice) {
  const scheduler::CheckpointSpec s3 = checkpoint_of(cluster(", storage: aws/s3"));
  EXPECT_EQ(s3.storage_type, "aws/s3");
  EXPECT_DOUBLE_EQ(s3.storage_price_per_gb_month, 0.023);
  EXPECT_DOUBLE_EQ(s3.write_s(4), 100e9 / (4 * 10 * 85e6)) << "10 parts at a time per node";
  EXPECT_DOUBLE_EQ(s3.read_s(1), 100e9 / (10 * 85e6));
  const scheduler::CheckpointSpec gp3 = checkpoint_of(cluster(", storage: aws/ebs-gp3"));
  EXPECT_DOUBLE_EQ(gp3.write_s(4), 100e9 / (4 * 125.0 * 1024 * 1024)) << "a volume per node";
  EXPECT_DOUBLE_EQ(gp3.storage_price_per_gb_month, 0.08);
  const scheduler::CheckpointSpec fsx = checkpoint_of(cluster(", storage: aws/fsx-lustre-250"));
  EXPECT_DOUBLE_EQ(fsx.write_s(1), fsx.write_s(8)) << "one file system for the job";
  EXPECT_DOUBLE_EQ(fsx.write_s(4), 100e9 / (250e6 * 1.2)) << "the smallest file system, 1.2 TiB";
  // A bandwidth given caps the job.
  const scheduler::CheckpointSpec capped = checkpoint_of(cluster(", storage: aws/s3, write_bandwidth: 1GB/s"));
  EXPECT_DOUBLE_EQ(capped.write_s(4), 100.0);
  // Without a storage: the given (or default 1 GB/s) bandwidth for the whole job, S3's price.
  const scheduler::CheckpointSpec plain = checkpoint_of(cluster(""));
  EXPECT_DOUBLE_EQ(plain.write_s(4), 100.0);
  EXPECT_EQ(plain.storage_type, "");
}

TEST(CheckpointStorage, TheRunPaysEachCheckpointAtItsStoragesSpeed) {
  const Results s3 = run(load_scenario_text(cluster(", storage: aws/s3"), "c.yaml"));
  const Results gp3 = run(load_scenario_text(cluster(", storage: aws/ebs-gp3"), "c.yaml"));
  const auto column = [](const Results& r, const std::string& name) {
    for (const TableColumn& c : r.table.columns) {
      if (c.name == name) return c.numbers.at(0);
    }
    ADD_FAILURE() << "no column " << name;
    return 0.0;
  };
  // 60 min of running: 5 checkpoints (none at the end), each 29.4 s on S3, 190.7 s on gp3.
  EXPECT_NEAR(column(s3, "makespan") - 3600, 5 * 100e9 / (4 * 850e6), 1.0);
  EXPECT_NEAR(column(gp3, "makespan") - 3600, 5 * 100e9 / (4 * 125.0 * 1024 * 1024), 1.0);
}

TEST(CheckpointStorage, ANodesOwnDiskIsRefused) {
  try {
    load_scenario_text(cluster(", storage: local-nvme"), "c.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "jobs[0].checkpoint.storage");
    EXPECT_NE(std::string(e.what()).find("lost with the node"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
