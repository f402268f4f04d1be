// SpotMarket: a spot pool replayed against a recorded price history and a maximum price, as
// under AWS's spot bidding model (2009 to 2017): while the price is at or below the maximum the
// pool provisions nodes and pays the market price; when the price rises above it, every node of
// the pool gets the interruption notice (two minutes on AWS since 2015) and is reclaimed after
// it, and no node can be had until the price falls back. Plain data, read from a file in
// experiment/ before the run. Units: seconds of simulated time, USD per node-hour.
#pragma once
#include <limits>

#include "scheduler/spot_trace.hpp"

namespace dlsim::scheduler {

struct SpotMarket {
  SpotPriceSeries prices;  // empty points: no market (the pool's fixed price applies)
  double max_price_per_hour = std::numeric_limits<double>::infinity();
  double start_s = 0;      // series time (seconds after its first point) at simulated time 0

  bool enabled() const { return !prices.points.empty(); }
  // Price at simulated time t_s (the step function of the series from start_s).
  double price_at(double t_s) const { return prices.price_at(start_s + t_s); }
  // Nodes can be had at simulated time t_s: the price is at or below the maximum.
  bool open_at(double t_s) const { return price_at(t_s) <= max_price_per_hour; }
  // The first simulated time after t_s at which open_at changes (a crossing of the maximum
  // price); +infinity when it never does again (the last price holds forever).
  double next_crossing(double t_s) const;
};

}  // namespace dlsim::scheduler
