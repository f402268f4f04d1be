// What happens to a dataset before training starts (issue 22): a one-off preparation job on CPU
// nodes (decoding, resizing and packing images into shards, tokenizing text: the Spark or Ray
// jobs the seed papers describe), and moving the dataset between zones, regions or clouds.
//
// - Preparation: the dataset's samples over the job's vCPUs at a rate per vCPU the scenario
//   states (the work varies too much to guess: ImageNet decoded, resized and re-encoded by PIL runs
//   at about the pytorch loader's 117 images/s per vCPU, tokenizing text at thousands of documents
//   per second), after the job's start-up (cluster provisioning, e.g. 5-10 minutes for an EMR
//   cluster). Its nodes are billed per second with a one-minute minimum, like the training's.
// - Transfer: the dataset's bytes at the stated bandwidth, and the provider's data-transfer price
//   per GB where the data leaves (below). Moving data into a cloud is free on all three.
//
// Prices (USD per GB, a GB 1e9 bytes, list prices of 2024 for US regions):
// - AWS (aws.amazon.com/ec2/pricing/on-demand, "Data Transfer"): across availability zones 0.01
//   out and 0.01 in (0.02 per GB moved), to another region 0.02, to the internet 0.09 (the first
//   10 TB of a month; 0.085 to 0.05 beyond, not modelled).
// - GCP (cloud.google.com/vpc/network-pricing): across zones of a region 0.01, between regions of
//   North America 0.02, to the internet (Premium Tier) 0.12 (the first TiB of a month).
// - Azure (azure.microsoft.com/pricing/details/bandwidth): across availability zones 0 (not
//   charged since 2024), between regions of North America 0.02, to the internet 0.087 (after the
//   first 100 GB of a month).
// Prices of the CPU instance types: on-demand, Linux, us-east-1 / us-central1 / East US, 2024.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace dlsim::models {

// A CPU-only instance type for preparation jobs.
struct CpuInstance {
  std::string name;            // "aws/c5.18xlarge"
  std::string provider;        // "aws", "gcp", "azure"
  int vcpus = 0;
  double price_per_hour = 0;   // on-demand USD per node-hour
  std::string source;
};
const std::vector<CpuInstance>& builtin_cpu_instances();
const CpuInstance* find_cpu_instance(std::string_view name);

// The preparation job (absent when nodes == 0).
struct DatasetPreparation {
  std::string instance;             // the CPU instance type's name, or "" when given as vCPUs and a price
  int nodes = 0;
  int vcpus = 0;                    // per node
  double price_per_hour = 0;        // per node, USD
  double samples_per_vcpu_s = 0;    // samples one vCPU prepares per second
  double startup_s = 0;             // before the first sample (provisioning, framework)
  bool present() const { return nodes > 0; }
  // Start-up plus the samples spread over every vCPU.
  double seconds(double samples) const;
};

enum class TransferRoute { inter_zone, inter_region, internet };
std::string_view to_string(TransferRoute route);

// The price per GB of moving data out of `provider` along `route` (the table above). Throws
// std::invalid_argument for an unknown provider.
double transfer_usd_per_gb(std::string_view provider, TransferRoute route);

// The dataset moved once before training (absent when bytes_per_s == 0).
struct DatasetTransfer {
  TransferRoute route = TransferRoute::inter_region;
  std::string provider;             // where the data leaves
  double bytes_per_s = 0;           // the copy's sustained bandwidth
  double usd_per_gb = 0;            // transfer_usd_per_gb(provider, route)
  bool present() const { return bytes_per_s > 0; }
  double seconds(double bytes) const { return bytes / bytes_per_s; }
  double cost_usd(double bytes) const { return bytes / 1e9 * usd_per_gb; }
};

}  // namespace dlsim::models
