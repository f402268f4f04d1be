// Storage kinds and the cost of reading a dataset from them (storage.hpp).
#include "models/storage.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::models {
namespace {

constexpr double kMB = 1e6;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kTiB = 1024.0 * 1024.0 * 1024.0 * 1024.0;
constexpr double kSecondsPerMonth = 30 * 86400.0;

StorageSpec object_store() {
  StorageSpec s;
  s.name = "aws/s3";
  s.kind = StorageKind::object;
  s.connection_bytes_per_s = 85 * kMB;  // the low end of 85-90 MB/s per request
  s.request_latency_s = 0.1;            // the low end of 100-200 ms to the first byte
  s.price_per_gb_month = 0.023;
  s.price_per_1000_requests = 0.0004;
  s.source = "AWS S3 performance design patterns (85-90 MB/s per connection, first byte 100-200 ms); S3 Standard us-east-1 prices";
  return s;
}

StorageSpec gp3() {
  StorageSpec s;
  s.name = "aws/ebs-gp3";
  s.kind = StorageKind::block;
  s.bytes_per_s = 125 * kMiB;
  s.iops = 3000;
  s.io_bytes = 256 * 1024;
  s.price_per_gb_month = 0.08;
  s.source = "AWS EBS volume types (gp3 baseline 125 MiB/s, 3,000 IOPS, I/Os up to 256 KiB); us-east-1 price";
  return s;
}

StorageSpec lustre(int mb_per_tib, double price_ratio) {
  StorageSpec s;
  s.name = "aws/fsx-lustre-" + std::to_string(mb_per_tib);
  s.kind = StorageKind::parallel_fs;
  s.bytes_per_s_per_tib = mb_per_tib * kMB;
  s.min_capacity_bytes = 1.2 * kTiB;
  s.price_per_gb_month = 0.145 * price_ratio;
  s.source = "FSx for Lustre user guide (Persistent-2 SSD throughput per TiB); us-east-1 price at 125 MB/s/TiB, ap-northeast-1 ratios above";
  return s;
}

StorageSpec local_nvme() {
  StorageSpec s;
  s.name = "local-nvme";
  s.kind = StorageKind::local;
  s.source = "the instance's own disks: give storage.bandwidth";
  return s;
}

}  // namespace

const std::vector<StorageSpec>& builtin_storage() {
  static const std::vector<StorageSpec> all{object_store(), gp3(), lustre(125, 1.0), lustre(250, 1.48),
                                            lustre(500, 2.48), lustre(1000, 4.48), local_nvme()};
  return all;
}

const StorageSpec* find_storage(std::string_view name) {
  for (const StorageSpec& s : builtin_storage()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string_view to_string(StorageKind kind) {
  switch (kind) {
    case StorageKind::object: return "object";
    case StorageKind::block: return "block";
    case StorageKind::parallel_fs: return "parallel file system";
    case StorageKind::local: return "local";
  }
  return "object";
}

ReadCost read_cost(const DatasetStorage& d, int nodes, double nic_bytes_per_s) {
  if (!(d.sample_bytes > 0) || nodes < 1) throw std::invalid_argument("read_cost: needs a sample size and nodes");
  const StorageSpec& s = d.spec;
  ReadCost c;
  const auto samples_per_s = [&](double bytes_per_s) { return bytes_per_s / d.sample_bytes; };
  switch (s.kind) {
    case StorageKind::object: {
      // A worker's request: the first byte, then the object at one connection's rate, shared by
      // the samples the object holds.
      const double object_bytes = d.bytes_per_object();
      const double request_s = s.request_latency_s + object_bytes / s.connection_bytes_per_s;
      c.worker_s_per_sample = request_s * d.sample_bytes / object_bytes;
      if (nic_bytes_per_s > 0) c.node_samples_per_s = samples_per_s(nic_bytes_per_s);
      break;
    }
    case StorageKind::block: {
      // The volume's throughput, and its IOPS with a sample in ceil(bytes / I/O size) I/Os.
      const double ios_per_sample = std::ceil(d.sample_bytes / s.io_bytes);
      c.node_samples_per_s = samples_per_s(s.bytes_per_s);
      if (s.iops > 0) c.node_samples_per_s = std::min(c.node_samples_per_s, s.iops / ios_per_sample);
      break;
    }
    case StorageKind::parallel_fs: {
      const double capacity = std::max(d.capacity_bytes, s.min_capacity_bytes);
      c.node_samples_per_s = samples_per_s(s.bytes_per_s_per_tib * capacity / kTiB / nodes);
      if (nic_bytes_per_s > 0) c.node_samples_per_s = std::min(c.node_samples_per_s, samples_per_s(nic_bytes_per_s));
      break;
    }
    case StorageKind::local:
      c.node_samples_per_s = samples_per_s(s.bytes_per_s);
      break;
  }
  return c;
}

double storage_cost_usd(const DatasetStorage& d, double dataset_bytes, int nodes, double seconds, double reads) {
  const StorageSpec& s = d.spec;
  const double months = seconds / kSecondsPerMonth;
  switch (s.kind) {
    case StorageKind::object: {
      const double requests = reads * dataset_bytes / d.bytes_per_object();
      return s.price_per_gb_month * dataset_bytes / 1e9 * months + s.price_per_1000_requests * requests / 1000;
    }
    case StorageKind::block:
      return s.price_per_gb_month * dataset_bytes / 1e9 * months * nodes;  // a volume per node
    case StorageKind::parallel_fs:
      return s.price_per_gb_month * std::max(d.capacity_bytes, s.min_capacity_bytes) / 1e9 * months;
    case StorageKind::local:
      return 0;
  }
  return 0;
}

}  // namespace dlsim::models
