// Hazard: the distribution of the time to the next event of a node (a spot reclamation or a
// hardware failure), counted from the node's start. Units: seconds.
//
//   none         no events: the time to the next event is +infinity.
//   exponential  constant rate 1/mean_s; memoryless (the usual model of spot reclamation and of
//                failures in Young 1974 and Daly 2006).
//   weibull      survival S(t) = exp(-(t/scale_s)^shape). shape < 1: infant mortality (the rate
//                falls with age, as in HPC failure logs, Schroeder and Gibson, DSN 2006);
//                shape > 1: wear-out; shape = 1 is exponential with mean scale_s.
//
// Invariants (checked by validate): exponential needs finite mean_s > 0; weibull needs finite
// shape > 0 and scale_s > 0. Fields of the kinds not selected are ignored.
#pragma once

#include "sim/random_streams.hpp"

namespace dlsim::scheduler {

struct Hazard {
  enum class Kind { none, exponential, weibull } kind = Kind::none;
  double mean_s = 0;   // exponential: mean time between events (> 0)
  double shape = 1;    // weibull k (> 0)
  double scale_s = 0;  // weibull lambda (> 0)

  // exponential: mean_s; weibull: scale_s * Gamma(1 + 1/shape); none: +infinity.
  double mean() const;
};

// Throws std::invalid_argument naming the offending field, its value and what is allowed.
void validate(const Hazard& hazard);

// P(no event in [0, t_s]) for a node started at 0. 1 for none; t_s <= 0 gives 1.
double survival(const Hazard& hazard, double t_s);

// Time from now until the next event of a node that has been up `age_s` (>= 0) without one.
// Weibull is not memoryless: the residual life is drawn conditional on survival to age_s, by
// inverting S(age + x) / S(age) = U. Exactly one draw (stream.exponential(1)) is taken for
// exponential and weibull, none for `none` (which returns +infinity), so the same stream state
// gives the same times. Throws std::invalid_argument for an invalid hazard or age.
double sample_time_to_event(const Hazard& hazard, double age_s, sim::RandomStream& stream);

}  // namespace dlsim::scheduler
