#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "scheduler/cluster_simulation.hpp"
#include "scheduler/fabric_share.hpp"

namespace dlsim::scheduler {
namespace {

const double kGolden = (1 + std::sqrt(5.0)) / 2;

TEST(FabricShare, RingAllReduceSendsTwiceTheShareOfTheOtherNodes) {
  EXPECT_EQ(ring_bytes_per_node(1e9, 1), 0.0);
  EXPECT_DOUBLE_EQ(ring_bytes_per_node(1e9, 2), 1e9);      // 2 x 1/2
  EXPECT_DOUBLE_EQ(ring_bytes_per_node(1e9, 4), 1.5e9);    // 2 x 3/4
  // Alone on 2 nodes with 1 GB/s NICs: 1 s of all-reduce, 0.2 s of it hidden under backward.
  EXPECT_DOUBLE_EQ(uncontended_iteration_s(1.0, 0.2, 1e9, 2, 1e9), 1.8);
  EXPECT_DOUBLE_EQ(uncontended_iteration_s(1.0, 0.2, 1e9, 1, 1e9), 1.0);  // one node: no NIC traffic
  EXPECT_DOUBLE_EQ(uncontended_iteration_s(1.0, 0.5, 0.2e9, 2, 1e9), 1.0);  // fully hidden
}

TEST(FabricShare, TwoJobsThatOnlyCommunicateHalveEachOther) {
  FabricShare f;
  const int link = f.add_link(1e9);
  f.set_job(0, 1e-12, 0, {{link, 1e9}});
  f.set_job(1, 1e-12, 0, {{link, 1e9}});
  const std::vector<int> settled = f.settle({link});
  EXPECT_EQ(settled, (std::vector<int>{0, 1}));
  // Each always on the link: max-min fair share C/2, so 1 GB takes 2 s.
  EXPECT_NEAR(f.iteration_s(0), 2.0, 1e-6);
  EXPECT_NEAR(f.iteration_s(1), 2.0, 1e-6);
}

TEST(FabricShare, JobsThatComputeHalfTheTimeMeetAtTheGoldenRatio) {
  // base 1 s, 1 s of communication alone. Together: y = bw/C = 1 - 1/T and T = 1 + 1/y, so
  // y^2 + y - 1 = 0, y = 1/phi, T = 1 + phi = 2.618 s (between 2 s interleaved and 3 s in lockstep).
  FabricShare f;
  const int link = f.add_link(1e9);
  f.set_job(3, 1.0, 0, {{link, 1e9}});
  f.set_job(7, 1.0, 0, {{link, 1e9}});
  f.settle({link});
  EXPECT_NEAR(f.iteration_s(3), 1 + kGolden, 1e-6);
  EXPECT_NEAR(f.iteration_s(7), 1 + kGolden, 1e-6);
}

TEST(FabricShare, ALightNeighbourCostsLittleAndAHeavyOneMuch) {
  // A: base 1 s, 1 s of communication; B: base 99 s, 1 s of communication. Fixed point:
  // T_A = 1 + 1/(1 - 1/T_B), T_B = 99 + 1/(1 - 1/T_A): T_A = 2.0100 s (1% slower than alone),
  // T_B = 100.990 s (its 1 s of communication nearly doubles: A uses half the link on average).
  FabricShare f;
  const int link = f.add_link(1e9);
  f.set_job(0, 1.0, 0, {{link, 1e9}});
  f.set_job(1, 99.0, 0, {{link, 1e9}});
  f.settle({link});
  EXPECT_NEAR(f.iteration_s(0), 2.010001, 1e-5);
  EXPECT_NEAR(f.iteration_s(1), 100.990098, 1e-5);
}

TEST(FabricShare, TheSlowestLinkPacesAJobAndOnlyItsComponentIsSettled) {
  FabricShare f;
  const int slow = f.add_link(1e9), fast = f.add_link(2e9), other = f.add_link(1e9);
  f.set_job(0, 1.0, 0.25, {{slow, 1e9}, {fast, 1e9}});  // 1 s on the slow link, 0.25 s hidden
  f.set_job(1, 1.0, 0, {{other, 1e9}});
  f.set_job(2, 1.0, 0, {{other, 1e9}});
  EXPECT_EQ(f.settle({fast}), (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(f.iteration_s(0), 1.75);
  EXPECT_DOUBLE_EQ(f.iteration_s(1), 2.0);  // not settled yet: as if alone on its link
  f.settle({other});
  EXPECT_NEAR(f.iteration_s(1), 1 + kGolden, 1e-6);  // with job 2, as above
  // Removing a job's traffic frees its links.
  f.set_job(0, 1.0, 0.25, {});
  EXPECT_TRUE(f.links_of(0).empty());
  EXPECT_TRUE(f.settle({slow, fast}).empty());
  EXPECT_THROW(f.add_link(0), std::invalid_argument);
  EXPECT_THROW(f.set_job(2, 0.0, 0, {}), std::invalid_argument);
}

// ---- flow level (FabricSharing::flow) ---------------------------------------------------

TEST(FabricShareFlows, TwoJobsThatOnlyCommunicateHalveEachOtherAsInTheMeanRateModel) {
  FabricShare f(FabricSharing::flow);
  EXPECT_EQ(f.sharing(), FabricSharing::flow);
  const int link = f.add_link(1e9);
  f.set_job(0, 1e-12, 0, {{link, 1e9}});
  f.set_job(1, 1e-12, 0, {{link, 1e9}});
  EXPECT_EQ(f.settle({link}), (std::vector<int>{0, 1}));
  // Both flows always on the link at C/2: 2 s per 1 GB, as the mean-rate model says.
  EXPECT_NEAR(f.iteration_s(0), 2.0, 1e-8);
  EXPECT_NEAR(f.iteration_s(1), 2.0, 1e-8);
}

// Two equal jobs (base 1 s, 1 s of communication alone) keep whatever offset they have: started
// together each iteration both send at once, at C/2, so 1 + 2 = 3 s (the lockstep bound the
// mean-rate model's 2.618 s averages away); the second 1 s into its 2 s iteration (the phase
// source), its traffic runs while the first computes and the other way round: 2 s each.
std::pair<double, double> equal_pair_iteration_s(double second_phase_s) {
  FabricShare f(FabricSharing::flow);
  if (second_phase_s > 0) f.set_phase_source([=](int job) { return job == 7 ? second_phase_s : 0.0; });
  const int link = f.add_link(1e9);
  f.set_job(3, 1.0, 0, {{link, 1e9}});
  f.set_job(7, 1.0, 0, {{link, 1e9}});
  f.settle({link});
  return {f.iteration_s(3), f.iteration_s(7)};
}

TEST(FabricShareFlows, PhasesDecideWhetherEqualJobsCollide) {
  for (const auto& [phase, expected] : {std::pair{0.0, 3.0}, std::pair{1.0, 2.0}}) {
    const auto [a, b] = equal_pair_iteration_s(phase);
    EXPECT_NEAR(a, expected, 1e-8) << phase;
    EXPECT_NEAR(b, expected, 1e-8) << phase;
  }
  // A quarter period apart: they meet for part of each all-reduce, at most as slow as lockstep.
  const auto [a, b] = equal_pair_iteration_s(0.5);
  EXPECT_EQ(equal_pair_iteration_s(0.5), std::make_pair(a, b));  // the same again, bit for bit
  EXPECT_GT(a + b, 2 * 2.0);
  EXPECT_LE(a, 3.0 + 1e-9);
  EXPECT_LE(b, 3.0 + 1e-9);
}

TEST(FabricShareFlows, AloneAJobIsItsComputePlusWhatItsSlowestLinkLeavesExposed) {
  FabricShare f(FabricSharing::flow);
  const int slow = f.add_link(1e9), fast = f.add_link(2e9);
  f.set_job(0, 1.0, 0.25, {{slow, 1e9}, {fast, 1e9}});  // 1 s on the slow link, 0.25 s hidden
  f.settle({slow});
  EXPECT_NEAR(f.iteration_s(0), 1.75, 1e-8);
}

TEST(FabricShareFlows, ALightNeighbourCostsLittleAndAHeavyOneMuch) {
  // As the mean-rate case above: A (1 s + 1 s) meets B (99 s + 1 s) once per B iteration.
  FabricShare f(FabricSharing::flow);
  const int link = f.add_link(1e9);
  f.set_job(0, 1.0, 0, {{link, 1e9}});
  f.set_job(1, 99.0, 0, {{link, 1e9}});
  f.settle({link});
  EXPECT_GT(f.iteration_s(0), 2.0);
  EXPECT_LT(f.iteration_s(0), 2.05);
  EXPECT_GE(f.iteration_s(1), 100.0);
  EXPECT_LE(f.iteration_s(1), 101.0 + 1e-9);  // at most its 1 s of traffic at half the link
}

// ---- in the cluster simulation ----------------------------------------------------------

ClusterSpec two_nodes_sharing_nics(Placement placement, SimulationOptions& options) {
  PoolSpec p;
  p.name = "a";
  p.nodes = 2;
  p.gpus_per_node = 8;
  p.price_per_node_hour = 10;
  p.provisioning_s = 0;
  p.nic_bandwidth = 1e9;
  ClusterSpec spec;
  spec.pools = {p};
  for (int i = 0; i < 2; ++i) {
    JobSpec j;
    j.name = "j" + std::to_string(i);
    j.gpus = 8;
    j.iterations = 100;
    j.iteration_s = 1.0;
    j.gradient_bytes = 1e9;  // across 2 nodes: 1 GB per node per iteration, 1 s at 1 GB/s
    j.checkpoint.warmup_s = 0;
    spec.jobs.push_back(j);
  }
  options.placement = placement;
  return spec;
}

TEST(FabricInCluster, JobsSpreadOverTheSameNicsSlowEachOtherPackedOnesDoNot) {
  SimulationOptions options;
  const ClusterSpec packed_spec = two_nodes_sharing_nics(Placement::packed, options);
  const ClusterResult packed = simulate_cluster(packed_spec, options);
  for (const JobResult& j : packed.jobs) {
    EXPECT_DOUBLE_EQ(j.finish_s, 100.0);  // one node each: no NIC traffic
    EXPECT_EQ(j.network_s, 0.0);
  }
  const ClusterSpec spread_spec = two_nodes_sharing_nics(Placement::spread, options);
  const ClusterResult spread = simulate_cluster(spread_spec, options);
  // 4 + 4 GPUs each, on both nodes: the golden-ratio case above, 100 x 2.618 s.
  for (const JobResult& j : spread.jobs) {
    EXPECT_NEAR(j.finish_s, 100 * (1 + kGolden), 1e-5);
    EXPECT_NEAR(j.network_s, 100 * kGolden, 1e-5);
    EXPECT_EQ(j.useful_iterations, 100);
    EXPECT_EQ(j.computed_iterations, 100);
  }
  EXPECT_GT(spread.total_cost_usd, packed.total_cost_usd);
}

TEST(FabricInCluster, AtFlowLevelSpreadJobsInLockstepTakeThreeSecondsAnIteration) {
  SimulationOptions options;
  ClusterSpec spec = two_nodes_sharing_nics(Placement::spread, options);
  spec.fabric_sharing = FabricSharing::flow;
  const ClusterResult r = simulate_cluster(spec, options);
  // Started together, their all-reduces always meet: 100 x (1 + 2) s.
  for (const JobResult& j : r.jobs) {
    EXPECT_NEAR(j.finish_s, 300.0, 1e-6);
    EXPECT_NEAR(j.network_s, 200.0, 1e-6);
    EXPECT_EQ(j.useful_iterations, 100);
  }
}

TEST(FabricInCluster, AtFlowLevelAJobArrivingMidIterationFindsItsOwnPhase) {
  // j1 arrives 50.5 s in, j0 then 0.5 s into an iteration (25.25 done at 2 s each): their
  // traffic overlaps only in part, so both are slower than alone (2 s) and faster than in
  // lockstep (3 s) while they share; nothing is lost.
  SimulationOptions options;
  ClusterSpec spec = two_nodes_sharing_nics(Placement::spread, options);
  spec.fabric_sharing = FabricSharing::flow;
  spec.jobs[1].submit_s = 50.5;
  const ClusterResult r = simulate_cluster(spec, options);
  EXPECT_GT(r.jobs[0].finish_s, 200.0);
  EXPECT_LT(r.jobs[0].finish_s, 50.5 + 74.75 * 3.0);
  EXPECT_GT(r.jobs[1].finish_s, r.jobs[0].finish_s);
  for (const JobResult& j : r.jobs) {
    EXPECT_EQ(j.useful_iterations, 100);
    EXPECT_EQ(j.computed_iterations, 100);
  }
  // Same scenario, same results, bit for bit.
  const ClusterResult again = simulate_cluster(spec, options);
  EXPECT_EQ(again.jobs[0].finish_s, r.jobs[0].finish_s);
  EXPECT_EQ(again.jobs[1].finish_s, r.jobs[1].finish_s);
}

TEST(FabricInCluster, AJobSlowsWhenANeighbourArrivesAndSpeedsUpWhenItLeavesWithoutLosingWork) {
  SimulationOptions options;
  ClusterSpec spec = two_nodes_sharing_nics(Placement::spread, options);
  spec.jobs[1].submit_s = 50.5;
  const ClusterResult r = simulate_cluster(spec, options);
  // j0 alone at 2 s per iteration: 25.25 iterations by 50.5 s. Then both at 1 + phi: j0's 74.75
  // left take 195.698 s (done at 246.198 s), by when j1 has done 74.75; its 25.25 left alone at 2 s
  // take 50.5 s more.
  EXPECT_NEAR(r.jobs[0].finish_s, 50.5 + 74.75 * (1 + kGolden), 1e-5);
  EXPECT_NEAR(r.jobs[1].finish_s, 50.5 + 74.75 * (1 + kGolden) + 50.5, 1e-5);
  for (const JobResult& j : r.jobs) {
    EXPECT_EQ(j.useful_iterations, 100);
    EXPECT_EQ(j.computed_iterations, 100);  // a change of speed loses nothing
  }
}

TEST(FabricInCluster, SpanningLeavesLoadsTheOversubscribedUplinks) {
  SimulationOptions options;
  ClusterSpec spec = two_nodes_sharing_nics(Placement::packed, options);
  spec.jobs.resize(1);
  spec.jobs[0].gpus = 16;
  spec.pools[0].oversubscription = 2;
  // Both nodes under one leaf: only the NICs, 1 s of all-reduce per iteration.
  spec.pools[0].nodes_per_leaf = 2;
  EXPECT_DOUBLE_EQ(simulate_cluster(spec, options).jobs[0].finish_s, 200.0);
  // One node per leaf: each uplink has 1 x 1 GB/s / 2 = 0.5 GB/s, so 2 s of all-reduce.
  spec.pools[0].nodes_per_leaf = 1;
  EXPECT_DOUBLE_EQ(simulate_cluster(spec, options).jobs[0].finish_s, 300.0);
}

// One 8-GPU node in each of two pools; a 16-GPU job across both.
ClusterSpec across_two_pools(const std::string& region_b, const std::string& zone_b) {
  SimulationOptions unused;
  ClusterSpec spec = two_nodes_sharing_nics(Placement::packed, unused);
  spec.pools[0].nodes = 1;
  spec.pools[0].region = "r1";
  spec.pools[0].zone = "r1-a";
  PoolSpec b = spec.pools[0];
  b.name = "b";
  b.region = region_b;
  b.zone = zone_b;
  spec.pools.push_back(b);
  spec.jobs.resize(1);
  spec.jobs[0].gpus = 16;
  spec.wan_bandwidth = 0.5e9;
  return spec;
}

TEST(FabricInCluster, ARingAcrossRegionsCrossesTheWanAndPaysEgressPerIteration) {
  const ClusterResult r = simulate_cluster(across_two_pools("r2", "r2-a"), SimulationOptions{});
  // 1 GB per iteration each way over the 0.5 GB/s WAN link: 2 s, after 1 s of compute.
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 300.0);
  // Two ring edges cross regions per iteration, 1 GB each, 0.02 USD/GB at the source: 0.04 USD
  // per iteration, 4 USD for 100.
  EXPECT_NEAR(r.jobs[0].costs.egress, 4.0, 1e-9);
  EXPECT_NEAR(r.costs.egress, 4.0, 1e-9);
  EXPECT_NEAR(r.pools[0].costs.egress + r.pools[1].costs.egress, 4.0, 1e-9);
}

TEST(FabricInCluster, ARingAcrossZonesPaysEgressButNoWan) {
  const ClusterResult r = simulate_cluster(across_two_pools("r1", "r1-b"), SimulationOptions{});
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 200.0);  // the NICs only: 1 s
  // Between zones, 0.01 USD/GB out and 0.01 in: 0.02 per GB, two 1 GB edges, 100 iterations.
  EXPECT_NEAR(r.jobs[0].costs.egress, 4.0, 1e-9);
  // In one zone: nothing.
  EXPECT_EQ(simulate_cluster(across_two_pools("r1", "r1-a"), SimulationOptions{}).jobs[0].costs.egress, 0.0);
}

}  // namespace
}  // namespace dlsim::scheduler
