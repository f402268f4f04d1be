// Tests of the built-in catalog (devices, profiles, instance types) and of Precision.
// Datasheet figures are checked against /work/shared/reference/hardware-and-cloud.yaml.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/precision.hpp"

namespace dlsim::models {
namespace {

const std::vector<std::string> kDevices = {
    "K80",       "P100",     "V100-16GB", "V100-32GB", "T4",     "A10G",   "L4",      "A100-40GB",
    "A100-80GB", "H100-SXM", "H200",      "TPU-v2",    "TPU-v3", "TPU-v4", "TPU-v5e", "TPU-v5p"};

const Catalog& builtin() {
  static const Catalog catalog = Catalog::builtin();  // test fixture only, built once
  return catalog;
}

TEST(Precision, BytesPerElement) {
  EXPECT_EQ(bytes_per_element(Precision::fp64), 8);
  EXPECT_EQ(bytes_per_element(Precision::fp32), 4);
  EXPECT_EQ(bytes_per_element(Precision::tf32), 4);
  EXPECT_EQ(bytes_per_element(Precision::fp16), 2);
  EXPECT_EQ(bytes_per_element(Precision::bf16), 2);
  EXPECT_EQ(bytes_per_element(Precision::fp8), 1);
}

TEST(Precision, NamesRoundTripAndRejectUnknown) {
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16,
                      Precision::bf16, Precision::fp8}) {
    EXPECT_EQ(parse_precision(to_string(p)), p);
  }
  EXPECT_EQ(to_string(Precision::bf16), "bf16");
  EXPECT_FALSE(parse_precision("int8").has_value());
  EXPECT_FALSE(parse_precision("").has_value());
}

