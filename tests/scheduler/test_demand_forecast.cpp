// The exponentially weighted demand rate behind predictive auto-scaling.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "scheduler/demand_forecast.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler {
namespace {

TEST(DemandRate, DecaysExponentiallyBetweenArrivals) {
  DemandRate r(3600);
  EXPECT_DOUBLE_EQ(r.rate_at(100), 0);
  r.add(0, 80);
  EXPECT_DOUBLE_EQ(r.rate_at(0), 80.0 / 3600);                     // a / tau
  EXPECT_NEAR(r.rate_at(3600), 80.0 / 3600 * std::exp(-1.0), 1e-15);  // one window later: e^-1 of it
  r.add(3600, 10);
  EXPECT_NEAR(r.rate_at(3600), (80 * std::exp(-1.0) + 10) / 3600, 1e-15);
  EXPECT_THROW(r.add(100, 1), std::invalid_argument);  // back in time
  EXPECT_THROW(DemandRate(0), std::invalid_argument);
}

// Poisson arrivals of one unit at rate `per_s` from `from_s` to `to_s`.
void poisson(DemandRate& r, sim::RandomStream& rng, double per_s, double from_s, double to_s) {
  for (double t = from_s + rng.exponential(1.0 / per_s); t < to_s; t += rng.exponential(1.0 / per_s)) r.add(t, 1);
}

TEST(DemandRate, SteadyPoissonStreamGivesItsRate) {
  // 1 arrival/s for 20 windows of 1000 s: the warm-up bias is e^-20; the standard deviation of
  // the estimate sqrt(rate / (2 tau)) = sqrt(1 / 2000) = 2.2% of the rate, so 10% is 4.5 sigma.
  sim::RandomStreams streams(11);
  DemandRate r(1000);
  poisson(r, streams.stream("arrivals"), 1.0, 0, 20000);
  EXPECT_NEAR(r.rate_at(20000), 1.0, 0.10);
}

TEST(DemandRate, FollowsAStepWithinTheWindow) {
  // 1/s for ten windows, then 3/s. Expected after the step: 3 - 2 e^(-elapsed / 1000):
  // 1 at the step, 2.26 one window later, 2.90 three windows later (sigma <= sqrt(3 / 2000) = 0.04).
  sim::RandomStreams streams(12);
  auto& rng = streams.stream("arrivals");
  DemandRate r(1000);
  poisson(r, rng, 1.0, 0, 10000);
  EXPECT_NEAR(r.rate_at(10000), 1.0, 0.10);
  poisson(r, rng, 3.0, 10000, 11000);
  EXPECT_NEAR(r.rate_at(11000), 3 - 2 * std::exp(-1.0), 0.2);
  poisson(r, rng, 3.0, 11000, 13000);
  EXPECT_NEAR(r.rate_at(13000), 3 - 2 * std::exp(-3.0), 0.2);
  EXPECT_GT(r.rate_at(13000), 2.7);
}

}  // namespace
}  // namespace dlsim::scheduler
