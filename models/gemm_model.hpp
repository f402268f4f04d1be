// The time of one matrix multiplication on a GPU from its shape: the mechanism of a tiled
// kernel as cuBLAS runs it, with a few constants per device and precision fitted on measured
// kernels (calibration/kernel_fit.hpp). Device time only: the host's launch and framework
// overhead are added by the caller (host_overhead in kernel_profile.hpp).
//
// C[m x n] = A[m x k] B[k x n], `batch` independent products of that shape (strided batched).
// For each candidate CTA tile tm x tn and split-K factor s:
//   tiles     = ceil(m / tm) ceil(n / tn) s batch     tile quantization: the output is padded
//   waves     = ceil(tiles / units)                    wave quantization over the SMs
//   per tile  = (ceil(k / s) + k0) 2 tm tn / (peak / units x e(tile))
//               k0: the pipeline fill and epilogue of every tile, in steps of k (short-K penalty)
//   e(tile)   = e_max r / (r + c),  r = tm tn / (tm + tn)
//               a tile's reuse: operand bytes per FLOP fall as r grows, small tiles run slower
//   memory    = (m k + k n + m n) x bytes per element x batch / (bandwidth x b)
//               each operand read or written once: small-m GEMMs stream the weights
//   time      = max(waves x per tile, memory) + split-K's partial sums (m n s fp32 written, read)
// Split-K (s > 1) is a candidate only while each slice keeps >= 128 of k. The kernel is the
// candidate with the least time (an ideal heuristic). Two measured factors multiply it: one per
// operand layout (NN, NT, TN run different kernels), and a correction
// exp(f_m(log2 m) + f_n(log2 n) + f_k(log2 k)), each f piecewise linear: what the real
// heuristic and kernels do on average that the mechanism lacks. The mechanism gives the shape of
// the curve (steps at tile and wave boundaries, the memory-bound regime); the data set its level.
#pragma once
#include <array>
#include <vector>

#include "models/device_spec.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

// Row-major operand layouts (PyTorch's view): nt = A[m,k] B[n,k]^T (a linear layer's forward),
// nn = A[m,k] B[k,n] (its input gradient), tn = A[k,m]^T B[k,n] (its weight gradient).
enum class GemmLayout { nn, nt, tn };

struct GemmShape {
  double m = 1, n = 1, k = 1;
  double batch = 1;                  // independent products (batched GEMM), >= 1
  GemmLayout layout = GemmLayout::nt;
};

// A piecewise-linear function of log2(x), constant beyond its end nodes; empty = 0.
struct LogLinear {
  std::vector<double> nodes;         // log2 of the size, strictly increasing
  std::vector<double> values;        // natural-log correction at each node
  bool empty() const { return nodes.empty(); }
  double at(double x) const;         // x > 0
};

// Fitted constants of one device and precision (0 peak_fraction: not fitted).
struct GemmParams {
  double peak_fraction = 0;          // e_max: the best tile's fraction of the precision's peak
  double tile_overhead = 0;          // c, elements: how fast e falls for small tiles
  double k_overhead = 0;             // k0, steps of k per tile
  double bandwidth_fraction = 0;     // b: achieved fraction of the memory bandwidth
  double fixed_s = 0;                // device-side fixed time of one kernel, seconds
  std::array<double, 3> layout_factor{1, 1, 1};  // by GemmLayout
  std::array<LogLinear, 3> correction;           // f_m, f_n, f_k
  bool fitted() const { return peak_fraction > 0; }
};

// What the model decided, for `dlsim kernel` and tests.
struct GemmEstimate {
  double seconds = 0;
  int tile_m = 0, tile_n = 0, split_k = 1;
  double tiles = 0, waves = 0;
  bool memory_bound = false;
  double mechanism_s = 0;            // before the layout factor and the correction
};

// The candidate tiles (tm, tn) of the heuristic: cuBLAS's tensor-core CTA tiles for tensor-core
// precisions (Volta and later); these and thin SIMT tiles for CUDA-core GEMMs (FP32, FP64, and
// every precision before Volta); the 128 x 128 matrix unit on TPUs.
const std::vector<std::array<int, 2>>& gemm_tiles(Generation g, Precision p);

// The mechanism alone (no layout factor, no correction). Needs device.compute_units > 0 and a
// peak for `precision`; throws std::invalid_argument otherwise or for m, n, k, batch < 1.
GemmEstimate gemm_mechanism(const GemmShape& shape, Precision precision, const DeviceSpec& device,
                            const GemmParams& params);
// The full model: mechanism x layout factor x correction + fixed time.
GemmEstimate gemm_time(const GemmShape& shape, Precision precision, const DeviceSpec& device,
                       const GemmParams& params);

}  // namespace dlsim::models
