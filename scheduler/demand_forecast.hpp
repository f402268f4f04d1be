// DemandRate: an exponentially weighted estimate of how fast demand arrives (e.g. GPUs asked for
// per second by arriving jobs), for predictive auto-scaling (autoscaler.hpp). Pure arithmetic:
// no engine, no randomness.
//
// After arrivals of amounts a_i at times t_i <= t, the estimate at t is
//     rate(t) = (1 / tau) * sum_i a_i * exp(-(t - t_i) / tau)
// with tau the window (time constant). For a steady stream of rate r (amount per second) it
// tends to r: the integral of r * exp(-s / tau) / tau over s in [0, inf) is r; after observing
// for a time T it is r * (1 - exp(-T / tau)) on average (it starts low and warms up within a few
// windows; no start-up correction, so that one early arrival does not forecast a flood). After a
// step from r1 to r2 it moves from r1 to r2 as r2 + (r1 - r2) * exp(-elapsed / tau): 63% of the
// way within one window, 95% within three. For Poisson arrivals of unit amounts its standard
// deviation is sqrt(r / (2 tau)) (Campbell's theorem), e.g. 2% of r for r = 1/s, tau = 1000 s.
// Units: seconds, amounts per second. Kept in O(1) state: the sum decays between arrivals.
#pragma once

namespace dlsim::scheduler {

class DemandRate {
 public:
  explicit DemandRate(double window_s);   // window_s > 0 (std::invalid_argument otherwise)
  // One arrival of `amount` at `t_s`; times must not go backwards (std::invalid_argument).
  void add(double t_s, double amount);
  // The estimate at t_s >= the last arrival's time (amount per second).
  double rate_at(double t_s) const;
  double window_s() const { return tau_; }

 private:
  double tau_;
  double level_ = 0;    // sum of a_i * exp(-(last_ - t_i) / tau)
  double last_ = 0;     // time of the last arrival (0 before any)
};

}  // namespace dlsim::scheduler
