// The kernel-level model of a device profile (models/kernel_profile.hpp) in profile files
// (profile_yaml.hpp), under `profile.kernel_model`:
//
//   kernel_model:
//     source: text                                   the tables it was fitted on
//     gemm:                                          per precision (fp16, bf16, fp32, ...)
//       fp16: {peak_fraction, tile_overhead, k_overhead, bandwidth_fraction, fixed_s,
//              layout_factor: {nn, nt, tn},
//              correction: {m: {nodes: [log2], values: [ln]}, n: {...}, k: {...}}}
//     memory:                                        per memory-kernel class (stream, rms_norm, ...)
//       rms_norm: {bytes: [...], seconds: [...]}
//     conv: {fp32.implicit_gemm.forward: factor, ...}   models::ConvParams::named()
//     host: {forward_kernel_s, backward_kernel_s}
//     sustained_tensor_rate: 0.875                   optional, (0, 1]: the tensor-core rate kept under
//                                                    continuous load (models/power_limit.hpp); 1 if absent
//     error_bands:                                   per family (gemm, memory, conv, attention)
//       gemm: {cases, p10, p50, p90, median_abs, p90_abs}
//
// Everything is validated on reading (unknown keys, ranges, increasing sizes) with
// file:line:column errors.
#pragma once
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/yaml_reader.hpp"
#include "models/kernel_profile.hpp"

namespace dlsim::experiment {

void emit_kernel_profile(YAML::Emitter& out, const models::KernelProfile& k);
models::KernelProfile read_kernel_profile(MapReader& parent, const std::string& key);

// A non-empty list of finite numbers in [min, max] ((0, max] when min is 0), strictly
// increasing when asked; errors located at the offending item.
std::vector<double> read_number_list(MapReader& r, const std::string& key, double min, double max, bool increasing);

}  // namespace dlsim::experiment
