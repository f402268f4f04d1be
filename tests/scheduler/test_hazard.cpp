#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "scheduler/hazard.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler {
namespace {

Hazard exponential(double mean_s) { return {Hazard::Kind::exponential, mean_s}; }
Hazard weibull(double shape, double scale_s) { return {Hazard::Kind::weibull, 0, shape, scale_s}; }

// Mean of n draws of the residual life at `age_s`.
double sample_mean(const Hazard& h, double age_s, int n, std::uint64_t seed) {
  sim::RandomStreams streams(seed);
  auto& stream = streams.stream("hazard");
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += sample_time_to_event(h, age_s, stream);
  return sum / n;
}

// Weibull mean residual life at age a by Simpson's rule: int_a^inf S(t) dt / S(a), with
// S(t) = exp(-(t/scale)^k) written out here (independent of the code under test).
double weibull_mean_residual_life(double k, double scale, double a) {
  auto s = [&](double t) { return std::exp(-std::pow(t / scale, k)); };
  const double hi = a + 80 * scale;  // S(hi) < e^-21 for k >= 0.7
  const int n = 400000;              // even
  const double dt = (hi - a) / n;
  double sum = s(a) + s(hi);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4 : 2) * s(a + i * dt);
  return sum * dt / 3 / s(a);
}

void expect_invalid(const std::function<void()>& f, const std::string& names) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming " << names;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(Hazard, MeanClosedForms) {
  EXPECT_DOUBLE_EQ(exponential(7200).mean(), 7200);
  EXPECT_NEAR(weibull(2, 1000).mean(), 1000 * std::sqrt(M_PI) / 2, 1e-9);  // Gamma(3/2) = sqrt(pi)/2
  EXPECT_NEAR(weibull(1, 500).mean(), 500, 1e-9);                          // k = 1 is exponential
  EXPECT_NEAR(weibull(0.5, 100).mean(), 200, 1e-9);                        // Gamma(3) = 2
  EXPECT_TRUE(std::isinf(Hazard{}.mean()));
}

TEST(Hazard, SampleMeansMatchMeanFor200kDraws) {
  for (const Hazard& h : {exponential(3600), weibull(0.7, 3600), weibull(2, 3600)}) {
    const double m = sample_mean(h, 0, 200000, 11);
    EXPECT_NEAR(m / h.mean(), 1.0, 0.02) << "shape " << h.shape << " sample mean " << m;
  }
}

TEST(Hazard, WeibullResidualLifeIsConditionalOnAge) {
  const double scale = 1000;
  for (double k : {0.7, 2.0}) {
    for (double age : {500.0, 2000.0}) {
      const double expected = weibull_mean_residual_life(k, scale, age);
      const double got = sample_mean(weibull(k, scale), age, 200000, 5);
      EXPECT_NEAR(got / expected, 1.0, 0.02) << "k " << k << " age " << age;
    }
  }
  // The age matters: wear-out (k = 2) shortens the residual life, infant mortality (k = 0.7)
  // lengthens it, against the life of a new node.
  EXPECT_LT(weibull_mean_residual_life(2, scale, 2000), 0.3 * weibull(2, scale).mean());
  EXPECT_GT(weibull_mean_residual_life(0.7, scale, 2000), 1.2 * weibull(0.7, scale).mean());
}

TEST(Hazard, WeibullResidualTailMatchesConditionalSurvival) {
  // P(X > x | up at a) = S(a + x) / S(a), checked at a few x from 100k draws.
  const Hazard h = weibull(0.7, 1000);
  const double age = 800;
  sim::RandomStreams streams(3);
  auto& stream = streams.stream("tail");
  const int n = 100000;
  const double xs[] = {100, 1000, 4000};
  int above[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const double x = sample_time_to_event(h, age, stream);
    for (int j = 0; j < 3; ++j) above[j] += x > xs[j];
  }
  for (int j = 0; j < 3; ++j) {
    const double expected = survival(h, age + xs[j]) / survival(h, age);
    EXPECT_NEAR(static_cast<double>(above[j]) / n, expected, 0.005) << "x " << xs[j];
  }
}

TEST(Hazard, ExponentialIsMemoryless) {
  // The same stream state gives the same residual at any age ...
  sim::RandomStream a(99), b(99);
  for (double age : {0.0, 10.0, 1e6}) {
    EXPECT_EQ(sample_time_to_event(exponential(600), 0, a), sample_time_to_event(exponential(600), age, b));
  }
  // ... and S(s + t) / S(s) = S(t).
  const Hazard h = exponential(600);
  EXPECT_NEAR(survival(h, 1500 + 300) / survival(h, 1500), survival(h, 300), 1e-12);
  EXPECT_NEAR(sample_mean(h, 5000, 200000, 8) / 600, 1.0, 0.02);
}

TEST(Hazard, WeibullResidualAtLargeAgeKeepsPrecision) {
  // At a = 1e6 scale with k = 2 the residual is tiny against a: x ~ scale^2 E / (2 a). The naive
  // scale * sqrt(H(a) + E) - a would lose about 12 of 16 digits to cancellation.
  const Hazard h = weibull(2, 10);
  const double age = 1e7;
  sim::RandomStream copy(21), stream(21);
  for (int i = 0; i < 100; ++i) {
    const double e = copy.exponential(1.0);
    const double x = sample_time_to_event(h, age, stream);
    EXPECT_GT(x, 0);
    EXPECT_NEAR(x / (10.0 * 10.0 * e / (2 * age)), 1.0, 1e-6) << "E " << e;
  }
}

TEST(Hazard, SameSeedSameTimesOtherSeedOtherTimes) {
  sim::RandomStreams s1(42), s2(42), s3(43);
  const Hazard h = weibull(0.7, 3600);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const double age = 10.0 * i;
    const double t1 = sample_time_to_event(h, age, s1.stream("preemption"));
    EXPECT_EQ(t1, sample_time_to_event(h, age, s2.stream("preemption")));
    differ += t1 != sample_time_to_event(h, age, s3.stream("preemption"));
  }
  EXPECT_GT(differ, 990);
}

TEST(Hazard, NoneNeverFiresAndDrawsNothing) {
  sim::RandomStream used(7), fresh(7);
  EXPECT_TRUE(std::isinf(sample_time_to_event(Hazard{}, 100, used)));
  EXPECT_EQ(used.next_u64(), fresh.next_u64());  // the stream did not advance
  EXPECT_EQ(survival(Hazard{}, 1e9), 1.0);
}

TEST(Hazard, ValidationNamesTheField) {
  sim::RandomStream s(1);
  expect_invalid([] { validate(exponential(0)); }, "mean_s");
  expect_invalid([] { validate(exponential(std::numeric_limits<double>::infinity())); }, "mean_s");
  expect_invalid([] { validate(weibull(-1, 10)); }, "shape");
  expect_invalid([] { validate(weibull(1, std::nan(""))); }, "scale_s");
  expect_invalid([&] { sample_time_to_event(exponential(10), -1, s); }, "age_s");
  expect_invalid([&] { sample_time_to_event(weibull(0, 10), 0, s); }, "shape");
  EXPECT_NO_THROW(validate(Hazard{}));                   // none ignores the numbers
  EXPECT_NO_THROW(validate(Hazard{Hazard::Kind::none, -5, -5, -5}));
}

}  // namespace
}  // namespace dlsim::scheduler
