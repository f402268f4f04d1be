// InstanceType: a cloud machine (node) built on one accelerator model.
// Units: bytes/s, seconds, US dollars per hour.
#pragma once
#include <string>

#include "network/ici.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::models {

struct InstanceType {
  std::string name;                 // "aws/p3.16xlarge"
  std::string provider;             // "aws", "gcp", "azure"
  std::string device;               // DeviceSpec::name
  int accelerators_per_node = 0;    // > 0
  double network_bandwidth = 0;     // node NIC bandwidth, bytes/s per direction
  double network_latency_s = 0;     // one-way latency between nodes, seconds
  double intra_node_bandwidth = 0;  // bytes/s per direction between accelerators of a node
  double intra_node_latency_s = 0;  // seconds
  network::NodeKind node_kind = network::NodeKind::nvswitch;  // how accelerators connect inside
  network::IciGeneration ici = network::IciGeneration::none;  // TPU hosts: the chips' ICI (network/ici.hpp)
  int nics = 1;                     // NICs sharing network_bandwidth equally
  int vcpus = 0;                    // host vCPUs (hardware threads) for the input pipeline; 0: not known
  network::LinkTech nic_tech = network::LinkTech::generic;  // what the NICs are (network/link_tech.hpp)
  network::Transport transport = network::Transport::rdma;  // how collectives use them: RDMA or TCP sockets
  double price_per_hour = 0;        // on-demand USD per node-hour
  double spot_price_per_hour = 0;   // spot USD per node-hour when a public figure exists (0: not known)
  std::string price_date;           // when the price held
  std::string source;               // where the figures come from
};

}  // namespace dlsim::models
