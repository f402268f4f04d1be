// Convolution algorithms on the tile/wave mechanism (conv_model.hpp).
#include "models/conv_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dlsim::models {

double ConvShape::out_h() const { return std::floor((height + 2 * pad_h - kernel_h) / stride_h) + 1; }
double ConvShape::out_w() const { return std::floor((width + 2 * pad_w - kernel_w) / stride_w) + 1; }

std::string_view to_string(ConvAlgorithm a) {
  return a == ConvAlgorithm::winograd ? "winograd" : "implicit_gemm";
}

std::string_view to_string(ConvPass p) {
  switch (p) {
    case ConvPass::forward: return "forward";
    case ConvPass::data_gradient: return "data_gradient";
    case ConvPass::weight_gradient: return "weight_gradient";
  }
  return "?";
}

namespace {

constexpr ConvPass kPasses[] = {ConvPass::forward, ConvPass::data_gradient, ConvPass::weight_gradient};
constexpr ConvAlgorithm kAlgorithms[] = {ConvAlgorithm::implicit_gemm, ConvAlgorithm::winograd};
constexpr const char* kSlots[] = {"fp32", "fp16"};

bool strided(const ConvShape& c) { return c.stride_h > 1 || c.stride_w > 1; }
double round_up(double x, double multiple) { return multiple > 1 ? std::ceil(x / multiple) * multiple : x; }

// The constants of one precision, by name (without the precision prefix).
template <class Visit>
void each_constant(ConvPrecisionParams& p, Visit visit) {
  visit("k_overhead", p.k_overhead);
  visit("bandwidth_fraction", p.bandwidth_fraction);
  for (ConvAlgorithm a : kAlgorithms) {
    for (ConvPass pass : kPasses) {
      visit(std::string(to_string(a)) + "." + std::string(to_string(pass)),
            p.factor[static_cast<std::size_t>(a)][static_cast<std::size_t>(pass)]);
    }
  }
  for (ConvPass pass : kPasses) visit("first_layer." + std::string(to_string(pass)), p.first_layer[static_cast<std::size_t>(pass)]);
  visit("strided_data_gradient", p.strided_data_gradient);
}

// cuDNN's CTA tiles (pixels along m first): the CUDA-core implicit-GEMM kernels are
// 128 x {128, 64, 32} (maxwell_scudnn_128x128 / 128x64 / 128x32 in profiles), the tensor-core
// ones {256, 128} x {128, 64} (volta_*884cudnn_256x128 ...); a TPU's or Trainium's 128 x 128 systolic array.
const std::vector<std::array<int, 2>>& conv_tiles(Precision precision, const DeviceSpec& device) {
  static const std::vector<std::array<int, 2>> cuda{{128, 128}, {128, 64}, {128, 32}};
  static const std::vector<std::array<int, 2>> tensor{{256, 128}, {256, 64}, {128, 128}, {128, 64}};
  if (systolic_array_chip(device.generation)) return gemm_tiles(device.generation, precision);
  return tensor_core_math(precision, device) ? tensor : cuda;
}

// The weight gradient's reduction over N P Q is split across CTAs; forward and data-gradient
// kernels do not split k.
constexpr int kWeightGradientSplits[] = {1, 2, 3, 4, 6, 8, 16, 32, 64, 128};
constexpr double kMinSplitDepth = 128;   // a split slice keeps at least this much of k
constexpr double kPartialSumBytes = 4;   // split partial sums are fp32

struct Machine {
  double unit_peak = 0;      // FLOP/s of one SM
  double units = 0;
  double running_units = 0;  // units less those communication kernels hold (DeviceSpec::busy_units)
  double bandwidth = 0;      // bytes/s, conv fraction applied
  double element = 0;        // bytes per element
  double k_overhead = 0;
  const GemmParams* gemm = nullptr;
  const std::vector<std::array<int, 2>>* tiles = nullptr;
};

// One GEMM-like kernel: the best tile (and split, where allowed) of the wave mechanism,
// against its memory traffic `bytes`.
double tiled_kernel(const Machine& mc, const GemmShape& s, double bytes, bool split_k, bool either_orientation) {
  const double memory_s = bytes / mc.bandwidth;
  double planned = std::numeric_limits<double>::infinity();  // the best candidate's time on every SM
  double best = planned;                                      // that candidate's time on the running SMs
  const auto try_tile = [&](double tm, double tn) {
    const double reuse = tm * tn / (tm + tn);
    const double efficiency = mc.gemm->peak_fraction * reuse / (reuse + mc.gemm->tile_overhead);
    const double output_tiles = std::ceil(s.m / tm) * std::ceil(s.n / tn) * s.batch;
    for (int split : kWeightGradientSplits) {
      if (split > 1 && !split_k) break;
      const double depth = std::ceil(s.k / split);
      if (split > 1 && depth < kMinSplitDepth) break;
      const double tile_s = (depth + mc.k_overhead) * 2.0 * tm * tn / (mc.unit_peak * efficiency);
      const double compute_s = std::ceil(output_tiles * split / mc.units) * tile_s;
      const double partial_s = split > 1 ? s.m * s.n * s.batch * kPartialSumBytes * (split + 1) / mc.bandwidth : 0.0;
      const double t = std::max(compute_s, memory_s) + partial_s;
      if (t < planned) {
        planned = t;
        best = std::max(std::ceil(output_tiles * split / mc.running_units) * tile_s, memory_s) + partial_s;
      }
    }
  };
  for (const auto& [tm, tn] : *mc.tiles) {
    try_tile(tm, tn);
    if (either_orientation && tm != tn) try_tile(tn, tm);
  }
  return best;
}

void check(const ConvShape& c) {
  for (double v : {c.batch, c.channels, c.height, c.width, c.filters, c.kernel_h, c.kernel_w, c.stride_h, c.stride_w}) {
    if (!(v >= 1) || !std::isfinite(v)) throw std::invalid_argument("conv: sizes, kernel and stride must be >= 1");
  }
  if (!(c.pad_h >= 0) || !(c.pad_w >= 0)) throw std::invalid_argument("conv: padding must be >= 0");
  if (!(c.out_h() >= 1) || !(c.out_w() >= 1)) throw std::invalid_argument("conv: the kernel is larger than the padded input");
}

// Winograd's output tile side: F(4x4, 3x3) and F(2x2, 5x5), both 6 x 6 transformed tiles.
double winograd_tile(const ConvShape& c) { return c.kernel_h == 3 ? 4 : 2; }
constexpr double kWinogradProducts = 36;

}  // namespace

