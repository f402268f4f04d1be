// Hold-model benchmark of sim::Engine (the classic priority-queue benchmark): N events are
// pending; each event, when it runs, schedules one more at now + a random delay, so the queue
// holds N events throughout. Reports events per second (items_per_second) for each N.
//
// Delays are exponential with a mean of 1 us (many events per nanosecond: dense) or 1 ms (the
// scale of training iterations: sparse), drawn before timing starts and replayed from a 64 Ki
// table, so the figure measures the engine, not the logarithm.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/random_streams.hpp"

namespace {

using dlsim::sim::Engine;
using dlsim::sim::Time;

struct HoldModel {
  Engine engine;
  std::vector<std::int64_t> delays;
  std::size_t next_delay = 0;
  std::int64_t remaining = 0;

  HoldModel(std::size_t pending, double mean_delay_ns, std::uint64_t seed) {
    dlsim::sim::RandomStreams streams(seed);
    auto& rng = streams.stream("hold-delays");
    delays.resize(1 << 16);
    for (auto& d : delays) d = 1 + static_cast<std::int64_t>(rng.exponential(mean_delay_ns));
    engine.reserve(pending + 1);
    for (std::size_t i = 0; i < pending; ++i) schedule_one();
  }

  Time draw_delay() {
    const std::int64_t d = delays[next_delay];
    next_delay = (next_delay + 1) & (delays.size() - 1);
    return Time::ns(d);
  }
  void schedule_one() {
    engine.schedule_in(draw_delay(), [this] { fire(); });
  }
  void fire() {
    schedule_one();
    if (--remaining == 0) engine.stop();
  }
  void run_events(std::int64_t n) {
    remaining = n;
    engine.run();
  }
};

void BM_EngineHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const auto mean_delay_ns = static_cast<double>(state.range(1));
  HoldModel model(pending, mean_delay_ns, 42);
  model.run_events(static_cast<std::int64_t>(pending));  // warm the queue into steady state
  constexpr std::int64_t kEventsPerRound = 1'000'000;
  for (auto _ : state) {
    model.run_events(kEventsPerRound);
  }
  state.SetItemsProcessed(state.iterations() * kEventsPerRound);
}

BENCHMARK(BM_EngineHold)
    ->ArgNames({"pending", "mean_delay_ns"})
    ->ArgsProduct({{1'000, 100'000, 1'000'000}, {1'000, 1'000'000}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
