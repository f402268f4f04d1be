// Gradient compression's phases, wire bytes and memory (see gradient_compression.hpp).
#include "models/gradient_compression.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/gemm_model.hpp"
#include "models/memory_kernel_model.hpp"
#include "models/roofline.hpp"

namespace dlsim::models {
namespace {

using network::CollectiveKind;

constexpr double kScaleBytes = 4;   // an FP32 scale per chunk
constexpr double kIndexBytes = 4;   // a top-k index (int32)
constexpr double kErrorBytes = 4;   // error-feedback buffers in FP32 (1-bit Adam, DGC)

// Device time of compression kernels, each at least one host launch.
class Kernels {
 public:
  Kernels(const DeviceSpec& device, const DeviceProfile& profile, Precision precision)
      : device_(device), profile_(profile), precision_(precision) {}

  // A memory-bound kernel moving `bytes` (the stream class: element-wise reads and writes).
  void stream(double bytes) {
    if (!(bytes > 0)) return;
    const double t = profile_.kernels.present()
                         ? memory_kernel_time(MemoryKernel::stream, bytes, profile_.kernels.memory, device_.memory_bandwidth,
                                              profile_.memory_efficiency)
                         : bytes / (device_.memory_bandwidth * profile_.memory_efficiency);
    add(t);
  }
  // C[m x n] = A[m x k] B[k x n].
  void gemm(double m, double n, double k, GemmLayout layout) {
    const GemmParams* params = profile_.kernels.present() ? profile_.kernels.gemm_for(precision_) : nullptr;
    const double t = params != nullptr ? gemm_time({m, n, k, 1, layout}, precision_, device_, *params).seconds
                                       : 2 * m * n * k / (device_.peak(precision_) * profile_.matmul_efficiency);
    add(t);
  }
  double seconds() const { return seconds_; }

