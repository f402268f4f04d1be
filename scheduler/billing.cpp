#include "scheduler/billing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::scheduler {

namespace {

bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

// Held time as billed: rounded up to the granularity, at least the minimum (0 stays 0).
double billed_seconds(double seconds, const BillingRule& rule) {
  if (!finite_nonnegative(seconds) || !(rule.granularity_s > 0) || !(rule.minimum_s >= 0)) {
    throw std::invalid_argument("billed_cost: price, nodes and time must be finite and non-negative");
  }
  if (seconds == 0) return 0.0;
  return std::max(std::ceil(seconds / rule.granularity_s) * rule.granularity_s, rule.minimum_s);
}

}  // namespace

double billed_cost(double price_per_node_hour, int nodes, double seconds, const BillingRule& rule) {
  if (!finite_nonnegative(price_per_node_hour) || nodes < 0) {
    throw std::invalid_argument("billed_cost: price, nodes and time must be finite and non-negative");
  }
  return price_per_node_hour * nodes * billed_seconds(seconds, rule) / 3600.0;
}

double billed_cost(const SpotPriceSeries& prices, double t0_s, double seconds, const BillingRule& rule) {
  const double billed = billed_seconds(seconds, rule);
  if (billed == 0) return 0.0;
  return prices.mean_price(t0_s, t0_s + billed) * billed / 3600.0;
}

double committed_cost(double price_per_node_hour, int nodes, double period_s) {
  if (!finite_nonnegative(price_per_node_hour) || nodes < 0 || !finite_nonnegative(period_s)) {
    throw std::invalid_argument("committed_cost: price, nodes and period must be finite and non-negative");
  }
  return price_per_node_hour * nodes * std::ceil(period_s / 3600.0);
}

double egress_cost(double bytes, const Location& from, const Location& to, const EgressPrices& prices) {
  if (!finite_nonnegative(bytes) || !finite_nonnegative(prices.inter_zone_usd_per_gb) ||
      !finite_nonnegative(prices.inter_region_usd_per_gb)) {
    throw std::invalid_argument("egress_cost: bytes and prices must be finite and non-negative");
  }
  const double gb = bytes / 1e9;
  if (from.region != to.region) return gb * prices.inter_region_usd_per_gb;
  if (from.regional || to.regional || from.zone == to.zone) return 0.0;
  return 2.0 * gb * prices.inter_zone_usd_per_gb;
}

}  // namespace dlsim::scheduler
