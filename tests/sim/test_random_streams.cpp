// Tests for RandomStream and RandomStreams: reproducibility, independence of named streams,
// the ranges and means of the transforms, and pinned values of the hash and the generator.
// Pinned values were computed with an independent Python implementation of FNV-1a 64,
// SplitMix64 and xoshiro256** written from the published algorithms.
#include "sim/random_streams.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dlsim::sim {
namespace {

std::vector<std::uint64_t> draw(RandomStream& s, int n) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(s.next_u64());
  return out;
}

TEST(StableHash, PinnedFnv1a64Values) {
  EXPECT_EQ(stable_hash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(stable_hash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(stable_hash("b"), 0xaf63df4c8601f1a5ull);
  EXPECT_EQ(stable_hash("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(stable_hash("arrivals"), 0xb10bc22ca203cc53ull);
  EXPECT_EQ(stable_hash("network/link0"), 0xe8e07e3e572b9372ull);
}

TEST(StableHash, UsesEveryByte) {
  EXPECT_NE(stable_hash("ab"), stable_hash("ba"));
  EXPECT_NE(stable_hash(std::string_view("a\0", 2)), stable_hash("a"));
  EXPECT_NE(stable_hash("\xff"), stable_hash("\x7f"));  // bytes are unsigned
}

TEST(RandomStream, PinnedXoshiro256StarStarOutputs) {
  RandomStream zero(0);
  EXPECT_EQ(draw(zero, 3),
            (std::vector<std::uint64_t>{0x99ec5f36cb75f2b4ull, 0xbf6e1f784956452aull,
                                        0x1a5f849d4933e6e0ull}));
  RandomStream other(12345);
  EXPECT_EQ(draw(other, 3),
            (std::vector<std::uint64_t>{0xbe6a36374160d49bull, 0x214aaa0637a688c6ull,
                                        0xf69d16de9954d388ull}));
}

TEST(RandomStreams, PinnedStreamDerivation) {
  // stream(name) is seeded with splitmix64(seed) ^ stable_hash(name).
  RandomStreams streams(42);
  EXPECT_EQ(draw(streams.stream("arrivals"), 3),
            (std::vector<std::uint64_t>{0xa00ee8818062bd90ull, 0xd7c5a57a54b7c7f2ull,
                                        0xad2f4fb3fe786df7ull}));
}

TEST(RandomStreams, SameSeedAndNameGiveIdenticalSequences) {
  RandomStreams a(7);
  RandomStreams b(7);
  EXPECT_EQ(a.seed(), 7u);
  EXPECT_EQ(draw(a.stream("jobs"), 1'000), draw(b.stream("jobs"), 1'000));
  // Doubles too, bit for bit.
  for (int i = 0; i < 1'000; ++i) {
    ASSERT_EQ(a.stream("x").uniform(), b.stream("x").uniform());
    ASSERT_EQ(a.stream("x").exponential(3.0), b.stream("x").exponential(3.0));
  }
}

TEST(RandomStreams, DifferentNamesGiveDifferentSequences) {
  RandomStreams s(7);
  const auto jobs = draw(s.stream("jobs"), 100);
  const auto failures = draw(s.stream("failures"), 100);
  const auto jobs2 = draw(s.stream("jobs2"), 100);
  EXPECT_NE(jobs, failures);
  EXPECT_NE(jobs, jobs2);
  // Not just shifted copies of each other: no value of one appears in the other.
  for (std::uint64_t v : jobs) {
    EXPECT_EQ(std::count(failures.begin(), failures.end(), v), 0);
  }
}

TEST(RandomStreams, DifferentSeedsGiveDifferentSequences) {
  RandomStreams a(1);
  RandomStreams b(2);
  EXPECT_NE(draw(a.stream("jobs"), 50), draw(b.stream("jobs"), 50));
  RandomStreams c(0);
  RandomStreams d(std::numeric_limits<std::uint64_t>::max());
  EXPECT_NE(draw(c.stream("jobs"), 50), draw(d.stream("jobs"), 50));
}

TEST(RandomStreams, ExtraStreamsDoNotChangeAnExistingStream) {
  RandomStreams alone(99);
  const auto expected = draw(alone.stream("net"), 200);

  // Another stream created before the first draw, more created and drawn from between draws.
  RandomStreams busy(99);
  busy.stream("aaa").next_u64();
  RandomStream& net = busy.stream("net");
  std::vector<std::uint64_t> got = draw(net, 50);
  for (int i = 0; i < 20; ++i) busy.stream("extra" + std::to_string(i)).uniform();
  const auto more = draw(busy.stream("net"), 150);
  got.insert(got.end(), more.begin(), more.end());
  EXPECT_EQ(got, expected);

  // The order in which streams are first asked for does not matter either.
  RandomStreams reversed(99);
  reversed.stream("zzz");
  reversed.stream("extra3");
  EXPECT_EQ(draw(reversed.stream("net"), 200), expected);
}

TEST(RandomStreams, ReferencesStayValidAsStreamsAreAdded) {
  RandomStreams s(5);
  RandomStream& first = s.stream("first");
  for (int i = 0; i < 500; ++i) s.stream("s" + std::to_string(i));
  EXPECT_EQ(&s.stream("first"), &first);
  RandomStreams t(5);
  EXPECT_EQ(first.next_u64(), t.stream("first").next_u64());
}

TEST(RandomStream, UniformInUnitIntervalWithMeanNearHalf) {
  RandomStream s(314);
  constexpr int kDraws = 100'000;
  double sum = 0;
  double sum_sq = 0;
  double lo = 1;
  double hi = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = s.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  const double mean = sum / kDraws;
  // U(0,1) has variance 1/12: the mean of 1e5 draws has sd sqrt(1/12/1e5) = 9.13e-4.
  // 5 sigma (4.6e-3) fails a correct generator with probability about 6e-7.
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / kDraws));
  // The second moment E[u^2] = 1/3 with variance 4/45; 5 sigma of its mean is 4.7e-3.
  EXPECT_NEAR(sum_sq / kDraws, 1.0 / 3, 5 * std::sqrt(4.0 / 45 / kDraws));
  // The extremes of 1e5 draws lie within 1e-3 of the ends except with probability 2*e^-100.
  EXPECT_LT(lo, 1e-3);
  EXPECT_GT(hi, 1 - 1e-3);
}

TEST(RandomStream, UniformOnARange) {
  RandomStream s(2);
  for (int i = 0; i < 10'000; ++i) {
    const double x = s.uniform(-3.0, 5.0);
    ASSERT_GE(x, -3.0);
    ASSERT_LT(x, 5.0);
  }
  // uniform(lo, hi) is the affine image of uniform().
  RandomStream a(8);
  RandomStream b(8);
  for (int i = 0; i < 100; ++i) EXPECT_DOUBLE_EQ(a.uniform(10.0, 20.0), 10.0 + 10.0 * b.uniform());
}

TEST(RandomStream, ExponentialMeanNearRequestedMean) {
  for (double mean : {0.001, 1.0, 250.0}) {
    RandomStream s(271);
    constexpr int kDraws = 100'000;
    double sum = 0;
    for (int i = 0; i < kDraws; ++i) {
      const double x = s.exponential(mean);
      ASSERT_GE(x, 0.0);
      ASSERT_TRUE(std::isfinite(x));
      sum += x;
    }
    // Exp(mean) has sd = mean, so the sample mean has sd mean/sqrt(1e5); allow 5 sigma
    // (1.6% of the mean), which a correct sampler exceeds with probability about 6e-7.
    EXPECT_NEAR(sum / kDraws, mean, 5 * mean / std::sqrt(double{kDraws})) << mean;
  }
}

TEST(RandomStream, ExponentialRejectsNonPositiveMean) {
  RandomStream s(1);
  EXPECT_THROW(s.exponential(0.0), std::invalid_argument);
  EXPECT_THROW(s.exponential(-0.0), std::invalid_argument);
  EXPECT_THROW(s.exponential(-1.0), std::invalid_argument);
  EXPECT_THROW(s.exponential(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST(RandomStream, IsAUniformRandomBitGenerator) {
  static_assert(std::uniform_random_bit_generator<RandomStream>);
  RandomStream a(3);
  RandomStream b(3);
  EXPECT_EQ(a(), b.next_u64());
  std::vector<int> v(50);
  for (int i = 0; i < 50; ++i) v[i] = i;
  std::vector<int> w = v;
  std::shuffle(v.begin(), v.end(), a);
  std::shuffle(w.begin(), w.end(), b);
  EXPECT_EQ(v, w);
}

}  // namespace
}  // namespace dlsim::sim
