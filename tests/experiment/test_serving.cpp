// Serving scenarios (experiment/serving_run.hpp): loading with located errors, a synthetic
// stream end to end, the same results for the same seed, the Azure trace when it is there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "experiment/load.hpp"
#include "experiment/serving_run.hpp"

namespace dlsim::experiment {
namespace {

std::string synthetic(const std::string& serving_extra = "", const std::string& requests_extra = "") {
  return "seed: 7\n"
         "cluster: {instance: aws/p5.48xlarge, nodes: 1}\n"
         "serving:\n"
         "  model: llama2-7b\n"
         "  replicas: 2\n"
         "  tensor: 2\n" +
         serving_extra +
         "  requests: {arrival: poisson, rate: 20, count: 300, prompt_tokens: 600, output_tokens: 80" + requests_extra + "}\n"
         "  targets: {ttft: 500ms, tpot: 50ms}\n";
}

std::string source_dir() {
  const char* dir = std::getenv("DLSIM_SOURCE_DIR");
  return dir ? dir : ".";
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "s.yaml");
  } catch (const ConfigError& e) {
    return std::string(e.what());
  }
  return "";
}

TEST(Serving, ASyntheticStreamIsServedCompletelyWithConsistentFigures) {
  const Scenario s = load_scenario_text(synthetic(), "s.yaml");
  ASSERT_TRUE(s.serving);
  EXPECT_EQ(s.kind(), "serving");
  const ServingResults r = run_serving(s);
  EXPECT_EQ(r.requests, 300);
  EXPECT_EQ(r.completed, 300);
  EXPECT_EQ(r.dropped, 0);
  EXPECT_DOUBLE_EQ(r.output_tokens, 300.0 * 80);
  EXPECT_EQ(r.nodes, 1);
  for (std::size_t i = 0; i < r.served.size(); ++i) {
    EXPECT_GE(r.served[i].first_token_s, r.request_list[i].arrival_s);
    EXPECT_GE(r.served[i].finish_s, r.served[i].first_token_s);
    EXPECT_TRUE(r.served[i].replica == 0 || r.served[i].replica == 1);
  }
  EXPECT_GT(r.ttft_s.p50, 0);
  EXPECT_LE(r.ttft_s.p50, r.ttft_s.p99);
  EXPECT_LE(r.tpot_s.p50, r.tpot_s.p90);
  EXPECT_GT(r.busy_fraction, 0);
  EXPECT_LE(r.busy_fraction, 1 + 1e-9);
  EXPECT_GE(r.kv_utilization, 0);
  EXPECT_LE(r.kv_utilization, 1);
  // One p5 node, billed for the span.
  EXPECT_NEAR(r.cost_usd, s.cluster.instance.price_per_hour * r.duration_s / 3600, 1e-9);
  EXPECT_NEAR(r.usd_per_million_output_tokens, r.cost_usd / r.output_tokens * 1e6, 1e-9);
  // Decoding 7B on an H100 takes milliseconds per token, not microseconds or seconds.
  EXPECT_GT(r.tpot_s.p50, 2e-3);
  EXPECT_LT(r.tpot_s.p50, 50e-3);
}

TEST(Serving, TheSameSeedGivesTheSameResultsAndAnotherSeedOtherArrivals) {
  const ServingResults a = run_serving(load_scenario_text(synthetic(), "s.yaml"));
  const ServingResults b = run_serving(load_scenario_text(synthetic(), "s.yaml"));
  ASSERT_EQ(a.served.size(), b.served.size());
  for (std::size_t i = 0; i < a.served.size(); ++i) {
    EXPECT_EQ(a.request_list[i].arrival_s, b.request_list[i].arrival_s);
    EXPECT_EQ(a.served[i].finish_s, b.served[i].finish_s);
  }
  const ServingResults c = run_serving(load_scenario_text(synthetic(), "s.yaml", {"seed=8"}));
  EXPECT_NE(a.request_list[5].arrival_s, c.request_list[5].arrival_s);
}

