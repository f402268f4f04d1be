// Device profile files: what `dlsim calibrate` writes and scenarios reference (cluster.profile).
// A profile holds metadata (device, backend, driver and CUDA versions, date, dlsim version,
// host), the device peaks its efficiencies are fractions of, the measured efficiency curves and
// scalars, and the fit error per kernel family. Schema (plain numbers in SI units):
//
//   dlsim_profile: 2                                   (1: the same without the kernel model)
//   metadata: {device, backend: cpu|cuda|import, driver, runtime, date, dlsim_version, host, units}
//   device: {name, description, peak_flops: {fp32: FLOP/s, ...}, memory_bandwidth: B/s,
//            memory_bytes: B, [generation, compute_units, l2_bytes], source}
//   profile: {matmul_efficiency, memory_efficiency, kernel_launch_overhead_s,
//             matmul_curves: {fp32: {flops: [..], efficiency: [..]}, ...},
//             memory_curve: {bytes: [..], efficiency: [..]},
//             kernel_model: {...} (kernel_profile_yaml.hpp; needs device.compute_units), source}
//   held_out_errors: [{kernels, cases, median_abs, p90_abs, median_signed}, ...]   (a report)
//   fit_errors: {"gemm fp32": {cases, median_relative_error}, ...}
//   naive_gemm_flops: FLOP/s (our plain GEMM, the floor; 0 if not measured)
//
// Loading validates everything (unknown keys, sizes > 0 and increasing, efficiencies in (0, 1],
// no NaN) and reports file:line:column. Writing is atomic.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

#include "calibration/fit.hpp"
#include "calibration/kernel_fit.hpp"

namespace dlsim::experiment {

struct ProfileDocument {
  calibration::Calibration calibration;
  std::string dlsim_version;
  std::string host;
  std::vector<calibration::ErrorSummary> held_out;  // kernel model: held-out errors (a report)
};

std::string profile_to_yaml(const ProfileDocument& doc);
void write_profile(const std::string& path, const ProfileDocument& doc);
// `name` is the file name used in error messages.
ProfileDocument read_profile_text(const std::string& text, const std::string& name);
ProfileDocument read_profile(const std::string& path);

// Scenarios: `cluster.instance: local/cpu` is the machine a CPU profile was measured on (one
// device per node, built from the profile's measured DeviceSpec); it needs cluster.profile.
inline constexpr const char* kLocalCpuInstance = "local/cpu";
struct ClusterConfig;
class MapReader;
// Reads cluster.profile (a path relative to `base_dir`), if present, and applies it to `c`:
// measured on the instance's device -> its curves and measured peaks are used; on another device
// -> models::transfer_profile scales it by datasheet ratios (and the note says so); local/cpu ->
// the instance and device come from it. Sets c.profile_path and c.profile_note.
void apply_cluster_profile(MapReader& cluster, ClusterConfig& c, const std::string& base_dir);

}  // namespace dlsim::experiment
