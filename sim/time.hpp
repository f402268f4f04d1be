// Time: simulated time as a signed 64-bit count of nanoseconds (about 292 years of range).
// Integer time makes event order exact and runs reproducible; conversions to and from
// seconds happen only at the edges (reading scenarios, printing results).
#pragma once
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace dlsim::sim {

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time ns(std::int64_t n) { return Time(n); }
  static constexpr Time us(std::int64_t n) { return Time(n * 1'000); }
  static constexpr Time ms(std::int64_t n) { return Time(n * 1'000'000); }
  static constexpr Time s(std::int64_t n) { return Time(n * 1'000'000'000); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }
  // Rounds to the nearest nanosecond; throws for NaN, negative infinity or overflow.
  static Time from_seconds(double seconds) {
    const double n = std::round(seconds * 1e9);
    if (!(n >= -9.2e18 && n <= 9.2e18)) throw std::out_of_range("sim::Time: seconds out of range");
    return Time(static_cast<std::int64_t>(n));
  }

  constexpr std::int64_t count_ns() const { return ns_; }
  // Division, not multiplication by 1e-9: whole seconds come out exact.
  constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ns_ + o.ns_); }
  constexpr Time operator-(Time o) const { return Time(ns_ - o.ns_); }
  constexpr Time& operator+=(Time o) { ns_ += o.ns_; return *this; }
  constexpr Time& operator-=(Time o) { ns_ -= o.ns_; return *this; }

 private:
  constexpr explicit Time(std::int64_t n) : ns_(n) {}
  std::int64_t ns_ = 0;
};

}  // namespace dlsim::sim
