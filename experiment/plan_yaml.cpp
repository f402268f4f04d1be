// Reading workload.plan (see plan_yaml.hpp) and deriving the plan per node count.
#include "experiment/plan_yaml.hpp"

#include "experiment/plan_fit.hpp"

#include <cstdio>
#include <stdexcept>

namespace dlsim::experiment {
namespace {

constexpr std::int64_t kMaxWays = 1'000'000;

models::Axis axis_of(const std::string& s) {
  return s == "tensor"     ? models::Axis::tensor
         : s == "pipeline" ? models::Axis::pipeline
         : s == "context"  ? models::Axis::context
                           : models::Axis::data;
}

// plan.zero: how ZeRO-3 runs, in DeepSpeed's and FSDP's own terms (defaults: models::ZeroConfig).
void read_zero(MapReader& r, PlanConfig& p) {
  if (!r.has("zero")) return;
  if (p.zero_stage != 3) r.fail("zero", "describes how ZeRO-3 runs; needs zero_stage: 3");
  MapReader z(r.node("zero"), r.path_of("zero"), r.source(), true);
  models::ZeroConfig& c = p.zero;
  c.implementation = z.choice("implementation", {"deepspeed", "fsdp"}, "deepspeed") == "fsdp" ? models::ZeroImplementation::fsdp
                                                                                              : models::ZeroImplementation::deepspeed;
  const bool fsdp = c.implementation == models::ZeroImplementation::fsdp;
  const auto deepspeed_only = [&](const char* key) {
    if (fsdp && z.has(key)) z.fail(key, "is a DeepSpeed setting; FSDP (implementation: fsdp) has none such");
  };
  for (const char* key : {"fetch", "prefetch_bucket_size", "max_live_parameters", "max_reuse_distance", "param_persistence_threshold",
                          "reduce_bucket_size", "overlap_comm"}) {
    deepspeed_only(key);
  }
  if (!fsdp && z.has("backward_prefetch")) z.fail("backward_prefetch", "is an FSDP setting; needs implementation: fsdp");
  c.fetch = z.choice("fetch", {"per-parameter", "coalesced"}, "coalesced") == "per-parameter" ? models::DeepSpeedFetch::per_parameter
                                                                                              : models::DeepSpeedFetch::coalesced;
  c.prefetch_bucket_size = z.number("prefetch_bucket_size", 0, 1e15, c.prefetch_bucket_size);
  c.max_live_parameters = z.number("max_live_parameters", 0, 1e15, c.max_live_parameters);
  c.max_reuse_distance = z.number("max_reuse_distance", 0, 1e15, c.max_reuse_distance);
  c.param_persistence_threshold = z.number("param_persistence_threshold", 0, 1e15, c.param_persistence_threshold);
  c.reduce_bucket_size = z.number("reduce_bucket_size", 1, 1e15, c.reduce_bucket_size);
  c.overlap_comm = z.boolean("overlap_comm", true);
  const std::string prefetch = z.choice("backward_prefetch", {"pre", "post", "none"}, "pre");
  c.backward_prefetch = prefetch == "post" ? models::BackwardPrefetch::post
                        : prefetch == "none" ? models::BackwardPrefetch::none
                                             : models::BackwardPrefetch::pre;
  z.finish();
}

// plan.activation_checkpointing: DeepSpeed's options (all false by default, as DeepSpeed's).
void read_checkpointing(MapReader& r, PlanConfig& p) {
  if (!r.has("activation_checkpointing")) return;
  MapReader a(r.node("activation_checkpointing"), r.path_of("activation_checkpointing"), r.source(), true);
  models::ActivationCheckpointing& c = p.checkpointing;
  c.partition_activations = a.boolean("partition_activations", false);
  c.cpu_checkpointing = a.boolean("cpu_checkpointing", false);
  c.contiguous_memory_optimization = a.boolean("contiguous_memory_optimization", false);
  const char* needs_full = c.partition_activations ? "partition_activations" : c.cpu_checkpointing ? "cpu_checkpointing" : nullptr;
  if (needs_full != nullptr && p.recompute != models::Recompute::full) {
    a.fail(needs_full, "acts on the layer inputs that full recomputation keeps; needs plan.recompute: full");
  }
  if (c.contiguous_memory_optimization && !c.partition_activations) {
    a.fail("contiguous_memory_optimization", "needs partition_activations: true (DeepSpeed: contiguous checkpointing is only "
                                             "available with partitioned activations)");
  }
  a.finish();
}

// plan.stage_layers and friends: how the layers split over the pipeline stages (checked
// against the model by models::validate_plan, which knows the layer count).
void read_stage_split(MapReader& r, PlanConfig& p) {
  const YAML::Node list = r.node("stage_layers");
  if (list.IsDefined() && !list.IsNull()) {
    if (!list.IsSequence() || list.size() == 0) {
      r.fail("stage_layers", "expected a list of layer counts, one per virtual pipeline stage, e.g. [7, 8, 8, 7]");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = r.path_of("stage_layers") + "[" + std::to_string(i) + "]";
      int v = -1;
      try {
        v = list[i].IsScalar() ? list[i].as<int>() : -1;
      } catch (const YAML::Exception&) {
        v = -1;
      }
      if (v < 0 || v > 1'000'000) throw ConfigError(r.source().locate(list[i], path), path, "expected a layer count >= 0");
      p.stage_layers.push_back(v);
    }
  }
  p.first_stage_layers = static_cast<int>(r.integer("first_stage_layers", 1, 1'000'000, 0));
  p.last_stage_layers = static_cast<int>(r.integer("last_stage_layers", 1, 1'000'000, 0));
  p.account_for_embedding = r.boolean("account_for_embedding", false);
  p.account_for_loss = r.boolean("account_for_loss", false);
  const bool ends = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  const bool accounted = p.account_for_embedding || p.account_for_loss;
  if (!p.stage_layers.empty() && (ends || accounted)) {
    r.fail("stage_layers", "lists every stage's layers; drop first/last_stage_layers and account_for_embedding/loss");
  }
  if (ends && accounted) {
    r.fail(p.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers",
           "give the end stages' layers or account for the embedding and loss, not both");
  }
  if ((!p.stage_layers.empty() || ends || accounted) && p.pipeline < 2) {
    const char* key = !p.stage_layers.empty() ? "stage_layers" : p.first_stage_layers > 0 ? "first_stage_layers"
                      : p.last_stage_layers > 0 ? "last_stage_layers" : p.account_for_embedding ? "account_for_embedding"
                                                                                                  : "account_for_loss";
    r.fail(key, "splits the layers over pipeline stages; needs pipeline >= 2");
  }
}

// plan.gradient_compression (models/gradient_compression.hpp).
void read_compression(MapReader& r, PlanConfig& p) {
  if (!r.has("gradient_compression")) return;
  MapReader c(r.node("gradient_compression"), r.path_of("gradient_compression"), r.source(), true);
  models::GradientCompression& g = p.compression;
  const std::string method = c.choice("method", {"none", "fp16", "bf16", "int8", "one-bit", "top-k", "powersgd"}, "none");
  for (auto m : {models::CompressionMethod::none, models::CompressionMethod::fp16, models::CompressionMethod::bf16,
                 models::CompressionMethod::int8, models::CompressionMethod::one_bit, models::CompressionMethod::top_k,
                 models::CompressionMethod::powersgd}) {
    if (models::to_string(m) == method) g.method = m;
  }
  if (g.method != models::CompressionMethod::top_k && c.has("ratio")) c.fail("ratio", "is the fraction of elements top-k sends; needs method: top-k");
  if (g.method != models::CompressionMethod::powersgd && c.has("rank")) c.fail("rank", "is PowerSGD's rank; needs method: powersgd");
  g.ratio = c.number("ratio", 1e-9, 1, 0.01);
  if (c.has("ratio") && !(g.ratio > 0 && g.ratio <= 1)) c.fail("ratio", "expected a fraction in (0, 1]");
  g.rank = static_cast<int>(c.integer("rank", 1, 4096, 4));
  if (g.method != models::CompressionMethod::none && p.zero_stage != 0) {
    c.fail("method", "compresses the all-reduce of plain data parallelism; needs zero_stage: 0");
  }
  c.finish();
}

// plan.parameter_server (models/parameter_server.hpp).
void read_parameter_server(MapReader& r, PlanConfig& p) {
  if (!r.has("parameter_server")) return;
  MapReader c(r.node("parameter_server"), r.path_of("parameter_server"), r.source(), true);
  models::ParameterServerConfig& ps = p.parameter_server;
  ps.enabled = true;
  ps.servers = static_cast<int>(c.integer("servers", 1, 100'000, 1));
  ps.placement = c.choice("placement", {"dedicated", "colocated"}, "dedicated") == "colocated" ? models::ServerPlacement::colocated
                                                                                                : models::ServerPlacement::dedicated;
  ps.synchronous = c.boolean("synchronous", true);
  if (ps.synchronous && c.has("staleness")) c.fail("staleness", "bounds asynchronous training; needs synchronous: false");
  ps.staleness = static_cast<int>(c.integer("staleness", 0, 1'000'000, 0));
  if (ps.placement == models::ServerPlacement::colocated && c.has("server_nic")) {
    c.fail("server_nic", "co-located servers use the worker nodes' NICs; needs placement: dedicated");
  }
  ps.server_nic = c.quantity("server_nic", Dimension::bandwidth, 1, 1e15, 0);
  ps.server_memory_bandwidth = c.quantity("server_memory_bandwidth", Dimension::bandwidth, 1, 1e15, 0);
  if (ps.placement == models::ServerPlacement::colocated && c.has("server_price")) {
    c.fail("server_price", "co-located servers run on the worker nodes (billed with them); needs placement: dedicated");
  }
  p.server_price_per_hour = c.quantity("server_price", Dimension::price_rate, 0, 1e5, 0);
  if (p.tensor != 1 || p.pipeline != 1 || p.expert != 1 || p.zero_stage != 0) {
    r.fail("parameter_server", "serves plain data parallelism; needs tensor, pipeline and expert 1 and zero_stage 0");
  }
  if (p.compression.method != models::CompressionMethod::none) {
    r.fail("gradient_compression", "compresses all-reduce; parameter servers (plan.parameter_server) take uncompressed pushes here");
  }
  c.finish();
}

}  // namespace

PlanConfig read_plan(MapReader& r) {
  PlanConfig p;
  p.data = static_cast<int>(r.integer("data", 1, kMaxWays, 0));
  p.tensor = static_cast<int>(r.integer("tensor", 1, 1024, 1));
  p.pipeline = static_cast<int>(r.integer("pipeline", 1, 4096, 1));
  p.expert = static_cast<int>(r.integer("expert", 1, 4096, 1));
  p.context = static_cast<int>(r.integer("context", 1, 4096, 1));
  p.sequence_parallel = r.boolean("sequence_parallel", false);
  const std::string schedule = r.choice("schedule", {"1f1b", "gpipe", "interleaved-1f1b", "zb-h1"}, "1f1b");
  p.schedule = schedule == "gpipe" ? models::PipelineSchedule::gpipe
               : schedule == "interleaved-1f1b" ? models::PipelineSchedule::interleaved
               : schedule == "zb-h1"            ? models::PipelineSchedule::zb_h1
                                                : models::PipelineSchedule::one_f_one_b;
  p.virtual_stages = static_cast<int>(r.integer("virtual_stages", 1, 1024, 1));
  p.micro_batch_size = static_cast<int>(r.integer("micro_batch_size", 1, 100'000'000, 0));
  p.micro_batches = static_cast<int>(r.integer("micro_batches", 1, 1'000'000, 0));
  p.zero_stage = static_cast<int>(r.integer("zero_stage", 0, 3, 0));
  const std::string recompute = r.choice("recompute", {"none", "selective", "full"}, "none");
  p.recompute = recompute == "full" ? models::Recompute::full
                : recompute == "selective" ? models::Recompute::selective
                                           : models::Recompute::none;
  p.recompute_layers = static_cast<int>(r.integer("recompute_layers", 1, 1'000'000, 0));
  p.scatter_gather = r.boolean("scatter_gather", true);
  p.overlap_p2p = r.boolean("overlap_p2p", false);
  p.tp_comm_overlap = r.boolean("tp_comm_overlap", false);
  p.overlap_param_gather = r.boolean("overlap_param_gather", false);
  read_zero(r, p);
  read_checkpointing(r, p);
  read_stage_split(r, p);
  read_compression(r, p);
  read_parameter_server(r, p);
  const YAML::Node order = r.node("order");
  if (order.IsDefined() && !order.IsNull()) {
    // Three axes (context then sits just outside tensor, as in the default) or all four.
    if (!order.IsSequence() || (order.size() != 3 && order.size() != 4)) {
      r.fail("order", "expected the axes from innermost to outermost, e.g. [tensor, pipeline, data] or [tensor, context, pipeline, data]");
    }
    std::array<bool, 4> seen{};
    std::vector<models::Axis> axes;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::string path = r.path_of("order") + "[" + std::to_string(i) + "]";
      const std::string name = order[i].IsScalar() ? order[i].Scalar() : "";
      if (name != "tensor" && name != "pipeline" && name != "data" && name != "context") {
        throw ConfigError(r.source().locate(order[i], path), path,
                          "'" + name + "' is not an axis; allowed: tensor, context, pipeline, data");
      }
      const models::Axis a = axis_of(name);
      if (seen[static_cast<std::size_t>(a)]) throw ConfigError(r.source().locate(order[i], path), path, "axis '" + name + "' appears twice");
      seen[static_cast<std::size_t>(a)] = true;
      axes.push_back(a);
    }
    if (!seen[static_cast<std::size_t>(models::Axis::context)]) {
      if (!seen[static_cast<std::size_t>(models::Axis::tensor)]) r.fail("order", "three axes must be tensor, pipeline and data");
      const auto tensor = std::find(axes.begin(), axes.end(), models::Axis::tensor);
      axes.insert(tensor + 1, models::Axis::context);
    }
    std::copy(axes.begin(), axes.end(), p.order.begin());
  }
  if (p.micro_batch_size > 0 && p.micro_batches > 0) {
    r.fail("micro_batches", "give micro_batch_size or micro_batches, not both: the batch fixes the other");
  }
  r.finish();
  return p;
}

namespace {
std::string describe_fraction(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "-%g", f);
  return buf;
}
}  // namespace

std::string describe_plan(const models::ParallelPlan& p) {
  // Appends only: GCC 12 warns falsely (-Wrestrict) on `"x" + std::to_string(n)` chains here.
  std::string s = "d";
  const auto add = [&s](const char* prefix, long long n) {
    s += prefix;
    s += std::to_string(n);
  };
  add("", p.data);
  if (p.tensor > 1) {
    add(" t", p.tensor);
    if (p.sequence_parallel) s += "+sp";
  }
  if (p.pipeline > 1) add(" p", p.pipeline);
  if (p.context > 1) add(" c", p.context);
  if (p.expert > 1) add(" e", p.expert);
  if (p.virtual_stages > 1) add(" v", p.virtual_stages);
  add(" m", p.micro_batches);
  add("x", p.micro_batch_size);
  if (p.pipeline > 1) {
    s += " ";
    s += models::to_string(p.schedule);
  }
  if (p.zero_stage > 0) add(" zero", p.zero_stage);
  if (p.zero_stage == 3 && p.zero.implementation == models::ZeroImplementation::fsdp) s += "-fsdp";
  if (p.recompute != models::Recompute::none) {
    s += " rc-";
    s += models::to_string(p.recompute);
    if (p.recompute_layers > 0) add("", p.recompute_layers);
  }
  if (p.compression.method != models::CompressionMethod::none) {
    s += " ";
    s += models::to_string(p.compression.method);
    if (p.compression.method == models::CompressionMethod::top_k) s += describe_fraction(p.compression.ratio);
    if (p.compression.method == models::CompressionMethod::powersgd) add("-r", p.compression.rank);
  }
  const models::ParameterServerConfig& ps = p.parameter_server;
  if (ps.enabled) {
    add(" ps", ps.servers);
    s += ps.placement == models::ServerPlacement::colocated ? "-colo" : "-ded";
    if (ps.synchronous) {
      s += "-sync";
    } else {
      add("-async", ps.staleness);
    }
  }
  return s;
}

models::ParallelPlan plan_with_numerics(const WorkloadConfig& workload) {
  models::ParallelPlan p;
  p.precision = workload.precision;
  p.gradient_precision = workload.gradient_precision;
  p.optimizer = workload.optimizer;
  p.overlap_grad_reduce = workload.overlap;
  p.bucket_bytes = workload.bucket_bytes;
  return p;
}

std::vector<PlanConfig> Scenario::plans() const {
  return sweep.plans.empty() ? std::vector<PlanConfig>{workload.plan} : sweep.plans;
}

models::ParallelPlan Scenario::plan_for(int nodes, int plan_index) const {
  const PlanConfig& c = sweep.plans.empty() ? workload.plan : sweep.plans.at(static_cast<std::size_t>(plan_index));
  return resolve_plan(c, workload, cluster.instance, cluster.device, nodes * cluster.instance.accelerators_per_node);
}

models::ParallelPlan resolve_plan(const PlanConfig& c, const WorkloadConfig& workload, const models::InstanceType& instance,
                                  const models::DeviceSpec& device, int accelerators) {
  models::ParallelPlan p = plan_with_numerics(workload);
  p.tensor = c.tensor;
  p.pipeline = c.pipeline;
  p.expert = c.expert;
  p.context = c.context;
  p.sequence_parallel = c.sequence_parallel;
  p.schedule = c.schedule;
  p.virtual_stages = c.virtual_stages;
  p.zero_stage = c.zero_stage;
  p.recompute = c.recompute;
  p.recompute_layers = c.recompute_layers;
  p.order = c.order;
  p.scatter_gather = c.scatter_gather;
  p.overlap_p2p = c.overlap_p2p;
  p.tp_comm_overlap = c.tp_comm_overlap;
  p.overlap_param_gather = c.overlap_param_gather;
  p.zero = c.zero;
  p.checkpointing = c.checkpointing;
  p.stage_layers = c.stage_layers;
  p.first_stage_layers = c.first_stage_layers;
  p.last_stage_layers = c.last_stage_layers;
  p.account_for_embedding = c.account_for_embedding;
  p.account_for_loss = c.account_for_loss;
  p.compression = c.compression;
  p.parameter_server = c.parameter_server;
  if (p.parameter_server.enabled) {
    // Figures left to the instance type: its NIC (dedicated servers alike), its latency, and the
    // host CPU's memory bandwidth (kDefaultServerMemoryBandwidth).
    models::ParameterServerConfig& ps = p.parameter_server;
    ps.worker_nic = instance.network_bandwidth;
    if (ps.server_nic <= 0) ps.server_nic = instance.network_bandwidth;
    if (ps.server_memory_bandwidth <= 0) ps.server_memory_bandwidth = kDefaultServerMemoryBandwidth;
    ps.latency_s = instance.network_latency_s;
    ps.replicas_per_node = instance.accelerators_per_node;
  }
  const int model_ways = c.tensor * c.pipeline * c.context;
  if (c.data > 0) {
    p.data = c.data;
  } else {
    if (accelerators % model_ways != 0) {
      throw std::invalid_argument(std::string("plan.tensor: tensor x pipeline") + (c.context > 1 ? " x context" : "") + " = " +
                                  std::to_string(model_ways) + " does not divide the " +
                                  std::to_string(accelerators) + " accelerators");
    }
    p.data = accelerators / model_ways;
  }
  // Samples per data-parallel replica per iteration.
  std::int64_t replica_batch = workload.batch;
  if (workload.batch_mode == BatchMode::global) {
    if (workload.batch % p.data != 0) {
      throw std::invalid_argument("batch: global batch " + std::to_string(workload.batch) + " does not split evenly over " +
                                  std::to_string(p.data) + " data-parallel replicas");
    }
    replica_batch = workload.batch / p.data;
  }
  if (c.micro_batches > 0) {
    if (replica_batch % c.micro_batches != 0) {
      throw std::invalid_argument("plan.micro_batches: " + std::to_string(c.micro_batches) + " micro-batches do not split the " +
                                  std::to_string(replica_batch) + " samples per replica evenly");
    }
    p.micro_batches = c.micro_batches;
    p.micro_batch_size = static_cast<int>(replica_batch / c.micro_batches);
  } else {
    // Without a size: micro-batches of one sample when there is a pipeline to fill; otherwise the
    // largest micro-batch that fits in memory (the whole replica batch, no accumulation, when it
    // fits), as a practitioner sets gradient accumulation.
    p.micro_batch_size = c.micro_batch_size > 0 ? c.micro_batch_size
                         : c.pipeline > 1       ? 1
                                                : largest_fitting_micro_batch(workload.model, p, static_cast<int>(replica_batch),
                                                                              device.memory_bytes);
    if (replica_batch % p.micro_batch_size != 0) {
      throw std::invalid_argument("plan.micro_batch_size: micro-batches of " + std::to_string(p.micro_batch_size) +
                                  " do not split the " + std::to_string(replica_batch) + " samples per replica evenly");
    }
    p.micro_batches = static_cast<int>(replica_batch / p.micro_batch_size);
  }
  return p;
}

}  // namespace dlsim::experiment
