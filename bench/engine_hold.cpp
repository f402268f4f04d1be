// Hold-model benchmark of sim::Engine (the classic priority-queue benchmark): N events are
// pending; each event, when it runs, schedules one more at now + a random delay, so the queue
// holds N events throughout. Reports, for each N, events per wall-clock second and per CPU
// second of this process (events_per_wall_s, events_per_cpu_s: they differ when the machine is
// shared) and the simulated time that a million events cover (simulated_s_per_1M_events, the
// same on every machine), so that engines are compared on the same work; items_per_second is
// Google Benchmark's own (CPU time).
//
// Delays are exponential with a mean of 1 us (many events per nanosecond: dense) or 1 ms (the
// scale of training iterations: sparse), drawn before timing starts and replayed from a 64 Ki
// table, so the figure measures the engine, not the logarithm.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <ctime>
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

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void BM_EngineHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const auto mean_delay_ns = static_cast<double>(state.range(1));
  HoldModel model(pending, mean_delay_ns, 42);
  model.run_events(static_cast<std::int64_t>(pending));  // warm the queue into steady state
  constexpr std::int64_t kEventsPerRound = 1'000'000;
  const Time simulated_start = model.engine.now();
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_seconds();
  for (auto _ : state) {
    model.run_events(kEventsPerRound);
  }
  const double cpu = cpu_seconds() - cpu_start;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double events = static_cast<double>(state.iterations() * kEventsPerRound);
  state.SetItemsProcessed(state.iterations() * kEventsPerRound);
  state.counters["events_per_wall_s"] = events / wall;
  state.counters["events_per_cpu_s"] = events / cpu;
  state.counters["simulated_s_per_1M_events"] = (model.engine.now() - simulated_start).seconds() / static_cast<double>(state.iterations());
}

BENCHMARK(BM_EngineHold)
    ->ArgNames({"pending", "mean_delay_ns"})
    ->ArgsProduct({{1'000, 100'000, 1'000'000}, {1'000, 1'000'000}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
