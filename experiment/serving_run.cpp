// Serving scenarios end to end (serving_run.hpp).
#include "experiment/serving_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "experiment/atomic_file.hpp"
#include "experiment/results.hpp"
#include "experiment/units.hpp"
#include "models/inference_pass.hpp"
#include "models/serving_iteration.hpp"
#include "network/collectives.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::experiment {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (the civil-calendar count).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "2023-11-16 18:15:46.6805900" as seconds since 1970; false when it is not that shape.
bool parse_timestamp(const std::string& text, double& seconds) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%lf%c", &y, &mo, &d, &h, &mi, &s, &tail) != 6) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || !(s >= 0 && s < 61)) return false;
  seconds = double(days_from_civil(y, unsigned(mo), unsigned(d))) * 86400 + h * 3600.0 + mi * 60.0 + s;
  return true;
}

int token_count(const std::string& cell, const std::string& path, int line, int column, const char* name) {
  char* end = nullptr;
  const long v = std::strtol(cell.c_str(), &end, 10);
  if (cell.empty() || *end != '\0' || v < 0 || v > 10'000'000) {
    throw ConfigError({path, line, column}, name, "expected a token count in 0..10^7, got '" + cell + "'");
  }
  return static_cast<int>(v);
}

// The Azure LLM inference trace (Patel et al., Splitwise, ISCA 2024): TIMESTAMP,ContextTokens,
// GeneratedTokens. Rows with no generated token (a prompt only) are served as one token.
std::vector<scheduler::ServingRequest> read_azure_trace(const std::string& path, long long limit) {
  std::ifstream in(path);
  if (!in) throw ConfigError({path, 0, 0}, "", "cannot read the trace");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError({path, 1, 1}, "", "the trace is empty: expected a header line");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != "TIMESTAMP,ContextTokens,GeneratedTokens") {
    throw ConfigError({path, 1, 1}, "", "expected the header 'TIMESTAMP,ContextTokens,GeneratedTokens' (Azure LLM inference trace)");
  }
  std::vector<scheduler::ServingRequest> out;
  double first = 0, last = -std::numeric_limits<double>::infinity();
  for (int n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::size_t a = line.find(','), b = a == std::string::npos ? a : line.find(',', a + 1);
    if (b == std::string::npos || line.find(',', b + 1) != std::string::npos) {
      throw ConfigError({path, n, 1}, "", "expected 3 cells: TIMESTAMP,ContextTokens,GeneratedTokens");
    }
    double t = 0;
    if (!parse_timestamp(line.substr(0, a), t)) {
      throw ConfigError({path, n, 1}, "TIMESTAMP", "expected a time as 2023-11-16 18:15:46.68, got '" + line.substr(0, a) + "'");
    }
    if (t < last) throw ConfigError({path, n, 1}, "TIMESTAMP", "the trace goes back in time here");
    if (!out.empty() && t - first > 1e8) throw ConfigError({path, n, 1}, "TIMESTAMP", "the trace spans more than 10^8 s (about 3 years) here");
    last = t;
    if (out.empty()) first = t;
    scheduler::ServingRequest r;
    r.arrival_s = t - first;
    r.prompt_tokens = std::max(1, token_count(line.substr(a + 1, b - a - 1), path, n, int(a) + 2, "ContextTokens"));
    r.output_tokens = std::max(1, token_count(line.substr(b + 1), path, n, int(b) + 2, "GeneratedTokens"));
    out.push_back(r);
    if (limit > 0 && static_cast<long long>(out.size()) >= limit) break;
    if (out.size() >= 10'000'000) throw ConfigError({path, n, 1}, "", "the trace has more than 10^7 requests: give requests.limit");
  }
  if (out.empty()) throw ConfigError({path, 2, 1}, "", "the trace has no request");
  return out;
}

