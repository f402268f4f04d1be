#include <gtest/gtest.h>

#include <cmath>

#include "network/ring_allreduce.hpp"
#include "sim/engine.hpp"

namespace dlsim::network {
namespace {

// Runs one all-reduce on a fresh engine and returns its duration in seconds.
double replay(const std::vector<Link>& hops, double bytes) {
  sim::Engine engine;
  RingAllReduce ring(engine, hops);
  double finished = -1;
  ring.start(bytes, [&] { finished = engine.now().seconds(); });
  engine.run();
  return finished;
}

TEST(RingAllReduce, MatchesClosedFormOnIdenticalHops) {
  const Link hop{12.5e9, 5e-6};  // 100 Gbps, 5 us
  for (int p : {2, 3, 8, 64, 256}) {
    for (double bytes : {1e3, 1e6, 1e8, 1e9}) {
      const double expected = ring_allreduce_closed_form(bytes, p, hop);
      const double simulated = replay(std::vector<Link>(p, hop), bytes);
      // Each of the 2(p-1) steps is rounded to the nanosecond once: at most 0.5 ns each.
      EXPECT_NEAR(simulated, expected, 2.0 * (p - 1) * 0.5e-9 + 1e-15) << "p=" << p << " bytes=" << bytes;
    }
  }
}

TEST(RingAllReduce, ClosedFormIsTwoTimesPMinusOneSteps) {
  const Link hop{1e9, 1e-5};
  // 4 ranks, 4 MB: 6 steps of (10 us + 1 MB / 1 GB/s = 1 ms).
  EXPECT_DOUBLE_EQ(ring_allreduce_closed_form(4e6, 4, hop), 6 * (1e-5 + 1e-3));
  EXPECT_EQ(ring_allreduce_closed_form(4e6, 1, hop), 0.0);
}

TEST(RingAllReduce, SlowestHopSetsEveryStep) {
  // 2 nodes x 4 GPUs: NVLink hops inside nodes, one NIC hop leaving each node.
  const Link nvlink{150e9, 2e-6};
  const Link nic{3.125e9, 25e-6};
  const auto hops = ring_over_nodes(2, 4, nvlink, nic);
  ASSERT_EQ(hops.size(), 8u);
  int nic_hops = 0;
  for (const Link& l : hops) nic_hops += l.bandwidth == nic.bandwidth;
  EXPECT_EQ(nic_hops, 2);
  const double bytes = 100e6;
  const double chunk = bytes / 8;
  const double expected = 2 * 7 * (nic.latency_s + chunk / nic.bandwidth);
  EXPECT_NEAR(replay(hops, bytes), expected, 14 * 0.5e-9);
}

TEST(RingAllReduce, SingleNodeRingStaysInsideTheNode) {
  const Link nvlink{150e9, 2e-6};
  const Link nic{3.125e9, 25e-6};
  for (const Link& l : ring_over_nodes(1, 8, nvlink, nic)) EXPECT_EQ(l.bandwidth, nvlink.bandwidth);
}

TEST(RingAllReduce, OneRankFinishesAtOnce) {
  EXPECT_EQ(replay({Link{1e9, 1e-6}}, 1e9), 0.0);
}

TEST(RingAllReduce, RejectsBadHopsAndOverlappingStarts) {
  sim::Engine engine;
  EXPECT_THROW(RingAllReduce(engine, {}), std::invalid_argument);
  EXPECT_THROW(RingAllReduce(engine, {Link{0, 0}}), std::invalid_argument);
  RingAllReduce ring(engine, std::vector<Link>(4, Link{1e9, 0}));
  ring.start(1e6, [] {});
  EXPECT_THROW(ring.start(1e6, [] {}), std::logic_error);
}

TEST(RingAllReduce, BackToBackOperationsFromTheCallback) {
  sim::Engine engine;
  const Link hop{1e9, 1e-6};
  RingAllReduce ring(engine, std::vector<Link>(4, hop));
  int done = 0;
  std::function<void()> again = [&] {
    if (++done < 3) ring.start(4e6, again);
  };
  ring.start(4e6, again);
  engine.run();
  EXPECT_EQ(done, 3);
  EXPECT_NEAR(engine.now().seconds(), 3 * ring_allreduce_closed_form(4e6, 4, hop), 3 * 6 * 0.5e-9);
}

}  // namespace
}  // namespace dlsim::network
