#include "experiment/cluster_job_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "experiment/plan_yaml.hpp"
#include "models/optimizer.hpp"
#include "models/zoo.hpp"
#include "scheduler/fabric_share.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kYear = 365.0 * 86400.0;
constexpr std::int64_t kMaxIterations = 1'000'000'000'000;
const std::vector<std::string> kPrecisions{"fp32", "tf32", "fp16", "bf16", "fp8"};

ModelJob read_model_job(MapReader& r) {
  ModelJob m;
  m.model = r.choice("model", models::zoo_model_names());
  const bool sequence_model = models::zoo_model_has_sequence(m.model);
  if (!sequence_model && r.has("sequence_length")) r.fail("sequence_length", "model '" + m.model + "' takes no sequence length");
  m.sequence_length = sequence_model ? static_cast<int>(r.integer("sequence_length", 1, 1'048'576, 0)) : 0;
  m.precision = *models::parse_precision(r.choice("precision", kPrecisions, "fp32"));
  if (r.has("plan")) {
    // A model-parallel job (cluster_job_model.hpp): its plan as workload.plan, a global batch.
    if (r.has("batch_per_gpu")) r.fail("batch_per_gpu", "a job with a plan gives its samples per iteration as global_batch");
    r.allow({"batch_per_gpu"});
    if (!r.has("global_batch")) r.fail_missing("global_batch", "a job with a plan needs its samples per iteration (global_batch: N)");
    m.global_batch = r.integer("global_batch", 1, 100'000'000);
    m.optimizer = *models::optimizer_from_string(r.choice("optimizer", models::optimizer_names(), "sgd-momentum"));
    const YAML::Node plan_node = r.node("plan");
    if (plan_node.IsScalar()) {
      if (plan_node.Scalar() != "planned") {
        r.fail("plan", "expected a plan mapping ({tensor: 8, pipeline: 4, ...}, as workload.plan) or planned (the fastest "
                       "plan dlsim plan finds for the job's GPUs)");
      }
      m.planned = true;
      return m;
    }
    MapReader plan(plan_node, r.path_of("plan"), r.source(), true);
    m.plan = read_plan(plan);
    return m;
  }
  for (const char* key : {"global_batch", "optimizer"}) {
    if (r.has(key)) r.fail(key, "only a job with a plan takes this (a data-parallel job gives batch_per_gpu)");
  }
  r.allow({"global_batch", "optimizer", "plan"});
  m.batch_per_gpu = static_cast<int>(r.integer("batch_per_gpu", 1, 1'000'000));
  return m;
}

const models::InstanceType& instance_of(const scheduler::PoolSpec& pool, const models::Catalog& catalog) {
  const models::InstanceType* t = catalog.find_instance(pool.instance);
  if (t == nullptr) throw std::logic_error("pool " + pool.name + " has an unchecked instance type");
  return *t;
}

int fewest_nodes(int gpus, const scheduler::PoolSpec& pool) { return (gpus + pool.gpus_per_node - 1) / pool.gpus_per_node; }

double uncontended_s(const scheduler::JobSpec& j, const scheduler::PoolSpec& pool) {
  return scheduler::uncontended_iteration_s(j.iteration_s, j.overlap_s, j.gradient_bytes, fewest_nodes(j.gpus, pool),
                                            pool.nic_bandwidth);
}

std::int64_t iterations_for(double work, double per_iteration, const MapReader& r, const std::string& key) {
  const double n = std::ceil(work / per_iteration);
  if (!(n <= static_cast<double>(kMaxIterations))) r.fail(key, "that is more than 10^12 iterations");
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(n));
}

}  // namespace

