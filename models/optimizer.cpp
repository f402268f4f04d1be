// Optimizer state and step traffic (see optimizer.hpp). Per parameter, FP32 unless said:
// - SGD with momentum: state m (4 B); the step reads w, g, m and writes w, m (5 x 4 B).
// - Adam, AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019, the decay folded into the same
//   fused kernel): state m, v (8 B); reads w, g, m, v, writes w, m, v (7 x 4 B).
// - LAMB (You et al. 2020), as apex's FusedLAMB runs it: Adam's state (8 B); a first pass reads
//   w, g, m, v and writes m, v and the update, with per-tensor norms of w and the update; a
//   second applies the trust ratio (reads w and the update, writes w): 10 x 4 B.
// - Adafactor (Shazeer & Stern 2018) with its defaults (no first moment, factored second
//   moment): a matrix keeps a row and a column statistic, O(rows + columns), about nothing per
//   parameter; the step reads w, g, writes w, and passes over the update once more for its RMS
//   clipping (read and write): 5 x 4 B.
// - 8-bit Adam (Dettmers et al. 2022, bitsandbytes): m and v quantized block-wise to 8 bits,
//   2 B, plus an FP32 scale per 2,048-element block; reads w, g (4 B each), m, v (1 B each),
//   writes w (4 B), m, v (1 B each): 16 B.
#include "models/optimizer.hpp"

namespace dlsim::models {
namespace {

struct Entry {
  Optimizer optimizer;
  const char* name;
  double state_bytes;
  double step_bytes;
};

constexpr Entry kOptimizers[] = {
    {Optimizer::sgd_momentum, "sgd-momentum", 4.0, 20.0},
    {Optimizer::adam, "adam", 8.0, 28.0},
    {Optimizer::adamw, "adamw", 8.0, 28.0},
    {Optimizer::lamb, "lamb", 8.0, 40.0},
    {Optimizer::adafactor, "adafactor", 0.0, 20.0},
    {Optimizer::adam_8bit, "adam-8bit", 2.0 + 2 * 4.0 / 2048, 16.0},
};

const Entry& entry(Optimizer o) {
  for (const Entry& e : kOptimizers) {
    if (e.optimizer == o) return e;
  }
  return kOptimizers[0];
}

}  // namespace

std::string to_string(Optimizer o) { return entry(o).name; }

std::vector<std::string> optimizer_names() {
  std::vector<std::string> out;
  for (const Entry& e : kOptimizers) out.push_back(e.name);
  return out;
}

std::optional<Optimizer> optimizer_from_string(const std::string& name) {
  for (const Entry& e : kOptimizers) {
    if (name == e.name) return e.optimizer;
  }
  return std::nullopt;
}

double optimizer_state_bytes(Optimizer o) { return entry(o).state_bytes; }

double mixed_precision_step_bytes(Precision precision, Precision gradient_precision) {
  const bool mixed = precision == Precision::fp16 || precision == Precision::bf16 || precision == Precision::fp8;
  if (!mixed) return 0;
  constexpr double kFp32 = 4;
  const double gradients = bytes_per_element(gradient_precision);
  double bytes = kFp32;                                            // the master read by the copy
  if (gradients < kFp32) bytes += gradients + kFp32;               // gradients to FP32
  if (precision == Precision::fp16) bytes += 2 * kFp32;            // unscale and inf/NaN check
  return bytes;
}

double optimizer_bytes_per_parameter(Optimizer o, Precision precision) {
  const bool mixed = precision == Precision::fp16 || precision == Precision::bf16 || precision == Precision::fp8;
  return entry(o).step_bytes + (mixed ? bytes_per_element(storage_precision(precision)) : 0.0);
}

}  // namespace dlsim::models
