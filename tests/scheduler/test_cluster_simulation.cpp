#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "scheduler/checkpoint_math.hpp"
#include "scheduler/cluster_simulation.hpp"
#include "tests/scheduler/cluster_builders.hpp"

namespace dlsim::scheduler {
namespace {

using builders::job;
using builders::pool;

SimulationOptions with_policy(const std::string& policy) {
  SimulationOptions o;
  o.policy = policy;
  return o;
}

TEST(JobStateMachine, OnlyTheDocumentedTransitionsAreAllowed) {
  using S = JobState;
  const std::set<std::pair<S, S>> edges{
      {S::queued, S::restarting},      {S::queued, S::failed},           {S::restarting, S::running},
      {S::restarting, S::preempted},   {S::restarting, S::failed},       {S::running, S::checkpointing},
      {S::running, S::done},           {S::running, S::preempted},       {S::running, S::failed},
      {S::checkpointing, S::running},  {S::checkpointing, S::preempted}, {S::checkpointing, S::failed},
      {S::preempted, S::queued},       {S::preempted, S::failed},        {S::running, S::resizing},
      {S::resizing, S::running},       {S::resizing, S::preempted},      {S::resizing, S::failed}};
  const S all[] = {S::queued, S::restarting, S::running, S::checkpointing, S::resizing, S::preempted, S::done, S::failed};
  for (S a : all) {
    for (S b : all) EXPECT_EQ(allowed(a, b), edges.count({a, b}) == 1) << to_string(a) << " -> " << to_string(b);
  }
  using N = NodeState;
  const std::set<std::pair<N, N>> node_edges{{N::provisioning, N::ready}, {N::ready, N::busy},     {N::ready, N::draining},
                                             {N::ready, N::failed},       {N::ready, N::terminated}, {N::busy, N::ready},
                                             {N::busy, N::draining},      {N::busy, N::failed},      {N::draining, N::preempted},
                                             {N::draining, N::failed}};
  const N nodes[] = {N::provisioning, N::ready, N::busy, N::draining, N::preempted, N::failed, N::terminated};
  for (N a : nodes) {
    for (N b : nodes) EXPECT_EQ(allowed(a, b), node_edges.count({a, b}) == 1) << to_string(a) << " -> " << to_string(b);
  }
}

TEST(ClusterSimulation, OneJobRunsItsIterationsAndIsBilledPerSecondWithAMinimum) {
  ClusterSpec spec;
  spec.pools = {pool("a", 1, 8, 36.0)};
  JobSpec j = job("j", 10, 8, 1000, 0.5);
  j.checkpoint.warmup_s = 30;
  spec.jobs = {j};
  const ClusterResult r = simulate_cluster(spec, with_policy("fifo"));
  ASSERT_EQ(r.jobs.size(), 1u);
  const JobResult& jr = r.jobs[0];
  EXPECT_EQ(jr.state, JobState::done);
  EXPECT_DOUBLE_EQ(jr.finish_s, 10 + 30 + 500);
  EXPECT_DOUBLE_EQ(jr.jct_s, 530);
  EXPECT_DOUBLE_EQ(jr.run_s, 500);      // 1000 x 0.5 s; the 30 s warm-up is restarting
  EXPECT_DOUBLE_EQ(jr.restart_s, 30);
  EXPECT_EQ(jr.useful_iterations, 1000);
  EXPECT_NEAR(jr.gpu_hours, 8 * 530 / 3600.0, 1e-9);
  EXPECT_NEAR(jr.cost_usd, 36.0 * 530 / 3600.0, 1e-9);
  // The node is held from 0 to the end (540 s) and billed per second.
  EXPECT_NEAR(r.total_cost_usd, billed_cost(36.0, 1, 540), 1e-9);
  EXPECT_NEAR(r.idle_cost_usd, 36.0 * 10 / 3600.0, 1e-9);
  EXPECT_NEAR(r.gpu_utilization, 530.0 / 540.0, 1e-9);
}

TEST(ClusterSimulation, FifoServesInArrivalOrderAndSjfShortestFirst) {
  ClusterSpec spec;
  spec.pools = {pool("a", 1, 1)};
  spec.jobs = {job("long", 0, 1, 100), job("medium", 1, 1, 50), job("short", 2, 1, 10)};
  const ClusterResult fifo = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_DOUBLE_EQ(fifo.jobs[1].finish_s, 150);
  EXPECT_DOUBLE_EQ(fifo.jobs[2].finish_s, 160);
  const ClusterResult sjf = simulate_cluster(spec, with_policy("sjf"));
  EXPECT_DOUBLE_EQ(sjf.jobs[2].finish_s, 110);
  EXPECT_DOUBLE_EQ(sjf.jobs[1].finish_s, 160);
  EXPECT_LT(sjf.mean_jct_s, fifo.mean_jct_s);
}

TEST(ClusterSimulation, BackfillLetsSmallJobsPassOneThatDoesNotFit) {
  ClusterSpec spec;
  spec.pools = {pool("a", 1, 8)};
  spec.jobs = {job("half", 0, 4, 100), job("whole", 1, 8, 10), job("small", 2, 4, 10)};
  const ClusterResult strict = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_DOUBLE_EQ(strict.jobs[2].finish_s, 120);  // waits behind "whole"
  SimulationOptions o = with_policy("fifo");
  o.backfill = true;
  const ClusterResult backfilled = simulate_cluster(spec, o);
  EXPECT_DOUBLE_EQ(backfilled.jobs[2].finish_s, 12);
}

TEST(ClusterSimulation, LasSuspendsALongJobForANewOneAndLosesNoWork) {
  ClusterSpec spec;
  spec.pools = {pool("a", 1, 1)};
  spec.jobs = {job("long", 0, 1, 200), job("short", 100, 1, 20)};
  SimulationOptions o = with_policy("las");
  o.las_thresholds_gpu_s = {50};
  const ClusterResult r = simulate_cluster(spec, o);
  EXPECT_DOUBLE_EQ(r.jobs[1].finish_s, 120);  // the newcomer (0 attained) runs at once
  EXPECT_EQ(r.jobs[0].suspensions, 1);
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 220);
  EXPECT_EQ(r.jobs[0].useful_iterations, 200);
  EXPECT_EQ(r.jobs[0].computed_iterations, 200);
  EXPECT_DOUBLE_EQ(r.jobs[0].lost_gpu_s, 0);
}

TEST(ClusterSimulation, JobsThatCannotEverFitFail) {
  ClusterSpec spec;
  spec.pools = {pool("a", 2, 8)};
  spec.jobs = {job("too-big", 0, 32, 10), job("ok", 0, 16, 10)};
  const ClusterResult r = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_EQ(r.jobs[0].state, JobState::failed);
  EXPECT_EQ(r.jobs[1].state, JobState::done);
}

// Spot nodes reclaimed at random: every job finishes with exactly its work done, whatever it
// lost on the way; what it computed beyond its work is exactly what it lost.
ClusterSpec spot_cluster(CheckpointPolicy policy) {
  ClusterSpec spec;
  PoolSpec p = pool("spot", 8, 8, 10);
  p.capacity = Capacity::spot;
  p.reclaim.kind = Hazard::Kind::exponential;
  p.reclaim.mean_s = 6 * 3600.0;
  p.notice_s = 120;
  p.provisioning_s = 300;
  spec.pools = {p};
  for (int i = 0; i < 12; ++i) {
    JobSpec j = job("j" + std::to_string(i), i * 600.0, 8 * (1 + i % 3), 20000 + 1000 * i, 1.3);
    j.checkpoint.policy = policy;
    j.checkpoint.interval_s = 1800;
    j.checkpoint.size_bytes = 50e9;
    j.checkpoint.write_bandwidth = 1e9;
    j.checkpoint.read_bandwidth = 2e9;
    j.checkpoint.warmup_s = 60;
    spec.jobs.push_back(j);
  }
  return spec;
}

TEST(ClusterSimulation, PreemptedWorkIsNeitherLostFromTheTotalNorCountedTwice) {
  for (CheckpointPolicy policy : {CheckpointPolicy::none, CheckpointPolicy::fixed, CheckpointPolicy::young_daly}) {
    const ClusterSpec spec = spot_cluster(policy);
    const ClusterResult r = simulate_cluster(spec, with_policy("fifo"));
    int preemptions = 0;
    for (std::size_t i = 0; i < r.jobs.size(); ++i) {
      const JobResult& jr = r.jobs[i];
      ASSERT_EQ(jr.state, JobState::done) << jr.name;
      EXPECT_EQ(jr.useful_iterations, spec.jobs[i].iterations) << jr.name;
      EXPECT_GE(jr.computed_iterations, jr.useful_iterations);
      EXPECT_NEAR(jr.lost_gpu_s, double(jr.computed_iterations - jr.useful_iterations) * 1.3 * jr.gpus, 1e-6 * (1 + jr.lost_gpu_s))
          << jr.name;
      preemptions += jr.preemptions;
    }
    EXPECT_GT(preemptions, 0) << to_string(policy);
    EXPECT_GT(r.pools[0].reclaimed, 0);
  }
}

TEST(ClusterSimulation, CheckpointingCutsLostWork) {
  const ClusterResult none = simulate_cluster(spot_cluster(CheckpointPolicy::none), with_policy("fifo"));
  const ClusterResult daly = simulate_cluster(spot_cluster(CheckpointPolicy::young_daly), with_policy("fifo"));
  EXPECT_LT(daly.lost_gpu_hours, 0.5 * none.lost_gpu_hours);
  int checkpoints = 0;
  for (const JobResult& j : daly.jobs) checkpoints += j.checkpoints;
  EXPECT_GT(checkpoints, 0);
}

TEST(ClusterSimulation, YoungDalyIntervalSetsTheCheckpointCount) {
  // One 8-GPU job alone on one spot node whose hazard (mean 20 days) sets Daly's interval but
  // (with this seed) never strikes during the 10-hour run.
  ClusterSpec spec;
  PoolSpec p = pool("spot", 1, 8, 10);
  p.reclaim.kind = Hazard::Kind::exponential;
  p.reclaim.mean_s = 20 * 86400.0;
  spec.pools = {p};
  JobSpec j = job("j", 0, 8, 36000, 1.0);
  j.checkpoint.policy = CheckpointPolicy::young_daly;
  j.checkpoint.size_bytes = 60e9;
  j.checkpoint.write_bandwidth = 1e9;  // 60 s per checkpoint
  spec.jobs = {j};
  SimulationOptions o = with_policy("fifo");
  o.seed = 3;
  const ClusterResult r = simulate_cluster(spec, o);
  const double tau = daly_interval(60, 20 * 86400.0);
  ASSERT_EQ(r.jobs[0].preemptions, 0);
  EXPECT_DOUBLE_EQ(r.jobs[0].checkpoint_interval_s, tau);
  EXPECT_EQ(r.jobs[0].checkpoints, static_cast<int>(std::floor(36000 / std::ceil(tau))));
  EXPECT_GT(r.jobs[0].checkpoints, 1);
  EXPECT_NEAR(r.jobs[0].checkpoint_s, 60.0 * r.jobs[0].checkpoints, 1e-6);
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 36000 + 60.0 * r.jobs[0].checkpoints);
  EXPECT_EQ(r.jobs[0].useful_iterations, 36000);
}

