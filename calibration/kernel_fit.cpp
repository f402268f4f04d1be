// Fitting a kernel profile to measured kernels (kernel_fit.hpp).
#include "calibration/kernel_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include <Eigen/Dense>

#include "calibration/conv_fit.hpp"
#include "calibration/fit_support.hpp"
#include "calibration/nelder_mead.hpp"

namespace dlsim::calibration {
namespace {

using fit_support::median;
using fit_support::quantile;

using models::GemmParams;
using models::KernelFamilyKind;
using models::MemoryKernel;
using models::Precision;

constexpr std::size_t kMinGemmRows = 12;
constexpr std::size_t kMinAlignmentRows = 2;   // misaligned rows of one class that set its slowdown
constexpr std::size_t kMinMemoryRows = 4;
constexpr std::size_t kMinLayoutRows = 8;
constexpr std::size_t kMaxSimplexRows = 3000;  // rows the constants are fitted on (evenly thinned)
constexpr double kNodeSpacing = 2;             // log2 units between correction nodes
constexpr double kCorrectionRidge = 1;
constexpr double kCurveSmoothing = 1;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double logit(double p) { return std::log(p / (1 - p)); }
constexpr double kMaxBandwidthFraction = 1.5;  // L2 reuse can beat HBM (vidur's repeated weights)

GemmParams from_simplex(const std::vector<double>& q) {
  GemmParams p;
  p.peak_fraction = sigmoid(q[0]);
  p.tile_overhead = std::exp(q[1]);
  p.k_overhead = std::exp(q[2]);
  p.bandwidth_fraction = kMaxBandwidthFraction * sigmoid(q[3]);
  p.fixed_s = std::exp(q[4]) * 1e-6;
  return p;
}

std::vector<double> to_simplex(double e, double c, double k0, double b, double fixed_us) {
  return {logit(e), std::log(c), std::log(k0), logit(b / kMaxBandwidthFraction), std::log(fixed_us)};
}

template <class T>
std::vector<const T*> thinned(const std::vector<const T*>& rows, std::size_t most) {
  if (rows.size() <= most) return rows;
  std::vector<const T*> out;
  const double stride = double(rows.size()) / most;
  for (std::size_t i = 0; i < most; ++i) out.push_back(rows[static_cast<std::size_t>(i * stride)]);
  return out;
}

// Piecewise-linear "hat" weights of x on nodes (constant beyond the ends), written into
// row `row` of a design matrix from column `offset`.
void hat_row(double x, const std::vector<double>& nodes, Eigen::MatrixXd& m, Eigen::Index row, Eigen::Index offset) {
  const auto put = [&](std::size_t node, double w) { m(row, offset + static_cast<Eigen::Index>(node)) = w; };
  if (x <= nodes.front()) return put(0, 1);
  if (x >= nodes.back()) return put(nodes.size() - 1, 1);
  const auto hi = static_cast<std::size_t>(std::upper_bound(nodes.begin(), nodes.end(), x) - nodes.begin());
  const double f = (x - nodes[hi - 1]) / (nodes[hi] - nodes[hi - 1]);
  put(hi - 1, 1 - f);
  put(hi, f);
}

std::vector<double> nodes_over(double lo, double hi, double spacing) {
  std::vector<double> nodes;
  for (double x = std::floor(lo / spacing) * spacing; x < hi + spacing; x += spacing) nodes.push_back(x);
  if (nodes.size() < 2) nodes.push_back(nodes.back() + spacing);
  return nodes;
}

double gemm_dim(const models::GemmShape& s, int d) { return d == 0 ? s.m : d == 1 ? s.n : s.k; }

// The separable log correction fitted to residuals r of rows with shapes s.
void fit_correction(const std::vector<const MeasuredGemm*>& rows, const std::vector<double>& residual, GemmParams& p) {
  std::array<std::vector<double>, 3> nodes;
  Eigen::Index width = 0;
  for (int d = 0; d < 3; ++d) {
    double lo = 1e300, hi = -1e300;
    for (const MeasuredGemm* r : rows) {
      lo = std::min(lo, std::log2(gemm_dim(r->shape, d)));
      hi = std::max(hi, std::log2(gemm_dim(r->shape, d)));
    }
    nodes[static_cast<std::size_t>(d)] = nodes_over(lo, hi, kNodeSpacing);
    width += static_cast<Eigen::Index>(nodes[static_cast<std::size_t>(d)].size());
  }
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), width);
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Eigen::Index at = 0;
    for (int d = 0; d < 3; ++d) {
      const auto& n = nodes[static_cast<std::size_t>(d)];
      hat_row(std::log2(gemm_dim(rows[i]->shape, d)), n, x, static_cast<Eigen::Index>(i), at);
      at += static_cast<Eigen::Index>(n.size());
    }
    y(static_cast<Eigen::Index>(i)) = residual[i];
  }
  const Eigen::MatrixXd a = x.transpose() * x + kCorrectionRidge * Eigen::MatrixXd::Identity(width, width);
  const Eigen::VectorXd w = a.ldlt().solve(x.transpose() * y);
  Eigen::Index at = 0;
  for (int d = 0; d < 3; ++d) {
    auto& c = p.correction[static_cast<std::size_t>(d)];
    c.nodes = nodes[static_cast<std::size_t>(d)];
    c.values.assign(c.nodes.size(), 0.0);
    for (std::size_t j = 0; j < c.nodes.size(); ++j) c.values[j] = w(at + static_cast<Eigen::Index>(j));
    at += static_cast<Eigen::Index>(c.nodes.size());
  }
}

