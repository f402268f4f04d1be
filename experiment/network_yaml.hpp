// The scenario's `network` section: the node design (defaults from the instance type) and the
// cluster fabric, read into NetworkConfig with the same checks as every other section.
#pragma once

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// The node design an instance type implies: its NVLink/PCIe/ICI wiring, link and NIC figures.
network::NodeSpec node_spec_for(const models::InstanceType& instance, const models::DeviceSpec& device);

// Reads `network:` (may be absent: a non-blocking single switch). Does not call finish() on
// the parent.
NetworkConfig read_network(MapReader& network, const ClusterConfig& cluster);

// A 2-D torus shape for n chips: the most square a x b with a * b = n.
std::vector<int> default_torus_dims(int chips);

}  // namespace dlsim::experiment
