// Scenario: one validated, fully resolved scenario, as experiment::load_scenario makes it from
// YAML. Catalog names are resolved to specs, units to SI (bytes, bytes/s, seconds, USD/h).
// Immutable description: nothing here changes during a run.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/data_parallel_step.hpp"
#include "models/device.hpp"
#include "models/instance_type.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"
#include "network/collectives.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::experiment {

struct ClusterConfig {
  std::string instance_name;      // catalog name, or "inline"
  models::InstanceType instance;  // resolved (price override applied)
  models::DeviceSpec device;
  models::DeviceProfile profile;
  int nodes = 1;
};

// The fabric: one node design (from the instance type unless overridden) and how nodes connect.
// fabric.nodes is set per evaluated node count; torus dims are derived when not given.
struct NetworkConfig {
  network::NodeSpec node;
  network::FabricSpec fabric;
  // A topology written out in full (network.custom): used instead of node x fabric.
  bool custom = false;
  std::vector<network::CustomVertex> custom_vertices;
  std::vector<network::CustomLink> custom_links;
  bool torus_dims_given = false;
  network::Algorithm all_reduce = network::Algorithm::automatic;
};

enum class BatchMode { per_device, global };

struct WorkloadConfig {
  std::string model_name;
  int sequence_length = 0;        // 0 for models without sequences
  models::ModelGraph model;
  models::Precision precision = models::Precision::fp32;
  models::Precision gradient_precision = models::Precision::fp32;
  models::Optimizer optimizer = models::Optimizer::sgd_momentum;
  BatchMode batch_mode = BatchMode::per_device;
  int batch = 1;                  // per device or global, by batch_mode
  double dataset_samples = 0;     // 0 when the work is given in iterations only
  double epochs = 0;              // > 0 with dataset_samples
  std::int64_t iterations = 0;    // > 0 when the work is given in iterations
  bool overlap = true;
  double bucket_bytes = 25.0 * 1024 * 1024;
};

// A collective sweep instead of a training job: the operation over message sizes, by one group
// of ranks or by several at once (to measure contention).
struct CollectiveConfig {
  network::CollectiveKind operation = network::CollectiveKind::all_reduce;
  network::Algorithm algorithm = network::Algorithm::automatic;
  std::vector<double> sizes;      // bytes per rank (nccl-tests convention)
  int groups = 1;                 // groups running the collective at the same time
  bool interleaved = false;       // node n in group n % groups (else consecutive blocks)
  int server_shards = 1;          // push-pull
};

struct SweepConfig {
  std::vector<int> nodes;         // empty: just cluster.nodes
};

struct OutputConfig {
  std::string results;            // HDF5 path ("" = none)
  std::string csv;                // CSV path ("" = none)
};

struct Scenario {
  std::string source;             // file the scenario came from
  std::uint64_t seed = 1;
  ClusterConfig cluster;
  NetworkConfig network;
  WorkloadConfig workload;         // training scenarios
  std::optional<CollectiveConfig> collective;  // collective scenarios (then no workload)
  SweepConfig sweep;
  OutputConfig output;
  std::string input_yaml;         // the scenario text after --set overrides, re-emitted

  // The node counts to evaluate: the sweep, or the cluster's own count.
  std::vector<int> node_counts() const;
  // The fabric spec for a node count (torus dims derived when not given).
  network::FabricSpec fabric_for(int nodes) const;
  // The topology a node count runs on: node x fabric, or the custom topology.
  network::Topology topology_for(int nodes) const;
  // The accelerators of each collective group at a node count, in rank order.
  std::vector<std::vector<network::VertexId>> collective_groups(const network::Topology& topology, int nodes) const;
};

}  // namespace dlsim::experiment
