// DeviceSpec: what a datasheet says about one accelerator (GPU or TPU chip).
// Units: FLOP/s, bytes, bytes/s. A peak of 0 means the precision is not supported.
#pragma once
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "models/precision.hpp"

namespace dlsim::models {

// The device generation: which kernels its vendor libraries run (tensor-core generation, tile
// shapes, FlashAttention version) and which measured profile is its nearest relative.
// Ordered by age among NVIDIA GPUs (the kernel model asks "Volta or newer"); cdna3 is AMD's
// Instinct MI300 family, tpu Google's chips, trainium AWS's Trainium chips.
enum class Generation { unknown, kepler, pascal, volta, turing, ampere, ada, hopper, blackwell, cdna3, tpu, trainium };
std::string_view to_string(Generation g);

// Chips whose matrix work runs on 128 x 128 systolic arrays behind an XLA compiler, which pads a
// matrix product to the array and picks its own memory layouts: Google's TPUs (MXUs) and AWS's
// Trainium (the NeuronCores' Tensor Engines, driven by PyTorch/XLA through the Neuron compiler).
inline bool systolic_array_chip(Generation g) { return g == Generation::tpu || g == Generation::trainium; }

struct DeviceSpec {
  std::string name;           // catalog name, e.g. "V100-16GB"
  std::string description;    // e.g. "NVIDIA Tesla V100 SXM2 16GB"
  std::array<double, 6> peak_flops{};  // indexed by Precision; FLOP/s, dense
  double memory_bytes = 0;             // device memory capacity
  double memory_bandwidth = 0;         // bytes/s
  double intra_node_link_bandwidth = 0;  // bytes/s per direction to peers in the node
  double pcie_bandwidth = 16e9;          // bytes/s per direction of its host link (x16)
  // What the kernel model (gemm_model.hpp) needs beyond the peaks, from vendor whitepapers:
  // the parallel units a GEMM's tiles are spread over (GPU: SMs; TPU: matrix units) and the
  // last-level on-chip cache. 0 = unknown: the kernel model is not used for the device.
  Generation generation = Generation::unknown;
  int compute_units = 0;
  // SMs held by communication kernels running at the same time (NCCL runs one CTA per channel
  // on an SM of its own until the collective ends): tiled kernels (GEMMs, convolutions) are
  // planned for compute_units, as cuBLAS's heuristic does not know, and run their waves on the
  // rest; FlashAttention runs on the rest (gemm_model, conv_model, attention_model; set by
  // iteration_program.cpp for training_replay.cpp). 0: the GPU is the kernel's alone.
  int busy_units = 0;
  double l2_bytes = 0;
  std::string source;                  // where the figures come from

  double peak(Precision p) const { return peak_flops[static_cast<int>(p)]; }
  bool supports(Precision p) const { return peak(p) > 0; }
  // The units a kernel's waves run on: all but those communication kernels hold, at least one.
  int units_left() const { return std::max(1, compute_units - std::max(0, busy_units)); }
};

}  // namespace dlsim::models
