#include "sim/recorder.hpp"

#include <stdexcept>

namespace dlsim::sim {

CounterId Recorder::counter(std::string_view name) {
  for (std::size_t i = 0; i < counter_names_.size(); ++i) {
    if (counter_names_[i] == name) return {i};
  }
  counter_names_.emplace_back(name);
  counter_values_.push_back(0.0);
  return {counter_names_.size() - 1};
}

SeriesId Recorder::series(std::string_view name) {
  for (std::size_t i = 0; i < series_.size(); ++i) {
    if (series_[i].name == name) return {i};
  }
  series_.push_back({std::string(name), {}, {}});
  return {series_.size() - 1};
}

void Recorder::record(SeriesId id, Time t, double value) {
  TimeSeries& s = series_[id.index];
  if (!s.times.empty() && t < s.times.back()) {
    throw std::invalid_argument("Recorder: time series '" + s.name + "' recorded out of time order");
  }
  s.times.push_back(t);
  s.values.push_back(value);
}

double Recorder::value(std::string_view counter_name) const {
  for (std::size_t i = 0; i < counter_names_.size(); ++i) {
    if (counter_names_[i] == counter_name) return counter_values_[i];
  }
  return 0.0;
}

const TimeSeries* Recorder::find_series(std::string_view name) const {
  for (const auto& s : series_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace dlsim::sim