double ConvPrecisionParams::factor_for(ConvAlgorithm a, const ConvShape& c, ConvPass p) const {
  const double own = at(a, p);
  if (own <= 0 || a != ConvAlgorithm::implicit_gemm) return own;
  const double first = first_layer[static_cast<std::size_t>(p)];
  if (c.channels < kFirstLayerChannels && first > 0) return first;
  if (p == ConvPass::data_gradient && strided(c) && strided_data_gradient > 0) return strided_data_gradient;
  return own;
}

bool ConvParams::sixteen_bit(Precision p) {
  return p == Precision::fp16 || p == Precision::bf16 || p == Precision::fp8 || p == Precision::tf32;
}

const ConvPrecisionParams* ConvParams::for_precision(Precision p) const {
  const ConvPrecisionParams& own = slot(p);
  const ConvPrecisionParams& other = sixteen_bit(p) ? fp32 : fp16;
  if (own.fitted()) return &own;
  if (other.fitted()) return &other;
  return nullptr;
}

std::vector<std::pair<std::string, double>> ConvParams::named() const {
  std::vector<std::pair<std::string, double>> out;
  for (const char* name : kSlots) {
    ConvPrecisionParams p = std::string(name) == "fp32" ? fp32 : fp16;
    each_constant(p, [&](const std::string& constant, double& value) { out.emplace_back(std::string(name) + "." + constant, value); });
  }
  return out;
}

bool ConvParams::set(const std::string& name, double value) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) return false;
  const std::string slot_name = name.substr(0, dot), rest = name.substr(dot + 1);
  if (slot_name != "fp32" && slot_name != "fp16") return false;
  bool found = false;
  each_constant(slot_name == "fp32" ? fp32 : fp16, [&](const std::string& n, double& v) {
    if (n == rest) {
      v = value;
      found = true;
    }
  });
  return found;
}

