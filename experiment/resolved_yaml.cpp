// The scenario as dlsim resolved it: every default filled in, every catalog name replaced by the
// figures used, every quantity in SI units. Stored beside the input text in the results, so a
// result file says exactly what produced it even after the catalog changes.
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "experiment/plan_yaml.hpp"
#include "experiment/results.hpp"
#include "network/link_tech.hpp"
#include "network/routing.hpp"
#include "network/topology_builders.hpp"
#include "models/precision.hpp"
#include "models/zoo.hpp"

namespace dlsim::experiment {
namespace {

void emit_device(YAML::Emitter& out, const models::DeviceSpec& d, const models::DeviceProfile& p) {
  out << YAML::Key << "device" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << d.name;
  out << YAML::Key << "peak_flops_per_s" << YAML::Value << YAML::BeginMap;
  for (auto precision : {models::Precision::fp64, models::Precision::fp32, models::Precision::tf32,
                         models::Precision::fp16, models::Precision::bf16, models::Precision::fp8}) {
    out << YAML::Key << std::string(models::to_string(precision)) << YAML::Value << d.peak(precision);
  }
  out << YAML::EndMap;
  out << YAML::Key << "memory_bytes" << YAML::Value << d.memory_bytes;
  out << YAML::Key << "memory_bandwidth_bytes_per_s" << YAML::Value << d.memory_bandwidth;
  out << YAML::Key << "matmul_efficiency" << YAML::Value << p.matmul_efficiency;
  out << YAML::Key << "memory_efficiency" << YAML::Value << p.memory_efficiency;
  out << YAML::Key << "kernel_launch_overhead_s" << YAML::Value << p.kernel_launch_overhead_s;
  out << YAML::Key << "source" << YAML::Value << d.source;
  out << YAML::Key << "profile" << YAML::Value << (p.source.empty() ? "catalog efficiencies" : p.source);
  out << YAML::EndMap;
}

void emit_cluster(YAML::Emitter& out, const ClusterConfig& c) {
  const models::InstanceType& t = c.instance;
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "instance" << YAML::Value << c.instance_name;
  out << YAML::Key << "accelerators_per_node" << YAML::Value << t.accelerators_per_node;
  out << YAML::Key << "network_bandwidth_bytes_per_s" << YAML::Value << t.network_bandwidth;
  out << YAML::Key << "network_latency_s" << YAML::Value << t.network_latency_s;
  out << YAML::Key << "intra_node_bandwidth_bytes_per_s" << YAML::Value << t.intra_node_bandwidth;
  out << YAML::Key << "intra_node_latency_s" << YAML::Value << t.intra_node_latency_s;
  out << YAML::Key << "price_usd_per_node_hour" << YAML::Value << t.price_per_hour;
  if (t.spot_price_per_hour > 0) out << YAML::Key << "spot_price_usd_per_node_hour" << YAML::Value << t.spot_price_per_hour;
  out << YAML::Key << "price_date" << YAML::Value << t.price_date;
  out << YAML::Key << "source" << YAML::Value << t.source;
  if (!c.profile_path.empty()) out << YAML::Key << "profile_file" << YAML::Value << c.profile_path;
  if (!c.accuracy_note.empty()) out << YAML::Key << "note" << YAML::Value << c.accuracy_note;
  emit_device(out, c.device, c.profile);
  out << YAML::EndMap;
}

void emit_network(YAML::Emitter& out, const NetworkConfig& n) {
  static const char* const kNodeKinds[] = {"nvswitch", "hybrid-cube-mesh", "pcie", "tpu-board", "nvlink-pairs"};
  static const char* const kFabricKinds[] = {"single-switch", "leaf-spine", "fat-tree", "rail-optimized", "torus", "wan"};
  out << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
  if (n.custom) {
    out << YAML::Key << "custom" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "vertices" << YAML::Value << n.custom_vertices.size();
    out << YAML::Key << "links" << YAML::Value << n.custom_links.size();
    out << YAML::EndMap;
    out << YAML::Key << "all_reduce" << YAML::Value << network::to_string(n.all_reduce);
    out << YAML::EndMap;
    return;
  }
  out << YAML::Key << "node" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << kNodeKinds[static_cast<int>(n.node.kind)];
  out << YAML::Key << "link_bandwidth_bytes_per_s" << YAML::Value << n.node.link_bandwidth;
  out << YAML::Key << "link_latency_s" << YAML::Value << n.node.link_latency_s;
  out << YAML::Key << "nics" << YAML::Value << n.node.nics;
  out << YAML::Key << "nic_bandwidth_bytes_per_s" << YAML::Value << n.node.nic_bandwidth;
  out << YAML::Key << "nic_latency_s" << YAML::Value << n.node.nic_latency_s;
  out << YAML::Key << "pcie_bandwidth_bytes_per_s" << YAML::Value << n.node.pcie_bandwidth;
  out << YAML::Key << "pcie_latency_s" << YAML::Value << n.node.pcie_latency_s;
  out << YAML::Key << "link_tech" << YAML::Value << network::to_string(n.node.link_tech);
  out << YAML::Key << "pcie_tech" << YAML::Value << network::to_string(n.node.pcie_tech);
  out << YAML::Key << "nic_tech" << YAML::Value << network::to_string(n.node.nic_tech);
  out << YAML::Key << "nvls_bandwidth_bytes_per_s" << YAML::Value << n.node.nvls_bandwidth;
  out << YAML::Key << "nccl_compute_capability" << YAML::Value << n.node.nccl_compute_capability;
  out << YAML::Key << "ici" << YAML::Value << network::to_string(n.ici);
  out << YAML::EndMap;
  out << YAML::Key << "transport" << YAML::Value << network::to_string(n.node.transport);
  if (n.node.transport == network::Transport::tcp) {
    out << YAML::Key << "socket_bandwidth_bytes_per_s" << YAML::Value << n.node.socket_bandwidth;
  }
  if (n.node.nccl_rings_per_nic > 0) {
    out << YAML::Key << "nccl_rings_per_nic" << YAML::Value << n.node.nccl_rings_per_nic;
  }
  const network::FabricSpec& f = n.fabric;
  out << YAML::Key << "fabric" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << kFabricKinds[static_cast<int>(f.kind)];
  out << YAML::Key << "routing" << YAML::Value << network::to_string(f.routing.value_or(network::default_routing(f.kind)));
  out << YAML::Key << "link_bandwidth_bytes_per_s" << YAML::Value << f.link_bandwidth;
  out << YAML::Key << "link_latency_s" << YAML::Value << f.link_latency_s;
  out << YAML::Key << "oversubscription" << YAML::Value << f.oversubscription;
  out << YAML::Key << "nodes_per_leaf" << YAML::Value << f.nodes_per_leaf;
  out << YAML::Key << "spines" << YAML::Value << f.spines;
  out << YAML::Key << "k" << YAML::Value << f.fat_tree_k;
  if (n.torus_dims_given) out << YAML::Key << "dims" << YAML::Value << YAML::Flow << f.dims;
  if (f.kind == network::FabricKind::torus) {
    if (!f.wrap.empty()) out << YAML::Key << "wrap" << YAML::Value << YAML::Flow << f.wrap;
    if (f.pods > 0) {
      out << YAML::Key << "pods" << YAML::Value << f.pods;
    } else {
      out << YAML::Key << "pods" << YAML::Value << "auto";  // per node count: ici_pods_for
    }
  }
  out << YAML::Key << "regions" << YAML::Value << f.regions;
  out << YAML::Key << "wan_bandwidth_bytes_per_s" << YAML::Value << f.wan_bandwidth;
  out << YAML::Key << "wan_latency_s" << YAML::Value << f.wan_latency_s;
  out << YAML::Key << "sharp_bandwidth_bytes_per_s" << YAML::Value << f.sharp_bandwidth;
  out << YAML::EndMap;
  out << YAML::Key << "all_reduce" << YAML::Value << network::to_string(n.all_reduce);
  out << YAML::EndMap;
}

// Cluster scenarios: every variant's pools and scheduler, and its job count (jobs can be many).
void emit_cluster_scenario(YAML::Emitter& out, const ClusterScenario& cs) {
  out << YAML::Key << "variants" << YAML::Value << YAML::BeginSeq;
  for (const ClusterVariant& v : cs.variants) {
    out << YAML::BeginMap;
    out << YAML::Key << "label" << YAML::Value << v.label;
    out << YAML::Key << "policy" << YAML::Value << v.options.policy;
    out << YAML::Key << "backfill" << YAML::Value << v.options.backfill;
    out << YAML::Key << "placement" << YAML::Value << scheduler::to_string(v.options.placement);
    out << YAML::Key << "jobs" << YAML::Value << v.spec.jobs.size();
    out << YAML::Key << "fabric_sharing" << YAML::Value
        << (v.spec.fabric_sharing == scheduler::FabricSharing::flow ? "flow" : "analytical");
    out << YAML::Key << "pools" << YAML::Value << YAML::BeginSeq;
    for (const scheduler::PoolSpec& p : v.spec.pools) {
      out << YAML::BeginMap;
      out << YAML::Key << "name" << YAML::Value << p.name;
      out << YAML::Key << "instance" << YAML::Value << p.instance;
      out << YAML::Key << "gpus_per_node" << YAML::Value << p.gpus_per_node;
      out << YAML::Key << "nodes" << YAML::Value << p.nodes;
      out << YAML::Key << "capacity" << YAML::Value << scheduler::to_string(p.capacity);
      out << YAML::Key << "price_usd_per_node_hour" << YAML::Value << p.price_per_node_hour;
      out << YAML::Key << "provisioning_s" << YAML::Value << p.provisioning_s;
      out << YAML::Key << "reclaim_mean_s" << YAML::Value << p.reclaim.mean();
      out << YAML::Key << "notice_s" << YAML::Value << p.notice_s;
      out << YAML::Key << "failure_mean_s" << YAML::Value << p.failure.mean();
      out << YAML::Key << "region" << YAML::Value << p.region << YAML::Key << "zone" << YAML::Value << p.zone;
      out << YAML::Key << "fallback" << YAML::Value << p.fallback;
      if (p.capacity == scheduler::Capacity::reserved) {
        out << YAML::Key << "on_demand_usd_per_node_hour" << YAML::Value << p.on_demand_price_per_node_hour;
      }
      if (p.market.enabled()) {
        out << YAML::Key << "spot_trace" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "instance" << YAML::Value << p.market.prices.instance;
        out << YAML::Key << "zone" << YAML::Value << p.market.prices.zone;
        out << YAML::Key << "max_price_usd_per_hour" << YAML::Value << p.market.max_price_per_hour;
        out << YAML::Key << "start_unix_s" << YAML::Value << p.market.prices.start_unix_s + p.market.start_s;
        out << YAML::Key << "points" << YAML::Value << p.market.prices.points.size();
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "billing" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "granularity_s" << YAML::Value << v.spec.billing.granularity_s;
    out << YAML::Key << "minimum_s" << YAML::Value << v.spec.billing.minimum_s;
    out << YAML::Key << "inter_zone_usd_per_gb" << YAML::Value << v.spec.egress.inter_zone_usd_per_gb;
    out << YAML::Key << "inter_region_usd_per_gb" << YAML::Value << v.spec.egress.inter_region_usd_per_gb;
    out << YAML::EndMap;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_plan(YAML::Emitter& out, const PlanConfig& p) {
  out << YAML::Key << "plan" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "data" << YAML::Value << (p.data > 0 ? std::to_string(p.data) : "derived");
  out << YAML::Key << "tensor" << YAML::Value << p.tensor;
  out << YAML::Key << "pipeline" << YAML::Value << p.pipeline;
  out << YAML::Key << "expert" << YAML::Value << p.expert;
  out << YAML::Key << "context" << YAML::Value << p.context;
  out << YAML::Key << "sequence_parallel" << YAML::Value << p.sequence_parallel;
  out << YAML::Key << "schedule" << YAML::Value << models::to_string(p.schedule);
  out << YAML::Key << "virtual_stages" << YAML::Value << p.virtual_stages;
  out << YAML::Key << "micro_batch_size" << YAML::Value << (p.micro_batch_size > 0 ? std::to_string(p.micro_batch_size) : "derived");
  out << YAML::Key << "micro_batches" << YAML::Value << (p.micro_batches > 0 ? std::to_string(p.micro_batches) : "derived");
  out << YAML::Key << "zero_stage" << YAML::Value << p.zero_stage;
  out << YAML::Key << "recompute" << YAML::Value << models::to_string(p.recompute);
  if (p.recompute_layers > 0) out << YAML::Key << "recompute_layers" << YAML::Value << p.recompute_layers;
  out << YAML::Key << "order" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (models::Axis a : p.order) out << models::to_string(a);
  out << YAML::EndSeq;
  out << YAML::Key << "scatter_gather" << YAML::Value << p.scatter_gather;
  out << YAML::Key << "overlap_p2p" << YAML::Value << p.overlap_p2p;
  out << YAML::Key << "tp_comm_overlap" << YAML::Value << p.tp_comm_overlap;
  out << YAML::Key << "overlap_param_gather" << YAML::Value << p.overlap_param_gather;
  if (!p.stage_layers.empty()) {
    out << YAML::Key << "stage_layers" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int c : p.stage_layers) out << c;
    out << YAML::EndSeq;
  }
  if (p.first_stage_layers > 0) out << YAML::Key << "first_stage_layers" << YAML::Value << p.first_stage_layers;
  if (p.last_stage_layers > 0) out << YAML::Key << "last_stage_layers" << YAML::Value << p.last_stage_layers;
  if (p.pipeline > 1) {
    out << YAML::Key << "account_for_embedding" << YAML::Value << p.account_for_embedding;
    out << YAML::Key << "account_for_loss" << YAML::Value << p.account_for_loss;
  }
  if (p.zero_stage == 3) {
    const models::ZeroConfig& z = p.zero;
    out << YAML::Key << "zero" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "implementation" << YAML::Value << models::to_string(z.implementation);
    if (z.implementation == models::ZeroImplementation::fsdp) {
      out << YAML::Key << "backward_prefetch" << YAML::Value << models::to_string(z.backward_prefetch);
    } else {
      out << YAML::Key << "fetch" << YAML::Value << models::to_string(z.fetch);
      out << YAML::Key << "prefetch_bucket_size" << YAML::Value << z.prefetch_bucket_size;
      out << YAML::Key << "max_live_parameters" << YAML::Value << z.max_live_parameters;
      out << YAML::Key << "max_reuse_distance" << YAML::Value << z.max_reuse_distance;
      out << YAML::Key << "param_persistence_threshold" << YAML::Value << z.param_persistence_threshold;
      out << YAML::Key << "reduce_bucket_size" << YAML::Value << z.reduce_bucket_size;
      out << YAML::Key << "overlap_comm" << YAML::Value << z.overlap_comm;
    }
    out << YAML::EndMap;
  }
  const models::ActivationCheckpointing& a = p.checkpointing;
  out << YAML::Key << "activation_checkpointing" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "partition_activations" << YAML::Value << a.partition_activations;
  out << YAML::Key << "cpu_checkpointing" << YAML::Value << a.cpu_checkpointing;
  out << YAML::Key << "contiguous_memory_optimization" << YAML::Value << a.contiguous_memory_optimization;
  out << YAML::EndMap;
  if (p.compression.method != models::CompressionMethod::none) {
    out << YAML::Key << "gradient_compression" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "method" << YAML::Value << models::to_string(p.compression.method);
    if (p.compression.method == models::CompressionMethod::top_k) out << YAML::Key << "ratio" << YAML::Value << p.compression.ratio;
    if (p.compression.method == models::CompressionMethod::powersgd) out << YAML::Key << "rank" << YAML::Value << p.compression.rank;
    out << YAML::EndMap;
  }
  const models::ParameterServerConfig& ps = p.parameter_server;
  if (ps.enabled) {
    out << YAML::Key << "parameter_server" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "servers" << YAML::Value << ps.servers;
    out << YAML::Key << "placement" << YAML::Value << models::to_string(ps.placement);
    out << YAML::Key << "synchronous" << YAML::Value << ps.synchronous;
    if (!ps.synchronous) out << YAML::Key << "staleness" << YAML::Value << ps.staleness;
    if (ps.placement == models::ServerPlacement::dedicated) {
      out << YAML::Key << "server_nic" << YAML::Value;
      if (ps.server_nic > 0) out << ps.server_nic; else out << "instance";
    }
    if (ps.placement == models::ServerPlacement::dedicated) out << YAML::Key << "server_price" << YAML::Value << p.server_price_per_hour;
    out << YAML::Key << "server_memory_bandwidth" << YAML::Value << (ps.server_memory_bandwidth > 0 ? ps.server_memory_bandwidth : kDefaultServerMemoryBandwidth);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_workload(YAML::Emitter& out, const WorkloadConfig& w) {
  out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << w.model_name;
  if (w.sequence_length > 0) out << YAML::Key << "sequence_length" << YAML::Value << w.sequence_length;
  if (w.decoder) {
    out << YAML::Key << "attention" << YAML::Value
        << (w.decoder->flash_attention ? std::string(models::attention_choice(w.decoder->flash_kernel)) : "unfused");
  } else if (!w.user_model && models::zoo_model_is_encoder(w.model_name)) {
    const auto flash = std::find_if(w.model.layers.begin(), w.model.layers.end(),
                                    [](const models::Layer& l) { return l.kind == models::LayerKind::attention; });
    const bool found = flash != w.model.layers.end();
    out << YAML::Key << "attention" << YAML::Value << (found ? std::string(models::attention_choice(flash->attention.kernel)) : "unfused");
  }
  if (!w.pad_vocabulary) out << YAML::Key << "pad_vocabulary" << YAML::Value << false;
  if (w.channels_first) out << YAML::Key << "memory_format" << YAML::Value << "nchw";
  if (!w.fused_kernels) out << YAML::Key << "fused_kernels" << YAML::Value << false;
  if (!w.fused_cross_entropy) out << YAML::Key << "fused_cross_entropy" << YAML::Value << false;
  out << YAML::Key << "parameters" << YAML::Value << w.model.parameters();
  out << YAML::Key << "forward_flops_per_sample" << YAML::Value << w.model.forward_flops_per_sample();
  out << YAML::Key << "precision" << YAML::Value << std::string(models::to_string(w.precision));
  out << YAML::Key << "optimizer" << YAML::Value
      << models::to_string(w.optimizer);
  out << YAML::Key << (w.batch_mode == BatchMode::global ? "global_batch" : "per_device_batch") << YAML::Value
      << w.batch;
  if (w.dataset_samples > 0) out << YAML::Key << "dataset_samples" << YAML::Value << w.dataset_samples;
  if (w.epochs > 0) out << YAML::Key << "epochs" << YAML::Value << w.epochs;
  if (w.iterations > 0) out << YAML::Key << "iterations" << YAML::Value << w.iterations;
  if (w.tokens > 0) out << YAML::Key << "tokens" << YAML::Value << w.tokens;
  out << YAML::Key << "overlap" << YAML::Value << w.overlap;
  out << YAML::Key << "bucket_bytes" << YAML::Value << w.bucket_bytes;
  out << YAML::Key << "gradient_precision" << YAML::Value << std::string(models::to_string(w.gradient_precision));
  emit_plan(out, w.plan);
  out << YAML::EndMap;
}

void emit_collective(YAML::Emitter& out, const CollectiveConfig& c) {
  out << YAML::Key << "collective" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "operation" << YAML::Value << network::to_string(c.operation);
  out << YAML::Key << "algorithm" << YAML::Value << network::to_string(c.algorithm);
  out << YAML::Key << "protocol" << YAML::Value << network::to_string(c.protocol);
  if (c.ranks_per_node > 0) out << YAML::Key << "ranks_per_node" << YAML::Value << c.ranks_per_node;
  out << YAML::Key << "sizes_bytes" << YAML::Value << YAML::Flow << c.sizes;
  out << YAML::Key << "groups" << YAML::Value << c.groups;
  out << YAML::Key << "placement" << YAML::Value << (c.interleaved ? "interleaved" : "packed");
  out << YAML::Key << "server_shards" << YAML::Value << c.server_shards;
  out << YAML::EndMap;
}

// The plan: section of a plan scenario, with its defaults.
void emit_search(YAML::Emitter& out, const PlanSearchConfig& p) {
  out << YAML::Key << "plan" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "objective" << YAML::Value << (p.objective == PlanObjective::cheapest ? "cheapest" : "fastest");
  out << YAML::Key << "deadline_s" << YAML::Value << p.deadline_s;
  out << YAML::Key << "budget_usd" << YAML::Value << p.budget_usd;
  out << YAML::Key << "max_accelerators" << YAML::Value << p.max_accelerators;
  out << YAML::Key << "instances" << YAML::Value << YAML::Flow << p.instances;
  out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << p.nodes;
  out << YAML::Key << "capacity" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (scheduler::Capacity c : p.capacities) out << scheduler::to_string(c);
  out << YAML::EndSeq;
  if (p.spot) {
    const PlanSpotConfig& spot = *p.spot;
    out << YAML::Key << "spot" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "discount" << YAML::Value << spot.discount;  // < 0: the catalog's spot prices
    out << YAML::Key << "reclaim_mean_s" << YAML::Value << spot.reclaim.mean();
    out << YAML::Key << "notice_s" << YAML::Value << spot.notice_s;  // < 0: the provider's
    out << YAML::Key << "provisioning_s" << YAML::Value << spot.provisioning_s;
    out << YAML::Key << "replications" << YAML::Value << spot.replications;
    out << YAML::Key << "checkpoint_policy" << YAML::Value << scheduler::to_string(spot.checkpoint.policy);
    out << YAML::Key << "checkpoint_size_bytes" << YAML::Value << spot.checkpoint.size_bytes;  // 0: the model's
    out << YAML::Key << "checkpoint_write_bytes_per_s" << YAML::Value << spot.checkpoint.write_bandwidth;
    out << YAML::Key << "checkpoint_read_bytes_per_s" << YAML::Value << spot.checkpoint.read_bandwidth;
    out << YAML::Key << "warmup_s" << YAML::Value << spot.checkpoint.warmup_s;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

}  // namespace

std::string resolved_yaml(const Scenario& s) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);  // round-trips every double
  out << YAML::BeginMap;
  out << YAML::Key << "seed" << YAML::Value << s.seed;
  if (s.cluster_sim) {
    emit_cluster_scenario(out, *s.cluster_sim);
    out << YAML::EndMap;
    return out.c_str();
  }
  emit_cluster(out, s.cluster);
  emit_network(out, s.network);
  if (s.collective) {
    emit_collective(out, *s.collective);
  } else {
    emit_workload(out, s.workload);
  }
  if (s.search) emit_search(out, *s.search);
  out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << s.node_counts();
  if (!s.sweep.plans.empty()) {
    out << YAML::Key << "sweep_plans" << YAML::Value << YAML::BeginSeq;
    for (const PlanConfig& p : s.sweep.plans) {
      out << YAML::BeginMap;
      emit_plan(out, p);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return out.c_str();
}

}  // namespace dlsim::experiment
