// Reading cluster scenarios (see cluster_yaml.hpp).
#include "experiment/cluster_yaml.hpp"
#include "experiment/builtin_profiles.hpp"
#include "experiment/sweep_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>
#include <set>

#include "experiment/catalog_yaml.hpp"
#include "experiment/cluster_job_yaml.hpp"
#include "experiment/market_yaml.hpp"
#include "experiment/nearest_name.hpp"
#include "experiment/overrides.hpp"
#include "models/catalog.hpp"
#include "models/storage.hpp"
#include "scheduler/autoscaler.hpp"
#include "scheduler/trace.hpp"

namespace dlsim::experiment {

scheduler::Hazard read_hazard(MapReader& parent, const std::string& key) {
  constexpr double kHazardYear = 365.0 * 86400.0;
  scheduler::Hazard h;
  if (!parent.has(key)) {
    parent.allow({key.c_str()});
    return h;
  }
  MapReader r(parent.node(key), parent.path_of(key), parent.source());
  const bool weibull = r.has("weibull_shape") || r.has("weibull_scale");
  if (weibull) {
    h.kind = scheduler::Hazard::Kind::weibull;
    h.shape = r.number("weibull_shape", 0.01, 100);
    h.scale_s = r.quantity("weibull_scale", Dimension::duration, 1, 100 * kHazardYear);
    r.allow({"mean"});
    if (r.has("mean")) r.fail("mean", "give either mean (exponential) or weibull_shape and weibull_scale, not both");
  } else {
    h.kind = scheduler::Hazard::Kind::exponential;
    h.mean_s = r.quantity("mean", Dimension::duration, 1, 100 * kHazardYear);
  }
  r.finish();
  return h;
}

namespace {

constexpr double kYear = 365.0 * 86400.0;

// pools[i].autoscale: which auto-scaler (scheduler/autoscaler.hpp) and its own keys; a key of
// another auto-scaler is an error naming the one that takes it.
void read_autoscaler(MapReader& a, scheduler::PoolSpec& p) {
  p.autoscaler = a.choice("policy", scheduler::autoscaler_names(), "reactive");
  if (p.autoscaler == "utilization") {
    p.target_utilization = a.number("target", 0, 1, 0.8);
    if (!(p.target_utilization > 0)) a.fail("target", "must be in (0, 1]: the share of GPUs busy to aim for, e.g. 0.8");
    p.low_utilization = a.number("low", 0, 1, p.target_utilization / 2);
    if (p.low_utilization >= p.target_utilization) {
      a.fail("low", "must be below the target (" + std::to_string(p.target_utilization) + ")");
    }
  }
  if (p.autoscaler == "predictive") p.forecast_window_s = a.quantity("window", Dimension::duration, 1, 100 * kYear, 3600.0);
  if (p.autoscaler != "reactive") p.scale_interval_s = a.quantity("interval", Dimension::duration, 1, 86400, 60.0);
  const std::pair<const char*, const char*> owners[] = {
      {"target", "utilization"}, {"low", "utilization"}, {"window", "predictive"}, {"interval", "utilization or predictive"}};
  for (const auto& [key, owner] : owners) {
    if (a.has(key) && std::string(owner).find(p.autoscaler) == std::string::npos) {
      a.fail(key, std::string("applies only to policy ") + owner + " (this pool's policy is " + p.autoscaler + ")");
    }
  }
}

scheduler::PoolSpec read_pool(MapReader& r, const models::Catalog& catalog, const std::string& base_dir, TraceFiles& files) {
  scheduler::PoolSpec p;
  p.name = r.text("name");
  p.instance = r.text("instance");
  const models::InstanceType* t = catalog.find_instance(p.instance);
  if (t == nullptr) {
    r.fail("instance", "unknown instance type '" + p.instance + "'" + did_you_mean(p.instance, catalog.instance_names()) +
                           "; run 'dlsim catalog instances' for the list");
  }
  p.gpus_per_node = t->accelerators_per_node;
  p.nodes = static_cast<int>(r.integer("nodes", 0, 100'000));
  const std::string capacity = r.choice("capacity", {"on-demand", "spot", "reserved"}, "on-demand");
  p.capacity = capacity == "spot" ? scheduler::Capacity::spot
               : capacity == "reserved" ? scheduler::Capacity::reserved
                                        : scheduler::Capacity::on_demand;
  // Price: given, or the catalog's on-demand price less a discount (spot and reserved need one).
  const bool discounted = p.capacity != scheduler::Capacity::on_demand && !r.has("spot_trace");
  if (r.has("price") && r.has("discount")) r.fail("discount", "give price or discount, not both");
  if (r.has("price")) {
    p.price_per_node_hour = r.quantity("price", Dimension::price_rate, 0, 1e5);
    r.allow({"discount"});
  } else {
    if (discounted && !r.has("discount")) {
      r.fail_missing("discount", "the fraction off the on-demand price (e.g. 0.7 for spot), or a price");
    }
    const double discount = r.number("discount", 0, 0.99, 0.0);
    p.price_per_node_hour = t->price_per_hour * (1.0 - discount);
    r.allow({"price"});
  }
  p.provisioning_s = r.quantity("provisioning", Dimension::duration, 0, 86400, 300.0);
  p.provisioning_random = r.boolean("provisioning_random", false);
  const auto fitted = read_fitted_hazard(r, "reclaim", base_dir, files);
  p.reclaim = fitted ? *fitted : read_hazard(r, "reclaim");
  if (p.reclaim.kind != scheduler::Hazard::Kind::none && p.capacity != scheduler::Capacity::spot) {
    r.fail("reclaim", "only spot capacity is reclaimed; use failure for node failures");
  }
  p.notice_s = r.quantity("notice", Dimension::duration, 0, 3600, 120.0);
  p.failure = read_hazard(r, "failure");
  if (p.capacity == scheduler::Capacity::reserved) p.on_demand_price_per_node_hour = t->price_per_hour;  // beyond the commitment
  read_pool_market(r, p, p.instance, t->price_per_hour, base_dir, files);
  p.replace_lost_nodes = r.boolean("replace_lost_nodes", true);
  p.nodes_per_leaf = static_cast<int>(r.integer("nodes_per_leaf", 1, 100'000, 16));
  p.nic_bandwidth = r.quantity("nic_bandwidth", Dimension::bandwidth, 1, 1e15, t->network_bandwidth);
  p.oversubscription = r.number("oversubscription", 1, 1000, 1.0);
  if (r.has("autoscale")) {
    MapReader a(r.node("autoscale"), r.path_of("autoscale"), r.source());
    p.min_nodes = static_cast<int>(a.integer("min", 0, 100'000, 0));
    p.max_nodes = static_cast<int>(a.integer("max", 0, 100'000));
    p.idle_timeout_s = a.quantity("idle", Dimension::duration, 0, 86400 * 30.0, 600.0);
    p.scale_up_cooldown_s = a.quantity("cooldown", Dimension::duration, 0, 86400.0, 60.0);
    read_autoscaler(a, p);
    if (p.min_nodes > p.nodes) a.fail("min", "must not exceed the pool's starting nodes (" + std::to_string(p.nodes) + ")");
    if (p.max_nodes < p.nodes) a.fail("max", "must be at least the pool's starting nodes (" + std::to_string(p.nodes) + ")");
    a.finish();
  } else {
    r.allow({"autoscale"});
  }
  r.finish();
  return p;
}

// checkpoint.storage: where checkpoints go, from the storage kinds of models/storage.hpp, which
// set their bandwidths and price (write_bandwidth and read_bandwidth, when given, cap the job):
// - aws/s3: each node uploads its shard in parts, 10 at a time (boto3's default
//   TransferConfig.max_concurrency), each at one connection's rate; S3 itself scales.
// - aws/ebs-gp3: each node to its own volume, at the volume's throughput.
// - aws/fsx-lustre-N: the file system's throughput for the whole job (N MB/s per TiB of
//   max(checkpoint size, 1.2 TiB)).
// A node's own disk is refused: a checkpoint there is lost with the node.
void apply_checkpoint_storage(MapReader& r, scheduler::CheckpointSpec& c) {
  std::vector<std::string> names;
  for (const models::StorageSpec& s : models::builtin_storage()) {
    if (s.kind != models::StorageKind::local) names.push_back(s.name);
  }
  if (r.text("storage") == "local-nvme") r.fail("storage", "a checkpoint on a node's own disk is lost with the node: use aws/s3, aws/ebs-gp3 or aws/fsx-lustre-N");
  const models::StorageSpec& s = *models::find_storage(r.choice("storage", names));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kTiB = 1024.0 * 1024 * 1024 * 1024;
  c.storage_type = s.name;
  c.storage_price_per_gb_month = s.price_per_gb_month;
  double whole = kInf;
  switch (s.kind) {
    case models::StorageKind::object: c.write_bandwidth_per_node = 10 * s.connection_bytes_per_s; break;
    case models::StorageKind::block: c.write_bandwidth_per_node = s.bytes_per_s; break;
    case models::StorageKind::parallel_fs: whole = s.bytes_per_s_per_tib * std::max(c.size_bytes, s.min_capacity_bytes) / kTiB; break;
    case models::StorageKind::local: break;
  }
  c.read_bandwidth_per_node = c.write_bandwidth_per_node;
  c.write_bandwidth = r.quantity("write_bandwidth", Dimension::bandwidth, 1, 1e13, whole);
  c.read_bandwidth = r.quantity("read_bandwidth", Dimension::bandwidth, 1, 1e13, whole);
}

}  // namespace

scheduler::CheckpointSpec read_checkpoint(MapReader& parent) {
  scheduler::CheckpointSpec c;
  c.warmup_s = 0;
  if (!parent.has("checkpoint")) {
    parent.allow({"checkpoint"});
    return c;
  }
  MapReader r(parent.node("checkpoint"), parent.path_of("checkpoint"), parent.source());
  const std::string policy = r.choice("policy", {"none", "fixed", "young-daly"}, "none");
  c.policy = policy == "fixed" ? scheduler::CheckpointPolicy::fixed
             : policy == "young-daly" ? scheduler::CheckpointPolicy::young_daly
                                      : scheduler::CheckpointPolicy::none;
  if (c.policy == scheduler::CheckpointPolicy::fixed) {
    c.interval_s = r.quantity("interval", Dimension::duration, 1, kYear);
  } else {
    r.allow({"interval"});
    if (r.has("interval")) r.fail("interval", "only a fixed policy takes an interval (young-daly computes its own)");
  }
  c.size_bytes = r.quantity("size", Dimension::size, 0, 1e16, 0.0);
  if (r.has("storage")) {
    apply_checkpoint_storage(r, c);
  } else {
    c.write_bandwidth = r.quantity("write_bandwidth", Dimension::bandwidth, 1, 1e13, 1e9);
    c.read_bandwidth = r.quantity("read_bandwidth", Dimension::bandwidth, 1, 1e13, c.write_bandwidth);
  }
  c.warmup_s = r.quantity("warmup", Dimension::duration, 0, 86400, 0.0);
  c.storage_region = r.optional_text("storage_region").value_or("");
  c.storage_zone = r.optional_text("storage_zone").value_or("");
  r.finish();
  return c;
}

namespace {

scheduler::JobSpec read_job(MapReader& r, const std::vector<scheduler::PoolSpec>& pool_specs, const models::Catalog& catalog,
                            ModelJobRates& rates) {
  std::set<std::string> pools;
  for (const auto& p : pool_specs) pools.insert(p.name);
  scheduler::JobSpec j;
  j.name = r.text("name");
  j.submit_s = r.quantity("submit", Dimension::duration, 0, 100 * kYear, 0.0);
  j.gpus = static_cast<int>(r.integer("gpus", 1, 1'000'000));
  j.pool = r.optional_text("pool").value_or("");
  if (!j.pool.empty() && !pools.count(j.pool)) {
    r.fail("pool", "no pool is named '" + j.pool + "'" + did_you_mean(j.pool, std::vector<std::string>(pools.begin(), pools.end())));
  }
  const auto own = std::find_if(pool_specs.begin(), pool_specs.end(), [&](const auto& p) { return p.name == j.pool; });
  // Elastic first: a planned job's rate is then planned at each size it may take.
  if (r.has("elastic") && !r.node("elastic").IsNull()) {  // null: not elastic
    MapReader e(r.node("elastic"), r.path_of("elastic"), r.source());
    j.min_gpus = static_cast<int>(e.integer("min_gpus", 1, j.gpus));
    j.max_gpus = static_cast<int>(e.integer("max_gpus", j.gpus, 1'000'000));
    j.resize_pause_s = e.quantity("resize_pause", Dimension::duration, 0, 86400, 0.0);
    e.finish();
  } else {
    r.allow({"elastic"});
  }
  read_job_rate_and_work(r, j, own != pool_specs.end() ? *own : pool_specs.front(), catalog, rates);
  j.priority = static_cast<int>(r.integer("priority", -1'000'000, 1'000'000, 0));
  j.queue = r.optional_text("queue").value_or("");
  j.checkpoint = read_checkpoint(r);
  r.finish();
  return j;
}

// A trace's jobs as JobSpecs: the recorded duration becomes whole iterations of about a second.
void add_trace_jobs(const scheduler::Trace& trace, std::int64_t limit, const scheduler::CheckpointSpec& checkpoint,
                    std::vector<scheduler::JobSpec>& out) {
  std::int64_t n = 0;
  for (const scheduler::TraceJob& t : trace.jobs) {
    if (limit > 0 && n >= limit) break;
    scheduler::JobSpec j = scheduler::job_spec_from_trace(t);
    j.checkpoint = checkpoint;
    out.push_back(j);
    ++n;
  }
}

// Synthetic jobs a scenario may generate over all its variants: each variant generates its own
// trace and a job takes about 0.9 KB in memory (`dlsim check` of 1,000,000 synthetic jobs: 0.89
// GB), so this bounds a scenario near 2 GB instead of letting it run out of memory.
constexpr std::int64_t kMaxSyntheticJobsInAll = 2'000'000;

void read_trace(MapReader& r, const std::string& base_dir, std::uint64_t seed, std::vector<scheduler::JobSpec>& out,
                const scheduler::PoolSpec& pool, const models::Catalog& catalog, ModelJobRates& rates, std::size_t variants) {
  const std::string format = r.choice("format", {"philly", "tiresias", "gavel", "pai", "helios", "dlsim", "synthetic"});
  const std::int64_t limit = r.integer("jobs", 1, 100'000'000, 0);
  scheduler::Trace trace;
  const auto path_of = [&](const std::string& key) {
    const std::string p = r.text(key);
    const std::filesystem::path fp(p);
    const std::string full = fp.is_absolute() ? p : (std::filesystem::path(base_dir) / fp).string();
    if (!std::filesystem::exists(full)) r.fail(key, "trace file '" + full + "' does not exist");
    if (std::filesystem::is_directory(full)) r.fail(key, "'" + full + "' is a folder; give the trace file inside it");
    return full;
  };
  try {
    if (format == "synthetic") {
      scheduler::SyntheticTraceSpec s;
      s.jobs = static_cast<int>(limit > 0 ? limit : 1000);
      if (static_cast<std::int64_t>(s.jobs) * static_cast<std::int64_t>(variants) > kMaxSyntheticJobsInAll) {
        r.fail("jobs", std::to_string(s.jobs) + " synthetic jobs in each of " + std::to_string(variants) + " variant" +
                           (variants == 1 ? "" : "s") + " are more than " + std::to_string(kMaxSyntheticJobsInAll) +
                           " in all (each variant generates its own, about 0.9 KB per job in memory)");
      }
      s.arrival_rate_per_s = 1.0 / r.quantity("mean_interarrival", Dimension::duration, 1e-3, 86400 * 365.0, 100.0);
      s.duration_median_s = r.quantity("duration_median", Dimension::duration, 1, 1e9, s.duration_median_s);
      s.duration_mean_s = r.quantity("duration_mean", Dimension::duration, 1, 1e9, s.duration_mean_s);
      s.duration_max_s = r.quantity("duration_max", Dimension::duration, 0, 1e9, 0.0);
      const YAML::Node gpus = r.node("gpus");
      if (gpus.IsDefined() && !gpus.IsNull()) {
        if (!gpus.IsMap() || gpus.size() == 0) r.fail("gpus", "expected a mapping from GPU count to weight, e.g. {1: 0.9, 8: 0.1}");
        s.gpu_counts.clear();
        s.gpu_weights.clear();
        for (const auto& kv : gpus) {
          const std::string count = key_text(kv.first, r.path_of("gpus"), r.source());
          const std::string at = r.path_of("gpus") + "." + count;
          s.gpu_counts.push_back(static_cast<int>(parse_integer(kv.first, at, r.source(), 1, 1'000'000)));
          s.gpu_weights.push_back(parse_number(kv.second, at, r.source(), 0, 1e12));
        }
        if (*std::max_element(s.gpu_weights.begin(), s.gpu_weights.end()) <= 0) r.fail("gpus", "the weights must not all be 0");
      }
      const YAML::Node queues = r.node("queues");
      if (queues.IsDefined() && !queues.IsNull()) {
        if (!queues.IsSequence()) r.fail("queues", "expected a list of queue names, e.g. [team-a, team-b]");
        for (std::size_t i = 0; i < queues.size(); ++i) {
          const std::string at = r.path_of("queues") + "[" + std::to_string(i) + "]";
          s.queues.push_back(scalar_text(queues[i], at, r.source(), "a queue name"));
        }
      }
      trace = scheduler::synthetic_trace(s, seed);
      r.allow({"path"});
    } else if (format == "pai") {
      trace = scheduler::read_pai_tables(path_of("job_table"), path_of("task_table"));
    } else {
      const std::string path = path_of("path");
      if (format == "philly") trace = scheduler::read_philly_csv(path);
      if (format == "tiresias") trace = scheduler::read_tiresias_csv(path);
      if (format == "gavel") trace = scheduler::read_gavel_trace(path);
      if (format == "helios") trace = scheduler::read_helios_csv(path);
      if (format == "dlsim") trace = scheduler::read_dlsim_csv(path);
    }
  } catch (const ConfigError&) {
    throw;  // already located (a missing trace file): not to be wrapped as a reader's failure below
  } catch (const std::invalid_argument& e) {
    r.fail("format", e.what());
  } catch (const std::runtime_error& e) {
    r.fail(format == "synthetic" ? "format" : (format == "pai" ? "job_table" : "path"), e.what());
  }
  if (trace.jobs.empty()) r.fail(format == "pai" ? "job_table" : "path", "the trace holds no jobs (a header and no rows?)");
  const scheduler::CheckpointSpec checkpoint = read_checkpoint(r);
  const std::vector<TraceModel> mix = read_trace_models(r);
  r.finish();
  std::vector<scheduler::JobSpec> jobs;
  add_trace_jobs(trace, limit, checkpoint, jobs);
  assign_trace_models(jobs, mix, pool, catalog, rates, seed, r);
  out.insert(out.end(), jobs.begin(), jobs.end());
}

// scheduler.queue_weights: {queue: weight}; every queue named must hold jobs.
void read_queue_weights(MapReader& r, const std::vector<scheduler::JobSpec>& jobs, scheduler::SimulationOptions& o) {
  const YAML::Node w = r.node("queue_weights");
  if (!w.IsDefined() || w.IsNull()) return;
  if (!w.IsMap()) r.fail("queue_weights", "expected a mapping from queue name to weight, e.g. {team-a: 2, team-b: 1}");
  std::vector<std::string> queues;
  for (const auto& j : jobs) {
    if (std::find(queues.begin(), queues.end(), j.queue) == queues.end()) queues.push_back(j.queue);
  }
  MapReader weights(w, r.path_of("queue_weights"), r.source());
  for (const auto& kv : w) {
    const std::string name = kv.first.Scalar();
    if (std::find(queues.begin(), queues.end(), name) == queues.end()) {
      std::string known;
      for (const auto& q : queues) known += (known.empty() ? "" : ", ") + (q.empty() ? std::string("''") : q);
      weights.fail(name, "no job is in queue '" + name + "'" + did_you_mean(name, queues) + "; the jobs' queues: " + known);
    }
    o.queue_weights.emplace_back(name, weights.number(name, 1e-6, 1e6));
  }
  weights.finish();
}

scheduler::SimulationOptions read_scheduler(MapReader& r, std::uint64_t seed, const std::vector<scheduler::JobSpec>& jobs) {
  scheduler::SimulationOptions o;
  o.seed = seed;
  o.policy = r.choice("policy", scheduler::policy_names(), "fifo");
  o.backfill = r.boolean("backfill", false);
  read_queue_weights(r, jobs, o);
  o.horizon_s = r.quantity("horizon", Dimension::duration, 1, 100 * kYear, 365.0 * 86400);
  const std::string placement = r.choice("placement", {"packed", "spread", "topology-aware"}, "packed");
  o.placement = placement == "spread" ? scheduler::Placement::spread
                : placement == "topology-aware" ? scheduler::Placement::topology_aware
                                                : scheduler::Placement::packed;
  const YAML::Node t = r.node("las_thresholds");
  if (t.IsDefined() && !t.IsNull()) {
    if (!t.IsSequence()) r.fail("las_thresholds", "expected a list of attained GPU-seconds, e.g. [3200, 36000]");
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string path = r.path_of("las_thresholds") + "[" + std::to_string(i) + "]";
      o.las_thresholds_gpu_s.push_back(parse_number(t[i], path, r.source(), 0, 1e18));
    }
  }
  r.finish();
  return o;
}

ClusterVariant read_variant(const YAML::Node& root, const Source& source, const std::string& base_dir, std::uint64_t seed,
                            const models::Catalog& catalog, ModelJobRates& rates, TraceFiles& files, std::size_t variants) {
  ClusterVariant v;
  const YAML::Node pools = child(root, "pools");
  if (!pools.IsSequence() || pools.size() == 0) {
    throw ConfigError(source.locate(pools.IsDefined() ? pools : root, "pools"), "pools",
                      "expected a non-empty list of node pools: {name, instance, nodes, capacity, ...}");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    MapReader r(pools[i], "pools[" + std::to_string(i) + "]", source);
    v.spec.pools.push_back(read_pool(r, catalog, base_dir, files));
    if (!names.insert(v.spec.pools.back().name).second) {
      throw ConfigError(source.locate(pools[i]["name"], "pools[" + std::to_string(i) + "].name"),
                        "pools[" + std::to_string(i) + "].name", "pool name '" + v.spec.pools.back().name + "' appears twice");
    }
  }
  check_fallbacks(pools, source, v.spec.pools);
  MapReader billing(child(root, "billing"), "billing", source, true);
  read_billing(billing, v.spec);
  MapReader wan(child(root, "wan"), "wan", source, true);  // the links between regions
  v.spec.wan_bandwidth = wan.quantity("bandwidth", Dimension::bandwidth, 1, 1e15, v.spec.wan_bandwidth);
  wan.finish();
  // fabric.sharing: how jobs on shared NICs, uplinks and WAN links slow each other
  // (scheduler/fabric_share.hpp): the mean-rate model (analytical, the default) or flow level.
  MapReader fabric(child(root, "fabric"), "fabric", source, true);
  v.spec.fabric_sharing = fabric.choice("sharing", {"analytical", "flow"}, "analytical") == "flow"
                              ? scheduler::FabricSharing::flow
                              : scheduler::FabricSharing::analytical;
  fabric.finish();
  const YAML::Node jobs = child(root, "jobs");
  const YAML::Node trace = child(root, "trace");
  if ((!jobs.IsDefined() || jobs.IsNull()) && (!trace.IsDefined() || trace.IsNull())) {
    throw ConfigError(source.locate(root, ""), "jobs", "a cluster scenario needs jobs: [...] or a trace: {...}");
  }
  if (jobs.IsDefined() && !jobs.IsNull()) {
    if (!jobs.IsSequence()) throw ConfigError(source.locate(jobs, "jobs"), "jobs", "expected a list of jobs");
    std::set<std::string> job_names;  // results, the Gantt chart and resizes name jobs: one name, one job
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      MapReader r(jobs[i], "jobs[" + std::to_string(i) + "]", source);
      v.spec.jobs.push_back(read_job(r, v.spec.pools, catalog, rates));
      if (!job_names.insert(v.spec.jobs.back().name).second) {
        r.fail("name", "job name '" + v.spec.jobs.back().name + "' appears twice; give each job its own name");
      }
    }
  }
  if (trace.IsDefined() && !trace.IsNull()) {
    MapReader r(trace, "trace", source);
    read_trace(r, base_dir, seed, v.spec.jobs, v.spec.pools.front(), catalog, rates, variants);
  }
  MapReader s(child(root, "scheduler"), "scheduler", source, true);
  v.options = read_scheduler(s, seed, v.spec.jobs);
  // Jobs larger than all the pools they may use fail at arrival in the simulation; say so before running.
  for (std::size_t i = 0; i < v.spec.jobs.size() && jobs.IsSequence() && i < jobs.size(); ++i) {
    const int most = scheduler::max_gpus_for(v.spec, v.spec.jobs[i]);
    if (v.spec.jobs[i].start_gpus() > most) {
      const std::string path = "jobs[" + std::to_string(i) + "].gpus";
      throw ConfigError(source.locate(jobs[i]["gpus"], path), path,
                        std::to_string(v.spec.jobs[i].gpus) + " GPUs is more than the pools it may use hold (" + std::to_string(most) + ")");
    }
  }
  default_storage_regions(v.spec);
  try {
    scheduler::validate(v.spec);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(source.locate(root, ""), "", e.what());
  }
  return v;
}

}  // namespace

ClusterScenario read_cluster_scenario(const YAML::Node& root, const std::function<YAML::Node()>& fresh_root,
                                      const Source& source, const std::string& base_dir, std::uint64_t seed) {
  models::Catalog catalog = builtin_catalog();
  if (child(root, "catalog").IsDefined()) {
    const std::string file = scalar_text(root["catalog"], "catalog", source, "the path of a catalog file (YAML)");
    const std::filesystem::path p = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file)
                                                                             : std::filesystem::path(base_dir) / file;
    load_catalog_file(p.string(), source, "catalog", root["catalog"], catalog);
  }
  ModelJobRates rates(catalog);  // shared by the variants: each configuration is replayed once
  ClusterScenario out;
  TraceFiles files;  // spot price histories and probe logs, read once for all variants
  // sweep: {"key.path": [values]}: every combination, in the order written, the last key fastest.
  std::vector<std::pair<std::string, std::vector<std::pair<YAML::Node, std::string>>>> axes;
  const YAML::Node sweep = child(root, "sweep");
  if (sweep.IsDefined() && !sweep.IsNull()) {
    if (!sweep.IsMap()) throw ConfigError(source.locate(sweep, "sweep"), "sweep", "expected a mapping from key paths to lists of values");
    for (const auto& kv : sweep) {
      const std::string key = key_text(kv.first, "sweep", source);
      if (is_variant_sweep_key(key)) continue;  // sweep.grid / zip / random: variants of `dlsim sweep`
      const std::string path = "sweep." + key;
      if (!kv.second.IsSequence() || kv.second.size() == 0) {
        throw ConfigError(source.locate(kv.second, path), path, "expected a non-empty list of values for " + key);
      }
      std::vector<std::pair<YAML::Node, std::string>> values;
      for (const auto& v : kv.second) {
        YAML::Emitter e;
        e << YAML::Flow << v;
        values.emplace_back(v, e.c_str());
      }
      axes.emplace_back(key, values);
    }
  }
  // variants: [{name: label, "key.path": value, ...}]: hand-picked combinations of overrides,
  // each crossed with the sweep.
  struct Picked {
    std::string name;
    std::vector<Override> overrides;
  };
  std::vector<Picked> picked;
  const YAML::Node variants = child(root, "variants");
  if (variants.IsDefined() && !variants.IsNull()) {
    if (!variants.IsSequence() || variants.size() == 0) {
      throw ConfigError(source.locate(variants, "variants"), "variants",
                        "expected a list of variants, each a mapping of key paths to values ({} for the scenario as written)");
    }
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const std::string path = "variants[" + std::to_string(i) + "]";
      if (!variants[i].IsMap()) throw ConfigError(source.locate(variants[i], path), path, "expected a mapping of key paths to values");
      Picked p;
      for (const auto& kv : variants[i]) {
        const std::string key = key_text(kv.first, path, source);
        if (key == "name") {
          p.name = scalar_text(kv.second, path + ".name", source, "a label for the variant");
          continue;
        }
        YAML::Emitter e;
        e << YAML::Flow << kv.second;
        p.overrides.push_back({key, e.c_str()});
      }
      picked.push_back(p);
    }
  } else {
    picked.push_back({});
  }
  std::size_t combinations = 1;
  for (const auto& a : axes) combinations *= a.second.size();
  if (combinations * picked.size() > 10'000) throw ConfigError(source.locate(root, "sweep"), "sweep", "more than 10,000 combinations");
  for (std::size_t k = 0; k < picked.size(); ++k) {
    for (std::size_t c = 0; c < combinations; ++c) {
      YAML::Node variant_root = fresh_root();
      Source variant_source = source;
      std::vector<Override> overrides = picked[k].overrides;
      std::size_t rest = c;
      std::vector<std::size_t> pick(axes.size());
      for (std::size_t a = axes.size(); a-- > 0;) {
        pick[a] = rest % axes[a].second.size();
        rest /= axes[a].second.size();
      }
      for (std::size_t a = 0; a < axes.size(); ++a) overrides.push_back({axes[a].first, axes[a].second[pick[a]].second});
      std::string label = picked[k].name;
      for (std::size_t o = 0; o < overrides.size(); ++o) {
        const bool from_sweep = o >= picked[k].overrides.size();
        try {
          apply_override(variant_root, overrides[o]);
        } catch (const ConfigError& e) {
          const ConfigError located = located_in_file(e, overrides, source.overrides, source.file);
          throw ConfigError(located.where(), (from_sweep ? "sweep." : "variants[" + std::to_string(k) + "].") + overrides[o].path,
                            e.message());
        }
        variant_source.overrides.push_back(overrides[o]);
        if (picked[k].name.empty() || from_sweep) label += (label.empty() ? "" : ", ") + overrides[o].path + "=" + overrides[o].value;
      }
      ClusterVariant v;
      try {
        v = read_variant(variant_root, variant_source, base_dir, seed, catalog, rates, files, combinations * picked.size());
      } catch (const ConfigError& e) {
        // A variants or sweep value is the file's, not a --set the user typed.
        const ConfigError located = located_in_file(e, overrides, source.overrides, source.file);
        if (located.where().file == e.where().file) throw;
        throw ConfigError(located.where(), located.key_path(), located.message() + " [in variant " + label + "]");
      }
      v.label = label.empty() ? "base" : label;
      out.variants.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace dlsim::experiment
