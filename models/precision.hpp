// Numeric precisions a training step can run in, and their sizes in bytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlsim::models {

enum class Precision { fp64, fp32, tf32, fp16, bf16, fp8 };

// Bytes one element occupies in memory (tf32 is stored as fp32).
double bytes_per_element(Precision p);
// The precision weights and activations are kept in when a plan computes in `p`: p itself, except
// fp8, whose recipe (Transformer Engine's, fp8_recipe.hpp) runs only the linear layers' GEMMs in
// FP8 and keeps weights, activations and every other kernel in bf16.
Precision storage_precision(Precision p);
std::string_view to_string(Precision p);
// Parses "fp32", "tf32", "fp16", "bf16", "fp8", "fp64"; nullopt otherwise.
std::optional<Precision> parse_precision(std::string_view text);

}  // namespace dlsim::models