double percentile(std::vector<double>& sorted_values, double q) {
  if (sorted_values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = q * double(sorted_values.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double frac = pos - double(i);
  return i + 1 < sorted_values.size() ? sorted_values[i] * (1 - frac) + sorted_values[i + 1] * frac : sorted_values[i];
}

Percentiles percentiles_of(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) {
    p.p50 = p.p90 = p.p99 = p.mean = std::numeric_limits<double>::quiet_NaN();
    return p;
  }
  std::sort(v.begin(), v.end());
  p.p50 = percentile(v, 0.5);
  p.p90 = percentile(v, 0.9);
  p.p99 = percentile(v, 0.99);
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / double(v.size());
  return p;
}

// All-reduce seconds over the first `tensor` GPUs of one node, by message size: NCCL as
// network/ runs it on the node's links, at powers of two from 1 KiB to 4 GiB, interpolated in
// log-log between them.
models::AllReduceTime all_reduce_table(const Scenario& s, int tensor) {
  if (tensor <= 1) return [](double) { return 0.0; };
  const network::Topology topology = s.topology_for(1);
  network::CollectiveSpec spec;
  spec.kind = network::CollectiveKind::all_reduce;
  for (int i = 0; i < tensor; ++i) spec.ranks.push_back(topology.accelerators().at(static_cast<std::size_t>(i)));
  std::vector<double> log_bytes, log_seconds;
  for (int e = 10; e <= 32; ++e) {
    spec.bytes = std::ldexp(1.0, e);
    log_bytes.push_back(double(e) * std::log(2.0));
    log_seconds.push_back(std::log(network::run_collective(topology, spec).time_s));
  }
  return [log_bytes, log_seconds](double bytes) {
    if (bytes <= 0) return 0.0;
    const double x = std::log(bytes);
    if (x <= log_bytes.front()) return std::exp(log_seconds.front());
    std::size_t i = 1;
    while (i + 1 < log_bytes.size() && log_bytes[i] < x) ++i;
    const double f = (x - log_bytes[i - 1]) / (log_bytes[i] - log_bytes[i - 1]);
    return std::exp(log_seconds[i - 1] + f * (log_seconds[i] - log_seconds[i - 1]));
  };
}

models::ServingStepOptions step_options(const ServingConfig& c) {
  models::ServingStepOptions o;
  o.tensor = c.tensor;
  o.precision = c.precision;
  o.memory_utilization = c.memory_utilization;
  o.max_batch_tokens = c.batching.max_batch_tokens;
  o.engine = c.engine;
  return o;
}

// A per-sample model's pass on what serves it: a function's vCPUs or one of the cluster's GPUs.
// Throws std::invalid_argument as InferencePass does.
models::InferencePass inference_pass(const ServingConfig& c, const ClusterConfig& cluster) {
  return c.function ? models::InferencePass(c.sample_model, c.function_config.device, c.function_config.profile, c.precision)
                    : models::InferencePass(c.sample_model, cluster.device, cluster.profile, c.precision);
}

}  // namespace

ServingProblem serving_problem(const ServingConfig& c, const ClusterConfig& cluster) {
  if (c.per_sample) {
    const models::DeviceSpec& device = c.function ? c.function_config.device : cluster.device;
    try {
      const models::InferencePass pass = inference_pass(c, cluster);
      const double workspace = pass.workspace_bytes(c.batching.max_sequences);
      if (pass.weight_bytes() + workspace >= device.memory_bytes) {
        return {"batching", c.model_name + "'s weights (" + format_size(pass.weight_bytes()) + ") and the activations of a batch of " +
                                std::to_string(c.batching.max_sequences) + " (" + format_size(workspace) + ") do not fit " + device.name +
                                "'s memory (" + format_size(device.memory_bytes) + "): lower batching.max_batch" +
                                (c.function ? " or raise function.memory" : "")};
      }
    } catch (const std::invalid_argument& e) {
      return {"batching", e.what()};
    }
    return {};
  }
  try {
    const models::ServingStepModel step(c.model, cluster.device, cluster.profile, step_options(c), [](double) { return 0.0; });
    const std::int64_t blocks = static_cast<std::int64_t>(step.kv_capacity_tokens()) / c.batching.block_tokens;
    if (blocks < 1) {
      return {"tensor", c.model_name + "'s weights (" + format_size(step.weight_bytes()) + " per GPU at tensor " + std::to_string(c.tensor) +
                            ") and the workspace of a " + std::to_string(c.batching.max_batch_tokens) +
                            "-token iteration leave no memory for a KV cache on " + cluster.device.name + " (" +
                            format_size(cluster.device.memory_bytes) + " x memory_utilization " +
                            format_number(c.memory_utilization, "%.2f") + "): raise tensor or lower batching.max_batch_tokens"};
    }
    // A max-length reservation larger than the whole cache would admit no request.
    if (c.batching.continuous && c.batching.kv_reservation == models::KvReservation::max_length) {
      const std::int64_t reserved = (static_cast<std::int64_t>(c.batching.max_length) + c.batching.block_tokens - 1) / c.batching.block_tokens;
      if (reserved > blocks) {
        return {"batching", "max_length " + std::to_string(c.batching.max_length) + " tokens per sequence exceed the KV cache of " +
                                std::to_string(blocks * c.batching.block_tokens) +
                                " tokens per replica: no request could be admitted; lower max_length or raise tensor"};
      }
    }
  } catch (const std::invalid_argument& e) {
    return {"tensor", e.what()};
  }
  return {};
}

namespace {

// A lognormal token count of that mean and coefficient of variation (sigma^2 = ln(1 + cv^2),
// mu = ln(mean) - sigma^2 / 2), the normal drawn by Box-Muller from the stream's uniforms (so the
// draws are the same on every standard library), rounded, at least 1. cv 0: the mean.
int lognormal_tokens(sim::RandomStream& rng, int mean, double cv) {
  if (!(cv > 0)) return mean;
  const double sigma2 = std::log1p(cv * cv);
  const double mu = std::log(static_cast<double>(mean)) - sigma2 / 2;
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();  // u1 in (0, 1]
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.14159265358979323846 * u2);
  const double x = std::exp(mu + std::sqrt(sigma2) * z);
  return static_cast<int>(std::clamp(std::round(x), 1.0, 1e7));
}

}  // namespace

