// The time of one batch iteration of an LLM serving replica, kernel by kernel, and the KV-cache
// capacity its memory leaves.
//
// An iteration (continuous batching, as Orca and vLLM run it) carries decode sequences (one new
// token each) and prefill chunks (a slice of a prompt, after the part already in the cache). On
// one rank of a tensor-parallel replica, every layer runs:
// - the GEMMs of its linear layers at the batch's token count T (models::gemm_time; rows T,
//   columns and depth the rank's share of the layer's weights);
// - its memory-bound kernels (norms, rotary, the gated activation, residual adds) on T tokens
//   (models::memory_kernel_time with the measured curves);
// - attention: each prefill chunk as a causal FlashAttention forward (its queries against the
//   cached context plus itself); the decode sequences as one memory-bound read of every
//   sequence's cached K and V (paged attention is bandwidth-bound at one query per sequence);
// - two tensor-parallel all-reduces of T x hidden activations (attention output, MLP output),
//   timed by the caller's all-reduce function (the node's links and NCCL, network/).
// Then the LM head (a GEMM over the sequences that emit a token) and the embedding gather.
//
// What is not modelled: CPU time of the serving engine between iterations, sampling kernels,
// CUDA graphs' saved launches (device time is summed; launch gaps are not added).
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/device.hpp"
#include "models/precision.hpp"
#include "models/zoo.hpp"

namespace dlsim::models {

// One prefill chunk of an iteration: `tokens` new prompt tokens after `context` cached ones.
struct PrefillChunk {
  int tokens = 0;
  int context = 0;
};

// What one iteration carries.
struct ServingBatch {
  std::vector<PrefillChunk> prefills;
  int decodes = 0;               // sequences decoding one token each
  double decode_context = 0;     // their cached tokens, summed
  int emitting = 0;              // sequences that emit a token this iteration (LM head rows)
  int tokens() const;            // decodes + every chunk's tokens
};

struct ServingStepOptions {
  int tensor = 1;                       // GPUs of the replica (tensor parallel)
  Precision precision = Precision::fp16;
  double memory_utilization = 0.9;      // of device memory the server may use (vLLM's default 0.9)
  int max_batch_tokens = 8192;          // the largest T an iteration carries (sizes the workspace)
};

// Seconds of an all-reduce of `bytes` over the replica's tensor group (0 bytes: 0 s).
using AllReduceTime = std::function<double(double bytes)>;

class ServingStepModel {
 public:
  // Throws std::invalid_argument for a device without a fitted kernel profile, a tensor degree
  // that does not divide the model's heads, K/V heads or FFN, or a precision the GPU cannot run.
  ServingStepModel(DecoderConfig model, DeviceSpec device, DeviceProfile profile, ServingStepOptions options,
                   AllReduceTime all_reduce);

  double iteration_s(const ServingBatch& batch) const;

  // The parts, for tests and the breakdown: every layer's T-dependent kernels (GEMMs, memory
  // kernels, all-reduces) at T tokens; prefill attention; decode attention; LM head and embedding.
  double dense_s(int tokens) const;
  // One layer's kernels at T tokens without attention and communication: what vidur's per-layer
  // kernel tables measure (the GEMMs, norms, rotary, activation and residual adds).
  double layer_s(int tokens) const;
  double prefill_attention_s(const PrefillChunk& chunk) const;
  double decode_attention_s(int decodes, double decode_context) const;
  double head_s(int emitting) const;

  // Memory per rank: the weights, the activation workspace of the largest iteration, and the
  // KV cache: bytes of one token's K and V over every layer, and how many tokens fit.
  double weight_bytes() const { return weight_bytes_; }
  double workspace_bytes() const { return workspace_bytes_; }
  double kv_bytes_per_token() const { return kv_bytes_per_token_; }
  double kv_capacity_tokens() const;

  const DecoderConfig& model() const { return model_; }
  const ServingStepOptions& options() const { return options_; }

 private:
  double gemm_s(double m, double n, double k) const;
  double memory_s(int kernel_class, double bytes) const;
  int norm_class() const;

  DecoderConfig model_;
  DeviceSpec device_;
  DeviceProfile profile_;
  ServingStepOptions options_;
  AllReduceTime all_reduce_;
  double element_ = 2;
  double head_dim_ = 0, q_features_ = 0, kv_features_ = 0;
  double kv_heads_per_rank_ = 1;
  bool flash_attention_ = true;   // FlashAttention runs this precision on this device
  double weight_bytes_ = 0, workspace_bytes_ = 0, kv_bytes_per_token_ = 0;
  mutable std::unordered_map<int, double> dense_memo_;
};

}  // namespace dlsim::models
