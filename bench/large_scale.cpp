// Measures the largest single cluster scenarios that run on the development machine: (a) a
// 100,000-GPU cluster replaying 1 M Philly-shaped jobs at offered load 0.9; (b) a month of a
// 10,000-GPU cluster, half spot (reclaimed, its jobs checkpointing), jobs arriving all month.
// Wall time, engine events and jobs done are counters; peak memory is printed at the end (run
// one benchmark at a time under /usr/bin/time -v for each one's own peak).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "scheduler/cluster_simulation.hpp"
#include "scheduler/trace.hpp"

namespace {

using namespace dlsim::scheduler;

constexpr double kDay = 86400.0;

// Philly-shaped jobs (synthetic_trace's defaults, durations cut at a week), as the cluster
// replay bench draws them.
Trace philly_trace(int jobs) {
  SyntheticTraceSpec t;
  t.jobs = jobs;
  t.duration_max_s = 7 * kDay;
  return synthetic_trace(t, 42);
}

PoolSpec pool_of(const char* name, int nodes, double price) {
  PoolSpec p;
  p.name = name;
  p.nodes = nodes;
  p.gpus_per_node = 8;
  p.price_per_node_hour = price;
  return p;
}

// (a) 12,500 nodes of 8 GPUs; 1 M jobs whose arrivals are spaced so that the work offered is
// 0.9 of the cluster's GPU-time over them (about two days).
ClusterSpec hundred_thousand_gpus() {
  constexpr int kGpus = 100'000;
  Trace trace = philly_trace(1'000'000);
  double work = 0;
  for (const TraceJob& j : trace.jobs) work += j.gpus * j.duration_s;
  const double scale = work / (0.9 * kGpus) / trace.jobs.back().submit_s;
  ClusterSpec spec;
  spec.pools = {pool_of("cluster", kGpus / 8, 24.48)};
  spec.jobs.reserve(trace.jobs.size());
  for (TraceJob& j : trace.jobs) {
    j.submit_s *= scale;
    spec.jobs.push_back(job_spec_from_trace(j));
  }
  return spec;
}

// (b) 10,000 GPUs for 30 days: 625 on-demand nodes and 625 spot nodes (each reclaimed after an
// exponential time of mean 7 days, 2 min notice, replaced in 5 min). Jobs alternate between the
// pools; those on spot checkpoint at the Young/Daly interval (10 GB at 2 GB/s, read at 4 GB/s,
// 60 s warm-up). As many Philly-shaped jobs as offer 0.9 of the month's GPU-time, arriving
// over the whole month; the run stops at 30 days, jobs still running then are unfinished.
ClusterSpec month_with_spot() {
  constexpr int kGpus = 10'000;
  const double target = 0.9 * kGpus * 30 * kDay;
  Trace trace = philly_trace(2'000'000);
  std::size_t n = 0;
  for (double work = 0; n < trace.jobs.size() && work < target; ++n) work += trace.jobs[n].gpus * trace.jobs[n].duration_s;
  const double scale = 30 * kDay / trace.jobs[n - 1].submit_s;
  ClusterSpec spec;
  PoolSpec spot = pool_of("spot", kGpus / 16, 9.83);
  spot.capacity = Capacity::spot;
  spot.reclaim.kind = Hazard::Kind::exponential;
  spot.reclaim.mean_s = 7 * kDay;
  spot.notice_s = 120;
  spot.provisioning_s = 300;
  spec.pools = {pool_of("on-demand", kGpus / 16, 32.77), spot};
  spec.jobs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    TraceJob& j = trace.jobs[i];
    j.submit_s *= scale;
    JobSpec s = job_spec_from_trace(j);
    s.pool = i % 2 == 0 ? "on-demand" : "spot";
    if (i % 2 == 1) {
      s.checkpoint.policy = CheckpointPolicy::young_daly;
      s.checkpoint.size_bytes = 10e9;
      s.checkpoint.write_bandwidth = 2e9;
      s.checkpoint.read_bandwidth = 4e9;
      s.checkpoint.warmup_s = 60;
    }
    spec.jobs.push_back(s);
  }
  return spec;
}

void simulate(benchmark::State& state, const ClusterSpec& spec, double horizon_s) {
  SimulationOptions options;
  options.policy = "fifo";
  options.series_interval_s = 3600;  // hourly utilization samples
  options.horizon_s = horizon_s;
  ClusterResult r;
  double wall_s = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    r = simulate_cluster(spec, options);
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::ClobberMemory();
  }
  int done = 0, reclaimed = 0, checkpoints = 0;
  for (const JobResult& j : r.jobs) {
    done += j.state == JobState::done ? 1 : 0;
    checkpoints += j.checkpoints;
  }
  for (const PoolResult& p : r.pools) reclaimed += p.reclaimed;
  state.counters["wall_s"] = wall_s;
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["jobs"] = static_cast<double>(r.jobs.size());
  state.counters["jobs_done"] = done;
  state.counters["utilization"] = r.gpu_utilization;
  state.counters["mean_queueing_h"] = r.mean_queueing_s / 3600;
  state.counters["reclaimed"] = reclaimed;
  state.counters["checkpoints"] = checkpoints;
  state.counters["makespan_d"] = r.makespan_s / kDay;
}

void BM_Philly_1M_jobs_100k_gpus(benchmark::State& state) { simulate(state, hundred_thousand_gpus(), 365 * kDay); }
void BM_Month_spot_10k_gpus(benchmark::State& state) { simulate(state, month_with_spot(), 30 * kDay); }
BENCHMARK(BM_Philly_1M_jobs_100k_gpus)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Month_spot_10k_gpus)->Unit(benchmark::kSecond)->Iterations(1);

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