std::vector<scheduler::ServingRequest> serving_requests(const ServingConfig& c, std::uint64_t seed) {
  const ServingRequestsConfig& q = c.requests;
  if (!q.trace_path.empty()) {
    std::vector<scheduler::ServingRequest> trace = read_azure_trace(q.trace_path, q.limit);
    if (c.per_sample) {
      for (scheduler::ServingRequest& x : trace) x.prompt_tokens = x.output_tokens = 1;  // one sample each: the arrivals only
    }
    return trace;
  }
  sim::RandomStreams streams(seed);
  sim::RandomStream& rng = streams.stream("serving.arrivals");
  std::vector<scheduler::ServingRequest> out(static_cast<std::size_t>(q.count));
  const double mean_gap = 1.0 / q.rate;
  // Gamma gaps with shape 1/cv^2 and the same mean: cv 1 is Poisson, larger is burstier.
  std::gamma_distribution<double> gamma(1.0 / (q.cv * q.cv), mean_gap * q.cv * q.cv);
  // Diurnal: a Poisson process whose rate follows the day, drawn by thinning (Lewis and Shedler
  // 1979): candidates at the peak rate, each kept with probability rate(t) / peak rate.
  const double peak_rate = q.rate * (1 + q.amplitude);
  const auto diurnal_rate = [&q](double t) {
    return q.rate * (1 + q.amplitude * std::cos(2 * 3.14159265358979323846 * (t - q.peak_s) / q.period_s));
  };
  double t = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (q.arrival == "diurnal") {
      do {
        t += rng.exponential(1.0 / peak_rate);
      } while (rng.uniform() * peak_rate > diurnal_rate(t));
    } else if (i > 0) {
      t += q.arrival == "gamma" ? gamma(rng) : rng.exponential(mean_gap);
    }
    out[i] = {t, q.prompt_tokens, q.output_tokens};
  }
  // Lengths of their own (lognormal, mean and cv as given) from a stream apart from the arrivals',
  // so that the arrivals do not change with them.
  if (q.prompt_cv > 0 || q.output_cv > 0) {
    sim::RandomStream& lengths = streams.stream("serving.lengths");
    for (scheduler::ServingRequest& x : out) {
      x.prompt_tokens = lognormal_tokens(lengths, q.prompt_tokens, q.prompt_cv);
      x.output_tokens = lognormal_tokens(lengths, q.output_tokens, q.output_cv);
    }
  }
  return out;
}

