// FP8 training as NVIDIA Transformer Engine (TE) runs it on Hopper and later (`precision: fp8`):
// only the GEMMs of the transformer's linear layers run in FP8; everything else, and every tensor
// kept in memory, stays in BF16 (TE user guide, "Using FP8 with Transformer Engine": the FP8
// autocast region covers TE's Linear, LayerNormLinear, LayerNormMLP and GroupedLinear GEMMs).
//
// Which layers: a linear layer of a transformer block that Megatron-Core builds from TE modules,
// that is tensor-split (column- and row-parallel: QKV, attention projection, MLP up/gate and
// down) or an expert (TE's GroupedLinear). Replicated linears in a block (a MoE router, kept in
// higher precision by Megatron-Core) and everything outside blocks (the embedding, the output
// layer and loss, BERT's pooler and heads, ViT's patch embedding and head) stay in BF16, as
// attention's core (FlashAttention in BF16), norms, activations, dropout and residual adds do.
//
// An FP8 linear layer, per micro-batch (X input [m x k], W weight [n x k], dY output gradient
// [m x n]; bytes per element: BF16 2, FP8 1):
// - forward: X is cast to FP8 with its delayed scale and transposed in one kernel (TE's fused
//   cast-transpose, the amax taken in the same pass): reads 2, writes 1 + 1 per element of X. The
//   transposed copy is what the weight-gradient GEMM needs, because cuBLASLt runs FP8 GEMMs on
//   Hopper only in the "TN" layout (cuBLAS documentation, cublasLtMatmul FP8 requirements:
//   "A must be transposed and B non-transposed"); TE keeps it for backward.
//   Where a norm produces X (TE's LayerNormLinear: Megatron-Core's QKV and MLP-up layers), the
//   norm kernel writes X in FP8 itself (no cast kernel; its bytes are left as the bf16 norm's)
//   and sequence parallelism all-gathers that FP8 X (half the bf16 bytes, iteration_program.cpp);
//   TE keeps the FP8 X and transposes it in backward (tex.fp8_transpose: reads 1, writes 1 per
//   element of the gathered X; TE's layernorm_linear.py).
//   Then the GEMM Y = X W^T in FP8 (BF16 output).
// - W is cast and transposed the same way (4 bytes per element of W), once per iteration when
//   TE caches FP8 weights across micro-batches (its is_first_microbatch argument, which
//   Megatron-Core passes under gradient accumulation): the cast's time is then spread over the
//   micro-batches and its launch left out of the per-micro-batch host cost. Without caching
//   (one micro-batch, or ZeRO-3 where the BF16 weights are gathered anew for every use) it runs
//   in every forward.
// - backward: dY is cast and transposed (4 bytes per element of dY; a bias gradient is fused into
//   it, TE's cast-transpose-dbias, so no separate bias kernel), then the data-gradient GEMM
//   dX = dY W (with W's cached FP8 transpose) and the weight-gradient GEMM dW = dY^T X (with both
//   transposes), both FP8 inputs. Every FP8 GEMM runs as a TN kernel: the forward layout's kernel;
//   the forward product with fast accumulation, the two gradient products with the split
//   accumulator (kFp8SplitAccumulatorScale, below).
// - delayed scaling: each FP8 tensor keeps an amax history (TE's DelayedScaling default
//   amax_history_len = 1024, FP32) that TE rolls and turns into the next scale in a fused
//   multi-tensor update; its bytes (read and write the history, 8 bytes per entry, per tensor)
//   are added to the layer's cast kernels rather than launched as kernels of their own. The
//   all-reduce of the amaxes over the data- and tensor-parallel group (a few KB, latency-bound)
//   is not modelled.
// Casts are memory-bound kernels timed by the stream curve (memory_kernel_model.hpp): a
// cast-transpose reads one tensor and writes two, through shared memory, like a stream.
//
// GEMM speed: fp8_gemm_params() (below). Tiles: Hopper's FP8 tensor-core instruction takes twice
// the K elements of the 16-bit one for the same output (PTX ISA, wgmma.mma_async shapes m64nNk16
// for f16/bf16, m64nNk32 for e4m3/e5m2): the same operand bytes per K step, so cuBLASLt's FP8
// kernels use the output (CTA) tiles of its 16-bit ones with K tiles of twice the elements.
// gemm_tiles() gives FP8 those output tiles, so tile and wave quantization carry over; the model
// has no K tile (k_overhead is in elements of K, fitted near 0 on H100).
#pragma once