TEST(ClusterSimulation, SameSeedSameResultsOtherSeedOtherPreemptions) {
  const ClusterSpec spec = spot_cluster(CheckpointPolicy::fixed);
  SimulationOptions o = with_policy("fifo");
  o.seed = 11;
  const ClusterResult a = simulate_cluster(spec, o);
  const ClusterResult b = simulate_cluster(spec, o);
  o.seed = 12;
  const ClusterResult c = simulate_cluster(spec, o);
  bool differs = false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].finish_s, b.jobs[i].finish_s);
    EXPECT_EQ(a.jobs[i].preemptions, b.jobs[i].preemptions);
    differs = differs || a.jobs[i].finish_s != c.jobs[i].finish_s;
  }
  EXPECT_EQ(a.total_cost_usd, b.total_cost_usd);
  EXPECT_TRUE(differs);
}

TEST(ClusterSimulation, TopologyAwarePlacementKeepsAGangUnderOneLeaf) {
  // Two leaves of 2 nodes; a 4-GPU job holds half of node 0, so packed placement of an 16-GPU
  // gang takes the emptiest nodes across leaves while topology-aware stays in leaf 1.
  ClusterSpec spec;
  PoolSpec p = pool("a", 4, 8);
  p.nodes_per_leaf = 2;
  spec.pools = {p};
  spec.jobs = {job("small", 0, 4, 1000), job("gang", 1, 16, 10)};
  const ClusterResult packed = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_EQ(packed.jobs[1].max_leaves, 2);
  SimulationOptions o = with_policy("fifo");
  o.placement = Placement::topology_aware;
  const ClusterResult r = simulate_cluster(spec, o);
  EXPECT_EQ(r.jobs[1].state, JobState::done);
  EXPECT_EQ(r.jobs[1].max_leaves, 1);
  EXPECT_DOUBLE_EQ(r.jobs[1].finish_s, 11);
}

}  // namespace
}  // namespace dlsim::scheduler

