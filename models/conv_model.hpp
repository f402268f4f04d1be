// The time of one 2-D convolution pass on a GPU, with the algorithm cuDNN would pick, built on
// the GEMM model (gemm_model.hpp) and calibrated on measured convolutions (DeepBench's rows,
// which name the algorithm cuDNN chose; calibration/kernel_fit.hpp).
//
// Implicit GEMM (Chetlur et al. 2014, cuDNN): a convolution is a GEMM over im2col patches,
// never materialised. For input N x C x H x W, K filters of R x S, output P x Q:
//   forward          m = N P Q,  n = K,      k = C R S
//   data gradient    m = N H W,  n = C,      k = K R S
//   weight gradient  m = K,      n = C R S,  k = N P Q
// Winograd (Lavin and Gray 2016) for 3 x 3 stride-1 layers: F(2x2, 3x3) turns each 2 x 2 output
// tile into 16 element-wise products of transformed 4 x 4 tiles, i.e. 16 batched GEMMs of
// m = N ceil(P/2) ceil(Q/2), n = K, k = C (gradients alike with the roles of C and K swapped),
// 2.25x fewer multiplies than direct convolution, plus the transforms. cuDNN uses it for FP32
// (CUDA cores); with tensor cores (FP16, BF16, TF32) it runs implicit GEMM (DeepBench's V100
// FP16 rows pick IMPLICIT_PRECOMP_GEMM for every layer).
// Each algorithm's mechanism is multiplied by a measured factor per pass (the median of measured
// / mechanism over the calibration rows), which carries what the mechanism leaves out (im2col
// address arithmetic, the Winograd transforms, cuDNN's kernel choice); the prediction is the
// faster of the algorithms the precision allows.
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

struct ConvParams {
  // measured / mechanism per algorithm and pass; 0 = not calibrated (the algorithm's mechanism
  // is used as is for implicit GEMM, and Winograd is not a candidate).
  std::array<std::array<double, 3>, 2> factor{};   // [ConvAlgorithm][ConvPass]
  double at(ConvAlgorithm a, ConvPass p) const { return factor[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)]; }
  // The constants by name, for profile files: one list, written and read alike
  // ("implicit_gemm.forward", ...). set() returns false for an unknown name.
  std::vector<std::pair<std::string, double>> named() const;
  bool set(const std::string& name, double value);
};

struct ConvEstimate {
  double seconds = 0;
  ConvAlgorithm algorithm = ConvAlgorithm::implicit_gemm;
  GemmShape gemm;                  // the implicit GEMM (or one of Winograd's batched GEMMs)
};

// The implicit-GEMM shape of a pass.
GemmShape implicit_gemm_shape(const ConvShape& c, ConvPass pass);
// Winograd F(2x2, 3x3)'s batched GEMM for a pass; only for 3 x 3 stride-1 layers.
GemmShape winograd_gemm_shape(const ConvShape& c, ConvPass pass);
bool winograd_applies(const ConvShape& c, Precision precision);
// Throws std::invalid_argument for a shape with a size < 1 or an empty output.
ConvEstimate conv_time(const ConvShape& c, ConvPass pass, Precision precision, const DeviceSpec& device,
                       const GemmParams& gemm, const ConvParams& params);

}  // namespace dlsim::models
