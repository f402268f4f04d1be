// Transformer Engine's FP8 recipe: which layers, their GEMMs and casts (fp8_recipe.hpp).
#include "models/fp8_recipe.hpp"

#include <stdexcept>

namespace dlsim::models {

bool runs_in_fp8(const Layer& layer, Precision precision) {
  return precision == Precision::fp8 && layer.kind == LayerKind::linear && layer.block >= 0 &&
         (layer.tensor == TensorSplit::split || layer.experts > 0);
}

GemmParams fp8_gemm_params(const KernelProfile& kernels, Fp8Accumulation accumulation) {
  const GemmParams& own = kernels.gemm[static_cast<std::size_t>(Precision::fp8)];
  if (own.fitted()) return own;
  const GemmParams* borrowed = kernels.gemm_for(Precision::fp16);
  if (borrowed == nullptr) throw std::invalid_argument("fp8: the kernel profile has no GEMM constants");
  GemmParams p = *borrowed;
  p.peak_fraction *= accumulation == Fp8Accumulation::fast ? kFp8FastAccumulationScale : kFp8SplitAccumulatorScale;
  return p;
}

GemmParams lone_gemm_params(const KernelProfile& kernels, Precision precision) {
  if (precision == Precision::fp8) return fp8_gemm_params(kernels, Fp8Accumulation::fast);
  const GemmParams* params = kernels.gemm_for(precision);
  if (params == nullptr) throw std::invalid_argument("the kernel profile has no GEMM constants");
  return *params;
}

namespace {

// Bytes of one cast-transpose: read the BF16 tensor, write its FP8 copy and FP8 transpose.
constexpr double kCastTransposeBytes = kBf16Bytes + 2 * kFp8Bytes;
// Bytes of an FP8 transpose: read the FP8 tensor, write its transpose.
constexpr double kTransposeBytes = 2 * kFp8Bytes;
// Bytes of one tensor's amax-history update: read and write kAmaxHistoryLength FP32 entries.
constexpr double kAmaxUpdateBytes = kAmaxHistoryLength * 4 * 2;

}  // namespace

LayerKernelTimes fp8_linear_kernel_times(const Layer& share, double b, const Fp8Casts& casts, const DeviceSpec& device,
                                         const DeviceProfile& profile) {
  if (!device.supports(Precision::fp8)) throw std::invalid_argument("fp8: device " + device.name + " has no fp8 peak");
  const GemmParams forward = fp8_gemm_params(profile.kernels, Fp8Accumulation::fast);
  const GemmParams gradient = fp8_gemm_params(profile.kernels, Fp8Accumulation::split);
  const MatmulDims d = derive_matmul(share);
  const double m = d.batch_in_count ? d.rows : d.rows * b;
  const double count = d.count * (d.batch_in_count ? b : 1.0);
  // Every FP8 GEMM runs cuBLASLt's TN kernel, our forward layout (GemmLayout::nt).
  const auto gemm = [&](double gm, double gn, double gk, const GemmParams& params) {
    return gemm_time({gm, gn, gk, count, GemmLayout::nt}, Precision::fp8, device, params).seconds;
  };
  const auto cast = [&](double bytes) {
    return memory_kernel_time(MemoryKernel::stream, bytes, profile.kernels.memory, device.memory_bandwidth,
                              profile.memory_efficiency);
  };
  const double input = m * d.depth * count;     // X
  const double weight = d.depth * d.cols * d.count;  // W (each of the count products has its own)
  const double output = m * d.cols * count;     // Y, and dY in backward
  LayerKernelTimes t;
  // Forward: X's cast-transpose (with the amax-history updates of X and W) unless the norm before
  // wrote X in FP8, the weight's cast (cached: spread over the micro-batches, no launch of its
  // own per micro-batch), the GEMM.
  const double history = 2 * kAmaxUpdateBytes;
  if (!casts.input_from_norm) t.forward.add(KernelFamilyKind::memory, cast(input * kCastTransposeBytes + history));
  const double weight_cast = cast(weight * kCastTransposeBytes + (casts.input_from_norm ? history : 0.0));
  if (casts.weights_cached && casts.micro_batches > 1) {
    t.forward.add(KernelFamilyKind::memory, weight_cast / casts.micro_batches, 0);
  } else {
    t.forward.add(KernelFamilyKind::memory, weight_cast);
  }
  t.forward.add(KernelFamilyKind::gemm, gemm(m, d.cols, d.depth, forward));
  // Backward: X's FP8 transpose where the norm wrote X, dY's cast-transpose (bias gradient fused,
  // dY's amax-history update), then the data- and weight-gradient GEMMs.
  if (casts.input_from_norm && d.weight_gradient) t.backward.add(KernelFamilyKind::memory, cast(input * kTransposeBytes));
  t.backward.add(KernelFamilyKind::memory, cast(output * kCastTransposeBytes + kAmaxUpdateBytes));
  if (d.input_gradient) t.backward.add(KernelFamilyKind::gemm, gemm(m, d.depth, d.cols, gradient));
  if (d.weight_gradient) {
    const double s = gemm(d.depth, d.cols, m, gradient);
    t.backward.add(KernelFamilyKind::gemm, s);
    t.weight.add(KernelFamilyKind::gemm, s);  // a zero-bubble schedule's W pass (layer_kernels.hpp)
  }
  return t;
}

}  // namespace dlsim::models
