// Calibration fitter (fit.hpp).
#include "calibration/fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace dlsim::calibration {
namespace {

using models::Precision;

bool is_stream(KernelFamily f) { return f == KernelFamily::copy || f == KernelFamily::read || f == KernelFamily::write; }

bool is_memory_bound(KernelFamily f) {
  return f != KernelFamily::gemm && f != KernelFamily::gemm_naive && f != KernelFamily::launch &&
         f != KernelFamily::host_to_device && f != KernelFamily::device_to_host;
}

struct Line {
  double t0 = 0;    // seconds
  double inv_rate = 0;  // seconds per unit of work
};

// Weighted least squares of t = t0 + s * inv_rate, weights 1/t; t0 forced to 0 if it comes out
// negative (a negative fixed cost is not physical).
Line fit_line(const std::vector<std::pair<double, double>>& points, const std::string& what) {
  std::vector<double> sizes;
  for (const auto& p : points) sizes.push_back(p.first);
  std::sort(sizes.begin(), sizes.end());
  if (std::unique(sizes.begin(), sizes.end()) - sizes.begin() < 2) {
    throw std::invalid_argument("cannot fit " + what + ": it needs measurements at two sizes at least");
  }
  Eigen::MatrixXd a(points.size(), 2);
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    a(static_cast<Eigen::Index>(i), 0) = 1.0 / points[i].second;
    a(static_cast<Eigen::Index>(i), 1) = points[i].first / points[i].second;
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(ones);
  Line l{x(0), x(1)};
  if (l.t0 < 0 || !(l.inv_rate > 0)) {
    // Through the origin: minimize sum (s_i b / t_i - 1)^2 -> b = sum(s_i/t_i) / sum((s_i/t_i)^2).
    double num = 0, den = 0;
    for (const auto& [s, t] : points) {
      num += s / t;
      den += (s / t) * (s / t);
    }
    l = {0.0, num / den};
  }
  return l;
}

models::EfficiencyCurve curve_of(const std::vector<std::pair<double, double>>& points, const Line& line, double peak,
                                 double launch) {
  std::vector<double> sizes;
  for (const auto& p : points) sizes.push_back(p.first);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  models::EfficiencyCurve c;
  for (double s : sizes) {
    const double body = line.t0 + s * line.inv_rate - launch;
    const double eff = body > 0 ? s / (peak * body) : 1.0;
    c.size.push_back(s);
    c.efficiency.push_back(std::clamp(eff, 1e-9, 1.0));
  }
  return c;
}

}  // namespace

double predict(const KernelCase& c, const models::DeviceSpec& spec, const models::DeviceProfile& profile) {
  const double launch = profile.kernel_launch_overhead_s;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (c.family == KernelFamily::launch) return launch;
  if (c.family == KernelFamily::gemm) {
    const double peak = spec.peak(c.precision);
    if (!(peak > 0)) return nan;
    return launch + c.flops() / (peak * profile.matmul_at(c.precision, c.flops()));
  }
  if (is_memory_bound(c.family)) {
    if (!(spec.memory_bandwidth > 0)) return nan;
    return launch + c.bytes() / (spec.memory_bandwidth * profile.memory_at(c.bytes()));
  }
  return nan;
}

std::vector<FamilyError> family_errors(const std::vector<CaseStats>& stats, const models::DeviceSpec& spec,
                                       const models::DeviceProfile& profile) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> errors;
  for (const CaseStats& s : stats) {
    if (!s.ok) continue;
    const double p = predict(s.kernel, spec, profile);
    if (!std::isfinite(p)) continue;
    const std::string label = family_label(s.kernel);
    if (errors.find(label) == errors.end()) order.push_back(label);
    errors[label].push_back(std::abs(p - s.median_s) / s.median_s);
  }
  std::vector<FamilyError> out;
  for (const std::string& label : order) {
    std::vector<double>& e = errors[label];
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    const double median = n % 2 == 1 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
    out.push_back({label, static_cast<int>(n), median});
  }
  return out;
}

