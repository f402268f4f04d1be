#include "scheduler/billing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::scheduler {

double billed_cost(double price_per_node_hour, int nodes, double seconds, const BillingRule& rule) {
  if (!(price_per_node_hour >= 0) || !std::isfinite(price_per_node_hour) || nodes < 0 || !(seconds >= 0) ||
      !std::isfinite(seconds) || !(rule.granularity_s > 0) || !(rule.minimum_s >= 0)) {
    throw std::invalid_argument("billed_cost: price, nodes and time must be finite and non-negative");
  }
  if (seconds == 0) return 0.0;
  const double rounded = std::ceil(seconds / rule.granularity_s) * rule.granularity_s;
  const double billed = std::max(rounded, rule.minimum_s);
  return price_per_node_hour * nodes * billed / 3600.0;
}

}  // namespace dlsim::scheduler
