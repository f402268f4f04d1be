// workload.input.storage in training scenarios: the first epoch read from storage, later ones
// cached or not, the storage bill in the cost, and located errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// ResNet-50 on one p3.16xlarge (8 V100, 64 vCPUs, DALI on the CPU): 4 epochs of 100 steps.
std::string resnet(const std::string& storage) {
  return "cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
         "workload:\n"
         "  model: resnet50\n"
         "  precision: fp16\n"
         "  batch: {per_device: 256}\n"
         "  data: {samples: 204800, epochs: 4}\n"
         "  input: {loader: dali-cpu, storage: " + storage + "}\n";
}

ResultRow run_text(const std::string& text) { return run(load_scenario_text(text, "s.yaml")).rows.at(0); }

TEST(DatasetStorage, ACachedDatasetCostsItsFirstEpochOnly) {
  const ResultRow cached = run_text(resnet("{type: aws/s3, sample_bytes: 110KB, cached: true}"));
  const ResultRow streamed = run_text(resnet("{type: aws/s3, sample_bytes: 110KB}"));
  // A file per sample: 64 workers each waiting 100 ms per request cannot feed 8 V100s.
  EXPECT_GT(cached.first_epoch_iteration_s, 5 * cached.iteration_s);
  EXPECT_NEAR(cached.first_epoch_iteration_s, 2048 / (64 / (1 / 171.0 + 0.1 + 110e3 / 85e6)), 1e-9);
  EXPECT_NEAR(cached.time_to_train_s, 100 * cached.first_epoch_iteration_s + 300 * cached.iteration_s, 1e-6);
  EXPECT_EQ(streamed.iteration_s, streamed.first_epoch_iteration_s) << "uncached: every epoch reads";
  EXPECT_EQ(streamed.bound, "storage") << "workers wait 100 ms per image, decode it in 6";
  EXPECT_EQ(cached.bound, "compute") << "later epochs from the cache";
  EXPECT_NEAR(streamed.time_to_train_s, 400 * streamed.iteration_s, 1e-6);
  // The bill: the capacity held for the run and the GETs, once or four times; in the cost.
  const double gets = 204800 * 0.0004 / 1000;
  EXPECT_NEAR(cached.storage_cost, gets + 0.023 * 204800 * 110e3 / 1e9 * cached.time_to_train_s / (30 * 86400), 1e-9);
  EXPECT_NEAR(streamed.storage_cost, 4 * gets + 0.023 * 204800 * 110e3 / 1e9 * streamed.time_to_train_s / (30 * 86400), 1e-9);
  EXPECT_NEAR(cached.cost_to_train - cached.storage_cost, cached.cost_per_hour * std::ceil(cached.time_to_train_s) / 3600, 1e-9);
  // Shards of 100 MB amortise the latency: the loader keeps up again.
  const ResultRow sharded = run_text(resnet("{type: aws/s3, sample_bytes: 110KB, object_bytes: 100MB, cached: true}"));
  EXPECT_LT(sharded.first_epoch_iteration_s, 1.1 * sharded.iteration_s);
}

TEST(DatasetStorage, AFileSystemSharedByMoreNodesGivesEachLess) {
  const std::string fs = "{type: aws/fsx-lustre-125, sample_bytes: 110KB}";
  const ResultRow one = run_text(resnet(fs));
  // 1.2 TiB at 125 MB/s/TiB: 150 MB/s for the job, about 1,364 images/s.
  EXPECT_NEAR(one.iteration_s, 2048 / (1.2 * 125e6 / 110e3), 1e-9);
  std::string two = resnet(fs);
  two.replace(two.find("nodes: 1"), 8, "nodes: 2");
  EXPECT_NEAR(run_text(two).iteration_s, 2 * one.iteration_s, 1e-9) << "each node loads 2,048 images per step at half the file system";
  EXPECT_EQ(one.bound, "storage") << "the file system's throughput caps the node";
}

TEST(DatasetStorage, BadSettingsAreLocated) {
  const auto key_of = [](const std::string& text) { return test::error_loading(text, "s.yaml").key_path(); };
  EXPECT_EQ(key_of(resnet("{type: aws/s4, sample_bytes: 1KB}")), "workload.input.storage.type");
  EXPECT_EQ(key_of(resnet("{type: aws/s3}")), "workload.input.storage.sample_bytes");
  EXPECT_EQ(key_of(resnet("{type: local-nvme, sample_bytes: 1KB}")), "workload.input.storage.bandwidth");
  EXPECT_EQ(key_of(resnet("{type: aws/ebs-gp3, sample_bytes: 1KB, object_bytes: 1MB}")), "workload.input.storage.object_bytes");
  EXPECT_EQ(key_of(resnet("{type: aws/fsx-lustre-250, sample_bytes: 1KB, bandwidth: 1GB/s}")), "workload.input.storage.bandwidth");
  EXPECT_EQ(key_of(resnet("{type: aws/s3, sample_bytes: 1KB, capacity: 2TiB}")), "workload.input.storage.capacity");
  EXPECT_EQ(key_of("cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
                   "workload: {model: resnet50, batch: {per_device: 64}, iterations: 10,\n"
                   "           input: {loader: pytorch, storage: {type: aws/s3, sample_bytes: 1KB, cached: true}}}\n"),
            "workload.input.storage.cached");
  EXPECT_EQ(key_of("cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
                   "workload: {model: resnet50, batch: {per_device: 64}, iterations: 10,\n"
                   "           input: {storage: {type: aws/s3, sample_bytes: 1KB}}}\n"),
            "workload.input.storage");
}

}  // namespace
}  // namespace dlsim::experiment