namespace dlsim::scheduler {
namespace {

TEST(ClusterSimulation, AutoscalerAddsNodesForQueuedJobsAndReleasesIdleOnes) {
  ClusterSpec spec;
  PoolSpec p = pool("elastic", 0, 8, 10);
  p.max_nodes = 4;
  p.provisioning_s = 120;
  p.idle_timeout_s = 300;
  p.scale_up_cooldown_s = 0;
  spec.pools = {p};
  spec.jobs = {job("a", 0, 16, 1000), job("b", 0, 8, 100)};
  const ClusterResult r = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_EQ(r.jobs[0].state, JobState::done);
  EXPECT_EQ(r.jobs[1].state, JobState::done);
  EXPECT_EQ(r.pools[0].nodes_requested, 3);          // 24 GPUs asked: three nodes
  EXPECT_DOUBLE_EQ(r.jobs[0].first_start_s, 120);    // after provisioning
  EXPECT_DOUBLE_EQ(r.jobs[1].finish_s, 220);
  // b's node idles from 220 s and is released 300 s later; a's two nodes at its end (1120 s).
  EXPECT_NEAR(r.pools[0].node_hours, (2 * 1120 + 520) / 3600.0, 1e-9);
  // Without auto-scaling a pool of 0 nodes could run nothing: both fail.
  spec.pools[0].max_nodes = -1;
  const ClusterResult fixed = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_EQ(fixed.jobs[0].state, JobState::failed);
}

}  // namespace
}  // namespace dlsim::scheduler

