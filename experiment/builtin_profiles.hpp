// The catalog dlsim uses: the built-in devices and instances (models::Catalog::builtin()) with
// the shipped kernel-level profiles. Five devices have a profile fitted on measured kernels
// (calibration/profiles/, by `dlsim calibrate --import` on ../shared/reference/kernels):
// A100-80GB, H100-SXM and A40 (vidur's GEMM and element-wise tables), V100-16GB and P100-PCIe
// (DeepBench's GEMM and convolution tables). Their relatives get the nearest one transferred by
// datasheet ratios (models/profile_transfer.hpp): A100-40GB from A100-80GB, H200 from H100-SXM
// (the profile fitted on kernels dlsim measured on an H200, calibration/profiles/h200.yaml,
// predicts held-out training GEMMs measured there less well: 14.9% median error against 9.1%,
// 15% too fast, its kernels timed in short bursts on a cool GPU; it gives the Hopper alignment
// slowdowns),
// V100-32GB and T4 from V100-16GB, P100 and K80 from P100-PCIe, A10, A10G, L4 and L40S from A40,
// B200, GB200 and MI300X from H100-SXM (no kernel of theirs measured: the H100's fractions of peak,
// their own SMs, peaks and bandwidth; MI300X's libraries are AMD's, so its kernel times are the
// least certain of the catalog). TPUs keep the roofline: no TPU kernel was measured. What a table
// did not measure comes from the nearest device that measured it: V100 and P100 memory-bound
// kernels from the A100's curves (scaled by bandwidth), A100, H100 and A40 convolutions with the
// V100's constants, the H100's (and so the H200's) GEMM alignment slowdowns from the H200's profile
// (same generation).
#pragma once
#include <string>
#include <vector>

#include "models/catalog.hpp"

namespace dlsim::experiment {

struct EmbeddedProfile {
  const char* file;   // its name in calibration/profiles/
  const char* text;   // the YAML
};
// The shipped profiles, embedded at build time (embed_profiles.cmake).
const std::vector<EmbeddedProfile>& embedded_profiles();

// models::Catalog::builtin() with the kernel profiles above applied.
models::Catalog builtin_catalog();

// Which measured device each catalog device takes its kernel profile from (itself when
// measured); "" for devices on the roofline.
std::string kernel_profile_origin(const std::string& device);

}  // namespace dlsim::experiment
