// Memoized job performance (see job_performance.hpp).
#include "models/job_performance.hpp"

#include <functional>

namespace dlsim::models {

JobKey JobKey::of(const TrainingConfig& c, const std::string& fabric) {
  JobKey k;
  k.model = c.model->name;
  const auto& layers = c.model->layers;
  k.tokens_per_sample = c.model->tokens_per_sample;
  k.model_layers = layers.size();
  if (!layers.empty()) {
    k.first_layer_flops = layers.front().forward_flops;
    k.middle_layer_parameters = layers[layers.size() / 2].parameters;
    k.last_layer_flops = layers.back().forward_flops;
  }
  k.device = c.device.name;
  k.matmul_efficiency = c.profile.matmul_efficiency;
  k.memory_efficiency = c.profile.memory_efficiency;
  k.launch_overhead_s = c.profile.kernel_launch_overhead_s;
  k.profile_source = c.profile.source;
  k.profile_fingerprint = c.profile.fingerprint();
  k.fabric = fabric;
  k.all_reduce = static_cast<int>(c.all_reduce);
  const ParallelPlan& p = c.plan;
  k.data = p.data;
  k.tensor = p.tensor;
  k.pipeline = p.pipeline;
  k.expert = p.expert;
  k.context = p.context;
  k.virtual_stages = p.virtual_stages;
  k.micro_batches = p.micro_batches;
  k.micro_batch_size = p.micro_batch_size;
  k.zero_stage = p.zero_stage;
  k.schedule = static_cast<int>(p.schedule);
  k.recompute = static_cast<int>(p.recompute);
  k.recompute_layers = p.recompute_layers;
  k.precision = static_cast<int>(p.precision);
  k.gradient_precision = static_cast<int>(p.gradient_precision);
  k.optimizer = static_cast<int>(p.optimizer);
  k.order = 0;
  for (Axis a : p.order) k.order = k.order * 4 + static_cast<int>(a);
  k.sequence_parallel = p.sequence_parallel;
  k.overlap = p.overlap_grad_reduce;
  k.scatter_gather = p.scatter_gather;
  k.overlap_p2p = p.overlap_p2p;
  k.tp_comm_overlap = p.tp_comm_overlap;
  k.overlap_param_gather = p.overlap_param_gather;
  k.stage_layers = p.stage_layers;
  k.first_stage_layers = p.first_stage_layers;
  k.last_stage_layers = p.last_stage_layers;
  k.account_for_embedding = p.account_for_embedding;
  k.account_for_loss = p.account_for_loss;
  k.bucket_bytes = p.bucket_bytes;
  k.zero = p.zero;
  k.checkpointing = p.checkpointing;
  k.compression = p.compression;
  k.parameter_server = p.parameter_server;
  return k;
}

std::size_t JobKeyHash::operator()(const JobKey& k) const noexcept {
  std::size_t h = std::hash<std::string>{}(k.model);
  const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<std::string>{}(k.device));
  mix(std::hash<std::string>{}(k.fabric));
  for (double d : {k.tokens_per_sample, k.last_layer_flops, k.bucket_bytes, k.matmul_efficiency}) mix(std::hash<double>{}(d));
  for (int i : {k.data, k.tensor, k.pipeline, k.expert, k.context, k.virtual_stages, k.micro_batches, k.micro_batch_size, k.zero_stage,
                k.schedule, k.recompute, k.precision}) {
    mix(static_cast<std::size_t>(i));
  }
  return h;
}

const IterationBreakdown& JobPerformanceCache::get(const TrainingConfig& config, const std::string& fabric) {
  JobKey key = JobKey::of(config, fabric);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  IterationBreakdown b = replay_iteration(config);
  return entries_.emplace(std::move(key), b).first->second;
}

const IterationBreakdown* JobPerformanceCache::find(const JobKey& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace dlsim::models
