// Which implementation of the FlashAttention algorithm a model runs (workload.attention), for
// the fused attention kernels of models/attention_model.hpp.
#pragma once
#include <optional>
#include <string_view>

namespace dlsim::models {

enum class FlashKernel {
  fa2,     // FlashAttention-2 (attention: flash), on Ampere, Ada, Hopper, Blackwell and MI300X
  triton,  // FlashAttention in Triton (attention: flash-triton; MPT/llm-foundry's attn_impl: triton)
  fa3,     // FlashAttention-3 (attention: flash3): Hopper only, its wgmma/TMA kernels
};

// The workload.attention choice that names it: "flash", "flash-triton", "flash3".
inline std::string_view attention_choice(FlashKernel k) {
  switch (k) {
    case FlashKernel::triton: return "flash-triton";
    case FlashKernel::fa3: return "flash3";
    case FlashKernel::fa2: break;
  }
  return "flash";
}

// The kernel a workload.attention choice names, or nullopt for "auto" and "unfused" (which name
// no kernel: the workload decides whether FlashAttention, then FA2, runs).
inline std::optional<FlashKernel> flash_kernel_named(std::string_view choice) {
  for (const FlashKernel k : {FlashKernel::fa2, FlashKernel::triton, FlashKernel::fa3}) {
    if (choice == attention_choice(k)) return k;
  }
  return std::nullopt;
}

}  // namespace dlsim::models
