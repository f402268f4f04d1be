// A fleet of LLM serving replicas on the event engine: requests arrive, a router sends each to
// a replica, every replica runs iterations back to back while it has work (continuous batching,
// models/serving_batcher.hpp) and idles otherwise. The caller gives each iteration's time.
//
// Routing: to the replica with the fewest requests in it (queued or running); among equals, round
// robin from the last one chosen. Every request either completes or is counted as dropped (it can never fit a replica's
// KV cache or, without chunked prefill, its token budget).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/serving_batcher.hpp"

namespace dlsim::scheduler {

struct ServingRequest {
  double arrival_s = 0;
  int prompt_tokens = 1;
  int output_tokens = 1;
};

// What happened to one request. Times are seconds from the start; NaN where it did not happen.
struct ServedRequest {
  int replica = -1;
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
  double iteration_s = 0;
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
};

using IterationTime = std::function<double(const models::ServingBatch&)>;

// `requests` in non-decreasing arrival order (std::invalid_argument otherwise). Deterministic.
FleetResult simulate_fleet(const std::vector<ServingRequest>& requests, int replicas, const models::BatchingPolicy& policy,
                           const IterationTime& iteration_time, bool keep_samples = false);

}  // namespace dlsim::scheduler
