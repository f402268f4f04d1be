// Issue 21's speed goal: the whole Azure conversation trace (19,366 requests over an hour) served
// by Llama-2-70B on replicas of 4 A100-80GB (tensor 4), scenarios/serving-llama2-70b-azure-conv.yaml:
// loading, the iteration model, the fleet and the metrics, on one core. Needs
// ../shared/data/traces (skipped with a message otherwise). Counters: requests, iterations.
// Run with --benchmark_repetitions=5 for the median.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "experiment/load.hpp"
#include "experiment/serving_run.hpp"

namespace {

// Argument 0: the scenario as shipped (replicas follow the load, 1 to 4); 1: four replicas all
// along (scaling's minimum and start set to 4).
void BM_ServeAzureConversationTrace(benchmark::State& state) {
  std::vector<std::string> sets;
  if (state.range(0) == 1) sets = {"serving.scaling.min_replicas=4", "serving.scaling.initial_replicas=4"};
  const std::string scenario = std::string(DLSIM_SOURCE_DIR) + "/scenarios/serving-llama2-70b-azure-conv.yaml";
  const std::string trace =
      std::string(DLSIM_SOURCE_DIR) + "/../shared/data/traces/azure_llm_inference_2023/AzureLLMInferenceTrace_conv.csv";
  if (!std::filesystem::exists(trace)) {
    state.SkipWithError("no Azure LLM inference trace (../shared/data/traces absent)");
    return;
  }
  dlsim::experiment::ServingResults results;
  for (auto _ : state) {
    const auto s = dlsim::experiment::load_scenario(scenario, sets);
    results = dlsim::experiment::run_serving(s);
    benchmark::DoNotOptimize(results.completed);
  }
  state.counters["requests"] = static_cast<double>(results.requests);
  state.counters["iterations"] = static_cast<double>(results.iterations);
}
BENCHMARK(BM_ServeAzureConversationTrace)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
