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
//
// Operand alignment: the fast kernels load and store 16 bytes at a time, and on Hopper they move
// tiles with the tensor memory accelerator, which needs every row of a matrix to start on a
// 16-byte boundary. When an operand's leading dimension (row length) times the element size is
// not a multiple of 16 bytes (GPT-2's vocabulary of 50,257 in FP16/BF16), cuBLAS falls back to
// kernels that load 1, 2 or 4 elements at a time (measured on an H200: 95-150 TFLOP/s at 2-byte
// alignment and 200-230 at 4-byte against 700-780 padded, calibration/measured/h200/). The
// model multiplies the time by a measured slowdown per alignment class (1, 2, 4, 8 bytes: the
// median of measured / predicted-as-aligned over misaligned kernels; a ratio, so that it carries
// over between profiles of one generation); a class without measurements has none. The leading
// dimensions are, row-major:
// nt: k (A and B) and n (C); nn: k (A) and n (B and C); tn: m (A) and n (B and C).
// alignment_bytes is set by whoever knows the operands are dense row-major tensors (measured
// tables, dlsim kernel); 16 (the default) means aligned. The slowdown is fitted and applied on
// Hopper and later only (alignment_applies): there the fast kernels move tiles with the TMA,
// which refuses unaligned rows, and the fallback is 3-7x slower. Earlier GPUs load with vector
// instructions that degrade gently: DeepBench's misaligned V100 GEMMs run 5-15% slower than the
// aligned fit predicts, and splitting them out of the fit made its held-out errors worse, so
// there they stay in the ordinary fit.
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
  double alignment_bytes = 16;       // of the leading dimensions (operand_alignment_bytes); >= 16: aligned
};

// The alignment in bytes (1, 2, 4, 8 or 16: the largest power of two up to 16 dividing them) of
// the leading dimensions of a dense row-major GEMM's operands (see above), for elements of
// `element_bytes`. A dimension that is not a whole number of elements (a width split unevenly
// over tensor-parallel ranks) counts as aligned to one element.
double operand_alignment_bytes(const GemmShape& shape, double element_bytes);
// The slowdown class of an alignment: 0 for 1 byte, 1 for 2, 2 for 4, 3 for 8; -1 when aligned (>= 16).
int alignment_class(double alignment_bytes);
// Whether operand alignment has a slowdown of its own on `device` (Hopper).
bool alignment_applies(const DeviceSpec& device);

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
  // Slowdown of the kernels cuBLAS has for operands aligned to 1, 2, 4 or 8 bytes
  // (alignment_class) against aligned ones; 0: not measured, none.
  std::array<double, 4> alignment_factor{0, 0, 0, 0};
  bool fitted() const { return peak_fraction > 0; }
};

// What the model decided, for `dlsim kernel` and tests.
struct GemmEstimate {
  double seconds = 0;
  int tile_m = 0, tile_n = 0, split_k = 1;
  double tiles = 0, waves = 0;
  bool memory_bound = false;
  double alignment_factor = 1;       // the slowdown the operands' alignment applied
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
// The full model: mechanism x layout factor x correction x alignment slowdown + fixed time.
GemmEstimate gemm_time(const GemmShape& shape, Precision precision, const DeviceSpec& device,
                       const GemmParams& params);

}  // namespace dlsim::models