#include "models/device.hpp"
#include "models/kernel_profile.hpp"
#include "models/layer_kernels.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

// Bytes per element of each operand around an FP8 GEMM.
inline constexpr double kFp8Bytes = 1;
inline constexpr double kBf16Bytes = 2;
// TE's DelayedScaling default amax_history_len (TE >= 1.0; it was 1 in TE 0.x).
inline constexpr double kAmaxHistoryLength = 1024;

// How fast an FP8 GEMM runs against a 16-bit one of the same shape on the same GPU, measured by
// dlsim on an H200 (calibration/measured/h200/h200-fp8-gemm.csv: calibration/pytorch_kernels.py
// --only fp8, 2026-11-27): the 132 training products (forward, data and weight gradients) of
// GPT-3 6.7B and 175B layers at tensor-parallel 1 and 8, and of Llama 3 70B (tensor-parallel 4
// and 8) and Llama 3.1 405B (8) layers, each timed in BF16 (torch.matmul) and in FP8 E4M3
// (torch._scaled_mm: cuBLASLt, per-tensor scales, BF16 output) right after each other, so that
// both saw the same clock. The median BF16 / FP8 time is 1.876 with fast accumulation and 1.804
// with the split accumulator (partial sums promoted to FP32 every few K steps); over a doubled
// peak, FP8 keeps 0.938 and 0.902 of the 16-bit constants' peak fraction. Transformer Engine runs
// the forward product with fast accumulation and both gradient products with the split
// accumulator (transformer_engine/pytorch/module/base.py: _2X_ACC_FPROP false, _2X_ACC_DGRAD and
// _2X_ACC_WGRAD true). The ratio is one of the same die at the same clock, so it holds for the
// H100 (same SMs and 700 W limit) and is borrowed wherever FP8 GEMMs were not measured. (Before
// this measurement dlsim used 0.808, from Azure's FP8 GEMMs against the 16-bit model: that ratio
// mixed in the power limit, power_limit.hpp, which the replay now models on its own.)
enum class Fp8Accumulation { fast, split };
inline constexpr double kFp8FastAccumulationScale = 0.938;
inline constexpr double kFp8SplitAccumulatorScale = 0.902;

// True when `layer` runs its GEMMs in FP8 under a plan of precision `precision` (fp8 only).
bool runs_in_fp8(const Layer& layer, Precision precision);

// The GEMM constants for FP8 on a device: its own fitted FP8 constants where measured; else its
// FP16 (or BF16, or nearest, KernelProfile::gemm_for) constants applied to the FP8 peak with
// their peak fraction scaled by the accumulation's scale (above). Throws std::invalid_argument
// when the profile has no GEMM constants at all.
GemmParams fp8_gemm_params(const KernelProfile& kernels, Fp8Accumulation accumulation);

// The constants a lone GEMM of `precision` runs with (`dlsim kernel`, measured tables): FP8 as
// Transformer Engine's forward product (fast accumulation), every other precision its own or
// borrowed constants (KernelProfile::gemm_for). Throws std::invalid_argument when none are fitted.
GemmParams lone_gemm_params(const KernelProfile& kernels, Precision precision);

// Bytes of the FP8 copies TE caches per weight element: the FP8 weight and its transpose.
inline constexpr double kFp8WeightCopyBytes = 2 * kFp8Bytes;

// Where an FP8 layer's casts run (see above).
struct Fp8Casts {
  bool weights_cached = true;   // weights cast once per iteration (TE's FP8 weight caching)
  double micro_batches = 1;
  bool input_from_norm = false; // X written in FP8 by the norm before (LayerNormLinear)
};

// The kernels of one FP8 linear layer (runs_in_fp8) on one rank for `batch` samples: its three
// FP8 GEMMs and the cast-transpose kernels around them, timed with `profile`'s kernel model.
// `share` as layer_kernel_times takes it (rank_share). Throws std::invalid_argument where the
// device has no FP8 peak or the profile no GEMM constants.
LayerKernelTimes fp8_linear_kernel_times(const Layer& share, double batch, const Fp8Casts& casts,
                                         const DeviceSpec& device, const DeviceProfile& profile);

}  // namespace dlsim::models
