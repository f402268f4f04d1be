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
//     #     count or duration, prompt_tokens, output_tokens (a number, or {mean, cv}: lognormal
//     #     lengths, each request its own)
//     batching: {max_batch_tokens: 8192, max_sequences: 256, chunked_prefill: true,
//                block_tokens: 16, memory_utilization: 0.9}
//     targets: {ttft: 2s, tpot: 200ms}   # goodput counts requests within both
//     disaggregated: {prefill_replicas: 2}   # optional: prefill and decode on separate replicas
//     scaling:                     # optional: replicas follow the load (replicas is the maximum)
//       {min_replicas: 0, initial_replicas: 0, target: 8, interval: 10s, keep_alive: 5min}
//     spot: {discount: 0.65, reclaim: {mean: 6h}, notice: 2min}   # optional: spot replicas
//     cold_start: {provisioning: 0s, container: 20s, load_bandwidth: 2GB/s, warmup: 20s}
//     engine: vllm-0.5             # the engine's CPU time per iteration: gpu-only (default),
//                                  # vllm-0.5, or {per_iteration, per_sequence,
//                                  # worker_per_iteration, worker_per_sequence, overlap}
//   output: {csv: requests.csv}    # one row per request
//
// A model that is not a decoder (resnet50, bert-large, ...) answers one sample per request with
// one forward pass per batch (models/inference_pass.hpp): dynamic batching on the cluster's GPUs
//     batching: {policy: dynamic, max_batch: 8, max_wait: 5ms}
// or serverless functions (platform: function), one request per function instance at a time:
//     platform: function
//     function: {memory: 4096MB, profile: ../calibration/profiles/cpu-example.yaml,
//                keep_alive: 20min, concurrency: 1000, provisioned: 0,
//                price_gb_second: 0.0000166667, price_per_request: 0.0000002, bill_init: true}
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "models/device.hpp"
#include "models/model_graph.hpp"
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
  int prompt_tokens = 0;      // every request's, or the mean of a lognormal draw when its cv > 0
  int output_tokens = 0;
  double prompt_cv = 0;       // coefficient of variation of the lengths (0: all the same)
  double output_cv = 0;
};

// Serverless functions (serving.platform: function), as AWS Lambda bills and sizes them: CPU in
// proportion to memory (1,769 MB is one vCPU, at most 6 vCPUs at 10,240 MB: AWS Lambda
// developer guide, "Memory and computing power"), billed per GB-second of run time and per
// request (x86, us-east-1: 0.0000166667 USD per GB-s, 0.20 USD per million requests: AWS Lambda
// pricing), the initialisation of a new instance billed as run time (AWS bills the INIT phase
// since 2025-08-01). One request at a time per instance (Lambda's execution model).
struct FunctionConfig {
  double memory_bytes = 0;
  double memory_per_vcpu = 1769e6;   // bytes of memory that buy one vCPU
  double max_vcpus = 6;
  double vcpus = 0;                  // derived: min(max_vcpus, memory / memory_per_vcpu)
  double price_per_gb_second = 0.0000166667;
  double price_per_request = 0.2e-6;
  bool bill_init = true;
  int concurrency = 1000;            // instances at most (Lambda's default account limit)
  int provisioned = 0;               // instances kept warm (provisioned concurrency; not billed here)
  double keep_alive_s = 1200;        // idle time before an instance is recycled
  bool histogram_keep_alive = false; // keep_alive: histogram (scheduler::ServingScaling)
  double histogram_range_s = 4 * 3600.0;
  // One vCPU's speed: a CPU profile (dlsim calibrate --backend cpu) measured on one thread,
  // scaled to the function's vCPUs (its peaks and memory bandwidth times vcpus / the profile's
  // threads: a function's threads each get a vCPU's share of the host).
  std::string profile_path;
  models::DeviceSpec device;
  models::DeviceProfile profile;
};

struct ServingConfig {
  std::string model_name;
  models::DecoderConfig model;
  // A model served one sample per request (a CNN, an encoder): its graph; per_sample false for
  // decoders, which are served token by token.
  bool per_sample = false;
  models::ModelGraph sample_model;
  bool function = false;             // serving.platform: function (else replicas on the cluster's GPUs)
  FunctionConfig function_config;
  models::Precision precision = models::Precision::fp16;
  int replicas = 1;
  int tensor = 1;
  ServingRequestsConfig requests;
  models::BatchingPolicy batching;   // kv_blocks is derived from memory when the run starts
  double memory_utilization = 0.9;
  // serving.engine: the engine's CPU time per iteration (models::EngineOverhead): "gpu-only"
  // (default, none), "vllm-0.5" (measured, run between iterations), or its constants.
  std::string engine_name = "gpu-only";
  models::EngineOverhead engine;
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
