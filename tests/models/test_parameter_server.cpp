// Parameter-server data parallelism (models/parameter_server.hpp): transfer times against the
// NIC each placement loads, the server update, the asynchronous steady state, and the replay.
#include <gtest/gtest.h>

#include "models/memory_model.hpp"
#include "models/parameter_server.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

ParameterServerConfig servers(int s, ServerPlacement placement, double nic = 1e9) {
  return {.enabled = true, .servers = s, .placement = placement, .worker_nic = nic, .server_nic = nic,
          .server_memory_bandwidth = 100e9, .replicas_per_node = 8};
}

TEST(ParameterServer, DedicatedShardsAreBoundByWorkersOverServers) {
  const double g = 1e8;
  // 16 workers on 2 servers: each shard NIC receives 16 g / 2 = 8 g.
  EXPECT_DOUBLE_EQ(ps_transfer_time(servers(2, ServerPlacement::dedicated), g, 16), 8 * g / 1e9);
  // Doubling the shards halves it while the servers are the bottleneck.
  EXPECT_DOUBLE_EQ(ps_transfer_time(servers(4, ServerPlacement::dedicated), g, 16), 4 * g / 1e9);
  // Scales with workers / servers.
  EXPECT_DOUBLE_EQ(ps_transfer_time(servers(4, ServerPlacement::dedicated), g, 32), ps_transfer_time(servers(2, ServerPlacement::dedicated), g, 16));
  // As many shards as workers: the worker's own NIC (g) is the limit.
  EXPECT_DOUBLE_EQ(ps_transfer_time(servers(16, ServerPlacement::dedicated), g, 16), g / 1e9);
  // Faster server NICs move the bound to the workers.
  ParameterServerConfig fast = servers(2, ServerPlacement::dedicated);
  fast.server_nic = 100e9;
  EXPECT_DOUBLE_EQ(ps_transfer_time(fast, g, 16), g / 1e9);
}

TEST(ParameterServer, ColocatedServersShareTheWorkerNics) {
  const double g = 1e8;
  // A server node receives from the other 15 workers only: 15 g / 2 (dedicated: 16 g / 2).
  EXPECT_DOUBLE_EQ(ps_transfer_time(servers(2, ServerPlacement::colocated), g, 16), 7.5 * g / 1e9);
  EXPECT_LT(ps_transfer_time(servers(2, ServerPlacement::colocated), g, 16), ps_transfer_time(servers(2, ServerPlacement::dedicated), g, 16));
  // Every node a server: each sends and receives (W - 1) g / W, less than a dedicated shard's g.
  EXPECT_DOUBLE_EQ(ps_transfer_time(servers(16, ServerPlacement::colocated), g, 16), 15 * g / 16 / 1e9);
  EXPECT_LT(ps_transfer_time(servers(16, ServerPlacement::colocated), g, 16), ps_transfer_time(servers(16, ServerPlacement::dedicated), g, 16));
  // In the steady state a co-located node's NIC also carries its worker's pulls from the other shards.
  EXPECT_DOUBLE_EQ(ps_nic_bound_time(servers(2, ServerPlacement::colocated), g, 16), (15 * g / 2 + g / 2) / 1e9);
  EXPECT_DOUBLE_EQ(ps_nic_bound_time(servers(2, ServerPlacement::dedicated), g, 16), 8 * g / 1e9);
}

TEST(ParameterServer, SynchronousUpdatesOnceAsynchronousOncePerPush) {
  const ParameterServerConfig c = servers(4, ServerPlacement::dedicated);
  const double n = 1e8;  // elements, all shards
  // Synchronous: read 16 pushes of n / 4 FP32 gradients, one Adam step (28 B per element).
  EXPECT_DOUBLE_EQ(ps_update_time(c, n, 4, 28, 16, true), (16 * n / 4 * 4 + n / 4 * 28) / 100e9);
  EXPECT_DOUBLE_EQ(ps_update_time(c, n, 4, 28, 16, false), 16 * (n / 4 * 4 + n / 4 * 28) / 100e9);
}

