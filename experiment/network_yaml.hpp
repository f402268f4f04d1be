// The scenario's `network` section: the node design (defaults from the instance type) and the
// cluster fabric, read into NetworkConfig with the same checks as every other section.
#pragma once

#include "experiment/scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// The node design an instance type implies: its NVLink/PCIe/ICI wiring, link and NIC figures.
// Links carry their technology (NVLink generation from the GPU's, PCIe generation from its x16
// figure, the instance's NIC technology and transport); Hopper NVSwitch nodes get NVLink SHARP.
network::NodeSpec node_spec_for(const models::InstanceType& instance, const models::DeviceSpec& device);

// NVLink SHARP's reduction bandwidth per GPU port of an NVSwitch node: 5/6 of the GPU's
// achievable NVLink bandwidth (NCCL's NVLS ratio, network_yaml.cpp).
double nvls_bandwidth_of(const network::NodeSpec& node);

// Reads `network:` (may be absent: a non-blocking single switch). Does not call finish() on
// the parent.
NetworkConfig read_network(MapReader& network, const ClusterConfig& cluster);

// The network a scenario without a network: section gets on `cluster` (what read_network
// gives for an empty section), and its topology for `nodes` nodes (the torus shaped for TPUs).
NetworkConfig default_network(const ClusterConfig& cluster);
network::Topology default_topology(const ClusterConfig& cluster, int nodes);

// A 2-D torus shape for n chips: the most square a x b with a * b = n.
std::vector<int> default_torus_dims(int chips);

// The fewest equal pods (each a whole number of nodes) that hold `nodes` TPU hosts of
// `per_node` chips when a pod has at most the generation's pod_chips() (ici.hpp): 1 up to a
// pod, 2 for PaLM's 6,144 v4 chips (2 x 3,072).
int ici_pods_for(network::IciGeneration ici, int nodes, int per_node);

// Completes a torus fabric for `nodes` nodes of `per_node` accelerators: dims per pod when not
// given (TPU instances: their generation's slice shape, network/ici.hpp; others the squarest
// 2-D), and for TPU instances the pods (when neither pods nor dims are given: ici_pods_for),
// the axes that wrap (when not given) and the host block.
void shape_torus(network::FabricSpec& fabric, const NetworkConfig& network, int nodes, int per_node);

}  // namespace dlsim::experiment
