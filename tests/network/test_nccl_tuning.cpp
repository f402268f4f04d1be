// NCCL's cost model (network/nccl_tuning.hpp): the protocols' bandwidth fractions and
// latencies as NCCL 2.20.3's tuning.cc states them, and the tuner's choice by size.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "network/nccl_tuning.hpp"

namespace dlsim::network {
namespace {

using Kind = CollectiveKind;

// One DGX A100 as NCCL sees it: 8 ranks on NVSwitch, 12 NVLink3 at 20 GB/s each.
NcclGroup dgx_a100() {
  NcclGroup g;
  g.ranks = 8;
  g.nodes = 1;
  g.compute_capability = 80;
  g.intra_nvlink = true;
  g.intra_bw = 240e9;
  g.channels = 12;
  return g;
}

TEST(NcclTuning, ProtocolFractionsAreNcclsFactors) {
  const NcclGroup g = dgx_a100();
  // Ring: Simple runs at the graph's bandwidth, LL128 at 120/128-ish (NCCL's 0.92), LL at a
  // quarter for all-reduce (its 8-byte lines carry 4 data bytes, and NCCL counts the flag
  // polling too).
  EXPECT_DOUBLE_EQ(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::simple, g).fraction, 1.0);
  EXPECT_DOUBLE_EQ(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll128, g).fraction, 0.92);
  EXPECT_DOUBLE_EQ(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll, g).fraction, 0.25);
  // Outside all-reduce and reduce, LL gets a third on one node.
  EXPECT_NEAR(nccl_cost(Kind::all_gather, Algorithm::ring, Protocol::ll, g).fraction, 1.0 / 3, 1e-12);
  // Tree: 0.92, and LL a further 1/3.8.
  EXPECT_DOUBLE_EQ(nccl_cost(Kind::all_reduce, Algorithm::double_binary_tree, Protocol::simple, g).fraction, 0.92);
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::double_binary_tree, Protocol::ll, g).fraction, 0.92 / 3.8, 1e-12);
  // LL's absolute cap (Ampere, one node: 87.7 GB/s) binds on a faster graph.
  NcclGroup fast = g;
  fast.intra_bw = 900e9;
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll, fast).fraction, 87.7 / 900, 1e-12);
}

// The tuner chooses, the protocol runs as measured: of the rings, only those inside an Ampere
// NVLink node are known to fall short of the tuner (vidur's DGX A100 rows): LL128 by fitted
// ratios, Simple by 6.2 us more per ring step. (NVLS on Hopper: the next tests.)
TEST(NcclTuning, AchievedRingsDifferFromTheTunerOnlyInsideAnAmpereNode) {
  const NcclGroup g = dgx_a100();
  const NcclAchieved ll128 = nccl_achieved(Kind::all_reduce, Algorithm::ring, Protocol::ll128, g, 1e6);
  EXPECT_NEAR(ll128.bandwidth, 132.0 / 221.0, 1e-12);
  EXPECT_NEAR(ll128.latency, 12.4 / 40.6, 1e-12);
  EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::ring, Protocol::ll, g, 1e6).bandwidth, 1.0);
  EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::ring, Protocol::ll, g, 1e6).latency, 1.0);
  // Simple: 8 ranks, all-reduce: the tuner's 8.4 + 14 x 3.4 us, plus 14 x 6.2; all-gather: 7 steps.
  const NcclAchieved simple = nccl_achieved(Kind::all_reduce, Algorithm::ring, Protocol::simple, g, 1e6);
  EXPECT_EQ(simple.bandwidth, 1.0);
  EXPECT_NEAR(simple.latency, (8.4 + 14 * (3.4 + 6.2)) / (8.4 + 14 * 3.4), 1e-12);
  EXPECT_NEAR(nccl_achieved(Kind::all_gather, Algorithm::ring, Protocol::simple, g, 1e6).latency,
              (8.4 + 7 * (3.4 + 6.2)) / (8.4 + 7 * 3.4), 1e-12);
  // The fitted per-step cost moves the simulated latency by exactly steps x 6.2 us.
  const NcclCost cost = nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::simple, g);
  const double launch = nccl_launch_overhead_s(g.compute_capability);
  EXPECT_NEAR((cost.latency_s - launch) * simple.latency - (cost.latency_s - launch), 14 * 6.2e-6, 1e-12);
  EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::double_binary_tree, Protocol::simple, g, 1e6).latency, 1.0);
  NcclGroup hopper = g, two_nodes = g, pcie = g;
  hopper.compute_capability = 90;
  two_nodes.nodes = 2;
  pcie.intra_nvlink = false;
  for (const NcclGroup& other : {hopper, two_nodes, pcie}) {
    for (Protocol p : {Protocol::ll128, Protocol::simple}) {
      EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::ring, p, other, 1e6).bandwidth, 1.0);
      EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::ring, p, other, 1e6).latency, 1.0);
    }
  }
}

