// Shared by the replay tests: a DGX-A100-like cluster, a replay on the catalog's A100-80GB, and
// the sum of an iteration breakdown's parts (which must equal the iteration time).
#pragma once
#include "models/catalog.hpp"
#include "models/model_graph.hpp"
#include "models/training_replay.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::models::test {

// `nodes` DGX-A100-like nodes: 8 GPUs on NVSwitch, 8 NICs of `nic_gbps`, one switch; the GPUs
// run NCCL's model of compute capability `nccl` (80: Ampere), or the ideal collectives (0).
inline network::Topology dgx_cluster(int nodes, double nic_gbps = 200, int nccl = 0) {
  network::NodeSpec node;
  node.kind = network::NodeKind::nvswitch;
  node.accelerators = 8;
  node.link_bandwidth = 300e9;
  node.nics = 8;
  node.nic_bandwidth = nic_gbps * 1e9 / 8;
  node.pcie_bandwidth = 32e9;
  node.nccl_compute_capability = nccl;
  network::FabricSpec f;
  f.kind = network::FabricKind::single_switch;
  f.nodes = nodes;
  return network::build_cluster(node, f);
}

// A training configuration on the built-in A100-80GB (its device figures and kernel profile).
inline TrainingConfig config(const ModelGraph& model, const network::Topology& topology, ParallelPlan plan) {
  const Catalog catalog = Catalog::builtin();
  TrainingConfig c;
  c.model = &model;
  c.device = *catalog.find_device("A100-80GB");
  c.profile = *catalog.find_profile("A100-80GB");
  c.topology = &topology;
  c.plan = plan;
  return c;
}

// A model of `blocks` identical blocks of one big matrix layer with a tiny output, so that
// compute dominates and pipeline transfers cost next to nothing.
inline ModelGraph uniform_model(int blocks) {
  ModelGraph g;
  g.name = "uniform";
  g.sample_unit = "sample";
  for (int b = 0; b < blocks; ++b) {
    Layer l;
    l.name = "block" + std::to_string(b);
    l.kind = LayerKind::linear;
    l.forward_flops = 4e11;   // ~1.3 ms forward on an A100 at fp16
    l.input_elements = 16;
    l.activation_elements = 16;
    l.block = b;
    g.layers.push_back(l);
  }
  return g;
}

// A plan of p pipeline stages and m micro-batches under `schedule` (v chunks per rank), fp16.
inline ParallelPlan pipeline_plan(PipelineSchedule schedule, int p, int m, int v = 1) {
  ParallelPlan plan;
  plan.pipeline = p;
  plan.micro_batches = m;
  plan.schedule = schedule;
  plan.virtual_stages = v;
  plan.precision = Precision::fp16;
  return plan;
}

// IterationBreakdown's parts (training_replay.hpp): they add up to iteration_s.
inline double sum_of_parts(const IterationBreakdown& b) {
  return b.compute_s + b.tensor_comm_s + b.expert_comm_s + b.context_comm_s + b.gather_wait_s + b.reduce_wait_s + b.zero_host_s +
         b.activation_offload_s + b.compression_blocking_s + b.pipeline_comm_s + b.pipeline_bubble_s + b.exposed_dp_comm_s + b.optimizer_s;
}

}  // namespace dlsim::models::test