double gemm_predict(const MeasuredGemm& r, const models::DeviceSpec& device, const GemmParams& p) {
  return models::gemm_time(r.shape, r.precision, device, p).seconds;
}

models::MemoryKernelParams fit_memory(const std::vector<const MeasuredMemoryKernel*>& rows) {
  std::map<MemoryKernel, std::vector<const MeasuredMemoryKernel*>> by_class;
  for (const auto* r : rows) by_class[r->kernel].push_back(r);
  models::MemoryKernelParams p;
  for (const auto& [kernel, members] : by_class) {
    if (members.size() >= kMinMemoryRows) p.curves[static_cast<std::size_t>(kernel)] = fit_memory_curve(members);
  }
  return p;
}

std::string gemm_label(Precision p) { return "gemm " + std::string(models::to_string(p)); }

void held_out_gemm(const std::vector<const MeasuredGemm*>& rows, const models::DeviceSpec& device, Precision precision,
                   std::vector<HeldOut>& out) {
  std::vector<std::string> names;
  const auto masks = fit_support::group_masks(rows, names);
  for (std::size_t g = 0; g < masks.size(); ++g) {
    const GemmParams p = fit_gemm(fit_support::select(rows, masks[g], false), device, precision);
    for (const MeasuredGemm* r : fit_support::select(rows, masks[g], true)) {
      out.push_back({KernelFamilyKind::gemm, gemm_label(precision), names[g], r->shape.m, r->seconds, gemm_predict(*r, device, p)});
    }
  }
}

void held_out_memory(const std::vector<const MeasuredMemoryKernel*>& rows, const models::DeviceSpec& device,
                     std::vector<HeldOut>& out) {
  std::vector<std::string> names;
  const auto masks = fit_support::group_masks(rows, names);
  for (std::size_t g = 0; g < masks.size(); ++g) {
    const models::MemoryKernelParams p = fit_memory(fit_support::select(rows, masks[g], false));
    for (const MeasuredMemoryKernel* r : fit_support::select(rows, masks[g], true)) {
      const double predicted = models::memory_kernel_time(r->kernel, r->bytes, p, device.memory_bandwidth, 1.0);
      out.push_back({KernelFamilyKind::memory, "memory " + std::string(models::to_string(r->kernel)), names[g], r->bytes,
                     r->seconds, predicted});
    }
  }
}

}  // namespace

