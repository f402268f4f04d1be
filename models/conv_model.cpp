// Convolution algorithms on the GEMM model (conv_model.hpp).
#include "models/conv_model.hpp"

#include <cmath>
#include <stdexcept>

namespace dlsim::models {

double ConvShape::out_h() const { return std::floor((height + 2 * pad_h - kernel_h) / stride_h) + 1; }
double ConvShape::out_w() const { return std::floor((width + 2 * pad_w - kernel_w) / stride_w) + 1; }

std::string_view to_string(ConvAlgorithm a) {
  return a == ConvAlgorithm::winograd ? "winograd" : "implicit_gemm";
}

namespace {
constexpr const char* kPassNames[] = {"forward", "data_gradient", "weight_gradient"};
}  // namespace

std::vector<std::pair<std::string, double>> ConvParams::named() const {
  std::vector<std::pair<std::string, double>> out;
  for (ConvAlgorithm a : {ConvAlgorithm::implicit_gemm, ConvAlgorithm::winograd}) {
    for (std::size_t p = 0; p < 3; ++p) {
      out.emplace_back(std::string(to_string(a)) + "." + kPassNames[p], factor[static_cast<std::size_t>(a)][p]);
    }
  }
  return out;
}

bool ConvParams::set(const std::string& name, double value) {
  for (ConvAlgorithm a : {ConvAlgorithm::implicit_gemm, ConvAlgorithm::winograd}) {
    for (std::size_t p = 0; p < 3; ++p) {
      if (name == std::string(to_string(a)) + "." + kPassNames[p]) {
        factor[static_cast<std::size_t>(a)][p] = value;
        return true;
      }
    }
  }
  return false;
}

GemmShape implicit_gemm_shape(const ConvShape& c, ConvPass pass) {
  const double rs = c.kernel_h * c.kernel_w, pq = c.out_h() * c.out_w();
  switch (pass) {
    case ConvPass::forward: return {c.batch * pq, c.filters, c.channels * rs, 1, GemmLayout::nt};
    case ConvPass::data_gradient: return {c.batch * c.height * c.width, c.channels, c.filters * rs, 1, GemmLayout::nn};
    case ConvPass::weight_gradient: return {c.filters, c.channels * rs, c.batch * pq, 1, GemmLayout::tn};
  }
  return {};
}

GemmShape winograd_gemm_shape(const ConvShape& c, ConvPass pass) {
  constexpr double kTransformed = 16;  // a 4 x 4 transformed tile per 2 x 2 output tile
  const double tiles = c.batch * std::ceil(c.out_h() / 2) * std::ceil(c.out_w() / 2);
  switch (pass) {
    case ConvPass::forward: return {tiles, c.filters, c.channels, kTransformed, GemmLayout::nt};
    case ConvPass::data_gradient: return {tiles, c.channels, c.filters, kTransformed, GemmLayout::nn};
    case ConvPass::weight_gradient: return {c.filters, c.channels, tiles, kTransformed, GemmLayout::tn};
  }
  return {};
}

bool winograd_applies(const ConvShape& c, Precision precision) {
  return c.kernel_h == 3 && c.kernel_w == 3 && c.stride_h == 1 && c.stride_w == 1 &&
         (precision == Precision::fp32 || precision == Precision::fp64);
}

ConvEstimate conv_time(const ConvShape& c, ConvPass pass, Precision precision, const DeviceSpec& device,
                       const GemmParams& gemm, const ConvParams& params) {
  for (double v : {c.batch, c.channels, c.height, c.width, c.filters, c.kernel_h, c.kernel_w, c.stride_h, c.stride_w}) {
    if (!(v >= 1) || !std::isfinite(v)) throw std::invalid_argument("conv: sizes, kernel and stride must be >= 1");
  }
  if (!(c.out_h() >= 1) || !(c.out_w() >= 1)) throw std::invalid_argument("conv: the kernel is larger than the padded input");
  ConvEstimate best;
  best.gemm = implicit_gemm_shape(c, pass);
  const double implicit_factor = params.at(ConvAlgorithm::implicit_gemm, pass);
  best.seconds = gemm_time(best.gemm, precision, device, gemm).seconds * (implicit_factor > 0 ? implicit_factor : 1.0);
  const double winograd_factor = params.at(ConvAlgorithm::winograd, pass);
  if (winograd_factor > 0 && winograd_applies(c, precision)) {
    const GemmShape w = winograd_gemm_shape(c, pass);
    const double t = gemm_time(w, precision, device, gemm).seconds * winograd_factor;
    if (t < best.seconds) best = {t, ConvAlgorithm::winograd, w};
  }
  return best;
}

}  // namespace dlsim::models
