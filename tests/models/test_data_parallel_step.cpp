#include <gtest/gtest.h>

#include <cmath>

#include "models/catalog.hpp"
#include "models/data_parallel_step.hpp"
#include "models/memory_estimate.hpp"
#include "models/roofline.hpp"
#include "models/zoo.hpp"
#include "network/collectives.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::models {
namespace {

// p3.16xlarge-like nodes (8 GPUs on NVSwitch at 150 GB/s, one 25 Gbps NIC) on one switch.
network::Topology fabric(int nodes) {
  network::NodeSpec node;
  node.kind = network::NodeKind::nvswitch;
  node.accelerators = 8;
  node.link_bandwidth = 150e9;
  node.nics = 1;
  node.nic_bandwidth = 25e9 / 8;
  node.nic_latency_s = 12e-6;
  network::FabricSpec f;
  f.kind = network::FabricKind::single_switch;
  f.nodes = nodes;
  return network::build_cluster(node, f);
}

DataParallelConfig config_for(const ModelGraph& model, const network::Topology& topology, int nodes, bool overlap) {
  const Catalog catalog = Catalog::builtin();
  const InstanceType& node = *catalog.find_instance("aws/p3.16xlarge");
  DataParallelConfig c;
  c.model = &model;
  c.device = *catalog.find_device(node.device);
  c.profile = *catalog.find_profile(node.device);
  c.precision = Precision::fp16;
  c.per_device_batch = 64;
  c.nodes = nodes;
  c.accelerators_per_node = node.accelerators_per_node;
  c.topology = &topology;
  c.all_reduce = network::Algorithm::ring;
  c.overlap = overlap;
  return c;
}

// The all-reduce time of every bucket alone on the fabric, bucketed as the replay does
// (backward order, a bucket closes when full).
double sum_of_bucket_allreduces(const DataParallelConfig& c) {
  network::CollectiveSpec spec;
  spec.algorithm = c.all_reduce;
  const auto& accelerators = c.topology->accelerators();
  spec.ranks.assign(accelerators.begin(), accelerators.begin() + c.nodes * c.accelerators_per_node);
  double total = 0, open = 0;
  const auto flush = [&] {
    spec.bytes = open;
    if (open > 0) total += network::run_collective(*c.topology, spec).time_s;
    open = 0;
  };
  for (auto it = c.model->layers.rbegin(); it != c.model->layers.rend(); ++it) {
    open += it->parameters * bytes_per_element(c.gradient_precision);
    if (open >= c.bucket_bytes) flush();
  }
  flush();
  return total;
}

TEST(DataParallelStep, SingleAcceleratorHasNoCommunication) {
  const ModelGraph m = resnet50();
  const network::Topology t = fabric(1);
  DataParallelConfig c = config_for(m, t, 1, true);
  c.accelerators_per_node = 1;
  const StepBreakdown s = simulate_data_parallel_step(c);
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.allreduce_busy_s, 0.0);
  // One event per layer, each rounded to the nanosecond.
  EXPECT_NEAR(s.iteration_s, s.forward_s + s.backward_s + s.optimizer_s, 1e-9 * (m.layers.size() + 2));
}

TEST(DataParallelStep, WithoutOverlapCommunicationAddsUp) {
  const ModelGraph m = resnet50();
  const network::Topology t = fabric(4);
  const DataParallelConfig c = config_for(m, t, 4, false);
  const StepBreakdown s = simulate_data_parallel_step(c);
  const double comm = sum_of_bucket_allreduces(c);
  EXPECT_GT(s.buckets, 1);
  // Every ring step is rounded to the nanosecond: a few ns per bucket at most.
  EXPECT_NEAR(s.allreduce_busy_s, comm, 1e-6);
  EXPECT_NEAR(s.iteration_s, s.forward_s + s.backward_s + comm + s.optimizer_s, 1e-6);
}

TEST(DataParallelStep, OverlapLiesBetweenHiddenAndExposedBounds) {
  const ModelGraph m = resnet50();
  for (int nodes : {2, 8, 32}) {
    const network::Topology t = fabric(nodes);
    const StepBreakdown overlapped = simulate_data_parallel_step(config_for(m, t, nodes, true));
    const StepBreakdown exposed = simulate_data_parallel_step(config_for(m, t, nodes, false));
    const double compute = overlapped.forward_s + overlapped.backward_s + overlapped.optimizer_s;
    EXPECT_GE(overlapped.iteration_s, compute) << nodes;
    EXPECT_GE(overlapped.iteration_s, overlapped.forward_s + overlapped.allreduce_busy_s) << nodes;
    EXPECT_LE(overlapped.iteration_s, exposed.iteration_s) << nodes;
    EXPECT_LT(overlapped.exposed_comm_s, exposed.exposed_comm_s) << nodes;
  }
}

