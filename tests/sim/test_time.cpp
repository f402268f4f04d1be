// Tests for sim::Time: named constructors, arithmetic, ordering and the seconds conversion
// (rounding to the nearest nanosecond, and the errors for NaN and out-of-range values).
#include "sim/time.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

namespace dlsim::sim {
namespace {

TEST(Time, NamedConstructorsScaleToNanoseconds) {
  EXPECT_EQ(Time::ns(7).count_ns(), 7);
  EXPECT_EQ(Time::us(7).count_ns(), 7'000);
  EXPECT_EQ(Time::ms(7).count_ns(), 7'000'000);
  EXPECT_EQ(Time::s(7).count_ns(), 7'000'000'000);
  EXPECT_EQ(Time::zero().count_ns(), 0);
  EXPECT_EQ(Time().count_ns(), 0);
  EXPECT_EQ(Time::max().count_ns(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(Time::ns(-3).count_ns(), -3);
  // Large but representable: 200 years of seconds.
  EXPECT_EQ(Time::s(6'311'520'000).count_ns(), 6'311'520'000'000'000'000);
}

TEST(Time, NamedConstructorsAreConstexpr) {
  static_assert(Time::ms(1) == Time::us(1'000));
  static_assert(Time::s(1) == Time::ns(1'000'000'000));
  static_assert((Time::s(2) - Time::ms(500)).count_ns() == 1'500'000'000);
  SUCCEED();
}

TEST(Time, Arithmetic) {
  EXPECT_EQ(Time::ms(1) + Time::us(250), Time::us(1'250));
  EXPECT_EQ(Time::ms(1) - Time::us(250), Time::us(750));
  EXPECT_EQ(Time::ns(5) - Time::ns(8), Time::ns(-3));
  Time t = Time::s(1);
  t += Time::ms(500);
  EXPECT_EQ(t, Time::ms(1'500));
  t -= Time::s(2);
  EXPECT_EQ(t, Time::ms(-500));
  // The compound operators return the object itself.
  Time u = Time::ns(1);
  (u += Time::ns(2)) += Time::ns(3);
  EXPECT_EQ(u.count_ns(), 6);
}

TEST(Time, Ordering) {
  EXPECT_LT(Time::ns(1), Time::ns(2));
  EXPECT_LT(Time::ns(-1), Time::zero());
  EXPECT_LT(Time::us(999), Time::ms(1));
  EXPECT_GT(Time::s(1), Time::ms(999));
  EXPECT_LE(Time::ms(1), Time::us(1'000));
  EXPECT_GE(Time::ms(1), Time::us(1'000));
  EXPECT_NE(Time::ns(1), Time::ns(2));
  EXPECT_LT(Time::ns(std::numeric_limits<std::int64_t>::max() - 1), Time::max());
  EXPECT_TRUE((Time::ns(3) <=> Time::ns(3)) == 0);
  EXPECT_TRUE((Time::ns(2) <=> Time::ns(3)) < 0);
}

TEST(Time, SecondsConversion) {
  EXPECT_DOUBLE_EQ(Time::s(3).seconds(), 3.0);
  EXPECT_DOUBLE_EQ(Time::ms(1'500).seconds(), 1.5);
  EXPECT_DOUBLE_EQ(Time::ns(1).seconds(), 1e-9);
  EXPECT_DOUBLE_EQ(Time::ns(-2'000'000'000).seconds(), -2.0);
}

TEST(Time, FromSecondsExactValues) {
  EXPECT_EQ(Time::from_seconds(0.0), Time::zero());
  EXPECT_EQ(Time::from_seconds(1.0), Time::s(1));
  EXPECT_EQ(Time::from_seconds(0.5), Time::ms(500));
  EXPECT_EQ(Time::from_seconds(-0.25), Time::ms(-250));
  EXPECT_EQ(Time::from_seconds(1e-9), Time::ns(1));
  EXPECT_EQ(Time::from_seconds(0.1), Time::ms(100));  // 0.1 is not exact in binary
  EXPECT_EQ(Time::from_seconds(3600.0), Time::s(3600));
}

TEST(Time, FromSecondsRoundsToNearestNanosecond) {
  EXPECT_EQ(Time::from_seconds(2.4e-9), Time::ns(2));
  EXPECT_EQ(Time::from_seconds(2.6e-9), Time::ns(3));
  EXPECT_EQ(Time::from_seconds(-2.4e-9), Time::ns(-2));
  EXPECT_EQ(Time::from_seconds(-2.6e-9), Time::ns(-3));
  EXPECT_EQ(Time::from_seconds(0.4e-9), Time::zero());
  EXPECT_EQ(Time::from_seconds(1.0000000006), Time::ns(1'000'000'001));  // not truncated
  EXPECT_EQ(Time::from_seconds(0.9999999996), Time::s(1));
}

TEST(Time, FromSecondsRoundTripsThroughSeconds) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{999}, std::int64_t{123'456'789},
                         std::int64_t{86'400'000'000'000}, std::int64_t{-42}}) {
    EXPECT_EQ(Time::from_seconds(Time::ns(n).seconds()).count_ns(), n) << n;
  }
}

TEST(Time, FromSecondsRejectsNaNAndInfinities) {
  EXPECT_THROW(Time::from_seconds(std::numeric_limits<double>::quiet_NaN()), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(-std::numeric_limits<double>::quiet_NaN()), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(std::numeric_limits<double>::infinity()), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(-std::numeric_limits<double>::infinity()), std::out_of_range);
}

TEST(Time, FromSecondsRejectsValuesBeyondInt64) {
  // INT64_MAX ns is about 9.22e9 s (292 years).
  EXPECT_THROW(Time::from_seconds(1e10), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(-1e10), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(9.3e9), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(1e300), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(std::numeric_limits<double>::max()), std::out_of_range);
  EXPECT_THROW(Time::from_seconds(-std::numeric_limits<double>::max()), std::out_of_range);
}

TEST(Time, FromSecondsAcceptsLargeRepresentableValues) {
  // 9.0e9 s = 9.0e18 ns < INT64_MAX (about 9.223e18); 9.0e18 is exact in a double.
  EXPECT_EQ(Time::from_seconds(9.0e9).count_ns(), 9'000'000'000'000'000'000);
  EXPECT_EQ(Time::from_seconds(-9.0e9).count_ns(), -9'000'000'000'000'000'000);
  // One year, well inside the range.
  EXPECT_EQ(Time::from_seconds(31'536'000.0), Time::s(31'536'000));
}

}  // namespace
}  // namespace dlsim::sim