ServingResults run_serving(const Scenario& s) {
  const ServingConfig& c = *s.serving;
  ServingResults r;
  r.dlsim_version = dlsim_version();
  r.model = c.model_name;
  r.instance = c.function ? "function (" + format_size(c.function_config.memory_bytes) + ")" : s.cluster.instance_name;
  r.device = c.function ? c.function_config.device.name : s.cluster.device.name;
  r.per_sample = c.per_sample;
  r.function = c.function;
  r.engine = c.engine_name;
  r.engine_overhead = c.engine;
  r.precision = std::string(models::to_string(c.precision));
  r.replicas = c.replicas;
  r.tensor = c.tensor;
  const int per_node = s.cluster.instance.accelerators_per_node;
  r.nodes = c.function ? 0 : (c.replicas * c.tensor + per_node - 1) / per_node;
  r.ttft_target_s = c.ttft_target_s;
  r.tpot_target_s = c.tpot_target_s;

  const SourceLocation where{s.source, 0, 0};
  std::optional<models::ServingStepModel> step;
  std::optional<models::InferencePass> pass;
  models::BatchingPolicy policy = c.batching;
  if (c.per_sample) {
    try {
      pass.emplace(inference_pass(c, s.cluster));
    } catch (const std::invalid_argument& e) {
      throw ConfigError(where, "serving", e.what());
    }
    r.weight_bytes = pass->weight_bytes();
    // A request is one token that is also its last: blocks for a full batch never bind.
    policy.kv_blocks = 2 * static_cast<std::int64_t>(policy.max_sequences);
  } else {
    models::AllReduceTime all_reduce;
    try {
      all_reduce = all_reduce_table(s, c.tensor);
    } catch (const std::exception& e) {
      throw ConfigError(where, "network", std::string("the replica's tensor-parallel group cannot run on this node: ") + e.what());
    }
    try {
      step.emplace(c.model, s.cluster.device, s.cluster.profile, step_options(c), all_reduce);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(where, "serving", e.what());
    }
    r.weight_bytes = step->weight_bytes();
    r.kv_capacity_tokens = step->kv_capacity_tokens();
    policy.kv_blocks = static_cast<std::int64_t>(r.kv_capacity_tokens) / policy.block_tokens;
    r.kv_blocks = policy.kv_blocks;
    if (!policy.continuous) {
      r.kv_reservation = "whole requests reserved (static batching)";
    } else if (policy.kv_reservation == models::KvReservation::request) {
      r.kv_reservation = "whole requests reserved on admission";
    } else if (policy.kv_reservation == models::KvReservation::max_length) {
      r.kv_reservation = std::to_string(policy.max_length) + " tokens reserved per sequence";
    } else {
      r.kv_reservation = "paged, blocks taken as sequences grow";
    }
    if (policy.kv_blocks < 1) throw ConfigError(where, "serving.tensor", serving_problem(c, s.cluster).why);  // the loader's check
  }

  scheduler::ServingScaling scaling = c.scaling;
  r.autoscaled = scaling.enabled;
  r.spot = c.spot.enabled;
  r.spot_fallback = c.spot.fallback_on_demand;
  r.weight_load_s = r.weight_bytes / c.load_bandwidth;
  r.cold_start_s = c.provisioning_s + c.container_s + r.weight_load_s + c.warmup_s;
  scaling.cold_start_s = r.cold_start_s;
  scheduler::ServingSpot spot = c.spot;
  spot.seed = s.seed;
  scheduler::ServingDisaggregation split;
  if (c.prefill_replicas > 0) {
    // Each rank sends its share of the prompt's K and V to the same rank of the decode replica:
    // over NVLink inside a node, over the node's NICs (shared by its GPUs) between nodes.
    split.enabled = true;
    split.prefill_replicas = c.prefill_replicas;
    r.prefill_replicas = c.prefill_replicas;
    const double per_token = step->kv_bytes_per_token();
    const models::InstanceType& node = s.cluster.instance;
    // The node's links (an instance may differ from its device's figure: trn1n's NeuronLinks).
    const double nvlink = node.intra_node_bandwidth > 0 ? node.intra_node_bandwidth : s.cluster.device.intra_node_link_bandwidth;
    const double nic = node.network_bandwidth / double(per_node);
    const int t = c.tensor;
    split.transfer_s = [per_token, nvlink, nic, node, t, per_node](int prompt, int from, int to) {
      const bool same_node = from * t / per_node == to * t / per_node;
      const double bandwidth = same_node ? nvlink : nic;
      const double latency = same_node ? node.intra_node_latency_s : node.network_latency_s;
      return latency + prompt * per_token / bandwidth;
    };
  }
  r.request_list = serving_requests(c, s.seed);
  const scheduler::FleetResult fleet = scheduler::simulate_fleet(
      r.request_list, c.replicas, policy,
      [&step, &pass](const models::ServingBatch& b) { return pass ? pass->batch_s(b.tokens()) : step->iteration_s(b); },
      !s.output.trace.empty(), scaling, split, spot);
  for (const scheduler::FleetSample& x : fleet.samples) {
    if (x.replica == 0) r.replica0_iterations.push_back(x);
  }
  r.served = fleet.requests;

  std::vector<double> ttft, tpot, e2e;
  const double first_arrival = r.request_list.empty() ? 0 : r.request_list.front().arrival_s;
  long long good = 0;
  for (std::size_t i = 0; i < r.served.size(); ++i) {
    const scheduler::ServedRequest& x = r.served[i];
    const scheduler::ServingRequest& q = r.request_list[i];
    ++r.requests;
    if (x.dropped) {
      ++r.dropped;
      continue;
    }
    ++r.completed;
    r.prompt_tokens += q.prompt_tokens;
    r.output_tokens += q.output_tokens;
    const double first = x.first_token_s - q.arrival_s;
    const double per_token = q.output_tokens > 1 ? (x.finish_s - x.first_token_s) / (q.output_tokens - 1) : 0;
    ttft.push_back(first);
    if (q.output_tokens > 1) tpot.push_back(per_token);
    e2e.push_back(x.finish_s - q.arrival_s);
    const bool ok = (c.ttft_target_s <= 0 || first <= c.ttft_target_s) && (c.tpot_target_s <= 0 || per_token <= c.tpot_target_s);
    if (ok) ++good;
  }
  if (split.enabled) {
    std::vector<double> moves;
    for (const scheduler::ServedRequest& x : r.served) {
      if (x.decode_replica >= 0) moves.push_back(x.kv_transfer_s);
    }
    r.kv_transfer_s = percentiles_of(moves);
  }
  r.ttft_s = percentiles_of(ttft);
  r.tpot_s = percentiles_of(tpot);
  r.e2e_s = percentiles_of(e2e);
  r.itl_s = percentiles_of(std::vector<double>(fleet.token_gaps_s.begin(), fleet.token_gaps_s.end()));
  r.duration_s = fleet.end_s - first_arrival;
  const double span = r.duration_s > 0 ? r.duration_s : std::numeric_limits<double>::quiet_NaN();
  r.output_tokens_per_s = r.output_tokens / span;
  r.requests_per_s = double(r.completed) / span;
  r.goodput_requests_per_s = double(good) / span;
  r.within_targets = r.requests > 0 ? double(good) / double(r.requests) : 0;
  double busy = 0;
  for (double b : fleet.busy_s) busy += b;
  for (std::int64_t n : fleet.iterations) r.iterations += n;
  r.kv_utilization = busy > 0 ? fleet.kv_block_seconds / (busy * double(policy.kv_blocks)) : 0;
  // Busy time over the replicas' time on (all of them, the whole span, without scaling).
  r.busy_fraction = busy / (scaling.enabled ? fleet.scaling.replica_seconds : double(c.replicas) * span);
  r.preemptions = fleet.preemptions;
  r.cold_starts = fleet.scaling.cold_starts;
  // (Above a microsecond: arrivals are rounded to the engine's ticks.)
  for (double wait : fleet.scaling.fleet_wait_s) r.waited_requests += wait > 1e-6;
  r.histogram_keep_alive = scaling.histogram_keep_alive;
  r.peak_replicas = fleet.scaling.peak_replicas;
  r.replica_hours = fleet.scaling.replica_seconds / 3600.0;
  r.replicas_over_time = fleet.scaling.replicas_over_time;
  r.reclaims = fleet.scaling.reclaims;
  for (const scheduler::ServedRequest& x : r.served) r.resumed_requests += x.reclaims > 0;
  if (c.function) {
    // Run time (and each cold start's initialisation, when billed) times the memory, plus a
    // price per request.
    const FunctionConfig& f = c.function_config;
    r.function_vcpus = f.vcpus;
    r.function_memory_bytes = f.memory_bytes;
    const double init_s = f.bill_init ? double(r.cold_starts) * r.cold_start_s : 0.0;
    r.billed_gb_seconds = (busy + init_s) * f.memory_bytes / 1e9;
    r.cost_usd = r.billed_gb_seconds * f.price_per_gb_second + double(r.requests) * f.price_per_request;
  } else if (scaling.enabled || spot.enabled) {
    // Autoscaled and spot replicas are billed for their GPUs' share of the instance while they
    // are on (from the start of each cold start to the end of its drain or its reclamation),
    // spot at its discount.
    const double spot_hours = fleet.scaling.spot_replica_seconds / 3600.0;
    const double billed_hours = (r.replica_hours - spot_hours) + spot_hours * (1 - c.spot_discount);
    r.cost_usd = billed_hours * double(c.tensor) * s.cluster.instance.price_per_hour / double(per_node);
    r.spot_replica_hours = spot_hours;
  } else {
    // Every node the replicas occupy is billed, on demand, for the whole span.
    r.cost_usd = double(r.nodes) * s.cluster.instance.price_per_hour * r.duration_s / 3600.0;
  }
  r.usd_per_million_output_tokens = r.output_tokens > 0 ? r.cost_usd / r.output_tokens * 1e6 : NAN;
  r.usd_per_million_tokens = r.output_tokens > 0 ? r.cost_usd / (r.output_tokens + r.prompt_tokens) * 1e6 : NAN;
  r.usd_per_1000_requests = r.completed > 0 ? r.cost_usd / double(r.completed) * 1e3 : NAN;
  return r;
}

