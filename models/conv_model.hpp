// The time of one 2-D convolution pass on a GPU, with the algorithm cuDNN would pick, built on
// the tile/wave mechanism of the GEMM model (gemm_model.hpp) and calibrated on measured
// convolutions (DeepBench's rows, which name cuDNN's forward algorithm; calibration/conv_fit.hpp).
//
// Implicit GEMM (Chetlur et al. 2014, "cuDNN: Efficient Primitives for Deep Learning"): a
// convolution is a GEMM over im2col patches that are never materialised. For input
// N x C x H x W, K filters of R x S, stride sh x sw, output P x Q:
//   forward          m = N P Q,  n = K,      k = C R S
//   data gradient    m = N H W,  n = C,      k = K R S              (stride 1)
//   weight gradient  m = K,      n = C R S,  k = N P Q
// A strided data gradient is computed as sh sw sub-pixel convolutions (one per output phase,
// each with a ceil(R/sh) x ceil(S/sw) slice of the filter), not as a GEMM over zeros:
//   m = N ceil(H/sh) ceil(W/sw), n = C, k = K ceil(R/sh) ceil(S/sw), batch = min(R,sh) min(S,sw).
// With tensor-core math (FP16/BF16/TF32 on Volta and later) C and K are padded to multiples of
// 8, the channel granularity the tensor-core kernels need (cuDNN's documented requirement; the
// DeepBench benchmark pads C itself), so a first layer with C = 1 or 3 does the work of C = 8.
//
// The kernel time of an implicit GEMM is the GEMM model's tile/wave mechanism with three
// convolution-specific parts (each because the GEMM constants, fitted on cuBLAS, do not carry
// over):
//   tiles    cuDNN's CTA tiles, 128 output pixels by 128/64/32 filters on CUDA cores
//            (maxwell_scudnn_128x128 / 128x64 / 128x32) and 256/128 by 128/64 with tensor cores
//            (volta_*884cudnn_256x128 ...), the pixel side along m; the weight gradient may
//            put either side along m. The forward and data-gradient kernels do not split k;
//            the weight gradient reduces over N P Q and splits it (up to 128 ways, each slice
//            keeping >= 128 of k; fp32 partial sums written and read).
//   k0       the pipeline fill and epilogue of a tile in steps of k, fitted on convolutions.
//   memory   the tensors actually moved, not im2col's m k: the input pixels the filter touches
//            (a 1x1 stride-2 layer skips three quarters of them), the output and the filter,
//            at a bandwidth fraction fitted on convolutions.
//   time     = max(waves x per-tile time, memory / bandwidth) + split partial sums + fixed
// The GEMM's e_max, tile overhead and fixed time are used as fitted; its layout factors and
// log corrections are not (they describe cuBLAS's kernels and extrapolate badly to the long,
// thin GEMMs of convolutions: with them the held-out error was larger).
// Winograd (Lavin and Gray 2016, "Fast Algorithms for Convolutional Neural Networks"): cuDNN's
// WINOGRAD_NONFUSED (cuDNN documentation, cudnnConvolutionFwdAlgo_t: 3 x 3 and 5 x 5 filters,
// stride 1) for layers with CUDA-core math: F(4x4, 3x3) and
// F(2x2, 5x5), both with 6 x 6 transformed tiles. It runs as four kernels: the transforms of the
// two operands and of the result (memory-bound, 36/16 resp. 36/4 times the tensor they
// transform) and 36 independent GEMMs of m = N ceil(P/t) ceil(Q/t) tiles, n = K, k = C
// (gradients alike with the roles swapped); the time is their sum. DeepBench's fused WINOGRAD
// rows are attributed to it too: a separate fused F(2x2, 3x3) candidate made the held-out error
// worse. Tensor-core math runs implicit GEMM only (DeepBench's V100 FP16 rows are all
// IMPLICIT_PRECOMP_GEMM).
//
// Each algorithm's mechanism is multiplied by a measured factor per precision and pass (the
// median of measured / mechanism over the calibration rows where cuDNN chose it), which carries
// what the mechanism leaves out (im2col address arithmetic, cuDNN's kernel choice). Two more
// factors for the implicit GEMM cover kernels the measurements show to differ: first layers
// (C < 8, which run the padded or special small-C kernels) and strided data gradients. The
// prediction is the faster of the algorithms the precision allows (cuDNN's own choice rule:
// DeepBench's conv_bench picks with cudnnFind*Algorithm, the fastest measured; under
// tensor-op math it forces IMPLICIT_PRECOMP_GEMM and the ALGO_1 gradients).
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/device_spec.hpp"
#include "models/gemm_model.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

struct ConvShape {
  double batch = 1, channels = 1, height = 1, width = 1;   // N, C, H, W
  double filters = 1, kernel_h = 1, kernel_w = 1;          // K, R, S
  double stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  double out_h() const;                                    // P
  double out_w() const;                                    // Q
};

enum class ConvPass { forward, data_gradient, weight_gradient };
enum class ConvAlgorithm { implicit_gemm, winograd };
std::string_view to_string(ConvAlgorithm a);
std::string_view to_string(ConvPass p);

