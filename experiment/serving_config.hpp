// A serving scenario, validated (the serving: section, read by serving_yaml.cpp): an LLM served
// by replicas of the cluster's instance type, a request stream, continuous batching, latency
// targets.
//
//   cluster: {instance: aws/p4de.24xlarge, nodes: 2}
//   serving:
//     model: llama2-70b            # a decoder of the zoo
//     precision: fp16              # default: the device's training default
//     replicas: 4                  # each on `tensor` GPUs of one node
//     tensor: 4
//     requests:                    # a recorded trace ...
//       trace: {format: azure, path: ../../shared/data/traces/azure_llm_inference_2023/AzureLLMInferenceTrace_conv.csv}
//       limit: 1000                # the first N requests (default: all)
//     # ... or a synthetic stream: arrival poisson | gamma (cv: burstiness) | diurnal (amplitude,
//     #     period, peak: a daily cycle around the mean rate), rate (requests/s),
//     #     count or duration, prompt_tokens, output_tokens
//     batching: {max_batch_tokens: 8192, max_sequences: 256, chunked_prefill: true,
//                block_tokens: 16, memory_utilization: 0.9}
//     targets: {ttft: 2s, tpot: 200ms}   # goodput counts requests within both
//     disaggregated: {prefill_replicas: 2}   # optional: prefill and decode on separate replicas
//     scaling:                     # optional: replicas follow the load (replicas is the maximum)
//       {min_replicas: 0, initial_replicas: 0, target: 8, interval: 10s, keep_alive: 5min}
//     spot: {discount: 0.65, reclaim: {mean: 6h}, notice: 2min}   # optional: spot replicas
//     cold_start: {provisioning: 0s, container: 20s, load_bandwidth: 2GB/s, warmup: 20s}
//   output: {csv: requests.csv}    # one row per request
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "models/precision.hpp"
#include "models/serving_batcher.hpp"
#include "models/zoo.hpp"
#include "scheduler/serving_fleet.hpp"

namespace dlsim::experiment {

struct ServingRequestsConfig {
  // A recorded trace (path resolved against the scenario's folder), or a synthetic stream.
  std::string trace_path;
  std::string trace_format;   // "azure": TIMESTAMP,ContextTokens,GeneratedTokens
  long long limit = 0;        // 0: every request of the trace
  std::string arrival = "poisson";  // poisson | gamma | diurnal
  double rate = 0;            // requests per second
  double cv = 1;              // gamma: coefficient of variation of the gaps
  // diurnal: rate x (1 + amplitude cos(2 pi (t - peak) / period)), t from the stream's start
  double amplitude = 0.5, period_s = 86400, peak_s = 43200;
  long long count = 0;        // requests (or derived from duration x rate)
  double duration_s = 0;
  int prompt_tokens = 0;
  int output_tokens = 0;
};

struct ServingConfig {
  std::string model_name;
  models::DecoderConfig model;
  models::Precision precision = models::Precision::fp16;
  int replicas = 1;
  int tensor = 1;
  ServingRequestsConfig requests;
  models::BatchingPolicy batching;   // kv_blocks is derived from memory when the run starts
  double memory_utilization = 0.9;
  double ttft_target_s = 0;          // 0: no target
  double tpot_target_s = 0;
  // Autoscaling (serving.scaling; scaling.enabled false: `replicas` always on). Its
  // cold_start_s is derived when the run starts, from the parts below and the weights per GPU,
  // and also times the replacements of reclaimed spot replicas.
  scheduler::ServingScaling scaling;
  scheduler::ServingSpot spot;       // serving.spot (its seed is the scenario's)
  double spot_discount = 0;
  int prefill_replicas = 0;          // > 0: disaggregated, the first ones prefill, the rest decode
  double provisioning_s = 0;         // a node to run the replica on (0: a warm node is there)
  double container_s = 20;           // container start and framework initialisation
  double load_bandwidth = 2e9;       // bytes/s each GPU reads its weights at
  double warmup_s = 20;              // first iterations, CUDA graph capture
};

}  // namespace dlsim::experiment