TEST(Serving, StaticBatchingMakesRequestsWaitForWholeBatches) {
  const ServingResults continuous = run_serving(load_scenario_text(synthetic(), "s.yaml", {"serving.replicas=1"}));
  const ServingResults batched =
      run_serving(load_scenario_text(synthetic(), "s.yaml", {"serving.replicas=1", "serving.batching.policy=static"}));
  EXPECT_EQ(batched.completed, 300);
  EXPECT_GT(batched.ttft_s.p50, 2 * continuous.ttft_s.p50);
  EXPECT_EQ(batched.preemptions, 0) << "whole answers are reserved";
}

// The vLLM paper's Orca baselines on one replica under load: reserving each whole request, or
// the model's 4,096-token context for every sequence, batches fewer sequences (each iteration
// spreads over fewer tokens of decode), so requests queue longer than with paged blocks; the
// reserving policies are never preempted. The run's summary names the policy.
TEST(Serving, ReservingTheKvCacheAsOrcaDidQueuesRequestsLonger) {
  const std::vector<std::string> load = {"serving.replicas=1", "serving.requests.rate=60", "serving.batching.memory_utilization=0.3"};
  const auto with = [&](const std::string& reservation) {
    std::vector<std::string> sets = load;
    if (!reservation.empty()) sets.push_back("serving.batching.kv_reservation=" + reservation);
    return run_serving(load_scenario_text(synthetic(), "s.yaml", sets));
  };
  const ServingResults paged = with(""), request = with("request"), longest = with("max-length");
  for (const ServingResults* r : {&paged, &request, &longest}) EXPECT_EQ(r->completed, 300);
  EXPECT_EQ(request.preemptions, 0);
  EXPECT_EQ(longest.preemptions, 0);
  EXPECT_GT(longest.ttft_s.mean, request.ttft_s.mean);
  EXPECT_GE(request.ttft_s.mean, paged.ttft_s.mean);
  std::ostringstream printed;
  print_serving(printed, longest);
  EXPECT_NE(printed.str().find("4096 tokens reserved per sequence"), std::string::npos) << printed.str();
  // Errors where they are written: an unknown policy, a length without max-length, a policy
  // given to static batching.
  EXPECT_NE(error_of(synthetic("  batching: {kv_reservation: whole}\n")).find("serving.batching.kv_reservation"), std::string::npos);
  EXPECT_NE(error_of(synthetic("  batching: {max_length: 2048}\n")).find("serving.batching.max_length"), std::string::npos);
  EXPECT_NE(error_of(synthetic("  batching: {policy: static, kv_reservation: request}\n")).find("static batching reserves"),
            std::string::npos);
  const std::string too_long = error_of(synthetic("  batching: {kv_reservation: max-length, max_length: 10000000}\n"));
  EXPECT_NE(too_long.find("serving.batching: max_length 10000000 tokens per sequence exceed the KV cache"), std::string::npos)
      << too_long;
}

TEST(Serving, MoreLoadWaitsLongerAndBurstierArrivalsToo) {
  const ServingResults base = run_serving(load_scenario_text(synthetic(), "s.yaml"));
  const ServingResults busy = run_serving(load_scenario_text(synthetic(), "s.yaml", {"serving.replicas=1"}));
  EXPECT_GT(busy.ttft_s.p90, base.ttft_s.p90);
  EXPECT_GT(busy.busy_fraction, base.busy_fraction);
  const ServingResults bursty =
      run_serving(load_scenario_text(synthetic("", ""), "s.yaml", {"serving.requests.arrival=gamma", "serving.requests.cv=4"}));
  EXPECT_GT(bursty.ttft_s.p99, base.ttft_s.p99);
}

