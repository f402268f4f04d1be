#include "sim/random_streams.hpp"

#include <cmath>
#include <stdexcept>

namespace dlsim::sim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

RandomStream::RandomStream(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& word : s_) word = splitmix64(x);
}

std::uint64_t RandomStream::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double RandomStream::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double RandomStream::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double RandomStream::exponential(double mean) {
  if (!(mean > 0)) throw std::invalid_argument("RandomStream::exponential: mean must be > 0");
  return -mean * std::log1p(-uniform());  // 1 - u lies in (0, 1], so the log is finite
}

RandomStream& RandomStreams::stream(std::string_view name) {
  auto it = streams_.find(name);
  if (it == streams_.end()) {
    // Mix the seed and the name's hash so that streams of nearby seeds are unrelated too.
    std::uint64_t x = seed_;
    const std::uint64_t mixed = splitmix64(x) ^ stable_hash(name);
    it = streams_.emplace(std::string(name), std::make_unique<RandomStream>(mixed)).first;
  }
  return *it->second;
}

}  // namespace dlsim::sim
