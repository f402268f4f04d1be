// The fabric of the flow-solver benchmarks (flow_solver.cpp, simgrid_compare.cpp): a k = 16
// fat-tree of 1,024 hosts, one accelerator and one 12.5 GB/s NIC each, 12.5 GB/s links.
#pragma once
#include "network/topology_builders.hpp"

namespace dlsim::bench {

inline network::Topology fat_tree_1024() {
  network::NodeSpec node;
  node.accelerators = 1;
  node.nics = 1;
  node.nic_bandwidth = 12.5e9;
  network::FabricSpec fabric;
  fabric.kind = network::FabricKind::fat_tree;
  fabric.nodes = 1024;
  fabric.fat_tree_k = 16;
  fabric.link_bandwidth = 12.5e9;
  return network::build_cluster(node, fabric);
}

}  // namespace dlsim::bench