TEST(Serving, AutoscalingFromZeroChargesTheColdStartToTheFirstRequestAndBillsReplicaHours) {
  const std::string scaling =
      "  scaling: {min_replicas: 0, initial_replicas: 0, target: 4, interval: 5s, keep_alive: 30s}\n"
      "  cold_start: {provisioning: 10s, container: 5s, load_bandwidth: 1GB/s, warmup: 3s}\n";
  const Scenario s = load_scenario_text(synthetic(scaling), "s.yaml");
  ASSERT_TRUE(s.serving->scaling.enabled);
  EXPECT_EQ(s.serving->scaling.max_replicas, 2);
  const ServingResults r = run_serving(s);
  ASSERT_TRUE(r.autoscaled);
  // The cold start is its parts: the weights per GPU (7B over 2 GPUs, fp16) at 1 GB/s.
  EXPECT_NEAR(r.weight_load_s, r.weight_bytes / 1e9, 1e-12);
  EXPECT_NEAR(r.cold_start_s, 10 + 5 + r.weight_load_s + 3, 1e-12);
  EXPECT_GE(r.cold_starts, 1);
  EXPECT_EQ(r.completed, 300);
  // The first request found no replica: its first token comes after a whole cold start.
  EXPECT_GE(r.served[0].first_token_s - r.request_list[0].arrival_s, r.cold_start_s);
  // Billed for the GPUs' share of the node while replicas are on.
  EXPECT_NEAR(r.cost_usd, r.replica_hours * 2 * s.cluster.instance.price_per_hour / 8, 1e-9);
  EXPECT_GT(r.replica_hours, r.cold_starts * r.cold_start_s / 3600 - 1e-12);
  EXPECT_EQ(r.replicas_over_time.front(), (std::pair<double, int>{0.0, 0}));
  EXPECT_EQ(r.replicas_over_time.back().second, 0) << "back to zero after the keep-alive";
  // Always-on replicas answer the first request at once.
  const ServingResults fixed = run_serving(load_scenario_text(synthetic(), "s.yaml"));
  EXPECT_LT(fixed.served[0].first_token_s - fixed.request_list[0].arrival_s, 1.0);
  EXPECT_FALSE(fixed.autoscaled);
  EXPECT_EQ(fixed.cold_starts, 0);
}

TEST(Serving, DisaggregatedPrefillAndDecodeKeepPromptsFromDelayingTokens) {
  // Long prompts arriving while others decode: in a mixed fleet, decoding waits behind prompt chunks.
  const std::string base = synthetic("", "");
  const std::vector<std::string> sets{"serving.requests.prompt_tokens=6000", "serving.requests.rate=4"};
  const ServingResults mixed = run_serving(load_scenario_text(base, "s.yaml", sets));
  const ServingResults split = run_serving(load_scenario_text(synthetic("  disaggregated: {prefill_replicas: 1}\n"), "s.yaml", sets));
  ASSERT_EQ(split.prefill_replicas, 1);
  EXPECT_EQ(split.completed, 300);
  for (const scheduler::ServedRequest& x : split.served) {
    EXPECT_EQ(x.replica, 0);
    EXPECT_EQ(x.decode_replica, 1);
    // Same node: NVLink. 6000 tokens of Llama-2-7B K and V per rank (32 layers x 2 x 2048 x 2 B).
    EXPECT_GT(x.kv_transfer_s, 0);
  }
  EXPECT_LT(split.itl_s.p99, mixed.itl_s.p99) << "no prompt chunk between two tokens";
  const std::string one = error_of(synthetic("  disaggregated: {prefill_replicas: 2}\n"));
  EXPECT_NE(one.find("serving.disaggregated.prefill_replicas"), std::string::npos) << one;
  const std::string with_scaling = error_of(synthetic("  disaggregated: {prefill_replicas: 1}\n  scaling: {min_replicas: 1}\n"));
  EXPECT_NE(with_scaling.find("serving.scaling"), std::string::npos) << with_scaling;
}

