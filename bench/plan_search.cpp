// The planner's whole search (issue 20's goal): GPT-3 175B, 2048-token sequences, global batch
// 1536, on-demand, over 8 instance types of 8 A100 or H100 (AWS, GCP, Azure) and node counts up
// to 512 (all candidates decided, the front simulated). Counters: candidates enumerated, rejected by memory, pruned by
// the bound, simulated, and seconds per simulated candidate. Run with --benchmark_repetitions=N
// for the median; -j threads with the benchmark argument.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "experiment/planner.hpp"

namespace {

const char* const kScenario = R"(cluster:
  instance: aws/p4d.24xlarge
workload:
  model: gpt3-175b
  precision: fp16
  optimizer: adam
  batch: {global: 1536}
  data: {tokens: 300e9, epochs: 1}
plan:
  objective: cheapest
  instances: [aws/p4d.24xlarge, aws/p4de.24xlarge, aws/p5.48xlarge, gcp/a2-highgpu-8g, gcp/a2-ultragpu-8g,
              gcp/a3-highgpu-8g, azure/Standard_ND96amsr_A100_v4, azure/Standard_ND96isr_H100_v5]
  nodes: [64, 128, 256, 512]
)";

void BM_PlanGpt3(benchmark::State& state) {
  const auto path = std::filesystem::temp_directory_path() / ("dlsim-bench-plan-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << kScenario;
  const auto scenarios = dlsim::experiment::load_plan_scenarios(path.string());
  dlsim::experiment::PlanOptions options;
  options.threads = static_cast<int>(state.range(0));
  dlsim::experiment::PlanCounts counts;
  for (auto _ : state) {
    const auto results = dlsim::experiment::search_plans(scenarios, options);
    counts = results.counts;
    benchmark::DoNotOptimize(results.best);
  }
  state.counters["enumerated"] = static_cast<double>(counts.enumerated);
  state.counters["no_fit"] = static_cast<double>(counts.no_fit);
  state.counters["pruned"] = static_cast<double>(counts.pruned);
  state.counters["simulated"] = static_cast<double>(counts.simulated);
  state.counters["s_per_simulated"] =
      benchmark::Counter(static_cast<double>(counts.simulated), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  std::filesystem::remove(path);
}
BENCHMARK(BM_PlanGpt3)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