// A send/recv pair waits for two ranks only: less than a collective's launch overhead, per
// generation (fit on vidur's single-node rows); across nodes one network step more (NCCL's
// tuner: 14 us for a Simple step over the network).
TEST(NcclTuning, PointToPointOverheadIsBelowTheCollectiveLaunch) {
  for (int cc : {70, 80, 90}) {
    EXPECT_GT(nccl_p2p_overhead_s(cc, false), 0.0);
    EXPECT_LT(nccl_p2p_overhead_s(cc, false), nccl_launch_overhead_s(cc));
    EXPECT_NEAR(nccl_p2p_overhead_s(cc, true) - nccl_p2p_overhead_s(cc, false), 14e-6, 1e-12);
  }
  EXPECT_LT(nccl_p2p_overhead_s(90, false), nccl_p2p_overhead_s(80, false));
}

// NCCL's NVLS chunk (src/enqueue.cc): 128 KiB, down to 64 KiB below 64 chunks per pipeline
// (16 channels x one head per GPU), 32 KiB below 8 of those, 16 KiB below 2.
TEST(NcclTuning, NvlsChunkShrinksWithTheCollectiveAsNcclCutsIt) {
  const double mib = 1024.0 * 1024.0;
  // 8 GPUs: 128 pipelines; 64 x 128 x 128 KiB = 1 GiB, 8 x 128 x 64 KiB = 64 MiB, 2 x 128 x 32 KiB = 8 MiB.
  EXPECT_EQ(nvls_chunk_bytes(1024 * mib, 8), 131072);
  EXPECT_EQ(nvls_chunk_bytes(1024 * mib - 1, 8), 65536);
  EXPECT_EQ(nvls_chunk_bytes(64 * mib, 8), 65536);
  EXPECT_EQ(nvls_chunk_bytes(64 * mib - 1, 8), 32768);
  EXPECT_EQ(nvls_chunk_bytes(8 * mib, 8), 32768);
  EXPECT_EQ(nvls_chunk_bytes(8 * mib - 1, 8), 16384);
  EXPECT_EQ(nvls_chunk_bytes(1, 8), 16384);
  // 4 GPUs: half the pipelines, so every threshold at half the size.
  EXPECT_EQ(nvls_chunk_bytes(32 * mib, 4), 65536);
  EXPECT_EQ(nvls_chunk_bytes(32 * mib - 1, 4), 32768);
  // The efficiency is relative to the 128 KiB chunk and falls with the chunk.
  EXPECT_DOUBLE_EQ(nvls_chunk_efficiency(2048 * mib, 8), 1.0);
  const double e64 = nvls_chunk_efficiency(64 * mib, 8), e32 = nvls_chunk_efficiency(32 * mib, 8),
               e16 = nvls_chunk_efficiency(4 * mib, 8);
  EXPECT_LT(e64, 1.0);
  EXPECT_LT(e32, e64);
  EXPECT_LT(e16, e32);
  EXPECT_GT(e16, 0.0);
  // Same chunk, same efficiency: 63 MiB on 8 GPUs and 31 MiB on 4 both cut 32 KiB chunks.
  EXPECT_DOUBLE_EQ(nvls_chunk_efficiency(63 * mib, 8), nvls_chunk_efficiency(31 * mib, 4));
}