namespace {

// Whether a row counts as aligned in the fit on `device`: its operands are, or the device's
// kernels have no alignment slowdown of their own (models::alignment_applies).
bool fits_as_aligned(const MeasuredGemm& r, const models::DeviceSpec& device) {
  return !models::alignment_applies(device) || models::alignment_class(r.shape.alignment_bytes) < 0;
}

// Measured over predicted for the part of a row's time that is not the fixed time (at least a
// quarter of it: the fixed time is fitted and may exceed a tiny kernel's measured time).
double measured_over_predicted_part(const MeasuredGemm& r, const models::DeviceSpec& device, const GemmParams& p) {
  const double part = gemm_predict(r, device, p) - p.fixed_s;
  return std::max(r.seconds - p.fixed_s, 0.25 * r.seconds) / part;
}

// Misaligned rows (gemm_model.hpp): the slowdown of each alignment class with rows, the median
// of measured / predicted as if aligned. A class whose kernels are not slower (median <= 1) keeps none.
void fit_alignment_factors(const std::vector<const MeasuredGemm*>& misaligned, const models::DeviceSpec& device,
                           GemmParams& p) {
  std::array<std::vector<const MeasuredGemm*>, 4> by_class;
  for (const MeasuredGemm* r : misaligned) by_class[static_cast<std::size_t>(models::alignment_class(r->shape.alignment_bytes))].push_back(r);
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    if (by_class[c].size() < kMinAlignmentRows) continue;
    std::vector<double> ratio;
    for (const MeasuredGemm* r : by_class[c]) ratio.push_back(measured_over_predicted_part(*r, device, p));
    const double slowdown = median(ratio);
    p.alignment_factor[c] = slowdown > 1 ? slowdown : 0.0;
  }
}

}  // namespace

models::GemmParams fit_gemm(const std::vector<const MeasuredGemm*>& all_rows, const models::DeviceSpec& device,
                            Precision precision) {
  // The mechanism, layout factors and correction on aligned rows; the alignment slowdowns on the
  // rest, on GPUs whose fast kernels need 16-byte aligned rows (alignment_applies).
  std::vector<const MeasuredGemm*> rows, misaligned;
  for (const MeasuredGemm* r : all_rows) (fits_as_aligned(*r, device) ? rows : misaligned).push_back(r);
  if (rows.size() < kMinGemmRows) {
    throw std::invalid_argument("fit_gemm: " + std::to_string(rows.size()) + " " + gemm_label(precision) +
                                " rows with 16-byte aligned operands; at least " + std::to_string(kMinGemmRows) +
                                " are needed");
  }
  // 1. The mechanism's constants, on thinned rows, from three starts.
  const auto sample = thinned(rows, kMaxSimplexRows);
  const auto loss = [&](const std::vector<double>& q) {
    const GemmParams p = from_simplex(q);
    double sum = 0;
    for (const MeasuredGemm* r : sample) {
      const double e = std::log(gemm_predict(*r, device, p) / r->seconds);
      sum += e * e;
    }
    return sum / sample.size();
  };
  SimplexResult best;
  best.value = std::numeric_limits<double>::infinity();
  for (const auto& start : {to_simplex(0.8, 16, 32, 0.8, 1), to_simplex(0.9, 4, 128, 0.6, 2), to_simplex(0.6, 32, 8, 1.0, 0.5)}) {
    const SimplexResult r = nelder_mead(loss, start, 0.5, 1200, 1e-10);
    if (r.value < best.value) best = r;
  }
  GemmParams p = from_simplex(best.x);
  // 2. Layout factors: the median measured / predicted per layout; layouts without rows take the
  // median of the measured ones.
  std::array<std::vector<double>, 3> by_layout;
  for (const MeasuredGemm* r : rows) by_layout[static_cast<std::size_t>(r->shape.layout)].push_back(r->seconds / gemm_predict(*r, device, p));
  std::vector<double> measured;
  for (std::size_t l = 0; l < 3; ++l) {
    if (by_layout[l].size() >= kMinLayoutRows) {
      p.layout_factor[l] = median(by_layout[l]);
      measured.push_back(p.layout_factor[l]);
    }
  }
  for (std::size_t l = 0; l < 3; ++l) {
    if (by_layout[l].size() < kMinLayoutRows) p.layout_factor[l] = measured.empty() ? 1.0 : median(measured);
  }
  // 3. The correction, on every row: the residual of the (mechanism x layout) part.
  std::vector<double> residual;
  for (const MeasuredGemm* r : rows) residual.push_back(std::log(measured_over_predicted_part(*r, device, p)));
  fit_correction(rows, residual, p);
  fit_alignment_factors(misaligned, device, p);
  return p;
}

