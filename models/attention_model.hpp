// The time of fused attention (FlashAttention) forward and backward on a GPU, from published
// kernel throughput (see attention_model.cpp for every figure and its source).
//
// FlashAttention (Dao et al. 2022; FlashAttention-2, Dao 2023; FlashAttention-3, Shah et al.
// 2024) computes softmax(Q K^T / sqrt(d)) V tile by tile in on-chip memory: no s x s matrix is
// written, so it is compute-bound at long sequences and its time is FLOPs / achieved rate. The
// achieved rate depends on the generation and precision (FA2 on Ampere and Ada, FA2 or FA3 on
// Hopper), the head dimension, the sequence length (short sequences leave SMs idle and pay the
// per-tile prologue) and causality (causal masking skips about half the tiles, but the diagonal
// tiles and the load imbalance cost some of that back), forward or backward (the backward pass
// does 2.5x the forward's matmul FLOPs and runs at a lower rate).
// FLOPs counted as the FlashAttention papers count them: forward 4 s_q s_k d heads per sequence,
// halved when causal; backward 2.5 x the forward.
#pragma once
#include <string>
#include "models/device_spec.hpp"
#include "models/flash_kernel.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

struct AttentionShape {
  double batch = 1;        // sequences
  double heads = 1;        // query heads (on this rank)
  double kv_heads = 1;     // key/value heads (grouped-query attention: heads / kv_heads queries share one)
  double query_length = 1;
  double key_length = 1;
  double head_dim = 64;
  bool causal = true;
  // The implementation: FA2 (the default), its Triton kernel (MPT/llm-foundry's attn_impl: triton,
  // the FA2 paper's "FlashAttention in Triton", slower than FA2 in each pass: attention_model.cpp
  // R8), or FlashAttention-3 on Hopper (R9).
  FlashKernel kernel = FlashKernel::fa2;
};

struct AttentionTime {
  double forward_s = 0;
  double backward_s = 0;
  double forward_flops = 0;    // as counted above
  double backward_flops = 0;
};

// Throws std::invalid_argument for sizes < 1 (or kv_heads > heads), a device without a peak for
// `precision`, a device FlashAttention does not run on or has no figures for (pre-Ampere GPUs: FA2
// needs sm80+; TPUs; an unknown generation or SM count), and precisions it does not run (fp32, tf32,
// fp64; fp8 except on Hopper, where FA3's FP8 forward is used and its backward runs in bf16), and
// FlashKernel::fa3 anywhere but on Hopper.
AttentionTime flash_attention_time(const AttentionShape& shape, Precision precision, const DeviceSpec& device);

// Why FlashAttention cannot run `precision` on `device` (the reasons above, sizes aside), or ""
// when it can: what frameworks' automatic choice (PyTorch SDPA, Megatron-Core with Transformer
// Engine) falls back on.
// `kernel`: FlashAttention-3 runs on Hopper only.
std::string flash_attention_unavailable(Precision precision, const DeviceSpec& device,
                                        FlashKernel kernel = FlashKernel::fa2);

}  // namespace dlsim::models
