// Validation and stage partitioning of parallel plans (see parallel_plan.hpp).
#include "models/parallel_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace dlsim::models {

std::string to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved-1f1b";
    case PipelineSchedule::zb_h1: return "zb-h1";
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

std::string to_string(Axis a) {
  switch (a) {
    case Axis::tensor: return "tensor";
    case Axis::pipeline: return "pipeline";
    case Axis::data: return "data";
    case Axis::context: return "context";
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

// Context parallelism as Megatron-Core runs it (see parallel_plan.hpp), and what dlsim models of it.
void validate_context(const ParallelPlan& p, const ModelGraph& model) {
  bool fused_attention = false;
  for (const Layer& l : model.layers) {
    if (l.kind == LayerKind::attention) fused_attention = true;
    if (l.attention_core && l.kind != LayerKind::attention) {
      reject("context", "ring attention runs on fused (FlashAttention-style) attention; model " + model.name +
                            " computes attention unfused: set attention: flash");
    }
  }
  if (!fused_attention) reject("context", "model " + model.name + " has no attention layer to split by sequence; use context: 1");
  const double chunks = 2.0 * p.context;  // load-balanced causal split: 2c chunks per sequence
  if (std::fmod(model.tokens_per_sample, chunks) != 0) {
    reject("context", "splits each sequence into 2 x context = " + str(static_cast<long long>(chunks)) + " chunks; the " +
                          str(static_cast<long long>(model.tokens_per_sample)) + " tokens per sequence do not divide");
  }
  if (p.zero_stage == 3) reject("context", "is not modelled with ZeRO-3; use zero_stage 0, 1 or 2");
  if (p.expert > 1) reject("context", "is not modelled with expert parallelism; use expert: 1");
  if (p.compression.method != CompressionMethod::none) reject("context", "is not modelled with gradient compression");
  if (p.parameter_server.enabled) reject("context", "parameter servers serve plain data parallelism; use context: 1");
}

}  // namespace

void validate_plan(const ParallelPlan& p, const ModelGraph& model, int devices) {
  for (const auto& [name, v] : {std::pair{"data", p.data}, {"tensor", p.tensor}, {"pipeline", p.pipeline},
                                {"expert", p.expert}, {"context", p.context}, {"virtual_stages", p.virtual_stages},
                                {"micro_batches", p.micro_batches}, {"micro_batch_size", p.micro_batch_size}}) {
    if (v < 1) reject(name, "must be >= 1, got " + str(v));
  }
  if (p.devices() != devices) {
    const std::string context = p.context > 1 ? " x " + str(p.context) : "";
    reject("data", std::string("data x tensor x pipeline") + (p.context > 1 ? " x context" : "") + " = " + str(p.data) + " x " +
                       str(p.tensor) + " x " + str(p.pipeline) + context + " = " + str(p.devices()) +
                       " accelerators, but the cluster has " + str(devices));
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
  if (p.recompute_layers < 0) reject("recompute_layers", "must be >= 1");
  if (p.recompute_layers > 0 && p.recompute != Recompute::full) {
    reject("recompute_layers", "counts the blocks that full recomputation re-runs; needs recompute: full");
  }
  if (p.recompute_layers > 0 && p.zero_stage == 3) reject("recompute_layers", "is not modelled with ZeRO-3 (zero_stage 3)");
  if (p.recompute_layers > 0 && (a.partition_activations || a.cpu_checkpointing)) {
    reject("recompute_layers", "is not modelled with activation_checkpointing's partition_activations or cpu_checkpointing");
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
  std::array<bool, 4> seen{};
  for (Axis a : p.order) {
    if (seen[static_cast<int>(a)]) reject("order", "names " + to_string(a) + " twice; list tensor, context, pipeline and data once each");
    seen[static_cast<int>(a)] = true;
  }
  if (p.tensor > 1 && !model.has_tensor_layout()) {
    reject("tensor", "model " + model.name + " has no tensor-parallel layout (no layer is split by tensor "
                                             "parallelism); use tensor: 1");
  }
  if (p.sequence_parallel && p.tensor == 1) reject("sequence_parallel", "needs tensor > 1");
  if (p.tp_comm_overlap && !p.sequence_parallel) {
    reject("tp_comm_overlap", "overlaps sequence parallelism's all-gathers and reduce-scatters with the GEMMs (as Megatron-Core "
                              "requires); needs sequence_parallel: true");
  }
  if (p.schedule == PipelineSchedule::zb_h1 && p.zero_stage == 3) {
    reject("schedule", "zb-h1 defers weight gradients, which ZeRO-3 reduce-scatters layer by layer inside backward; use "
                       "zero_stage 0, 1 or 2");
  }
  if (p.tp_comm_overlap && p.zero_stage == 3) reject("tp_comm_overlap", "is not modelled with ZeRO-3; use zero_stage 0, 1 or 2");
  if (p.overlap_param_gather && (p.zero_stage < 1 || p.zero_stage > 2)) {
    reject("overlap_param_gather", "overlaps the all-gather of the parameters a sharded optimizer updated (Megatron-Core's "
                                   "distributed optimizer); needs zero_stage 1 or 2");
  }
  if (p.context > 1) validate_context(p, model);
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
  } else if (p.schedule == PipelineSchedule::zb_h1 && p.virtual_stages != 1) {
    reject("virtual_stages", "zb-h1 runs one model chunk per rank (ZB-H1, not ZB-V); use virtual_stages: 1");
  } else if (p.virtual_stages != 1) {
    reject("virtual_stages", "model chunks per rank need schedule: interleaved-1f1b");
  }
  const int stages = p.virtual_pipeline();
  const int blocks = model.blocks();
  if (blocks > 0) {
    stage_blocks(p, model);  // throws with the field when the blocks cannot be split so
    const auto ranges = stage_partition(p, model);
    for (std::size_t v = 0; v < ranges.size(); ++v) {
      if (ranges[v].last == ranges[v].first) {
        reject(!p.stage_layers.empty() ? "stage_layers" : "pipeline",
               "virtual stage " + str(static_cast<long long>(v)) + " would hold no layer of model " + model.name);
      }
    }
  } else {
    if (static_cast<int>(model.layers.size()) < stages) {
      reject("pipeline", "model " + model.name + " has " + str(model.layers.size()) + " layers, fewer than " +
                             str(stages) + " pipeline stages");
    }
    const bool split_given = !p.stage_layers.empty() || p.first_stage_layers > 0 || p.last_stage_layers > 0 ||
                             p.account_for_embedding || p.account_for_loss;
    if (split_given) {
      reject(!p.stage_layers.empty() ? "stage_layers" : p.first_stage_layers > 0 ? "first_stage_layers"
             : p.last_stage_layers > 0 ? "last_stage_layers" : p.account_for_embedding ? "account_for_embedding" : "account_for_loss",
             "model " + model.name + " has no blocks (transformer layers) to split; its layers are cut by FLOPs");
    }
  }
}

std::vector<int> stage_blocks(const ParallelPlan& p, const ModelGraph& model) {
  const int stages = p.virtual_pipeline();
  const int blocks = model.blocks();
  const std::string what = "model " + model.name + " has " + str(blocks) + " blocks (layers)";
  const std::string over = str(stages) + " pipeline stages" + (p.virtual_stages > 1 ? " (pipeline x virtual_stages)" : "");
  const int ends = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
  const int ways = (!p.stage_layers.empty() ? 1 : 0) + (ends > 0 ? 1 : 0) + (p.account_for_embedding || p.account_for_loss ? 1 : 0);
  if (ways > 1) {
    reject(!p.stage_layers.empty() ? "stage_layers" : "first_stage_layers",
           "give one way of splitting the layers: stage_layers, first/last_stage_layers, or account_for_embedding/loss");
  }
  std::vector<int> counts(static_cast<std::size_t>(stages), 0);
  if (!p.stage_layers.empty()) {
    if (static_cast<int>(p.stage_layers.size()) != stages) {
      reject("stage_layers", "lists " + str(p.stage_layers.size()) + " stages, the plan has " + over);
    }
    long long sum = 0;
    for (int s = 0; s < stages; ++s) {
      const int c = p.stage_layers[static_cast<std::size_t>(s)];
      const bool end = s == 0 || s == stages - 1;
      if (c < (end ? 0 : 1)) {
        reject("stage_layers", "stage " + str(s) + " has " + str(c) + " layers; every stage but the first and last needs at least 1");
      }
      sum += c;
    }
    if (sum != blocks) reject("stage_layers", "adds up to " + str(sum) + " layers; " + what);
    return p.stage_layers;
  }
  if (ends > 0) {
    if (stages < 2) reject(p.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers", "needs pipeline >= 2");
    const int rest = blocks - p.first_stage_layers - p.last_stage_layers;
    const int others = stages - ends;
    if (rest < others || (others == 0 && rest != 0) || (others > 0 && rest % others != 0)) {
      reject(p.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers",
             what + "; the " + str(rest) + " left after the end stages given do not divide evenly over the other " +
                 str(others) + " stages");
    }
    for (int& c : counts) c = others > 0 ? rest / others : 0;
    if (p.first_stage_layers > 0) counts.front() = p.first_stage_layers;
    if (p.last_stage_layers > 0) counts.back() = p.last_stage_layers;
    return counts;
  }
  if (p.account_for_embedding || p.account_for_loss) {
    const int e = p.account_for_embedding ? 1 : 0, l = p.account_for_loss ? 1 : 0;
    const int units = blocks + e + l;
    if (units % stages != 0) {
      reject(p.account_for_embedding ? "account_for_embedding" : "account_for_loss",
             what + "; with the embedding and loss counted as layers, " + str(units) + " do not divide into " + over);
    }
    for (int& c : counts) c = units / stages;
    counts.front() -= e;
    counts.back() -= l;
    if (counts.front() < 0 || counts.back() < 0) {
      reject(p.account_for_embedding ? "account_for_embedding" : "account_for_loss", what + ": too few to split so over " + over);
    }
    return counts;
  }
  if (blocks < stages) reject("pipeline", what + ", fewer than " + over);
  for (int& c : counts) c = blocks / stages;
  // The remainder: middle stages first (the ends also run the embedding and the output layer).
  std::vector<int> order;
  for (int s = 1; s + 1 < stages; ++s) order.push_back(s);
  if (stages > 1) order.push_back(stages - 1);
  order.push_back(0);
  for (int k = 0; k < blocks % stages; ++k) ++counts[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
  return counts;
}

std::vector<LayerRange> stage_partition(const ParallelPlan& plan, const ModelGraph& model) {
  const int stages = plan.virtual_pipeline();
  const int n = static_cast<int>(model.layers.size());
  std::vector<LayerRange> out(static_cast<std::size_t>(stages));
  const int blocks = model.blocks();
  if (blocks > 0) {
    // The stage of each block from the cumulative counts.
    const std::vector<int> counts = stage_blocks(plan, model);
    std::vector<int> stage_of_block;
    for (int s = 0; s < stages; ++s) stage_of_block.insert(stage_of_block.end(), static_cast<std::size_t>(counts[static_cast<std::size_t>(s)]), s);
    // Layers outside blocks stay with the block before them; those before the first block go
    // to the first stage, those after the last block to the last stage.
    int last_block_layer = -1;
    for (int i = 0; i < n; ++i) if (model.layers[static_cast<std::size_t>(i)].block >= 0) last_block_layer = i;
    int stage = 0;
    for (int i = 0; i < n; ++i) {
      const int b = model.layers[static_cast<std::size_t>(i)].block;
      if (b >= 0) stage = stage_of_block[static_cast<std::size_t>(b)];
      if (i > last_block_layer) stage = stages - 1;
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

int global_rank(const ParallelPlan& plan, int data_index, int pipeline_index, int tensor_index, int context_index) {
  int rank = 0, stride = 1;
  for (Axis a : plan.order) {
    const std::array<int, 2> index_size = a == Axis::tensor     ? std::array{tensor_index, plan.tensor}
                                          : a == Axis::pipeline ? std::array{pipeline_index, plan.pipeline}
                                          : a == Axis::context  ? std::array{context_index, plan.context}
                                                                : std::array{data_index, plan.data};
    rank += index_size[0] * stride;
    stride *= index_size[1];
  }
  return rank;
}

}  // namespace dlsim::models
