// Wall time of one 1 GiB all-reduce over 4,096 GPUs (512 nodes of 8 H100, NVSwitch-3 inside,
// 8 x 400 Gbps NDR NICs per node) on a rail-optimized fat-tree, replayed at flow level under
// NCCL's model (network/nccl_tuning.hpp): the ring, the hierarchical algorithm and NCCL's own
// choice (NVLS trees). Goal (issues 3 and 17): under 1 s each. Also reports the simulated time
// and bus bandwidth so a run shows what it computed.
#include <benchmark/benchmark.h>

#include "network/collectives.hpp"
#include "network/link_tech.hpp"
#include "network/topology_builders.hpp"

namespace {

using namespace dlsim::network;

const Topology& cluster_4096() {
  static const Topology topology = [] {
    NodeSpec node;
    node.kind = NodeKind::nvswitch;
    node.accelerators = 8;
    node.link_bandwidth = 450e9;  // H100 NVLink4: 900 GB/s bidirectional per GPU
    node.nics = 8;
    node.nic_bandwidth = 50e9;    // 400 Gbps per GPU rail (p5 / DGX H100 class)
    node.nic_latency_s = 2e-6;
    node.pcie_bandwidth = 63e9;   // PCIe Gen5 x16 per direction
    node.link_tech = LinkTech::nvlink4;
    node.pcie_tech = LinkTech::pcie5;
    node.nic_tech = LinkTech::ib_ndr;
    node.nccl_compute_capability = 90;
    node.nvls_bandwidth = 5.0 / 6.0 * node.link_bandwidth * achievable_fraction(LinkTech::nvlink4);
    FabricSpec fabric;
    fabric.kind = FabricKind::rail_optimized;
    fabric.nodes = 512;
    fabric.nodes_per_leaf = 32;
    fabric.link_bandwidth = 50e9;
    fabric.oversubscription = 1;
    return build_cluster(node, fabric);
  }();
  return topology;
}

void all_reduce(benchmark::State& state, Algorithm algorithm) {
  const Topology& topology = cluster_4096();
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.algorithm = algorithm;
  spec.bytes = 1024.0 * 1024 * 1024;
  spec.ranks = topology.accelerators();
  CollectiveResult result;
  for (auto _ : state) {
    result = run_collective(topology, spec);
    benchmark::DoNotOptimize(result);
  }
  state.counters["simulated_ms"] = result.time_s * 1e3;
  state.counters["busbw_GBps"] = result.busbw / 1e9;
  state.counters["flows"] = static_cast<double>(result.flows);
}

BENCHMARK_CAPTURE(all_reduce, ring_1GiB_4096gpu, Algorithm::ring)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(all_reduce, hierarchical_1GiB_4096gpu, Algorithm::hierarchical)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(all_reduce, nccl_auto_1GiB_4096gpu, Algorithm::automatic)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
