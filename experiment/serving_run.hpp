// Running a serving scenario: the request stream (a trace or a synthetic one), one replica's
// iteration model (models/serving_iteration.hpp) on the cluster's device and node links, the
// fleet on the engine (scheduler/serving_fleet.hpp), and what users read from it: latencies,
// throughput, goodput under the targets, KV-cache use, cost per million tokens.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "experiment/results.hpp"
#include "experiment/scenario.hpp"
#include "experiment/table.hpp"
#include "scheduler/serving_fleet.hpp"

namespace dlsim::experiment {

// The scenario's requests, in arrival order (seconds from the first arrival of a trace).
// Synthetic streams draw from the scenario's seed. Throws ConfigError for a malformed trace
// (file:line:column and why).
std::vector<scheduler::ServingRequest> serving_requests(const ServingConfig& c, std::uint64_t seed);

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
};

struct ServingResults {
  std::string dlsim_version;
  std::string model, instance, device, precision;
  std::string engine;                 // serving.engine's name ("gpu-only", "vllm-0.5", "custom")
  models::EngineOverhead engine_overhead;
  int replicas = 0, tensor = 0, nodes = 0;
  double weight_bytes = 0;            // per GPU
  double kv_capacity_tokens = 0;      // per replica
  std::int64_t kv_blocks = 0;         // per replica
  std::string kv_reservation;         // how sequences hold the cache, in words (models::KvReservation)
  long long requests = 0, completed = 0, dropped = 0;
  double prompt_tokens = 0, output_tokens = 0;   // of completed requests
  double duration_s = 0;              // first arrival to last token
  Percentiles ttft_s, tpot_s, e2e_s, itl_s;      // over completed requests (itl: every token gap)
  double output_tokens_per_s = 0, requests_per_s = 0;
  double goodput_requests_per_s = 0;  // completed within both targets (all completed without targets)
  double within_targets = 0;          // fraction of requests (dropped count as missed)
  double kv_utilization = 0;          // time-weighted mean of blocks used / blocks, over busy time
  double busy_fraction = 0;           // replicas' time in iterations / (replicas x duration)
  std::int64_t preemptions = 0, iterations = 0;
  double cost_usd = 0, usd_per_million_output_tokens = 0, usd_per_million_tokens = 0, usd_per_1000_requests = 0;
  double ttft_target_s = 0, tpot_target_s = 0;
  // Autoscaling (zero without serving.scaling): the cold start and its parts, and what the
  // fleet did.
  bool autoscaled = false;
  double cold_start_s = 0, weight_load_s = 0;
  std::int64_t cold_starts = 0;
  std::int64_t waited_requests = 0;   // requests that waited in the fleet's queue (functions: for a cold start)
  bool histogram_keep_alive = false;
  int peak_replicas = 0;
  double replica_hours = 0;
  std::vector<std::pair<double, int>> replicas_over_time;
  // Spot replicas (zero otherwise): reclamations, and requests that lost their replica.
  bool spot = false, spot_fallback = false;
  std::int64_t reclaims = 0, resumed_requests = 0;
  double spot_replica_hours = 0;      // of replica_hours, on spot capacity
  // Disaggregated prefill and decode (zero otherwise).
  int prefill_replicas = 0;
  Percentiles kv_transfer_s;
  // Models served one sample per request (CNNs, encoders): their end-to-end latency is also
  // their "time to first token"; serverless functions: their size and the GB-seconds billed.
  bool per_sample = false, function = false;
  double function_vcpus = 0, function_memory_bytes = 0, billed_gb_seconds = 0;
  std::vector<scheduler::ServingRequest> request_list;
  std::vector<scheduler::ServedRequest> served;
  std::vector<scheduler::FleetSample> replica0_iterations;  // only with output.trace
};

// Why a replica of the scenario cannot run (its device has no kernel profile, the model does
// not split, the weights leave no KV cache, batching.max_length exceeds the KV cache), and the
// key under serving to blame (what to change: "batching" or "tensor"); `why` is empty when it
// can run. The loader's check.
struct ServingProblem {
  std::string key;
  std::string why;
};
ServingProblem serving_problem(const ServingConfig& c, const ClusterConfig& cluster);

// Throws ConfigError when the replica cannot be built (no kernel profile for the device, the
// weights leave no room for a KV cache).
ServingResults run_serving(const Scenario& s);

void print_serving(std::ostream& out, const ServingResults& r);
// The run as one row of typed columns (latency percentiles, throughput, goodput, cost, cold
// starts): what `dlsim sweep` stacks and `dlsim validate` checks.
Table serving_table(const ServingResults& r);
// What the results files hold for a serving run: the one-row table, and the tables "requests"
// (one row per request, as output.csv) and "replicas_over_time" (time_s, replicas at every
// change). Fills `out.table` and `out.extra_tables`.
void serving_tables(const ServingResults& r, Results& out);
// One row per request: arrival, tokens, replica, first token, finish, latencies, preemptions.
// Written atomically.
void write_serving_csv(const std::string& path, const ServingResults& r);
// Replica 0's iterations as a Chrome/Perfetto trace (open in ui.perfetto.dev): one slice per
// iteration (its tokens, decodes and prefill chunks), counters of its KV blocks, running and
// waiting sequences. Written atomically.
void write_serving_trace(const std::string& path, const ServingResults& r);

}  // namespace dlsim::experiment
