// Storage (models/storage.hpp): what reading a dataset costs a loader, how the storage stage
// combines with decoding and the step, and the storage bill.
#include <gtest/gtest.h>

#include <cmath>

#include "models/input_pipeline.hpp"
#include "models/storage.hpp"

namespace dlsim::models {
namespace {

DatasetStorage on(const std::string& name, double sample_bytes) {
  DatasetStorage d;
  d.spec = *find_storage(name);
  d.sample_bytes = sample_bytes;
  d.object_bytes = sample_bytes;
  return d;
}

constexpr double kTiB = 1024.0 * 1024 * 1024 * 1024;

TEST(Storage, TheBuiltInKindsCarryTheirDatasheetFigures) {
  const StorageSpec* s3 = find_storage("aws/s3");
  ASSERT_NE(s3, nullptr);
  EXPECT_EQ(s3->kind, StorageKind::object);
  EXPECT_EQ(s3->connection_bytes_per_s, 85e6);
  EXPECT_EQ(s3->request_latency_s, 0.1);
  EXPECT_EQ(s3->price_per_gb_month, 0.023);
  const StorageSpec* gp3 = find_storage("aws/ebs-gp3");
  ASSERT_NE(gp3, nullptr);
  EXPECT_EQ(gp3->bytes_per_s, 125.0 * 1024 * 1024);
  EXPECT_EQ(gp3->iops, 3000);
  EXPECT_EQ(find_storage("aws/fsx-lustre-1000")->bytes_per_s_per_tib, 1000e6);
  EXPECT_EQ(find_storage("nfs"), nullptr);
  for (const StorageSpec& s : builtin_storage()) EXPECT_FALSE(s.source.empty()) << s.name;
}

TEST(Storage, AnObjectRequestCostsItsLatencyAndItsBytesSharedByItsSamples) {
  DatasetStorage files = on("aws/s3", 100e3);
  const ReadCost per_file = read_cost(files, 1, 0);
  EXPECT_NEAR(per_file.worker_s_per_sample, 0.1 + 100e3 / 85e6, 1e-15);
  EXPECT_TRUE(std::isinf(per_file.node_samples_per_s)) << "no NIC given: no cap";
  DatasetStorage shards = files;
  shards.object_bytes = 100e6;  // 1,000 samples per object
  EXPECT_NEAR(read_cost(shards, 1, 0).worker_s_per_sample, (0.1 + 100e6 / 85e6) / 1000, 1e-15);
  EXPECT_NEAR(read_cost(shards, 4, 12.5e9).node_samples_per_s, 12.5e9 / 100e3, 1e-6) << "the node's NIC";
}

TEST(Storage, ABlockVolumeIsBoundByItsThroughputOrItsIops) {
  // 100 KB samples: one I/O each; 125 MiB/s is 1,311 samples/s, 3,000 IOPS 3,000: throughput-bound.
  EXPECT_NEAR(read_cost(on("aws/ebs-gp3", 100e3), 8, 0).node_samples_per_s, 125.0 * 1024 * 1024 / 100e3, 1e-9);
  // 4 KB samples: 32,768 samples/s by throughput, 3,000 by IOPS.
  EXPECT_NEAR(read_cost(on("aws/ebs-gp3", 4e3), 8, 0).node_samples_per_s, 3000, 1e-9);
  // 600 KB samples take 3 I/Os of 256 KiB: 1,000 samples/s by IOPS, 218 by throughput.
  EXPECT_NEAR(read_cost(on("aws/ebs-gp3", 600e3), 8, 0).node_samples_per_s, 125.0 * 1024 * 1024 / 600e3, 1e-9);
}

TEST(Storage, AParallelFileSystemIsSharedByTheJobsNodes) {
  DatasetStorage fs = on("aws/fsx-lustre-250", 100e3);
  fs.capacity_bytes = 4.8 * kTiB;  // 1,200 MB/s in all
  EXPECT_NEAR(read_cost(fs, 1, 0).node_samples_per_s, 1200e6 / 100e3, 1e-6);
  EXPECT_NEAR(read_cost(fs, 4, 0).node_samples_per_s, 300e6 / 100e3, 1e-6);
  EXPECT_NEAR(read_cost(fs, 1, 400e6).node_samples_per_s, 400e6 / 100e3, 1e-6) << "and each node's NIC";
  fs.capacity_bytes = 0.1 * kTiB;  // below the smallest file system: 1.2 TiB
  EXPECT_NEAR(read_cost(fs, 1, 0).node_samples_per_s, 1.2 * 250e6 / 100e3, 1e-6);
}

TEST(Storage, TheBillHoldsTheCapacityForTheRunAndCountsRequests) {
  const double month = 30 * 86400.0;
  const double dataset = 140e9;  // 1.4 M samples of 100 KB
  DatasetStorage s3 = on("aws/s3", 100e3);
  EXPECT_NEAR(storage_cost_usd(s3, dataset, 4, month, 1), 0.023 * 140 + 0.0004 * 1.4e6 / 1000, 1e-9);
  EXPECT_NEAR(storage_cost_usd(s3, dataset, 4, month, 3), 0.023 * 140 + 3 * 0.0004 * 1.4e6 / 1000, 1e-9) << "each read's GETs";
  s3.object_bytes = 140e6;  // shards: 1,000 requests per read
  EXPECT_NEAR(storage_cost_usd(s3, dataset, 4, month / 2, 1), 0.023 * 140 / 2 + 0.0004, 1e-9);
  EXPECT_NEAR(storage_cost_usd(on("aws/ebs-gp3", 100e3), dataset, 4, month, 1), 0.08 * 140 * 4, 1e-9) << "a volume per node";
  DatasetStorage fs = on("aws/fsx-lustre-125", 100e3);
  EXPECT_NEAR(storage_cost_usd(fs, dataset, 4, month, 1), 0.145 * 1.2 * kTiB / 1e9, 1e-9) << "the smallest file system";
  DatasetStorage local = on("local-nvme", 100e3);
  local.spec.bytes_per_s = 2e9;
  EXPECT_EQ(storage_cost_usd(local, dataset, 4, month, 1), 0);
}

TEST(Storage, AWorkerReadsThenDecodesAndTheStorageCapsTheNode) {
  InputPipeline p;
  p.loader = Loader::pytorch;
  p.samples_per_worker_s = 100;  // 10 ms to decode a sample
  p.workers = 10;
  p.prefetch = 2;
  p.read_s_per_sample = 0.03;    // 30 ms to read it: 25 samples/s per worker
  EXPECT_NEAR(with_input(1.0, 500, p).input_s, 500 / (10 * 25.0), 1e-12);
  EXPECT_TRUE(with_input(1.0, 500, p).storage_bound) << "30 ms reading, 10 ms decoding";
  InputPipeline decoding = p;
  decoding.read_s_per_sample = 0.002;
  EXPECT_TRUE(with_input(0.1, 500, decoding).input_bound);
  EXPECT_FALSE(with_input(0.1, 500, decoding).storage_bound) << "2 ms reading, 10 ms decoding";
  p.node_read_samples_per_s = 100;  // the storage serves the node 100 samples/s
  EXPECT_NEAR(with_input(1.0, 500, p).input_s, 5.0, 1e-12);
  // Prefetching overlaps the stages: the step (8 s) is the slowest, so nothing stalls.
  const InputStep deep = with_input(8.0, 500, p);
  EXPECT_EQ(deep.iteration_s, 8.0);
  EXPECT_EQ(deep.stall_s, 0.0);
  p.prefetch = 0;
  EXPECT_NEAR(with_input(8.0, 500, p).iteration_s, 13.0, 1e-12) << "without prefetch: read and decode, then step";
}

}  // namespace
}  // namespace dlsim::models
