// Built-in accelerators: datasheet figures and default efficiency profiles.
// Every figure comes from /work/shared/reference/hardware-and-cloud.yaml; the comment next to an
// entry names the record ids (hw-*, azure-*) and their source. Units are SI: FLOP/s, bytes
// (GB = 1e9, GiB = 2^30, as the source states), bytes/s. peak_flops is dense (no sparsity) and
// indexed by Precision {fp64, fp32, tf32, fp16, bf16, fp8}; 0 = not supported / not published.
// intra_node_link_bandwidth is per direction: the reference gives NVLink and PCIe figures as
// bidirectional aggregates per GPU, so they are halved here.
#include <string>
#include <utility>

#include "models/catalog.hpp"
#include "models/catalog_builtin.hpp"
#include "network/ici.hpp"

namespace dlsim::models {
namespace {

constexpr double kTera = 1e12;                 // TFLOP/s -> FLOP/s
constexpr double kGB = 1e9;                    // decimal gigabyte
constexpr double kGiB = 1024.0 * 1024 * 1024;  // binary gibibyte

struct Peaks {  // TFLOP/s, dense
  double fp64 = 0, fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0;
};

// The host link of each device generation, x16, per direction, after 128b/130b encoding
// (PCI-SIG: Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s per lane): Gen3 for K80 to T4 and the TPU
// hosts, Gen4 for A100, A10, A10G, L4 and L40S (hw-a10-*, hw-a10g-*, hw-l4-* and the L40S datasheet
// name "PCIe Gen4"), Gen5 for H100, H200, B200, GB200 and MI300X (NVIDIA and AMD datasheets; the
// B200 itself can run Gen6, its HGX hosts are Gen5).
double pcie_x16_per_direction(const std::string& device) {
  const auto starts = [&](const char* prefix) { return device.rfind(prefix, 0) == 0; };
  if (starts("H100") || starts("H200") || starts("B200") || starts("GB200") || starts("MI300")) return 63.0e9;
  if (starts("A100") || device == "A10" || starts("A10G") || starts("L4") || device == "A40") return 31.5e9;
  return 15.75e9;
}

DeviceSpec spec(std::string name, std::string description, Peaks t, double memory_bytes,
                double memory_bandwidth, double link_bidirectional, std::string source) {
  DeviceSpec d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.peak_flops = {t.fp64 * kTera, t.fp32 * kTera, t.tf32 * kTera,
                  t.fp16 * kTera, t.bf16 * kTera, t.fp8 * kTera};
  d.memory_bytes = memory_bytes;
  d.memory_bandwidth = memory_bandwidth;
  d.intra_node_link_bandwidth = link_bidirectional / 2;  // per direction
  d.pcie_bandwidth = pcie_x16_per_direction(d.name);
  d.source = std::move(source);
  return d;
}

// Micro-architecture facts for the kernel model (SMs, L2), from NVIDIA's architecture whitepapers
// and datasheets: Tesla K80 (GK210: 13 SMX and 1.5 MB L2 per die), P100 (GP100 whitepaper: 56 SMs,
// 4 MB L2), V100 (GV100 whitepaper: 80 SMs, 6 MB L2), T4 (Turing whitepaper, TU104 as T4: 40 SMs,
// 4 MB L2), A10/A10G/A40 (GA102 whitepaper: A10 72 SMs, A40 84 SMs, 6 MB L2; AWS names 80 SMs for the
// A10G), L4 (AD104, Ada whitepaper: 58 SMs, 48 MB L2), A100 (GA100 whitepaper: 108 SMs, 40 MB L2),
// H100 SXM5 and H200 (GH100 whitepaper: 132 SMs, 50 MB L2), L40S (AD102, Ada whitepaper: 142 of the
// die's 144 SMs, 96 MB L2 on the full die), B200 and GB200 (148 SMs, as CUDA's device query
// reports them on a B200; no whitepaper gives Blackwell's L2: 0, which the kernel model does not
// use), AMD MI300X (CDNA 3 whitepaper: 304 compute units; 256 MB Infinity
// Cache as its last-level cache). TPUs: matrix units (128x128 MXUs) per chip from Google's system-
// architecture pages: v2 2 (one per core), v3 4, v4 8, v5e 4, v5p 8; v6e 2 (256x256).
DeviceSpec with_arch(DeviceSpec d, Generation g, int units, double l2_bytes) {
  d.generation = g;
  d.compute_units = units;
  d.l2_bytes = l2_bytes;
  return d;
}
constexpr double kMB = 1024.0 * 1024;

// --- Default profiles: achieved / datasheet, from published measurements. ---
// The reference's only kernel-level measurements are the Azure AI-benchmarking-guide records
// below (A100-80GB, H100, H200). measured.yaml holds end-to-end figures (Megatron MFU, ResNet-50
// throughput, NCCL bus bandwidth), not GEMM or STREAM fractions, and published-claims.md holds
// none, so every other device gets the mean ratio (unmeasured()). kernel_launch_overhead_s keeps
// the DeviceProfile default (5 us, models/device.hpp) for every device: no record gives it.
// azure-a100-gemm-fp16: cuBLASLt FP16 GEMM 16384^3, 256.5 of 312 TFLOP/s (Azure
// AI-benchmarking-guide).
constexpr double kA100Matmul = 256.5 / 312.0;
// azure-h100-gemm-fp8 / azure-h200-gemm-fp8: cuBLASLt FP8 GEMM over the FP8 dense peak
// (hw-h100-sxm-fp8, hw-h200-sxm-fp8). Measured in FP8; used for every precision until calibrated.
constexpr double kH100Matmul = 1382.2 / 1978.9;
constexpr double kH200Matmul = 1366.3 / 1978.9;
// azure-hbm-*: measured stream Triad bandwidth over the datasheet bandwidth.
constexpr double kA100Memory = 1.70 / 2.039;
constexpr double kH100Memory = 2.97 / 3.35;
constexpr double kH200Memory = 4.15 / 4.8;
// Devices with no published measurement in the reference get the mean of the measured ratios.
constexpr double kMeanMatmul = (kA100Matmul + kH100Matmul + kH200Matmul) / 3;
constexpr double kMeanMemory = (kA100Memory + kH100Memory + kH200Memory) / 3;

DeviceProfile profile(double matmul_efficiency, double memory_efficiency) {
  DeviceProfile p;  // kernel_launch_overhead_s stays at its default: no source for it
  p.matmul_efficiency = matmul_efficiency;
  p.memory_efficiency = memory_efficiency;
  return p;
}

// No published measurement; mean of A100/H100/H200 ratios.
DeviceProfile unmeasured() { return profile(kMeanMatmul, kMeanMemory); }

void add_pre_ampere_gpus(Catalog& c) {
  // hw-k80-*: NVIDIA Tesla K80 datasheet (board = 2x GK210). AWS p2 exposes one GK210 as one
  // GPU, so the entry is one die: the record notes give 12 GiB, 240 GB/s and ~4.37 TF FP32
  // (8.73 / 2); FP64 2.91 TF per board -> 1.455 per die. No tensor cores, no fast FP16.
  c.add_device(with_arch(spec("K80", "NVIDIA Tesla K80, one GK210 die (as AWS p2 exposes it)",
                    {.fp64 = 2.91 / 2, .fp32 = 8.73 / 2}, 12 * kGiB, 480 * kGB / 2, 32 * kGB,
                    "hw-k80-*: NVIDIA Tesla K80 datasheet (per-die values from the record notes)"), Generation::kepler, 13, 1.5 * kMB),
               unmeasured());
  // hw-p100-sxm2-*: NVIDIA Tesla P100 datasheet. FP16 is packed FP16 (no tensor cores);
  // FP64 5.3 TF from the record notes. NVLink 1.0: 160 GB/s bidirectional.
  c.add_device(
      with_arch(spec("P100", "NVIDIA Tesla P100 SXM2 16GB", {.fp64 = 5.3, .fp32 = 10.6, .fp16 = 21.2},
           16 * kGB, 732 * kGB, 160 * kGB, "hw-p100-sxm2-*: NVIDIA Tesla P100 datasheet"), Generation::pascal, 56, 4 * kMB),
      unmeasured());
  // NOT IN THE REFERENCE: the P100 PCIe card, which DeepBench's P100 sheet measured (its README
  // lists the P100 among PCIe systems; ../shared/reference/kernels/README.md). NVIDIA Tesla P100
  // PCIe datasheet: FP32 9.3 TF, FP16 18.7 TF (packed, no tensor cores), FP64 4.7 TF, 16 GB HBM2 at
  // 732 GB/s, PCIe Gen3 x16 to the host and to peers (no NVLink); the same GP100 chip (56 SMs,
  // 4 MB L2) as the SXM2 part at a lower clock.
  c.add_device(with_arch(spec("P100-PCIe", "NVIDIA Tesla P100 PCIe 16GB", {.fp64 = 4.7, .fp32 = 9.3, .fp16 = 18.7},
                              16 * kGB, 732 * kGB, 32 * kGB, "NVIDIA Tesla P100 PCIe datasheet (not in hardware-and-cloud.yaml)"),
                         Generation::pascal, 56, 4 * kMB),
               unmeasured());
  // hw-v100-sxm2-16-*: NVIDIA Tesla V100 datasheet. FP16 tensor 125 TF, no BF16/TF32;
  // FP64 7.8 TF from the record notes. NVLink 2.0: 300 GB/s bidirectional.
  c.add_device(
      with_arch(spec("V100-16GB", "NVIDIA Tesla V100 SXM2 16GB", {.fp64 = 7.8, .fp32 = 15.7, .fp16 = 125},
           16 * kGB, 900 * kGB, 300 * kGB, "hw-v100-sxm2-16-*: NVIDIA Tesla V100 datasheet"), Generation::volta, 80, 6 * kMB),
      unmeasured());
  // hw-v100-sxm2-32-*: NVIDIA Tesla V100 datasheet. Same GV100 die as the 16GB part, so FP64
  // 7.8 TF is taken from the hw-v100-sxm2-16-fp32 notes.
  c.add_device(
      with_arch(spec("V100-32GB", "NVIDIA Tesla V100 SXM2 32GB", {.fp64 = 7.8, .fp32 = 15.7, .fp16 = 125},
           32 * kGB, 900 * kGB, 300 * kGB, "hw-v100-sxm2-32-*: NVIDIA Tesla V100 datasheet"), Generation::volta, 80, 6 * kMB),
      unmeasured());
  // hw-t4-*: NVIDIA T4 datasheet ("320+ GB/s"). FP16 tensor 65 TF, no BF16/TF32; the
  // reference gives no FP64 figure. PCIe Gen3 x16: 32 GB/s bidirectional. Sustained clocks
  // often throttle at 70 W (record notes), so real speed can sit below the profile.
  c.add_device(with_arch(spec("T4", "NVIDIA Tesla T4 16GB", {.fp32 = 8.1, .fp16 = 65}, 16 * kGB, 320 * kGB,
                    32 * kGB, "hw-t4-*: NVIDIA T4 datasheet"), Generation::turing, 40, 4 * kMB),
               unmeasured());
}

void add_ampere_and_ada_gpus(Catalog& c) {
  // hw-a10-*: NVIDIA A10 datasheet (recorded from memory - verify). The datacenter PCIe part the
  // A10G derives from; no instance in the reference uses it. No FP64 figure in the reference.
  c.add_device(with_arch(spec("A10", "NVIDIA A10 24GB PCIe",
                    {.fp32 = 31.2, .tf32 = 62.5, .fp16 = 125, .bf16 = 125}, 24 * kGB, 600 * kGB,
                    64 * kGB, "hw-a10-*: NVIDIA A10 datasheet (from memory - verify)"), Generation::ampere, 72, 6 * kMB),
               unmeasured());
  // hw-a10g-*: AWS EC2 G5 product page (secondary/uncertain; no NVIDIA datasheet exists).
  // UNCERTAIN: the A10G tensor rate is not published. The hw-a10g-fp32 notes say ~70 TF dense
  // FP16 (below the A10's 125, hw-a10-fp16); used for FP16 and BF16 (Ampere runs both at one
  // rate, hw-a10-fp16 "FP16/BF16"). NOT IN THE REFERENCE: an A10G TF32 rate. DERIVED 35 TF = 70 x
  // the A10's TF32/FP16 ratio (hw-a10-tf32 62.5 / hw-a10-fp16 125). No FP64 figure. Calibrate on
  // a g5.
  c.add_device(with_arch(spec("A10G", "NVIDIA A10G 24GB (AWS g5)",
                    {.fp32 = 31.2, .tf32 = 35, .fp16 = 70, .bf16 = 70}, 24 * kGB, 600 * kGB,
                    64 * kGB, "hw-a10g-*: AWS EC2 G5 product page; tensor rates uncertain"), Generation::ampere, 80, 6 * kMB),
               unmeasured());
  // hw-l4-*: NVIDIA L4 datasheet via reseller mirror (sparse figures halved to dense).
  c.add_device(with_arch(spec("L4", "NVIDIA L4 24GB",
                    {.fp32 = 30.3, .tf32 = 60, .fp16 = 121, .bf16 = 121, .fp8 = 242.5}, 24 * kGB,
                    300 * kGB, 64 * kGB, "hw-l4-*: NVIDIA L4 datasheet"), Generation::ada, 58, 48 * kMB),
               unmeasured());
  // NOT IN THE REFERENCE: the L40S (AWS g6e), NVIDIA L40S datasheet (2023), dense figures (the
  // sheet's sparse ones halved): FP32 91.6 TF, TF32 tensor 183 TF, FP16/BF16 tensor 362.05 TF, FP8
  // 733 TF; 48 GB GDDR6 at 864 GB/s; no NVLink, PCIe Gen4 x16 (64 GB/s bidirectional) to peers.
  c.add_device(with_arch(spec("L40S", "NVIDIA L40S 48GB PCIe",
                              {.fp32 = 91.6, .tf32 = 183, .fp16 = 362.05, .bf16 = 362.05, .fp8 = 733}, 48 * kGB,
                              864 * kGB, 64 * kGB, "NVIDIA L40S datasheet (not in hardware-and-cloud.yaml)"),
                         Generation::ada, 142, 96 * kMB),
               unmeasured());
  // NOT IN THE REFERENCE: the A40, added because ../shared/reference/kernels measures it (vidur's
  // "8xA40 pairwise NVLink" node). NVIDIA A40 datasheet (2021): 48 GB GDDR6 at 696 GB/s, FP32
  // 37.4 TF, TF32 tensor 74.8 TF, FP16/BF16 tensor 149.7 TF dense, NVLink bridge 112.5 GB/s
  // bidirectional to one peer, PCIe Gen4 x16. No cloud instance of the catalog carries it.
  c.add_device(with_arch(spec("A40", "NVIDIA A40 48GB PCIe",
                              {.fp32 = 37.4, .tf32 = 74.8, .fp16 = 149.7, .bf16 = 149.7}, 48 * kGB, 696 * kGB,
                              112.5 * kGB, "NVIDIA A40 datasheet (not in hardware-and-cloud.yaml)"),
                         Generation::ampere, 84, 6 * kMB),
               unmeasured());
  // hw-a100-sxm-40-*: NVIDIA A100 datasheet. FP64 is the FP64 tensor-core rate (19.5 TF; 9.7
  // without tensor cores, record notes). NVLink 3.0 + NVSwitch: 600 GB/s bidirectional.
  // Profile: the A100-80GB measurements (same compute; its HBM2e ratio stands in for HBM2).
  c.add_device(with_arch(spec("A100-40GB", "NVIDIA A100 SXM4 40GB",
                    {.fp64 = 19.5, .fp32 = 19.5, .tf32 = 156, .fp16 = 312, .bf16 = 312}, 40 * kGB,
                    1555 * kGB, 600 * kGB, "hw-a100-sxm-40-*: NVIDIA A100 datasheet"), Generation::ampere, 108, 40 * kMB),
               profile(kA100Matmul, kA100Memory));
  // hw-a100-sxm-80-*: NVIDIA A100 datasheet; azure-a100-gemm-fp16, azure-hbm-a100 (Azure).
  c.add_device(with_arch(spec("A100-80GB", "NVIDIA A100 SXM4 80GB",
                    {.fp64 = 19.5, .fp32 = 19.5, .tf32 = 156, .fp16 = 312, .bf16 = 312}, 80 * kGB,
                    2039 * kGB, 600 * kGB, "hw-a100-sxm-80-*: NVIDIA A100 datasheet"), Generation::ampere, 108, 40 * kMB),
               profile(kA100Matmul, kA100Memory));
}

void add_hopper_gpus(Catalog& c) {
  // hw-h100-sxm-*: NVIDIA H100 datasheet (sparse values halved). FP64 tensor-core 67 TF (34
  // without, record notes). NVLink 4.0 + NVSwitch: 900 GB/s bidirectional.
  // Profile: azure-h100-gemm-fp8, azure-hbm-h100 (Azure AI-benchmarking-guide).
  c.add_device(
      with_arch(spec("H100-SXM", "NVIDIA H100 SXM5 80GB",
           {.fp64 = 67, .fp32 = 67, .tf32 = 494.7, .fp16 = 989.4, .bf16 = 989.4, .fp8 = 1978.9},
           80 * kGB, 3350 * kGB, 900 * kGB, "hw-h100-sxm-*: NVIDIA H100 datasheet"), Generation::hopper, 132, 50 * kMB),
      profile(kH100Matmul, kH100Memory));
  // hw-h200-sxm-*: NVIDIA H200 datasheet (recorded from memory - verify). Compute identical
  // to H100 SXM per the record notes, FP64 included. Profile: azure-h200-gemm-fp8, azure-hbm-h200.
  c.add_device(
      with_arch(spec("H200", "NVIDIA H200 SXM 141GB",
           {.fp64 = 67, .fp32 = 67, .tf32 = 494.7, .fp16 = 989.4, .bf16 = 989.4, .fp8 = 1978.9},
           141 * kGB, 4800 * kGB, 900 * kGB, "hw-h200-sxm-*: NVIDIA H200 datasheet"), Generation::hopper, 132, 50 * kMB),
      profile(kH200Matmul, kH200Memory));
}

// NOT IN THE REFERENCE: Blackwell. Dense tensor rates are the datasheets' sparse figures halved.
// Memory per GPU is the system's total over its GPUs.
void add_blackwell_gpus(Catalog& c) {
  // NVIDIA HGX B200 / DGX B200 datasheets (8 GPUs at 1,000 W): FP4 144 PF, FP8 72 PF, FP16/BF16
  // 36 PF, TF32 18 PF (sparse), FP32 600 TF, FP64 296 TF, 1,440 GB HBM3e at 64 TB/s in all;
  // per GPU: FP8 4,500, FP16/BF16 2,250, TF32 1,125 dense, FP32 75, FP64 37 TF, 180 GB at 8 TB/s.
  // NVLink 5: 1.8 TB/s bidirectional per GPU through NVSwitch.
  c.add_device(with_arch(spec("B200", "NVIDIA B200 (HGX B200, 1,000 W) 180GB",
                              {.fp64 = 37, .fp32 = 75, .tf32 = 1125, .fp16 = 2250, .bf16 = 2250, .fp8 = 4500},
                              180 * kGB, 8000 * kGB, 1800 * kGB,
                              "NVIDIA HGX B200 / DGX B200 datasheets (not in hardware-and-cloud.yaml)"),
                         Generation::blackwell, 148, 0),
               unmeasured());
  // The Blackwell GPU of a GB200 superchip, as the GB200 NVL72 rack runs it (1,200 W, liquid
  // cooled): NVIDIA GB200 NVL72 datasheet per rack of 72 GPUs, FP8 720 PF, FP16/BF16 360 PF, TF32
  // 180 PF (sparse), 13.4 TB HBM3e at 576 TB/s; per GPU: FP8 5,000, FP16/BF16 2,500, TF32 1,250
  // dense, 186 GB at 8 TB/s. FP32 90 and FP64 45 TF at 1,200 W (glennklockwood.com's Blackwell
  // table, from NVIDIA's Blackwell datasheet). NVLink 5 to the rack's NVLink switches: 1.8 TB/s
  // bidirectional per GPU, all 72 in one NVLink domain.
  c.add_device(with_arch(spec("GB200", "NVIDIA Blackwell GPU of a GB200 superchip (NVL72, 1,200 W) 186GB",
                              {.fp64 = 45, .fp32 = 90, .tf32 = 1250, .fp16 = 2500, .bf16 = 2500, .fp8 = 5000},
                              13400.0 / 72 * kGB, 8000 * kGB, 1800 * kGB,
                              "NVIDIA GB200 NVL72 datasheet (not in hardware-and-cloud.yaml)"),
                         Generation::blackwell, 148, 0),
               unmeasured());
}

// NOT IN THE REFERENCE: AMD Instinct MI300X datasheet (amd.com, 2023): dense peaks FP64 163.4 TF
// (matrix), FP32 163.4, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 TF; 192 GB HBM3 at 5.3 TB/s;
// seven Infinity Fabric (xGMI) links of 128 GB/s bidirectional, 896 GB/s in all, one to each other
// GPU of an 8-GPU platform; PCIe Gen5 x16 to the host.
void add_amd_gpus(Catalog& c) {
  c.add_device(with_arch(spec("MI300X", "AMD Instinct MI300X 192GB",
                              {.fp64 = 163.4, .fp32 = 163.4, .tf32 = 653.7, .fp16 = 1307.4, .bf16 = 1307.4, .fp8 = 2614.9},
                              192 * kGB, 5300 * kGB, 896 * kGB, "AMD Instinct MI300X datasheet (not in hardware-and-cloud.yaml)"),
                         Generation::cdna3, 304, 256 * kMB),
               unmeasured());
}

// TPUs: per chip, BF16 matrix rate only. The reference gives no FP32/FP16/FP8 rates for the
// matrix units, so those stay 0 (unsupported as far as dlsim knows). The link figure is the
// chip's ICI in both directions, links x per-link rate x 2 (network/ici.cpp gives each
// generation's links and rate with their sources), which spec() halves: intra_node_link_bandwidth
// is then one direction of all the chip's ICI links, and a node's per-link figure is that over
// the generation's link count (experiment/network_yaml.cpp). No TPU efficiency has been
// measured: profiles are the GPU mean (no published measurement; mean of A100/H100/H200 ratios).
double ici_both_ways(network::IciGeneration g) { return 2 * network::ici_spec(g).chip_bandwidth(); }

void add_tpus(Catalog& c) {
  using network::IciGeneration;
  // hw-tpuv2-*: Google I/O 2017 / Cloud TPU v2 via third-party summaries (secondary). The
  // record values are used (45 TF, 16 GB, 600 GB/s); its notes cite ~46 TF / 700 GB/s (Jouppi et
  // al., "verify") and 8 GiB per core x 2 cores, i.e. 16 GiB. ICI: 4 links x 62 GB/s (CACM 2020,
  // direction uncertain; ici.cpp).
  c.add_device(with_arch(spec("TPU-v2", "Google Cloud TPU v2 (one chip)", {.bf16 = 45}, 16 * kGB, 600 * kGB,
                    ici_both_ways(IciGeneration::v2),
                    "hw-tpuv2-*: Google I/O 2017 / Cloud TPU v2 (secondary); ICI: CACM 2020"), Generation::tpu, 2, 0),
               unmeasured());
  // hw-tpuv3-*: cloud.google.com/tpu/docs/v3. ICI: 4 links x 82 GB/s (CACM 2020), which the
  // page's all-reduce bandwidth per pod (340 TB/s over 1,024 chips = 332 GB/s) confirms.
  c.add_device(
      with_arch(spec("TPU-v3", "Google Cloud TPU v3 (one chip)", {.bf16 = 123}, 32 * kGiB, 900 * kGB,
           ici_both_ways(IciGeneration::v3),
           "hw-tpuv3-*: cloud.google.com/tpu/docs/v3; ICI: CACM 2020"), Generation::tpu, 4, 0),
      unmeasured());
  // hw-tpuv4-*: cloud.google.com/tpu/docs/v4. BF16 275 TF (int8 also 275, not a dlsim precision),
  // 32 GiB, 1200 GB/s. ICI: 6 links x 50 GB/s per direction (ISCA 2023; the page's pod figures
  // imply 45 to 47 GB/s per link, ici.cpp).
  c.add_device(
      with_arch(spec("TPU-v4", "Google Cloud TPU v4 (one chip)", {.bf16 = 275}, 32 * kGiB, 1200 * kGB,
           ici_both_ways(IciGeneration::v4),
           "hw-tpuv4-*: cloud.google.com/tpu/docs/v4; ICI: ISCA 2023 (uncertain)"), Generation::tpu, 8, 0),
      unmeasured());
  // hw-tpuv5e-*: cloud.google.com/tpu/docs/v5e. BF16 197 TF (int8 393 TOPS, not a dlsim
  // precision), 16 GB, 819 GB/s; ICI 1600 Gbps per chip = 400 GB/s bidirectional, 4 ports.
  c.add_device(with_arch(spec("TPU-v5e", "Google Cloud TPU v5e (one chip)", {.bf16 = 197}, 16 * kGB,
                    819 * kGB, ici_both_ways(IciGeneration::v5e), "hw-tpuv5e-*: cloud.google.com/tpu/docs/v5e"),
                         Generation::tpu, 4, 0),
               unmeasured());
  // hw-tpuv5p-*: cloud.google.com/tpu/docs/v5p. ICI 4800 Gbps per chip = 1,200 GB/s
  // bidirectional (the page states both), 6 links of a 3-D torus.
  c.add_device(with_arch(spec("TPU-v5p", "Google Cloud TPU v5p (one chip)", {.bf16 = 459}, 95 * kGB,
                    2765 * kGB, ici_both_ways(IciGeneration::v5p), "hw-tpuv5p-*: cloud.google.com/tpu/docs/v5p"),
                         Generation::tpu, 8, 0),
               unmeasured());
  // NOT IN THE REFERENCE: TPU v6e (Trillium), cloud.google.com/tpu/docs/v6e: BF16 918 TF (int8
  // 1836 TOPS), 32 GB HBM at 1638 GB/s, ICI 800 GB/s bidirectional over 4 ports, one TensorCore
  // with two 256x256 MXUs, 8 chips per host, 256-chip pods (2-D torus).
  c.add_device(with_arch(spec("TPU-v6e", "Google Cloud TPU v6e Trillium (one chip)", {.bf16 = 918}, 32 * kGB,
                    1638 * kGB, ici_both_ways(IciGeneration::v6e),
                    "cloud.google.com/tpu/docs/v6e (not in hardware-and-cloud.yaml)"), Generation::tpu, 2, 0),
               unmeasured());
}

// NOT IN THE REFERENCE: AWS's Trainium chips, from AWS Neuron's architecture pages
// (awsdocs-neuron.readthedocs-hosted.com, about-neuron/arch/neuron-hardware: trainium, trainium2,
// trn1-arch, trn2-arch, neuron-core-v2/v3; and the NKI architecture guides).
// - Trainium (Trn1): two NeuronCore-v2, 190 TFLOP/s FP16/BF16/TF32/cFP8 and 47.5 FP32 (no FP64);
//   32 GiB HBM at 820 GiB/s (the trn1-arch table's unit; the NKI guide writes 820 GB/s); four
//   NeuronLink-v2 links, 384 GiB/s per chip in a trn1.32xlarge (768 in a trn1n.32xlarge).
// - Trainium2 (Trn2): eight NeuronCore-v3, 1,299 TFLOP/s FP8 (cFP8), 667 FP16/BF16/TF32, 181 FP32;
//   96 GiB HBM at 2.9 TB/s; four NeuronLink-v3 links, 1.28 TB/s per chip.
// The NeuronLink figures are taken as both directions together, as NVIDIA's NVLink figures are
// (the pages do not say). Each NeuronCore's Tensor Engine is one 128 x 128 systolic array, so the
// kernel model's units are the chip's NeuronCores (gemm_model.cpp: systolic tiles). No Trainium
// kernel has been measured for dlsim: the profile is the GPU mean (unmeasured()), as for TPUs. The
// host link is not published: the Gen3 default of pcie_x16_per_direction.
void add_trainium(Catalog& c) {
  c.add_device(with_arch(spec("Trainium", "AWS Trainium (Trn1, one chip)", {.fp32 = 47.5, .tf32 = 190, .fp16 = 190, .bf16 = 190, .fp8 = 190},
                              32 * kGiB, 820 * kGiB, 384 * kGiB, "AWS Neuron docs: Trainium and Trn1 architecture (not in hardware-and-cloud.yaml)"),
                         Generation::trainium, 2, 0),
               unmeasured());
  c.add_device(with_arch(spec("Trainium2", "AWS Trainium2 (Trn2, one chip)", {.fp32 = 181, .tf32 = 667, .fp16 = 667, .bf16 = 667, .fp8 = 1299},
                              96 * kGiB, 2900 * kGB, 1280 * kGB, "AWS Neuron docs: Trainium2 and Trn2 architecture (not in hardware-and-cloud.yaml)"),
                         Generation::trainium, 8, 0),
               unmeasured());
}

}  // namespace

void add_builtin_devices(Catalog& catalog) {
  add_pre_ampere_gpus(catalog);
  add_ampere_and_ada_gpus(catalog);
  add_hopper_gpus(catalog);
  add_blackwell_gpus(catalog);
  add_amd_gpus(catalog);
  add_tpus(catalog);
  add_trainium(catalog);
}

}  // namespace dlsim::models