TEST(ParameterServer, AsyncCycleIsBoundedAndStalenessStaysWithinTheBound) {
  ParameterServerConfig c = servers(4, ServerPlacement::dedicated);
  c.synchronous = false;
  // Compute 100 ms, its stream busy 80 ms, the synchronous iteration 180 ms.
  for (int k : {0, 1, 2, 4, 8}) {
    c.staleness = k;
    const AsyncSteadyState a = ps_async_steady_state(c, 0.18, 0.1, 0.08, 0.01, 0.01);
    EXPECT_LE(a.cycle_s, 0.18);
    EXPECT_GE(a.cycle_s, 0.1);
    EXPECT_LE(a.staleness, k);
    EXPECT_GE(a.staleness, 0);
  }
  c.staleness = 0;
  EXPECT_DOUBLE_EQ(ps_async_steady_state(c, 0.18, 0.1, 0.08, 0.01, 0.01).cycle_s, 0.18);
  c.staleness = 1;
  EXPECT_DOUBLE_EQ(ps_async_steady_state(c, 0.18, 0.1, 0.08, 0.01, 0.01).cycle_s, 0.1);  // compute-bound: comm hidden
  EXPECT_DOUBLE_EQ(ps_async_steady_state(c, 0.18, 0.1, 0.08, 0.01, 0.01).staleness, 1);
  // The servers' NICs can bound the cycle.
  EXPECT_DOUBLE_EQ(ps_async_steady_state(c, 0.18, 0.1, 0.08, 0.15, 0.01).cycle_s, 0.15);
}

TEST(ParameterServer, ReplayedIterationFollowsTheShardsAndAsyncIsNeverSlower) {
  const network::Topology topology = test::dgx_cluster(4, 25);
  const ModelGraph model = resnet50();
  ParallelPlan plan;
  plan.data = 32;
  plan.micro_batch_size = 64;
  plan.precision = Precision::fp16;
  plan.parameter_server = servers(1, ServerPlacement::dedicated, 25e9 / 8);
  TrainingConfig c = test::config(model, topology, plan);
  const IterationBreakdown one = replay_iteration(c);
  EXPECT_EQ(one.optimizer_s, 0);  // the servers step the optimizer
  EXPECT_NEAR(test::sum_of_parts(one), one.iteration_s, 1e-6 * one.iteration_s);
  // A worker node pushes its whole gradient once per iteration.
  EXPECT_NEAR(one.gradient_wire_bytes, model.parameters() * 4, 1e-6 * one.gradient_wire_bytes);
  c.plan.parameter_server.servers = 4;
  const IterationBreakdown four = replay_iteration(c);
  EXPECT_LT(four.iteration_s, one.iteration_s);
  EXPECT_LT(four.dp_comm_busy_s, one.dp_comm_busy_s / 2);
  // Two shards: dedicated ones receive 4 g / 2 each, co-located ones 3 g / 2 (not their own node's).
  c.plan.parameter_server.servers = 2;
  const IterationBreakdown dedicated2 = replay_iteration(c);
  c.plan.parameter_server.placement = ServerPlacement::colocated;
  const IterationBreakdown colocated2 = replay_iteration(c);
  EXPECT_LT(colocated2.dp_comm_busy_s, dedicated2.dp_comm_busy_s);
  c.plan.parameter_server.servers = 4;
  // Asynchronous with a staleness bound: at least the synchronous throughput.
  c.plan.parameter_server.placement = ServerPlacement::dedicated;
  c.plan.parameter_server.synchronous = false;
  c.plan.parameter_server.staleness = 4;
  const IterationBreakdown async = replay_iteration(c);
  EXPECT_LE(async.iteration_s, four.iteration_s);
  EXPECT_GE(async.samples_per_s, four.samples_per_s);
  EXPECT_LE(async.staleness, 4);
  EXPECT_NEAR(test::sum_of_parts(async), async.iteration_s, 1e-6 * async.iteration_s);
  // Workers hold no optimizer state.
  EXPECT_EQ(peak_memory(model, c.plan).optimizer_state, 0);
}

TEST(ParameterServer, PlansThatCannotUseServersAreRejected) {
  const ModelGraph model = bert_large(128);
  ParallelPlan plan;
  plan.data = 4;
  plan.tensor = 2;
  plan.parameter_server = servers(1, ServerPlacement::dedicated);
  plan.parameter_server.replicas_per_node = 4;
  EXPECT_THROW(validate_plan(plan, model, 8), std::invalid_argument);
  plan.tensor = 1;
  plan.data = 16;
  plan.parameter_server.servers = 8;
  plan.parameter_server.placement = ServerPlacement::colocated;  // 4 worker nodes, 8 servers
  EXPECT_THROW(validate_plan(plan, model, 16), std::invalid_argument);
  plan.parameter_server.servers = 4;
  EXPECT_NO_THROW(validate_plan(plan, model, 16));
}

}  // namespace
}  // namespace dlsim::models
