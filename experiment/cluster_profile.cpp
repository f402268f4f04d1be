// cluster.profile in training scenarios (profile_yaml.hpp).
#include <filesystem>

#include "experiment/config_error.hpp"
#include "experiment/profile_yaml.hpp"
#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"
#include "models/power_limit.hpp"
#include "models/profile_transfer.hpp"

namespace dlsim::experiment {
namespace {

// The local CPU as one node of one device: no datasheet, everything from the profile.
void make_local_cpu(MapReader& r, ClusterConfig& c, const ProfileDocument& doc) {
  const calibration::Calibration& cal = doc.calibration;
  if (cal.info.backend != "cpu") {
    r.fail("profile", "instance local/cpu needs a CPU profile (dlsim calibrate --backend cpu); this one was measured by the " +
                          cal.info.backend + " backend on " + cal.info.name);
  }
  c.device = cal.spec;
  // One device per node: intra-node links are unused; the node's NIC is nominal (10 Gb/s, a
  // common server NIC) and only matters with several nodes.
  c.device.intra_node_link_bandwidth = cal.spec.memory_bandwidth;
  c.profile = cal.profile;
  c.instance.device = cal.spec.name;
  c.instance.network_bandwidth = 10e9 / 8;
  c.instance.network_latency_s = 25e-6;
  c.instance.intra_node_bandwidth = cal.spec.memory_bandwidth;
  c.instance.node_kind = network::NodeKind::pcie;
  c.instance.source = "the local machine (" + cal.info.name + "), from profile " + c.profile_path;
}

// A profile's kernels were timed in short bursts, as every calibration times them (dlsim's own
// and the shipped tables alike), so on a Hopper or Blackwell GPU, whose rate under continuous load
// is measured, a profile that states none (sustained_tensor_rate 1, the default) takes that rate,
// as the shipped profiles do (builtin_profiles.cpp, models/power_limit.hpp).
void apply_power_limit(ClusterConfig& c) { c.profile_note += models::adopt_power_limit(c.profile.kernels, c.device); }

}  // namespace

void apply_cluster_profile(MapReader& r, ClusterConfig& c, const std::string& base_dir) {
  const auto file = r.optional_text("profile");
  if (!file) {
    if (c.instance_name == kLocalCpuInstance) {
      r.fail_missing("profile", "instance local/cpu is built from a CPU profile: profile: path/to/profile.yaml "
                                "(written by dlsim calibrate --backend cpu)");
    }
    return;
  }
  const std::filesystem::path p = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file)
                                                                            : std::filesystem::path(base_dir) / *file;
  c.profile_path = p.lexically_normal().string();
  if (!std::filesystem::is_regular_file(p)) r.fail("profile", "cannot read profile file '" + c.profile_path + "' (missing or not a file)");
  const ProfileDocument doc = read_profile(c.profile_path);
  const calibration::Calibration& cal = doc.calibration;
  if (c.instance_name == kLocalCpuInstance) {
    make_local_cpu(r, c, doc);
  } else if (cal.spec.name == c.instance.device) {
    // Measured on this very device: its curves, fractions of the peaks it was measured against.
    c.profile = cal.profile;
    for (std::size_t i = 0; i < c.device.peak_flops.size(); ++i) {
      if (cal.spec.peak_flops[i] > 0) c.device.peak_flops[i] = cal.spec.peak_flops[i];
    }
    c.device.memory_bandwidth = cal.spec.memory_bandwidth;
  } else {
    // Measured on another device: scaled by datasheet ratios (models/profile_transfer.hpp).
    c.profile = models::transfer_profile(cal.profile, cal.spec, c.device);
    c.profile_note = "device profile " + c.profile_path + ": " + c.profile.source;  // "transferred from A to B by ..."
    apply_power_limit(c);
    return;
  }
  c.profile_note = "device profile " + c.profile_path + ": " + cal.profile.source;
  if (c.instance_name != kLocalCpuInstance) apply_power_limit(c);
}

}  // namespace dlsim::experiment