Calibration fit(const std::vector<CaseStats>& stats, const DeviceInfo& info, const std::string& date,
                const models::DeviceSpec* datasheet) {
  Calibration cal;
  cal.info = info;
  cal.date = date;
  std::map<Precision, std::vector<std::pair<double, double>>> gemm;  // (flops, seconds)
  std::vector<std::pair<double, double>> streams;                     // (bytes, seconds)
  std::array<double, 6> best_flops{};
  double best_bytes = 0;
  double launch = -1;
  for (const CaseStats& s : stats) {
    if (!s.ok) continue;
    const KernelCase& c = s.kernel;
    if (c.family == KernelFamily::launch) launch = s.median_s;
    if (c.family == KernelFamily::gemm) {
      gemm[c.precision].push_back({c.flops(), s.median_s});
      auto& best = best_flops[static_cast<std::size_t>(c.precision)];
      best = std::max(best, c.flops() / s.median_s);
    }
    if (c.family == KernelFamily::gemm_naive) cal.naive_gemm_flops = std::max(cal.naive_gemm_flops, c.flops() / s.median_s);
    if (is_stream(c.family)) {
      streams.push_back({c.bytes(), s.median_s});
      best_bytes = std::max(best_bytes, c.bytes() / s.median_s);
    }
  }
  if (launch < 0) throw std::invalid_argument("cannot fit: no launch measurement");
  // Best rates net of the launch overhead (the roofline adds it per kernel): s / (t - L).
  const auto net_rate = [launch](double work, double t) { return t > launch ? work / (t - launch) : work / t; };
  best_flops = {};
  best_bytes = 0;
  for (const auto& [precision, points] : gemm) {
    for (const auto& [f, t] : points) best_flops[static_cast<std::size_t>(precision)] = std::max(best_flops[static_cast<std::size_t>(precision)], net_rate(f, t));
  }
  for (const auto& [b, t] : streams) best_bytes = std::max(best_bytes, net_rate(b, t));
  if (gemm.find(Precision::fp32) == gemm.end()) throw std::invalid_argument("cannot fit: no fp32 GEMM measurement");

  if (datasheet != nullptr) {
    cal.spec = *datasheet;
  } else {
    cal.spec.name = info.backend == "cpu" ? "local-cpu" : info.name;
    cal.spec.description = info.name;
    cal.spec.peak_flops = best_flops;
    cal.spec.memory_bandwidth = best_bytes;
    cal.spec.source = "measured by dlsim calibrate (" + info.backend + " backend, " + date +
                      "): no datasheet, the peaks are the best measured rates";
  }
  cal.profile.kernel_launch_overhead_s = launch;
  for (const auto& [precision, points] : gemm) {
    const double peak = cal.spec.peak(precision);
    if (!(peak > 0)) continue;
    const Line line = fit_line(points, "gemm " + std::string(models::to_string(precision)));
    cal.profile.matmul_curve[static_cast<std::size_t>(precision)] = curve_of(points, line, peak, launch);
  }
  if (!(cal.spec.memory_bandwidth > 0)) throw std::invalid_argument("cannot fit: no memory bandwidth (no stream measurement)");
  cal.profile.memory_curve = curve_of(streams, fit_line(streams, "memory streams"), cal.spec.memory_bandwidth, launch);
  cal.profile.matmul_efficiency = cal.profile.matmul_curve[static_cast<std::size_t>(Precision::fp32)].efficiency.back();
  cal.profile.memory_efficiency = cal.profile.memory_curve.efficiency.back();
  cal.profile.source = "measured on " + cal.spec.name + " (" + info.name + ", " + date + ")";
  cal.errors = family_errors(stats, cal.spec, cal.profile);
  return cal;
}

}  // namespace dlsim::calibration
