// The kernel model in profile files (experiment/kernel_profile_yaml.hpp) and the shipped
// profiles of the catalog (experiment/builtin_profiles.hpp).
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "experiment/builtin_profiles.hpp"
#include "experiment/config_error.hpp"
#include "experiment/profile_yaml.hpp"

namespace dlsim::experiment {
namespace {

using models::Precision;

ProfileDocument with_kernel_model() {
  ProfileDocument d;
  calibration::Calibration& c = d.calibration;
  c.info = {"A100", "import", "", "", 108};
  c.date = "2026-11-24";
  c.spec.name = "A100-80GB";
  c.spec.peak_flops[static_cast<int>(Precision::fp16)] = 312e12;
  c.spec.memory_bandwidth = 2.039e12;
  c.spec.generation = models::Generation::ampere;
  c.spec.compute_units = 108;
  c.spec.l2_bytes = 40 * 1048576.0;
  models::KernelProfile& k = c.profile.kernels;
  models::GemmParams& g = k.gemm[static_cast<int>(Precision::fp16)];
  g = {0.9, 12.5, 40.25, 0.75, 4e-6, {1.0, 0.97, 1.1}, {}};
  g.correction[0] = {{0, 2, 4}, {-0.1, 0.05, 0.0}};
  g.alignment_factor = {0, 5.25, 3.5, 0};
  k.memory.curves[static_cast<int>(models::MemoryKernel::rms_norm)] = {{16384, 1048576}, {4e-6, 6e-6}};
  k.conv.set("fp32.implicit_gemm.forward", 1.15);
  k.host.forward_kernel_s = 9e-6;
  k.bands[static_cast<int>(models::KernelFamilyKind::gemm)] = {1000, 0.9, 1.0, 1.12, 0.05, 0.14};
  k.source = "test tables";
  d.held_out = {{"gemm fp16, m >= 64", 900, 0.05, 0.14, 0.01}};
  d.dlsim_version = "0.1.0";
  return d;
}

TEST(KernelProfileYaml, RoundTripIsExact) {
  const ProfileDocument a = with_kernel_model();
  const ProfileDocument b = read_profile_text(profile_to_yaml(a), "k.yaml");
  const models::KernelProfile& k = b.calibration.profile.kernels;
  ASSERT_TRUE(k.present());
  const models::GemmParams& g = k.gemm[static_cast<int>(Precision::fp16)];
  EXPECT_EQ(g.peak_fraction, 0.9);
  EXPECT_EQ(g.k_overhead, 40.25);
  EXPECT_EQ(g.layout_factor[2], 1.1);
  EXPECT_EQ(g.correction[0].values, (std::vector<double>{-0.1, 0.05, 0.0}));
  EXPECT_TRUE(g.correction[1].empty());
  EXPECT_EQ(g.alignment_factor, (std::array<double, 4>{0, 5.25, 3.5, 0}));  // only the measured classes written
  EXPECT_EQ(k.memory.curves[static_cast<int>(models::MemoryKernel::rms_norm)].seconds, (std::vector<double>{4e-6, 6e-6}));
  EXPECT_EQ(k.conv.fp32.at(models::ConvAlgorithm::implicit_gemm, models::ConvPass::forward), 1.15);
  EXPECT_EQ(k.host.forward_kernel_s, 9e-6);
  EXPECT_EQ(k.band(models::KernelFamilyKind::gemm).p90, 1.12);
  EXPECT_EQ(b.calibration.spec.compute_units, 108);
  EXPECT_EQ(b.calibration.spec.generation, models::Generation::ampere);
  EXPECT_EQ(b.calibration.info.backend, "import");
  ASSERT_EQ(b.held_out.size(), 1u);
  EXPECT_EQ(b.held_out[0].p90_abs, 0.14);
}

void expect_error(const std::string& from, const std::string& to, const std::string& expected) {
  std::string text = profile_to_yaml(with_kernel_model());
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << "\n" << text;
  text.replace(at, from.size(), to);
  try {
    read_profile_text(text, "k.yaml");
    FAIL() << "no error for " << to;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(KernelProfileYaml, ValidationErrorsNameWhereAndWhy) {
  expect_error("peak_fraction: 0.90000000000000002", "peak_fraction: 1.5", "kernel_model.gemm.fp16.peak_fraction");
  expect_error("nodes: [0, 2, 4]", "nodes: [0, 4, 2]", "nodes[2]: sizes must increase strictly");
  expect_error("nodes: [0, 2, 4]", "nodes: [0, 2]", "has 3 values for 2 nodes");
  expect_error("seconds: [3.9999999999999998e-06, 6.0000000000000002e-06]", "seconds: [6e-06, 4e-06]", "must not decrease");
  expect_error("fp32.implicit_gemm.forward: 1.1499999999999999", "fp32.implicit_gemm.fastest: 1", "unknown key");
  expect_error("p10: 0.90000000000000002", "p10: 2", "p10 <= p50 <= p90");
  expect_error("compute_units: 108", "compute_unit: 108", "");
  expect_error("fp16:\n        peak_fraction", "fp17:\n        peak_fraction", "");
}

TEST(BuiltinProfiles, MeasuredDevicesAndTheirRelativesHaveKernelModels) {
  const models::Catalog catalog = builtin_catalog();
  for (const char* name : {"A100-80GB", "H100-SXM", "A40", "V100-16GB", "P100-PCIe", "A100-40GB", "H200", "V100-32GB",
                           "P100", "T4", "K80", "A10", "A10G", "L4"}) {
    const models::DeviceProfile* p = catalog.find_profile(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(p->kernels.present()) << name;
    EXPECT_FALSE(kernel_profile_origin(name).empty()) << name;
    EXPECT_GT(p->kernels.band(models::KernelFamilyKind::gemm).cases, 0) << name;
    EXPECT_TRUE(p->kernels.memory.fitted()) << name;  // V100 and P100 borrow the A100's curves
  }
  for (const char* name : {"TPU-v2", "TPU-v3", "TPU-v4", "TPU-v5e", "TPU-v5p"}) {
    EXPECT_FALSE(catalog.find_profile(name)->kernels.present()) << name;
    EXPECT_TRUE(kernel_profile_origin(name).empty()) << name;
  }
  // A relative keeps the fitted fractions and uses its own bandwidth for memory-bound kernels.
  const auto& a80 = catalog.find_profile("A100-80GB")->kernels;
  const auto& a40g = catalog.find_profile("A100-40GB")->kernels;
  EXPECT_EQ(a40g.gemm_for(Precision::fp16)->peak_fraction, a80.gemm_for(Precision::fp16)->peak_fraction);
  const auto* big80 = a80.memory.curve(models::MemoryKernel::stream);
  const auto* big40 = a40g.memory.curve(models::MemoryKernel::stream);
  EXPECT_GT(big40->at(1e9), big80->at(1e9) * 1.2);  // 1555 against 2039 GB/s
  EXPECT_NE(a40g.source.find("transferred from A100-80GB"), std::string::npos);
  EXPECT_EQ(embedded_profiles().size(), 6u);  // the five above and h200.yaml (dlsim's own H200 measurements)
  // The Hopper alignment slowdowns measured on the H200 reach the H100 (same generation) and from
  // it the H200's default (transferred) profile; Ampere has none.
  for (const char* name : {"H100-SXM", "H200"}) {
    const auto& k = catalog.find_profile(name)->kernels;
    EXPECT_GT(k.gemm_for(Precision::fp16)->alignment_factor[1], 2.0) << name;
  }
  EXPECT_NE(catalog.find_profile("H200")->kernels.source.find("transferred from H100-SXM"), std::string::npos);
  EXPECT_NE(catalog.find_profile("H100-SXM")->kernels.source.find("alignment slowdowns from H200"), std::string::npos);
  for (double f : a80.gemm_for(Precision::fp16)->alignment_factor) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace dlsim::experiment