bool tensor_core_math(Precision precision, const DeviceSpec& device) {
  switch (device.generation) {
    case Generation::tpu:
    case Generation::trainium: return true;
    case Generation::volta:
    case Generation::turing:
    case Generation::ampere:
    case Generation::ada:
    case Generation::hopper:
    case Generation::blackwell:
    case Generation::cdna3:
      return precision == Precision::fp16 || precision == Precision::bf16 || precision == Precision::tf32 ||
             precision == Precision::fp8;
    default: return false;
  }
}

double channel_multiple(Precision precision, const DeviceSpec& device) {
  return tensor_core_math(precision, device) ? 8 : 1;
}

GemmShape implicit_gemm_shape(const ConvShape& c, ConvPass pass, double channels_multiple) {
  const double C = round_up(c.channels, channels_multiple), K = round_up(c.filters, channels_multiple);
  const double rs = c.kernel_h * c.kernel_w, pq = c.out_h() * c.out_w();
  switch (pass) {
    case ConvPass::forward: return {c.batch * pq, K, C * rs, 1, GemmLayout::nt};
    case ConvPass::data_gradient:
      if (strided(c)) {
        // One sub-pixel convolution per output phase that has filter taps.
        const double phases = std::min(c.kernel_h, c.stride_h) * std::min(c.kernel_w, c.stride_w);
        const double taps = std::ceil(c.kernel_h / c.stride_h) * std::ceil(c.kernel_w / c.stride_w);
        return {c.batch * std::ceil(c.height / c.stride_h) * std::ceil(c.width / c.stride_w), C, K * taps, phases,
                GemmLayout::nn};
      }
      return {c.batch * c.height * c.width, C, K * rs, 1, GemmLayout::nn};
    case ConvPass::weight_gradient: return {K, C * rs, c.batch * pq, 1, GemmLayout::tn};
  }
  return {};
}

GemmShape winograd_gemm_shape(const ConvShape& c, ConvPass pass) {
  const double t = winograd_tile(c);
  const double tiles = c.batch * std::ceil(c.out_h() / t) * std::ceil(c.out_w() / t);
  switch (pass) {
    case ConvPass::forward: return {tiles, c.filters, c.channels, kWinogradProducts, GemmLayout::nt};
    case ConvPass::data_gradient: return {tiles, c.channels, c.filters, kWinogradProducts, GemmLayout::nn};
    case ConvPass::weight_gradient: return {c.filters, c.channels, tiles, kWinogradProducts, GemmLayout::tn};
  }
  return {};
}

bool winograd_applies(const ConvShape& c, Precision precision) {
  return (precision == Precision::fp32 || precision == Precision::fp64) &&
         ((c.kernel_h == 3 && c.kernel_w == 3) || (c.kernel_h == 5 && c.kernel_w == 5)) && c.stride_h == 1 &&
         c.stride_w == 1;
}

bool winograd_applies(const ConvShape& c, Precision precision, const DeviceSpec& device) {
  return !tensor_core_math(precision, device) && winograd_applies(c, Precision::fp32);
}