// NVLS inside a Hopper node runs at its chunk's efficiency and starts sooner than its tuner row;
// across nodes (NVLS tree, unmeasured) and on other algorithms nothing changes.
TEST(NcclTuning, AchievedNvlsInsideAHopperNodeDependsOnTheSize) {
  NcclGroup g = dgx_a100();
  g.compute_capability = 90;
  g.nvls = true;
  const double mib = 1024.0 * 1024.0;
  const NcclAchieved small = nccl_achieved(Kind::all_reduce, Algorithm::nvls, Protocol::simple, g, 4 * mib);
  const NcclAchieved large = nccl_achieved(Kind::all_reduce, Algorithm::nvls, Protocol::simple, g, 2048 * mib);
  EXPECT_DOUBLE_EQ(small.bandwidth, nvls_chunk_efficiency(4 * mib, g.ranks));
  EXPECT_LT(small.bandwidth, large.bandwidth);
  EXPECT_DOUBLE_EQ(large.bandwidth, 1.0);
  EXPECT_GT(small.latency, 0.0);
  EXPECT_LT(small.latency, 1.0);
  EXPECT_EQ(small.latency, large.latency);
  NcclGroup two_nodes = g;
  two_nodes.nodes = 2;
  EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::nvls, Protocol::simple, two_nodes, 4 * mib).bandwidth, 1.0);
  EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::nvls, Protocol::simple, two_nodes, 4 * mib).latency, 1.0);
  EXPECT_EQ(nccl_achieved(Kind::all_reduce, Algorithm::ring, Protocol::simple, g, 4 * mib).bandwidth, 1.0);
}

TEST(NcclTuning, AlgorithmBandwidthConvertsBusBandwidthAsNcclDoes) {
  const NcclGroup g = dgx_a100();
  // Ring all-reduce: algbw = busbw x p / (2 (p - 1)).
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::simple, g).algbw, 240e9 * 8 / 14, 1e3);
  // Tree: half of its bus bandwidth.
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::double_binary_tree, Protocol::simple, g).algbw, 240e9 * 0.92 / 2, 1e3);
}

TEST(NcclTuning, LatenciesAreBasePlusStepsTimesTheHopLatency) {
  const NcclGroup g = dgx_a100();
  const double launch = nccl_launch_overhead_s(80);
  // Ring Simple on NVLink: 8.4 us + 2 (p - 1) x 3.4 us; LL: 6.6 + 14 x 0.6; LL128: 14 + 14 x 1.9.
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::simple, g).latency_s, (8.4 + 14 * 3.4) * 1e-6 + launch, 1e-12);
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll, g).latency_s, (6.6 + 14 * 0.6) * 1e-6 + launch, 1e-12);
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll128, g).latency_s, (14 + 14 * 1.9) * 1e-6 + launch, 1e-12);
  // Through PCIe the hops cost more (Simple 5.7 us).
  NcclGroup pci = g;
  pci.intra_nvlink = false;
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::simple, pci).latency_s, (8.4 + 14 * 5.7) * 1e-6 + launch, 1e-12);
  // Across 4 nodes the ring's 2N network steps cost the network's latency (Simple 14 us) and
  // the others at least 3 us of network post overhead.
  NcclGroup net = g;
  net.ranks = 32;
  net.nodes = 4;
  net.inter_bw = 200e9;
  EXPECT_NEAR(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::simple, net).latency_s,
              (8.4 + (62 - 8) * 3.4 + 8 * 14.0) * 1e-6 + launch, 1e-12);
}

