// The optimizers a training step can run, and what each costs: the state it keeps per
// parameter (memory_model.cpp) and the bytes its step reads and writes per parameter
// (training_replay.cpp times the step as a memory-bound kernel over them).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "models/precision.hpp"

namespace dlsim::models {

enum class Optimizer { sgd_momentum, adam, adamw, lamb, adafactor, adam_8bit };

// "sgd-momentum", "adam", "adamw", "lamb", "adafactor", "adam-8bit".
std::string to_string(Optimizer o);
std::vector<std::string> optimizer_names();
std::optional<Optimizer> optimizer_from_string(const std::string& name);

// Optimizer state per parameter, bytes, besides the FP32 master weights of mixed precision.
double optimizer_state_bytes(Optimizer o);

// Bytes the step reads and writes per parameter it updates (FP32 master weights, FP32
// gradients, its state), plus writing the low-precision copy under mixed precision (bf16 under
// fp8: Transformer Engine casts its FP8 weight copies in forward, fp8_recipe.hpp).
double optimizer_bytes_per_parameter(Optimizer o, Precision precision);

// The passes a mixed-precision step makes on the device besides the optimizer's own, bytes per
// parameter (0 without mixed precision), as Megatron-LM's mixed-precision optimizer runs them:
// 16-bit gradients (`gradient_precision`) copied into FP32 main gradients (read 2, write 4); under
// FP16 the loss scale taken out of them with an inf/NaN check (read and write 4); and the copy of
// the FP32 master weights to the model's reading the master (4; the write is in
// optimizer_bytes_per_parameter). BF16 and FP8 need no loss scaling. PyTorch AMP does alike:
// GradScaler unscales and checks the FP32 gradients, and autocast reads the FP32 weights to cast
// them where Megatron copies the master.
double mixed_precision_step_bytes(Precision precision, Precision gradient_precision);

}  // namespace dlsim::models
