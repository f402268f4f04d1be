// JobPerformance: what a job achieves with one configuration (model, plan, device, fabric), from
// one replayed iteration, memoized. The cluster level (scheduler/) asks again every time a job
// starts, resizes or moves; identical configurations are replayed once.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>
#include <unordered_map>

#include "models/training_replay.hpp"

namespace dlsim::models {

// Everything a replay's result depends on, compared field by field. `fabric` names the
// topology the caller built (its node and fabric description); the cache cannot see inside it.
struct JobKey {
  // The model by name, sequence length, layer count and three sample layers' costs: enough to
  // tell apart the variants of a name (sequence lengths, user edits) without summing every
  // layer on each lookup (GPT-3 has about a thousand).
  std::string model;
  double tokens_per_sample = 0;
  std::size_t model_layers = 0;
  double first_layer_flops = 0, middle_layer_parameters = 0, last_layer_flops = 0;
  std::string device;
  double matmul_efficiency = 0, memory_efficiency = 0, launch_overhead_s = 0;
  std::string profile_source;
  double profile_fingerprint = 0;  // the calibrated curves (device.hpp)
  std::string fabric;
  int all_reduce = 0;
  int data = 0, tensor = 0, pipeline = 0, expert = 0, context = 0, virtual_stages = 0, micro_batches = 0, micro_batch_size = 0;
  int zero_stage = 0, schedule = 0, recompute = 0, recompute_layers = 0, precision = 0, gradient_precision = 0, optimizer = 0;
  int order = 0;
  bool sequence_parallel = false, overlap = false, scatter_gather = false, overlap_p2p = false, tp_comm_overlap = false, overlap_param_gather = false;
  std::vector<int> stage_layers;
  int first_stage_layers = 0, last_stage_layers = 0;
  bool account_for_embedding = false, account_for_loss = false;
  double bucket_bytes = 0;
  ZeroConfig zero;
  ActivationCheckpointing checkpointing;
  GradientCompression compression;
  ParameterServerConfig parameter_server;

  static JobKey of(const TrainingConfig& config, const std::string& fabric);
  bool operator==(const JobKey&) const = default;
};

struct JobKeyHash {
  std::size_t operator()(const JobKey& k) const noexcept;
};

class JobPerformanceCache {
 public:
  // The iteration breakdown of `config` on the fabric named `fabric`: replayed on the first
  // request, looked up afterwards. Throws what replay_iteration throws (nothing is cached then).
  const IterationBreakdown& get(const TrainingConfig& config, const std::string& fabric);
  // Lookup only: nullptr when not replayed yet.
  const IterationBreakdown* find(const JobKey& key) const;

  std::size_t size() const { return entries_.size(); }
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  std::unordered_map<JobKey, IterationBreakdown, JobKeyHash> entries_;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace dlsim::models
