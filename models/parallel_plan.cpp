// Validation and stage partitioning of parallel plans (see parallel_plan.hpp).
#include "models/parallel_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace dlsim::models {

std::string to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved-1f1b";
  }
  return "?";
}

std::string to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

std::string to_string(Optimizer o) { return o == Optimizer::adam ? "adam" : "sgd-momentum"; }

std::string to_string(Axis a) {
  switch (a) {
    case Axis::tensor: return "tensor";
    case Axis::pipeline: return "pipeline";
    case Axis::data: return "data";
  }
  return "?";
}

std::string to_string(ZeroImplementation z) { return z == ZeroImplementation::fsdp ? "fsdp" : "deepspeed"; }
std::string to_string(DeepSpeedFetch f) { return f == DeepSpeedFetch::per_parameter ? "per-parameter" : "coalesced"; }
std::string to_string(BackwardPrefetch b) {
  return b == BackwardPrefetch::none ? "none" : b == BackwardPrefetch::post ? "post" : "pre";
}

namespace {

[[noreturn]] void reject(const std::string& field, const std::string& why) {
  throw std::invalid_argument("plan." + field + ": " + why);
}

std::string str(long long v) { return std::to_string(v); }

int max_experts(const ModelGraph& model) {
  int e = 0;
  for (const Layer& l : model.layers) e = std::max(e, l.experts);
  return e;
}

}  // namespace

void validate_plan(const ParallelPlan& p, const ModelGraph& model, int devices) {
  for (const auto& [name, v] : {std::pair{"data", p.data}, {"tensor", p.tensor}, {"pipeline", p.pipeline},
                                {"expert", p.expert}, {"virtual_stages", p.virtual_stages},
                                {"micro_batches", p.micro_batches}, {"micro_batch_size", p.micro_batch_size}}) {
    if (v < 1) reject(name, "must be >= 1, got " + str(v));
  }
  if (p.devices() != devices) {
    reject("data", "data x tensor x pipeline = " + str(p.data) + " x " + str(p.tensor) + " x " + str(p.pipeline) +
                       " = " + str(p.devices()) + " accelerators, but the cluster has " + str(devices));
  }
  if (p.zero_stage < 0 || p.zero_stage > 3) reject("zero_stage", "must be 0, 1, 2 or 3, got " + str(p.zero_stage));
  if (p.zero_stage >= 2 && p.pipeline > 1) {
    reject("zero_stage", "ZeRO stage " + str(p.zero_stage) +
                             " shards gradients or parameters, which pipeline parallelism cannot combine with "
                             "(gradients accumulate over micro-batches on each stage); use stage 0 or 1 with pipeline > 1");
  }
  if (!(p.bucket_bytes > 0)) reject("bucket", "must be > 0");
  const ZeroConfig& z = p.zero;
  for (const auto& [name, v] : {std::pair{"zero.prefetch_bucket_size", z.prefetch_bucket_size},
                                {"zero.max_live_parameters", z.max_live_parameters},
                                {"zero.max_reuse_distance", z.max_reuse_distance},
                                {"zero.param_persistence_threshold", z.param_persistence_threshold}}) {
    if (!(v >= 0)) reject(name, "must be >= 0");
  }
  if (!(z.reduce_bucket_size > 0)) reject("zero.reduce_bucket_size", "must be > 0");
  const ActivationCheckpointing& a = p.checkpointing;
  if ((a.partition_activations || a.cpu_checkpointing) && p.recompute != Recompute::full) {
    reject(a.partition_activations ? "activation_checkpointing.partition_activations" : "activation_checkpointing.cpu_checkpointing",
           "acts on the layer inputs that full recomputation keeps; needs recompute: full");
  }
  if (a.contiguous_memory_optimization && !a.partition_activations) {
    reject("activation_checkpointing.contiguous_memory_optimization",
           "needs partition_activations (DeepSpeed: contiguous checkpointing is only available with partitioned activations)");
  }
  validate_compression(p.compression);
  if (p.compression.method != CompressionMethod::none && p.zero_stage != 0) {
    reject("gradient_compression", "compresses the all-reduce of plain data parallelism; needs zero_stage: 0");
  }
  const ParameterServerConfig& ps = p.parameter_server;
  if (ps.enabled) {
    if (p.tensor != 1 || p.pipeline != 1 || p.expert != 1 || p.zero_stage != 0) {
      reject("parameter_server", "serves plain data parallelism; needs tensor, pipeline and expert 1 and zero_stage 0");
    }
    if (p.compression.method != CompressionMethod::none) reject("gradient_compression", "applies to all-reduce, not to parameter servers");
    if (p.data % ps.replicas_per_node != 0) reject("parameter_server", "the replicas do not fill whole worker nodes");
    validate_parameter_server(ps, p.data / ps.replicas_per_node);
  }
  std::array<bool, 3> seen{};
  for (Axis a : p.order) {
    if (seen[static_cast<int>(a)]) reject("order", "names " + to_string(a) + " twice; list tensor, pipeline and data once each");
    seen[static_cast<int>(a)] = true;
  }
  if (p.tensor > 1 && !model.has_tensor_layout()) {
    reject("tensor", "model " + model.name + " has no tensor-parallel layout (no layer is split by tensor "
                                             "parallelism); use tensor: 1");
  }
  if (p.sequence_parallel && p.tensor == 1) reject("sequence_parallel", "needs tensor > 1");
  if (p.expert > 1) {
    const int experts = max_experts(model);
    if (experts == 0) reject("expert", "model " + model.name + " has no mixture-of-experts layers; use expert: 1");
    if (p.data % p.expert != 0) reject("expert", "expert-parallel size " + str(p.expert) + " must divide data " + str(p.data));
    if (experts % p.expert != 0) {
      reject("expert", "expert-parallel size " + str(p.expert) + " must divide the " + str(experts) + " experts per layer");
    }
  }
  if (p.schedule == PipelineSchedule::interleaved) {
    if (p.pipeline < 2) reject("schedule", "interleaved 1F1B needs pipeline >= 2");
    if (p.virtual_stages < 2) reject("virtual_stages", "interleaved 1F1B needs virtual_stages >= 2 model chunks per rank");
    if (p.micro_batches % p.pipeline != 0) {
      reject("micro_batches", "interleaved 1F1B needs micro_batches (" + str(p.micro_batches) +
                                  ") to be a multiple of pipeline (" + str(p.pipeline) + ")");
    }
  } else if (p.virtual_stages != 1) {
    reject("virtual_stages", "model chunks per rank need schedule: interleaved-1f1b");
  }
  const int stages = p.virtual_pipeline();
  const int blocks = model.blocks();
  if (blocks > 0) {
    if (blocks % stages != 0) {
      reject("pipeline", "model " + model.name + " has " + str(blocks) + " blocks (layers), which do not divide into " +
                             str(stages) + " equal pipeline stages" +
                             (p.virtual_stages > 1 ? " (pipeline x virtual_stages)" : ""));
    }
  } else if (static_cast<int>(model.layers.size()) < stages) {
    reject("pipeline", "model " + model.name + " has " + str(model.layers.size()) + " layers, fewer than " +
                           str(stages) + " pipeline stages");
  }
}