// Layers with fewer input channels than this get the first-layer factor.
inline constexpr double kFirstLayerChannels = 8;

// The fitted constants of one slot of ConvParams (0 = not fitted).
struct ConvPrecisionParams {
  double k_overhead = 0;            // k0 of the convolution kernels' tiles, steps of k
  double bandwidth_fraction = 0;    // achieved fraction of the memory bandwidth (kernels, transforms)
  std::array<std::array<double, 3>, 2> factor{};  // measured / mechanism, [ConvAlgorithm][ConvPass]
  std::array<double, 3> first_layer{};            // implicit GEMM with C < 8, by pass
  double strided_data_gradient = 0;               // implicit GEMM data gradient with stride > 1
  bool fitted() const { return bandwidth_fraction > 0; }
  double at(ConvAlgorithm a, ConvPass p) const { return factor[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)]; }
  // The factor of an algorithm for this shape and pass: the first-layer or strided-gradient
  // factor where it applies and is fitted, else the plain one; 0 when the algorithm's own
  // factor is not fitted.
  double factor_for(ConvAlgorithm a, const ConvShape& c, ConvPass p) const;
};

// One set of constants per element-width class, a "slot": "fp32" for FP32 and FP64
// convolutions, "fp16" for 16-bit and tensor-core math (FP16, BF16, FP8, TF32). Measurements of
// several precisions of one slot are fitted together; a precision whose slot is not fitted
// borrows the other slot's constants (each factor is relative to the precision's own mechanism).
struct ConvParams {
  ConvPrecisionParams fp32, fp16;
  static bool sixteen_bit(Precision p);               // the "fp16" slot
  ConvPrecisionParams& slot(Precision p) { return sixteen_bit(p) ? fp16 : fp32; }
  const ConvPrecisionParams& slot(Precision p) const { return sixteen_bit(p) ? fp16 : fp32; }
  // The constants for `p`: its slot's if fitted, else the other slot's; nullptr when neither is.
  const ConvPrecisionParams* for_precision(Precision p) const;
  // The constants by name, for profile files: one fixed list (every constant of both slots,
  // fitted or not), written and read alike: "fp32.k_overhead", "fp32.bandwidth_fraction",
  // "fp32.implicit_gemm.forward", ..., "fp32.winograd.weight_gradient",
  // "fp32.first_layer.forward", ..., "fp32.strided_data_gradient", then "fp16.*". set() returns
  // false for an unknown name.
  std::vector<std::pair<std::string, double>> named() const;
  bool set(const std::string& name, double value);
};

struct ConvEstimate {
  double seconds = 0;
  ConvAlgorithm algorithm = ConvAlgorithm::implicit_gemm;
  GemmShape gemm;                  // the implicit GEMM (or Winograd's batched GEMM)
  double mechanism_s = 0;          // before the factor
  double factor = 1;
};

// Whether `precision` runs on tensor cores (or a matrix unit) on `device`: FP16, BF16, TF32 and
// FP8 from Volta on, and everything on a TPU.
bool tensor_core_math(Precision precision, const DeviceSpec& device);
// The channel multiple C and K are padded to: 8 with tensor-core math, else 1.
double channel_multiple(Precision precision, const DeviceSpec& device);

// The implicit-GEMM shape of a pass (strided data gradients decomposed as above), C and K
// rounded up to `channels_multiple`.
GemmShape implicit_gemm_shape(const ConvShape& c, ConvPass pass, double channels_multiple = 1);
// Winograd's batched GEMM for a pass (36 products): F(4x4, 3x3) for 3 x 3, F(2x2, 5x5) for
// 5 x 5 filters; only for shapes winograd_applies to.
GemmShape winograd_gemm_shape(const ConvShape& c, ConvPass pass);
// A 3 x 3 or 5 x 5 stride-1 layer in FP32 or FP64 (CUDA-core math on every GPU).
bool winograd_applies(const ConvShape& c, Precision precision);
// As above for any precision without tensor-core math on `device` (e.g. Pascal's FP16).
bool winograd_applies(const ConvShape& c, Precision precision, const DeviceSpec& device);

// The mechanism alone, factor 1, fixed time included: the seconds of `algorithm` for the pass
// with these k0 and bandwidth fraction; +infinity when the algorithm does not apply. Needs
// gemm.fitted() and a device with compute units and a peak for `precision`.
double conv_mechanism(const ConvShape& c, ConvPass pass, ConvAlgorithm algorithm, Precision precision,
                      const DeviceSpec& device, const GemmParams& gemm, double k_overhead, double bandwidth_fraction);
// The full model: the faster of the allowed algorithms, each mechanism x its factor. Without
// fitted convolution constants (a device with no convolution measurements) the implicit GEMM
// (padded, strided gradients decomposed) runs through the GEMM model, gemm_time. Throws std::invalid_argument for a shape with
// a size < 1 or an empty output, or as gemm_mechanism does.
ConvEstimate conv_time(const ConvShape& c, ConvPass pass, Precision precision, const DeviceSpec& device,
                       const GemmParams& gemm, const ConvParams& params);

}  // namespace dlsim::models
