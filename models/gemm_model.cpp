// The tiled-GEMM mechanism (gemm_model.hpp).
#include "models/gemm_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>
#include <limits>
#include <stdexcept>
#include <string>

namespace dlsim::models {

double LogLinear::at(double x) const {
  if (nodes.empty()) return 0;
  const double l = std::log2(x);
  if (l <= nodes.front()) return values.front();
  if (l >= nodes.back()) return values.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(nodes.begin(), nodes.end(), l) - nodes.begin());
  const std::size_t lo = hi - 1;
  const double f = (l - nodes[lo]) / (nodes[hi] - nodes[lo]);
  return values[lo] + f * (values[hi] - values[lo]);
}

double operand_alignment_bytes(const GemmShape& s, double element_bytes) {
  const auto bytes_of = [&](double dim) {
    const double b = dim * element_bytes;
    if (!(b >= 1) || b != std::floor(b) || b > 9.0e15) return std::min(element_bytes, 16.0);
    const auto whole = static_cast<long long>(b);
    double a = 1;
    while (a < 16 && whole % static_cast<long long>(2 * a) == 0) a *= 2;
    return a;
  };
  const double first = s.layout == GemmLayout::tn ? s.m : s.k;  // A's leading dimension
  return std::min(bytes_of(first), bytes_of(s.n));              // B's (k or n) and C's (n)
}

int alignment_class(double alignment_bytes) {
  if (alignment_bytes >= 16) return -1;
  if (alignment_bytes >= 8) return 3;
  if (alignment_bytes >= 4) return 2;
  if (alignment_bytes >= 2) return 1;
  return 0;
}

bool alignment_applies(const DeviceSpec& device) { return device.generation == Generation::hopper; }

const std::vector<std::array<int, 2>>& gemm_tiles(Generation g, Precision p) {
  // cuBLAS's CTA tiles for tensor-core GEMMs from Volta to Hopper (CUTLASS's default tile
  // sizes: 256x128, 128x256, 128x128, 256x64, 64x256, 128x64, 64x128, 64x64).
  static const std::vector<std::array<int, 2>> gpu{{256, 128}, {128, 256}, {128, 128}, {256, 64},
                                                   {64, 256},  {128, 64},  {64, 128},  {64, 64}};
  // A TPU's systolic matrix unit is 128 x 128 (Jouppi et al. 2020, 2023); XLA pads to it. So is
  // a Trainium NeuronCore's Tensor Engine (128 partitions: AWS Neuron's NKI architecture guides).
  static const std::vector<std::array<int, 2>> systolic{{128, 128}};
  // CUDA-core (SIMT) SGEMM/DGEMM kernels, and everything on GPUs without tensor cores, also come
  // in thin tiles (cuBLAS's sgemm 128x32 and 32x128, 64x32 and 32x64 kernels).
  static const std::vector<std::array<int, 2>> simt{{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64},
                                                    {64, 128},  {64, 64},   {128, 32},  {32, 128}, {64, 32},  {32, 64}};
  if (systolic_array_chip(g)) return systolic;
  const bool tensor_cores = g >= Generation::volta && (p == Precision::fp16 || p == Precision::bf16 || p == Precision::fp8 ||
                                                       (p == Precision::tf32 && g >= Generation::ampere));
  return tensor_cores ? gpu : simt;
}

namespace {

// Split-K factors: up to 256, so that a small output over a long k (a weight gradient over every
// token or pixel of the batch) can still fill the SMs, as cuBLAS and cuDNN do.
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
constexpr double kMinSplitDepth = 128;   // a split-K slice keeps at least this much of k
constexpr double kPartialSumBytes = 4;   // split-K partial sums are fp32

void check(const GemmShape& s, Precision precision, const DeviceSpec& device) {
  if (!(s.m >= 1) || !(s.n >= 1) || !(s.k >= 1) || !(s.batch >= 1) || !std::isfinite(s.m * s.n * s.k * s.batch)) {
    throw std::invalid_argument("gemm: m, n, k and batch must be finite and >= 1");
  }
  if (device.compute_units < 1) throw std::invalid_argument("gemm: device " + device.name + " has no compute-unit count");
  if (!device.supports(precision)) {
    throw std::invalid_argument("gemm: device " + device.name + " has no " + std::string(to_string(precision)) + " peak");
  }
}

// Everything gemm_mechanism's result depends on, by value (never a pointer: a freed device's
// address may be reused by another): a plan search times the same shapes on the same device for
// thousands of candidates, so results are memoized per thread, bit for bit what the loop gives.
struct MechanismKey {
  std::array<double, 13> values;
  bool operator==(const MechanismKey& o) const { return values == o.values; }
};
struct MechanismKeyHash {
  std::size_t operator()(const MechanismKey& k) const {
    std::size_t h = 0;
    for (double v : k.values) h = h * 1000003u ^ std::hash<double>{}(v);
    return h;
  }
};
constexpr std::size_t kMechanismCacheEntries = 1 << 16;  // then it starts over: bounded memory

GemmEstimate gemm_mechanism_uncached(const GemmShape& s, Precision precision, const DeviceSpec& device, const GemmParams& p);

}  // namespace

