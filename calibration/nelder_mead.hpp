// Nelder-Mead simplex minimisation (Nelder and Mead 1965; the standard reflection 1, expansion
// 2, contraction 0.5 and shrink 0.5 coefficients), for the few constants of the kernel model,
// whose objective is piecewise (tile and wave steps) and has no useful gradient.
#pragma once
#include <functional>
#include <vector>

namespace dlsim::calibration {

struct SimplexResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

// Minimises f from `start`, with an initial simplex of `start` and one point per coordinate
// moved by `step`. Stops after `max_evaluations` or when the simplex's values differ by less
// than `tolerance`. Deterministic.
SimplexResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                          double step, int max_evaluations, double tolerance = 1e-9);

}  // namespace dlsim::calibration
