// Link technologies and the fraction of their line rate that traffic really gets (TPU ICI
// line rates per generation are in ici.hpp).
//
// A datasheet gives a link's line rate; what a collective library moves over it is less:
// NVLink is driven by SM copies in 128-byte payloads, PCIe and networks carry headers, and a
// TCP stream is copied by a CPU. achievable_fraction() gives, per technology and generation,
// achievable / line rate from measurements or from NCCL's own topology model; the table and
// its sources are in link_tech.cpp. Line rates stay in the topology (LinkInfo::bandwidth); the
// flow network shares the achievable bandwidth.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "network/topology.hpp"

namespace dlsim::network {

// achievable / line rate, in (0, 1]; 1 for generic and wan links (not characterised).
double achievable_fraction(LinkTech tech);

// How a node's NICs move collective traffic: RDMA (InfiniBand verbs, RoCE, EFA; GPUDirect:
// the NIC reads GPU memory) or TCP sockets (data staged through host memory and copied by a
// CPU thread per connection; NCCL's socket transport).
enum class Transport { rdma, tcp };

// One TCP stream's rate when a CPU thread copies it: 2.06 GB/s measured by NCCL 2.3.7 over TCP
// with one ring, 32 Gb/s Ethernet (NVIDIA/nccl issue 209, 2019-04-20: "1 ring 2.06 GB/s",
// reaching 3.75 GB/s only with 8 rings). NCCL's socket transport moves each connection over one
// socket on one helper thread by default (src/transport/net_socket.cc, NCCL 2.4, commit
// 06abb3b7: 1 thread x 1 socket unless the NIC is AWS's), from host memory only
// (NCCL_PTR_HOST: no GPUDirect, the data is copied through the host).
constexpr double kTcpStreamBandwidth = 2.06e9;  // bytes/s

// Names as scenarios write them ("nvlink3", "ib-hdr", "ethernet", ...).
std::string to_string(LinkTech tech);
std::optional<LinkTech> link_tech_from_string(const std::string& name);
const std::vector<std::string>& link_tech_names();
std::string to_string(Transport transport);

// NVLink generation of a GPU family, by its NCCL compute capability (60 Pascal ... 90 Hopper,
// 100 Blackwell);
// generic when unknown. PCIe generation by the x16 bandwidth per direction (bytes/s).
LinkTech nvlink_of(int compute_capability);
LinkTech pcie_of(double x16_bandwidth);

}  // namespace dlsim::network
