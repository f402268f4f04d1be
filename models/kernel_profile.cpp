// KernelProfile lookups (kernel_profile.hpp).
#include "models/kernel_profile.hpp"

namespace dlsim::models {

std::string_view to_string(KernelFamilyKind f) {
  switch (f) {
    case KernelFamilyKind::gemm: return "gemm";
    case KernelFamilyKind::memory: return "memory";
    case KernelFamilyKind::conv: return "conv";
    case KernelFamilyKind::attention: return "attention";
    case KernelFamilyKind::count_: break;
  }
  return "?";
}

bool KernelProfile::present() const {
  for (const GemmParams& g : gemm) {
    if (g.fitted()) return true;
  }
  return false;
}

const GemmParams* KernelProfile::gemm_for(Precision p) const {
  const auto fitted = [&](Precision q) -> const GemmParams* {
    const GemmParams& g = gemm[static_cast<std::size_t>(q)];
    return g.fitted() ? &g : nullptr;
  };
  if (const GemmParams* g = fitted(p)) return g;
  const Precision twin = p == Precision::bf16 ? Precision::fp16 : p == Precision::fp16 ? Precision::bf16 : p;
  if (const GemmParams* g = fitted(twin)) return g;
  for (Precision q : {Precision::fp16, Precision::bf16, Precision::tf32, Precision::fp32, Precision::fp8, Precision::fp64}) {
    if (const GemmParams* g = fitted(q)) return g;
  }
  return nullptr;
}

}  // namespace dlsim::models
