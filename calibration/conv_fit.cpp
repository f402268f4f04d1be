// Convolution constants and factors (conv_fit.hpp).
#include "calibration/conv_fit.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "calibration/fit_support.hpp"

namespace dlsim::calibration {
namespace {

using fit_support::median;
using models::ConvAlgorithm;
using models::ConvPass;
using models::ConvPrecisionParams;

constexpr std::size_t kMinConvRows = 4;
constexpr double kKOverheads[] = {0, 8, 16, 32, 64};
constexpr double kBandwidthFractions[] = {0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};

// Direct-convolution FLOPs of a pass (2 N K C R S P Q): the size axis of conv reports.
double conv_flops(const models::ConvShape& c) {
  return 2 * c.batch * c.filters * c.channels * c.kernel_h * c.kernel_w * c.out_h() * c.out_w();
}

std::size_t index(ConvAlgorithm a) { return static_cast<std::size_t>(a); }
std::size_t index(ConvPass p) { return static_cast<std::size_t>(p); }

// Which factor a row's measured / mechanism ratio informs.
enum class FactorKind { plain, first_layer, strided_data_gradient };
FactorKind factor_kind(ConvAlgorithm a, const MeasuredConv& r) {
  if (a != ConvAlgorithm::implicit_gemm) return FactorKind::plain;
  if (r.shape.channels < models::kFirstLayerChannels) return FactorKind::first_layer;
  const bool strided = r.shape.stride_h > 1 || r.shape.stride_w > 1;
  if (r.pass == ConvPass::data_gradient && strided) return FactorKind::strided_data_gradient;
  return FactorKind::plain;
}

struct Candidates {
  std::array<double, 2> mechanism{};   // by ConvAlgorithm; +inf where it does not apply
};

// The factors at one grid point: medians of measured / mechanism by algorithm, pass and kind.
ConvPrecisionParams factors(const std::vector<const MeasuredConv*>& rows, const std::vector<Candidates>& cands,
                            const std::vector<int>& labels, double k0, double bandwidth) {
  // [algorithm][pass][kind]
  std::array<std::array<std::array<std::vector<double>, 3>, 3>, 2> ratios;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (labels[i] < 0) continue;
    const auto a = static_cast<ConvAlgorithm>(labels[i]);
    const double mechanism = cands[i].mechanism[index(a)];
    if (!std::isfinite(mechanism)) continue;
    ratios[index(a)][index(rows[i]->pass)][static_cast<std::size_t>(factor_kind(a, *rows[i]))].push_back(rows[i]->seconds /
                                                                                                  mechanism);
  }
  ConvPrecisionParams p;
  p.k_overhead = k0;
  p.bandwidth_fraction = bandwidth;
  const auto fit = [](const std::vector<double>& v) { return v.size() >= kMinConvRows ? median(v) : 0.0; };
  for (ConvAlgorithm a : {ConvAlgorithm::implicit_gemm, ConvAlgorithm::winograd}) {
    for (ConvPass pass : {ConvPass::forward, ConvPass::data_gradient, ConvPass::weight_gradient}) {
      const auto& r = ratios[index(a)][index(pass)];
      p.factor[index(a)][index(pass)] = fit(r[static_cast<std::size_t>(FactorKind::plain)]);
      if (a == ConvAlgorithm::implicit_gemm) {
        p.first_layer[index(pass)] = fit(r[static_cast<std::size_t>(FactorKind::first_layer)]);
        if (pass == ConvPass::data_gradient) {
          p.strided_data_gradient = fit(r[static_cast<std::size_t>(FactorKind::strided_data_gradient)]);
        }
      }
    }
  }
  // A qualified factor with no plain one to fall back on still needs its algorithm enabled.
  for (ConvPass pass : {ConvPass::forward, ConvPass::data_gradient, ConvPass::weight_gradient}) {
    double& plain = p.factor[index(ConvAlgorithm::implicit_gemm)][index(pass)];
    if (plain <= 0) plain = 1;
  }
  return p;
}

// The model's prediction from precomputed mechanisms (conv_time's rule).
double predict(const MeasuredConv& r, const Candidates& c, const ConvPrecisionParams& p) {
  double best = std::numeric_limits<double>::infinity();
  for (ConvAlgorithm a : {ConvAlgorithm::implicit_gemm, ConvAlgorithm::winograd}) {
    const double f = p.factor_for(a, r.shape, r.pass);
    if (f > 0 && std::isfinite(c.mechanism[index(a)])) best = std::min(best, c.mechanism[index(a)] * f);
  }
  return best;
}

ConvPrecisionParams fit_slot(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                             const models::KernelProfile& profile) {
  std::vector<int> labels;
  for (const MeasuredConv* r : rows) {
    ConvAlgorithm a;
    labels.push_back(conv_row_algorithm(*r, device, a) ? static_cast<int>(a) : -1);
  }
  ConvPrecisionParams best;
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<Candidates> cands(rows.size());
  for (double k0 : kKOverheads) {
    for (double b : kBandwidthFractions) {
      for (std::size_t i = 0; i < rows.size(); ++i) {
        for (ConvAlgorithm a : {ConvAlgorithm::implicit_gemm, ConvAlgorithm::winograd}) {
          cands[i].mechanism[index(a)] = models::conv_mechanism(rows[i]->shape, rows[i]->pass, a, rows[i]->precision, device,
                                                                *profile.gemm_for(rows[i]->precision), k0, b);
        }
      }
      const ConvPrecisionParams p = factors(rows, cands, labels, k0, b);
      double loss = 0;
      int n = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (labels[i] < 0) continue;
        const double e = std::log(predict(*rows[i], cands[i], p) / rows[i]->seconds);
        loss += e * e;
        ++n;
      }
      if (n > 0 && loss / n < best_loss) {
        best_loss = loss / n;
        best = p;
      }
    }
  }
  return best;
}

}  // namespace

bool conv_row_algorithm(const MeasuredConv& row, const models::DeviceSpec& device, models::ConvAlgorithm& algorithm) {
  if (row.algorithm.find("WINOGRAD") != std::string::npos) {
    algorithm = models::winograd_applies(row.shape, row.precision, device) ? ConvAlgorithm::winograd
                                                                            : ConvAlgorithm::implicit_gemm;
    return true;
  }
  if (row.algorithm.find("GEMM") != std::string::npos) {
    algorithm = ConvAlgorithm::implicit_gemm;
    return true;
  }
  return false;  // FFT, FFT_TILING: not a modelled algorithm
}

models::ConvParams fit_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                            const models::KernelProfile& profile) {
  // By slot (ConvParams: fp32, or 16-bit); each row's mechanism runs in its own precision.
  std::map<bool, std::vector<const MeasuredConv*>> by_slot;
  for (const MeasuredConv* r : rows) {
    if (profile.gemm_for(r->precision) != nullptr) by_slot[models::ConvParams::sixteen_bit(r->precision)].push_back(r);
  }
  models::ConvParams p;
  for (const auto& [sixteen, members] : by_slot) {
    (sixteen ? p.fp16 : p.fp32) = fit_slot(members, device, profile);
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
