// Cluster-level replay: 100,000 jobs with the shape of the Philly trace (synthetic, Poisson
// arrivals) on a 10,000-GPU cluster (1,250 nodes of 8 GPUs), FIFO and LAS. Goals: under 10 s
// (FIFO) and 30 s (LAS) wall, under 2 GB of memory (peak resident set, printed at the end);
// also with jobs sharing the fabric.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdio>

#include "scheduler/cluster_simulation.hpp"
#include "scheduler/trace.hpp"

namespace {

using namespace dlsim::scheduler;

// `load`: the work offered over the arrival window, as a fraction of the cluster's GPU-time.
ClusterSpec philly_like_cluster(double load) {
  SyntheticTraceSpec t;
  t.jobs = 100'000;
  t.duration_max_s = 7 * 86400.0;  // a week at most
  Trace trace = synthetic_trace(t, 42);
  // Space the arrivals so that the work offered is `load` times the cluster's GPU-time over
  // them. At 0.9 jobs rarely wait (most use one GPU of 10,000); at 2 a queue of thousands builds.
  double work = 0;
  for (const TraceJob& j : trace.jobs) work += j.gpus * j.duration_s;
  const double span = work / (load * 10'000);
  const double scale = span / trace.jobs.back().submit_s;
  for (TraceJob& j : trace.jobs) j.submit_s *= scale;
  ClusterSpec spec;
  PoolSpec pool;
  pool.name = "cluster";
  pool.nodes = 1250;
  pool.gpus_per_node = 8;
  pool.price_per_node_hour = 24.48;
  spec.pools = {pool};
  for (const TraceJob& j : trace.jobs) spec.jobs.push_back(job_spec_from_trace(j));
  return spec;
}

void replay(benchmark::State& state, const char* policy, const ClusterSpec& spec, Placement placement = Placement::packed) {
  SimulationOptions options;
  options.policy = policy;
  options.placement = placement;
  options.series_interval_s = 3600;  // hourly utilization samples
  ClusterResult r;
  for (auto _ : state) {
    r = simulate_cluster(spec, options);
    benchmark::ClobberMemory();
  }
  state.counters["jobs_done"] = static_cast<double>(r.jobs.size() - static_cast<std::size_t>(r.unfinished));
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["mean_jct_h"] = r.mean_jct_s / 3600;
  state.counters["utilization"] = r.gpu_utilization;
  state.counters["mean_queueing_h"] = r.mean_queueing_s / 3600;
  state.counters["makespan_d"] = r.makespan_s / 86400;
}

double load_of(const benchmark::State& state) { return static_cast<double>(state.range(0)) / 100.0; }
void BM_Fifo_100k_jobs_10k_gpus(benchmark::State& state) { replay(state, "fifo", philly_like_cluster(load_of(state))); }
void BM_Las_100k_jobs_10k_gpus(benchmark::State& state) { replay(state, "las", philly_like_cluster(load_of(state))); }
// Argument: offered load in percent.
BENCHMARK(BM_Fifo_100k_jobs_10k_gpus)->Arg(90)->Arg(200)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Las_100k_jobs_10k_gpus)->Arg(90)->Arg(200)->Unit(benchmark::kSecond)->Iterations(1);

// The same jobs on a shared fabric: every job all-reduces 1.34 GB of gradients per iteration
// (BERT-large in fp32) across its nodes, a third of its iteration to hide it under; 100 Gbps
// NICs, leaves of 16 nodes with 2:1 oversubscribed uplinks (fabric_share.hpp). Load 0.9.
// Argument: 0 packed placement (jobs of up to 8 GPUs stay in a node), 1 spread (every
// multi-GPU job spans nodes: thousands of jobs sharing NICs and uplinks, re-solved on each change).
void BM_Fifo_fabric_100k_jobs_10k_gpus(benchmark::State& state) {
  ClusterSpec spec = philly_like_cluster(0.9);
  spec.pools[0].nic_bandwidth = 12.5e9;
  spec.pools[0].nodes_per_leaf = 16;
  spec.pools[0].oversubscription = 2;
  for (JobSpec& j : spec.jobs) {
    j.gradient_bytes = 1.34e9;
    j.overlap_s = j.iteration_s / 3;
  }
  replay(state, "fifo", spec, state.range(0) == 0 ? Placement::packed : Placement::spread);
}
BENCHMARK(BM_Fifo_fabric_100k_jobs_10k_gpus)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak resident memory: %.0f MB\n", usage.ru_maxrss / 1024.0);
  return 0;
}
