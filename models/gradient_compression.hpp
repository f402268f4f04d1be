// Gradient compression for the data-parallel gradient reduction: what one gradient bucket
// becomes on the wire, the device kernels that compress and decompress it, and the memory the
// method keeps between iterations (error-feedback buffers). Each bucket's reduction is a list
// of phases (ReductionPhase) that the replay runs one after another on the rank's
// data-parallel stream: device kernels, then collectives over the data-parallel group, then
// kernels again.
//
// Methods, for a bucket of N gradient elements held at g bytes each, over p replicas:
// - none: one all-reduce of N g bytes.
// - fp16, bf16: a cast kernel (N g read, 2N written), an all-reduce of 2N bytes, a cast back
//   (free when the gradients are already held in 16 bits: then as none).
// - int8, one-bit: the compressed all-reduce of 1-bit Adam (Tang et al. 2021, sec. 4.2:
//   "gather-scatter"): each rank compresses its whole buffer, sends chunk j (N/p elements) to
//   rank j (an all-to-all), rank j decompresses the p chunks it received, averages them,
//   compresses the average and all-gathers it. A scale (4 bytes, FP32) travels with each chunk.
//   int8: 1 byte per element, max-abs scale per chunk, no error feedback. one-bit: the sign
//   (1 bit per element) and the chunk's scale ||c||_2 / sqrt(n), with error feedback on both
//   sides (Tang et al.: worker error N x 4 B, server error N/p x 4 B, FP32); the uncompressed
//   warm-up stage of 1-bit Adam (plain Adam for the first steps, freeze_step in DeepSpeed) is
//   not modelled: the rows are the compressed stage. one-bit reduces after backward, in the
//   optimizer step, as 1-bit Adam does (reduces_in_step).
// - top-k: Deep Gradient Compression (Lin et al. 2018): the residual accumulates the gradient
//   (error feedback, FP32), the k = ratio N largest magnitudes are selected (DGC samples 0.1-1%
//   to find the threshold: one read pass over the residual, then one compaction pass), and the
//   (value, 4-byte index) pairs are all-gathered: p k (g + 4) bytes gathered, which grows with
//   the world size; each rank scatter-adds the p k pairs into a dense buffer.
// - powersgd: PowerSGD (Vogels et al. 2019, Algorithm 1; PyTorch's powerSGD_hook): per weight
//   matrix M (m x n, a convolution's filters as out x in kh kw) with error feedback M += e:
//   P = M Q (GEMM m x r x n), all-reduce of all P of the bucket (one buffer), Gram-Schmidt
//   orthogonalisation of P (r passes over P), Q = M^T P (GEMM n x r x m), all-reduce of all Q,
//   M' = P Q^T (GEMM m x n x r), e = M - M'. Matrices with (m + n) r >= m n and vectors (biases,
//   norm scales) are all-reduced uncompressed, as the hook does. The error buffer holds N g bytes; P and Q (r (m + n) elements) persist
//   (Q warm-starts the next iteration).
// Kernel times use the kernel model: GEMMs by shape (gemm_model.hpp), streams by bytes
// (memory_kernel_model.hpp, the stream class); each kernel costs at least one host launch
// (kernel_profile.hpp HostOverhead), as the hooks issue them one by one. Without a kernel
// profile, the roofline's scalar efficiencies apply.
#pragma once
#include <string>
#include <vector>

#include "models/device.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"
#include "network/collectives.hpp"

namespace dlsim::models {

enum class CompressionMethod { none, fp16, bf16, int8, one_bit, top_k, powersgd };
std::string to_string(CompressionMethod m);  // "none", "fp16", "bf16", "int8", "one-bit", "top-k", "powersgd"

struct GradientCompression {
  CompressionMethod method = CompressionMethod::none;
  double ratio = 0.01;  // top-k: fraction of elements sent (DGC reaches 0.001)
  int rank = 4;         // powersgd: rank r (Vogels et al. use 1, 2, 4)
  bool operator==(const GradientCompression&) const = default;
};

// A weight matrix whose gradient a bucket holds (PowerSGD's view: rows x cols).
struct WeightMatrix {
  double rows = 0, cols = 0;
  bool operator==(const WeightMatrix&) const = default;
};

// The weight matrices of a layer as one rank holds it (`share`), as PowerSGD reshapes them:
// a linear or convolution layer's count products of out x in (in: depth, C kh kw for a
// convolution); an embedding's table as rows x width, the width being its output elements per
// sample over `positions` per sample (a BERT embedding's word, position and token-type tables
// as one table: the layer keeps their sum only); none for other layers.
std::vector<WeightMatrix> weight_matrices(const Layer& share, double positions);

// One step of a bucket's reduction on the data-parallel stream.
struct ReductionPhase {
  enum class Kind { device, wait, collective };
  Kind kind = Kind::device;
  double seconds = 0;                    // device: compression kernels; wait: a fixed time (parameter server)
  network::CollectiveKind collective = network::CollectiveKind::all_reduce;
  double bytes = 0;                      // collective: nccl-tests size over the data-parallel group
  double sent_bytes = 0;                 // wait: bytes a worker sends meanwhile (parameter-server push)
  bool node_local = false;               // collective: over each node's replicas instead
};

// The gradients of one bucket: elements, and the matrices among them (PowerSGD).
struct BucketGradients {
  double elements = 0;
  std::vector<WeightMatrix> matrices;    // their elements are part of `elements`
};

// The phases reducing `bucket` over `replicas` data-parallel ranks with `c`.
// gradient_precision: how the gradients are held.
std::vector<ReductionPhase> compressed_reduction(const BucketGradients& bucket, int replicas, const GradientCompression& c,
                                                 Precision gradient_precision, const DeviceSpec& device, const DeviceProfile& profile);

// Bytes one rank sends for `phases`' collectives over `replicas` ranks (nccl-tests' bus factors:
// 2(p-1)/p for all-reduce, (p-1)/p for reduce-scatter, all-gather and all-to-all), plus the
// wait phases' sent_bytes.
double wire_bytes(const std::vector<ReductionPhase>& phases, int replicas);

// Bytes a rank keeps for the method between iterations (error feedback, PowerSGD's P and Q) for
// `elements` gradient elements of which `matrices` are weight matrices.
double compression_memory_bytes(const GradientCompression& c, double elements, const std::vector<WeightMatrix>& matrices,
                                int replicas, Precision gradient_precision);

// Whether the method's reduction waits for the end of backward: 1-bit Adam compresses and
// reduces the momentum inside the optimizer step (DeepSpeed's OnebitAdam turns the engine's
// backward all-reduce off once compression starts), so nothing overlaps backward.
bool reduces_in_step(const GradientCompression& c);

// Throws std::invalid_argument ("plan.gradient_compression.<key>: why") for a bad configuration.
void validate_compression(const GradientCompression& c);

}  // namespace dlsim::models