TEST(NcclTuning, SmallMessagesTakeLlAndLargeOnesSimple) {
  const NcclGroup g = dgx_a100();
  const NcclChoice small = nccl_choose(Kind::all_reduce, 1024, g, Algorithm::automatic, Protocol::automatic);
  EXPECT_EQ(small.protocol, Protocol::ll);
  EXPECT_EQ(small.algorithm, Algorithm::ring);
  // Latency-bound: the predicted time is about the LL latency.
  EXPECT_LT(small.predicted_s, small.cost.latency_s * 1.01);
  const NcclChoice large = nccl_choose(Kind::all_reduce, 1 << 30, g, Algorithm::automatic, Protocol::automatic);
  EXPECT_EQ(large.protocol, Protocol::simple);
  EXPECT_EQ(large.algorithm, Algorithm::ring);
  // In between, LL128 (NVLink, Ampere).
  EXPECT_EQ(nccl_choose(Kind::all_reduce, 4 << 20, g, Algorithm::automatic, Protocol::automatic).protocol, Protocol::ll128);
}

TEST(NcclTuning, Ll128NeedsNvlinkAndAKnownArchitecture) {
  NcclGroup g = dgx_a100();
  g.intra_nvlink = false;
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll128, g).available);
  EXPECT_THROW(nccl_choose(Kind::all_reduce, 4 << 20, g, Algorithm::ring, Protocol::ll128), std::invalid_argument);
  g = dgx_a100();
  g.compute_capability = 60;
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::ring, Protocol::ll128, g).available);
}

TEST(NcclTuning, NvlsOnlyWhereTheSwitchReducesAndLargeMessagesPreferIt) {
  NcclGroup g = dgx_a100();
  g.compute_capability = 90;
  g.intra_bw = 370.8e9;
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::nvls, Protocol::simple, g).available);
  EXPECT_NE(nccl_choose(Kind::all_reduce, 1 << 30, g, Algorithm::automatic, Protocol::automatic).algorithm, Algorithm::nvls);
  try {
    nccl_choose(Kind::all_reduce, 1 << 30, g, Algorithm::nvls, Protocol::automatic);
    FAIL() << "nvls without NVLink SHARP must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NVLink SHARP"), std::string::npos) << e.what();
  }
  g.nvls = true;
  // NVLS: algbw 5/6 of the raw bandwidth, Simple only, 23 us of latency.
  const NcclCost nvls = nccl_cost(Kind::all_reduce, Algorithm::nvls, Protocol::simple, g);
  EXPECT_TRUE(nvls.available);
  EXPECT_NEAR(nvls.algbw, 370.8e9 * 5 / 6, 1e3);
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::nvls, Protocol::ll, g).available);
  EXPECT_EQ(nccl_choose(Kind::all_reduce, 1 << 30, g, Algorithm::automatic, Protocol::automatic).algorithm, Algorithm::nvls);
  // Small messages stay on the lower-latency ring LL.
  EXPECT_EQ(nccl_choose(Kind::all_reduce, 1024, g, Algorithm::automatic, Protocol::automatic).algorithm, Algorithm::ring);
}

TEST(NcclTuning, CollnetNeedsSeveralNodesAndSharp) {
  NcclGroup g = dgx_a100();
  g.ranks = 16;
  g.nodes = 2;
  g.inter_bw = 192e9;
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::collnet, Protocol::simple, g).available);
  g.collnet = true;
  EXPECT_TRUE(nccl_cost(Kind::all_reduce, Algorithm::collnet, Protocol::simple, g).available);
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::collnet, Protocol::ll, g).available);
  g.nodes = 1;
  g.ranks = 8;
  EXPECT_FALSE(nccl_cost(Kind::all_reduce, Algorithm::collnet, Protocol::simple, g).available);
}

TEST(NcclTuning, OnlyAllReduceHasAlgorithmsBesidesTheRing) {
  EXPECT_EQ(nccl_algorithms(Kind::all_gather), std::vector<Algorithm>{Algorithm::ring});
  EXPECT_TRUE(nccl_algorithms(Kind::all_to_all).empty());
  EXPECT_THROW(nccl_choose(Kind::all_gather, 1e6, dgx_a100(), Algorithm::double_binary_tree, Protocol::automatic),
               std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::network