models::MemoryCurve fit_memory_curve(const std::vector<const MeasuredMemoryKernel*>& rows) {
  if (rows.size() < kMinMemoryRows) throw std::invalid_argument("fit_memory_curve: too few rows");
  double lo = 1e300, hi = -1e300;
  for (const auto* r : rows) {
    lo = std::min(lo, std::log2(r->bytes));
    hi = std::max(hi, std::log2(r->bytes));
  }
  const std::vector<double> nodes = nodes_over(lo, hi, 1.0);
  const auto n = static_cast<Eigen::Index>(nodes.size());
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), n);
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    hat_row(std::log2(rows[i]->bytes), nodes, x, static_cast<Eigen::Index>(i), 0);
    y(static_cast<Eigen::Index>(i)) = std::log(rows[i]->seconds);
  }
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(std::max<Eigen::Index>(n - 2, 0), n);
  for (Eigen::Index i = 0; i + 2 < n; ++i) d.row(i).segment(i, 3) << 1, -2, 1;
  const Eigen::MatrixXd a = x.transpose() * x + kCurveSmoothing * d.transpose() * d + 1e-6 * Eigen::MatrixXd::Identity(n, n);
  const Eigen::VectorXd w = a.ldlt().solve(x.transpose() * y);
  models::MemoryCurve c;
  double floor = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    c.bytes.push_back(std::exp2(nodes[static_cast<std::size_t>(i)]));
    floor = std::max(floor, std::exp(w(i)));
    c.seconds.push_back(floor);
  }
  return c;
}

KernelFit fit_kernel_profile(const KernelTables& tables, const std::string& gpu, const models::DeviceSpec& device,
                             bool held_out) {
  KernelFit fit;
  std::map<Precision, std::vector<const MeasuredGemm*>> gemm;
  for (const MeasuredGemm& r : tables.gemm) {
    if (r.gpu == gpu) gemm[r.precision].push_back(&r);
  }
  std::vector<const MeasuredMemoryKernel*> memory;
  for (const MeasuredMemoryKernel& r : tables.memory) {
    if (r.gpu == gpu) memory.push_back(&r);
  }
  std::vector<const MeasuredConv*> conv;
  for (const MeasuredConv& r : tables.conv) {
    if (r.gpu == gpu) conv.push_back(&r);
  }
  if (gemm.empty() && memory.empty() && conv.empty()) {
    throw std::invalid_argument("no measured kernel in the tables is for GPU '" + gpu + "'");
  }
  if (gemm.empty()) throw std::invalid_argument("GPU '" + gpu + "': the tables have no GEMM rows, which every profile needs");
  for (const auto& [precision, rows] : gemm) {
    if (!device.supports(precision)) {
      throw std::invalid_argument("GPU '" + gpu + "': device " + device.name + " has no " +
                                  std::string(models::to_string(precision)) + " peak for the measured GEMMs");
    }
    const auto aligned = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [&](const MeasuredGemm* r) { return fits_as_aligned(*r, device); }));
    if (aligned < kMinGemmRows) {
      fit.notes.push_back(gemm_label(precision) + ": " + std::to_string(aligned) + " rows with aligned operands, fewer than the " +
                          std::to_string(kMinGemmRows) + " a fit needs; not fitted");
      continue;
    }
    fit.profile.gemm[static_cast<std::size_t>(precision)] = fit_gemm(rows, device, precision);
    if (held_out) held_out_gemm(rows, device, precision, fit.held_out);
  }
  if (fit.notes.size() == gemm.size()) {
    throw std::invalid_argument("GPU '" + gpu + "': no GEMM precision has the " + std::to_string(kMinGemmRows) +
                                " rows a fit needs");
  }
  if (!memory.empty()) {
    fit.profile.memory = fit_memory(memory);
    if (held_out) held_out_memory(memory, device, fit.held_out);
  }
  if (!conv.empty()) {
    fit.profile.conv = fit_conv(conv, device, fit.profile);
    if (held_out) held_out_conv(conv, device, fit.profile, fit.held_out);
  }
  set_error_bands(fit.profile, fit.held_out);
  return fit;
}

namespace {
constexpr const char* kLayoutNames[3] = {"nn", "nt", "tn"};  // by models::GemmLayout
}  // namespace

