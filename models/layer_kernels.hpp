// The kernels one layer runs on one rank in forward and backward, timed by the kernel-level
// model (kernel_profile.hpp): GEMMs by shape (gemm_model.hpp), convolutions with cuDNN's
// algorithm (conv_model.hpp), fused attention (attention_model.hpp), and memory-bound kernels by
// class and bytes (memory_kernel_model.hpp).
//
// Per layer kind, with b samples of the layer's (rank-share) per-sample dims:
//   linear, matmul   forward  GEMM (rows b) x cols x depth, count times           (NT)
//                    backward dA: (rows b) x depth x cols (NN) unless input_gradient is false,
//                             dB: depth x cols x (rows b) (TN) unless weight_gradient is false,
//                             and the bias gradient, a reduction of dC (a stream kernel)
//                    (batch_in_count: rows stay, count is multiplied by b)
//   conv             forward, data gradient (unless input_gradient is false), weight gradient
//   attention        FlashAttention forward; backward
//   the others       one memory-bound kernel each way. Forward bytes: inputs and outputs at the
//                    element size (the precision's, or the layer's own: an FP32 softmax and its
//                    conversions) times the class's passes (memory_passes), the weights, and a
//                    dropout's 1-byte mask; backward bytes by the class's backward passes (none
//                    for a backward_free layer, e.g. a separate bias add). A fused layer
//                    (Layer::fused) launches nothing and moves only its inputs beyond the tensor
//                    it receives from the previous kernel.
//   conv in NCHW     under tensor-core math, also cuDNN's transposes of input, filter and output
//                    in each pass (ConvDims::channels_first).
#pragma once
#include <array>

#include "models/device.hpp"
#include "models/kernel_profile.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

// Device seconds of a group of kernels, by family, and how many kernels were launched.
struct KernelTimes {
  double seconds = 0;
  int kernels = 0;
  std::array<double, kKernelFamilies> by_family{};
  void add(KernelFamilyKind family, double s, int launches = 1);
  KernelTimes& operator+=(const KernelTimes& other);
};

struct LayerKernelTimes {
  KernelTimes forward;
  KernelTimes backward;
  // Of backward, the kernels that compute weight gradients (a linear's dB GEMM and bias
  // reduction, a convolution's weight gradient): a zero-bubble schedule's W pass.
  KernelTimes weight;
};

// A linear or convolution layer with weights of its own or tied to another layer's: its backward
// computes weight gradients (the others' backward computes only input gradients).
inline bool has_weight_gradient(const Layer& layer) {
  return (layer.kind == LayerKind::linear || layer.kind == LayerKind::conv) && (layer.parameters > 0 || layer.tied_to >= 0);
}

// `share`: the layer as one rank sees it (rank_share, parallel_plan.hpp); `batch` samples;
// `chained_elements`: for a fused layer, the elements per sample it receives from the previous
// kernel (that kernel's output). Needs profile.present(); throws std::invalid_argument for a
// layer the model cannot time (e.g. fused attention on a device without FlashAttention).
LayerKernelTimes layer_kernel_times(const Layer& share, double batch, Precision precision, const DeviceSpec& device,
                                    const DeviceProfile& profile, double chained_elements = 0);

}  // namespace dlsim::models
