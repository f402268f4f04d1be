// Built-in cloud instance types (one node each). Prices and NIC figures come from the inst-*
// and tpu-price-ondemand records of /work/shared/reference/hardware-and-cloud.yaml; each row
// names its record and source. Prices are on-demand USD per node-hour (Linux) at the record's
// date; later price cuts the reference mentions are noted, not applied.
// intra_node_bandwidth is taken from the device's per-direction link figure (catalog_devices.cpp,
// records hw-*-link) so the two cannot drift apart; the one exception is trn1n.32xlarge, whose
// Trainium chips have twice the NeuronLink bandwidth of trn1.32xlarge's.
// Instance names in the reference that are NOT built in, for want of figures: GCP g2-standard-4
// (spot-gcp-g2-standard-4 gives only its prices, no accelerator count or network) and Azure ND
// H200 v5 (named by azure-h200-gemm-fp8 and azure-hbm-h200, no price or network).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/catalog.hpp"
#include "models/catalog_builtin.hpp"

namespace dlsim::models {
namespace {

constexpr double gbps(double gigabits_per_s) { return gigabits_per_s * 1e9 / 8; }  // -> bytes/s

// Latencies are not in the reference. They are STATED ASSUMPTIONS, not measurements:
constexpr double kEthernetLatency = 25e-6;  // TCP over ENA / VPC-class Ethernet, one way
constexpr double kRdmaLatency = 5e-6;       // EFA / InfiniBand-class fabric, one way
constexpr double kNvlinkLatency = 2e-6;     // NVLink / NVSwitch hop
// TPU ICI hop: "Each hop over an ICI link has some intrinsic overhead ... typically around 1us"
// (Austin et al., "How to Scale Your Model", jax-ml/scaling-book sharding.md): a stated figure.
constexpr double kIciLatency = 1e-6;
constexpr double kPcieLatency = 5e-6;       // GPU to GPU through PCIe
constexpr double kNeuronLinkLatency = 2e-6;  // Trainium chip to chip: not published, taken as an NVLink hop

// What a node's NICs are and how NCCL uses them (network/link_tech.hpp).
struct Nic {
  network::LinkTech tech;
  network::Transport transport;
};
// AWS: EFA where the record names it (p3dn "EFA capable", p4d/p4de/p5 "EFA"), with GPUDirect
// RDMA through NCCL's EFA plugin; ENA Ethernet elsewhere, NCCL's TCP socket transport.
constexpr Nic kEna{network::LinkTech::ethernet, network::Transport::tcp};
constexpr Nic kEfa{network::LinkTech::efa, network::Transport::rdma};
// Azure ND and DGX systems: InfiniBand EDR (100 Gb/s), HDR (200 Gb/s per HCA), NDR (400 Gb/s), RDMA.
constexpr Nic kIbEdr{network::LinkTech::ib_edr, network::Transport::rdma};
constexpr Nic kIbHdr{network::LinkTech::ib_hdr, network::Transport::rdma};
constexpr Nic kIbNdr{network::LinkTech::ib_ndr, network::Transport::rdma};
// GCP's A3: GPUDirect-TCPX moves data between NIC and GPU memory without host copies or
// CPU-bound streams, so it is taken as RDMA over Ethernet framing.
constexpr Nic kGpuDirectTcpx{network::LinkTech::ethernet, network::Transport::rdma};
// TPU hosts: Ethernet framing; their chips do not run NCCL, so NCCL's socket transport and its
// one-CPU-stream cap do not apply (the TPU runtime moves DCN traffic; no per-stream limit is
// published): rdma here means "no per-flow cap".
constexpr Nic kTpuDcn{network::LinkTech::ethernet, network::Transport::rdma};

struct Row {
  const char* name;    // "provider/type"
  const char* device;  // catalog device name
  int accelerators;
  double network_gbps;  // node total
  double network_latency_s;
  double intra_latency_s;
  double price_per_hour;  // USD
  const char* price_date;
  const char* source;
  Nic nic;
  int nics;   // NICs sharing network_gbps equally: the EFA/InfiniBand rails the node's record names, else 1
  // Host vCPUs (hardware threads), from the providers' instance-type pages (aws.amazon.com/ec2/
  // instance-types, as torchx's named_resources_aws.py copies them; GCP's accelerator-optimized
  // machine types; Azure's ND/NC series pages); 0 where not recorded.
  int vcpus;
};

// How the accelerators of a node connect, from its device and links: TPU hosts are chips on ICI
// (four on v2/v3/v4/v5p, eight on v5e/v6e); PCIe instances have no NVLink; 8-GPU P100/V100 nodes
// use the DGX-1 hybrid cube-mesh (dgx1v-topology), 4-GPU V100 nodes (p3.8xlarge) a fully
// connected NVLink quad, and A100/H100/B200 nodes NVSwitch (all-to-all), as do the 72 GPUs of a
// GB200 NVL72 rack. An MI300X platform connects every GPU to every other by its own Infinity
// Fabric link: a complete graph, whose links NCCL-style rings can all use at once (the complete
// directed graph on 8 vertices splits into 7 directed Hamiltonian rings), so it is taken as
// all-to-all at the GPU's total link bandwidth. A Trainium instance's 16 chips sit on a 4 x 4
// 2-D torus of NeuronLinks, four per chip (AWS Neuron's trn1-arch and trn2-arch pages); a 4 x 4
// torus splits into two edge-disjoint Hamiltonian cycles, so a ring over all 16 chips uses every
// link in both directions, and it is taken as all-to-all at the chip's total link bandwidth too:
// groups of 4 or 8 chips and all-to-all exchanges get more than the torus would give them.
network::NodeKind node_kind_of(const Row& r) {
  const std::string device = r.device;
  if (device.rfind("TPU", 0) == 0) return network::NodeKind::tpu_board;
  if (r.intra_latency_s == kPcieLatency) return network::NodeKind::pcie;
  const bool volta_or_pascal = device.rfind("V100", 0) == 0 || device.rfind("P100", 0) == 0;
  if (volta_or_pascal && r.accelerators == 8) return network::NodeKind::hybrid_cube_mesh;
  return network::NodeKind::nvswitch;
}

// The ICI generation of the built-in TPU devices (catalog_devices.cpp), none for the rest.
network::IciGeneration ici_of(const std::string& device) {
  using network::IciGeneration;
  if (device == "TPU-v2") return IciGeneration::v2;
  if (device == "TPU-v3") return IciGeneration::v3;
  if (device == "TPU-v4") return IciGeneration::v4;
  if (device == "TPU-v5e") return IciGeneration::v5e;
  if (device == "TPU-v5p") return IciGeneration::v5p;
  if (device == "TPU-v6e") return IciGeneration::v6e;
  return IciGeneration::none;
}

void add(Catalog& c, const Row& r) {
  const DeviceSpec* device = c.find_device(r.device);
  if (device == nullptr) {
    throw std::logic_error(std::string("built-in instance ") + r.name + " names unknown device " +
                           r.device);
  }
  InstanceType t;
  t.name = r.name;
  t.provider = t.name.substr(0, t.name.find('/'));
  t.device = r.device;
  t.accelerators_per_node = r.accelerators;
  t.network_bandwidth = gbps(r.network_gbps);
  t.network_latency_s = r.network_latency_s;
  t.intra_node_bandwidth = device->intra_node_link_bandwidth;
  t.intra_node_latency_s = r.intra_latency_s;
  t.node_kind = node_kind_of(r);
  t.ici = ici_of(t.device);
  t.nics = std::min(r.nics, r.accelerators);
  t.vcpus = r.vcpus;
  t.nic_tech = r.nic.tech;
  t.transport = r.nic.transport;
  t.price_per_hour = r.price_per_hour;
  t.price_date = r.price_date;
  t.source = r.source;
  c.add_instance(std::move(t));
}

// A spot price for a built-in instance (the row added first, its on-demand price unchanged).
void set_spot_price(Catalog& c, const char* name, double usd_per_hour) {
  InstanceType t = *c.find_instance(name);
  t.spot_price_per_hour = usd_per_hour;
  c.add_instance(std::move(t));
}

// K80 over PCIe Gen3 (hw-k80-link: 32 GB/s bidirectional -> 16 per direction).
void add_aws_p2(Catalog& c) {
  // inst-aws-p2.xlarge-price: network is "high (~1-10)" Gbps; CONSERVATIVE 1 Gbps, the low end.
  add(c, {"aws/p2.xlarge", "K80", 1, 1, kEthernetLatency, kPcieLatency, 0.90,
          "2017-2018 (us-east-1, Linux on-demand)",
          "inst-aws-p2.xlarge-price: gist.github.com/Geoyi/b84887fad3a36c1d0e4bc14144ba9af1 "
          "(AWS price table copy, 2018-03)", kEna, 1, 4});
  // inst-aws-p2.8xlarge-price, inst-aws-p2.16xlarge-price: same gist.
  add(c, {"aws/p2.8xlarge", "K80", 8, 10, kEthernetLatency, kPcieLatency, 7.20, "2018",
          "inst-aws-p2.8xlarge-price: AWS price table copy (gist, 2018-03)", kEna, 1, 32});
  add(c, {"aws/p2.16xlarge", "K80", 16, 25, kEthernetLatency, kPcieLatency, 14.40, "2018",
          "inst-aws-p2.16xlarge-price: AWS price table copy (gist, 2018-03)", kEna, 1, 64});
}

// V100 nodes use the DGX-1-style NVLink2 hybrid cube-mesh (hw-v100-sxm2-*-link, dgx1v-topology):
// 150 GB/s per direction is the per-GPU total, but the mesh is NOT all-to-all, so a pair of
// GPUs may share one 25 GB/s link or route through a peer. p3.2xlarge has no peer at all.
void add_aws_p3(Catalog& c) {
  // inst-aws-p3.2xlarge-price: network "up to 10" Gbps -> 10 (burst figure; flagged).
  add(c, {"aws/p3.2xlarge", "V100-16GB", 1, 10, kEthernetLatency, kNvlinkLatency, 3.06,
          "2017-2025 (us-east-1)", "inst-aws-p3.2xlarge-price: AWS EC2 on-demand pricing", kEna, 1, 8});
  add(c, {"aws/p3.8xlarge", "V100-16GB", 4, 10, kEthernetLatency, kNvlinkLatency, 12.24,
          "2017-2025", "inst-aws-p3.8xlarge-price: AWS EC2 on-demand pricing", kEna, 1, 32});
  add(c, {"aws/p3.16xlarge", "V100-16GB", 8, 25, kEthernetLatency, kNvlinkLatency, 24.48,
          "2017-2025", "inst-aws-p3.16xlarge-price: AWS EC2 on-demand pricing", kEna, 1, 64});
  // inst-aws-p3dn.24xlarge-price: 100 Gbps, EFA capable. Price recorded from memory (uncertain).
  add(c, {"aws/p3dn.24xlarge", "V100-32GB", 8, 100, kRdmaLatency, kNvlinkLatency, 31.212,
          "2018-2025", "inst-aws-p3dn.24xlarge-price: AWS pricing (uncertain - verify)", kEfa, 1, 96});
}

// NVSwitch nodes: all-to-all at the device link figure (hw-a100-*-link 600, hw-h100-sxm-link 900
// GB/s bidirectional). EFA fabrics.
void add_aws_p4_p5(Catalog& c) {
  // inst-aws-p4d.24xlarge-price: 4x100 Gbps EFA. Reduced ~33% in June 2025 to ~21.96 USD/h.
  add(c, {"aws/p4d.24xlarge", "A100-40GB", 8, 400, kRdmaLatency, kNvlinkLatency, 32.7726,
          "2020-11 to 2025-06 (us-east-1)",
          "inst-aws-p4d.24xlarge-price: AWS pricing; later cut per hyperscalers.json/usage.ai", kEfa, 4, 96});
  // inst-aws-p4de.24xlarge-price: ~27.45 USD/h after the June 2025 cut.
  add(c, {"aws/p4de.24xlarge", "A100-80GB", 8, 400, kRdmaLatency, kNvlinkLatency, 40.96,
          "2022-2025", "inst-aws-p4de.24xlarge-price: AWS pricing (secondary)", kEfa, 4, 96});
  // inst-aws-p5.48xlarge-price: 32x100 Gbps EFAv2. Cut up to 45% in June 2025 to ~55.04 USD/h.
  add(c, {"aws/p5.48xlarge", "H100-SXM", 8, 3200, kRdmaLatency, kNvlinkLatency, 98.32,
          "2023-07 launch (us-east-1)",
          "inst-aws-p5.48xlarge-price: nextplatform.com 2023-07-27 'H100 GPU Instance Pricing On "
          "AWS'; spot: SkyPilot catalog v7 (below)", kEfa, 32, 192});
  // NOT IN THE REFERENCE: p5e.48xlarge, the p5 with 8 H200 (same 32x100 Gbps EFAv2, 192 vCPUs).
  // AWS sold it by Capacity Blocks, with no on-demand price at the time: its block rate was 43.26
  // USD per instance-hour against p5.48xlarge's 39.33 (aws.amazon.com/ec2/capacityblocks/pricing,
  // rates to 2025-01-01, US East). DERIVED: p5's on-demand price x that ratio, 108.14 USD/h, so
  // that the two compare on one basis (not a published price).
  add(c, {"aws/p5e.48xlarge", "H200", 8, 3200, kRdmaLatency, kNvlinkLatency, 98.32 * 43.26 / 39.33,
          "derived from 2024 Capacity Block rates (us-east)",
          "AWS Capacity Blocks pricing (p5e 43.26, p5 39.33 USD/h) x p5 on-demand; not in the reference file", kEfa, 32, 192});
  // NOT IN THE REFERENCE: p5en.48xlarge, 8 H200 on EFAv3 (3,200 Gbps per instance, AWS's P5en
  // announcement; 192 vCPUs): on-demand 84.80 USD/h in us-east-1, us-east-2 and us-west-2, spot
  // 24.2902 USD/h (one us-east-1 zone), from SkyPilot's machine-readable AWS catalog
  // (github.com/skypilot-org/skypilot-catalog, catalogs/v7/aws/vms.csv at 001367d2: an undated
  // snapshot, after P5en's launch in 2024-09 and before AWS's June 2025 cut of P5 prices, since the
  // same file still gives p5.48xlarge 98.32). The same file's p5.48xlarge spot price there: 30.326.
  add(c, {"aws/p5en.48xlarge", "H200", 8, 3200, kRdmaLatency, kNvlinkLatency, 84.80, "SkyPilot catalog v7 (2024-25, us-east-1)",
          "skypilot-org/skypilot-catalog catalogs/v7/aws/vms.csv @001367d2; not in the reference file", kEfa, 8, 192});
  // NOT IN THE REFERENCE: p6-b200.48xlarge, 8 B200 (180 GB each) on NVLink 5, 8 x 400 Gbps EFAv4,
  // 192 vCPUs (aws.amazon.com/ec2/instance-types/p6). 113.9328 USD/h on demand in us-east-1, as
  // AWS's public price list is copied by DoiT Compute (doit.com/compute/spot/us-east-1/
  // p6-b200.48xlarge) and Vantage (instances.vantage.sh), 2025-26: a price of after AWS's June 2025
  // cut of P4/P5 prices (the same lists give p5.48xlarge 55.04 and p5en.48xlarge 63.296, where
  // this catalog keeps their earlier 98.32 and 84.80), so compare it with those at its date.
  add(c, {"aws/p6-b200.48xlarge", "B200", 8, 3200, kRdmaLatency, kNvlinkLatency, 113.9328, "2025-26, after the June 2025 cuts (us-east-1)",
          "AWS on-demand price via doit.com/compute and instances.vantage.sh; not in the reference file", kEfa, 8, 192});
  set_spot_price(c, "aws/p5en.48xlarge", 24.2902);
  set_spot_price(c, "aws/p5.48xlarge", 30.326);
}

// PCIe nodes: T4 Gen3 (hw-t4-link 32 GB/s bidir), A10G and L4 Gen4 (hw-a10g-link, hw-l4-link
// 64 GB/s bidir). Ethernet (ENA) fabric.
void add_aws_g(Catalog& c) {
  // inst-aws-g4dn.xlarge-price: network "up to 25" Gbps -> 25 (burst figure; flagged).
  add(c, {"aws/g4dn.xlarge", "T4", 1, 25, kEthernetLatency, kPcieLatency, 0.526, "2019-2025",
          "inst-aws-g4dn.xlarge-price: AWS pricing", kEna, 1, 4});
  // g4dn.2xlarge: the same T4 with 8 vCPUs instead of 4 (the input-pipeline scenario compares them).
  add(c, {"aws/g4dn.2xlarge", "T4", 1, 25, kEthernetLatency, kPcieLatency, 0.752, "2019-2025",
          "AWS EC2 on-demand pricing, us-east-1 (not in the reference file)", kEna, 1, 8});
  add(c, {"aws/g4dn.12xlarge", "T4", 4, 50, kEthernetLatency, kPcieLatency, 3.912, "2019-2025",
          "inst-aws-g4dn.12xlarge-price: AWS pricing", kEna, 1, 48});
  add(c, {"aws/g4dn.metal", "T4", 8, 100, kEthernetLatency, kPcieLatency, 7.824, "2019-2025",
          "inst-aws-g4dn.metal-price: AWS pricing (uncertain - verify)", kEna, 1, 96});
  // inst-aws-g5.xlarge-price: network "up to 10" Gbps -> 10 (burst figure; flagged).
  add(c, {"aws/g5.xlarge", "A10G", 1, 10, kEthernetLatency, kPcieLatency, 1.006, "2021-2025",
          "inst-aws-g5.xlarge-price: huggingface.co/spaces/arcee-ai/Benchmarks (vantage.sh)", kEna, 1, 4});
  // g5.2xlarge: the same A10G with 8 vCPUs instead of 4 (AWS EC2 on-demand, us-east-1; not in the
  // reference file).
  add(c, {"aws/g5.2xlarge", "A10G", 1, 10, kEthernetLatency, kPcieLatency, 1.212, "2021-2025",
          "AWS EC2 on-demand pricing, us-east-1 (not in the reference file)", kEna, 1, 8});
  add(c, {"aws/g5.12xlarge", "A10G", 4, 40, kEthernetLatency, kPcieLatency, 5.672, "2021-2025",
          "inst-aws-g5.12xlarge-price: huggingface.co/spaces/arcee-ai/Benchmarks (vantage.sh)", kEna, 1, 48});
  add(c, {"aws/g5.48xlarge", "A10G", 8, 100, kEthernetLatency, kPcieLatency, 16.288, "2021-2025",
          "inst-aws-g5.48xlarge-price: huggingface.co/spaces/arcee-ai/Benchmarks (vantage.sh)", kEna, 1, 192});
  add(c, {"aws/g6.48xlarge", "L4", 8, 100, kEthernetLatency, kPcieLatency, 13.3504, "2024",
          "inst-aws-g6.48xlarge-price: AWS pricing (uncertain - verify)", kEna, 1, 192});
  // NOT IN THE REFERENCE: g6e (L40S over PCIe Gen4). g6e.xlarge: 1 L40S, 4 vCPUs, network "up to
  // 20" Gbps -> 20 (burst figure); on-demand 1.861 and spot 1.1027 USD/h, AWS us-east-1 (Modal,
  // "How much does it cost to run NVIDIA L40S GPUs in 2025?", 2025-08-12).
  add(c, {"aws/g6e.xlarge", "L40S", 1, 20, kEthernetLatency, kPcieLatency, 1.861, "2025-08 (us-east-1)",
          "AWS pricing via modal.com/blog/nvidia-l40s-price-article (2025-08); not in the reference file", kEna, 1, 4});
  // g6e.48xlarge: 8 L40S, 192 vCPUs, 400 Gbps with EFA (taken as 4 x 100 Gbps NICs, as p4d). Price from
  // memory of AWS's us-east-1 page (uncertain - verify); not in the reference file.
  add(c, {"aws/g6e.48xlarge", "L40S", 8, 400, kRdmaLatency, kPcieLatency, 30.13118, "2024-2025 (us-east-1)",
          "AWS EC2 on-demand pricing (from memory - uncertain, verify); not in the reference file", kEfa, 4, 192});
  set_spot_price(c, "aws/g6e.xlarge", 1.1027);
}

// GCP GPU prices: Cyclenerd google-cloud-pricing-cost-calculator pricing.yml (generated from
// the Cloud Billing SKU API), snapshot labelled 2026-07-30, us-central1.
void add_gcp_gpu(Catalog& c) {
  const char* date = "snapshot labelled 2026-07-30, us-central1";
  add(c, {"gcp/a2-highgpu-1g", "A100-40GB", 1, 24, kEthernetLatency, kNvlinkLatency, 3.673385, date,
          "inst-gcp-a2-highgpu-1g-price: Cyclenerd pricing.yml", kEna, 1, 12});
  add(c, {"gcp/a2-highgpu-8g", "A100-40GB", 8, 100, kEthernetLatency, kNvlinkLatency, 29.38708,
          date, "inst-gcp-a2-highgpu-8g-price: Cyclenerd pricing.yml", kEna, 1, 96});
  add(c, {"gcp/a2-ultragpu-8g", "A100-80GB", 8, 100, kEthernetLatency, kNvlinkLatency, 40.55038,
          date, "inst-gcp-a2-ultragpu-8g-price: Cyclenerd pricing.yml", kEna, 1, 96});
  // inst-gcp-a3-highgpu-8g-price: the record says "1000 (4x200 GPUDirect-TCPX + host NIC;
  // verify)". CONSERVATIVE 800 Gbps: the four GPUDirect NICs that carry collective traffic.
  add(c, {"gcp/a3-highgpu-8g", "H100-SXM", 8, 800, kRdmaLatency, kNvlinkLatency, 88.49, date,
          "inst-gcp-a3-highgpu-8g-price: Cyclenerd pricing.yml; network to verify", kGpuDirectTcpx, 4, 208});
  add(c, {"gcp/g2-standard-96", "L4", 8, 100, kEthernetLatency, kPcieLatency, 8.00333, date,
          "inst-gcp-g2-standard-96-price: Cyclenerd pricing.yml", kEna, 1, 96});
  // Spot prices of the same snapshot (pricing.yml hour_spot; records spot-gcp-*): 42.8-47.5% off.
  set_spot_price(c, "gcp/a2-highgpu-1g", 1.92802);
  set_spot_price(c, "gcp/a2-highgpu-8g", 15.42416);
  set_spot_price(c, "gcp/a2-ultragpu-8g", 22.0763704);
  set_spot_price(c, "gcp/a3-highgpu-8g", 50.6095408);
  set_spot_price(c, "gcp/g2-standard-96", 4.499264);
}

// Cloud TPU slices of one host each; a larger slice is several such nodes (e.g. v5e-256 = 32
// nodes of gcp/tpu-v5e-8, v4-32 = 4 nodes of gcp/tpu-v4-8) joined by ICI: a scenario with several
// TPU nodes gets the torus fabric of their generation by default (network/ici.hpp), and the host
// NICs (the data-centre network, DCN) carry only traffic between pods (fabric.pods).
// Names: v2, v3, v4 and v5p names count TensorCores, 2 per chip (hw-tpuv4-bf16 notes "v4-8 = 4
// chips", hw-tpuv5p-bf16 notes "v5p-12288 = 6144 chips"); v5e names count chips, 8 per host
// (hw-tpuv5e-*: "8 chips/host", "names count chips"); v6e names count chips too, 8 per host.
// Prices: tpu-price-ondemand (cloud.google.com/tpu/pricing, from memory - uncertain, verify),
// "circa 2023-2024", us-central: v2-8 4.50 and v3-8 8.00 USD per 4-chip device-hour; v4 3.22,
// v5e 1.2, v5p 4.2 USD per chip-hour, times the chips of the slice.
// Chips of a host talk over ICI (the device's per-chip ICI figure over its links, ici.hpp) at
// kIciLatency per hop. Host network (DCN) per host:
// - v5e: 2 x 100 Gbps NICs per 8-chip host (hw-tpuv5e-*, primary);
// - v5p: 50 Gbps per chip (cloud.google.com/tpu/docs/v5p, "Data center network (DCN) bandwidth
//   per chip"), 200 Gbps per 4-chip host;
// - v4: 200 Gbps per host: "DCN bandwidth is typically around 2.5e10 bytes / second per host"
//   (Austin et al., "How to Scale Your Model", tpus.md), the v5p figure too; not in the reference;
// - v2, v3: NOT IN THE REFERENCE: ASSUMED 100 Gbps per 4-chip host (the v5e per-chip share).
// One NIC per host except v5e's two.
void add_gcp_tpu(Catalog& c) {
  const char* date = "circa 2023-2024";
  add(c, {"gcp/tpu-v2-8", "TPU-v2", 4, 100, kEthernetLatency, kIciLatency, 4.50,
          date, "tpu-price-ondemand: cloud.google.com/tpu/pricing (uncertain); network assumed", kTpuDcn, 1, 0});
  add(c, {"gcp/tpu-v3-8", "TPU-v3", 4, 100, kEthernetLatency, kIciLatency, 8.00,
          date, "tpu-price-ondemand: cloud.google.com/tpu/pricing (uncertain); network assumed", kTpuDcn, 1, 0});
  // hw-tpuv4-bf16 notes: v4-8 = 4 chips. tpu-price-ondemand: 3.22 USD per chip-hour x 4.
  add(c, {"gcp/tpu-v4-8", "TPU-v4", 4, 200, kEthernetLatency, kIciLatency,
          4 * 3.22, date,
          "tpu-price-ondemand: cloud.google.com/tpu/pricing (uncertain), 3.22 USD/chip-h x 4; "
          "DCN: scaling book (2.5e10 B/s per host)", kTpuDcn, 1, 0});
  // hw-tpuv5e-*: 8 chips per host, 2x100 Gbps NICs per host (primary, cloud.google.com/tpu/docs/
  // v5e). tpu-price-ondemand: 1.2 USD per chip-hour x 8.
  add(c, {"gcp/tpu-v5e-8", "TPU-v5e", 8, 200, kEthernetLatency, kIciLatency,
          8 * 1.2, date,
          "hw-tpuv5e-*: cloud.google.com/tpu/docs/v5e (host, NICs); tpu-price-ondemand "
          "(uncertain), 1.2 USD/chip-h x 8", kTpuDcn, 2, 0});
  // hw-tpuv5p-bf16 notes: names count TensorCores, so v5p-8 = 4 chips. tpu-price-ondemand: 4.2
  // USD per chip-hour x 4.
  add(c, {"gcp/tpu-v5p-8", "TPU-v5p", 4, 4 * 50, kEthernetLatency, kIciLatency,
          4 * 4.2, date,
          "tpu-price-ondemand: cloud.google.com/tpu/pricing (uncertain), 4.2 USD/chip-h x 4; "
          "DCN: cloud.google.com/tpu/docs/v5p (50 Gbps per chip)", kTpuDcn, 1, 0});
  // NOT IN THE REFERENCE: v6e (Trillium), 8 chips per host (cloud.google.com/tpu/docs/v6e).
  // 2.70 USD per chip-hour on demand and 0.64833 spot in us-central1 (also us-east1, us-west1),
  // so 21.60 and 5.18666 for the 8-chip host: SkyPilot's GCP catalog (github.com/skypilot-org/
  // skypilot-catalog, catalogs/v7/gcp/vms.csv at 017e2502, undated snapshot). The v6e page gives no
  // host network figure: ASSUMED v5e's 2 x 100 Gbps per 8-chip host.
  add(c, {"gcp/tpu-v6e-8", "TPU-v6e", 8, 200, kEthernetLatency, kIciLatency, 8 * 2.70,
          "SkyPilot catalog v7 (2025, us-central1)",
          "skypilot-org/skypilot-catalog catalogs/v7/gcp/vms.csv @017e2502 (2.70 USD/chip-h x 8); "
          "cloud.google.com/tpu/docs/v6e (chips per host); network assumed as v5e", kTpuDcn, 2, 0});
  set_spot_price(c, "gcp/tpu-v6e-8", 8 * 0.64833);
}

// Azure ND: InfiniBand between nodes (the Ethernet front-end NIC is not counted).
// Prices recorded from memory (uncertain - verify); NIC figures for the A100 v4 and H100 v5
// from the MLPerf system descriptions (primary).
void add_azure(Catalog& c) {
  // inst-azure-standard_nd40rs_v2-price: 100 Gbps EDR InfiniBand; V100 hybrid cube-mesh.
  add(c, {"azure/Standard_ND40rs_v2", "V100-32GB", 8, 100, kRdmaLatency, kNvlinkLatency, 22.03,
          "circa 2020-2023 (East US)",
          "inst-azure-standard_nd40rs_v2-price: Azure pricing (uncertain - verify)", kIbEdr, 1, 40});
  // inst-azure-standard_nd96asr_v4-price: 8x200 Gb/s HDR InfiniBand.
  add(c, {"azure/Standard_ND96asr_v4", "A100-40GB", 8, 1600, kRdmaLatency, kNvlinkLatency, 27.20,
          "circa 2021-2023",
          "inst-azure-standard_nd96asr_v4-price: Azure pricing (uncertain - verify)", kIbHdr, 8, 96});
  // inst-azure-standard_nd96amsr_a100_v4-price: 8x200 Gb/s HDR IB (+40 GbE not counted).
  add(c, {"azure/Standard_ND96amsr_A100_v4", "A100-80GB", 8, 1600, kRdmaLatency, kNvlinkLatency,
          32.77, "circa 2022-2024",
          "inst-azure-standard_nd96amsr_a100_v4-price: MLPerf v2.0 Azure system json (network); "
          "Azure pricing (uncertain - verify)", kIbHdr, 8, 96});
  // inst-azure-standard_nd96isr_h100_v5-price: 8x400 Gb/s NDR IB (+80 GbE not counted).
  add(c, {"azure/Standard_ND96isr_H100_v5", "H100-SXM", 8, 3200, kRdmaLatency, kNvlinkLatency,
          98.32, "circa 2023-2024",
          "inst-azure-standard_nd96isr_h100_v5-price: MLPerf v3.0 Azure system json (network); "
          "Azure pricing (uncertain - verify)", kIbNdr, 8, 96});
}

// NVIDIA's DGX systems, as the papers that ran on them name them. Bought, not rented: no hourly
// price (give cluster.price to cost them). Compute fabric from NVIDIA's datasheets: DGX-1 (P100,
// V100) 4x 100 Gb/s EDR InfiniBand, hybrid cube-mesh NVLink; DGX-2 16 V100-32GB on NVSwitch,
// 8x 100 Gb/s EDR; DGX A100 8x 200 Gb/s HDR (ConnectX-6), 320 GB (A100-40GB) and 640 GB
// (A100-80GB) editions; DGX H100 and H200 8x 400 Gb/s NDR (ConnectX-7). SuperPOD-style fabrics
// are `network.fabric: {kind: rail-optimized}` over these nodes. Host CPUs from the same
// datasheets, as hardware threads: DGX-1 (P100, V100) 2 x 20-core Xeon E5-2698 v4 (80), DGX-2 2 x
// 24-core Xeon Platinum 8168 (96), DGX A100 2 x 64-core EPYC 7742 (256), DGX H100 and H200 2 x
// 56-core Xeon Platinum 8480C (224), DGX B200 2 x 56-core Xeon Platinum 8570 (224); the NVL72 rack's
// 36 Grace CPUs of 72 Arm cores each, one thread per core (2,592).
void add_nvidia_dgx(Catalog& c) {
  const char* purchase = "purchase only (no hourly price)";
  add(c, {"nvidia/dgx-1", "P100", 8, 400, kRdmaLatency, kNvlinkLatency, 0, purchase, "NVIDIA DGX-1 datasheet (P100)", kIbEdr, 4, 80});
  add(c, {"nvidia/dgx-1v", "V100-16GB", 8, 400, kRdmaLatency, kNvlinkLatency, 0, purchase, "NVIDIA DGX-1 with V100 datasheet", kIbEdr, 4, 80});
  add(c, {"nvidia/dgx-2", "V100-32GB", 16, 800, kRdmaLatency, kNvlinkLatency, 0, purchase, "NVIDIA DGX-2 datasheet", kIbEdr, 8, 96});
  add(c, {"nvidia/dgx-a100-320gb", "A100-40GB", 8, 1600, kRdmaLatency, kNvlinkLatency, 0, purchase,
          "NVIDIA DGX A100 datasheet (320 GB edition)", kIbHdr, 8, 256});
  add(c, {"nvidia/dgx-a100", "A100-80GB", 8, 1600, kRdmaLatency, kNvlinkLatency, 0, purchase,
          "NVIDIA DGX A100 datasheet (640 GB edition)", kIbHdr, 8, 256});
  add(c, {"nvidia/dgx-h100", "H100-SXM", 8, 3200, kRdmaLatency, kNvlinkLatency, 0, purchase, "NVIDIA DGX H100 datasheet", kIbNdr, 8, 224});
  add(c, {"nvidia/dgx-h200", "H200", 8, 3200, kRdmaLatency, kNvlinkLatency, 0, purchase, "NVIDIA DGX H200 datasheet", kIbNdr, 8, 224});
  // DGX B200: 8 B200 on NVLink 5 switches, 8 x 400 Gb/s ConnectX-7 (NVIDIA DGX B200 datasheet).
  add(c, {"nvidia/dgx-b200", "B200", 8, 3200, kRdmaLatency, kNvlinkLatency, 0, purchase, "NVIDIA DGX B200 datasheet", kIbNdr, 8, 224});
  // A GB200 NVL72 rack as one node: its 72 GPUs are one NVLink domain (18 compute trays of 4
  // GPUs on 9 NVLink switch trays), one 400 Gb/s ConnectX-7 per GPU to the scale-out fabric, as
  // Azure's ND GB200 v6 (4 x 400 Gb/s per 4-GPU VM, learn.microsoft.com) and the NVL72
  // reference design run it.
  add(c, {"nvidia/gb200-nvl72", "GB200", 72, 72 * 400, kRdmaLatency, kNvlinkLatency, 0, purchase,
          "NVIDIA GB200 NVL72 datasheet; NICs as Azure ND GB200 v6", kIbNdr, 72, 2592});
}

// AMD's 8-GPU MI300X platform (8 OAM modules on one baseboard, each GPU linked to every other by
// Infinity Fabric), with one 400 Gb/s InfiniBand NIC per GPU as Azure's ND MI300X v5 runs it
// (learn.microsoft.com ND MI300X v5 series). Bought, not rented here: no hourly price (the
// reference records none for the Azure VM). Its collectives run RCCL, which dlsim does not
// model (network_yaml.cpp: ideal phases at line rate).
void add_amd(Catalog& c) {
  add(c, {"amd/instinct-mi300x-platform", "MI300X", 8, 3200, kRdmaLatency, kNvlinkLatency, 0, "purchase only (no hourly price)",
          "AMD Instinct MI300X platform; NICs as Azure ND MI300X v5", kIbNdr, 8, 0});
}

// NOT IN THE REFERENCE: AWS's Trainium instances (devices in catalog_devices.cpp). Chips, vCPUs and
// network from AWS Neuron's trn1-arch and trn2-arch pages and AWS's instance listing as
// instances.vantage.sh copies it (github.com/tsaol/aws-gpu data/trn1_instances.js, 2025-12-21;
// trn1n_instances.js, 2026-01-21; trn2_instances.js, 2025-11-30); on-demand prices from the same
// copies: trn1.2xlarge 1.34375, trn1.32xlarge 21.50 (also usage.ai, "AWS Trainium vs GPU
// Instances", 2026-06), trn1n.32xlarge 24.78 USD/h in us-east-1; trn2.48xlarge 35.76 USD/h in
// us-east-2, the one region listed. NICs: trn1.32xlarge 8 x 100 Gbps EFA, trn1n.32xlarge 16 x 100
// (the listing); trn2.48xlarge 3.2 Tbps of EFAv3, ASSUMED 16 x 200 Gbps, one per chip.
// trn1.2xlarge: "up to 12.5" Gbps (burst figure) on ENA, no EFA.
void add_aws_trainium(Catalog& c) {
  add(c, {"aws/trn1.2xlarge", "Trainium", 1, 12.5, kEthernetLatency, kNeuronLinkLatency, 1.34375, "2025-12 (us-east-1)",
          "AWS on-demand price via instances.vantage.sh (tsaol/aws-gpu copy); not in the reference file", kEna, 1, 8});
  add(c, {"aws/trn1.32xlarge", "Trainium", 16, 800, kRdmaLatency, kNeuronLinkLatency, 21.50, "2025-12 (us-east-1)",
          "AWS on-demand price via instances.vantage.sh (tsaol/aws-gpu copy) and usage.ai; not in the reference file", kEfa, 8, 128});
  add(c, {"aws/trn1n.32xlarge", "Trainium", 16, 1600, kRdmaLatency, kNeuronLinkLatency, 24.78, "2026-01 (us-east-1)",
          "AWS on-demand price via instances.vantage.sh (tsaol/aws-gpu copy); not in the reference file", kEfa, 16, 128});
  add(c, {"aws/trn2.48xlarge", "Trainium2", 16, 3200, kRdmaLatency, kNeuronLinkLatency, 35.76, "2025-11 (us-east-2)",
          "AWS on-demand price via instances.vantage.sh (tsaol/aws-gpu copy); not in the reference file", kEfa, 16, 192});
  // trn1n doubles the chips' NeuronLink-v2 bandwidth: 768 GiB/s per chip, both directions.
  InstanceType trn1n = *c.find_instance("aws/trn1n.32xlarge");
  trn1n.intra_node_bandwidth = 768.0 * 1024 * 1024 * 1024 / 2;
  c.add_instance(std::move(trn1n));
}

}  // namespace

void add_builtin_instances(Catalog& catalog) {
  add_aws_p2(catalog);
  add_aws_p3(catalog);
  add_aws_p4_p5(catalog);
  add_aws_g(catalog);
  add_gcp_gpu(catalog);
  add_gcp_tpu(catalog);
  add_azure(catalog);
  add_nvidia_dgx(catalog);
  add_amd(catalog);
  add_aws_trainium(catalog);
}

}  // namespace dlsim::models
