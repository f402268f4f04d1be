// Auto-scalers: functions from a read-only view of one node pool (its nodes by state, the GPUs
// queued jobs ask for, the arrivals so far, now) to decisions (nodes to request, idle nodes to
// release). The simulation builds the view, asks the pool's auto-scaler, and applies what it
// decides within the pool's bounds; no code branches on an auto-scaler's name. A new
// auto-scaler implements Autoscaler and is added to make_autoscaler; the engine is unchanged.
//
// When the simulation asks (ScaleTrigger):
//   pass          after every scheduling pass (queued jobs that did not fit are in the view)
//   tick          every interval_s() of simulated time, from time 0, when interval_s() > 0
//   idle_timeout  a node has been idle for the pool's idle timeout (view.idle_node)
// Units: seconds, GPUs, nodes.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "scheduler/cluster_spec.hpp"

namespace dlsim::scheduler {

struct Arrival {
  double t_s = 0;
  int gpus = 0;                 // GPUs the job asks for at start
  int pool = -1;                // the pool it must run in (-1: any)
};

struct IdleNode {
  int id = 0;                   // node id (the simulation's)
  double idle_since_s = 0;
};

struct PoolScaleView {
  int pool = 0;                 // index into ClusterSpec::pools
  int gpus_per_node = 8;
  int nodes_provisioning = 0;   // requested, not ready yet
  int nodes_ready = 0;          // in service, no job on them (idle)
  int nodes_busy = 0;           // in service, at least one job
  int nodes_draining = 0;       // spot notice received: leaving
  int busy_gpus = 0;            // GPUs held by jobs
  std::vector<IdleNode> idle;   // the ready nodes, longest idle first (ties: lower id first)
  double last_scale_up_s = -1;  // last request of nodes (-1: never)

  int live_nodes() const { return nodes_provisioning + nodes_ready + nodes_busy + nodes_draining; }
  int in_service_gpus() const { return (nodes_ready + nodes_busy) * gpus_per_node; }
  int free_gpus() const { return in_service_gpus() - busy_gpus; }
  int provisioning_gpus() const { return nodes_provisioning * gpus_per_node; }
};

enum class ScaleTrigger { pass, tick, idle_timeout };

struct AutoscaleView {
  double now_s = 0;
  ScaleTrigger trigger = ScaleTrigger::pass;
  int idle_node = -1;           // idle_timeout: the node whose timeout expired now
  PoolScaleView pool;
  // GPUs asked by queued jobs (after a pass: those that did not fit), less what auto-scaled pools
  // before this one requested for them in the same round. Jobs of every pool count (as in
  // Kubernetes' Cluster Autoscaler, which simulates pending pods on each node group).
  int unplaced_gpus = 0;
  // Every arrival so far, in time order; a later view's list extends an earlier one's.
  std::span<const Arrival> arrivals;
};

struct ScaleDecision {
  int add_nodes = 0;            // nodes to request now
  std::vector<int> release;     // idle nodes (ids from view.pool.idle) to terminate now
};

class Autoscaler {
 public:
  virtual ~Autoscaler() = default;
  virtual std::string name() const = 0;
  virtual ScaleDecision decide(const AutoscaleView& view) const = 0;
  // > 0: the simulation also asks every this many seconds (ScaleTrigger::tick).
  virtual double interval_s() const { return 0; }
};

// The auto-scaler a pool asks for (PoolSpec::autoscaler with its parameters):
//   reactive     request nodes for queued jobs that do not fit (Cluster Autoscaler style);
//                release a node idle for the idle timeout
//   utilization  keep (busy + queued GPUs) / GPUs at or below a target, on a periodic tick
//                (Horizontal Pod Autoscaler style); release idle nodes when utilization is low
//   predictive   the reactive rule plus headroom for the GPU demand forecast to arrive within
//                one provisioning delay (DemandRate over a window)
// Throws std::invalid_argument for an unknown name, listing the known ones.
std::unique_ptr<Autoscaler> make_autoscaler(const PoolSpec& pool);
std::vector<std::string> autoscaler_names();

}  // namespace dlsim::scheduler
