// Recorder: named counters and time series filled during a run, read after it.
// Names are registered once and referred to by index on the hot path; iteration is in
// registration order, so output never depends on hash order.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace dlsim::sim {

struct CounterId { std::size_t index; };
struct SeriesId { std::size_t index; };

struct TimeSeries {
  std::string name;
  std::vector<Time> times;
  std::vector<double> values;
};

class Recorder {
 public:
  CounterId counter(std::string_view name);   // registers or finds
  SeriesId series(std::string_view name);     // registers or finds

  void add(CounterId id, double amount = 1.0) { counter_values_[id.index] += amount; }
  void record(SeriesId id, Time t, double value);

  double value(std::string_view counter_name) const;  // 0 if never registered
  const TimeSeries* find_series(std::string_view name) const;
  const std::vector<std::string>& counter_names() const { return counter_names_; }
  const std::vector<TimeSeries>& all_series() const { return series_; }

 private:
  std::vector<std::string> counter_names_;
  std::vector<double> counter_values_;
  std::vector<TimeSeries> series_;
};

}  // namespace dlsim::sim
