// The serving: section (serving_yaml.hpp).
#include "experiment/serving_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "experiment/cluster_yaml.hpp"
#include "experiment/nearest_name.hpp"
#include "experiment/profile_yaml.hpp"
#include "models/zoo.hpp"

namespace dlsim::experiment {
namespace {

constexpr int kMaxTokens = 10'000'000;
constexpr long long kMaxRequests = 10'000'000;
// The longest stream a run simulates (about three years): event times stay far inside sim::Time.
constexpr double kMaxSpanSeconds = 1e8;

// `per_sample`: a request is one sample of a CNN or encoder (no token counts; a trace's are ignored).
// A synthetic stream's token count: every request the same (a number), or each its own, drawn
// from a lognormal of that mean and coefficient of variation ({mean: 161, cv: 1.2}).
void read_token_count(MapReader& r, const char* key, int& mean, double& cv) {
  const YAML::Node n = r.node(key);
  if (!n.IsMap()) {
    mean = static_cast<int>(r.integer(key, 1, kMaxTokens));
    return;
  }
  MapReader d(n, r.path_of(key), r.source());
  mean = static_cast<int>(d.integer("mean", 1, kMaxTokens));
  cv = d.number("cv", 0, 10);
  d.finish();
}

ServingRequestsConfig read_requests(MapReader& r, const std::string& base_dir, bool per_sample) {
  ServingRequestsConfig q;
  if (r.has("trace")) {
    MapReader trace(r.node("trace"), r.path_of("trace"), r.source());
    q.trace_format = trace.choice("format", {"azure"}, "azure");
    const std::string path = trace.text("path");
    const std::filesystem::path p(path);
    q.trace_path = p.is_absolute() ? path : (std::filesystem::path(base_dir) / p).lexically_normal().string();
    trace.finish();
    std::error_code error;  // an unreadable or overlong name is "not a file" too, not an exception
    if (!std::filesystem::is_regular_file(q.trace_path, error)) {
      trace.fail("path", "the trace file '" + q.trace_path + "' does not exist (or is not a file)");
    }
    q.limit = r.integer("limit", 1, kMaxRequests, 0);
    for (const char* synthetic : {"arrival", "rate", "cv", "count", "duration", "prompt_tokens", "output_tokens", "amplitude",
                                  "period", "peak"}) {
      if (r.has(synthetic)) r.fail(synthetic, "belongs to a synthetic stream; a trace gives arrivals and token counts");
    }
    r.finish();
    return q;
  }
  q.arrival = r.choice("arrival", {"poisson", "gamma", "diurnal"}, "poisson");
  q.rate = r.number("rate", 1e-9, 1e9);
  q.cv = q.arrival == "gamma" ? r.number("cv", 0.01, 100, 1.0) : 1.0;
  if (q.arrival != "gamma" && r.has("cv")) r.fail("cv", "is the burstiness of gamma arrivals (arrival: gamma)");
  if (q.arrival == "diurnal") {
    q.amplitude = r.number("amplitude", 0, 1, 0.5);
    q.period_s = r.quantity("period", Dimension::duration, 1, 365 * 86400.0, 86400);
    q.peak_s = r.quantity("peak", Dimension::duration, 0, 365 * 86400.0, 0.5 * q.period_s);
    if (q.peak_s >= q.period_s) r.fail("peak", "is a time within the period (from its start)");
  } else {
    for (const char* key : {"amplitude", "period", "peak"}) {
      if (r.has(key)) r.fail(key, "shapes diurnal arrivals (arrival: diurnal)");
    }
  }
  if (r.has("count") == r.has("duration")) {
    r.fail(r.has("count") ? "duration" : "count", "give the stream's length as either count (requests) or duration, not both");
  }
  if (r.has("count")) {
    q.count = r.integer("count", 1, kMaxRequests);
    if (double(q.count) / q.rate > kMaxSpanSeconds) r.fail("rate", "makes the stream last more than 10^8 s at that count: raise it");
  } else {
    q.duration_s = r.quantity("duration", Dimension::duration, 1e-6, kMaxSpanSeconds);
    const double n = std::floor(q.duration_s * q.rate);
    if (n < 1) r.fail("duration", "holds no request at the given rate");
    if (n > double(kMaxRequests)) r.fail("duration", "holds more than 10^7 requests at the given rate");
    q.count = static_cast<long long>(n);
  }
  if (per_sample) {
    for (const char* key : {"prompt_tokens", "output_tokens"}) {
      if (r.has(key)) r.fail(key, "a request of a model that is not a decoder is one sample: it has no tokens");
    }
    q.prompt_tokens = q.output_tokens = 1;
  } else {
    read_token_count(r, "prompt_tokens", q.prompt_tokens, q.prompt_cv);
    read_token_count(r, "output_tokens", q.output_tokens, q.output_cv);
  }
  if (r.has("limit")) r.fail("limit", "takes the first requests of a trace; a synthetic stream has count");
  r.finish();
  return q;
}

// serving.function: the function's size, prices, limits and the CPU profile of one vCPU.
FunctionConfig read_function(MapReader& r, const std::string& base_dir) {
  FunctionConfig f;
  if (!r.has("memory")) r.fail_missing("memory", "the function's memory size (its CPU share grows with it), e.g. 4096MB");
  f.memory_bytes = r.quantity("memory", Dimension::size, 128e6, 10240e6);
  f.memory_per_vcpu = r.quantity("memory_per_vcpu", Dimension::size, 1e6, 1e12, 1769e6);
  f.max_vcpus = r.number("max_vcpus", 0.01, 1024, 6);
  f.vcpus = std::min(f.max_vcpus, f.memory_bytes / f.memory_per_vcpu);
  f.price_per_gb_second = r.number("price_gb_second", 0, 1, 0.0000166667);
  f.price_per_request = r.number("price_per_request", 0, 1, 0.2e-6);
  f.bill_init = r.boolean("bill_init", true);
  f.concurrency = static_cast<int>(r.integer("concurrency", 1, 100'000, 1000));
  f.provisioned = static_cast<int>(r.integer("provisioned", 0, f.concurrency, 0));
  // A duration, or "histogram": a window learned from the function's idle times (Shahrad et al.).
  if (r.optional_text("keep_alive") == std::optional<std::string>("histogram")) {
    f.histogram_keep_alive = true;
    f.histogram_range_s = r.quantity("histogram_range", Dimension::duration, 60, 7 * 86400.0, 4 * 3600.0);
  } else {
    f.keep_alive_s = r.quantity("keep_alive", Dimension::duration, 0, 7 * 86400.0, 1200);
    if (r.has("histogram_range")) r.fail("histogram_range", "is the span of the idle-time histogram (keep_alive: histogram)");
  }
  if (!r.has("profile")) {
    r.fail_missing("profile", "a CPU profile of one vCPU (dlsim calibrate --backend cpu), e.g. ../calibration/profiles/cpu-example.yaml");
  }
  const std::string file = r.text("profile");
  const std::filesystem::path p = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file) : std::filesystem::path(base_dir) / file;
  f.profile_path = p.lexically_normal().string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(p, error)) r.fail("profile", "cannot read profile file '" + f.profile_path + "' (missing or not a file)");
  const ProfileDocument doc = read_profile(f.profile_path);
  const calibration::Calibration& cal = doc.calibration;
  if (cal.info.backend != "cpu") {
    r.fail("profile", "a function runs on CPUs: it needs a CPU profile (dlsim calibrate --backend cpu); this one was measured by the " +
                          cal.info.backend + " backend on " + cal.info.name);
  }
  // The profile's threads (metadata.units) ran its measurements; the function has vcpus of them.
  const double scale = f.vcpus / double(std::max(1, cal.info.units));
  f.device = cal.spec;
  for (double& peak : f.device.peak_flops) peak *= scale;
  f.device.memory_bandwidth *= scale;
  f.device.memory_bytes = f.memory_bytes;
  f.profile = cal.profile;
  r.finish();
  return f;
}

}  // namespace

ServingConfig read_serving(MapReader& r, const ClusterConfig& cluster, const std::string& base_dir) {
  ServingConfig s;
  s.model_name = r.text("model");
  const std::vector<std::string> decoders = models::decoder_model_names();
  const std::vector<std::string> zoo = models::zoo_model_names();
  const bool decoder = std::find(decoders.begin(), decoders.end(), s.model_name) != decoders.end();
  if (!decoder && std::find(zoo.begin(), zoo.end(), s.model_name) == zoo.end()) {
    r.fail("model", "unknown model '" + s.model_name + "'" + did_you_mean(s.model_name, zoo) + " (dlsim catalog models)");
  }
  s.per_sample = !decoder;
  if (decoder) {
    s.model = models::decoder_config(s.model_name);
    if (s.model.experts > 0) r.fail("model", s.model_name + " is a mixture-of-experts model; serving runs dense decoders only so far");
    if (r.has("sequence_length")) r.fail("sequence_length", "a decoder's requests give their own prompt and output tokens");
  } else {
    const bool has_sequence = models::zoo_model_has_sequence(s.model_name);
    if (r.has("sequence_length") && !has_sequence) r.fail("sequence_length", s.model_name + " takes images, not sequences");
    const int sequence = has_sequence ? static_cast<int>(r.integer("sequence_length", 1, 1'000'000, 128)) : 0;
    try {
      s.sample_model = models::zoo_model(s.model_name, sequence);
    } catch (const std::invalid_argument& e) {
      r.fail("sequence_length", e.what());
    }
  }
  const std::string platform = r.choice("platform", {"instances", "function"}, "instances");
  s.function = platform == "function";
  if (s.function && !s.per_sample) {
    r.fail("platform", "serverless functions run on CPUs: serve a CNN or an encoder there, not the decoder " + s.model_name);
  }
  if (s.function && !r.has("function")) r.fail_missing("function", "the function's memory and CPU profile: {memory: 4096MB, profile: ...}");
  if (r.has("function")) {
    // Read and checked on either platform, so that one file can compare functions with
    // replicas on instances (a sweep over serving.platform); used only by platform: function.
    if (!s.per_sample) r.fail("function", "serverless functions serve CNNs and encoders, not the decoder " + s.model_name);
    MapReader f(r.node("function"), r.path_of("function"), r.source());
    s.function_config = read_function(f, base_dir);
  }
  const models::DeviceSpec& device = s.function ? s.function_config.device : cluster.device;
  const std::string fallback = device.supports(models::Precision::fp16) ? "fp16"
                               : device.supports(models::Precision::bf16) ? "bf16" : "fp32";
  const std::string precision = r.choice("precision", {"fp32", "fp16", "bf16", "fp8"}, fallback);
  s.precision = *models::parse_precision(precision);
  if (!device.supports(s.precision)) r.fail("precision", (s.function ? "the function's CPU " : "accelerator ") + device.name + " has no " + precision + " support");
  if (s.function) {
    for (const char* key : {"replicas", "tensor", "scaling", "spot", "disaggregated"}) {
      if (r.has(key)) r.fail(key, "does not apply to serverless functions (function.concurrency limits their instances)");
    }
  }

  const int per_node = cluster.instance.accelerators_per_node;
  s.tensor = static_cast<int>(r.integer("tensor", 1, 1024, 1));
  if (s.per_sample && s.tensor > 1) r.fail("tensor", s.model_name + " is served whole on one GPU per replica (tensor 1)");
  if (s.tensor > per_node) {
    r.fail("tensor", "a replica runs on one node: " + std::to_string(s.tensor) + " GPUs, but " + cluster.instance_name + " has " +
                         std::to_string(per_node));
  }
  // Whether the tensor degree splits the model is the replica's own check (serving_problem).
  const int fit = static_cast<int>(std::min<std::int64_t>(1'000'000, std::int64_t(per_node / s.tensor) * cluster.nodes));
  s.replicas = static_cast<int>(r.integer("replicas", 1, 1'000'000, std::max(1, fit)));
  if (s.replicas > fit) {
    r.fail("replicas", std::to_string(s.replicas) + " replicas of " + std::to_string(s.tensor) + " GPUs do not fit " +
                           std::to_string(cluster.nodes) + " x " + cluster.instance_name + " (" + std::to_string(fit) + " do)");
  }

  if (!r.has("requests")) r.fail_missing("requests", "the request stream: a trace, or arrival, rate, count, prompt and output tokens");
  MapReader requests(r.node("requests"), r.path_of("requests"), r.source());
  s.requests = read_requests(requests, base_dir, s.per_sample);

  MapReader b(r.node("batching"), r.path_of("batching"), r.source(), true);
  if (s.per_sample) {
    // Dynamic batching of whole samples: a batch is up to max_batch requests, each one "token"
    // that is also its last (it finishes with the batch); the cache never binds.
    b.choice("policy", {"dynamic"}, "dynamic");
    for (const char* key : {"max_batch_tokens", "max_sequences", "chunked_prefill", "block_tokens", "memory_utilization"}) {
      if (b.has(key)) b.fail(key, "belongs to LLM serving; " + s.model_name + " batches whole samples: max_batch, max_wait");
    }
    const int max_batch = static_cast<int>(b.integer("max_batch", 1, 1'000'000, 1));
    s.batching.max_batch_tokens = s.batching.max_sequences = max_batch;
    s.batching.max_wait_s = b.quantity("max_wait", Dimension::duration, 0, 3600, 0);
    if (s.function && (max_batch > 1 || s.batching.max_wait_s > 0)) {
      b.fail(max_batch > 1 ? "max_batch" : "max_wait", "a function instance serves one request at a time (max_batch 1, no wait)");
    }
    s.batching.chunked_prefill = false;
    s.batching.block_tokens = 1;
  } else {
    s.batching.continuous = b.choice("policy", {"continuous", "static"}, "continuous") == "continuous";
    for (const char* key : {"max_batch", "max_wait"}) {
      if (b.has(key)) b.fail(key, "is dynamic batching of whole samples (CNNs, encoders); " + s.model_name + " batches tokens: max_batch_tokens");
    }
    s.batching.max_batch_tokens = static_cast<int>(b.integer("max_batch_tokens", 1, kMaxTokens, 8192));
    s.batching.max_sequences = static_cast<int>(b.integer("max_sequences", 1, 1'000'000, 256));
    s.batching.chunked_prefill = b.boolean("chunked_prefill", true);
    s.batching.block_tokens = static_cast<int>(b.integer("block_tokens", 1, 4096, 16));
    s.memory_utilization = b.number("memory_utilization", 0.05, 1.0, 0.9);
    // kv_reservation (models/serving_batcher.hpp): vLLM's paged blocks, or the reservations of
    // the Orca baselines of the vLLM paper; static batching reserves whole requests already.
    const std::string reservation = b.choice("kv_reservation", {"paged", "request", "max-length"}, "paged");
    if (!s.batching.continuous && b.has("kv_reservation")) {
      b.fail("kv_reservation", "chooses how continuous batching holds the KV cache; static batching reserves each whole request");
    }
    s.batching.kv_reservation = reservation == "request"      ? models::KvReservation::request
                                : reservation == "max-length" ? models::KvReservation::max_length
                                                              : models::KvReservation::paged;
    if (s.batching.kv_reservation == models::KvReservation::max_length) {
      s.batching.max_length = static_cast<int>(b.integer("max_length", 1, kMaxTokens, s.model.max_positions));
    } else if (b.has("max_length")) {
      b.fail("max_length", "is the length kv_reservation: max-length reserves for every sequence; needs kv_reservation: max-length");
    }
  }
  b.finish();
  if (s.function) {
    // Every request that finds no idle instance starts one; idle instances are recycled.
    const FunctionConfig& f = s.function_config;
    s.replicas = f.concurrency;
    s.scaling.enabled = true;
    s.scaling.metric = scheduler::ScalingMetric::per_request;
    s.scaling.max_replicas = f.concurrency;
    s.scaling.min_replicas = s.scaling.initial_replicas = f.provisioned;
    s.scaling.keep_alive_s = f.keep_alive_s;
    s.scaling.histogram_keep_alive = f.histogram_keep_alive;
    s.scaling.histogram_range_s = f.histogram_range_s;
  }

  if (r.has("disaggregated")) {
    MapReader d(r.node("disaggregated"), r.path_of("disaggregated"), r.source());
    if (s.per_sample) r.fail("disaggregated", "splits an LLM's prefill and decode; " + s.model_name + " answers in one pass");
    if (s.replicas < 2) r.fail("disaggregated", "needs >= 2 replicas: some prefill, the others decode");
    s.prefill_replicas = static_cast<int>(d.integer("prefill_replicas", 1, s.replicas - 1));
    d.finish();
    if (r.has("scaling")) r.fail("scaling", "disaggregated prefill and decode run on fixed replicas (no scaling yet)");
  }
  if (r.has("scaling")) {
    MapReader sc(r.node("scaling"), r.path_of("scaling"), r.source(), true);
    scheduler::ServingScaling& x = s.scaling;
    x.enabled = true;
    x.max_replicas = s.replicas;
    x.min_replicas = static_cast<int>(sc.integer("min_replicas", 0, s.replicas, std::min(1, s.replicas)));
    x.initial_replicas = static_cast<int>(sc.integer("initial_replicas", x.min_replicas, s.replicas, x.min_replicas));
    const std::string metric = sc.choice("metric", {"requests", "rate", "latency"}, "requests");
    x.metric = metric == "rate" ? scheduler::ScalingMetric::rate
               : metric == "latency" ? scheduler::ScalingMetric::latency
                                     : scheduler::ScalingMetric::requests;
    if (x.metric == scheduler::ScalingMetric::latency) {
      if (!sc.has("target")) sc.fail_missing("target", "the p90 time to first token to keep, e.g. 1s");
      x.target_per_replica = sc.quantity("target", Dimension::duration, 1e-6, 86400);
    } else {
      x.target_per_replica = sc.number("target", 0.001, 1e6, 8);
    }
    x.interval_s = sc.quantity("interval", Dimension::duration, 0.1, 86400, 10);
    x.keep_alive_s = sc.quantity("keep_alive", Dimension::duration, 0, 7 * 86400.0, 300);
    if (sc.has("cold_start")) sc.fail("cold_start", "is serving.cold_start (it serves scaling and spot replacements alike)");
    sc.finish();
  }
  if (r.has("spot")) {
    MapReader sp(r.node("spot"), r.path_of("spot"), r.source());
    if (s.prefill_replicas > 0) r.fail("spot", "disaggregated prefill and decode run on on-demand replicas (no spot yet)");
    s.spot.enabled = true;
    if (!sp.has("discount")) sp.fail_missing("discount", "the fraction off the on-demand price (e.g. 0.65)");
    s.spot_discount = sp.number("discount", 0, 0.99);
    if (!sp.has("reclaim")) sp.fail_missing("reclaim", "the time to reclamation: {mean: 6h} or {weibull_shape, weibull_scale}");
    s.spot.reclaim = read_hazard(sp, "reclaim");
    s.spot.notice_s = sp.quantity("notice", Dimension::duration, 0, 3600, 120);
    s.spot.fallback_on_demand = sp.choice("fallback", {"spot", "on-demand"}, "spot") == "on-demand";
    sp.finish();
  }
  if (r.has("engine")) {
    if (s.per_sample) r.fail("engine", "is an LLM serving engine's CPU time per iteration; " + s.model_name + " is served one sample per request");
    const YAML::Node e = r.node("engine");
    if (e.IsMap()) {
      MapReader m(e, r.path_of("engine"), r.source());
      s.engine_name = "custom";
      s.engine.per_iteration_s = m.quantity("per_iteration", Dimension::duration, 0, 10, 0);
      s.engine.per_sequence_s = m.quantity("per_sequence", Dimension::duration, 0, 1, 0);
      s.engine.worker_per_iteration_s = m.quantity("worker_per_iteration", Dimension::duration, 0, 10, 0);
      s.engine.worker_per_sequence_s = m.quantity("worker_per_sequence", Dimension::duration, 0, 1, 0);
      s.engine.overlapped = m.boolean("overlap", false);
      m.finish();
    } else {
      s.engine_name = r.choice("engine", {"gpu-only", "vllm-0.5"});
      if (s.engine_name == "vllm-0.5") s.engine = models::vllm_0_5_engine();
    }
  }
  MapReader cold(r.node("cold_start"), r.path_of("cold_start"), r.source(), true);
  s.provisioning_s = cold.quantity("provisioning", Dimension::duration, 0, 86400, 0);
  s.container_s = cold.quantity("container", Dimension::duration, 0, 86400, 20);
  s.load_bandwidth = cold.quantity("load_bandwidth", Dimension::bandwidth, 1e3, 1e15, 2e9);
  s.warmup_s = cold.quantity("warmup", Dimension::duration, 0, 86400, 20);
  cold.finish();
  MapReader t(r.node("targets"), r.path_of("targets"), r.source(), true);
  s.ttft_target_s = t.quantity("ttft", Dimension::duration, 1e-9, 1e9, 0.0);
  s.tpot_target_s = t.quantity("tpot", Dimension::duration, 1e-9, 1e9, 0.0);
  t.finish();
  r.finish();
  return s;
}

}  // namespace dlsim::experiment