TEST(DataParallelStep, MoreNodesNeverShortenTheIteration) {
  const ModelGraph m = bert_large(128);
  double previous = 0;
  for (int nodes : {1, 2, 4, 8, 16}) {
    const network::Topology t = fabric(nodes);
    const StepBreakdown s = simulate_data_parallel_step(config_for(m, t, nodes, true));
    EXPECT_GE(s.iteration_s, previous) << nodes;
    previous = s.iteration_s;
  }
}

TEST(DataParallelStep, FasterNetworkHelps) {
  const ModelGraph m = resnet50();
  const network::Topology slow_fabric = fabric(8);
  network::NodeSpec faster_nics;
  faster_nics.accelerators = 8;
  faster_nics.link_bandwidth = 150e9;
  faster_nics.nic_bandwidth = 100e9 / 8;
  network::FabricSpec one_switch;
  one_switch.nodes = 8;
  const network::Topology fast_fabric = network::build_cluster(faster_nics, one_switch);
  const DataParallelConfig slow = config_for(m, slow_fabric, 8, false);
  const DataParallelConfig fast = config_for(m, fast_fabric, 8, false);
  EXPECT_LT(simulate_data_parallel_step(fast).iteration_s, simulate_data_parallel_step(slow).iteration_s);
}

TEST(DataParallelStep, RejectsInconsistentConfigurations) {
  const ModelGraph m = resnet50();
  const network::Topology t = fabric(2);
  DataParallelConfig c = config_for(m, t, 2, true);
  c.per_device_batch = 0;
  EXPECT_THROW(simulate_data_parallel_step(c), std::invalid_argument);
  c = config_for(m, t, 2, true);
  c.precision = Precision::bf16;  // V100 has no bf16
  EXPECT_THROW(simulate_data_parallel_step(c), std::invalid_argument);
  c = config_for(m, t, 2, true);
  c.model = nullptr;
  EXPECT_THROW(simulate_data_parallel_step(c), std::invalid_argument);
  c = config_for(m, t, 4, true);  // more nodes than the fabric has
  EXPECT_THROW(simulate_data_parallel_step(c), std::invalid_argument);
}

TEST(Roofline, ComputeBoundAndMemoryBoundLayers) {
  DeviceSpec d;
  d.name = "toy";
  d.peak_flops[static_cast<int>(Precision::fp32)] = 10e12;
  d.peak_flops[static_cast<int>(Precision::fp16)] = 100e12;
  d.memory_bandwidth = 1e12;
  DeviceProfile p{0.5, 0.5, 0.0};
  // A matmul with 1 GFLOP and 1 MB per sample at batch 1 in fp16: compute 1e9/(50e12) = 20 us,
  // memory (0.5 M + 0.5 M elements) x 2 B / 0.5e12 = 4 us: compute-bound.
  Layer gemm{"gemm", LayerKind::matmul, 0, 1e9, 0.5e6, 0.5e6};
  LayerTime t = layer_time(gemm, 1, Precision::fp16, d, p);
  EXPECT_DOUBLE_EQ(t.forward_s, 20e-6);
  EXPECT_DOUBLE_EQ(t.backward_s, 40e-6);
  // A ReLU on 100 M elements: memory 200 M x 2 B / 0.5e12 = 800 us; FLOPs 1e8 / 5e12 = 20 us.
  Layer relu{"relu", LayerKind::elementwise, 0, 1e8, 1e8, 1e8};
  t = layer_time(relu, 1, Precision::fp16, d, p);
  EXPECT_DOUBLE_EQ(t.forward_s, 800e-6);
  EXPECT_DOUBLE_EQ(t.backward_s, 1600e-6);
  EXPECT_THROW(layer_time(relu, 1, Precision::bf16, d, p), std::invalid_argument);
}

TEST(MemoryEstimate, ComponentsFollowPrecisionOptimizerAndBatch) {
  const ModelGraph m = resnet50();
  const double params = m.parameters();
  const MemoryEstimate fp32 = estimate_data_parallel_memory(m, Precision::fp32, Precision::fp32, Optimizer::sgd_momentum, 32);
  EXPECT_DOUBLE_EQ(fp32.weights, 4 * params);
  EXPECT_DOUBLE_EQ(fp32.gradients, 4 * params);
  EXPECT_DOUBLE_EQ(fp32.optimizer_state, 4 * params);
  const MemoryEstimate amp = estimate_data_parallel_memory(m, Precision::fp16, Precision::fp32, Optimizer::adam, 32);
  EXPECT_DOUBLE_EQ(amp.weights, 6 * params);  // fp16 copy + fp32 master
  EXPECT_DOUBLE_EQ(amp.optimizer_state, 8 * params);
  EXPECT_DOUBLE_EQ(amp.activations, fp32.activations / 2);
  const MemoryEstimate twice = estimate_data_parallel_memory(m, Precision::fp32, Precision::fp32, Optimizer::sgd_momentum, 64);
  EXPECT_DOUBLE_EQ(twice.activations, 2 * fp32.activations);
  EXPECT_GT(fp32.activations, 0);
}

}  // namespace
}  // namespace dlsim::models
