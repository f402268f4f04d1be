// RandomStreams: named, independent, reproducible random streams derived from one seed.
// A stream's state depends only on (seed, name), never on which other streams exist or the
// order they were first asked for, so adding a stream never changes the numbers of another.
// The generators and the transforms to doubles are written here (not <random>'s
// distributions, whose output differs between standard libraries) so runs are bit-identical.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace dlsim::sim {

// xoshiro256** (Blackman and Vigna, 2018), seeded through SplitMix64.
class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed);
  std::uint64_t next_u64();
  double uniform();                       // [0, 1), 53 random bits
  double uniform(double lo, double hi);   // [lo, hi)
  double exponential(double mean);        // mean > 0
  using result_type = std::uint64_t;      // usable as a UniformRandomBitGenerator
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return next_u64(); }

 private:
  std::uint64_t s_[4];
};

class RandomStreams {
 public:
  explicit RandomStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  // The stream of that name, created on first use; references stay valid.
  RandomStream& stream(std::string_view name);

 private:
  std::uint64_t seed_;
  std::map<std::string, std::unique_ptr<RandomStream>, std::less<>> streams_;
};

// Stable 64-bit hash of a name (FNV-1a), the same on every platform.
std::uint64_t stable_hash(std::string_view text);

}  // namespace dlsim::sim