namespace {

// A model served one sample per request: latency, throughput, and what the replicas or
// functions did and cost.
void print_per_sample(std::ostream& out, const ServingResults& r) {
  const auto ms = [](double s) { return format_number(1e3 * s, "%.1f"); };
  out << "dlsim " << r.dlsim_version << ": serving " << r.model << " (" << r.precision << ") ";
  if (r.function) {
    out << "on serverless functions of " << format_size(r.function_memory_bytes) << " (" << format_number(r.function_vcpus, "%.2f")
        << " vCPUs of " << r.device << "), at most " << r.replicas << " at once\n";
  } else {
    out << "on " << r.replicas << " replica" << (r.replicas == 1 ? "" : "s") << " of " << r.device << " (" << r.nodes << " x "
        << r.instance << ")\n";
  }
  out << "  weights " << format_size(r.weight_bytes) << "; requests: " << r.requests << " (" << r.completed << " completed, "
      << r.dropped << " dropped) over " << format_duration(r.duration_s) << "\n\n";
  out << "  latency (ms)               p50       p90       p99      mean\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-22s %9s %9s %9s %9s\n", "end to end", ms(r.e2e_s.p50).c_str(), ms(r.e2e_s.p90).c_str(),
                ms(r.e2e_s.p99).c_str(), ms(r.e2e_s.mean).c_str());
  out << buf;
  out << "\n  throughput: " << format_number(r.requests_per_s, "%.3f") << " requests/s; goodput "
      << format_number(r.goodput_requests_per_s, "%.3f") << " requests/s";
  if (r.ttft_target_s > 0) out << " within " << format_duration(r.ttft_target_s) << " (" << format_number(100 * r.within_targets, "%.1f") << "%)";
  out << "\n  " << r.iterations << " batches (" << format_number(r.iterations > 0 ? double(r.completed) / double(r.iterations) : 0, "%.2f")
      << " requests each); busy " << format_number(100 * r.busy_fraction, "%.1f") << "% of the time "
      << (r.function ? "instances were on" : "replicas were on") << "\n";
  if (r.autoscaled) {
    out << "  " << (r.function ? "instances: " : "autoscaling: ") << r.cold_starts << " cold start" << (r.cold_starts == 1 ? "" : "s")
        << " of " << format_duration(r.cold_start_s) << " (weights loaded in " << format_duration(r.weight_load_s) << "), peak "
        << r.peak_replicas << " at once, " << format_number(r.replica_hours, "%.2f") << " instance-hours on; " << r.waited_requests
        << " request" << (r.waited_requests == 1 ? "" : "s") << " waited for " << (r.function ? "a cold start" : "a replica")
        << (r.histogram_keep_alive ? " (keep-alive learned from idle times)" : "") << "\n";
  }
  if (r.function) {
    out << "  cost: " << format_number(r.cost_usd, "%.4f") << " USD (" << format_number(r.billed_gb_seconds, "%.1f")
        << " GB-seconds and " << r.requests << " requests billed); ";
  } else {
    out << "  cost: " << format_number(r.cost_usd, "%.4f") << (r.spot ? " USD on spot; " : " USD on demand; ");
  }
  out << format_number(r.usd_per_1000_requests, "%.5f") << " USD per 1000 requests\n";
}

}  // namespace

