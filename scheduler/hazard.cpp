#include "scheduler/hazard.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace dlsim::scheduler {
namespace {

void require_positive(double value, const char* field, const char* kind) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw std::invalid_argument(std::string("Hazard.") + field + " = " + std::to_string(value) +
                                ": must be finite and > 0 for a " + kind + " hazard");
  }
}

}  // namespace

double Hazard::mean() const {
  switch (kind) {
    case Kind::exponential: return mean_s;
    case Kind::weibull: return scale_s * std::tgamma(1.0 + 1.0 / shape);
    case Kind::none: break;
  }
  return std::numeric_limits<double>::infinity();
}

void validate(const Hazard& hazard) {
  switch (hazard.kind) {
    case Hazard::Kind::none: return;
    case Hazard::Kind::exponential: require_positive(hazard.mean_s, "mean_s", "exponential"); return;
    case Hazard::Kind::weibull:
      require_positive(hazard.shape, "shape", "weibull");
      require_positive(hazard.scale_s, "scale_s", "weibull");
      return;
  }
  throw std::invalid_argument("Hazard.kind: unknown value " + std::to_string(static_cast<int>(hazard.kind)));
}

double survival(const Hazard& hazard, double t_s) {
  validate(hazard);
  if (std::isnan(t_s)) throw std::invalid_argument("survival: t_s is NaN");
  if (t_s <= 0) return 1.0;
  switch (hazard.kind) {
    case Hazard::Kind::exponential: return std::exp(-t_s / hazard.mean_s);
    case Hazard::Kind::weibull: return std::exp(-std::pow(t_s / hazard.scale_s, hazard.shape));
    case Hazard::Kind::none: break;
  }
  return 1.0;
}

double sample_time_to_event(const Hazard& hazard, double age_s, sim::RandomStream& stream) {
  validate(hazard);
  if (!(age_s >= 0) || !std::isfinite(age_s)) {
    throw std::invalid_argument("sample_time_to_event: age_s = " + std::to_string(age_s) +
                                ": must be finite and >= 0");
  }
  switch (hazard.kind) {
    case Hazard::Kind::none: return std::numeric_limits<double>::infinity();
    case Hazard::Kind::exponential: return stream.exponential(hazard.mean_s);  // memoryless
    case Hazard::Kind::weibull: break;
  }
  // Cumulative hazard H(t) = (t/scale)^k. Given survival to a, the residual x solves
  // H(a + x) - H(a) = E with E ~ Exp(1), so a + x = scale * (H(a) + E)^(1/k).
  const double e = stream.exponential(1.0);
  const double k = hazard.shape;
  const double h = std::pow(age_s / hazard.scale_s, k);
  if (e >= h) return std::max(0.0, hazard.scale_s * std::pow(h + e, 1.0 / k) - age_s);  // x not << a
  // x = a * ((1 + E/H(a))^(1/k) - 1), written with log1p/expm1 so that a small residual at a
  // large age is not lost to cancellation.
  return age_s * std::expm1(std::log1p(e / h) / k);
}

}  // namespace dlsim::scheduler