namespace dlsim::scheduler {
namespace {

TEST(ClusterSimulation, ElasticJobGrowsIntoFreeGpusAndShrinksForAWaitingJob) {
  ClusterSpec spec;
  spec.pools = {pool("a", 2, 8)};
  JobSpec elastic = job("elastic", 0, 8, 1000, 1.0);  // 1 s per iteration at 8 GPUs
  elastic.min_gpus = 4;
  elastic.max_gpus = 16;
  elastic.resize_pause_s = 10;
  spec.jobs = {elastic};
  // Alone: starts on 4 GPUs, grows to 16 at once (one 10 s pause), then 1000 x 0.5 s.
  const ClusterResult alone = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_EQ(alone.jobs[0].resizes, 1);
  EXPECT_DOUBLE_EQ(alone.jobs[0].finish_s, 510);
  EXPECT_EQ(alone.jobs[0].useful_iterations, 1000);
  // A rigid 8-GPU job arrives at 100 s: the elastic job shrinks to 4 for it, then takes the 4
  // GPUs left; when the rigid job ends it grows back to 16.
  spec.jobs.push_back(job("rigid", 100, 8, 200, 1.0));
  const ClusterResult shared = simulate_cluster(spec, with_policy("fifo"));
  const JobResult& e = shared.jobs[0];
  const JobResult& r = shared.jobs[1];
  EXPECT_DOUBLE_EQ(r.first_start_s, 100);
  EXPECT_DOUBLE_EQ(r.finish_s, 300);
  EXPECT_EQ(e.state, JobState::done);
  EXPECT_EQ(e.useful_iterations, 1000);
  EXPECT_GE(e.resizes, 4);  // grow, shrink, grow into the rest, grow back
  EXPECT_GT(e.finish_s, alone.jobs[0].finish_s);
  // Never more GPUs than the cluster: elastic GPU-hours + rigid ones fit in 16 GPUs x makespan.
  EXPECT_LE(e.gpu_hours + r.gpu_hours, 16 * shared.makespan_s / 3600.0 + 1e-9);
}

// An elastic job with listed sizes (a re-planned job) takes only those sizes, at their times.
TEST(ClusterSimulation, ElasticJobWithSizesResizesOnlyToThemAtTheirTimes) {
  ClusterSpec spec;
  spec.pools = {pool("a", 3, 8)};
  JobSpec elastic = job("elastic", 0, 8, 1000, 1.0);
  elastic.min_gpus = 8;
  elastic.max_gpus = 24;
  elastic.resize_pause_s = 10;
  // 16 GPUs are listed, 24 are not: alone on 24 GPUs it grows to 16 only, at 0.7 s (not 0.5).
  elastic.sizes = {{8, 1.0, "a"}, {16, 0.7, "b"}};
  spec.jobs = {elastic};
  const ClusterResult r = simulate_cluster(spec, with_policy("fifo"));
  EXPECT_EQ(r.jobs[0].resizes, 1);
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 10 + 1000 * 0.7);
  EXPECT_NEAR(r.jobs[0].gpu_hours, 16 * r.jobs[0].finish_s / 3600.0, 1e-9);
  // Sizes must ascend within the range and include min_gpus and gpus.
  for (const std::vector<JobSpec::Size>& bad : {std::vector<JobSpec::Size>{{16, 0.7, ""}},
                                                std::vector<JobSpec::Size>{{16, 0.7, ""}, {8, 1.0, ""}},
                                                std::vector<JobSpec::Size>{{8, 1.0, ""}, {32, 0.4, ""}},
                                                std::vector<JobSpec::Size>{{8, 0.0, ""}}}) {
    spec.jobs[0].sizes = bad;
    EXPECT_THROW(validate(spec), std::invalid_argument);
  }
}

}  // namespace
}  // namespace dlsim::scheduler
