// Where a training job's dataset lives and what reading it costs (issue 22): the storage kinds
// of the clouds, with datasheet figures, as a stage of the input pipeline (input_pipeline.hpp).
//
// - object (S3): each loader worker reads its samples' objects over its own connection, one
//   request at a time: a request costs a first-byte latency plus its bytes at one connection's
//   rate, and the worker decodes only after its read (PyTorch's map-style workers do both in
//   turn). AWS's S3 guidance: first byte in 100-200 ms, one concurrent request per 85-90 MB/s of
//   throughput ("Best practices design patterns: optimizing Amazon S3 performance",
//   docs.aws.amazon.com); a node reads at most its NIC's bandwidth.
// - block (EBS gp3): one volume per node holding a copy of the dataset: its throughput and IOPS
//   are the node's limits (gp3 baseline 125 MiB/s and 3,000 IOPS, provisionable to 1,000 MiB/s
//   and 16,000 IOPS; an I/O counts up to 256 KiB; AWS EBS volume types page).
// - parallel_fs (FSx for Lustre, Persistent-2 SSD): throughput per TiB provisioned (125, 250, 500
//   or 1,000 MB/s/TiB), shared by every node of the job (FSx for Lustre user guide, "Performance
//   characteristics of SSD and HDD storage classes").
// - local (instance NVMe, a copy per node): its bandwidth as given; no charge beyond the instance.
// Prices: us-east-1 list prices (aws.amazon.com/s3/pricing, /ebs/pricing, /fsx/lustre/pricing,
// 2024): S3 Standard 0.023 USD/GB-month and 0.0004 USD per 1,000 GETs; gp3 0.08 USD/GB-month
// (its baseline IOPS and throughput included); FSx Persistent-2 SSD 0.145 USD/GB-month at 125
// MB/s/TiB, the faster tiers at that price times the ratios of the ap-northeast-1 list (2022:
// 1.48, 2.48 and 4.48 for 250, 500 and 1,000 MB/s/TiB; minimum 1.2 TiB). A GB is 1e9 bytes, a
// month 30 days.
//
// After the first epoch a node can keep the dataset (page cache or local disk) when it fits:
// later epochs then read nothing from the storage (`cached`). dlsim does not know instances'
// memory yet, so the scenario says whether it fits.
#pragma once
#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace dlsim::models {

enum class StorageKind { object, block, parallel_fs, local };

struct StorageSpec {
  std::string name;                     // "aws/s3"
  StorageKind kind = StorageKind::object;
  double connection_bytes_per_s = 0;    // object: one connection's rate
  double request_latency_s = 0;         // object: first byte of each request
  double bytes_per_s = 0;               // block: per volume; local: per node
  double iops = 0;                      // block: I/Os per second per volume (0: no limit)
  double io_bytes = 0;                  // block: the largest I/O counted as one
  double bytes_per_s_per_tib = 0;       // parallel_fs: per TiB provisioned, for the whole job
  double min_capacity_bytes = 0;        // parallel_fs: the smallest file system
  double price_per_gb_month = 0;        // USD, of the capacity held
  double price_per_1000_requests = 0;   // USD, object GETs
  std::string source;
};

// The built-in storage kinds ("aws/s3", "aws/ebs-gp3", "aws/fsx-lustre-125" ... "-1000",
// "local-nvme") and one by name (nullptr when unknown).
const std::vector<StorageSpec>& builtin_storage();
const StorageSpec* find_storage(std::string_view name);
std::string_view to_string(StorageKind kind);

// A dataset on a storage, as a job reads it.
struct DatasetStorage {
  StorageSpec spec;
  double sample_bytes = 0;              // > 0: one sample as stored
  double object_bytes = 0;              // object: bytes per stored object (a file per sample, or shards)
  double capacity_bytes = 0;            // parallel_fs: provisioned (>= the dataset and the minimum)
  bool cached = false;                  // later epochs read from the node's cache
  bool present() const { return sample_bytes > 0; }
  double bytes_per_object() const { return std::max(object_bytes, sample_bytes); }
};

// What reading costs a loader: the seconds a worker spends reading one sample (it decodes only
// after), and the node's read limit in samples per second (its share of what the storage serves;
// infinity when unlimited).
struct ReadCost {
  double worker_s_per_sample = 0;
  double node_samples_per_s = std::numeric_limits<double>::infinity();
};
// For a job of `nodes` nodes, each with `nic_bytes_per_s` of network bandwidth.
ReadCost read_cost(const DatasetStorage& storage, int nodes, double nic_bytes_per_s);

// The storage's bill for holding `dataset_bytes` for `seconds` on a job of `nodes` nodes (a block
// volume or local copy per node; one bucket or file system for all) and reading it `reads` times
// in full (requests: object storage).
double storage_cost_usd(const DatasetStorage& storage, double dataset_bytes, int nodes, double seconds, double reads);

}  // namespace dlsim::models
