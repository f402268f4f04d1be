#include <gtest/gtest.h>

#include <vector>

#include "scheduler/cluster_simulation.hpp"
#include "scheduler/rank_walk.hpp"
#include "scheduler/trace.hpp"

namespace dlsim::scheduler {
namespace {

TEST(RankWalk, WalksLikeTheRankedRule) {
  // Positions 0..9. Running: 1 (4 GPUs), 5 (2), 8 (2). Queued: 3 (2 GPUs), 6 (4). Room 10.
  RankWalk w(10);
  w.add_running(1, 4);
  w.add_running(5, 2);
  w.add_running(8, 2);
  w.add_queued(3);
  w.add_queued(6);
  const auto gpus = [](int position) { return position == 3 ? 2 : 4; };
  // 1 fits (6 left), 3 starts (4 left), 5 fits (2 left), 6 asks 4: blocked, 8 is preempted.
  RankWalk::Decision d = w.walk(10, gpus);
  EXPECT_EQ(d.start, (std::vector<int>{3}));
  EXPECT_EQ(d.preempt_from, 7);
  EXPECT_EQ(w.running_from(d.preempt_from), (std::vector<int>{8}));
  // Room 14 = 4 + 2 + 2 + 2 + 4: everything fits, nothing preempted.
  d = w.walk(14, gpus);
  EXPECT_EQ(d.start, (std::vector<int>{3, 6}));
  EXPECT_EQ(d.preempt_from, -1);
  // Room 5 (nodes lost): 1 fits (1 left), 3 blocked: 5 and 8 preempted.
  d = w.walk(5, gpus);
  EXPECT_TRUE(d.start.empty());
  EXPECT_EQ(d.preempt_from, 4);
  // Room 3: the running job at 1 does not fit; it and everything after stop.
  d = w.walk(3, gpus);
  EXPECT_EQ(d.preempt_from, 1);
  w.remove_queued(3);
  w.remove_queued(6);
  // Only running jobs, room 7: 1 and 5 fit (1 left), 8 does not.
  EXPECT_EQ(w.walk(7, gpus).preempt_from, 8);
  w.remove_running(8, 2);
  EXPECT_EQ(w.walk(7, gpus).preempt_from, -1);
  EXPECT_THROW(w.add_running(1, 1), std::logic_error);
  EXPECT_THROW(w.remove_queued(2), std::logic_error);
}

// The index must take exactly the decisions decide() takes on the full view: the same replay,
// bit for bit, on a loaded cluster where LAS preempts thousands of times.
TEST(RankWalk, LasReplayIsIdenticalWithAndWithoutTheIndex) {
  SyntheticTraceSpec t;
  t.jobs = 3000;
  t.arrival_rate_per_s = 1.0 / 20;
  t.duration_max_s = 86400;
  t.gpu_counts = {1, 2, 4, 8, 16};
  t.gpu_weights = {0.5, 0.2, 0.1, 0.15, 0.05};
  const Trace trace = synthetic_trace(t, 9);
  ClusterSpec spec;
  PoolSpec pool;
  pool.name = "p";
  pool.nodes = 8;
  pool.price_per_node_hour = 10;
  spec.pools = {pool};
  for (const TraceJob& tj : trace.jobs) {
    JobSpec j = job_spec_from_trace(tj);
    j.checkpoint.warmup_s = 30;
    spec.jobs.push_back(j);
  }
  SimulationOptions fast;
  fast.policy = "las";
  fast.las_thresholds_gpu_s = {3200, 36000};
  SimulationOptions slow = fast;
  slow.rank_index = false;
  const ClusterResult a = simulate_cluster(spec, fast);
  const ClusterResult b = simulate_cluster(spec, slow);
  int suspensions = 0;
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].finish_s, b.jobs[i].finish_s) << i;
    EXPECT_EQ(a.jobs[i].suspensions, b.jobs[i].suspensions) << i;
    EXPECT_EQ(a.jobs[i].gpu_hours, b.jobs[i].gpu_hours) << i;
    suspensions += a.jobs[i].suspensions;
  }
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.total_cost_usd, b.total_cost_usd);
  EXPECT_GT(suspensions, 100);  // the comparison covers preemption, not only starts
}

}  // namespace
}  // namespace dlsim::scheduler