void print_serving(std::ostream& out, const ServingResults& r) {
  if (r.per_sample) {
    print_per_sample(out, r);
    return;
  }
  const auto ms = [](double s) { return format_number(1e3 * s, "%.1f"); };
  out << "dlsim " << r.dlsim_version << ": serving " << r.model << " (" << r.precision << ") on " << r.replicas << " replica"
      << (r.replicas == 1 ? "" : "s") << " x " << r.tensor << " " << r.device << " (" << r.nodes << " x " << r.instance << ")\n";
  out << "  memory per GPU: weights " << format_size(r.weight_bytes) << "; KV cache " << format_number(r.kv_capacity_tokens, "%.0f")
      << " tokens per replica (" << r.kv_blocks << " blocks; " << r.kv_reservation << ")\n";
  if (r.engine != "gpu-only") {
    const models::EngineOverhead& e = r.engine_overhead;
    out << "  engine " << r.engine << ": CPU " << format_number(1e3 * e.cpu_s(0, r.tensor), "%.2f") << " ms + "
        << format_number(1e3 * (e.cpu_s(1, r.tensor) - e.cpu_s(0, r.tensor)), "%.3f") << " ms per sequence per iteration, "
        << (e.overlapped ? "overlapped with the GPU" : "between iterations (the GPU waits)") << "\n";
  }
  out << "  requests: " << r.requests << " (" << r.completed << " completed, " << r.dropped << " dropped), "
      << format_number(r.prompt_tokens, "%.0f") << " prompt and " << format_number(r.output_tokens, "%.0f") << " output tokens over "
      << format_duration(r.duration_s) << "\n\n";
  out << "  latency (ms)               p50       p90       p99      mean\n";
  const auto row = [&](const char* name, const Percentiles& p) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-22s %9s %9s %9s %9s\n", name, ms(p.p50).c_str(), ms(p.p90).c_str(), ms(p.p99).c_str(),
                  ms(p.mean).c_str());
    out << buf;
  };
  row("time to first token", r.ttft_s);
  row("time per output token", r.tpot_s);
  row("between tokens", r.itl_s);
  row("end to end", r.e2e_s);
  out << "\n  throughput: " << format_number(r.output_tokens_per_s, "%.1f") << " output tokens/s, "
      << format_number(r.requests_per_s, "%.3f") << " requests/s\n";
  out << "  goodput: " << format_number(r.goodput_requests_per_s, "%.3f") << " requests/s within targets (";
  if (r.ttft_target_s > 0 || r.tpot_target_s > 0) {
    out << (r.ttft_target_s > 0 ? "TTFT <= " + format_duration(r.ttft_target_s) : std::string())
        << (r.ttft_target_s > 0 && r.tpot_target_s > 0 ? ", " : "")
        << (r.tpot_target_s > 0 ? "TPOT <= " + format_duration(r.tpot_target_s) : std::string()) << ": "
        << format_number(100 * r.within_targets, "%.1f") << "% of requests)\n";
  } else {
    out << "no targets set)\n";
  }
  out << "  replicas busy " << format_number(100 * r.busy_fraction, "%.1f") << "% of the time; KV cache "
      << format_number(100 * r.kv_utilization, "%.1f") << "% used while busy; " << r.iterations << " iterations, "
      << r.preemptions << " preemptions\n";
  if (r.prefill_replicas > 0) {
    out << "  disaggregated: " << r.prefill_replicas << " prefill and " << r.replicas - r.prefill_replicas
        << " decode replicas; moving a prompt's K and V took " << ms(r.kv_transfer_s.p50) << " ms (p50), " << ms(r.kv_transfer_s.p99)
        << " ms (p99)\n";
  }
  if (r.spot) {
    out << "  spot: " << r.reclaims << " replica" << (r.reclaims == 1 ? "" : "s") << " reclaimed and replaced (cold start "
        << format_duration(r.cold_start_s) << (r.spot_fallback ? ", on on-demand capacity" : "") << "); "
        << format_number(r.spot_replica_hours, "%.2f") << " of " << format_number(r.replica_hours, "%.2f")
        << " replica-hours on spot; " << r.resumed_requests << " request" << (r.resumed_requests == 1 ? "" : "s")
        << " resumed on another replica\n";
  }
  if (r.autoscaled) {
    out << "  autoscaling: " << r.cold_starts << " cold start" << (r.cold_starts == 1 ? "" : "s") << " of "
        << format_duration(r.cold_start_s) << " (weights loaded in " << format_duration(r.weight_load_s) << "), peak "
        << r.peak_replicas << " replica" << (r.peak_replicas == 1 ? "" : "s") << ", " << format_number(r.replica_hours, "%.2f")
        << " replica-hours (" << format_number(r.replica_hours * 3600 / std::max(1e-9, r.duration_s), "%.2f")
        << " replicas on average)\n";
  }
  out << "  cost: " << format_number(r.cost_usd, "%.2f") << (r.spot ? " USD on spot; " : " USD on demand; ") << format_number(r.usd_per_million_output_tokens, "%.3f")
      << " USD per million output tokens, " << format_number(r.usd_per_million_tokens, "%.3f") << " per million tokens, "
      << format_number(r.usd_per_1000_requests, "%.3f") << " per 1000 requests\n";
}