TEST(Serving, ATraceHoldsReplicaZerosIterationsAndItsCounters) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dlsim-serving-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "t.json").string();
  const ServingResults r = run_serving(load_scenario_text(synthetic(), "s.yaml", {"output.trace=" + trace}));
  ASSERT_FALSE(r.replica0_iterations.empty());
  for (const scheduler::FleetSample& x : r.replica0_iterations) EXPECT_EQ(x.replica, 0);
  write_serving_trace(trace, r);
  std::ifstream in(trace);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t slices = 0;
  for (std::size_t at = text.find("\"ph\":\"X\""); at != std::string::npos; at = text.find("\"ph\":\"X\"", at + 1)) ++slices;
  EXPECT_EQ(slices, r.replica0_iterations.size());
  EXPECT_NE(text.find("KV blocks"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 4), "\n]}\n");
  // Without output.trace nothing is kept.
  EXPECT_TRUE(run_serving(load_scenario_text(synthetic(), "s.yaml")).replica0_iterations.empty());
  std::filesystem::remove_all(dir);
}

TEST(Serving, SpotReplicasAreReclaimedReplacedAndBilledAtTheirDiscount) {
  const std::string spot = "  spot: {discount: 0.6, reclaim: {mean: 20s}, notice: 1s}\n"
                           "  cold_start: {container: 5s, load_bandwidth: 10GB/s, warmup: 1s}\n";
  const std::vector<std::string> long_answers{"serving.requests.output_tokens=2000", "serving.requests.rate=2"};
  const Scenario s = load_scenario_text(synthetic(spot), "s.yaml", long_answers);
  const ServingResults r = run_serving(s);
  ASSERT_TRUE(r.spot);
  EXPECT_EQ(r.completed, 300) << "reclaimed requests resume elsewhere";
  EXPECT_GT(r.reclaims, 0);
  EXPECT_GT(r.resumed_requests, 0);
  EXPECT_EQ(r.cold_starts, r.reclaims) << "every reclaimed replica is replaced";
  EXPECT_NEAR(r.cost_usd, r.replica_hours * 2 * s.cluster.instance.price_per_hour / 8 * 0.4, 1e-9);
  const ServingResults steady = run_serving(load_scenario_text(synthetic(), "s.yaml", long_answers));
  EXPECT_EQ(steady.reclaims, 0);
  EXPECT_GT(r.e2e_s.p99, steady.e2e_s.p99) << "work redone after reclamations";
  const std::string fallback = "  spot: {discount: 0.6, reclaim: {mean: 20s}, notice: 1s, fallback: on-demand}\n"
                               "  cold_start: {container: 5s, load_bandwidth: 10GB/s, warmup: 1s}\n";
  const ServingResults f = run_serving(load_scenario_text(synthetic(fallback), "s.yaml", long_answers));
  ASSERT_TRUE(f.spot_fallback);
  EXPECT_EQ(f.completed, 300);
  EXPECT_LT(f.spot_replica_hours, f.replica_hours);
  const double billed = (f.replica_hours - f.spot_replica_hours) + 0.4 * f.spot_replica_hours;
  EXPECT_NEAR(f.cost_usd, billed * 2 * s.cluster.instance.price_per_hour / 8, 1e-9);
  const std::string no_discount = error_of(synthetic("  spot: {reclaim: {mean: 1h}}\n"));
  EXPECT_NE(no_discount.find("serving.spot.discount"), std::string::npos) << no_discount;
  const std::string no_latency_target = error_of(synthetic("  scaling: {metric: latency}\n"));
  EXPECT_NE(no_latency_target.find("serving.scaling.target"), std::string::npos) << no_latency_target;
  EXPECT_EQ(load_scenario_text(synthetic("  scaling: {metric: latency, target: 800ms}\n"), "s.yaml").serving->scaling.target_per_replica,
            0.8);
  EXPECT_EQ(load_scenario_text(synthetic("  scaling: {metric: rate, target: 3}\n"), "s.yaml").serving->scaling.metric,
            scheduler::ScalingMetric::rate);
  const std::string moved = error_of(synthetic("  scaling: {cold_start: {container: 5s}}\n"));
  EXPECT_NE(moved.find("serving.cold_start"), std::string::npos) << moved;
}

