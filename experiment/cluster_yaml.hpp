// Cluster scenarios: many jobs on node pools over time (scheduler/cluster_simulation.hpp),
// recognised by a top-level `pools:` list. Schema in scenarios/README.md ("Cluster scenarios"):
//   pools: [{name, instance, nodes, capacity, price, discount, provisioning, reclaim, notice,
//            failure, replace_lost_nodes, nodes_per_leaf, nic_bandwidth, oversubscription,
//            autoscale: {policy, min, max, idle, cooldown, target, low, interval, window},
//            spot_trace, fallback, region, zone}]   (reclaim may be {fit: probe log}; market_yaml.hpp)
//   jobs: [{name, submit, gpus, pool, work (iterations | duration | data | tokens), iteration_time
//           (+ gradient_bytes, overlap) or model (+ batch_per_gpu, sequence_length, precision),
//           priority, queue, checkpoint, elastic}]   (cluster_job_yaml.hpp)
//   trace: {format, path, jobs, checkpoint, models} or {format: synthetic, jobs, mean_interarrival, ...}
//   scheduler: {policy, backfill, placement, las_thresholds, queue_weights, horizon}
//   billing: {granularity, minimum, inter_zone_usd_per_gb, inter_region_usd_per_gb}
//   sweep: {"key.path": [values], ...}   every combination is one variant (one row)
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/cluster_scenario.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// A reclamation or failure hazard at `key` of `parent`: {mean} (exponential) or {weibull_shape,
// weibull_scale}; none when the key is absent. Also read by serving scenarios (serving.spot.reclaim).
scheduler::Hazard read_hazard(MapReader& parent, const std::string& key);

// The `checkpoint` key of `parent` (a job, a trace, plan.spot): {policy: none|fixed|young-daly,
// interval, size, storage | write_bandwidth, read_bandwidth, warmup, storage_region,
// storage_zone}; policy none when the key is absent.
scheduler::CheckpointSpec read_checkpoint(MapReader& parent);

// Reads the whole cluster scenario from `root` (after --set overrides). `fresh_root` parses the
// same scenario again (with the --set overrides), so that each variant gets its own copy with
// its line numbers (yaml-cpp's Clone drops them). `base_dir` resolves relative trace paths.
// Throws ConfigError.
ClusterScenario read_cluster_scenario(const YAML::Node& root, const std::function<YAML::Node()>& fresh_root,
                                      const Source& source, const std::string& base_dir, std::uint64_t seed);

}  // namespace dlsim::experiment
