#include "scheduler/spot_market.hpp"

#include <algorithm>

namespace dlsim::scheduler {

double SpotMarket::next_crossing(double t_s) const {
  const bool open = open_at(t_s);
  const double series_t = start_s + t_s;
  auto it = std::upper_bound(prices.points.begin(), prices.points.end(), series_t,
                             [](double t, const SpotPricePoint& p) { return t < p.t_s; });
  for (; it != prices.points.end(); ++it) {
    if ((it->usd_per_hour <= max_price_per_hour) != open) return it->t_s - start_s;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace dlsim::scheduler
