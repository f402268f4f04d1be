// Helpers shared by the kernel fitters (kernel_fit.cpp, conv_fit.cpp): robust statistics and
// the held-out grouping of measured rows. Internal to calibration/.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace dlsim::calibration::fit_support {

constexpr int kFolds = 5;

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  return m;
}

inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * (v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - lo) * (v[hi] - v[lo]);
}

// Held-out groups: the distinct sources, or kFolds folds by row order.
template <class T>
std::vector<std::vector<bool>> group_masks(const std::vector<const T*>& rows, std::vector<std::string>& names) {
  std::map<std::string, std::size_t> sources;
  for (const T* r : rows) ++sources[r->source];
  std::size_t largest = 0;
  for (const auto& [name, count] : sources) largest = std::max(largest, count);
  std::vector<std::vector<bool>> masks;
  names.clear();
  // By source when there are several and none holds more than half the rows (else a fit on the
  // rest would see too little); by folds otherwise.
  if (sources.size() >= 2 && 2 * largest <= rows.size()) {
    for (const auto& [s, count] : sources) {
      std::vector<bool> m(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) m[i] = rows[i]->source == s;
      masks.push_back(m);
      names.push_back(s.empty() ? "(no source)" : s);
    }
  } else {
    for (int f = 0; f < kFolds; ++f) {
      std::vector<bool> m(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) m[i] = static_cast<int>(i % kFolds) == f;
      masks.push_back(m);
      names.push_back("fold " + std::to_string(f + 1));
    }
  }
  return masks;
}

template <class T>
std::vector<const T*> select(const std::vector<const T*>& rows, const std::vector<bool>& mask, bool keep) {
  std::vector<const T*> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (mask[i] == keep) out.push_back(rows[i]);
  }
  return out;
}

}  // namespace dlsim::calibration::fit_support
