// Convolution factors (conv_fit.hpp).
#include "calibration/conv_fit.hpp"

#include <array>
#include <string>

#include "calibration/fit_support.hpp"

namespace dlsim::calibration {
namespace {

using fit_support::median;
constexpr std::size_t kMinConvRows = 4;

bool is_winograd(const std::string& algorithm) { return algorithm.find("WINOGRAD") != std::string::npos; }
bool is_implicit(const std::string& algorithm) { return algorithm.find("GEMM") != std::string::npos; }

// Direct-convolution FLOPs of a pass (2 N K C R S P Q): the size axis of conv reports.
double conv_flops(const models::ConvShape& c) {
  return 2 * c.batch * c.filters * c.channels * c.kernel_h * c.kernel_w * c.out_h() * c.out_w();
}

}  // namespace

models::ConvParams fit_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                            const models::KernelProfile& profile) {
  std::array<std::array<std::vector<double>, 3>, 2> ratios;
  for (const MeasuredConv* r : rows) {
    const models::GemmParams* g = profile.gemm_for(r->precision);
    if (g == nullptr) continue;
    const bool winograd = is_winograd(r->algorithm) && models::winograd_applies(r->shape, r->precision);
    if (!winograd && !is_implicit(r->algorithm)) continue;  // FFT rows: not a modelled algorithm
    const models::GemmShape shape = winograd ? models::winograd_gemm_shape(r->shape, r->pass) : models::implicit_gemm_shape(r->shape, r->pass);
    const double mechanism = models::gemm_time(shape, r->precision, device, *g).seconds;
    ratios[winograd ? 1 : 0][static_cast<std::size_t>(r->pass)].push_back(r->seconds / mechanism);
  }
  models::ConvParams p;
  for (std::size_t a = 0; a < 2; ++a) {
    for (std::size_t pass = 0; pass < 3; ++pass) {
      if (ratios[a][pass].size() >= kMinConvRows) p.factor[a][pass] = median(ratios[a][pass]);
    }
  }
  return p;
}


void held_out_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                   const models::KernelProfile& profile, std::vector<HeldOut>& out) {
  std::vector<std::string> names;
  const auto masks = fit_support::group_masks(rows, names);
  static const char* const kPass[] = {"forward", "data gradient", "weight gradient"};
  for (std::size_t g = 0; g < masks.size(); ++g) {
    const models::ConvParams p = fit_conv(fit_support::select(rows, masks[g], false), device, profile);
    for (const MeasuredConv* r : fit_support::select(rows, masks[g], true)) {
      const models::GemmParams* gp = profile.gemm_for(r->precision);
      if (gp == nullptr) continue;
      const double predicted = models::conv_time(r->shape, r->pass, r->precision, device, *gp, p).seconds;
      out.push_back({models::KernelFamilyKind::conv, "conv " + std::string(kPass[static_cast<int>(r->pass)]) + " " +
                                                 std::string(models::to_string(r->precision)),
                     names[g], conv_flops(r->shape), r->seconds, predicted});
    }
  }
}

}  // namespace dlsim::calibration
