// A layer's kernels and their times (layer_kernels.hpp).
#include "models/layer_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/conv_model.hpp"

namespace dlsim::models {

void KernelTimes::add(KernelFamilyKind family, double s, int launches) {
  seconds += s;
  kernels += launches;
  by_family[static_cast<std::size_t>(family)] += s;
}

KernelTimes& KernelTimes::operator+=(const KernelTimes& o) {
  seconds += o.seconds;
  kernels += o.kernels;
  for (std::size_t i = 0; i < by_family.size(); ++i) by_family[i] += o.by_family[i];
  return *this;
}

namespace {

constexpr double kMaskBytesPerElement = 1;  // PyTorch's dropout mask is a bool tensor

// Fallback when a memory-kernel class has no curve at all: the profile's scalar.
double memory_seconds(MemoryKernel k, double bytes, const DeviceSpec& device, const DeviceProfile& profile) {
  if (!(bytes > 0)) return 0;
  return memory_kernel_time(k, bytes, profile.kernels.memory, device.memory_bandwidth, profile.memory_efficiency);
}

LayerKernelTimes matmul_kernels(const Layer& share, double b, Precision precision, const DeviceSpec& device,
                                const DeviceProfile& profile) {
  const GemmParams* params = profile.kernels.gemm_for(precision);
  if (params == nullptr) throw std::invalid_argument("layer " + share.name + ": no GEMM profile for " + device.name);
  const MatmulDims d = derive_matmul(share);
  const double m = d.batch_in_count ? d.rows : d.rows * b;
  const double count = d.count * (d.batch_in_count ? b : 1.0);
  const auto gemm = [&](double gm, double gn, double gk, GemmLayout layout) {
    GemmShape shape{gm, gn, gk, count, layout};
    if (!d.padded) shape.alignment_bytes = operand_alignment_bytes(shape, bytes_per_element(precision));
    return gemm_time(shape, precision, device, *params).seconds;
  };
  LayerKernelTimes t;
  t.forward.add(KernelFamilyKind::gemm, gemm(m, d.cols, d.depth, GemmLayout::nt));
  if (d.input_gradient) t.backward.add(KernelFamilyKind::gemm, gemm(m, d.depth, d.cols, GemmLayout::nn));
  // A matmul's B is an activation (its dB belongs to the input gradients); a linear's is weights.
  KernelTimes none;
  KernelTimes& weight = has_weight_gradient(share) ? t.weight : none;
  if (d.weight_gradient) {
    const double s = gemm(d.depth, d.cols, m, GemmLayout::tn);
    t.backward.add(KernelFamilyKind::gemm, s);
    weight.add(KernelFamilyKind::gemm, s);
  }
  // A bias (parameters beyond the weight matrices): its gradient is a reduction of dC over rows.
  const double bias = share.parameters - d.count * d.depth * d.cols;
  if (bias > 0.5 && d.weight_gradient) {
    const double bytes = m * d.cols * count * bytes_per_element(precision);
    const double s = memory_seconds(MemoryKernel::stream, bytes, device, profile);
    t.backward.add(KernelFamilyKind::memory, s);
    weight.add(KernelFamilyKind::memory, s);
  }
  return t;
}

// Whether a convolution on `device` transposes its NCHW tensors: cuDNN's tensor-core kernels
// read and write NHWC, so with tensor-core math (FP16, BF16, TF32, FP8 from Volta on) an NCHW
// tensor is transposed to NHWC before each convolution call and its result transposed back
// after (cuDNN Developer Guide, "Tensor Transformations": NCHW-to-NHWC conversion for Tensor Core
// operations; NVIDIA's channels-last guidance). CUDA-core math (FP32 without TF32) reads NCHW
// natively, and a TPU's or Trainium's compiler picks its own layouts.
bool transposes_layout(const ConvDims& c, Precision precision, const DeviceSpec& device) {
  return c.channels_first && !systolic_array_chip(device.generation) && tensor_core_math(precision, device);
}

LayerKernelTimes conv_kernels(const Layer& share, double b, Precision precision, const DeviceSpec& device,
                              const DeviceProfile& profile) {
  const GemmParams* params = profile.kernels.gemm_for(precision);
  if (params == nullptr) throw std::invalid_argument("layer " + share.name + ": no GEMM profile for " + device.name);
  const ConvDims& c = share.conv;
  const ConvShape shape{b, c.channels, c.height, c.width, c.filters, c.kernel_h, c.kernel_w, c.stride, c.stride, c.pad_h, c.pad_w};
  const auto pass = [&](ConvPass p) { return conv_time(shape, p, precision, device, *params, profile.kernels.conv).seconds; };
  // NCHW under tensor-core math: each pass transposes its two activation-sized tensors and the
  // filter, each a memory-bound kernel that reads and writes the tensor once. Forward: x in,
  // the filter in, y out; data gradient: dy in, the filter in, dx out; weight gradient: x and
  // dy in, dw out.
  const bool transposes = transposes_layout(c, precision, device);
  const double element = bytes_per_element(precision);
  const double input_bytes = b * c.channels * c.height * c.width * element;
  const double output_bytes = b * c.filters * shape.out_h() * shape.out_w() * element;
  const double filter_bytes = c.filters * c.channels * c.kernel_h * c.kernel_w * element;
  const auto add_transposes = [&](KernelTimes& to, KernelTimes* also, double first, double second) {
    if (!transposes) return;
    for (const double bytes : {first, second, filter_bytes}) {
      const double s = memory_seconds(MemoryKernel::stream, 2 * bytes, device, profile);
      to.add(KernelFamilyKind::memory, s);
      if (also != nullptr) also->add(KernelFamilyKind::memory, s);
    }
  };
  LayerKernelTimes t;
  t.forward.add(KernelFamilyKind::conv, pass(ConvPass::forward));
  add_transposes(t.forward, nullptr, input_bytes, output_bytes);
  if (share.matmul.input_gradient) {
    t.backward.add(KernelFamilyKind::conv, pass(ConvPass::data_gradient));
    add_transposes(t.backward, nullptr, output_bytes, input_bytes);
  }
  const double weight = pass(ConvPass::weight_gradient);
  t.backward.add(KernelFamilyKind::conv, weight);
  t.weight.add(KernelFamilyKind::conv, weight);
  add_transposes(t.backward, &t.weight, input_bytes, output_bytes);
  return t;
}

// Under context parallelism (a.ring_steps = c > 1, the rank's query and key blocks of s/c tokens
// each, in two chunks of s/2c: Megatron-Core / Transformer Engine's load-balanced split) a rank
// runs one attention kernel per ring step: causal, the step on its own block (as causal as the
// whole: each chunk sees itself causally, the later one the earlier fully); and c - 1 steps on a
// received block, each of which, for a causal model, pairs the queries with only the earlier half
// of the block or only the later half of the queries with the block (q s/c, k s/2c, no mask).
// Non-causal attention runs c full steps (q s/c, k s/c).
LayerKernelTimes attention_kernels(const Layer& share, double b, Precision precision, const DeviceSpec& device) {
  const AttentionDims& a = share.attention;
  LayerKernelTimes t;
  const auto add = [&](double key_length, bool causal, int launches) {
    const AttentionShape shape{b, a.heads, a.kv_heads, a.query_length, key_length, a.head_dim, causal, a.kernel};
    const AttentionTime at = flash_attention_time(shape, precision, device);
    t.forward.add(KernelFamilyKind::attention, at.forward_s * launches, launches);
    t.backward.add(KernelFamilyKind::attention, at.backward_s * launches, launches);
  };
  if (a.ring_steps <= 1) {
    add(a.key_length, a.causal, 1);
  } else if (a.causal) {
    add(a.key_length, true, 1);
    add(a.key_length / 2, false, a.ring_steps - 1);
  } else {
    add(a.key_length, false, a.ring_steps);
  }
  return t;
}

LayerKernelTimes memory_kernels(const Layer& share, double b, Precision precision, const DeviceSpec& device,
                                const DeviceProfile& profile, double chained_elements) {
  const MemoryKernel k = memory_kernel_of(share);
  const double element = bytes_per_element(precision);
  const double input_element = share.input_element_bytes > 0 ? share.input_element_bytes : element;
  const double output_element = share.output_element_bytes > 0 ? share.output_element_bytes : element;
  const double inputs = share.fused ? std::max(0.0, share.input_elements - chained_elements) : share.input_elements;
  const double outputs = share.fused ? 0.0 : share.activation_elements;
  // Weights (norm scales, a position table) are read once; a gather reads only the rows it
  // returns, which its inputs already count.
  const double weights = k == MemoryKernel::embedding ? 0.0 : share.parameters * element;
  const MemoryPasses passes = memory_passes(k);
  double bytes = (inputs * input_element + outputs * output_element) * b * passes.forward + weights;
  if (k == MemoryKernel::dropout) bytes += share.activation_elements * b * kMaskBytesPerElement;
  const int launches = share.fused ? 0 : 1;
  LayerKernelTimes t;
  // A fused layer's extra traffic rides on its host kernel: bandwidth-bound at the curve's rate.
  const auto seconds = [&](double moved) {
    if (!share.fused) return memory_seconds(k, moved, device, profile);
    const double reference = std::max(moved, 64.0 * 1024 * 1024);
    return memory_seconds(k, reference, device, profile) * moved / reference;
  };
  t.forward.add(KernelFamilyKind::memory, seconds(bytes), launches);
  if (!share.backward_free) t.backward.add(KernelFamilyKind::memory, seconds(bytes * passes.backward / passes.forward), launches);
  return t;
}

}  // namespace

LayerKernelTimes layer_kernel_times(const Layer& share, double batch, Precision precision, const DeviceSpec& device,
                                    const DeviceProfile& profile, double chained_elements) {
  if (!profile.kernels.present()) throw std::invalid_argument("layer_kernel_times: " + device.name + " has no kernel profile");
  if (!(batch >= 1)) throw std::invalid_argument("layer_kernel_times: batch must be >= 1");
  switch (share.kind) {
    case LayerKind::linear:
    case LayerKind::matmul: return matmul_kernels(share, batch, precision, device, profile);
    case LayerKind::conv:
      return share.conv.channels > 0 ? conv_kernels(share, batch, precision, device, profile)
                                     : matmul_kernels(share, batch, precision, device, profile);
    case LayerKind::attention: return attention_kernels(share, batch, precision, device);
    default: return memory_kernels(share, batch, precision, device, profile, chained_elements);
  }
}

}  // namespace dlsim::models
