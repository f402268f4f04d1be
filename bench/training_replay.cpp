// Replay of one training iteration: GPT-3 175B on 1,024 A100-80GB (128 DGX-A100-like nodes,
// 8 x 200 Gb/s NICs each, rail-optimized fabric) with the Megatron-LM plan tensor 8, pipeline 16,
// data 8, 1F1B, 64 micro-batches of 1 sequence (Narayanan et al. SC21). Goal: under 1 s wall.
// The same on 12,288 GPUs of a fat-tree (data 96). Goal: under 1 s wall.
// And the memoized job-performance lookup. Goal: under 1 microsecond.
#include <benchmark/benchmark.h>

#include "experiment/builtin_profiles.hpp"
#include "models/catalog.hpp"
#include "models/job_performance.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "network/topology_builders.hpp"

namespace {

using namespace dlsim;

network::Topology dgx_a100_cluster(int nodes, network::FabricKind kind = network::FabricKind::rail_optimized) {
  network::NodeSpec node;
  node.kind = network::NodeKind::nvswitch;
  node.accelerators = 8;
  node.link_bandwidth = 300e9;   // NVLink 3 via NVSwitch, per GPU per direction
  node.nics = 8;
  node.nic_bandwidth = 25e9;     // 200 Gb/s HDR InfiniBand
  node.pcie_bandwidth = 32e9;    // PCIe Gen4 x16
  network::FabricSpec fabric;
  fabric.kind = kind;
  fabric.nodes = nodes;
  fabric.link_bandwidth = 25e9;
  return network::build_cluster(node, fabric);
}

models::TrainingConfig gpt3_config(const models::ModelGraph& model, const network::Topology& topology, int data = 8) {
  const models::Catalog catalog = experiment::builtin_catalog();
  models::TrainingConfig c;
  c.model = &model;
  c.device = *catalog.find_device("A100-80GB");
  c.profile = *catalog.find_profile("A100-80GB");
  c.topology = &topology;
  models::ParallelPlan& p = c.plan;
  p.tensor = 8;
  p.pipeline = 16;
  p.data = data;
  p.micro_batches = 64;
  p.micro_batch_size = 1;
  p.schedule = models::PipelineSchedule::one_f_one_b;
  p.precision = models::Precision::fp16;
  p.optimizer = models::Optimizer::adam;
  p.recompute = models::Recompute::full;
  p.overlap_grad_reduce = false;
  return c;
}

void BM_Gpt3_175B_1024_A100(benchmark::State& state) {
  const models::ModelGraph model = models::zoo_model("gpt3-175b");
  const network::Topology topology = dgx_a100_cluster(128);
  const models::TrainingConfig config = gpt3_config(model, topology);
  models::IterationBreakdown b;
  for (auto _ : state) {
    b = models::replay_iteration(config);  // used after the loop, so never optimized away
    benchmark::ClobberMemory();
  }
  // (benchmark::DoNotOptimize on a double member zeroed it with Debian's Google Benchmark 1.7.)
  state.counters["simulated_iteration_s"] = b.iteration_s;
  state.counters["tflops_per_gpu"] = b.tflops_per_device;
  state.counters["bubble_s"] = b.pipeline_bubble_s;
  state.counters["events"] = static_cast<double>(b.events);
  state.counters["flows"] = static_cast<double>(b.flows);
}
BENCHMARK(BM_Gpt3_175B_1024_A100)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same plan with 96 data-parallel replicas on 12,288 GPUs (1,536 nodes) of a three-tier
// k-ary fat-tree (issue 23's largest GPU case): every gradient ring crosses the fabric, so
// routing its pairs (a pruned search per pair, network/routing.hpp) is most of the work. Goal:
// under 1 s.
void BM_Gpt3_175B_12288_FatTree(benchmark::State& state) {
  const models::ModelGraph model = models::zoo_model("gpt3-175b");
  const network::Topology topology = dgx_a100_cluster(1536, network::FabricKind::fat_tree);
  const models::TrainingConfig config = gpt3_config(model, topology, 96);
  models::IterationBreakdown b;
  for (auto _ : state) {
    b = models::replay_iteration(config);
    benchmark::ClobberMemory();
  }
  state.counters["simulated_iteration_s"] = b.iteration_s;
  state.counters["events"] = static_cast<double>(b.events);
  state.counters["flows"] = static_cast<double>(b.flows);
}
BENCHMARK(BM_Gpt3_175B_12288_FatTree)->Unit(benchmark::kMillisecond)->Iterations(1);

// A hit in the job-performance cache, as the cluster level asks on every job start or resize:
// building the key from the configuration, hashing it and comparing.
void BM_MemoizedJobPerformanceLookup(benchmark::State& state) {
  const models::ModelGraph model = models::zoo_model("gpt3-175b");
  const network::Topology topology = dgx_a100_cluster(128);
  const models::TrainingConfig config = gpt3_config(model, topology);
  models::JobPerformanceCache cache;
  cache.get(config, "128 x dgx-a100, rail-optimized");
  for (auto _ : state) {
    const models::IterationBreakdown* hit = &cache.get(config, "128 x dgx-a100, rail-optimized");
    benchmark::DoNotOptimize(hit);
  }
}
BENCHMARK(BM_MemoizedJobPerformanceLookup)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
