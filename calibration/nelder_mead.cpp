// Nelder-Mead simplex (nelder_mead.hpp).
#include "calibration/nelder_mead.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace dlsim::calibration {

SimplexResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                          double step, int max_evaluations, double tolerance) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> points(n + 1, start);
  for (std::size_t i = 0; i < n; ++i) points[i + 1][i] += step;
  std::vector<double> values(n + 1);
  int evaluations = 0;
  const auto eval = [&](const std::vector<double>& x) {
    ++evaluations;
    const double v = f(x);
    return std::isfinite(v) ? v : std::numeric_limits<double>::max();
  };
  for (std::size_t i = 0; i <= n; ++i) values[i] = eval(points[i]);
  std::vector<std::size_t> order(n + 1);
  while (evaluations < max_evaluations) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (std::abs(values[worst] - values[best]) < tolerance) break;
    std::vector<double> centroid(n, 0.0);
    for (std::size_t i = 0; i <= n; ++i) {
      if (i == worst) continue;
      for (std::size_t d = 0; d < n; ++d) centroid[d] += points[i][d] / n;
    }
    const auto along = [&](double t) {
      std::vector<double> x(n);
      for (std::size_t d = 0; d < n; ++d) x[d] = centroid[d] + t * (points[worst][d] - centroid[d]);
      return x;
    };
    const std::vector<double> reflected = along(-1.0);
    const double fr = eval(reflected);
    if (fr < values[best]) {
      const std::vector<double> expanded = along(-2.0);
      const double fe = eval(expanded);
      if (fe < fr) {
        points[worst] = expanded;
        values[worst] = fe;
      } else {
        points[worst] = reflected;
        values[worst] = fr;
      }
      continue;
    }
    if (fr < values[second]) {
      points[worst] = reflected;
      values[worst] = fr;
      continue;
    }
    const bool outside = fr < values[worst];
    const std::vector<double> contracted = along(outside ? -0.5 : 0.5);
    const double fc = eval(contracted);
    if (fc < (outside ? fr : values[worst])) {
      points[worst] = contracted;
      values[worst] = fc;
      continue;
    }
    for (std::size_t i = 0; i <= n; ++i) {  // shrink towards the best point
      if (i == best) continue;
      for (std::size_t d = 0; d < n; ++d) points[i][d] = points[best][d] + 0.5 * (points[i][d] - points[best][d]);
      values[i] = eval(points[i]);
    }
  }
  const auto best = static_cast<std::size_t>(std::min_element(values.begin(), values.end()) - values.begin());
  return {points[best], values[best], evaluations};
}

}  // namespace dlsim::calibration