TEST(Serving, DiurnalArrivalsFollowTheDayAroundTheMeanRate) {
  const std::vector<std::string> day{"serving.requests={arrival: diurnal, rate: 0.05, amplitude: 0.8, period: 1d, peak: 14h, "
                                     "duration: 4d, prompt_tokens: 100, output_tokens: 10}"};
  const Scenario s = load_scenario_text(synthetic(), "s.yaml", day);
  const std::vector<scheduler::ServingRequest> requests = serving_requests(*s.serving, s.seed);
  ASSERT_EQ(requests.size(), 17280u) << "the mean rate over the duration";
  // Within 6 h of 14:00 against within 6 h of 02:00: (1 + 0.8 x 2/pi) / (1 - 0.8 x 2/pi) = 3.1 in expectation.
  int near_peak = 0, near_trough = 0;
  for (const scheduler::ServingRequest& q : requests) {
    const double hour = std::fmod(q.arrival_s / 3600, 24);
    if (hour >= 8 && hour < 20) ++near_peak; else ++near_trough;
  }
  EXPECT_GT(near_peak, 2.6 * near_trough);
  EXPECT_LT(near_peak, 3.6 * near_trough);
  EXPECT_NEAR(requests.back().arrival_s / 86400, 4, 0.2);
  const std::string stray = error_of(synthetic("", ", amplitude: 0.5"));
  EXPECT_NE(stray.find("serving.requests.amplitude"), std::string::npos) << stray;
}

// Lengths of their own: lognormal of the given mean and cv, drawn apart from the arrivals (the
// same arrivals as with fixed lengths), the same again from the same seed.
TEST(Serving, LognormalLengthsHaveTheirMeanAndSpreadAndLeaveTheArrivalsAlone) {
  const std::string stream = "serving.requests={arrival: poisson, rate: 20, count: 20000, ";
  const Scenario fixed = load_scenario_text(synthetic(), "s.yaml", {stream + "prompt_tokens: 161, output_tokens: 338}"});
  const Scenario drawn = load_scenario_text(
      synthetic(), "s.yaml", {stream + "prompt_tokens: {mean: 161, cv: 1.5}, output_tokens: {mean: 338, cv: 0.5}}"});
  const std::vector<scheduler::ServingRequest> a = serving_requests(*fixed.serving, fixed.seed);
  const std::vector<scheduler::ServingRequest> b = serving_requests(*drawn.serving, drawn.seed);
  ASSERT_EQ(a.size(), b.size());
  double sum_p = 0, sum_p2 = 0, sum_o = 0, sum_o2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_GE(b[i].prompt_tokens, 1);
    sum_p += b[i].prompt_tokens;
    sum_p2 += double(b[i].prompt_tokens) * b[i].prompt_tokens;
    sum_o += b[i].output_tokens;
    sum_o2 += double(b[i].output_tokens) * b[i].output_tokens;
  }
  const double n = double(b.size());
  const double mean_p = sum_p / n, mean_o = sum_o / n;
  EXPECT_NEAR(mean_p, 161, 0.05 * 161);
  EXPECT_NEAR(mean_o, 338, 0.02 * 338);
  EXPECT_NEAR(std::sqrt(sum_p2 / n - mean_p * mean_p) / mean_p, 1.5, 0.25);
  EXPECT_NEAR(std::sqrt(sum_o2 / n - mean_o * mean_o) / mean_o, 0.5, 0.03);
  const std::vector<scheduler::ServingRequest> again = serving_requests(*drawn.serving, drawn.seed);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(again[i].prompt_tokens, b[i].prompt_tokens);
  try {
    load_scenario_text(synthetic(), "s.yaml", {"serving.requests.prompt_tokens={mean: 161, cv: -1}"});
    ADD_FAILURE() << "a negative cv was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "serving.requests.prompt_tokens.cv") << e.what();
  }
}

