#include "experiment/cluster_job_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "experiment/network_yaml.hpp"
#include "models/memory_model.hpp"
#include "models/parallel_plan.hpp"
#include "models/zoo.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::experiment {

const models::ModelGraph& ModelJobRates::model(const std::string& name, int sequence_length) {
  auto& slot = models_[{name, sequence_length}];
  if (!slot) slot = std::make_unique<models::ModelGraph>(models::zoo_model(name, sequence_length));
  return *slot;
}

const network::Topology& ModelJobRates::one_node(const models::InstanceType& instance, const models::DeviceSpec& device) {
  auto& slot = topologies_[instance.name];
  if (!slot) {
    network::FabricSpec fabric;
    fabric.nodes = 1;
    slot = std::make_unique<network::Topology>(network::build_cluster(node_spec_for(instance, device), fabric));
  }
  return *slot;
}

JobRate ModelJobRates::rate(const ModelJob& job, int gpus, const models::InstanceType& instance) {
  const models::DeviceSpec* device = catalog_.find_device(instance.device);
  if (device == nullptr) throw std::invalid_argument("instance " + instance.name + " names an unknown accelerator " + instance.device);
  if (!device->supports(job.precision)) {
    throw std::invalid_argument(instance.device + " has no " + std::string(models::to_string(job.precision)) + " support");
  }
  const models::ModelGraph& graph = model(job.model, job.sequence_length);
  models::ParallelPlan plan;
  plan.data = std::min(gpus, instance.accelerators_per_node);
  plan.micro_batch_size = job.batch_per_gpu;
  plan.precision = job.precision;
  // Mixed precision keeps fp32 master gradients, reduced in fp32 (PyTorch AMP with DDP).
  plan.gradient_precision = models::Precision::fp32;
  JobRate r;
  r.memory_bytes = models::peak_memory(graph, plan).total();
  if (r.memory_bytes > device->memory_bytes) {
    throw std::invalid_argument(job.model + " with " + std::to_string(job.batch_per_gpu) + " samples per GPU needs " +
                                std::to_string(static_cast<long long>(r.memory_bytes / 1e9)) + " GB per GPU; " + device->name +
                                " has " + std::to_string(static_cast<long long>(device->memory_bytes / 1e9)) + " GB");
  }
  models::TrainingConfig config;
  config.model = &graph;
  config.plan = plan;
  config.device = *device;
  const models::DeviceProfile* profile = catalog_.find_profile(device->name);
  if (profile != nullptr) config.profile = *profile;
  config.topology = &one_node(instance, *device);
  const models::IterationBreakdown& step = cache_.get(config, instance.name + "/one-node");
  r.iteration_s = step.iteration_s;
  r.overlap_s = std::min(step.backward_s, step.iteration_s);
  r.gradient_bytes = graph.parameters() * models::bytes_per_element(plan.gradient_precision);
  r.tokens_per_sample = graph.tokens_per_sample;
  return r;
}

}  // namespace dlsim::experiment
