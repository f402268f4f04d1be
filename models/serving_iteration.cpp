// One serving iteration's time and a replica's KV-cache capacity (serving_iteration.hpp).
#include "models/serving_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/attention_model.hpp"
#include "models/gemm_model.hpp"
#include "models/memory_kernel_model.hpp"

namespace dlsim::models {
namespace {

// Activation tensors alive at once in the largest iteration, per token, in units of the hidden
// size (the residual stream, the norm's output, attention's Q/K/V and output): the MLP's
// intermediate is counted apart (3 x its width: gate, up, and their product).
constexpr double kResidentHiddenTensors = 4;

}  // namespace

int ServingBatch::tokens() const {
  int t = decodes;
  for (const PrefillChunk& c : prefills) t += c.tokens;
  return t;
}

ServingStepModel::ServingStepModel(DecoderConfig model, DeviceSpec device, DeviceProfile profile,
                                   ServingStepOptions options, AllReduceTime all_reduce)
    : model_(std::move(model)),
      device_(std::move(device)),
      profile_(std::move(profile)),
      options_(options),
      all_reduce_(std::move(all_reduce)) {
  const int t = options_.tensor;
  const DecoderConfig& c = model_;
  const int kv_heads = c.kv_heads == 0 ? c.heads : c.kv_heads;
  if (t < 1) throw std::invalid_argument("tensor: must be >= 1");
  if (c.experts > 0) throw std::invalid_argument(c.name + ": mixture-of-experts models are not served yet");
  if (c.heads % t != 0) {
    throw std::invalid_argument("tensor: " + std::to_string(t) + " does not divide " + c.name + "'s " +
                                std::to_string(c.heads) + " attention heads");
  }
  if (kv_heads % t != 0 && t % kv_heads != 0) {
    throw std::invalid_argument("tensor: " + std::to_string(t) + " and " + c.name + "'s " + std::to_string(kv_heads) +
                                " K/V heads do not divide one another");
  }
  if (c.ffn % t != 0) {
    throw std::invalid_argument("tensor: " + std::to_string(t) + " does not divide " + c.name + "'s FFN size " +
                                std::to_string(c.ffn));
  }
  if (!profile_.kernels.present()) {
    throw std::invalid_argument(device_.name + " has no fitted kernel profile: serving iterations are timed kernel by kernel");
  }
  if (!device_.supports(options_.precision) || profile_.kernels.gemm_for(options_.precision) == nullptr) {
    throw std::invalid_argument(device_.name + " has no " + std::string(to_string(options_.precision)) + " GEMM rate");
  }
  if (options_.max_batch_tokens < 1) throw std::invalid_argument("max_batch_tokens: must be >= 1");
  element_ = bytes_per_element(storage_precision(options_.precision));
  head_dim_ = decoder_head_dim(c);
  q_features_ = decoder_q_features(c) / t;
  // With more ranks than K/V heads, each rank keeps a copy of one head (vLLM replicates them).
  kv_heads_per_rank_ = std::max(1.0, double(kv_heads) / t);
  kv_features_ = kv_heads_per_rank_ * head_dim_;
  flash_attention_ = flash_attention_unavailable(options_.precision, device_).empty();
  weight_bytes_ = decoder_transformer(c, 1).parameters() / t * bytes_per_element(options_.precision);
  const double tokens = options_.max_batch_tokens;
  const double mlp_width = double(c.ffn) / t * (c.gated_ffn() ? 3 : 2);
  workspace_bytes_ = tokens * (kResidentHiddenTensors * c.hidden + mlp_width) * element_;
  kv_bytes_per_token_ = 2.0 * c.layers * kv_features_ * element_;
}

double ServingStepModel::gemm_s(double m, double n, double k) const {
  if (m <= 0) return 0;
  GemmShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  return gemm_time(shape, options_.precision, device_, *profile_.kernels.gemm_for(options_.precision)).seconds;
}

double ServingStepModel::memory_s(int kernel_class, double bytes) const {
  if (bytes <= 0) return 0;
  return memory_kernel_time(static_cast<MemoryKernel>(kernel_class), bytes, profile_.kernels.memory,
                            device_.memory_bandwidth, profile_.memory_efficiency);
}

double ServingStepModel::layer_s(int tokens) const {
  if (tokens <= 0) return 0;
  const DecoderConfig& c = model_;
  const double T = tokens, h = c.hidden, t = options_.tensor, f = double(c.ffn) / t, e = element_;
  double layer = 0;
  // GEMMs: fused Q/K/V, attention output, (gate and) up, down.
  layer += gemm_s(T, q_features_ + 2 * kv_features_, h);
  layer += gemm_s(T, h, q_features_);
  layer += gemm_s(T, f * (c.gated_ffn() ? 2 : 1), h);
  layer += gemm_s(T, h, f);
  // Memory-bound kernels, each moving its inputs plus outputs.
  const int norms = c.parallel_block && !c.parallel_block_two_norms ? 1 : 2;
  const int residual_adds = c.parallel_block ? 1 : 2;  // a parallel block adds both halves at once
  layer += norms * memory_s(norm_class(), 2 * T * h * e);
  if (c.positions == Positions::rotary) layer += memory_s(static_cast<int>(MemoryKernel::rotary), 2 * T * (q_features_ + kv_features_) * e);
  layer += c.gated_ffn() ? memory_s(static_cast<int>(MemoryKernel::gated_act), 3 * T * f * e)
                       : memory_s(static_cast<int>(c.ffn_kind == FfnKind::relu ? MemoryKernel::relu : MemoryKernel::activation), 2 * T * f * e);
  layer += residual_adds * memory_s(static_cast<int>(MemoryKernel::stream), 3 * T * h * e);
  return layer;
}

double ServingStepModel::dense_s(int tokens) const {
  if (tokens <= 0) return 0;
  if (const auto it = dense_memo_.find(tokens); it != dense_memo_.end()) return it->second;
  const DecoderConfig& c = model_;
  const double T = tokens, h = c.hidden, e = element_;
  // Tensor-parallel all-reduces of the row-parallel outputs (one per block when parallel).
  const int reduces = c.parallel_block ? 1 : 2;
  const double communication = options_.tensor > 1 ? reduces * all_reduce_(T * h * e) : 0;
  const double total = c.layers * (layer_s(tokens) + communication) +
                       memory_s(static_cast<int>(MemoryKernel::embedding), 2 * T * h * e) +
                       (c.embedding_norm ? 2 : 1) * memory_s(norm_class(), 2 * T * h * e);  // the final (and embedding) norm
  dense_memo_.emplace(tokens, total);
  return total;
}

int ServingStepModel::norm_class() const {
  return static_cast<int>(model_.rms_norm ? MemoryKernel::rms_norm : MemoryKernel::layer_norm);
}

double ServingStepModel::prefill_attention_s(const PrefillChunk& chunk) const {
  if (chunk.tokens <= 0) return 0;
  const DecoderConfig& c = model_;
  const double t = options_.tensor;
  const double heads = c.heads / t;
  const double q = chunk.tokens, k = chunk.context + chunk.tokens;
  double s = 0;
  if (flash_attention_) {
    AttentionShape shape;
    shape.heads = heads;
    shape.kv_heads = kv_heads_per_rank_;
    shape.query_length = q;
    shape.key_length = k;
    shape.head_dim = head_dim_;
    shape.causal = true;
    s = flash_attention_time(shape, options_.precision, device_).forward_s;
  } else {
    // Without FlashAttention: scores and context as batched GEMMs over the heads.
    GemmShape scores;
    scores.m = q;
    scores.n = k;
    scores.k = head_dim_;
    scores.batch = heads;
    const GemmParams& p = *profile_.kernels.gemm_for(options_.precision);
    s = 2 * gemm_time(scores, options_.precision, device_, p).seconds +
        memory_s(static_cast<int>(MemoryKernel::softmax), 2 * heads * q * k * element_);
  }
  return c.layers * s;
}

double ServingStepModel::decode_attention_s(int decodes, double decode_context) const {
  if (decodes <= 0) return 0;
  // One query per sequence: the kernel reads every cached K and V once (and the queries and
  // outputs, negligible beside them).
  const double bytes = decode_context * 2 * kv_features_ * element_ + 2 * decodes * q_features_ * element_;
  return model_.layers * memory_s(static_cast<int>(MemoryKernel::stream), bytes);
}

double ServingStepModel::head_s(int emitting) const {
  if (emitting <= 0) return 0;
  return gemm_s(emitting, double(model_.vocab) / options_.tensor, model_.hidden);
}

EngineOverhead vllm_0_5_engine() {
  EngineOverhead e;
  e.per_iteration_s = 1.33e-3;
  e.per_sequence_s = 0.105e-3;
  e.worker_per_iteration_s = 2.03e-3;
  e.worker_per_sequence_s = 0.086e-3;
  e.overlapped = false;
  return e;
}

double EngineOverhead::cpu_s(int sequences, int tensor) const {
  double s = per_iteration_s + per_sequence_s * sequences;
  if (tensor > 1) s += worker_per_iteration_s + worker_per_sequence_s * sequences;
  return s;
}

double ServingStepModel::gpu_s(const ServingBatch& batch) const {
  const int tokens = batch.tokens();
  if (tokens <= 0) return 0;
  double s = dense_s(tokens) + decode_attention_s(batch.decodes, batch.decode_context) + head_s(batch.emitting);
  for (const PrefillChunk& chunk : batch.prefills) s += prefill_attention_s(chunk);
  return s;
}

double ServingStepModel::iteration_s(const ServingBatch& batch) const {
  const double gpu = gpu_s(batch);
  if (gpu <= 0) return 0;
  const double cpu = options_.engine.cpu_s(batch.decodes + static_cast<int>(batch.prefills.size()), options_.tensor);
  return options_.engine.overlapped ? std::max(gpu, cpu) : gpu + cpu;
}

double ServingStepModel::kv_capacity_tokens() const {
  const double usable = device_.memory_bytes * options_.memory_utilization - weight_bytes_ - workspace_bytes_;
  return usable > 0 ? std::floor(usable / kv_bytes_per_token_) : 0;
}

}  // namespace dlsim::models