void read_job_rate_and_work(MapReader& r, scheduler::JobSpec& j, const scheduler::PoolSpec& pool,
                            const models::Catalog& catalog, ModelJobRates& rates) {
  double tokens_per_sample = 0;
  double samples_per_iteration = 0;  // 0: not known (a job given by its iteration time)
  if (r.has("model")) {
    for (const char* key : {"iteration_time", "gradient_bytes", "overlap"}) {
      if (r.has(key)) r.fail(key, "a job with a model gets this from the model; give one or the other");
    }
    r.allow({"iteration_time", "gradient_bytes", "overlap"});
    const ModelJob m = read_model_job(r);
    if (m.plan && j.elastic()) {
      r.fail("plan", "an elastic job changes its GPU count: give plan: planned (re-planned at each size) or no plan (data parallel)");
    }
    if (m.planned && j.elastic()) {
      const int per_node = pool.gpus_per_node;
      if (j.min_gpus % per_node != 0 || j.gpus % per_node != 0 || j.max_gpus % per_node != 0) {
        r.fail("elastic", "a planned elastic job resizes by whole nodes: min_gpus, gpus and max_gpus must be multiples of the " +
                              std::to_string(per_node) + " GPUs of a node of pool " + pool.name);
      }
    }
    try {
      const models::InstanceType& instance = instance_of(pool, catalog);
      const JobRate rate = rates.rate(m, j.gpus, instance);
      j.iteration_s = rate.iteration_s;
      j.overlap_s = rate.overlap_s;
      j.gradient_bytes = rate.gradient_bytes;
      j.plan = rate.plan;
      tokens_per_sample = rate.tokens_per_sample;
      if (m.planned && j.elastic()) {
        // Re-planned at each size, a node at a time (cluster_job_model.hpp).
        j.plan.clear();
        for (int g = j.min_gpus; g <= j.max_gpus; g += pool.gpus_per_node) {
          const JobRate at = g == j.gpus ? rate : rates.rate(m, g, instance);
          j.sizes.push_back({g, at.iteration_s, at.plan});
          j.plan += (j.plan.empty() ? "" : "; ") + std::to_string(g) + " GPUs: " + at.plan;
        }
      }
    } catch (const std::invalid_argument& e) {
      r.fail(m.plan || m.planned ? "plan" : "model", std::string(e.what()) + " (on pool " + pool.name + ", " + pool.instance + ")");
    }
    samples_per_iteration = m.plan || m.planned ? static_cast<double>(m.global_batch) : static_cast<double>(m.batch_per_gpu) * j.gpus;
  } else {
    for (const char* key : {"batch_per_gpu", "sequence_length", "precision", "plan", "global_batch", "optimizer"}) {
      if (r.has(key)) r.fail(key, "only a job with a model takes this");
    }
    r.allow({"model", "batch_per_gpu", "sequence_length", "precision", "plan", "global_batch", "optimizer"});
    if (!r.has("iteration_time")) r.fail_missing("iteration_time", "the time of one iteration (or a model: <zoo name>)");
    j.iteration_s = r.quantity("iteration_time", Dimension::duration, 1e-6, 86400);
    j.gradient_bytes = r.quantity("gradient_bytes", Dimension::size, 0, 1e15, 0.0);
    j.overlap_s = r.quantity("overlap", Dimension::duration, 0, 86400, 0.0);
    if (j.overlap_s > j.iteration_s) r.fail("overlap", "cannot exceed the iteration time");
  }

  // The work: exactly one way.
  std::vector<std::string> given;
  for (const char* key : {"iterations", "duration", "data", "tokens"}) {
    if (r.has(key)) given.push_back(key);
  }
  r.allow({"iterations", "duration", "data", "tokens"});
  if (given.empty()) r.fail_missing("iterations", "the work: iterations, duration, data: {samples, epochs} or tokens");
  if (given.size() > 1) r.fail(given[1], "give the work once (" + given[0] + " is given too)");
  const std::string& how = given[0];
  if (how == "iterations") {
    j.iterations = r.integer("iterations", 1, kMaxIterations);
  } else if (how == "duration") {
    j.iterations = iterations_for(r.quantity("duration", Dimension::duration, 1e-6, 100 * kYear), uncontended_s(j, pool), r, how);
  } else if (samples_per_iteration == 0) {
    r.fail(how, "needs a model (to know samples per iteration); give iterations or duration");
  } else if (how == "data") {
    MapReader d(r.node("data"), r.path_of("data"), r.source());
    const double samples = d.number("samples", 1, 1e15);
    const double epochs = d.number("epochs", 1e-6, 1e6);
    d.finish();
    j.iterations = iterations_for(samples * epochs, samples_per_iteration, r, how);
  } else {
    if (tokens_per_sample <= 1) r.fail("tokens", "model has no sequence; give data: {samples, epochs} instead");
    j.iterations = iterations_for(r.number("tokens", 1, 1e18), samples_per_iteration * tokens_per_sample, r, how);
  }
}

std::vector<TraceModel> read_trace_models(MapReader& trace) {
  std::vector<TraceModel> mix;
  if (!trace.has("models")) {
    trace.allow({"models"});
    return mix;
  }
  const YAML::Node list = trace.node("models");
  if (!list.IsSequence() || list.size() == 0) {
    trace.fail("models", "expected a list of {model, batch_per_gpu, weight}");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    MapReader e(list[i], trace.path_of("models") + "[" + std::to_string(i) + "]", trace.source());
    TraceModel t;
    // A trace job's GPU count is the trace's: data parallel over it (a plan would not split them all).
    if (e.has("plan")) e.fail("plan", "trace jobs are data parallel over the GPUs the trace gives them; list a job with a plan in jobs:");
    t.job = read_model_job(e);
    t.weight = e.number("weight", 0, 1e9, 1.0);
    e.finish();
    mix.push_back(t);
  }
  double total = 0;
  for (const TraceModel& t : mix) total += t.weight;
  if (!(total > 0)) trace.fail("models", "the weights add up to 0");
  return mix;
}

void assign_trace_models(std::vector<scheduler::JobSpec>& jobs, const std::vector<TraceModel>& mix,
                         const scheduler::PoolSpec& pool, const models::Catalog& catalog, ModelJobRates& rates,
                         std::uint64_t seed, const MapReader& trace) {
  if (mix.empty()) return;
  double total = 0;
  for (const TraceModel& t : mix) total += t.weight;
  sim::RandomStreams streams(seed);
  auto& draw = streams.stream("trace-models");
  for (scheduler::JobSpec& j : jobs) {
    double u = draw.uniform() * total;
    std::size_t pick = 0;
    while (pick + 1 < mix.size() && u >= mix[pick].weight) u -= mix[pick++].weight;
    const double duration = static_cast<double>(j.iterations) * j.iteration_s;
    try {
      const JobRate rate = rates.rate(mix[pick].job, j.gpus, instance_of(pool, catalog));
      j.iteration_s = rate.iteration_s;
      j.overlap_s = rate.overlap_s;
      j.gradient_bytes = rate.gradient_bytes;
    } catch (const std::invalid_argument& e) {
      trace.fail("models", "models[" + std::to_string(pick) + "] (" + mix[pick].job.model + "): " + e.what());
    }
    j.iterations = std::max<std::int64_t>(1, std::llround(duration / uncontended_s(j, pool)));
  }
}

}  // namespace dlsim::experiment