TEST(Serving, BadSectionsAreLocatedErrors) {
  try {
    load_scenario_text(synthetic(), "s.yaml", {"serving.tensor=16"});
    ADD_FAILURE() << "tensor 16 on an 8-GPU node was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "serving.tensor");
    EXPECT_NE(std::string(e.what()).find("one node"), std::string::npos) << e.what();
  }
  try {
    load_scenario_text(synthetic(), "s.yaml", {"serving.replicas=5"});
    ADD_FAILURE() << "5 replicas of 2 GPUs on 8 GPUs were accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "serving.replicas");
  }
  try {
    load_scenario_text(synthetic(), "s.yaml", {"serving.model=llama2-7", "serving.tensor=1"});
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "serving.model");
    EXPECT_NE(std::string(e.what()).find("llama2-7b"), std::string::npos) << e.what();
  }
  const std::string both = error_of(synthetic("", ", duration: 1min"));
  EXPECT_NE(both.find("not both"), std::string::npos) << both;
  const std::string missing = error_of(
      "cluster: {instance: aws/p5.48xlarge}\nserving: {model: llama2-7b, requests: {trace: {path: no/such.csv}}}\n");
  EXPECT_NE(missing.find("serving.requests.trace.path"), std::string::npos) << missing;
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
  const std::string bad_min = error_of(synthetic("  scaling: {min_replicas: 3}\n"));
  EXPECT_NE(bad_min.find("serving.scaling.min_replicas"), std::string::npos) << bad_min;
  const std::string bad_cold = error_of(synthetic("  cold_start: {contaner: 5s}\n"));
  EXPECT_NE(bad_cold.find("container"), std::string::npos) << bad_cold;
  const std::string with_workload = error_of(synthetic() + "workload: {model: gpt2}\n");
  EXPECT_NE(with_workload.find("no 'workload' section"), std::string::npos) << with_workload;
}

// ResNet-50 behind serverless functions (platform: function) or one always-on T4.
std::string image_endpoint(const std::string& platform, const std::string& batching) {
  return "seed: 7\n"
         "cluster: {instance: aws/g4dn.xlarge, nodes: 1}\n"
         "serving:\n"
         "  model: resnet50\n"
         "  precision: fp32\n"
         "  platform: " + platform + "\n"
         "  function: {memory: 3538MB, profile: " + source_dir() + "/calibration/profiles/cpu-example.yaml, keep_alive: 1min}\n"
         "  requests: {arrival: gamma, cv: 4, rate: 2, count: 400}\n"
         "  batching: " + batching + "\n"
         "  cold_start: {container: 1s, load_bandwidth: 100MB/s, warmup: 0s}\n";
}

