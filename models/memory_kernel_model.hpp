// The time of one memory-bound kernel (norms, activations, residual adds, dropout, softmax,
// rotary embeddings, embedding gathers, the optimizer step) from the bytes it moves, per kernel
// class, from measured kernels (calibration/kernel_fit.hpp).
//
// Why a curve per class and not one bandwidth: small tensors do not reach HBM bandwidth (a
// launch-and-drain time dominates below about 1 MB), tensors that fit in L2 run faster than HBM
// (the measured residual add peaks above the HBM bandwidth between about 10 and 40 MB on A100),
// and kernels of the same traffic differ by up to 2x (a row-reduction RMSNorm reaches about a
// third of HBM bandwidth on A100 where a residual add reaches 88%). The curve is the measured
// time against bytes, piecewise linear in log-log between its nodes; above its last node the
// kernel is bandwidth-bound at the last node's rate (time proportional to bytes); below its
// first node it takes the first node's time.
#pragma once
#include <array>
#include <string_view>
#include <vector>

namespace dlsim::models {

// Kernel classes. The first seven are measured on the vidur tables (its op names in brackets);
// the others borrow the curve of the measured class nearest in access pattern (fallback_chain).
enum class MemoryKernel {
  stream,         // residual add and other two-in one-out streams [add]
  rms_norm,       // RMSNorm [input_layernorm of Llama-style models]
  layer_norm,     // LayerNorm [input_layernorm of phi-2]
  gated_act,      // SiLU(gate) x up, reads 2 writes 1 [mlp_act of gated FFNs]
  activation,     // GELU, tanh [mlp_act of phi-2]
  rotary,         // rotary position embedding in place on q and k [attn_rope]
  embedding,      // row gather [emb]
  softmax,        // row softmax (and its scale and mask): a row reduction like a norm
  dropout,        // mask draw and scale: a stream
  batch_norm,     // training-mode batch norm: a statistics pass, then normalize (streams)
  relu,           // ReLU: a stream
  pool,           // pooling windows: a stream
  cross_entropy,  // vocabulary softmax and loss: a row reduction
  optimizer,      // multi-tensor optimizer step: long streams
  count_
};
inline constexpr std::size_t kMemoryKernels = static_cast<std::size_t>(MemoryKernel::count_);
std::string_view to_string(MemoryKernel k);
// The classes whose curves a class runs on, first measured one first: its own; a norm the other
// norm's; softmax and cross-entropy (single-pass row reductions) a norm's; an activation the
// other activation's; and finally the stream's (batch norm, ReLU, dropout, pooling, optimizer).
std::array<MemoryKernel, 3> fallback_chain(MemoryKernel k);

// Passes over memory: bytes a class's forward and backward kernels move, as multiples of the
// layer's inputs plus outputs. A single-pass kernel moves them once (1). Batch norm in training
// reads its input twice (statistics, then normalize: 3 tensors where inputs plus outputs are 2);
// its backward reduces over x and dy and then reads both again to write dx (5 tensors). Norms,
// softmax, activations and ReLU read x (or y) and dy and write dx in backward (3 tensors); the
// gated activation reads gate, up and dy and writes both gradients (5 against 3); streams
// (adds, dropout), rotary, gathers, pooling move in backward what they moved in forward.
struct MemoryPasses {
  double forward = 1;
  double backward = 1;
};
MemoryPasses memory_passes(MemoryKernel k);

// Measured time against bytes moved, piecewise linear in log-log.
struct MemoryCurve {
  std::vector<double> bytes;      // strictly increasing, > 0
  std::vector<double> seconds;    // > 0, non-decreasing
  bool empty() const { return bytes.empty(); }
  double at(double bytes_moved) const;
};

struct MemoryKernelParams {
  std::array<MemoryCurve, kMemoryKernels> curves;  // empty where not measured
  // The curve a kernel class runs on (fallback_chain); nullptr when none is measured.
  const MemoryCurve* curve(MemoryKernel k) const;
  bool fitted() const { return !curves[0].empty(); }
};

// Seconds for a kernel of `bytes` moved; a class without any curve falls back on
// bytes / (bandwidth x fallback_efficiency).
double memory_kernel_time(MemoryKernel k, double bytes, const MemoryKernelParams& params, double memory_bandwidth,
                          double fallback_efficiency);

}  // namespace dlsim::models