GemmEstimate gemm_mechanism(const GemmShape& s, Precision precision, const DeviceSpec& device, const GemmParams& p) {
  check(s, precision, device);
  if (!p.fitted()) throw std::invalid_argument("gemm: no fitted parameters for " + device.name);
  const MechanismKey key{{s.m, s.n, s.k, s.batch, static_cast<double>(precision), static_cast<double>(device.generation),
                          static_cast<double>(device.compute_units), device.peak(precision), device.memory_bandwidth * p.bandwidth_fraction,
                          p.peak_fraction, p.tile_overhead, p.k_overhead, static_cast<double>(device.busy_units)}};
  thread_local std::unordered_map<MechanismKey, GemmEstimate, MechanismKeyHash> cache;
  if (const auto hit = cache.find(key); hit != cache.end()) return hit->second;
  const GemmEstimate e = gemm_mechanism_uncached(s, precision, device, p);
  if (cache.size() >= kMechanismCacheEntries) cache.clear();
  cache.emplace(key, e);
  return e;
}

namespace {

GemmEstimate gemm_mechanism_uncached(const GemmShape& s, Precision precision, const DeviceSpec& device, const GemmParams& p) {
  const double units = device.compute_units;
  const double unit_peak = device.peak(precision) / units;
  // The heuristic plans for every SM; the waves run on those communication kernels leave.
  const double running_units = device.units_left();
  const double element = bytes_per_element(precision);
  const double bandwidth = device.memory_bandwidth * p.bandwidth_fraction;
  const double memory_s = (s.m * s.k + s.k * s.n + s.m * s.n) * element * s.batch / bandwidth;

  GemmEstimate best;
  double planned = std::numeric_limits<double>::infinity();  // the candidate's time on every SM
  for (const auto& [tm, tn] : gemm_tiles(device.generation, precision)) {
    const double reuse = double(tm) * tn / (tm + tn);
    const double efficiency = p.peak_fraction * reuse / (reuse + p.tile_overhead);
    const double output_tiles = std::ceil(s.m / tm) * std::ceil(s.n / tn) * s.batch;
    for (int split : kSplits) {
      const double depth = std::ceil(s.k / split);
      if (split > 1 && depth < kMinSplitDepth) break;
      const double tiles = output_tiles * split;
      const double waves = std::ceil(tiles / units);
      const double tile_s = (depth + p.k_overhead) * 2.0 * tm * tn / (unit_peak * efficiency);
      const double compute_s = waves * tile_s;
      const double partial_s = split > 1 ? s.m * s.n * s.batch * kPartialSumBytes * (split + 1) / bandwidth : 0.0;
      const double t = std::max(compute_s, memory_s) + partial_s;
      if (t < planned) {
        planned = t;
        const double running_waves = std::ceil(tiles / running_units);
        const double running_s = running_waves * tile_s;
        best.seconds = std::max(running_s, memory_s) + partial_s;
        best.tile_m = tm;
        best.tile_n = tn;
        best.split_k = split;
        best.tiles = tiles;
        best.waves = running_waves;
        best.memory_bound = memory_s > running_s;
      }
    }
  }
  best.mechanism_s = best.seconds;
  return best;
}

}  // namespace

GemmEstimate gemm_time(const GemmShape& s, Precision precision, const DeviceSpec& device, const GemmParams& p) {
  GemmEstimate e = gemm_mechanism(s, precision, device, p);
  const double log_correction = p.correction[0].at(s.m) + p.correction[1].at(s.n) + p.correction[2].at(s.k);
  const int aligned = alignment_class(s.alignment_bytes);
  const double slowdown = aligned < 0 || !alignment_applies(device) ? 0.0 : p.alignment_factor[static_cast<std::size_t>(aligned)];
  e.alignment_factor = slowdown > 0 ? slowdown : 1.0;
  e.seconds = e.mechanism_s * p.layout_factor[static_cast<std::size_t>(s.layout)] * std::exp(log_correction) *
                  e.alignment_factor +
              p.fixed_s;
  return e;
}

}  // namespace dlsim::models