TEST(Catalog, HoldsEveryBuiltinDeviceWithAProfile) {
  EXPECT_EQ(builtin().devices().size(), kDevices.size());
  for (const std::string& name : kDevices) {
    const DeviceSpec* d = builtin().find_device(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_EQ(d->name, name);
    EXPECT_NE(builtin().find_profile(name), nullptr) << name;
  }
}

TEST(Catalog, EveryDeviceHasMemoryBandwidthAndAPeak) {
  for (const auto& [name, d] : builtin().devices()) {
    EXPECT_GT(d.memory_bytes, 0) << name;
    EXPECT_GT(d.memory_bandwidth, 0) << name;
    EXPECT_GT(d.intra_node_link_bandwidth, 0) << name;
    EXPECT_TRUE(std::any_of(d.peak_flops.begin(), d.peak_flops.end(), [](double f) {
      return f > 0;
    })) << name;
    EXPECT_FALSE(d.source.empty()) << name;
  }
}

TEST(Catalog, ProfilesAreFractionsAndUseTheMeasuredRatios) {
  for (const auto& [name, d] : builtin().devices()) {
    const DeviceProfile* p = builtin().find_profile(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_GT(p->matmul_efficiency, 0) << name;
    EXPECT_LE(p->matmul_efficiency, 1) << name;
    EXPECT_GT(p->memory_efficiency, 0) << name;
    EXPECT_LE(p->memory_efficiency, 1) << name;
  }
  // azure-a100-gemm-fp16, azure-hbm-a100 (Triad); azure-h100-gemm-fp8, azure-hbm-h100.
  EXPECT_NEAR(builtin().find_profile("A100-80GB")->matmul_efficiency, 256.5 / 312, 1e-12);
  EXPECT_NEAR(builtin().find_profile("A100-80GB")->memory_efficiency, 1.70 / 2.039, 1e-12);
  EXPECT_NEAR(builtin().find_profile("H100-SXM")->matmul_efficiency, 1382.2 / 1978.9, 1e-12);
  EXPECT_NEAR(builtin().find_profile("H200")->memory_efficiency, 4.15 / 4.8, 1e-12);
  // Unmeasured devices get the mean of the three measured ratios.
  const double mean = (256.5 / 312 + 1382.2 / 1978.9 + 1366.3 / 1978.9) / 3;
  EXPECT_NEAR(builtin().find_profile("V100-16GB")->matmul_efficiency, mean, 1e-12);
}

TEST(Catalog, DatasheetFigures) {
  const Catalog& c = builtin();
  EXPECT_DOUBLE_EQ(c.find_device("V100-16GB")->peak(Precision::fp16), 125e12);
  EXPECT_DOUBLE_EQ(c.find_device("V100-16GB")->intra_node_link_bandwidth, 150e9);  // 300 bidir
  EXPECT_DOUBLE_EQ(c.find_device("A100-80GB")->memory_bandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(c.find_device("A100-40GB")->peak(Precision::tf32), 156e12);
  EXPECT_DOUBLE_EQ(c.find_device("H100-SXM")->peak(Precision::fp8), 1978.9e12);
  EXPECT_DOUBLE_EQ(c.find_device("H200")->memory_bytes, 141e9);
  EXPECT_DOUBLE_EQ(c.find_device("K80")->memory_bytes, 12.0 * (1 << 30));  // one GK210, 12 GiB
  EXPECT_DOUBLE_EQ(c.find_device("K80")->memory_bandwidth, 240e9);
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v3")->memory_bytes, 32.0 * (1 << 30));  // source: GiB
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v5p")->peak(Precision::bf16), 459e12);
  EXPECT_DOUBLE_EQ(c.find_device("L4")->peak(Precision::fp8), 242.5e12);
}

TEST(Catalog, PrecisionSupportFollowsTheArchitectures) {
  const Catalog& c = builtin();
  for (const char* name : {"P100", "V100-16GB", "V100-32GB", "T4"}) {
    const DeviceSpec* d = c.find_device(name);
    EXPECT_TRUE(d->supports(Precision::fp16)) << name;
    EXPECT_FALSE(d->supports(Precision::bf16)) << name;
    EXPECT_FALSE(d->supports(Precision::tf32)) << name;
  }
  for (const char* name : {"A10G", "L4", "A100-40GB", "A100-80GB", "H100-SXM", "H200"}) {
    const DeviceSpec* d = c.find_device(name);
    for (Precision p : {Precision::tf32, Precision::fp16, Precision::bf16}) {
      EXPECT_TRUE(d->supports(p)) << name << " " << to_string(p);
    }
    const bool has_fp8 = std::string(name) == "L4" || std::string(name).starts_with("H");
    EXPECT_EQ(d->supports(Precision::fp8), has_fp8) << name;
  }
  EXPECT_FALSE(c.find_device("K80")->supports(Precision::fp16));
  for (const char* name : {"TPU-v2", "TPU-v3", "TPU-v4", "TPU-v5e", "TPU-v5p"}) {
    const DeviceSpec* d = c.find_device(name);
    EXPECT_TRUE(d->supports(Precision::bf16)) << name;
    EXPECT_FALSE(d->supports(Precision::fp32)) << name;
    EXPECT_FALSE(d->supports(Precision::fp16)) << name;
  }
}

TEST(Catalog, EveryInstanceIsCompleteAndNamesAKnownDevice) {
  EXPECT_EQ(builtin().instances().size(), 28u);
  for (const auto& [name, t] : builtin().instances()) {
    EXPECT_EQ(t.name, name);
    EXPECT_NE(builtin().find_device(t.device), nullptr) << name << " -> " << t.device;
    EXPECT_EQ(name.substr(0, name.find('/')), t.provider) << name;
    EXPECT_TRUE(t.provider == "aws" || t.provider == "gcp" || t.provider == "azure") << name;
    EXPECT_GT(t.accelerators_per_node, 0) << name;
    EXPECT_GT(t.network_bandwidth, 0) << name;
    EXPECT_GT(t.network_latency_s, 0) << name;
    EXPECT_GT(t.intra_node_bandwidth, 0) << name;
    EXPECT_GT(t.intra_node_latency_s, 0) << name;
    EXPECT_GT(t.price_per_hour, 0) << name;
    EXPECT_FALSE(t.price_date.empty()) << name;
    EXPECT_FALSE(t.source.empty()) << name;
  }
}

TEST(Catalog, SelectedInstanceFigures) {
  const InstanceType* p3 = builtin().find_instance("aws/p3.16xlarge");
  ASSERT_NE(p3, nullptr);
  EXPECT_EQ(p3->device, "V100-16GB");
  EXPECT_EQ(p3->accelerators_per_node, 8);
  EXPECT_DOUBLE_EQ(p3->price_per_hour, 24.48);
  EXPECT_DOUBLE_EQ(p3->network_bandwidth, 25e9 / 8);
  EXPECT_DOUBLE_EQ(p3->intra_node_bandwidth, 150e9);

  const InstanceType* p4d = builtin().find_instance("aws/p4d.24xlarge");
  ASSERT_NE(p4d, nullptr);
  EXPECT_EQ(p4d->device, "A100-40GB");
  EXPECT_DOUBLE_EQ(p4d->network_bandwidth, 50e9);  // 400 Gbps
  EXPECT_DOUBLE_EQ(p4d->intra_node_bandwidth, 300e9);
  EXPECT_LT(p4d->network_latency_s, builtin().find_instance("aws/p3.16xlarge")->network_latency_s);

  const InstanceType* p2 = builtin().find_instance("aws/p2.16xlarge");
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(p2->accelerators_per_node, 16);  // 8 K80 boards = 16 GK210 GPUs

  const InstanceType* tpu = builtin().find_instance("gcp/tpu-v3-8");
  ASSERT_NE(tpu, nullptr);
  EXPECT_EQ(tpu->device, "TPU-v3");
  EXPECT_EQ(tpu->accelerators_per_node, 4);
  EXPECT_DOUBLE_EQ(tpu->price_per_hour, 8.00);

  const InstanceType* h100 = builtin().find_instance("azure/Standard_ND96isr_H100_v5");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->network_bandwidth, 400e9);  // 3200 Gbps
  EXPECT_DOUBLE_EQ(h100->intra_node_bandwidth, 450e9);
}

TEST(Catalog, UnknownNamesGiveNullptr) {
  EXPECT_EQ(builtin().find_device("V100"), nullptr);
  EXPECT_EQ(builtin().find_device(""), nullptr);
  EXPECT_EQ(builtin().find_profile("B200"), nullptr);
  EXPECT_EQ(builtin().find_instance("p3.16xlarge"), nullptr);  // provider prefix required
  EXPECT_EQ(builtin().find_instance("aws/p9.48xlarge"), nullptr);
}

TEST(Catalog, NamesAreSorted) {
  const auto devices = builtin().device_names();
  const auto instances = builtin().instance_names();
  EXPECT_EQ(devices.size(), builtin().devices().size());
  EXPECT_EQ(instances.size(), builtin().instances().size());
  EXPECT_TRUE(std::is_sorted(devices.begin(), devices.end()));
  EXPECT_TRUE(std::is_sorted(instances.begin(), instances.end()));
}

TEST(Catalog, AddDeviceReplacesSpecAndProfile) {
  Catalog c = Catalog::builtin();
  const std::size_t before = c.devices().size();
  DeviceSpec v100 = *c.find_device("V100-16GB");
  v100.memory_bytes = 1;
  DeviceProfile calibrated;
  calibrated.matmul_efficiency = 0.5;
  c.add_device(v100, calibrated);
  EXPECT_EQ(c.devices().size(), before);
  EXPECT_EQ(c.find_device("V100-16GB")->memory_bytes, 1);
  EXPECT_EQ(c.find_profile("V100-16GB")->matmul_efficiency, 0.5);
  // The built-in catalog handed out earlier is untouched.
  EXPECT_DOUBLE_EQ(builtin().find_device("V100-16GB")->memory_bytes, 16e9);

  DeviceSpec fresh;
  fresh.name = "MyAccel";
  fresh.memory_bytes = 8e9;
  c.add_device(fresh);
  EXPECT_EQ(c.devices().size(), before + 1);
  EXPECT_EQ(c.find_profile("MyAccel")->matmul_efficiency, DeviceProfile{}.matmul_efficiency);
}

TEST(Catalog, AddInstanceReplaces) {
  Catalog c = Catalog::builtin();
  const std::size_t before = c.instances().size();
  InstanceType p3 = *c.find_instance("aws/p3.16xlarge");
  p3.price_per_hour = 7.5;  // e.g. a spot price
  c.add_instance(p3);
  EXPECT_EQ(c.instances().size(), before);
  EXPECT_DOUBLE_EQ(c.find_instance("aws/p3.16xlarge")->price_per_hour, 7.5);
}

}  // namespace
}  // namespace dlsim::models