std::vector<std::string> apply_layout_reference(models::KernelProfile& profile, const KernelTables& fitted_on,
                                                const std::string& gpu, const KernelTables& reference,
                                                const std::string& reference_gpu, const models::DeviceSpec& device) {
  std::vector<std::string> notes;
  for (std::size_t pi = 0; pi < profile.gemm.size(); ++pi) {
    GemmParams& params = profile.gemm[pi];
    if (!params.fitted()) continue;
    const auto precision = static_cast<Precision>(pi);
    // Rows per layout: what the fit saw, and measured / predicted on the reference.
    std::array<int, 3> fitted_rows{0, 0, 0};
    for (const MeasuredGemm& r : fitted_on.gemm) {
      if (r.gpu == gpu && r.precision == precision && fits_as_aligned(r, device)) ++fitted_rows[static_cast<std::size_t>(r.shape.layout)];
    }
    std::array<std::vector<double>, 3> ratio;
    for (const MeasuredGemm& r : reference.gemm) {
      if (r.gpu != reference_gpu || r.precision != precision || !fits_as_aligned(r, device)) continue;
      ratio[static_cast<std::size_t>(r.shape.layout)].push_back(r.seconds / gemm_predict(r, device, params));
    }
    const auto anchor = static_cast<std::size_t>(std::max_element(fitted_rows.begin(), fitted_rows.end()) - fitted_rows.begin());
    const std::string label = gemm_label(precision);
    for (std::size_t l = 0; l < 3; ++l) {
      if (fitted_rows[l] >= static_cast<int>(kMinLayoutRows)) continue;
      const std::string layout = kLayoutNames[l];
      if (ratio[l].size() < kMinLayoutRows || ratio[anchor].size() < kMinLayoutRows) {
        notes.push_back(label + " " + layout + ": too few reference rows; factor kept");
        continue;
      }
      const double scale = median(ratio[l]) / median(ratio[anchor]);
      params.layout_factor[l] *= scale;
      char line[200];
      std::snprintf(line, sizeof line, "%s %s: factor x %.4f from %zu reference rows against %zu %s rows", label.c_str(),
                    layout.c_str(), scale, ratio[l].size(), ratio[anchor].size(), kLayoutNames[anchor]);
      notes.push_back(line);
    }
  }
  return notes;
}

std::vector<ErrorSummary> summarize_held_out(const std::vector<HeldOut>& held_out) {
  std::map<std::string, std::vector<double>> errors;
  std::vector<std::string> order;
  const auto add = [&](const std::string& label, double e) {
    if (errors.count(label) == 0) order.push_back(label);
    errors[label].push_back(e);
  };
  for (const HeldOut& h : held_out) {
    add(h.label, h.error());
    if (h.family == KernelFamilyKind::gemm) add(h.label + (h.size >= 64 ? ", m >= 64" : ", m < 64"), h.error());
    if (h.family == KernelFamilyKind::memory) {
      add(h.label + (h.size > 1e6 ? ", > 1 MB" : ", <= 1 MB"), h.error());
      if (h.size > 1e6) add("memory (every class), > 1 MB", h.error());
    }
  }
  std::vector<ErrorSummary> out;
  for (const std::string& label : order) {
    const auto& e = errors[label];
    std::vector<double> abs;
    for (double v : e) abs.push_back(std::abs(v));
    out.push_back({label, static_cast<int>(e.size()), median(abs), quantile(abs, 0.9), median(e)});
  }
  return out;
}

void set_error_bands(models::KernelProfile& profile, const std::vector<HeldOut>& held_out) {
  std::array<std::vector<double>, models::kKernelFamilies> ratio, abs;
  for (const HeldOut& h : held_out) {
    // The sizes training runs use: GEMMs with m >= 64, memory kernels above 1 MB.
    if (h.family == KernelFamilyKind::gemm && h.size < 64) continue;
    if (h.family == KernelFamilyKind::memory && h.size <= 1e6) continue;
    ratio[static_cast<std::size_t>(h.family)].push_back(h.measured_s / h.predicted_s);
    abs[static_cast<std::size_t>(h.family)].push_back(std::abs(h.error()));
  }
  for (std::size_t f = 0; f < models::kKernelFamilies; ++f) {
    if (ratio[f].empty()) continue;
    models::ErrorBand& b = profile.bands[f];
    b.cases = static_cast<int>(ratio[f].size());
    b.p10 = quantile(ratio[f], 0.1);
    b.p50 = quantile(ratio[f], 0.5);
    b.p90 = quantile(ratio[f], 0.9);
    b.median_abs = median(abs[f]);
    b.p90_abs = quantile(abs[f], 0.9);
  }
}

}  // namespace dlsim::calibration
