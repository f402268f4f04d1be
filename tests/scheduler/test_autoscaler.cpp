// Auto-scalers: each rule on hand-built views (scale-up amounts, cool-down, bounds, idle
// release, utilization thresholds, forecast headroom), then through the simulation: nodes by
// state over time, predictive requests ahead of a known arrival pattern, fair-share weights.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "scheduler/autoscaler.hpp"
#include "scheduler/cluster_simulation.hpp"

namespace dlsim::scheduler {
namespace {

PoolSpec scaled_pool(const std::string& policy, int min_nodes, int max_nodes) {
  PoolSpec p;
  p.name = "p";
  p.gpus_per_node = 8;
  p.nodes = min_nodes;
  p.min_nodes = min_nodes;
  p.max_nodes = max_nodes;
  p.autoscaler = policy;
  p.provisioning_s = 300;
  p.idle_timeout_s = 300;
  p.scale_up_cooldown_s = 60;
  return p;
}

AutoscaleView view(ScaleTrigger trigger, double now, int unplaced) {
  AutoscaleView v;
  v.trigger = trigger;
  v.now_s = now;
  v.unplaced_gpus = unplaced;
  return v;
}

TEST(ReactiveAutoscaler, RequestsForWhatDoesNotFitWithinMaxAndCooldown) {
  const auto a = make_autoscaler(scaled_pool("reactive", 0, 4));
  AutoscaleView v = view(ScaleTrigger::pass, 1000, 20);
  v.pool.nodes_provisioning = 1;
  // 20 GPUs queued, 8 on the way: 12 missing -> two 8-GPU nodes.
  EXPECT_EQ(a->decide(v).add_nodes, 2);
  // Three live nodes under a maximum of 4: one more at most.
  v.pool.nodes_busy = 2;
  EXPECT_EQ(a->decide(v).add_nodes, 1);
  // Last request at 950 s, cool-down 60 s: nothing before 1010 s.
  v.pool.last_scale_up_s = 950;
  EXPECT_EQ(a->decide(v).add_nodes, 0);
  v.now_s = 1010;
  EXPECT_EQ(a->decide(v).add_nodes, 1);
  // Nothing missing when the nodes on the way cover the queue.
  v.unplaced_gpus = 8;
  EXPECT_EQ(a->decide(v).add_nodes, 0);
  EXPECT_EQ(a->interval_s(), 0);  // no tick
}

TEST(ReactiveAutoscaler, ReleasesAnIdleNodeAtItsTimeoutDownToMin) {
  const auto a = make_autoscaler(scaled_pool("reactive", 1, 4));
  AutoscaleView v = view(ScaleTrigger::idle_timeout, 700, 0);
  v.idle_node = 5;
  v.pool.nodes_ready = 1;
  v.pool.nodes_busy = 1;
  v.pool.idle = {{5, 400}};
  EXPECT_EQ(a->decide(v).release, std::vector<int>{5});
  v.pool.nodes_busy = 0;  // the idle node is the last one: min 1 keeps it
  EXPECT_TRUE(a->decide(v).release.empty());
  // A pass never releases.
  v.trigger = ScaleTrigger::pass;
  v.pool.nodes_busy = 1;
  EXPECT_TRUE(a->decide(v).release.empty());
}

TEST(UtilizationAutoscaler, KeepsBusyAndQueuedGpusAtTheTargetOnTicks) {
  PoolSpec p = scaled_pool("utilization", 0, 10);
  p.target_utilization = 0.8;
  const auto a = make_autoscaler(p);
  EXPECT_EQ(a->interval_s(), 60);
  AutoscaleView v = view(ScaleTrigger::tick, 1000, 8);
  v.pool.nodes_busy = 2;
  v.pool.busy_gpus = 12;
  // (12 + 8) / 16 = 1.25 > 0.8: 20 / 0.8 = 25 GPUs wanted, 9 more: 2 nodes (20 / 32 = 0.625;
  // one node would give 20 / 24 = 0.83).
  EXPECT_EQ(a->decide(v).add_nodes, 2);
  // Only on ticks.
  v.trigger = ScaleTrigger::pass;
  EXPECT_EQ(a->decide(v).add_nodes, 0);
  // At the target exactly: nothing. 16 busy, 4 queued of 3 nodes in service + 1 provisioning
  // (32 GPUs): 20 / 32 = 0.625 <= 0.8.
  v.trigger = ScaleTrigger::tick;
  v.unplaced_gpus = 4;
  v.pool.busy_gpus = 16;
  v.pool.nodes_busy = 3;
  v.pool.nodes_provisioning = 1;
  EXPECT_EQ(a->decide(v).add_nodes, 0);
  // 24 busy + 4 queued = 28 > 0.8 x 32 = 25.6: 28 / 0.8 = 35 GPUs, 3 more: one node.
  v.pool.busy_gpus = 24;
  EXPECT_EQ(a->decide(v).add_nodes, 1);
  // Cool-down: the last request at 970 s holds it until 1030 s.
  v.pool.last_scale_up_s = 970;
  EXPECT_EQ(a->decide(v).add_nodes, 0);
  // Max 10 nodes, 9 live: one at most.
  v.pool.last_scale_up_s = -1;
  v.unplaced_gpus = 200;
  v.pool.nodes_busy = 8;
  EXPECT_EQ(a->decide(v).add_nodes, 1);
}

TEST(UtilizationAutoscaler, ReleasesIdleNodesBelowLowWithoutPassingTheTarget) {
  PoolSpec p = scaled_pool("utilization", 0, 10);
  p.target_utilization = 0.8;
  p.low_utilization = 0.4;
  const auto a = make_autoscaler(p);
  // Four nodes in service (32 GPUs), one busy with 4 GPUs; idle since 0, 100 and 500 s; idle
  // timeout 300 s; now 700 s: the first two have timed out, the third not.
  AutoscaleView v = view(ScaleTrigger::tick, 700, 0);
  v.pool.nodes_busy = 1;
  v.pool.nodes_ready = 3;
  v.pool.busy_gpus = 4;
  v.pool.idle = {{1, 0}, {2, 100}, {3, 500}};
  // 4 / 32 = 0.125 < 0.4; after two releases 4 <= 0.8 x 16: both go.
  EXPECT_EQ(a->decide(v).release, (std::vector<int>{1, 2}));
  // 12 busy: 0.375 < 0.4; 12 <= 0.8 x 24 and 12 <= 0.8 x 16 = 12.8: both go. With target 0.7
  // only one: 12 <= 0.7 x 24 = 16.8 but 12 > 0.7 x 16 = 11.2.
  v.pool.busy_gpus = 12;
  EXPECT_EQ(a->decide(v).release.size(), 2u);
  PoolSpec tight = p;
  tight.target_utilization = 0.7;
  EXPECT_EQ(make_autoscaler(tight)->decide(v).release, std::vector<int>{1});
  // 14 busy: 0.4375 >= 0.4: no release.
  v.pool.busy_gpus = 14;
  EXPECT_TRUE(a->decide(v).release.empty());
  // Min 3 of 4 live nodes: one release at most.
  v.pool.busy_gpus = 4;
  PoolSpec floor = p;
  floor.min_nodes = 3;
  floor.nodes = 3;
  EXPECT_EQ(make_autoscaler(floor)->decide(v).release, std::vector<int>{1});
  // Queued jobs: no release.
  v.unplaced_gpus = 1;
  EXPECT_TRUE(a->decide(v).release.empty());
}

TEST(PredictiveAutoscaler, KeepsTheForecastDemandFree) {
  PoolSpec p = scaled_pool("predictive", 0, 4);
  p.forecast_window_s = 3600;
  p.provisioning_s = 300;
  p.scale_up_cooldown_s = 0;
  const auto a = make_autoscaler(p);
  const std::vector<Arrival> arrivals{{0, 80, -1}};
  // One arrival of 80 GPUs at 0: rate 80 / 3600 GPU/s, over 300 s of provisioning 6.67 GPUs.
  AutoscaleView v = view(ScaleTrigger::pass, 0, 0);
  v.arrivals = arrivals;
  EXPECT_EQ(a->decide(v).add_nodes, 1);       // nothing free: one node ahead
  v.pool.nodes_busy = 1;
  v.pool.busy_gpus = 4;                       // 4 free: 2.67 short, still one node
  EXPECT_EQ(a->decide(v).add_nodes, 1);
  v.pool.nodes_ready = 1;                     // 12 free >= 6.67: none
  EXPECT_EQ(a->decide(v).add_nodes, 0);
  // Reactive part on top: 20 queued GPUs, 12 free >= 6.67 headroom: 20 / 8 -> 3 nodes, of
  // which 2 fit under max 4 beside the 2 live ones.
  v.unplaced_gpus = 20;
  EXPECT_EQ(a->decide(v).add_nodes, 2);
  v.pool.nodes_ready = 0;
  v.pool.nodes_busy = 0;
  v.pool.busy_gpus = 0;
  // Nothing live: (20 + 6.67 headroom) / 8 -> 4 nodes, one more than the reactive rule's 3.
  EXPECT_EQ(a->decide(v).add_nodes, 4);
  // An arrival for another pool does not count: no demand, nothing queued, nothing requested.
  const std::vector<Arrival> elsewhere{{0, 80, 1}};
  const auto b = make_autoscaler(p);
  v.arrivals = elsewhere;
  v.unplaced_gpus = 0;
  EXPECT_EQ(b->decide(v).add_nodes, 0);
}

TEST(PredictiveAutoscaler, ReleasesOnlyWhatTheForecastDoesNotNeed) {
  PoolSpec p = scaled_pool("predictive", 0, 4);
  const auto a = make_autoscaler(p);
  const std::vector<Arrival> arrivals{{0, 80, -1}};
  // At 3600 s: rate 80 / 3600 x e^-1, headroom 300 x that = 2.45 GPUs. Two idle nodes (16 free)
  // timed out: releasing one leaves 8 >= 2.45, the second would leave 0.
  AutoscaleView v = view(ScaleTrigger::tick, 3600, 0);
  v.arrivals = arrivals;
  v.pool.nodes_ready = 2;
  v.pool.idle = {{0, 100}, {1, 200}};
  EXPECT_EQ(a->decide(v).release, std::vector<int>{0});
  // At its idle timeout only that node is considered.
  v.trigger = ScaleTrigger::idle_timeout;
  v.idle_node = 1;
  EXPECT_EQ(a->decide(v).release, std::vector<int>{1});
  // Without any demand seen, both go (as the reactive rule would at their timeouts).
  const auto quiet = make_autoscaler(p);
  v.arrivals = {};
  v.trigger = ScaleTrigger::tick;
  EXPECT_EQ(quiet->decide(v).release, (std::vector<int>{0, 1}));
}

TEST(Autoscalers, UnknownNameAndBadKnobsAreRejected) {
  PoolSpec p = scaled_pool("hpa", 0, 4);
  try {
    make_autoscaler(p);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("predictive, reactive, utilization"), std::string::npos) << e.what();
  }
  p.autoscaler = "utilization";
  p.target_utilization = 1.2;
  EXPECT_THROW(make_autoscaler(p), std::invalid_argument);
  p.target_utilization = 0.5;
  p.low_utilization = 0.5;
  EXPECT_THROW(make_autoscaler(p), std::invalid_argument);
}

// ---- through the simulation -------------------------------------------------------------------

JobSpec job(const std::string& name, double submit, int gpus, std::int64_t iterations, const std::string& queue = "") {
  JobSpec j;
  j.name = name;
  j.submit_s = submit;
  j.gpus = gpus;
  j.iterations = iterations;
  j.iteration_s = 1;
  j.queue = queue;
  j.checkpoint.warmup_s = 0;
  return j;
}

// The last value a series took at or before t.
double at(const ClusterResult& r, const std::string& series, double t) {
  const sim::TimeSeries* s = r.recorder.find_series(series);
  double v = std::nan("");
  for (std::size_t i = 0; s != nullptr && i < s->times.size() && s->times[i].seconds() <= t; ++i) v = s->values[i];
  return v;
}

TEST(UtilizationAutoscaler, ScalesOnTicksAndNodesByStateAreRecorded) {
  // Two nodes to start, min 1, max 4, target 0.5 (low 0.25), ticks every 60 s, 100 s of
  // provisioning, idle timeout 120 s. At 0 an 8-GPU and a 4-GPU job (1000 s each) take both
  // nodes; the tick at 60 s sees 12 / 16 > 0.5 and asks for 12 / 0.5 - 16 = 8 GPUs: node 2,
  // ready at 160 s, idle. At 1000 s the jobs end: at the tick at 1020 s node 2 (idle since
  // 160 s) goes; at 1140 s node 0 (idle 140 s), not node 1 (min 1). A 1-GPU job at 2000 s runs on
  // node 1 until 2100 s.
  ClusterSpec spec;
  PoolSpec p = scaled_pool("utilization", 1, 4);
  p.nodes = 2;
  p.target_utilization = 0.5;
  p.low_utilization = 0.25;
  p.provisioning_s = 100;
  p.idle_timeout_s = 120;
  p.price_per_node_hour = 36;
  spec.pools = {p};
  spec.jobs = {job("a", 0, 8, 1000), job("b", 0, 4, 1000), job("c", 2000, 1, 100)};
  const ClusterResult r = simulate_cluster(spec, SimulationOptions{});
  EXPECT_EQ(r.pools[0].nodes_requested, 3);
  EXPECT_DOUBLE_EQ(r.jobs[2].first_start_s, 2000);
  EXPECT_NEAR(r.pools[0].node_hours, (960 + 1140 + 2100) / 3600.0, 1e-9);
  for (const char* s : {"nodes_provisioning", "nodes_ready", "nodes_busy", "nodes_draining"}) {
    EXPECT_DOUBLE_EQ(at(r, s, 1500), std::string(s) == "nodes_ready" ? 1 : 0) << s;
  }
  EXPECT_DOUBLE_EQ(at(r, "nodes_provisioning", 100), 1);
  EXPECT_DOUBLE_EQ(at(r, "nodes_busy", 100), 2);
  EXPECT_DOUBLE_EQ(at(r, "nodes_ready", 500), 1);
  EXPECT_DOUBLE_EQ(at(r, "nodes_ready", 1030), 2);   // node 2 released, nodes 0 and 1 idle
  EXPECT_DOUBLE_EQ(at(r, "nodes_busy", 2050), 1);
  // Sampled every 100 s instead: the values at the samples, the same at 100 s and 500 s.
  SimulationOptions sampled;
  sampled.series_interval_s = 100;
  const ClusterResult s = simulate_cluster(spec, sampled);
  const sim::TimeSeries* prov = s.recorder.find_series("nodes_provisioning");
  ASSERT_NE(prov, nullptr);
  EXPECT_DOUBLE_EQ(prov->times[1].seconds(), 100);
  EXPECT_DOUBLE_EQ(prov->values[1], 1);
  EXPECT_DOUBLE_EQ(at(s, "nodes_ready", 500), 1);
  EXPECT_NEAR(s.pools[0].node_hours, r.pools[0].node_hours, 1e-12);  // sampling changes no decision
}

TEST(PredictiveAutoscaler, NodesAreReadyAheadOfAPeriodicArrival) {
  // An 8-GPU job of 200 s every 1200 s, a pool of 0 to 4 nodes with 300 s of provisioning and
  // a 600 s idle timeout. Reactive: each node idles from submit + 500 s and goes at submit +
  // 1100 s, before the next job, so every job waits 300 s for its node. Predictive: from the
  // first arrival the forecast headroom is positive, so one node is always kept free (requested
  // as soon as a job takes the free one, and not released while the forecast needs it): only
  // the first job waits.
  ClusterSpec spec;
  PoolSpec p = scaled_pool("reactive", 0, 4);
  p.idle_timeout_s = 600;
  p.scale_up_cooldown_s = 0;
  spec.pools = {p};
  for (int i = 0; i < 10; ++i) spec.jobs.push_back(job("j" + std::to_string(i), 1200.0 * i, 8, 200));
  const ClusterResult reactive = simulate_cluster(spec, SimulationOptions{});
  spec.pools[0].autoscaler = "predictive";
  const ClusterResult predictive = simulate_cluster(spec, SimulationOptions{});
  for (int i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(reactive.jobs[i].queueing_s, 300) << i;
    EXPECT_DOUBLE_EQ(predictive.jobs[i].queueing_s, i == 0 ? 300 : 0) << i;
    EXPECT_EQ(predictive.jobs[i].useful_iterations, 200);
  }
  EXPECT_EQ(reactive.pools[0].nodes_requested, 10);
  // Never above max, and the readiness costs node time.
  const sim::TimeSeries* live = predictive.recorder.find_series("nodes_ready");
  for (double v : live->values) EXPECT_LE(v, 4);
  EXPECT_GT(predictive.pools[0].node_hours, reactive.pools[0].node_hours);
}

TEST(FairShare, WeightsTwoToOneSplitASaturatedClusterTwoToOne) {
  // One 6-GPU node, 40 one-GPU jobs of 100 s per queue at 0 (always a backlog on both). Each
  // round the least served queue (GPUs held / weight) goes first: with weights 2:1 the picks
  // are a, b, a, a, b, a (a 4, b 2); unweighted a, b, a, b, a, b. Rounds end together every
  // 100 s, so in the first 900 s a gets 36 x 100 GPU-s and b 18 x 100 (2:1), unweighted 27:27.
  ClusterSpec spec;
  PoolSpec p;
  p.name = "p";
  p.gpus_per_node = 6;
  p.nodes = 1;
  spec.pools = {p};
  for (int i = 0; i < 40; ++i) {
    spec.jobs.push_back(job("a" + std::to_string(i), 0, 1, 100, "team-a"));
    spec.jobs.push_back(job("b" + std::to_string(i), 0, 1, 100, "team-b"));
  }
  const auto served_before = [&](const ClusterResult& r, const std::string& queue, double t) {
    double gpu_s = 0;
    for (std::size_t i = 0; i < r.jobs.size(); ++i) {
      if (spec.jobs[i].queue != queue || r.jobs[i].first_start_s < 0) continue;
      gpu_s += std::max(0.0, std::min(t, r.jobs[i].finish_s) - r.jobs[i].first_start_s);
    }
    return gpu_s;
  };
  SimulationOptions o;
  o.policy = "fair-share";
  const ClusterResult even = simulate_cluster(spec, o);
  EXPECT_DOUBLE_EQ(served_before(even, "team-a", 900), 2700);
  EXPECT_DOUBLE_EQ(served_before(even, "team-b", 900), 2700);
  o.queue_weights = {{"team-a", 2}, {"team-b", 1}};
  const ClusterResult weighted = simulate_cluster(spec, o);
  EXPECT_DOUBLE_EQ(served_before(weighted, "team-a", 900), 3600);
  EXPECT_DOUBLE_EQ(served_before(weighted, "team-b", 900), 1800);
  // A weight for a queue no job is in is an error naming it.
  o.queue_weights = {{"team-c", 2}};
  try {
    simulate_cluster(spec, o);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("team-c"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::scheduler
