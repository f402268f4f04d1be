// Tests of the built-in catalog (devices, profiles, instance types) and of Precision.
// Datasheet figures are checked against /work/shared/reference/hardware-and-cloud.yaml.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/precision.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::models {
namespace {

const std::vector<std::string> kDevices = {
    "K80",       "P100",      "P100-PCIe", "V100-16GB", "V100-32GB", "T4",     "A10",    "A10G",    "L4",     "A40",
    "A100-40GB", "A100-80GB", "H100-SXM",  "H200",      "TPU-v2", "TPU-v3", "TPU-v4",  "TPU-v5e",
    "TPU-v5p",   "TPU-v6e",   "L40S",      "B200",      "GB200",  "MI300X", "Trainium", "Trainium2"};

// Every instance type of /work/shared/reference/hardware-and-cloud.yaml (inst-* records and the
// tpu-price-ondemand slices), with the reference's figures: device, accelerators per node, how
// they connect, NICs, node network (Gbps) and on-demand USD/h. Where the reference gives a range
// or nothing the catalog's stated choice is used (marked). Every one has a price in the
// reference, so none is listed as lacking one.
struct ExpectedInstance {
  const char* name;
  const char* device;
  int accelerators;
  network::NodeKind kind;
  int nics;
  double network_gbps;
  double price;
};
using NK = network::NodeKind;
const std::vector<ExpectedInstance> kInstances = {
    // inst-aws-p2.*: p2.xlarge network "~1-10" Gbps, catalog takes the low end.
    {"aws/p2.xlarge", "K80", 1, NK::pcie, 1, 1, 0.90},
    {"aws/p2.8xlarge", "K80", 8, NK::pcie, 1, 10, 7.20},
    {"aws/p2.16xlarge", "K80", 16, NK::pcie, 1, 25, 14.40},
    // inst-aws-p3*: p3.2xlarge "up to 10"; 8-GPU V100 nodes are hybrid cube-meshes
    // (dgx1v-topology).
    {"aws/p3.2xlarge", "V100-16GB", 1, NK::nvswitch, 1, 10, 3.06},
    {"aws/p3.8xlarge", "V100-16GB", 4, NK::nvswitch, 1, 10, 12.24},
    {"aws/p3.16xlarge", "V100-16GB", 8, NK::hybrid_cube_mesh, 1, 25, 24.48},
    {"aws/p3dn.24xlarge", "V100-32GB", 8, NK::hybrid_cube_mesh, 1, 100, 31.212},
    // inst-aws-p4d/p4de: 4x100 Gbps EFA; p5: 32x100 EFAv2, capped at one NIC per GPU (the
    // network builder allows at most accelerators NICs), same 3200 Gbps in total.
    {"aws/p4d.24xlarge", "A100-40GB", 8, NK::nvswitch, 4, 400, 32.7726},
    {"aws/p4de.24xlarge", "A100-80GB", 8, NK::nvswitch, 4, 400, 40.96},
    {"aws/p5.48xlarge", "H100-SXM", 8, NK::nvswitch, 8, 3200, 98.32},
    // Not in the reference: p5e (H200), priced as p5's on-demand x the ratio of their Capacity
    // Block rates (43.26 / 39.33).
    {"aws/p5e.48xlarge", "H200", 8, NK::nvswitch, 8, 3200, 98.32 * 43.26 / 39.33},
    // Not in the reference: p5en (H200, EFAv3), SkyPilot's AWS catalog v7 (us-east-1).
    {"aws/p5en.48xlarge", "H200", 8, NK::nvswitch, 8, 3200, 84.80},
    // Not in the reference: p6-b200 (B200, EFAv4), AWS's list price after the June 2025 cuts.
    {"aws/p6-b200.48xlarge", "B200", 8, NK::nvswitch, 8, 3200, 113.9328},
    // inst-aws-g4dn.*, g5.*, g6.48xlarge: PCIe. xlarge networks are "up to" figures.
    {"aws/g4dn.xlarge", "T4", 1, NK::pcie, 1, 25, 0.526},
    {"aws/g4dn.2xlarge", "T4", 1, NK::pcie, 1, 25, 0.752},
    {"aws/g4dn.12xlarge", "T4", 4, NK::pcie, 1, 50, 3.912},
    {"aws/g4dn.metal", "T4", 8, NK::pcie, 1, 100, 7.824},
    {"aws/g5.xlarge", "A10G", 1, NK::pcie, 1, 10, 1.006},
    {"aws/g5.2xlarge", "A10G", 1, NK::pcie, 1, 10, 1.212},
    {"aws/g5.12xlarge", "A10G", 4, NK::pcie, 1, 40, 5.672},
    {"aws/g5.48xlarge", "A10G", 8, NK::pcie, 1, 100, 16.288},
    {"aws/g6.48xlarge", "L4", 8, NK::pcie, 1, 100, 13.3504},
    // Not in the reference: g6e (L40S); g6e.xlarge "up to 20" Gbps, 48xlarge 400 Gbps EFA.
    {"aws/g6e.xlarge", "L40S", 1, NK::pcie, 1, 20, 1.861},
    {"aws/g6e.48xlarge", "L40S", 8, NK::pcie, 4, 400, 30.13118},
    // inst-gcp-*: a3 "1000 (4x200 GPUDirect-TCPX + host NIC)", catalog counts the four GPU NICs.
    {"gcp/a2-highgpu-1g", "A100-40GB", 1, NK::nvswitch, 1, 24, 3.673385},
    {"gcp/a2-highgpu-8g", "A100-40GB", 8, NK::nvswitch, 1, 100, 29.38708},
    {"gcp/a2-ultragpu-8g", "A100-80GB", 8, NK::nvswitch, 1, 100, 40.55038},
    {"gcp/a3-highgpu-8g", "H100-SXM", 8, NK::nvswitch, 4, 800, 88.49},
    {"gcp/g2-standard-96", "L4", 8, NK::pcie, 1, 100, 8.00333},
    // tpu-price-ondemand; chips per slice from hw-tpuv4/v5p notes (names count TensorCores) and
    // hw-tpuv5e (8 chips, 2x100 Gbps per host). Host network (DCN): v4 200 Gbps (scaling book,
    // 2.5e10 B/s per host), v5p 4 x 50 Gbps (cloud.google.com/tpu/docs/v5p); v2/v3 not in the
    // reference, assumed 100 Gbps (v5e per-chip share x 4).
    {"gcp/tpu-v2-8", "TPU-v2", 4, NK::tpu_board, 1, 100, 4.50},
    {"gcp/tpu-v3-8", "TPU-v3", 4, NK::tpu_board, 1, 100, 8.00},
    {"gcp/tpu-v4-8", "TPU-v4", 4, NK::tpu_board, 1, 200, 4 * 3.22},
    {"gcp/tpu-v5e-8", "TPU-v5e", 8, NK::tpu_board, 2, 200, 8 * 1.2},
    {"gcp/tpu-v5p-8", "TPU-v5p", 4, NK::tpu_board, 1, 200, 4 * 4.2},
    // Not in the reference: v6e, 2.70 USD per chip-hour (SkyPilot's GCP catalog v7, us-central1);
    // host network assumed as v5e's.
    {"gcp/tpu-v6e-8", "TPU-v6e", 8, NK::tpu_board, 2, 200, 8 * 2.70},
    // inst-azure-*: InfiniBand HCAs (Ethernet front-end NICs not counted).
    {"azure/Standard_ND40rs_v2", "V100-32GB", 8, NK::hybrid_cube_mesh, 1, 100, 22.03},
    {"azure/Standard_ND96asr_v4", "A100-40GB", 8, NK::nvswitch, 8, 1600, 27.20},
    {"azure/Standard_ND96amsr_A100_v4", "A100-80GB", 8, NK::nvswitch, 8, 1600, 32.77},
    {"azure/Standard_ND96isr_H100_v5", "H100-SXM", 8, NK::nvswitch, 8, 3200, 98.32},
    // NVIDIA DGX datasheets: compute HCAs; bought, not rented (no hourly price).
    {"nvidia/dgx-1", "P100", 8, NK::hybrid_cube_mesh, 4, 400, 0},
    {"nvidia/dgx-1v", "V100-16GB", 8, NK::hybrid_cube_mesh, 4, 400, 0},
    {"nvidia/dgx-2", "V100-32GB", 16, NK::nvswitch, 8, 800, 0},
    {"nvidia/dgx-a100-320gb", "A100-40GB", 8, NK::nvswitch, 8, 1600, 0},
    {"nvidia/dgx-a100", "A100-80GB", 8, NK::nvswitch, 8, 1600, 0},
    {"nvidia/dgx-h100", "H100-SXM", 8, NK::nvswitch, 8, 3200, 0},
    {"nvidia/dgx-h200", "H200", 8, NK::nvswitch, 8, 3200, 0},
    // Not in the reference: DGX B200 (8 x 400 Gb/s), a GB200 NVL72 rack as one NVLink node (a
    // 400 Gb/s NIC per GPU), AMD's 8-GPU MI300X platform (Infinity Fabric mesh, taken as
    // all-to-all; a 400 Gb/s NIC per GPU).
    {"nvidia/dgx-b200", "B200", 8, NK::nvswitch, 8, 3200, 0},
    {"nvidia/gb200-nvl72", "GB200", 72, NK::nvswitch, 72, 72 * 400, 0},
    {"amd/instinct-mi300x-platform", "MI300X", 8, NK::nvswitch, 8, 3200, 0},
    // Not in the reference: AWS's Trainium instances (16 chips on a NeuronLink torus, taken as
    // all-to-all); instances.vantage.sh's copy of AWS's listing.
    {"aws/trn1.2xlarge", "Trainium", 1, NK::nvswitch, 1, 12.5, 1.34375},
    {"aws/trn1.32xlarge", "Trainium", 16, NK::nvswitch, 8, 800, 21.50},
    {"aws/trn1n.32xlarge", "Trainium", 16, NK::nvswitch, 16, 1600, 24.78},
    {"aws/trn2.48xlarge", "Trainium2", 16, NK::nvswitch, 16, 3200, 35.76},
};

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
  // hw-a10-tf32 (62.5 dense), hw-a10-membw; PCIe Gen4 x16 per direction.
  EXPECT_DOUBLE_EQ(c.find_device("A10")->peak(Precision::tf32), 62.5e12);
  EXPECT_DOUBLE_EQ(c.find_device("A10")->memory_bandwidth, 600e9);
  EXPECT_DOUBLE_EQ(c.find_device("A10")->pcie_bandwidth, 31.5e9);
  // hw-tpuv4-bf16, hw-tpuv4-mem (GiB), hw-tpuv4-membw.
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v4")->peak(Precision::bf16), 275e12);
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v4")->memory_bytes, 32.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v4")->memory_bandwidth, 1200e9);
  // hw-tpuv5e-bf16, hw-tpuv5e-membw, ICI 1600 Gbps = 400 GB/s bidirectional -> 200 per direction.
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v5e")->peak(Precision::bf16), 197e12);
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v5e")->memory_bandwidth, 819e9);
  EXPECT_DOUBLE_EQ(c.find_device("TPU-v5e")->intra_node_link_bandwidth, 200e9);
  // Beyond the reference. HGX B200: 36 PF FP16 sparse over 8 GPUs -> 2.25 PF dense each; 1,440 GB
  // and 64 TB/s over 8; NVLink 5 1.8 TB/s bidirectional.
  EXPECT_DOUBLE_EQ(c.find_device("B200")->peak(Precision::bf16), 2250e12);
  EXPECT_DOUBLE_EQ(c.find_device("B200")->peak(Precision::fp8), 4500e12);
  EXPECT_DOUBLE_EQ(c.find_device("B200")->memory_bytes, 180e9);
  EXPECT_DOUBLE_EQ(c.find_device("B200")->memory_bandwidth, 8000e9);
  EXPECT_DOUBLE_EQ(c.find_device("B200")->intra_node_link_bandwidth, 900e9);
  EXPECT_EQ(c.find_device("B200")->generation, Generation::blackwell);
  // GB200 NVL72: 13.4 TB HBM3e over 72 GPUs; 360 PF FP16 sparse over 72 -> 2.5 PF dense.
  EXPECT_NEAR(c.find_device("GB200")->memory_bytes, 186.1e9, 0.1e9);
  EXPECT_DOUBLE_EQ(c.find_device("GB200")->peak(Precision::bf16), 2500e12);
  // L40S: 362.05 TF FP16 dense (733 sparse), 864 GB/s, PCIe Gen4 x16 to peers and host.
  EXPECT_DOUBLE_EQ(c.find_device("L40S")->peak(Precision::fp16), 362.05e12);
  EXPECT_DOUBLE_EQ(c.find_device("L40S")->memory_bandwidth, 864e9);
  EXPECT_DOUBLE_EQ(c.find_device("L40S")->pcie_bandwidth, 31.5e9);
  EXPECT_EQ(c.find_device("L40S")->generation, Generation::ada);
  // MI300X: 1,307.4 TF FP16 dense, 192 GB at 5.3 TB/s, 7 x 128 GB/s bidirectional Infinity Fabric.
  EXPECT_DOUBLE_EQ(c.find_device("MI300X")->peak(Precision::bf16), 1307.4e12);
  EXPECT_DOUBLE_EQ(c.find_device("MI300X")->memory_bytes, 192e9);
  EXPECT_DOUBLE_EQ(c.find_device("MI300X")->intra_node_link_bandwidth, 448e9);
  EXPECT_EQ(c.find_device("MI300X")->generation, Generation::cdna3);
  EXPECT_EQ(c.find_device("MI300X")->compute_units, 304);
  // AWS Neuron's architecture pages. Trainium: 190 TF FP16/BF16/TF32/cFP8, 47.5 FP32, no FP64; 32
  // GiB at 820 GiB/s; NeuronLink-v2 384 GiB/s per chip (both directions); two NeuronCores.
  const DeviceSpec* trn1 = c.find_device("Trainium");
  ASSERT_NE(trn1, nullptr);
  EXPECT_DOUBLE_EQ(trn1->peak(Precision::bf16), 190e12);
  EXPECT_DOUBLE_EQ(trn1->peak(Precision::fp8), trn1->peak(Precision::bf16));
  EXPECT_DOUBLE_EQ(trn1->peak(Precision::fp32), 47.5e12);
  EXPECT_FALSE(trn1->supports(Precision::fp64));
  EXPECT_DOUBLE_EQ(trn1->memory_bytes, 32.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(trn1->memory_bandwidth, 820.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(trn1->intra_node_link_bandwidth, 192.0 * (1 << 30));
  EXPECT_EQ(trn1->generation, Generation::trainium);
  EXPECT_EQ(trn1->compute_units, 2);
  // Trainium2: 667 TF BF16, 1,299 FP8; 96 GiB at 2.9 TB/s; 1.28 TB/s NeuronLink-v3; eight NeuronCores.
  const DeviceSpec* trn2 = c.find_device("Trainium2");
  ASSERT_NE(trn2, nullptr);
  EXPECT_DOUBLE_EQ(trn2->peak(Precision::bf16), 667e12);
  EXPECT_DOUBLE_EQ(trn2->peak(Precision::fp8), 1299e12);
  EXPECT_DOUBLE_EQ(trn2->memory_bandwidth, 2.9e12);
  EXPECT_DOUBLE_EQ(trn2->intra_node_link_bandwidth, 640e9);
  EXPECT_EQ(trn2->compute_units, 8);
}

// FP8 tensor rates exist in the reference for H100 (hw-h100-sxm-fp8), H200 (hw-h200-sxm-fp8) and
// L4 (hw-l4-fp8), and in the datasheets of the devices added beyond it (L40S, B200, GB200,
// MI300X, and Trainium's cFP8); every other device must report none.
TEST(Catalog, ExactlyTheFp8DevicesReportFp8) {
  const std::set<std::string> fp8 = {"H100-SXM", "H200", "L4", "L40S", "B200", "GB200", "MI300X", "Trainium", "Trainium2"};
  for (const auto& [name, d] : builtin().devices()) {
    EXPECT_EQ(d.supports(Precision::fp8), fp8.count(name) == 1) << name;
  }
  EXPECT_DOUBLE_EQ(builtin().find_device("H200")->peak(Precision::fp8), 1978.9e12);
  // FP64 where the reference gives it (record notes): tensor-core rates on A100/H100.
  EXPECT_DOUBLE_EQ(builtin().find_device("A100-40GB")->peak(Precision::fp64), 19.5e12);
  EXPECT_DOUBLE_EQ(builtin().find_device("H100-SXM")->peak(Precision::fp64), 67e12);
  EXPECT_DOUBLE_EQ(builtin().find_device("P100")->peak(Precision::fp64), 5.3e12);
}

TEST(Catalog, PrecisionSupportFollowsTheArchitectures) {
  const Catalog& c = builtin();
  for (const char* name : {"P100", "V100-16GB", "V100-32GB", "T4"}) {
    const DeviceSpec* d = c.find_device(name);
    EXPECT_TRUE(d->supports(Precision::fp16)) << name;
    EXPECT_FALSE(d->supports(Precision::bf16)) << name;
    EXPECT_FALSE(d->supports(Precision::tf32)) << name;
  }
  for (const char* name : {"A10", "A10G", "L4", "A100-40GB", "A100-80GB", "H100-SXM", "H200"}) {
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
  EXPECT_EQ(builtin().instances().size(), kInstances.size());
  for (const auto& [name, t] : builtin().instances()) {
    EXPECT_EQ(t.name, name);
    EXPECT_NE(builtin().find_device(t.device), nullptr) << name << " -> " << t.device;
    EXPECT_EQ(name.substr(0, name.find('/')), t.provider) << name;
    EXPECT_TRUE(t.provider == "aws" || t.provider == "gcp" || t.provider == "azure" || t.provider == "nvidia" ||
                t.provider == "amd")
        << name;
    EXPECT_GT(t.accelerators_per_node, 0) << name;
    EXPECT_GT(t.network_bandwidth, 0) << name;
    EXPECT_GT(t.network_latency_s, 0) << name;
    EXPECT_GT(t.intra_node_bandwidth, 0) << name;
    EXPECT_GT(t.intra_node_latency_s, 0) << name;
    const bool bought = t.provider == "nvidia" || t.provider == "amd";  // DGX, NVL72, MI300X platform
    EXPECT_TRUE(bought ? t.price_per_hour == 0 : t.price_per_hour > 0) << name;
    EXPECT_FALSE(t.price_date.empty()) << name;
    EXPECT_FALSE(t.source.empty()) << name;
  }
}

TEST(Catalog, EveryReferenceInstanceTypeIsBuiltInWithItsFigures) {
  for (const ExpectedInstance& e : kInstances) {
    const InstanceType* t = builtin().find_instance(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_EQ(t->device, e.device) << e.name;
    EXPECT_NE(builtin().find_device(t->device), nullptr) << e.name;
    EXPECT_EQ(t->accelerators_per_node, e.accelerators) << e.name;
    EXPECT_EQ(t->node_kind, e.kind) << e.name;
    EXPECT_EQ(t->nics, e.nics) << e.name;
    EXPECT_DOUBLE_EQ(t->network_bandwidth, e.network_gbps * 1e9 / 8) << e.name;
    EXPECT_DOUBLE_EQ(t->price_per_hour, e.price) << e.name;
    EXPECT_FALSE(t->price_date.empty()) << e.name;
  }
}

// The network builders wire a hybrid cube-mesh for exactly 8 GPUs; NICs are at most one per
// accelerator.
TEST(Catalog, NodeKindsAndNicsFitTheNodeBuilders) {
  for (const auto& [name, t] : builtin().instances()) {
    if (t.node_kind == network::NodeKind::hybrid_cube_mesh) {
      EXPECT_EQ(t.accelerators_per_node, 8) << name;
    }
    EXPECT_GE(t.nics, 1) << name;
    EXPECT_LE(t.nics, t.accelerators_per_node) << name;
    const bool tpu = t.device.rfind("TPU", 0) == 0;
    EXPECT_EQ(t.node_kind == network::NodeKind::tpu_board, tpu) << name;
  }
}

TEST(Catalog, TpuSlices) {
  // hw-tpuv4-bf16 notes: v4-8 = 4 chips; tpu-price-ondemand 3.22 USD per chip-hour.
  const InstanceType* v4 = builtin().find_instance("gcp/tpu-v4-8");
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(v4->accelerators_per_node, 4);
  EXPECT_NEAR(v4->price_per_hour, 12.88, 1e-9);
  EXPECT_DOUBLE_EQ(v4->intra_node_bandwidth,
                   builtin().find_device("TPU-v4")->intra_node_link_bandwidth);
  // hw-tpuv5e-*: 8 chips and 2x100 Gbps NICs per host; 1.2 USD per chip-hour.
  const InstanceType* v5e = builtin().find_instance("gcp/tpu-v5e-8");
  ASSERT_NE(v5e, nullptr);
  EXPECT_EQ(v5e->accelerators_per_node, 8);
  EXPECT_EQ(v5e->nics, 2);
  EXPECT_DOUBLE_EQ(v5e->network_bandwidth, 25e9);
  EXPECT_NEAR(v5e->price_per_hour, 9.60, 1e-9);
  EXPECT_DOUBLE_EQ(v5e->intra_node_bandwidth, 200e9);
  // hw-tpuv5p-bf16 notes: names count TensorCores -> v5p-8 = 4 chips; 4.2 USD per chip-hour.
  const InstanceType* v5p = builtin().find_instance("gcp/tpu-v5p-8");
  ASSERT_NE(v5p, nullptr);
  EXPECT_EQ(v5p->accelerators_per_node, 4);
  EXPECT_NEAR(v5p->price_per_hour, 16.80, 1e-9);
  for (const char* name :
       {"gcp/tpu-v2-8", "gcp/tpu-v3-8", "gcp/tpu-v4-8", "gcp/tpu-v5e-8", "gcp/tpu-v5p-8"}) {
    EXPECT_EQ(builtin().find_instance(name)->price_date, "circa 2023-2024") << name;
  }
}

// Spot prices of the instance types added from SkyPilot's catalogs (per instance-hour), and that
// they are below the on-demand price, as every spot price is.
TEST(Catalog, SpotPricesOfTheSkyPilotSnapshots) {
  const std::pair<const char*, double> spot[] = {
      {"aws/p5en.48xlarge", 24.2902}, {"aws/p5.48xlarge", 30.326}, {"gcp/tpu-v6e-8", 8 * 0.64833}};
  for (const auto& [name, price] : spot) {
    const InstanceType* t = builtin().find_instance(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_DOUBLE_EQ(t->spot_price_per_hour, price) << name;
    EXPECT_LT(t->spot_price_per_hour, t->price_per_hour) << name;
  }
  EXPECT_EQ(builtin().find_instance("gcp/tpu-v6e-8")->ici, network::IciGeneration::v6e);
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

  // Trainium: trn1n's chips have twice trn1's NeuronLink bandwidth (768 against 384 GiB/s per
  // chip); both are EFA nodes with 128 vCPUs, trn1.2xlarge an 8-vCPU ENA node.
  const InstanceType* trn1 = builtin().find_instance("aws/trn1.32xlarge");
  const InstanceType* trn1n = builtin().find_instance("aws/trn1n.32xlarge");
  ASSERT_NE(trn1, nullptr);
  ASSERT_NE(trn1n, nullptr);
  EXPECT_DOUBLE_EQ(trn1->intra_node_bandwidth, builtin().find_device("Trainium")->intra_node_link_bandwidth);
  EXPECT_DOUBLE_EQ(trn1n->intra_node_bandwidth, 2 * trn1->intra_node_bandwidth);
  EXPECT_EQ(trn1->nic_tech, network::LinkTech::efa);
  EXPECT_EQ(trn1->vcpus, 128);
  EXPECT_EQ(trn1n->vcpus, 128);
  EXPECT_EQ(builtin().find_instance("aws/trn1.2xlarge")->nic_tech, network::LinkTech::ethernet);
  EXPECT_EQ(builtin().find_instance("aws/trn1.2xlarge")->transport, network::Transport::tcp);
  EXPECT_EQ(builtin().find_instance("aws/trn2.48xlarge")->vcpus, 192);
}

TEST(Catalog, UnknownNamesGiveNullptr) {
  EXPECT_EQ(builtin().find_device("V100"), nullptr);
  EXPECT_EQ(builtin().find_device(""), nullptr);
  EXPECT_EQ(builtin().find_profile("B100"), nullptr);
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