Table serving_table(const ServingResults& r) {
  using T = TableColumn::Type;
  Table t;
  const auto real = [&t](const char* name, const char* unit, const char* description, double v) {
    t.columns.push_back({name, unit, description, T::real, {v}, {}});
  };
  const auto count = [&t](const char* name, const char* description, double v) {
    t.columns.push_back({name, "", description, T::integer, {v}, {}});
  };
  t.columns.push_back({"model", "", "served model", T::text, {}, {r.model}});
  t.columns.push_back({"platform", "", "replicas on instances, or serverless functions", T::text, {}, {r.function ? "function" : "instances"}});
  count("replicas", "replicas (functions: the concurrency limit)", r.replicas);
  count("requests", "requests in the stream", double(r.requests));
  count("completed", "requests completed", double(r.completed));
  count("dropped", "requests that could never run", double(r.dropped));
  real("duration", "s", "first arrival to last answer", r.duration_s);
  real("ttft_p50", "s", "time to first token (per-sample models: end to end), median", r.ttft_s.p50);
  real("ttft_p90", "s", "time to first token, 90th percentile", r.ttft_s.p90);
  real("ttft_p99", "s", "time to first token, 99th percentile", r.ttft_s.p99);
  real("tpot_p50", "s", "time per output token after the first, median", r.tpot_s.p50);
  real("tpot_p99", "s", "time per output token after the first, 99th percentile", r.tpot_s.p99);
  real("e2e_p50", "s", "end-to-end latency, median", r.e2e_s.p50);
  real("e2e_p90", "s", "end-to-end latency, 90th percentile", r.e2e_s.p90);
  real("e2e_p99", "s", "end-to-end latency, 99th percentile", r.e2e_s.p99);
  real("e2e_mean", "s", "end-to-end latency, mean", r.e2e_s.mean);
  real("requests_per_s", "requests/s", "completed requests per second", r.requests_per_s);
  real("output_tokens_per_s", "tokens/s", "output tokens per second", r.output_tokens_per_s);
  real("goodput", "requests/s", "requests per second completed within the targets", r.goodput_requests_per_s);
  real("within_targets", "1", "fraction of requests within the targets", r.within_targets);
  real("busy_fraction", "1", "replicas' time in batches over their time on", r.busy_fraction);
  count("cold_starts", "replicas or function instances started", double(r.cold_starts));
  count("waited_requests", "requests that waited for a replica (functions: for a cold start)", double(r.waited_requests));
  real("cold_start", "s", "one cold start: provisioning, container, weights, warm-up", r.autoscaled ? r.cold_start_s : NAN);
  count("peak_replicas", "replicas or instances on at once, at most", double(r.autoscaled ? r.peak_replicas : r.replicas));
  real("replica_hours", "h", "replica- or instance-hours on", r.autoscaled ? r.replica_hours : r.replicas * r.duration_s / 3600.0);
  real("total_cost", "USD", "what the run costs", r.cost_usd);
  real("usd_per_1000_requests", "USD", "cost per 1000 completed requests", r.usd_per_1000_requests);
  real("usd_per_million_tokens", "USD", "cost per million prompt and output tokens", r.per_sample ? NAN : r.usd_per_million_tokens);
  return t;
}

