// The exponentially weighted demand rate (see demand_forecast.hpp).
#include "scheduler/demand_forecast.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dlsim::scheduler {

DemandRate::DemandRate(double window_s) : tau_(window_s) {
  if (!(window_s > 0) || !std::isfinite(window_s)) throw std::invalid_argument("demand forecast: window must be > 0");
}

void DemandRate::add(double t_s, double amount) {
  if (t_s < last_) throw std::invalid_argument("demand forecast: arrival at " + std::to_string(t_s) + " s before the last one");
  level_ = level_ * std::exp(-(t_s - last_) / tau_) + amount;
  last_ = t_s;
}

double DemandRate::rate_at(double t_s) const {
  const double since = t_s > last_ ? t_s - last_ : 0.0;
  return level_ * std::exp(-since / tau_) / tau_;
}

}  // namespace dlsim::scheduler
