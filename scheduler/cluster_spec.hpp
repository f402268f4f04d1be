// What a multi-job cluster simulation is given: node pools and jobs. Plain, immutable data,
// validated by validate(); the simulation (cluster_simulation.hpp) holds all mutable state.
// Units: seconds, USD per node-hour, bytes, bytes/s.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/billing.hpp"
#include "scheduler/fabric_share.hpp"
#include "scheduler/hazard.hpp"
#include "scheduler/trace.hpp"
#include "scheduler/spot_market.hpp"

namespace dlsim::scheduler {

enum class Capacity { on_demand, spot, reserved };
std::string to_string(Capacity c);

struct PoolSpec {
  std::string name;
  std::string instance;             // instance type name (for reports)
  int gpus_per_node = 8;
  int nodes = 1;                    // nodes held from the start (ready at time 0)
  Capacity capacity = Capacity::on_demand;
  double price_per_node_hour = 0;   // what this capacity costs (spot: the discounted price)
  double provisioning_s = 300;      // mean delay from request to ready (exponential when random)
  bool provisioning_random = false;
  Hazard reclaim;                   // spot reclamation per node (none for on-demand)
  double notice_s = 120;            // warning before a reclamation (AWS: 2 min; GCP: 30 s)
  Hazard failure;                   // node failures (any capacity); no notice
  bool replace_lost_nodes = true;   // request a new node when one is reclaimed or fails
  int nodes_per_leaf = 16;          // topology-aware placement: nodes under one leaf switch
  // The fabric jobs share (fabric_share.hpp): each node's NIC, bytes/s per direction (0: not
  // modelled, jobs spanning nodes do not slow each other), and the leaf switches' uplinks, of
  // nodes_per_leaf x nic_bandwidth / oversubscription each.
  double nic_bandwidth = 0;
  double oversubscription = 1;
  // Reactive auto-scaling (Kubernetes Cluster Autoscaler style), on when max_nodes > nodes:
  // request nodes for queued jobs that do not fit (at most every scale_up_cooldown_s), release
  // a node idle for idle_timeout_s while the pool is above min_nodes.
  int min_nodes = 0;
  int max_nodes = -1;               // < 0: the pool stays at `nodes`
  double idle_timeout_s = 600;
  double scale_up_cooldown_s = 60;
  // Which auto-scaler decides (autoscaler.hpp: reactive, utilization, predictive) and its knobs.
  std::string autoscaler = "reactive";
  double target_utilization = 0.8;  // utilization: keep (busy + queued GPUs) / GPUs at or below
  double low_utilization = 0.4;     // utilization: release idle nodes only below this (< target)
  double scale_interval_s = 60;     // utilization, predictive: period of the evaluation tick
  double forecast_window_s = 3600;  // predictive: time constant of the arriving-demand rate
  bool autoscaled() const { return max_nodes > nodes; }
  // Spot market and billing (spot_market.hpp, billing.hpp).
  SpotMarket market;                // spot: replay a price history with a maximum price
  std::string fallback;             // "" or the pool that gets this pool's node requests when it
                                    // cannot give a node (market closed, or at max_nodes)
  std::string region, zone;         // where the nodes are ("": the one default region / zone)
  // Reserved: the starting `nodes` are a commitment billed over the whole run at
  // price_per_node_hour; nodes beyond it (auto-scaled) are billed at this on-demand price
  // (< 0: at price_per_node_hour).
  double on_demand_price_per_node_hour = -1;
  Location location() const { return {region, zone, false}; }
};

enum class CheckpointPolicy { none, fixed, young_daly };
std::string to_string(CheckpointPolicy p);

struct CheckpointSpec {
  CheckpointPolicy policy = CheckpointPolicy::none;
  double interval_s = 3600;         // fixed: running time between checkpoints
  double size_bytes = 0;            // model + optimizer state written
  double write_bandwidth = 1e9;     // bytes/s to checkpoint storage (the whole job's, or its cap)
  double read_bandwidth = 1e9;      // bytes/s when restoring
  // Each node writes and reads its shard at these (0: not per node): a job of n nodes moves
  // its checkpoint at min(n x per node, the whole job's bandwidth above).
  double write_bandwidth_per_node = 0;
  double read_bandwidth_per_node = 0;
  std::string storage_type;         // the storage kind it goes to (checkpoint.storage), or ""
  double warmup_s = 60;             // after restoring, before the first useful iteration
  double storage_price_per_gb_month = 0.023;  // S3 standard, us-east-1 (AWS price list, 2024)
  // Where the checkpoints are stored: a region (object storage, reached free from its zones) or,
  // with storage_zone, a zonal file system. Writes and reads that cross zones or regions pay
  // egress (billing.hpp).
  std::string storage_region, storage_zone;
  Location storage() const { return {storage_region, storage_zone, storage_zone.empty()}; }
  double write_s(int nodes) const { return size_bytes / job_bandwidth(write_bandwidth, write_bandwidth_per_node, nodes); }
  double read_s(int nodes) const { return size_bytes / job_bandwidth(read_bandwidth, read_bandwidth_per_node, nodes); }
  static double job_bandwidth(double whole, double per_node, int nodes) {
    return per_node > 0 ? std::min(whole, per_node * std::max(nodes, 1)) : whole;
  }
};

struct JobSpec {
  std::string name;
  double submit_s = 0;
  int gpus = 1;                     // gang: all at once
  std::string pool;                 // "" = any pool with room
  std::int64_t iterations = 1;      // work, in iterations (> 0)
  double iteration_s = 1;           // time of one iteration on `gpus` (> 0), inter-node communication aside
  // Inter-node communication per iteration: a data-parallel all-reduce of gradient_bytes over
  // the job's nodes (fabric_share.hpp), which may hide under overlap_s of the iteration
  // (backward). 0: none modelled; the iteration always takes iteration_s.
  double gradient_bytes = 0;
  double overlap_s = 0;
  int priority = 0;                 // higher first (priority policy)
  std::string queue;                // user / virtual cluster (fair share)
  std::string plan;                 // the parallel plan it runs, for reports ("" when unstated)
  CheckpointSpec checkpoint;
  // Elastic jobs (max_gpus > 0) start with at least min_gpus, grow up to max_gpus while GPUs are
  // free and nobody waits, and shrink back to min_gpus for waiting jobs; each resize pauses the
  // job for resize_pause_s (e.g. Elastic Horovod's re-rendezvous). iteration_s is the time at
  // `gpus`; at g GPUs an iteration takes iteration_s x gpus / g (linear scaling, an assumption),
  // unless `sizes` lists the sizes it may take with their own times.
  int min_gpus = 0;
  int max_gpus = 0;
  double resize_pause_s = 0;
  // Elastic jobs re-planned at each size (a planned model-parallel job): the sizes it may take,
  // ascending, each with its own iteration time and plan; it then resizes only to these and
  // runs at their times instead of scaling linearly. Empty: any size, linear scaling.
  struct Size {
    int gpus = 0;
    double iteration_s = 0;
    std::string plan;
  };
  std::vector<Size> sizes;
  bool elastic() const { return max_gpus > 0; }
  int start_gpus() const { return elastic() ? min_gpus : gpus; }
};

struct ClusterSpec {
  std::vector<PoolSpec> pools;
  std::vector<JobSpec> jobs;
  BillingRule billing;
  EgressPrices egress;              // data transfer prices (checkpoint writes and reads, job traffic)
  // Between two regions, one link of this many bytes/s per direction, shared by every job whose
  // all-reduce ring crosses it (fabric_share.hpp). 10 Gbps by default, a dedicated interconnect's
  // usual port (AWS Direct Connect, GCP Dedicated Interconnect offer 10 and 100 Gbps ports).
  double wan_bandwidth = 1.25e9;
  // How jobs on shared links slow each other: the mean-rate fixed point (fast, the default) or a
  // flow-level co-simulation of their iterations (fabric_share.hpp).
  FabricSharing fabric_sharing = FabricSharing::analytical;
};

// Throws std::invalid_argument naming the pool or job and the field.
void validate(const ClusterSpec& spec);

// A trace job as a JobSpec: its recorded duration becomes whole iterations of about a second
// (iterations x iteration_s equals the duration), its queue kept; no warm-up, no checkpoints.
JobSpec job_spec_from_trace(const TraceJob& job);

// The most GPUs `job` could ever hold: every pool at its largest when the job names no pool (a
// gang may span pools, zones and regions), else its pool and that pool's fallback chain.
int max_gpus_for(const ClusterSpec& spec, const JobSpec& job);

}  // namespace dlsim::scheduler