TEST(Serving, ServerlessFunctionsBillRunTimeAndColdStartsPerGigabyteSecondAndRequest) {
  const Scenario s = load_scenario_text(image_endpoint("function", "{max_batch: 1}"), "s.yaml");
  ASSERT_TRUE(s.serving->per_sample);
  ASSERT_TRUE(s.serving->function);
  EXPECT_NEAR(s.serving->function_config.vcpus, 2.0, 1e-12) << "3538 MB at 1769 MB per vCPU";
  const ServingResults r = run_serving(s);
  EXPECT_EQ(r.completed, 400);
  EXPECT_EQ(r.iterations, 400) << "one request per instance at a time";
  EXPECT_GE(r.cold_starts, 1);
  EXPECT_NEAR(r.cold_start_s, 1 + r.weight_bytes / 100e6, 1e-9);
  EXPECT_GE(r.served[0].finish_s - r.request_list[0].arrival_s, r.cold_start_s) << "the first request waits for an instance";
  // Every request runs the same forward pass: the fastest answer is exactly one pass.
  double fastest = 1e9, busy = 0;
  for (std::size_t i = 0; i < r.served.size(); ++i) fastest = std::min(fastest, r.served[i].finish_s - r.request_list[i].arrival_s);
  busy = fastest * 400;
  EXPECT_GT(fastest, 0.01) << "ResNet-50 on 2 vCPUs takes tens of milliseconds at least";
  const double gb = 3538e6 / 1e9;
  EXPECT_NEAR(r.billed_gb_seconds, (busy + r.cold_starts * r.cold_start_s) * gb, 1e-6 * r.billed_gb_seconds);
  EXPECT_NEAR(r.cost_usd, r.billed_gb_seconds * 0.0000166667 + 400 * 0.2e-6, 1e-12);
  // Twice the memory: twice the vCPUs (up to 6), so each pass takes about half as long.
  const ServingResults big = run_serving(load_scenario_text(image_endpoint("function", "{max_batch: 1}"), "s.yaml",
                                                            {"serving.function.memory=7076MB"}));
  EXPECT_LT(big.e2e_s.p50, 0.6 * r.e2e_s.p50);
  // The same stream on an always-on T4 with dynamic batching: batches of at most 8, billed for the hour.
  const Scenario g = load_scenario_text(image_endpoint("instances", "{max_batch: 8, max_wait: 5ms}"), "s.yaml");
  const ServingResults gpu = run_serving(g);
  EXPECT_EQ(gpu.completed, 400);
  EXPECT_LE(gpu.iterations, 400);
  EXPECT_GE(gpu.iterations, 400 / 8);
  EXPECT_NEAR(gpu.cost_usd, g.cluster.instance.price_per_hour * gpu.duration_s / 3600, 1e-9);
  EXPECT_LT(gpu.e2e_s.p50, r.e2e_s.p50) << "a T4 answers faster than 2 vCPUs";
  // One row for sweeps and validation, holding the same figures.
  const Table t = serving_table(r);
  ASSERT_EQ(t.rows(), 1u);
  bool found = false;
  for (const TableColumn& c : t.columns) {
    if (c.name == "total_cost") {
      found = true;
      EXPECT_EQ(c.numbers[0], r.cost_usd);
    }
  }
  EXPECT_TRUE(found);
  // The results files: that row, a row per request, and the instances over time.
  Results files;
  serving_tables(r, files);
  ASSERT_EQ(files.extra_tables.size(), 2u);
  EXPECT_EQ(files.extra_tables[0].first, "requests");
  const Table& requests = files.extra_tables[0].second;
  ASSERT_EQ(requests.rows(), 400u);
  for (const TableColumn& c : requests.columns) {
    if (c.name == "e2e") EXPECT_EQ(c.numbers[7], r.served[7].finish_s - r.request_list[7].arrival_s);
  }
  EXPECT_EQ(files.extra_tables[1].second.rows(), r.replicas_over_time.size());
}

TEST(Serving, AnEngineThatRunsBetweenIterationsSlowsEveryToken) {
  const ServingResults gpu_only = run_serving(load_scenario_text(synthetic(), "s.yaml"));
  const Scenario s = load_scenario_text(synthetic("  engine: vllm-0.5\n"), "s.yaml");
  EXPECT_EQ(s.serving->engine_name, "vllm-0.5");
  EXPECT_GT(s.serving->engine.per_sequence_s, 0);
  const ServingResults vllm = run_serving(s);
  // Every iteration waits at least 1.33 ms + 2.03 ms (tensor 2) more: so does every token.
  EXPECT_GT(vllm.tpot_s.p50, gpu_only.tpot_s.p50 + 3.3e-3);
  EXPECT_LT(vllm.tpot_s.p50, gpu_only.tpot_s.p50 + 3.4e-3 + 300 * (0.105e-3 + 0.086e-3));
  const Scenario custom = load_scenario_text(synthetic("  engine: {per_iteration: 2ms, per_sequence: 50us, overlap: true}\n"), "s.yaml");
  EXPECT_EQ(custom.serving->engine_name, "custom");
  EXPECT_DOUBLE_EQ(custom.serving->engine.per_sequence_s, 50e-6);
  EXPECT_TRUE(custom.serving->engine.overlapped);
  EXPECT_NE(error_of(synthetic("  engine: vllm\n")).find("serving.engine"), std::string::npos);
  EXPECT_NE(error_of(synthetic("  engine: {per_iteraton: 2ms}\n")).find("serving.engine.per_iteraton"), std::string::npos);
}