std::vector<LayerRange> stage_partition(const ParallelPlan& plan, const ModelGraph& model) {
  const int stages = plan.virtual_pipeline();
  const int n = static_cast<int>(model.layers.size());
  std::vector<LayerRange> out(static_cast<std::size_t>(stages));
  const int blocks = model.blocks();
  if (blocks > 0) {
    const int per_stage = blocks / stages;
    // Stage of each layer: its block's stage; layers outside blocks stay with the block before
    // them (those before the first block go to the first stage, after the last to the last).
    int stage = 0;
    for (int i = 0; i < n; ++i) {
      const int b = model.layers[static_cast<std::size_t>(i)].block;
      if (b >= 0) stage = std::min(stages - 1, b / per_stage);
      auto& r = out[static_cast<std::size_t>(stage)];
      if (r.last == r.first) r.first = i;
      r.last = i + 1;
    }
    return out;
  }
  // Greedy: close a stage once it reaches its share of the remaining FLOPs, leaving at least
  // one layer for every remaining stage.
  double remaining = model.forward_flops_per_sample();
  int first = 0;
  for (int s = 0; s < stages; ++s) {
    const int left = stages - s;
    const double target = remaining / left;
    double acc = 0;
    int i = first;
    while (i < n - (left - 1)) {
      acc += model.layers[static_cast<std::size_t>(i)].forward_flops;
      ++i;
      if (s < stages - 1 && acc >= target) break;
    }
    if (s == stages - 1) i = n;
    out[static_cast<std::size_t>(s)] = {first, i};
    remaining -= acc;
    first = i;
  }
  return out;
}

int global_rank(const ParallelPlan& plan, int data_index, int pipeline_index, int tensor_index) {
  int rank = 0, stride = 1;
  for (Axis a : plan.order) {
    const int index = a == Axis::tensor ? tensor_index : a == Axis::pipeline ? pipeline_index : data_index;
    const int size = a == Axis::tensor ? plan.tensor : a == Axis::pipeline ? plan.pipeline : plan.data;
    rank += index * stride;
    stride *= size;
  }
  return rank;
}

}  // namespace dlsim::models
