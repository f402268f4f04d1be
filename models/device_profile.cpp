// DeviceProfile lookups (device.hpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/device.hpp"

namespace dlsim::models {

std::string_view to_string(Generation g) {
  switch (g) {
    case Generation::kepler: return "kepler";
    case Generation::pascal: return "pascal";
    case Generation::volta: return "volta";
    case Generation::turing: return "turing";
    case Generation::ampere: return "ampere";
    case Generation::ada: return "ada";
    case Generation::hopper: return "hopper";
    case Generation::blackwell: return "blackwell";
    case Generation::cdna3: return "cdna3";
    case Generation::tpu: return "tpu";
    case Generation::trainium: return "trainium";
    case Generation::unknown: break;
  }
  return "unknown";
}

void EfficiencyCurve::validate(const std::string& what) const {
  if (size.size() != efficiency.size()) throw std::invalid_argument(what + ": sizes and efficiencies differ in count");
  for (std::size_t i = 0; i < size.size(); ++i) {
    if (!std::isfinite(size[i]) || !(size[i] > 0)) throw std::invalid_argument(what + ": size " + std::to_string(i) + " must be a positive number");
    if (i > 0 && !(size[i] > size[i - 1])) throw std::invalid_argument(what + ": sizes must increase (point " + std::to_string(i) + ")");
    if (!std::isfinite(efficiency[i]) || !(efficiency[i] > 0) || efficiency[i] > 1) {
      throw std::invalid_argument(what + ": efficiency " + std::to_string(i) + " must be in (0, 1]");
    }
  }
}

double EfficiencyCurve::at(double s, long long* out_of_range) const {
  if (size.empty()) throw std::logic_error("EfficiencyCurve::at on an empty curve");
  if (!(s > 0)) s = size.front();
  if (s < size.front() || s > size.back()) {
    if (out_of_range != nullptr) ++*out_of_range;
    return s < size.front() ? efficiency.front() : efficiency.back();
  }
  const auto hi = static_cast<std::size_t>(std::lower_bound(size.begin(), size.end(), s) - size.begin());
  if (hi == 0 || size[hi] == s) return efficiency[hi];
  const std::size_t lo = hi - 1;
  const double x = (std::log(s) - std::log(size[lo])) / (std::log(size[hi]) - std::log(size[lo]));
  return efficiency[lo] + x * (efficiency[hi] - efficiency[lo]);
}

double DeviceProfile::matmul_at(Precision p, double flops, long long* out_of_range) const {
  const EfficiencyCurve& c = matmul_curve[static_cast<std::size_t>(p)];
  return c.empty() ? matmul_efficiency : c.at(flops, out_of_range);
}

double DeviceProfile::memory_at(double bytes, long long* out_of_range) const {
  return memory_curve.empty() ? memory_efficiency : memory_curve.at(bytes, out_of_range);
}

bool DeviceProfile::calibrated() const {
  return !memory_curve.empty() || std::any_of(matmul_curve.begin(), matmul_curve.end(), [](const EfficiencyCurve& c) { return !c.empty(); });
}

double DeviceProfile::fingerprint() const {
  double f = 0;
  double w = 1;
  const auto mix = [&](const EfficiencyCurve& c) {
    for (std::size_t i = 0; i < c.size.size(); ++i) {
      f += w * (std::log(c.size[i]) + 3.0 * c.efficiency[i]);
      w *= 1.0001;
    }
    w *= 1.01;
  };
  for (const EfficiencyCurve& c : matmul_curve) mix(c);
  mix(memory_curve);
  return f;
}

}  // namespace dlsim::models
