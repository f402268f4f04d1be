// The achievable fractions of link_tech.hpp and where each comes from. "measured.yaml" is
// /work/shared/reference/measured.yaml (nccl-tests bus bandwidths; an all-reduce across nodes
// with one NIC per node has busbw = the NIC's achievable rate, and inside a node the ring's
// busbw = one GPU's achievable NVLink bandwidth); "topo.h" is NCCL's src/graph/topo.h
// (NVIDIA/nccl commit 069a3d4f), whose per-link figures NCCL's own tuner uses.
#include "network/link_tech.hpp"

#include <algorithm>

namespace dlsim::network {
namespace {

struct TechRow {
  LinkTech tech;
  const char* name;
  double fraction;
};

// Line rates per link per direction: NVLink1 20 GB/s; NVLink2/3/4 25 GB/s; NVLink5 50 GB/s; PCIe x16 16, 32,
// 64 GB/s as dlsim's catalog writes them; InfiniBand 12.5, 25, 50 GB/s.
constexpr TechRow kTechs[] = {
    {LinkTech::generic, "generic", 1.0},
    // topo.h SM60_NVLINK_BW 18.0 GB/s per NVLink1 (P100) of 20.
    {LinkTech::nvlink1, "nvlink1", 18.0 / 20.0},
    // topo.h SM70_NVLINK_BW 20.0 of 25 (V100).
    {LinkTech::nvlink2, "nvlink2", 20.0 / 25.0},
    // topo.h SM80_NVLINK_BW 20.0 of 25 (A100). Measured: 8 x A800 (8 NVLinks) 160 of 200 GB/s
    // (nccl-maint-a800-intra); the maintainer's "~20 GB/s effective per link with 128 B SM
    // payloads" (nccl-maint-a100-intra).
    {LinkTech::nvlink3, "nvlink3", 20.0 / 25.0},
    // topo.h SM90_NVLINK_BW 20.6 of 25 (H100). Measured: ring busbw 370 of 450 GB/s on 8 x H100
    // (nccl-maint-h100-ring).
    {LinkTech::nvlink4, "nvlink4", 20.6 / 25.0},
    // topo.h SM100_NVLINK_BW 40.1 of 50 (B200, GB200: NVLink 5 doubles the per-link rate, 18 links
    // of 50 GB/s per direction). No measurement in the reference.
    {LinkTech::nvlink5, "nvlink5", 40.1 / 50.0},
    // topo.h PCI_BW 12.0 GB/s for Gen3 x16 (16 GB/s in dlsim's catalog). The same fraction holds
    // at Gen4 and Gen5 in vidur's measurements (collectives_vidur.csv, 4 PCIe GPUs whose ring
    // crosses PCIe: 23.7 of 32 and 48.8 of 64 GB/s busbw), which are held out, not fit.
    {LinkTech::pcie3, "pcie3", 12.0 / 16.0},
    {LinkTech::pcie4, "pcie4", 12.0 / 16.0},
    {LinkTech::pcie5, "pcie5", 12.0 / 16.0},
    // measured.yaml nccl-per-nic-edr/100gbe 12.2 of 12.5 GB/s, nccl-per-nic-hdr 24 of 25,
    // nccl-per-nic-ndr 48.5 of 50 (NCCL maintainers; these rows are the fit, nothing else is).
    {LinkTech::ib_edr, "ib-edr", 12.2 / 12.5},
    {LinkTech::ib_hdr, "ib-hdr", 24.0 / 25.0},
    {LinkTech::ib_ndr, "ib-ndr", 48.5 / 50.0},
    // RoCE: no measurement in the reference; ASSUMED as InfiniBand of the 100 Gb/s generation
    // (both carry RDMA in MTU-4096 frames; RoCEv2 adds Ethernet/IP/UDP headers, ~1.5%).
    {LinkTech::roce, "roce", 12.2 / 12.5},
    // AWS EFA: 80 Gb/s of 100 on 2 p3dn nodes with NCCL's EFA plugin (S. Jeaugey, NVIDIA/nccl
    // issue 235, 2019-07-16).
    {LinkTech::efa, "efa", 0.80},
    // TCP/IPv4 over Ethernet at the default 1500-byte MTU: 1448 payload bytes (1500 less 20 IP,
    // 20 TCP and 12 timestamp-option bytes) per 1538 on the wire (Ethernet header 14, FCS 4,
    // preamble 8, inter-frame gap 12): header arithmetic, not a measurement.
    {LinkTech::ethernet, "ethernet", 1448.0 / 1538.0},
    // TPU ICI: an AllGather over the 16-chip axis of a TPU v5e 8x16 slice (a full bidirectional
    // ring) measured "about 95% of the peak claimed bandwidth (4.5e10)" bytes/s per link one way
    // (Austin et al., "How to Scale Your Model", jax-ml/scaling-book sharding.md), a rate the
    // book computes as V / (2T) for an array of V bytes gathered in time T (its cost model T =
    // V / W_bidirectional). A bidirectional ring of 16 moves 15/16 of V over each direction of
    // its links, so the links carried 15/16 x 0.95 x 45 = 40.1 GB/s of the 50 GB/s line rate
    // Google's v5e page gives (ici.cpp): 0.80 (nccl-tests' all-gather busbw 80.2 GB/s). The only
    // ICI measurement found; used for every generation. This row is the only ICI figure fit to a
    // measurement; the v4 pod check (scenarios/published/tpu-v4-pod-allreduce.yaml) is not.
    {LinkTech::ici, "ici", 15.0 / 16.0 * 0.95 * 45.0 / 50.0},
    {LinkTech::wan, "wan", 1.0},
};

}  // namespace

double achievable_fraction(LinkTech tech) {
  for (const TechRow& r : kTechs) {
    if (r.tech == tech) return r.fraction;
  }
  return 1.0;
}

std::string to_string(LinkTech tech) {
  for (const TechRow& r : kTechs) {
    if (r.tech == tech) return r.name;
  }
  return "generic";
}

std::optional<LinkTech> link_tech_from_string(const std::string& name) {
  for (const TechRow& r : kTechs) {
    if (name == r.name) return r.tech;
  }
  return std::nullopt;
}

const std::vector<std::string>& link_tech_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const TechRow& r : kTechs) out.emplace_back(r.name);
    return out;
  }();
  return names;
}

std::string to_string(Transport transport) { return transport == Transport::tcp ? "tcp" : "rdma"; }

LinkTech nvlink_of(int compute_capability) {
  if (compute_capability >= 100) return LinkTech::nvlink5;
  if (compute_capability >= 90) return LinkTech::nvlink4;
  if (compute_capability >= 80) return LinkTech::nvlink3;
  if (compute_capability >= 70) return LinkTech::nvlink2;
  if (compute_capability >= 60) return LinkTech::nvlink1;
  return LinkTech::generic;
}

// Gen3 x16 is 16 GB/s per direction in the catalog, Gen4 32, Gen5 64: the nearest wins.
LinkTech pcie_of(double x16_bandwidth) {
  if (x16_bandwidth < 24e9) return LinkTech::pcie3;
  if (x16_bandwidth < 48e9) return LinkTech::pcie4;
  return LinkTech::pcie5;
}

}  // namespace dlsim::network
