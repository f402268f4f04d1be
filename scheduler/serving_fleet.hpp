// A fleet of LLM serving replicas on the event engine: requests arrive, a router sends each to
// a replica, every replica runs iterations back to back while it has work (continuous batching,
// models/serving_batcher.hpp) and idles otherwise. The caller gives each iteration's time.
//
// Routing: a request waits in the fleet's queue until a ready replica has room (fewer requests
// in it than its sequence limit, max_sequences: a concurrency limit as Knative's activator
// keeps), then goes to the one with the fewest requests; among equals, round robin from the last
// one chosen. Every request either completes or is counted as dropped (it can never fit a replica's
// KV cache or, without chunked prefill, its token budget).
#pragma once
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "models/serving_batcher.hpp"
#include "scheduler/hazard.hpp"

namespace dlsim::scheduler {

struct ServingRequest {
  double arrival_s = 0;
  int prompt_tokens = 1;
  int output_tokens = 1;
};

// What happened to one request. Times are seconds from the start; NaN where it did not happen.
struct ServedRequest {
  int replica = -1;             // the replica that prefilled it (and, unless disaggregated, decoded it)
  int decode_replica = -1;      // disaggregated: the replica that decoded it
  int reclaims = 0;             // spot: times its replica was reclaimed under it
  double kv_transfer_s = 0;     // disaggregated: moving its K and V between them
  bool dropped = false;
  double first_token_s = 0;
  double finish_s = 0;
  int preemptions = 0;
  double max_token_gap_s = 0;   // longest wait between two of its tokens
};

// One point of the fleet's state over time (at every iteration start).
struct FleetSample {
  double time_s = 0;
  int replica = 0;
  int running = 0, waiting = 0;
  std::int64_t blocks_used = 0;
  int tokens = 0;               // of the iteration that starts
  int decodes = 0, prefills = 0;  // its decode sequences and prefill chunks
  double iteration_s = 0;
};

// Replicas added and removed on load, with cold starts (Knative- and KServe-style concurrency
// scaling). Every `interval_s` the fleet wants ceil(requests in it / target_per_replica)
// replicas, within [min_replicas, max_replicas]: more start at once, each ready `cold_start_s`
// later (the caller sums provisioning, container start, weight loading and warm-up); fewer stop
// only after the want has stayed below the replicas for `keep_alive_s`, the least loaded first,
// each draining its requests before it stops. With min_replicas 0 the fleet scales to zero,
// and a request that finds no replica starts one at once. Requests wait in the fleet's queue
// while no replica is ready.
// What the want follows: requests in the fleet per replica (concurrency, as Knative), arrivals
// per second per replica over the last interval, or the time to first token: one replica more
// while the last interval's p90 is above the target, one fewer while it is below half of it.
// per_request: a function platform (AWS Lambda, Azure Functions): no periodic decision; a request
// that finds no replica with room and none starting for it starts one at once (a cold start),
// and a replica stops once it has been idle for keep_alive_s (never below min_replicas: those
// are provisioned and stay warm). target_per_replica and interval_s are unused.
enum class ScalingMetric { requests, rate, latency, per_request };

struct ServingScaling {
  bool enabled = false;
  ScalingMetric metric = ScalingMetric::requests;
  int min_replicas = 1;
  int max_replicas = 1;
  int initial_replicas = 1;       // ready at time 0
  double target_per_replica = 8;  // requests: requests in a replica; rate: requests/s per replica;
                                  // latency: the p90 time to first token, seconds
  double interval_s = 10;
  double keep_alive_s = 300;
  double cold_start_s = 0;
  // Per-request scaling: keep an idle instance warm for a window learned from the function's
  // idle times instead of keep_alive_s: the keep-alive part of the hybrid histogram policy of
  // Shahrad et al. (ATC 2020, "Serverless in the Wild"). An idle time runs from the moment the
  // function has no request in flight to its next arrival; they fill a histogram of 1-minute bins
  // over `histogram_range_s` (4 hours in the paper). The window is the 99th percentile's bin end
  // plus 10%; while the histogram is not representative (fewer than 10 idle times, a coefficient
  // of variation of its bin counts under 2, or half of the idle times beyond the range) it is the
  // whole range. The paper's pre-warming (unloading, then loading again at the 5th percentile)
  // and its ARIMA fallback are not modelled.
  bool histogram_keep_alive = false;
  double histogram_range_s = 4 * 3600.0;
};

// What scaling did (all zero without it).
struct ScalingRecord {
  std::int64_t cold_starts = 0;
  std::int64_t reclaims = 0;        // spot replicas reclaimed
  double replica_seconds = 0;       // replicas on (starting, ready or draining), integrated over time
  double spot_replica_seconds = 0;  // of those, on spot capacity
  int peak_replicas = 0;
  std::vector<std::pair<double, int>> replicas_over_time;  // (time, replicas on) at every change
  std::vector<double> fleet_wait_s;  // per request: time in the fleet's queue before a replica took it
};

struct FleetResult {
  std::vector<ServedRequest> requests;   // in the order given
  std::vector<float> token_gaps_s;       // every gap between consecutive tokens of a request
  std::vector<double> busy_s;            // per replica: time in iterations
  std::vector<std::int64_t> iterations;  // per replica
  double end_s = 0;                      // the last iteration's end (or the last arrival)
  double kv_block_seconds = 0;           // sum over iterations of blocks used x its time
  std::int64_t kv_blocks = 0;            // per replica
  std::int64_t preemptions = 0;
  std::vector<FleetSample> samples;      // only when asked (keep_samples)
  ScalingRecord scaling;
};

using IterationTime = std::function<double(const models::ServingBatch&)>;

// Prefill and decode on separate replicas (Splitwise, Patel et al. ISCA 2024; DistServe, Zhong
// et al. OSDI 2024): the first `prefill_replicas` run prompts only (ReplicaRole::prefill); at its
// first token a request's K and V move to the least loaded decode replica (`transfer_s`, the
// caller's link model) and it decodes there. Requests of one output token end at the prefill.
struct ServingDisaggregation {
  bool enabled = false;
  int prefill_replicas = 1;
  std::function<double(int prompt_tokens, int from_replica, int to_replica)> transfer_s;
};

// Replicas on spot capacity: each is reclaimed after a time drawn from `reclaim` (counted from
// its start, cold start included; one random stream from `seed`). From `notice_s` before, it
// takes no new request; when reclaimed, every request it holds goes back to the front of the
// fleet's queue and resumes on another replica (its prompt and generated tokens prefilled
// again), and a replacement starts at once, ready after the cold start (ServingScaling's
// cold_start_s, also without autoscaling): on spot again, or on on-demand capacity, never
// reclaimed, with `fallback_on_demand`. Replicas the autoscaler adds start on spot.
struct ServingSpot {
  bool enabled = false;
  Hazard reclaim;
  double notice_s = 120;
  std::uint64_t seed = 1;
  bool fallback_on_demand = false;  // a reclaimed replica's replacement runs on on-demand capacity
};

// `requests` in non-decreasing arrival order (std::invalid_argument otherwise). Deterministic.
// Without scaling (scaling.enabled false) all `replicas` are ready from time 0.
FleetResult simulate_fleet(const std::vector<ServingRequest>& requests, int replicas, const models::BatchingPolicy& policy,
                           const IterationTime& iteration_time, bool keep_samples = false,
                           const ServingScaling& scaling = {}, const ServingDisaggregation& disaggregation = {},
                           const ServingSpot& spot = {});

}  // namespace dlsim::scheduler
