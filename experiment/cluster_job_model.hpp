// Cluster jobs described by their model rather than by an iteration time. The models layer
// replays one data-parallel iteration of the job on one node of its pool's instance type
// (memoized: a trace of thousands of jobs replays each distinct configuration once); the cluster
// level adds the inter-node gradient all-reduce on the shared fabric (scheduler/fabric_share.hpp).
//
// Assumptions, stated: a cluster job without a plan is data parallel over its GPUs with a fixed
// batch per GPU; inside a node it runs as the replay says (its gradient all-reduce on NVLink
// included); across nodes it all-reduces its gradients once per iteration in a hierarchical ring,
// overlapped with backward (PyTorch DDP's default).
// A job with a plan (tensor, pipeline, ZeRO, ... as workload.plan) and a global batch is replayed
// whole on its nodes of the pool's instance type, joined as a training scenario without a
// network: section joins them (network_yaml.hpp, default_topology): every
// collective of the plan, across nodes too, is in its iteration time, which the shared fabric
// (fabric_share.hpp) then leaves alone (gradient_bytes 0). With `plan: planned` the plan is the
// fastest `dlsim plan` finds for the job's nodes (objective fastest: every plan that fits).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "experiment/scenario.hpp"
#include "models/catalog.hpp"
#include "models/job_performance.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"
#include "network/topology.hpp"

namespace dlsim::experiment {

struct ModelJob {
  std::string model;                 // a zoo name
  int sequence_length = 0;           // 0: the model's usual length
  int batch_per_gpu = 1;             // samples per GPU per iteration (without a plan)
  models::Precision precision = models::Precision::fp32;
  // With a plan: how the job splits (data is what tensor x pipeline x context leave), its
  // samples per iteration, and its optimizer.
  std::optional<PlanConfig> plan;
  bool planned = false;              // plan: planned: the fastest plan for its GPUs (`dlsim plan`'s search)
  std::int64_t global_batch = 0;
  models::Optimizer optimizer = models::Optimizer::sgd_momentum;
};

struct JobRate {
  double iteration_s = 0;            // one iteration, inside one node (no inter-node traffic)
  double overlap_s = 0;              // backward: what the inter-node all-reduce can hide under
  double gradient_bytes = 0;         // all-reduced across nodes per iteration
  double tokens_per_sample = 1;
  double memory_bytes = 0;           // peak per GPU
  std::string plan;                  // jobs with a plan or planned: the plan (describe_plan)
};

class ModelJobRates {
 public:
  explicit ModelJobRates(const models::Catalog& catalog) : catalog_(catalog) {}
  // Throws std::invalid_argument saying why (unknown model, unsupported precision, out of memory).
  JobRate rate(const ModelJob& job, int gpus, const models::InstanceType& instance);

 private:
  const models::ModelGraph& model(const std::string& name, int sequence_length);
  const network::Topology& one_node(const models::InstanceType& instance, const models::DeviceSpec& device);
  const network::Topology& nodes(const models::InstanceType& instance, const models::DeviceSpec& device, int count);
  JobRate planned_rate(const ModelJob& job, int gpus, const models::InstanceType& instance, const models::DeviceSpec& device);

  const models::Catalog& catalog_;
  models::JobPerformanceCache cache_;
  std::map<std::pair<std::string, int>, std::unique_ptr<models::ModelGraph>> models_;
  std::map<std::string, std::unique_ptr<network::Topology>> topologies_;
  std::map<std::pair<std::string, int>, std::unique_ptr<network::Topology>> multi_node_;
};

}  // namespace dlsim::experiment
