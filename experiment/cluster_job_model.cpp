#include "experiment/cluster_job_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "experiment/network_yaml.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/planner.hpp"
#include "models/memory_model.hpp"
#include "models/attention_model.hpp"
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

const network::Topology& ModelJobRates::nodes(const models::InstanceType& instance, const models::DeviceSpec& device, int count) {
  auto& slot = multi_node_[{instance.name, count}];
  if (!slot) {
    // As a training scenario without a network: section on this instance type would have it.
    ClusterConfig cluster;
    cluster.instance_name = instance.name;
    cluster.instance = instance;
    cluster.device = device;
    slot = std::make_unique<network::Topology>(default_topology(cluster, count));
  }
  return *slot;
}

namespace {

// The job's workload as a training scenario of it on `device` has it by default: a transformer's
// attention core FlashAttention where it runs the device and precision (workload.attention:
// auto), vocabulary projections padded (workload.pad_vocabulary: true), the global batch.
WorkloadConfig job_workload(const ModelJob& job, const models::ModelGraph& zoo, const models::DeviceSpec& device) {
  WorkloadConfig w;
  w.model_name = job.model;
  w.sequence_length = job.sequence_length;
  w.model = zoo;
  const auto decoders = models::decoder_model_names();
  if (std::find(decoders.begin(), decoders.end(), job.model) != decoders.end()) {
    w.decoder = models::decoder_config(job.model);
    w.decoder->flash_attention = models::flash_attention_unavailable(models::storage_precision(job.precision), device).empty();
    w.model = models::decoder_transformer(*w.decoder, job.sequence_length > 0 ? job.sequence_length : w.decoder->max_positions);
    w.model.name = zoo.name;
  } else if (models::zoo_model_is_encoder(job.model)
             && models::flash_attention_unavailable(models::storage_precision(job.precision), device).empty()) {
    w.model = models::encoder_model(job.model, {job.sequence_length, 0, true});  // as workload.attention: auto
  }
  for (models::Layer& layer : w.model.layers) {
    if (layer.vocabulary) layer.matmul.padded = true;
  }
  w.precision = job.precision;
  w.optimizer = job.optimizer;
  w.batch_mode = BatchMode::global;
  w.batch = static_cast<int>(job.global_batch);
  w.iterations = 1;
  return w;
}

// The fastest plan for the workload on `nodes` nodes, as `dlsim plan` finds it (objective
// fastest, no deadline or budget: every plan that fits, pruned by its bound, the rest simulated).
models::ParallelPlan fastest_plan(const WorkloadConfig& workload, const models::InstanceType& instance, const models::DeviceSpec& device,
                                  const models::DeviceProfile* profile, int nodes) {
  Scenario s;
  s.source = "planned job";
  s.cluster.instance_name = instance.name;
  s.cluster.instance = instance;
  s.cluster.device = device;
  if (profile != nullptr) s.cluster.profile = *profile;
  s.cluster.nodes = nodes;
  s.network = default_network(s.cluster);
  s.workload = workload;
  PlanSearchConfig search;
  search.objective = PlanObjective::fastest;
  search.instances = {instance.name};
  search.nodes = {nodes};
  s.search = search;
  PlanOptions options;
  options.threads = 1;  // cluster scenarios load on one thread; the answer is the same on any count
  try {
    const PlanResults r = search_plans({s}, options);
    return r.candidates.at(*r.best).plan;
  } catch (const ConfigError& e) {
    throw std::invalid_argument("no plan: " + e.message());
  }
}

}  // namespace

JobRate ModelJobRates::planned_rate(const ModelJob& job, int gpus, const models::InstanceType& instance, const models::DeviceSpec& device) {
  const int per_node = instance.accelerators_per_node;
  if (gpus > per_node && gpus % per_node != 0) {
    throw std::invalid_argument("a job with a plan spans whole nodes: " + std::to_string(gpus) + " GPUs are not a multiple of the " +
                                std::to_string(per_node) + " of a node");
  }
  const WorkloadConfig workload = job_workload(job, model(job.model, job.sequence_length), device);
  const int node_count = std::max(1, gpus / per_node);
  const models::DeviceProfile* profile = catalog_.find_profile(device.name);
  models::ParallelPlan plan;
  if (job.plan) {
    plan = resolve_plan(*job.plan, workload, instance, device, gpus);
    models::validate_plan(plan, workload.model, gpus);
  } else {
    plan = fastest_plan(workload, instance, device, profile, node_count);
  }
  JobRate r;
  r.memory_bytes = models::peak_memory(workload.model, plan).total();
  if (r.memory_bytes > device.memory_bytes) {
    throw std::invalid_argument(job.model + " with plan " + describe_plan(plan) + " needs " +
                                std::to_string(static_cast<long long>(r.memory_bytes / 1e9)) + " GB per GPU; " + device.name + " has " +
                                std::to_string(static_cast<long long>(device.memory_bytes / 1e9)) + " GB");
  }
  models::TrainingConfig config;
  config.model = &workload.model;
  config.plan = plan;
  config.device = device;
  if (profile != nullptr) config.profile = *profile;
  config.topology = &nodes(instance, device, node_count);
  const models::IterationBreakdown& step = cache_.get(config, instance.name + "/" + std::to_string(node_count) + "-nodes");
  r.iteration_s = step.iteration_s;
  r.overlap_s = 0;
  r.gradient_bytes = 0;  // in the replay, across nodes too
  r.tokens_per_sample = workload.model.tokens_per_sample;
  r.plan = describe_plan(plan);
  return r;
}

JobRate ModelJobRates::rate(const ModelJob& job, int gpus, const models::InstanceType& instance) {
  const models::DeviceSpec* device = catalog_.find_device(instance.device);
  if (device == nullptr) throw std::invalid_argument("instance " + instance.name + " names an unknown accelerator " + instance.device);
  if (!device->supports(job.precision)) {
    throw std::invalid_argument(instance.device + " has no " + std::string(models::to_string(job.precision)) + " support");
  }
  if (job.plan || job.planned) return planned_rate(job, gpus, instance, *device);
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
