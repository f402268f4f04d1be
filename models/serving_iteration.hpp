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
// The serving engine's CPU time per iteration (EngineOverhead) is added after the GPU's, or
// overlapped with it. What is not modelled: sampling kernels, CUDA graphs' saved launches
// (device time is summed; launch gaps are not added).
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

// The serving engine's CPU time per iteration: scheduling, the block manager, preparing the
// inputs, sampling and processing the outputs (detokenising), each growing with the sequences in
// the iteration, and with tensor > 1 the engine's messages to its GPU workers:
//   cpu = per_iteration + per_sequence x sequences [+ worker_per_iteration + worker_per_sequence x sequences]
// where sequences = decodes + prefill chunks. vLLM up to 0.5 runs it between iterations, the
// GPU idle meanwhile (an iteration takes gpu + cpu); engines that overlap it (vLLM 0.6's
// asynchronous output processing, SGLang's overlap scheduler) take max(gpu, cpu).
struct EngineOverhead {
  double per_iteration_s = 0;
  double per_sequence_s = 0;
  double worker_per_iteration_s = 0;
  double worker_per_sequence_s = 0;
  bool overlapped = false;
  double cpu_s(int sequences, int tensor) const;
};

// vLLM up to 0.5, run between iterations: the medians vidur measured of the Sarathi/vLLM
// engine on an A100 host (microsoft/vidur, data/profiling/a100/cpu_overheads.csv: schedule,
// prepare inputs, sampler, process model outputs, worker communication; Llama-2-7B, 8 to 64
// sequences), fitted by least squares: 1.33 ms + 0.105 ms per sequence at tensor 1 (largest
// error 4.7%), and at tensor 2 and 4 (Llama-2-7B and 70B) 2.03 ms + 0.086 ms per sequence more
// for the Ray workers (mean error 13%). An independent check: vLLM 0.5.4 spends 17.2 ms per
// iteration outside the forward pass serving ShareGPT with Llama-3-8B on an A100 (WukLab,
// "Can Scheduling Overhead Dominate LLM Inference Performance?"), this fit's time for ~150
// sequences.
EngineOverhead vllm_0_5_engine();

struct ServingStepOptions {
  int tensor = 1;                       // GPUs of the replica (tensor parallel)
  Precision precision = Precision::fp16;
  double memory_utilization = 0.9;      // of device memory the server may use (vLLM's default 0.9)
  int max_batch_tokens = 8192;          // the largest T an iteration carries (sizes the workspace)
  EngineOverhead engine;                // default: none (the GPU's time only)
};

// Seconds of an all-reduce of `bytes` over the replica's tensor group (0 bytes: 0 s).
using AllReduceTime = std::function<double(double bytes)>;

class ServingStepModel {
 public:
  // Throws std::invalid_argument for a device without a fitted kernel profile, a tensor degree
  // that does not divide the model's heads, K/V heads or FFN, or a precision the GPU cannot run.
  ServingStepModel(DecoderConfig model, DeviceSpec device, DeviceProfile profile, ServingStepOptions options,
                   AllReduceTime all_reduce);

  // The GPU's time (gpu_s) and the engine's CPU time, added or overlapped.
  double iteration_s(const ServingBatch& batch) const;
  double gpu_s(const ServingBatch& batch) const;

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
