// Parameter-server data parallelism (Li et al., OSDI 2014): the gradient reduction of plain data
// parallelism replaced by pushes to and pulls from S server shards, each holding 1/S of the
// parameters and running the optimizer on its CPU.
//
// Workers are nodes: a node's replicas first reduce their bucket over the node's own links (a
// reduce to one accelerator) and broadcast the pulled parameters back (as MXNet's kvstore
// dist_device_sync and BytePS do). Per gradient bucket of G bytes, W worker nodes, node NIC B_w,
// server NIC B_s (bytes/s per direction), one-way latency a:
// - push: every worker sends G/S to each shard. Dedicated servers (their own CPU nodes): a
//   shard's NIC receives W G / S, a worker's sends G:  push = a + max(G / B_w, W G / (S B_s)).
//   Co-located servers (shard j on worker node j, S <= W): a server node's NIC receives
//   (W - 1) G / S for its shard while its worker sends (S - 1) G / S (its own shard's part stays
//   in the node); nodes without a shard (S < W) send G:
//   push = a + max((W - 1) G / S, S < W ? G : (S - 1) G / S) / B_w.
// - update: each shard aggregates the W pushes of its G/S bytes and steps the optimizer on its
//   elements (FP32 weights and states: optimizer_bytes_per_parameter), streamed through the
//   server's memory: (W G / S + n / S x optimizer bytes) / server memory bandwidth.
// - pull: the mirror of the push (the shards send, the workers receive), after the update.
// Phases run one after another per bucket on the data-parallel stream (push and pull of
// different buckets do not overlap here, a simplification: BytePS pipelines them).
//
// Synchronous: the iteration is the replay with these phases (every worker waits for the last
// push of each shard: the pull follows the aggregated update). Asynchronous with staleness bound
// k (Li et al.'s bounded delay): each push is applied alone (an update per push, W per
// iteration), and a worker starts iteration t + 1 without waiting for iteration t's pull, but
// not before the pull of iteration t - k. In the steady state of identical workers the cycle of
// one worker is
//   cycle = max(C, X, N_s, U_s, T_sync / (k + 1))
// C: its compute per iteration (the replay without exposed communication), X: the time its
// data-parallel stream is busy per iteration, N_s: a shard NIC's W G_all / (S B_s) per
// direction (dedicated; co-located: the node NIC's push-phase load), U_s: W single-push updates
// of a shard, T_sync: the replayed iteration (compute, then the last pull). Throughput is
// W replicas' samples per cycle; the staleness (iterations of a worker's own updates not yet in
// the parameters it computes on) is ceil(T_sync / cycle) - 1 <= k, the same for every
// iteration in the steady state.
#pragma once
#include <string>
#include <vector>

#include "models/gradient_compression.hpp"

namespace dlsim::models {

enum class ServerPlacement { dedicated, colocated };
std::string to_string(ServerPlacement p);  // "dedicated", "colocated"

struct ParameterServerConfig {
  bool enabled = false;                  // false: all-reduce data parallelism
  int servers = 1;                       // shards S
  ServerPlacement placement = ServerPlacement::dedicated;
  bool synchronous = true;
  int staleness = 0;                     // asynchronous: bound k on iterations ahead
  // Resolved figures (bytes/s, seconds): the experiment layer fills them from the instances.
  double worker_nic = 0;                 // a worker node's NIC, per direction
  double server_nic = 0;                 // a dedicated server's NIC, per direction
  double latency_s = 0;                  // one-way between nodes
  double server_memory_bandwidth = 0;    // a server CPU's memory bandwidth (co-located: the worker host's)
  int replicas_per_node = 1;             // data-parallel replicas sharing a worker node
  bool operator==(const ParameterServerConfig&) const = default;
};

// Seconds of one push (or pull) of `bytes` per worker with `workers` worker nodes.
double ps_transfer_time(const ParameterServerConfig& c, double bytes, int workers);
// Seconds the busiest NIC needs, per direction, for one push and one pull of `bytes` per worker
// (dedicated: a shard's W G / S, or a worker's G; co-located: a server node receives (W - 1) G / S
// pushes for its shard and (S - 1) G / S pulls for its worker).
double ps_nic_bound_time(const ParameterServerConfig& c, double bytes, int workers);
// Seconds a shard needs to apply `pushes` pushes of `elements` (all shards' elements) at
// `gradient_bytes` per element, with `optimizer_bytes` per parameter for the step; `aggregated`:
// one optimizer step for all the pushes (synchronous), else one per push (asynchronous).
double ps_update_time(const ParameterServerConfig& c, double elements, double gradient_bytes, double optimizer_bytes, int pushes,
                      bool aggregated);

// The phases of one gradient bucket of `bytes` (`elements` elements) on a worker's
// data-parallel stream: reduce over the node's replicas, push, the shard's update (synchronous:
// of all W pushes; asynchronous: of its own), pull, broadcast over the node's replicas.
std::vector<ReductionPhase> ps_reduction(const ParameterServerConfig& c, double bytes, double elements, int workers, double optimizer_bytes);

struct AsyncSteadyState {
  double cycle_s = 0;
  double staleness = 0;    // iterations
};
// The asynchronous cycle (see above) from the synchronous replay's figures.
AsyncSteadyState ps_async_steady_state(const ParameterServerConfig& c, double sync_iteration_s, double compute_s, double stream_busy_s,
                                       double server_nic_s, double server_update_s);

// Throws std::invalid_argument ("plan.parameter_server.<key>: why").
void validate_parameter_server(const ParameterServerConfig& c, int worker_nodes);

}  // namespace dlsim::models
