// Element sizes and names of the numeric precisions (see precision.hpp).
#include "models/precision.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace dlsim::models {
namespace {

// One table drives both directions (name -> precision and back), so they cannot disagree.
constexpr std::array<std::pair<Precision, std::string_view>, 6> kNames{{
    {Precision::fp64, "fp64"},
    {Precision::fp32, "fp32"},
    {Precision::tf32, "tf32"},
    {Precision::fp16, "fp16"},
    {Precision::bf16, "bf16"},
    {Precision::fp8, "fp8"},
}};

}  // namespace

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp64:
      return 8;
    case Precision::fp32:
      return 4;
    case Precision::tf32:
      return 4;  // a tensor-core input format; stored in memory as fp32
    case Precision::fp16:
      return 2;
    case Precision::bf16:
      return 2;
    case Precision::fp8:
      return 1;
  }
  throw std::invalid_argument("bytes_per_element: invalid Precision value");
}

Precision storage_precision(Precision p) { return p == Precision::fp8 ? Precision::bf16 : p; }

std::string_view to_string(Precision p) {
  for (const auto& [precision, name] : kNames) {
    if (precision == p) return name;
  }
  throw std::invalid_argument("to_string: invalid Precision value");
}

std::optional<Precision> parse_precision(std::string_view text) {
  for (const auto& [precision, name] : kNames) {
    if (name == text) return precision;
  }
  return std::nullopt;
}

}  // namespace dlsim::models