 private:
  void add(double device_s) {
    const double launch = profile_.kernels.present() ? profile_.kernels.host.backward_kernel_s : profile_.kernel_launch_overhead_s;
    seconds_ += std::max(device_s, launch);
  }
  const DeviceSpec& device_;
  const DeviceProfile& profile_;
  Precision precision_;
  double seconds_ = 0;
};

void add_device(std::vector<ReductionPhase>& phases, const Kernels& k) {
  if (k.seconds() <= 0) return;
  ReductionPhase p;
  p.kind = ReductionPhase::Kind::device;
  p.seconds = k.seconds();
  phases.push_back(p);
}

void add_collective(std::vector<ReductionPhase>& phases, CollectiveKind kind, double bytes) {
  if (!(bytes > 0)) return;
  ReductionPhase p;
  p.kind = ReductionPhase::Kind::collective;
  p.collective = kind;
  p.bytes = bytes;
  phases.push_back(p);
}

// PowerSGD compresses a matrix only when P and Q are smaller than it (PyTorch's hook).
bool compressible(const WeightMatrix& m, int rank) {
  const double r = std::min({static_cast<double>(rank), m.rows, m.cols});
  return m.rows > 1 && m.cols > 1 && (m.rows + m.cols) * r < m.rows * m.cols;
}

// 1-bit Adam's compressed all-reduce (int8 or one-bit), Tang et al. 2021 sec. 4.2.
void gather_scatter(std::vector<ReductionPhase>& phases, double n, double p, double g, bool one_bit, const DeviceSpec& device,
                    const DeviceProfile& profile) {
  const double element = one_bit ? 1.0 / 8 : 1.0;
  const double chunk = n / p;
  Kernels encode(device, profile, Precision::fp32);
  if (one_bit) {
    encode.stream(n * (g + kErrorBytes + 4));            // c = grad + error; its norm per chunk (c kept in FP32)
    encode.stream(n * (4 + element + kErrorBytes));      // signs packed; error = c - scale sign(c)
  } else {
    encode.stream(n * g);                                // max-abs per chunk
    encode.stream(n * (g + element));                    // quantize
  }
  add_device(phases, encode);
  add_collective(phases, CollectiveKind::all_to_all, n * element + p * kScaleBytes);
  Kernels server(device, profile, Precision::fp32);
  server.stream(n * element + chunk * 4);                // decompress the p chunks received, average into FP32
  if (one_bit) {
    server.stream(chunk * (4 + kErrorBytes + 4));        // + server error, norm
    server.stream(chunk * (4 + element + kErrorBytes));  // signs, server error
  } else {
    server.stream(chunk * 4);                            // max-abs
    server.stream(chunk * (4 + element));                // quantize
  }
  add_device(phases, server);
  add_collective(phases, CollectiveKind::all_gather, n * element + p * kScaleBytes);
  Kernels decode(device, profile, Precision::fp32);
  decode.stream(n * element + n * g);                    // unpack into the gradient buffer
  add_device(phases, decode);
}

void top_k(std::vector<ReductionPhase>& phases, double n, double p, double g, double ratio, const DeviceSpec& device,
           const DeviceProfile& profile) {
  const double k = std::ceil(ratio * n);
  Kernels encode(device, profile, Precision::fp32);
  encode.stream(n * (g + 2 * kErrorBytes));              // residual += gradient
  encode.stream(n * kErrorBytes);                        // threshold from a sample, count above it (one read)
  encode.stream(n * kErrorBytes + k * (g + kIndexBytes));  // compact the (value, index) pairs
  encode.stream(k * kErrorBytes);                        // clear the sent entries of the residual
  add_device(phases, encode);
  add_collective(phases, CollectiveKind::all_gather, p * k * (g + kIndexBytes));
  Kernels decode(device, profile, Precision::fp32);
  decode.stream(n * g);                                  // zero the dense gradient
  decode.stream(p * k * (g + kIndexBytes) + 2 * p * k * g);  // scatter-add p k pairs (read-modify-write)
  add_device(phases, decode);
}

void power_sgd(std::vector<ReductionPhase>& phases, const BucketGradients& bucket, double g, int rank, Precision precision,
               const DeviceSpec& device, const DeviceProfile& profile) {
  double compressed = 0, p_elements = 0, q_elements = 0;
  Kernels first(device, profile, precision), middle(device, profile, precision), last(device, profile, precision);
  for (const WeightMatrix& m : bucket.matrices) {
    if (!compressible(m, rank)) continue;
    const double r = std::min({static_cast<double>(rank), m.rows, m.cols});
    compressed += m.rows * m.cols;
    p_elements += m.rows * r;
    q_elements += m.cols * r;
    first.stream(3 * m.rows * m.cols * g);               // M += error
    first.gemm(m.rows, r, m.cols, GemmLayout::nn);       // P = M Q
    for (int c = 0; c < static_cast<int>(r); ++c) middle.stream(2 * m.rows * r * g);  // Gram-Schmidt, column by column
    middle.gemm(m.cols, r, m.rows, GemmLayout::tn);      // Q = M^T P
    last.gemm(m.rows, m.cols, r, GemmLayout::nt);        // M' = P Q^T
    last.stream(3 * m.rows * m.cols * g);                // error = M - M'
  }
  add_collective(phases, CollectiveKind::all_reduce, (bucket.elements - compressed) * g);  // vectors, small matrices
  add_device(phases, first);
  add_collective(phases, CollectiveKind::all_reduce, p_elements * g);
  add_device(phases, middle);
  add_collective(phases, CollectiveKind::all_reduce, q_elements * g);
  add_device(phases, last);
}

}  // namespace

std::vector<WeightMatrix> weight_matrices(const Layer& share, double positions) {
  std::vector<WeightMatrix> out;
  if (!(share.parameters > 0)) return out;
  if (share.kind == LayerKind::embedding) {
    const double width = positions > 0 ? share.activation_elements / positions : 0;
    if (width >= 1 && share.parameters / width >= 1) out.push_back({std::floor(share.parameters / width), width});
    return out;
  }
  if (!is_matrix_layer(share.kind)) return out;
  const MatmulDims d = derive_matmul(share);
  if (!d.weight_gradient || d.batch_in_count) return out;
  for (int c = 0; c < static_cast<int>(d.count); ++c) out.push_back({d.cols, d.depth});
  return out;
}

std::string to_string(CompressionMethod m) {
  static constexpr const char* kNames[] = {"none", "fp16", "bf16", "int8", "one-bit", "top-k", "powersgd"};
  return kNames[static_cast<int>(m)];
}

std::vector<ReductionPhase> compressed_reduction(const BucketGradients& bucket, int replicas, const GradientCompression& c,
                                                 Precision gradient_precision, const DeviceSpec& device, const DeviceProfile& profile) {
  std::vector<ReductionPhase> phases;
  const double n = bucket.elements, g = bytes_per_element(gradient_precision), p = replicas;
  if (!(n > 0)) return phases;
  switch (c.method) {
    case CompressionMethod::fp16:
    case CompressionMethod::bf16:
      if (g > 2) {
        Kernels cast(device, profile, Precision::fp32);
        cast.stream(n * (g + 2));
        add_device(phases, cast);
        add_collective(phases, CollectiveKind::all_reduce, n * 2);
        add_device(phases, cast);
        return phases;
      }
      break;
    case CompressionMethod::int8: gather_scatter(phases, n, p, g, false, device, profile); return phases;
    case CompressionMethod::one_bit: gather_scatter(phases, n, p, g, true, device, profile); return phases;
    case CompressionMethod::top_k: top_k(phases, n, p, g, c.ratio, device, profile); return phases;
    case CompressionMethod::powersgd: power_sgd(phases, bucket, g, c.rank, gradient_precision, device, profile); return phases;
    case CompressionMethod::none: break;
  }
  add_collective(phases, CollectiveKind::all_reduce, n * g);
  return phases;
}

double wire_bytes(const std::vector<ReductionPhase>& phases, int replicas) {
  const double p = replicas;
  double total = 0;
  for (const ReductionPhase& ph : phases) {
    total += ph.sent_bytes;
    if (ph.kind != ReductionPhase::Kind::collective || ph.node_local || p <= 1) continue;
    const double factor = ph.collective == CollectiveKind::all_reduce ? 2 * (p - 1) / p : (p - 1) / p;
    total += ph.bytes * factor;
  }
  return total;
}

double compression_memory_bytes(const GradientCompression& c, double elements, const std::vector<WeightMatrix>& matrices,
                                int replicas, Precision gradient_precision) {
  const double g = bytes_per_element(gradient_precision);
  switch (c.method) {
    case CompressionMethod::one_bit: return elements * kErrorBytes * (1.0 + 1.0 / std::max(1, replicas));
    case CompressionMethod::top_k: return elements * kErrorBytes;
    case CompressionMethod::powersgd: {
      double pq = 0;
      for (const WeightMatrix& m : matrices) {
        if (compressible(m, c.rank)) pq += std::min({static_cast<double>(c.rank), m.rows, m.cols}) * (m.rows + m.cols);
      }
      return elements * g + pq * g;
    }
    default: return 0;
  }
}

bool reduces_in_step(const GradientCompression& c) { return c.method == CompressionMethod::one_bit; }

void validate_compression(const GradientCompression& c) {
  if (c.method == CompressionMethod::top_k && !(c.ratio > 0 && c.ratio <= 1)) {
    throw std::invalid_argument("plan.gradient_compression.ratio: " + std::to_string(c.ratio) + " is not a fraction in (0, 1]");
  }
  if (c.method == CompressionMethod::powersgd && c.rank < 1) {
    throw std::invalid_argument("plan.gradient_compression.rank: must be >= 1");
  }
}

}  // namespace dlsim::models
