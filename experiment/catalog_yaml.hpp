// Catalog entries written in YAML: a catalog file that adds or overrides devices and instance
// types (scenario key `catalog`), and the inline instance of a scenario's cluster. The fields
// of an instance type are read in one place for both.
#pragma once
#include <string>

#include "experiment/yaml_reader.hpp"
#include "models/catalog.hpp"

namespace dlsim::experiment {

// Reads accelerator, accelerators_per_node, network_bandwidth, network_latency,
// intra_node_bandwidth, intra_node_latency, nic_tech, transport, ici, price (and provider); the
// accelerator must be in `catalog`. ici (v2 ... v6e; default: the generation a TPU device's
// name carries, else none) makes the node a TPU board of that generation. Does not call finish().
models::InstanceType read_instance_fields(MapReader& r, const std::string& name,
                                          const models::Catalog& catalog);

// Loads `path` (devices: [...], instances: [...]) into `catalog`. `referenced_from` locates the
// scenario key that named the file, for a file that cannot be read.
void load_catalog_file(const std::string& path, const Source& referenced_from,
                       const std::string& key_path, const YAML::Node& key_node,
                       models::Catalog& catalog);

}  // namespace dlsim::experiment