double conv_mechanism(const ConvShape& c, ConvPass pass, ConvAlgorithm algorithm, Precision precision,
                      const DeviceSpec& device, const GemmParams& gemm, double k_overhead, double bandwidth_fraction) {
  check(c);
  if (device.compute_units < 1) throw std::invalid_argument("conv: device " + device.name + " has no compute-unit count");
  if (!device.supports(precision)) {
    throw std::invalid_argument("conv: device " + device.name + " has no " + std::string(to_string(precision)) + " peak");
  }
  if (!gemm.fitted()) throw std::invalid_argument("conv: no fitted GEMM parameters for " + device.name);
  if (!(bandwidth_fraction > 0)) throw std::invalid_argument("conv: the bandwidth fraction must be > 0");
  Machine mc;
  mc.units = device.compute_units;
  mc.running_units = device.units_left();
  mc.unit_peak = device.peak(precision) / mc.units;
  mc.bandwidth = device.memory_bandwidth * bandwidth_fraction;
  mc.element = bytes_per_element(precision);
  mc.k_overhead = std::max(0.0, k_overhead);
  mc.gemm = &gemm;
  mc.tiles = &conv_tiles(precision, device);

  const double multiple = channel_multiple(precision, device);
  const double C = round_up(c.channels, multiple), K = round_up(c.filters, multiple);
  const double P = c.out_h(), Q = c.out_w();
  const double input = c.batch * C * c.height * c.width;
  const double output = c.batch * K * P * Q;
  const double weights = K * C * c.kernel_h * c.kernel_w;
  const double e = mc.element;

  if (algorithm == ConvAlgorithm::implicit_gemm) {
    // The input pixels the filter window touches: a filter narrower than its stride skips rows
    // and columns (a 1x1 stride-2 layer reads a quarter of its input).
    const double touched = c.batch * C * std::min(c.height, P * std::min(c.kernel_h, c.stride_h)) *
                           std::min(c.width, Q * std::min(c.kernel_w, c.stride_w));
    const double bytes = (pass == ConvPass::data_gradient ? input : touched) * e + (output + weights) * e;
    const GemmShape s = implicit_gemm_shape(c, pass, multiple);
    const bool wgrad = pass == ConvPass::weight_gradient;
    return tiled_kernel(mc, s, bytes, wgrad, wgrad) + gemm.fixed_s;
  }

  if (!winograd_applies(c, precision, device)) return std::numeric_limits<double>::infinity();
  // Non-fused Winograd: transform the two operands, 36 batched GEMMs, transform the result back.
  const GemmShape s = winograd_gemm_shape(c, pass);
  const double a = kWinogradProducts;
  // Transformed sizes of the GEMM's operands (m x k, k x n) and result (m x n).
  const double ta = s.m * s.k * a, tb = s.k * s.n * a, tc = s.m * s.n * a;
  // The untransformed tensors behind them: A, B in, C out.
  double ua = 0, ub = 0, uc = 0;
  switch (pass) {
    case ConvPass::forward: ua = input, ub = weights, uc = output; break;          // X, W -> Y
    case ConvPass::data_gradient: ua = output, ub = weights, uc = input; break;    // dY, W -> dX
    case ConvPass::weight_gradient: ua = output, ub = input, uc = weights; break;  // dY, X -> dW
  }
  const double transforms_s = ((ua + ta) + (ub + tb) + (tc + uc)) * e / mc.bandwidth;
  const double gemm_s = tiled_kernel(mc, s, (ta + tb + tc) * e, pass == ConvPass::weight_gradient, false);
  return transforms_s + gemm_s + gemm.fixed_s;
}

ConvEstimate conv_time(const ConvShape& c, ConvPass pass, Precision precision, const DeviceSpec& device,
                       const GemmParams& gemm, const ConvParams& params) {
  check(c);
  const ConvPrecisionParams* p = params.for_precision(precision);
  if (p == nullptr) {
    // No convolution measurements for this device: the implicit GEMM through the device's
    // fitted GEMM model (what its GEMM measurements support), factor 1.
    ConvEstimate e;
    e.gemm = implicit_gemm_shape(c, pass, channel_multiple(precision, device));
    e.seconds = e.mechanism_s = gemm_time(e.gemm, precision, device, gemm).seconds;
    return e;
  }
  ConvEstimate best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (ConvAlgorithm a : kAlgorithms) {
    double factor = p->factor_for(a, c, pass);
    if (factor <= 0) {
      if (a != ConvAlgorithm::implicit_gemm) continue;  // an uncalibrated algorithm is no candidate
      factor = 1;
    }
    const double mechanism = conv_mechanism(c, pass, a, precision, device, gemm, p->k_overhead, p->bandwidth_fraction);
    if (!std::isfinite(mechanism)) continue;
    const double t = mechanism * factor;
    if (t < best.seconds) {
      best.seconds = t;
      best.algorithm = a;
      best.mechanism_s = mechanism;
      best.factor = factor;
      best.gemm = a == ConvAlgorithm::winograd ? winograd_gemm_shape(c, pass)
                                                : implicit_gemm_shape(c, pass, channel_multiple(precision, device));
    }
  }
  return best;
}

}  // namespace dlsim::models
