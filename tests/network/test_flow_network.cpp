// FlowNetwork against textbook max-min cases, with completion times worked out by hand.
// Times are exact up to the engine's nanosecond rounding: tolerances are a few ns.
#include <gtest/gtest.h>

#include <map>

#include "network/flow_network.hpp"

namespace dlsim::network {
namespace {

constexpr double GB = 1e9;
constexpr double kNs = 1e-9;

// A chain of switches s0 - s1 - ... - sn with duplex links of the given bandwidths, latency 0.
struct Chain {
  Topology topology;
  std::vector<VertexId> v;
  std::vector<LinkId> forward;  // forward[i]: s_i -> s_{i+1}
  explicit Chain(const std::vector<double>& bandwidths, double latency = 0) {
    v.push_back(topology.add_vertex({VertexKind::switch_, "s0"}));
    for (std::size_t i = 0; i < bandwidths.size(); ++i) {
      v.push_back(topology.add_vertex({VertexKind::switch_, "s" + std::to_string(i + 1)}));
      forward.push_back(topology.add_duplex_link(v[i], v[i + 1], bandwidths[i], latency, "fabric"));
    }
  }
  Path span(std::size_t from, std::size_t to) const {  // forward links from s_from to s_to
    return Path(forward.begin() + static_cast<long>(from), forward.begin() + static_cast<long>(to));
  }
  static LinkId reverse(LinkId l) { return l + 1; }
};

// Starts flows (path, bytes, start time) under one solver and returns each flow's completion time.
std::vector<double> completion_times_with(MaxMinSolver solver, const Topology& t,
                                          const std::vector<std::tuple<Path, double, double>>& flows,
                                          const std::vector<double>& caps) {
  sim::Engine engine;
  FlowNetwork network(engine, t, solver);
  std::vector<double> done(flows.size(), -1);
  std::vector<FlowSpec> specs;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto& [path, bytes, start] = flows[i];
    specs.push_back({path, bytes, 0, caps.empty() ? std::numeric_limits<double>::infinity() : caps[i]});
  }
  // Event callbacks capture pointers and indices only (sim::InlineCallback's rule).
  struct Context {
    sim::Engine* engine;
    FlowNetwork* network;
    std::vector<FlowSpec>* specs;
    std::vector<double>* done;
  } context{&engine, &network, &specs, &done};
  for (std::size_t i = 0; i < flows.size(); ++i) {
    engine.schedule_at(sim::Time::from_seconds(std::get<2>(flows[i])), [ctx = &context, i] {
      ctx->network->start((*ctx->specs)[i], [ctx, i] { (*ctx->done)[i] = ctx->engine->now().seconds(); });
    });
  }
  engine.run();
  EXPECT_EQ(network.active_flows(), 0u);
  return done;
}

// The same under the incremental solver (the default), which must agree with the full one to
// the nanosecond.
std::vector<double> completion_times(const Topology& t, const std::vector<std::tuple<Path, double, double>>& flows,
                                     std::vector<double> caps = {}) {
  const auto incremental = completion_times_with(MaxMinSolver::incremental, t, flows, caps);
  const auto full = completion_times_with(MaxMinSolver::full, t, flows, caps);
  for (std::size_t i = 0; i < flows.size(); ++i) EXPECT_NEAR(incremental[i], full[i], 0.5 * kNs) << "flow " << i;
  return incremental;
}

TEST(FlowNetwork, TwoFlowsShareALinkEqually) {
  Chain c({1 * GB});
  const auto t = completion_times(c.topology, {{c.span(0, 1), 1 * GB, 0}, {c.span(0, 1), 2 * GB, 0}});
  EXPECT_NEAR(t[0], 2.0, 2 * kNs);  // 1 GB at 0.5 GB/s
  EXPECT_NEAR(t[1], 3.0, 2 * kNs);  // then the last 1 GB alone at 1 GB/s
}

TEST(FlowNetwork, ThreeFlowsReshareAsEachFinishes) {
  Chain c({3 * GB});
  const Path p = c.span(0, 1);
  const auto t = completion_times(c.topology, {{p, 1 * GB, 0}, {p, 2 * GB, 0}, {p, 3 * GB, 0}});
  EXPECT_NEAR(t[0], 1.0, 2 * kNs);            // 1 GB/s each
  EXPECT_NEAR(t[1], 1.0 + 1.0 / 1.5, 3 * kNs);  // 1 GB left at 1.5 GB/s
  EXPECT_NEAR(t[2], 2.0, 3 * kNs);            // 6 GB through 3 GB/s
}

TEST(FlowNetwork, ParkingLot) {
  // Three unit links in series; a long flow over all three, a short flow on each link.
  Chain c({1 * GB, 1 * GB, 1 * GB});
  const auto equal = completion_times(c.topology, {{c.span(0, 3), 1 * GB, 0}, {c.span(0, 1), 1 * GB, 0},
                                                   {c.span(1, 2), 1 * GB, 0}, {c.span(2, 3), 1 * GB, 0}});
  for (double x : equal) EXPECT_NEAR(x, 2.0, 2 * kNs);  // everyone at 0.5 GB/s
  const auto shorter = completion_times(c.topology, {{c.span(0, 3), 1 * GB, 0}, {c.span(0, 1), 0.5 * GB, 0},
                                                     {c.span(1, 2), 0.5 * GB, 0}, {c.span(2, 3), 0.5 * GB, 0}});
  EXPECT_NEAR(shorter[1], 1.0, 2 * kNs);
  EXPECT_NEAR(shorter[0], 1.5, 3 * kNs);  // 0.5 GB left, then alone at 1 GB/s
}

TEST(FlowNetwork, FullDuplexDirectionsDoNotCompete) {
  Chain c({1 * GB});
  const LinkId forward = c.forward[0];
  const auto t = completion_times(c.topology, {{{forward}, 1 * GB, 0}, {{Chain::reverse(forward)}, 1 * GB, 0}});
  EXPECT_NEAR(t[0], 1.0, 2 * kNs);
  EXPECT_NEAR(t[1], 1.0, 2 * kNs);
}

TEST(FlowNetwork, MaxMinGivesLeftoverToUnconstrainedFlows) {
  // f0 crosses a 1 GB/s link then a 10 GB/s link; f1 only the 10 GB/s link: f0 = 1, f1 = 9.
  Chain c({1 * GB, 10 * GB});
  sim::Engine engine;
  FlowNetwork network(engine, c.topology);
  const FlowId f0 = network.start({c.span(0, 2), 100 * GB}, [] {});
  const FlowId f1 = network.start({c.span(1, 2), 100 * GB}, [] {});
  engine.run_until(sim::Time::ms(1));
  EXPECT_DOUBLE_EQ(network.rate(f0), 1 * GB);
  EXPECT_DOUBLE_EQ(network.rate(f1), 9 * GB);
  EXPECT_DOUBLE_EQ(network.link_load(c.forward[1]), 10 * GB);
}

TEST(FlowNetwork, RateCapsAreRespectedAndLeftoverShared) {
  Chain c({1 * GB});
  const auto t = completion_times(c.topology, {{c.span(0, 1), 0.25 * GB, 0}, {c.span(0, 1), 0.75 * GB, 0}},
                                  {0.25 * GB, std::numeric_limits<double>::infinity()});
  EXPECT_NEAR(t[0], 1.0, 2 * kNs);  // capped at 0.25 GB/s
  EXPECT_NEAR(t[1], 1.0, 2 * kNs);  // the other 0.75 GB/s
}

TEST(FlowNetwork, LatencyPrecedesTransfer) {
  Chain c({1 * GB}, 1e-3);
  const auto t = completion_times(c.topology, {{c.span(0, 1), 1e6, 0}});
  EXPECT_NEAR(t[0], 1e-3 + 1e-3, 2 * kNs);
}

TEST(FlowNetwork, LateArrivalSlowsAnEarlierFlow) {
  Chain c({1 * GB});
  const auto t = completion_times(c.topology, {{c.span(0, 1), 1 * GB, 0}, {c.span(0, 1), 1 * GB, 0.5}});
  EXPECT_NEAR(t[0], 1.5, 2 * kNs);  // 0.5 GB alone, then 0.5 GB at half rate
  EXPECT_NEAR(t[1], 2.0, 2 * kNs);
}

TEST(FlowNetwork, ZeroBytesAndEmptyPathsCostOnlyLatency) {
  Chain c({1 * GB}, 5e-6);
  const auto t = completion_times(c.topology, {{c.span(0, 1), 0, 0}, {{}, 1 * GB, 0}});
  EXPECT_NEAR(t[0], 5e-6, kNs);
  EXPECT_NEAR(t[1], 0.0, kNs);
}

TEST(FlowNetwork, ManyFlowsAtOneInstantSolveOnce) {
  Chain c({8 * GB});
  sim::Engine engine;
  FlowNetwork network(engine, c.topology);
  int done = 0;
  for (int i = 0; i < 64; ++i) network.start({c.span(0, 1), 1 * GB}, [&] { ++done; });
  engine.run();
  EXPECT_EQ(done, 64);
  EXPECT_NEAR(engine.now().seconds(), 8.0, 2 * kNs);
  EXPECT_LE(network.solves(), 2u);  // one when they start, one when they all end together
}

TEST(FlowNetwork, LinkLoadsNeverExceedCapacity) {
  // Random flows on a chain: after every solve the load of each link stays within capacity.
  Chain c({1 * GB, 2 * GB, 0.5 * GB, 4 * GB});
  sim::Engine engine;
  FlowNetwork network(engine, c.topology);
  std::uint64_t x = 12345;
  const auto next = [&x] { return (x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int i = 0; i < 200; ++i) {
    const std::size_t a = next() % 4, b = a + 1 + next() % (4 - a);
    network.start({c.span(a, b), double(1 + next() % 1000) * 1e6}, [] {});
    engine.run_until(engine.now() + sim::Time::us(static_cast<std::int64_t>(next() % 500)));
    for (LinkId l = 0; l < c.topology.link_count(); ++l) {
      EXPECT_LE(network.link_load(l), c.topology.link(l).bandwidth * (1 + 1e-9));
    }
  }
  engine.run();
  EXPECT_EQ(network.active_flows(), 0u);
}

TEST(FlowNetwork, RejectsBrokenPaths) {
  Chain c({1 * GB, 1 * GB});
  sim::Engine engine;
  FlowNetwork network(engine, c.topology);
  EXPECT_THROW(network.start({{c.forward[1], c.forward[0]}, 1}, [] {}), std::invalid_argument);
  EXPECT_THROW(network.start({{999}, 1}, [] {}), std::invalid_argument);
  EXPECT_THROW(network.start({c.span(0, 1), -1}, [] {}), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::network