TEST(Serving, PerSampleAndFunctionKeysAreCheckedWhereTheyAreWritten) {
  const auto key_of = [](const std::string& text, const std::vector<std::string>& sets = {}) {
    try {
      load_scenario_text(text, "s.yaml", sets);
    } catch (const ConfigError& e) {
      return e.key_path();
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(key_of(image_endpoint("function", "{max_batch: 4}")), "serving.batching.max_batch");
  EXPECT_EQ(key_of(image_endpoint("instances", "{max_batch_tokens: 4}")), "serving.batching.max_batch_tokens");
  EXPECT_EQ(key_of(image_endpoint("function", "{}"), {"serving.requests.prompt_tokens=5"}), "serving.requests.prompt_tokens");
  EXPECT_EQ(key_of(image_endpoint("function", "{}"), {"serving.function.memory=64MB"}), "serving.function.memory");
  EXPECT_EQ(key_of(image_endpoint("function", "{}"), {"serving.function.profile=no/such.yaml"}), "serving.function.profile");
  EXPECT_EQ(key_of(image_endpoint("function", "{}"), {"serving.replicas=2"}), "serving.replicas");
  EXPECT_EQ(key_of(image_endpoint("instances", "{}"), {"serving.tensor=2"}), "serving.tensor");
  EXPECT_EQ(key_of(image_endpoint("instances", "{max_batch: 100000}")), "serving.batching") << "a batch whose activations overflow the T4";
  EXPECT_EQ(key_of(synthetic("  platform: function\n")), "serving.platform") << "decoders are not served by functions";
  EXPECT_EQ(key_of(synthetic("  batching: {max_wait: 5ms}\n")), "serving.batching.max_wait");
  EXPECT_EQ(key_of(image_endpoint("function", "{}"), {"serving.function.histogram_range=1h"}), "serving.function.histogram_range");
  EXPECT_EQ(key_of(image_endpoint("function", "{}"), {"serving.function.keep_alive=histgram"}), "serving.function.keep_alive");
  const Scenario learned = load_scenario_text(image_endpoint("function", "{}"), "s.yaml",
                                              {"serving.function.keep_alive=histogram", "serving.function.histogram_range=2h"});
  EXPECT_TRUE(learned.serving->scaling.histogram_keep_alive);
  EXPECT_EQ(learned.serving->scaling.histogram_range_s, 7200);
}

TEST(Serving, AMalformedTraceNamesItsLine) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dlsim-serving-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "t.csv");
    out << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.00,12x,3\n";
  }
  const std::string text = "cluster: {instance: aws/p5.48xlarge}\n"
                           "serving: {model: llama2-7b, requests: {trace: {path: " + (dir / "t.csv").string() + "}}}\n";
  const Scenario s = load_scenario_text(text, "s.yaml");
  try {
    run_serving(s);
    ADD_FAILURE() << "a bad token count was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.key_path(), "ContextTokens");
  }
  std::filesystem::remove_all(dir);
}

TEST(Serving, TheAzureConversationTraceIsServedWhenPresent) {
  const std::string trace = source_dir() + "/../shared/data/traces/azure_llm_inference_2023/AzureLLMInferenceTrace_conv.csv";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "no Azure LLM inference trace at " << trace << " (../shared/data/traces absent)";
  const std::string scenario = source_dir() + "/scenarios/serving-llama2-70b-azure-conv.yaml";
  const Scenario s = load_scenario(scenario, {"serving.requests.limit=1500"});
  const ServingResults r = run_serving(s);
  EXPECT_EQ(r.requests, 1500);
  EXPECT_EQ(r.completed + r.dropped, 1500);
  EXPECT_EQ(r.dropped, 0) << "every conversation fits a 4 x A100-80GB replica's cache";
  EXPECT_EQ(r.request_list.front().arrival_s, 0);
  EXPECT_GT(r.request_list.back().arrival_s, 60) << "1,500 requests of the conversation trace span minutes";
}

}  // namespace
}  // namespace dlsim::experiment