void serving_tables(const ServingResults& r, Results& out) {
  using T = TableColumn::Type;
  out.table = serving_table(r);
  // Per request, in the order given: each column's values, then the columns.
  const std::size_t n = r.served.size();
  std::vector<double> arrival(n), prompt(n), output(n), replica(n), decode(n), dropped(n), ttft(n), e2e(n), tpot(n), transfer(n),
      preemptions(n);
  for (std::size_t i = 0; i < n; ++i) {
    const scheduler::ServedRequest& x = r.served[i];
    const scheduler::ServingRequest& s = r.request_list[i];
    arrival[i] = s.arrival_s;
    prompt[i] = s.prompt_tokens;
    output[i] = s.output_tokens;
    replica[i] = x.replica;
    decode[i] = x.decode_replica;
    dropped[i] = x.dropped ? 1 : 0;
    ttft[i] = x.first_token_s - s.arrival_s;
    e2e[i] = x.finish_s - s.arrival_s;
    tpot[i] = s.output_tokens > 1 ? (x.finish_s - x.first_token_s) / (s.output_tokens - 1) : 0.0;
    transfer[i] = x.kv_transfer_s;
    preemptions[i] = x.preemptions;
  }
  Table q;
  q.columns = {
      {"arrival", "s", "arrival, from the first", T::real, std::move(arrival), {}},
      {"prompt_tokens", "", "prompt tokens (1 for a sample)", T::integer, std::move(prompt), {}},
      {"output_tokens", "", "output tokens (1 for a sample)", T::integer, std::move(output), {}},
      {"replica", "", "the replica (or function instance) that prefilled or ran it", T::integer, std::move(replica), {}},
      {"decode_replica", "", "disaggregated: the replica that decoded it (-1: none)", T::integer, std::move(decode), {}},
      {"dropped", "", "1: it could never run", T::integer, std::move(dropped), {}},
      {"ttft", "s", "time to first token (a sample: its answer)", T::real, std::move(ttft), {}},
      {"e2e", "s", "arrival to last token", T::real, std::move(e2e), {}},
      {"tpot", "s", "time per output token after the first (0: one token)", T::real, std::move(tpot), {}},
      {"kv_transfer", "s", "disaggregated: moving its K and V", T::real, std::move(transfer), {}},
      {"preemptions", "", "times it was preempted", T::integer, std::move(preemptions), {}},
  };
  Table steps;
  steps.columns.push_back({"time", "s", "when the count changed", T::real, {}, {}});
  steps.columns.push_back({"replicas", "", "replicas (or function instances) on from then", T::integer, {}, {}});
  for (const auto& [time, on] : r.replicas_over_time) {
    steps.columns[0].numbers.push_back(time);
    steps.columns[1].numbers.push_back(on);
  }
  out.extra_tables.clear();
  out.extra_tables.emplace_back("requests", std::move(q));
  out.extra_tables.emplace_back("replicas_over_time", std::move(steps));
}

void write_serving_csv(const std::string& path, const ServingResults& r) {
  write_atomically(path, [&r](const std::string& tmp) {
    std::ofstream out(tmp);
    out << "request,arrival_s,prompt_tokens,output_tokens,replica,decode_replica,dropped,first_token_s,finish_s,ttft_s,tpot_s,"
           "e2e_s,max_token_gap_s,kv_transfer_s,preemptions\n";
    char buf[512];
    for (std::size_t i = 0; i < r.served.size(); ++i) {
      const scheduler::ServedRequest& x = r.served[i];
      const scheduler::ServingRequest& q = r.request_list[i];
      const double tpot = q.output_tokens > 1 ? (x.finish_s - x.first_token_s) / (q.output_tokens - 1) : 0;
      std::snprintf(buf, sizeof buf, "%zu,%.9g,%d,%d,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", i, q.arrival_s,
                    q.prompt_tokens, q.output_tokens, x.replica, x.decode_replica, x.dropped ? 1 : 0, x.first_token_s, x.finish_s,
                    x.first_token_s - q.arrival_s, tpot, x.finish_s - q.arrival_s, x.max_token_gap_s, x.kv_transfer_s, x.preemptions);
      out << buf;
    }
    if (!out) throw std::runtime_error("cannot write " + tmp);
  });
}

}  // namespace dlsim::experiment

namespace dlsim::experiment {

void write_serving_trace(const std::string& path, const ServingResults& r) {
  write_atomically(path, [&r](const std::string& tmp) {
    std::ofstream out(tmp);
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"replica 0: " << r.model << " on " << r.tensor
        << " x " << r.device << "\"}},\n";
    out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"iterations\"}}";
    char buf[512];
    for (const scheduler::FleetSample& x : r.replica0_iterations) {
      const double ts = x.time_s * 1e6, dur = x.iteration_s * 1e6;
      std::snprintf(buf, sizeof buf,
                    ",\n{\"name\":\"%d tokens\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"args\":{\"decodes\":%d,\"prefill_chunks\":%d}}"
                    ",\n{\"name\":\"sequences\",\"ph\":\"C\",\"pid\":0,\"ts\":%.3f,\"args\":{\"running\":%d,\"waiting\":%d}}"
                    ",\n{\"name\":\"KV blocks\",\"ph\":\"C\",\"pid\":0,\"ts\":%.3f,\"args\":{\"used\":%lld}}",
                    x.tokens, ts, dur, x.decodes, x.prefills, ts, x.running, x.waiting, ts, static_cast<long long>(x.blocks_used));
      out << buf;
    }
    out << "\n]}\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  });
}

}  // namespace dlsim::experiment
