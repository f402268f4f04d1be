// Flow solver throughput with about 10,000 concurrent flows: a hold model for flows on a
// k = 16 fat-tree (1,024 hosts, one accelerator each). 10,000 flows between random host pairs
// are started; whenever one completes, a new one starts between another random pair, so the
// count stays constant, for 5,000 completions (then the rest drain). Reports flow arrivals +
// completions per second of wall time, the number of max-min solves and the flows a solve
// refilled on average. Flow sizes are exponential (mean 10 MB) so completions spread out.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "bench/fat_tree_1024.hpp"
#include "network/flow_network.hpp"
#include "network/topology_builders.hpp"
#include "sim/random_streams.hpp"

namespace {

using namespace dlsim;

struct FlowHold {
  sim::Engine engine;
  const network::Topology& topology;
  network::Routing routing;
  network::FlowNetwork flows;
  sim::RandomStreams streams{7};
  sim::RandomStream& rng = streams.stream("flows");
  std::int64_t remaining = 0;
  std::int64_t events = 0;

  explicit FlowHold(const network::Topology& t) : topology(t), routing(t), flows(engine, t) {}

  void start_one() {
    const auto& hosts = topology.accelerators();
    const auto a = hosts[rng.next_u64() % hosts.size()];
    auto b = hosts[rng.next_u64() % hosts.size()];
    if (b == a) b = hosts[(rng.next_u64() % (hosts.size() - 1) + 1 + (a - hosts[0])) % hosts.size()];
    network::FlowSpec spec{routing.path(a, b, rng.next_u64()), rng.exponential(10e6)};
    ++events;
    flows.start(std::move(spec), [this] {
      ++events;
      if (--remaining > 0) start_one();
    });
  }
};

const network::Topology& fat_tree_1024() {
  static const network::Topology topology = bench::fat_tree_1024();
  return topology;
}

void BM_FlowSolver10k(benchmark::State& state) {
  const auto concurrent = state.range(0);
  std::int64_t events = 0;
  std::uint64_t solves = 0;
  std::uint64_t refilled = 0;
  for (auto _ : state) {
    FlowHold hold(fat_tree_1024());
    hold.remaining = concurrent / 2;  // completions to replay, each starting a new flow
    for (std::int64_t i = 0; i < concurrent; ++i) hold.start_one();
    hold.engine.run();
    events += hold.events;
    solves += hold.flows.solves();
    refilled += hold.flows.flows_refilled();
  }
  state.SetItemsProcessed(events);
  state.counters["flows_refilled_per_solve"] = static_cast<double>(refilled) / static_cast<double>(solves);
  state.counters["solves_per_iteration"] = static_cast<double>(solves) / static_cast<double>(state.iterations());
}

BENCHMARK(BM_FlowSolver10k)->Arg(10'000)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
