// SimulationOptions::progress: called as jobs finish, throttled, and without effect on results.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster_simulation.hpp"
#include "tests/scheduler/cluster_builders.hpp"

namespace dlsim::scheduler {
namespace {

// A job that warms up for a minute after every (re)start.
JobSpec job(const std::string& name, double submit, int gpus, std::int64_t iterations, double iteration_s) {
  JobSpec j = builders::job(name, submit, gpus, iterations, iteration_s);
  j.checkpoint.warmup_s = 60;
  return j;
}

// "j" + std::to_string(i), written so that GCC 12 raises no false -Wrestrict warning.
std::string name_of(int i) {
  std::string name = "j";
  name += std::to_string(i);
  return name;
}

// Spot nodes reclaimed at random, half the jobs checkpointing: every job finishes.
ClusterSpec spot_cluster() {
  ClusterSpec spec;
  PoolSpec p;
  p.name = "spot";
  p.nodes = 8;
  p.gpus_per_node = 8;
  p.price_per_node_hour = 10;
  p.capacity = Capacity::spot;
  p.reclaim.kind = Hazard::Kind::exponential;
  p.reclaim.mean_s = 6 * 3600.0;
  p.notice_s = 120;
  p.provisioning_s = 300;
  spec.pools = {p};
  for (int i = 0; i < 12; ++i) {
    JobSpec j = job(name_of(i), i * 600.0, 8 * (1 + i % 3), 20000 + 1000 * i, 1.3);
    if (i % 2 == 0) {
      j.checkpoint.policy = CheckpointPolicy::fixed;
      j.checkpoint.interval_s = 1800;
      j.checkpoint.size_bytes = 50e9;
      j.checkpoint.write_bandwidth = 1e9;
      j.checkpoint.read_bandwidth = 2e9;
    }
    spec.jobs.push_back(j);
  }
  return spec;
}

struct Calls {
  std::vector<std::pair<double, double>> seen;
};

SimulationOptions counting(Calls& calls) {
  SimulationOptions o;
  o.seed = 5;
  o.progress = [&calls](double done, double total) { calls.seen.emplace_back(done, total); };
  return o;
}

TEST(ProgressHook, ResultsAreTheSameWithOrWithoutIt) {
  const ClusterSpec spec = spot_cluster();
  SimulationOptions plain;
  plain.seed = 5;
  Calls calls;
  const ClusterResult a = simulate_cluster(spec, plain);
  const ClusterResult b = simulate_cluster(spec, counting(calls));
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  int preemptions = 0;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].state, JobState::done);
    EXPECT_EQ(a.jobs[i].finish_s, b.jobs[i].finish_s);
    EXPECT_EQ(a.jobs[i].preemptions, b.jobs[i].preemptions);
    EXPECT_EQ(a.jobs[i].checkpoints, b.jobs[i].checkpoints);
    EXPECT_EQ(a.jobs[i].computed_iterations, b.jobs[i].computed_iterations);
    EXPECT_EQ(a.jobs[i].cost_usd, b.jobs[i].cost_usd);
    preemptions += a.jobs[i].preemptions;
  }
  EXPECT_GT(preemptions, 0);  // the run exercises reclaims
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_EQ(a.mean_jct_s, b.mean_jct_s);
  EXPECT_EQ(a.total_cost_usd, b.total_cost_usd);
  EXPECT_EQ(a.lost_gpu_hours, b.lost_gpu_hours);
  EXPECT_EQ(a.gpu_utilization, b.gpu_utilization);
  EXPECT_EQ(a.timeline.size(), b.timeline.size());
  EXPECT_EQ(a.preemptions.size(), b.preemptions.size());

  ASSERT_GT(calls.seen.size(), 0u);
  EXPECT_EQ(calls.seen.back().first, 12);
  EXPECT_EQ(calls.seen.back().second, 12);
}

TEST(ProgressHook, CalledAtMostEveryFewThousandEventsWithGrowingCounts) {
  // 20,000 one-GPU jobs of 100 one-second iterations on 80 GPUs: tens of thousands of events.
  ClusterSpec spec;
  PoolSpec p;
  p.name = "a";
  p.nodes = 10;
  p.gpus_per_node = 8;
  p.price_per_node_hour = 10;
  spec.pools = {p};
  for (int i = 0; i < 20000; ++i) spec.jobs.push_back(job(name_of(i), i * 1.0, 1, 100, 1.0));
  Calls calls;
  const ClusterResult r = simulate_cluster(spec, counting(calls));
  ASSERT_EQ(r.unfinished, 0);
  EXPECT_GT(calls.seen.size(), 2u);
  // Throttled: far fewer calls than completions (one per 4,096 events at most, plus the last).
  EXPECT_LE(calls.seen.size(), static_cast<std::size_t>(r.events / 4096 + 1));
  for (std::size_t i = 1; i < calls.seen.size(); ++i) EXPECT_GT(calls.seen[i].first, calls.seen[i - 1].first);
  EXPECT_EQ(calls.seen.back(), std::make_pair(20000.0, 20000.0));
}

TEST(ProgressHook, JobsLeftAtTheHorizonEndOnTheirCount) {
  ClusterSpec spec = spot_cluster();
  SimulationOptions plain;
  plain.seed = 5;
  plain.horizon_s = 12 * 3600.0;
  const ClusterResult a = simulate_cluster(spec, plain);
  Calls calls;
  SimulationOptions o = counting(calls);
  o.horizon_s = plain.horizon_s;
  const ClusterResult b = simulate_cluster(spec, o);
  ASSERT_GT(b.unfinished, 0);
  ASSERT_LT(b.unfinished, 12);
  EXPECT_EQ(a.unfinished, b.unfinished);
  EXPECT_EQ(a.total_cost_usd, b.total_cost_usd);
  ASSERT_FALSE(calls.seen.empty());
  EXPECT_EQ(calls.seen.back().first, 12 - b.unfinished);
  EXPECT_EQ(calls.seen.back().second, 12);
}

}  // namespace
}  // namespace dlsim::scheduler
