// Profile files: a written profile reads back identically, and every validation error names
// file:line:column and why. Scenarios use a profile through cluster.profile.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/profile_yaml.hpp"
#include "models/power_limit.hpp"

namespace dlsim::experiment {
namespace {

using models::Precision;

ProfileDocument sample() {
  ProfileDocument d;
  calibration::Calibration& c = d.calibration;
  c.info = {"Test CPU 3000", "cpu", "", "", 4};
  c.date = "2026-11-22";
  c.spec.name = "local-cpu";
  c.spec.description = "Test CPU 3000";
  c.spec.peak_flops[static_cast<int>(Precision::fp32)] = 1.0 / 3.0 * 1e11;  // not exact in decimal
  c.spec.peak_flops[static_cast<int>(Precision::fp64)] = 1.5e10;
  c.spec.memory_bandwidth = 2e10;
  c.spec.memory_bytes = 64e9;
  c.spec.source = "measured";
  c.profile.matmul_efficiency = 0.9;
  c.profile.memory_efficiency = 0.7;
  c.profile.kernel_launch_overhead_s = 2.5e-9;
  c.profile.matmul_curve[static_cast<int>(Precision::fp32)] = {{8192, 65536, 2e9}, {0.1 / 3, 0.5, 0.9}};
  c.profile.memory_curve = {{4096, 1e8}, {0.2, 0.7}};
  c.profile.source = "measured on local-cpu";
  c.errors = {{"gemm fp32", 7, 0.05}, {"copy", 8, 0.3}};
  c.naive_gemm_flops = 4e9;
  d.dlsim_version = "0.1.0";
  d.host = "box";
  return d;
}

TEST(ProfileYaml, RoundTripIsExact) {
  const ProfileDocument a = sample();
  const ProfileDocument b = read_profile_text(profile_to_yaml(a), "p.yaml");
  EXPECT_EQ(b.calibration.info.name, "Test CPU 3000");
  EXPECT_EQ(b.calibration.info.units, 4);
  EXPECT_EQ(b.calibration.date, "2026-11-22");
  EXPECT_EQ(b.host, "box");
  EXPECT_EQ(b.calibration.spec.peak_flops, a.calibration.spec.peak_flops);  // 17 digits: bit-exact
  EXPECT_EQ(b.calibration.spec.memory_bandwidth, 2e10);
  const auto& ca = a.calibration.profile.matmul_curve[1];
  const auto& cb = b.calibration.profile.matmul_curve[1];
  EXPECT_EQ(cb.size, ca.size);
  EXPECT_EQ(cb.efficiency, ca.efficiency);
  EXPECT_TRUE(b.calibration.profile.matmul_curve[0].empty());  // no fp64 curve written
  EXPECT_EQ(b.calibration.profile.memory_curve.size, a.calibration.profile.memory_curve.size);
  EXPECT_EQ(b.calibration.profile.kernel_launch_overhead_s, 2.5e-9);
  ASSERT_EQ(b.calibration.errors.size(), 2u);
  EXPECT_EQ(b.calibration.errors[1].family, "copy");
  EXPECT_EQ(b.calibration.errors[1].median_relative_error, 0.3);
  EXPECT_EQ(b.calibration.naive_gemm_flops, 4e9);
}

// Replaces the first occurrence of `from` in the written sample and expects a ConfigError whose
// text contains `expected` (which includes its file:line:column).
void expect_error(const std::string& from, const std::string& to, const std::string& expected) {
  std::string text = profile_to_yaml(sample());
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    read_profile_text(text, "p.yaml");
    FAIL() << "no error for " << to;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(ProfileYaml, ValidationErrorsNameWhereAndWhy) {
  // Line numbers in the written sample: 1 dlsim_profile, 2 metadata + 8 keys (3-10), 11 device
  // (name, description, peak_flops with fp64 and fp32, memory_bandwidth, memory_bytes, source:
  // 12-19), 20 profile, 21-23 its three scalars, 24 matmul_curves, 25 fp32, 26 flops, 27
  // efficiency, whose first value starts at column 20 (after the 19 characters "      efficiency: [").
  const std::string text = profile_to_yaml(sample());
  ASSERT_NE(text.find("      flops: [8192, 65536, 2000000000]\n      efficiency: [0.033333333333333333, 0.5, 0.90000000000000002]"), std::string::npos) << text;
  expect_error("efficiency: [0.033333333333333333,", "efficiency: [.nan,", "profile.matmul_curves.fp32.efficiency[0]: must be a finite number");
  expect_error("efficiency: [0.033333333333333333, 0.5,", "efficiency: [0.033333333333333333, 1.5,", "efficiency[1]: value 1.5 is out of range");
  expect_error("flops: [8192, 65536,", "flops: [8192, 4096,", "flops[1]: sizes must increase strictly");
  expect_error("flops: [8192,", "flops: [0,", "flops[0]: value 0 is out of range");
  expect_error("flops: [8192, 65536, 2000000000]", "flops: [8192, 65536]", "has 3 values for 2 sizes");
  expect_error("flops: [8192,", "flops: [abc,", "'abc' is not a number");
  expect_error("  memory_bandwidth:", "  memory_bandwith: 1\n  memory_bandwidth:", "unknown key");
  expect_error("backend: cpu", "backend: tpu", "metadata.backend");
  expect_error("dlsim_profile: 2", "dlsim_profile: 3", "dlsim_profile");
  // A curve for a precision without a peak.
  expect_error("    fp32:\n      flops", "    fp16:\n      flops", "a curve for fp16 needs device.peak_flops.fp16");
  // Location: the .nan sits at line 27, column 20.
  expect_error("efficiency: [0.033333333333333333,", "efficiency: [.nan,", "p.yaml:27:20:");
}

TEST(ProfileYaml, WriteIsAtomicAndReadable) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "dlsim_profile_yaml";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "sub" / "p.yaml").string();
  write_profile(path, sample());
  EXPECT_EQ(read_profile(path).calibration.spec.memory_bandwidth, 2e10);
  EXPECT_THROW(read_profile((dir / "missing.yaml").string()), ConfigError);
}

TEST(ProfileYaml, ScenarioUsesTheProfile) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "dlsim_profile_scenario";
  std::filesystem::create_directories(dir);
  write_profile((dir / "cpu.yaml").string(), sample());
  const std::string cpu = "cluster: {instance: local/cpu, profile: cpu.yaml}\n"
                          "workload: {model: resnet50, precision: fp32, batch: {per_device: 2}, iterations: 3}\n";
  const Scenario s = load_scenario_text(cpu, "s.yaml", {}, dir.string());
  EXPECT_EQ(s.cluster.instance.device, "local-cpu");
  EXPECT_EQ(s.cluster.instance.accelerators_per_node, 1);
  EXPECT_EQ(s.cluster.device.peak(Precision::fp32), 1.0 / 3.0 * 1e11);
  EXPECT_EQ(s.cluster.profile.memory_curve.size.size(), 2u);
  EXPECT_NE(s.cluster.profile_note.find("measured on local-cpu"), std::string::npos);
  // local/cpu without a profile, a missing file, and a GPU instance with a CPU profile: errors.
  const auto error_of = [&](const std::string& text) {
    try {
      load_scenario_text(text, "s.yaml", {}, dir.string());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("cluster: {instance: local/cpu}\nworkload: {model: resnet50, batch: {per_device: 2}, iterations: 3}\n")
                .find("cluster.profile"), std::string::npos);
  EXPECT_NE(error_of("cluster: {instance: local/cpu, profile: nope.yaml}\nworkload: {model: resnet50, batch: {per_device: 2}, iterations: 3}\n")
                .find("cannot read profile file"), std::string::npos);
  // On another device the profile is transferred by datasheet ratios, and the note says so.
  const Scenario v100 = load_scenario_text("cluster: {instance: aws/p3.16xlarge, profile: cpu.yaml}\n"
                                           "workload: {model: resnet50, batch: {per_device: 2}, iterations: 3}\n", "s.yaml", {}, dir.string());
  EXPECT_NE(v100.cluster.profile_note.find("transferred from local-cpu to V100-16GB by datasheet ratios"), std::string::npos)
      << v100.cluster.profile_note;
  EXPECT_TRUE(v100.cluster.profile.calibrated());
  // fp16 on a CPU profile (fp32 and fp64 only): the usual precision error.
  EXPECT_NE(error_of("cluster: {instance: local/cpu, profile: cpu.yaml}\nworkload: {model: resnet50, precision: fp16, batch: {per_device: 2}, iterations: 3}\n")
                .find("no fp16 support"), std::string::npos);
}

// A GPU profile measured on a Hopper device (dlsim's own H200 calibration, timed in short bursts)
// takes the Hopper rate under continuous load unless it states its own, on a Blackwell device the
// Blackwell rate; elsewhere it keeps 1.
TEST(ProfileYaml, HopperProfilesTakeThePowerLimitedRateUnlessTheyStateOne) {
  const char* root = std::getenv("DLSIM_SOURCE_DIR");
  const std::string h200 = std::string(root ? root : ".") + "/calibration/profiles/h200.yaml";
  ASSERT_TRUE(std::filesystem::is_regular_file(h200)) << h200;
  const auto scenario = [](const std::string& instance, const std::string& profile) {
    return "cluster: {instance: " + instance + ", profile: " + profile + "}\n"
           "workload: {model: gpt2, batch: {per_device: 2}, iterations: 3}\n";
  };
  const Scenario on_h200 = load_scenario_text(scenario("aws/p5e.48xlarge", h200), "s.yaml", {}, ".");
  EXPECT_EQ(on_h200.cluster.profile.kernels.sustained_tensor_rate, models::kHopperSustainedTensorRate);
  EXPECT_NE(on_h200.cluster.profile_note.find("under continuous load"), std::string::npos) << on_h200.cluster.profile_note;
  const Scenario on_a100 = load_scenario_text(scenario("aws/p4d.24xlarge", h200), "s.yaml", {}, ".");
  EXPECT_EQ(on_a100.cluster.profile.kernels.sustained_tensor_rate, 1.0);
  const Scenario on_b200 = load_scenario_text(scenario("nvidia/dgx-b200", h200), "s.yaml", {}, ".");
  EXPECT_EQ(on_b200.cluster.profile.kernels.sustained_tensor_rate, models::kBlackwellSustainedTensorRate);
  EXPECT_NE(on_b200.cluster.profile_note.find("B200"), std::string::npos) << on_b200.cluster.profile_note;
  // A rate the profile states is written, read back and kept.
  ProfileDocument doc = read_profile(h200);
  EXPECT_EQ(doc.calibration.profile.kernels.sustained_tensor_rate, 1.0);  // absent from the file
  doc.calibration.profile.kernels.sustained_tensor_rate = 0.9;
  const auto dir = std::filesystem::path(::testing::TempDir()) / "dlsim_profile_power";
  std::filesystem::create_directories(dir);
  write_profile((dir / "h200-loaded.yaml").string(), doc);
  EXPECT_EQ(read_profile((dir / "h200-loaded.yaml").string()).calibration.profile.kernels.sustained_tensor_rate, 0.9);
  const Scenario stated = load_scenario_text(scenario("aws/p5e.48xlarge", "h200-loaded.yaml"), "s.yaml", {}, dir.string());
  EXPECT_EQ(stated.cluster.profile.kernels.sustained_tensor_rate, 0.9);
  // Out of (0, 1]: refused where it stands.
  std::string text = profile_to_yaml(doc);
  const std::size_t at = text.find("sustained_tensor_rate: 0.9");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 26, "sustained_tensor_rate: 1.5");
  try {
    read_profile_text(text, "bad.yaml");
    ADD_FAILURE() << "a rate above 1 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sustained_tensor_rate"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
