// The incremental max-min solver against the full one (the reference) on random cases: random
// topologies from the builders, random flow arrivals (some at the same instant, some on the same
// path, some of zero bytes, some rate-capped by the flow or by TCP links) and the completions
// they lead to. After every arrival instant each transferring flow's rate must equal the rate a
// full solve from scratch gives the same flows, and every flow must complete when it does under
// the full solver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::network {
namespace {

constexpr double kRateTolerance = 1e-9;  // relative
// Completion instants must fall on the same nanosecond of the engine (the two solvers compute
// rates and remaining bytes in different orders, so they could round apart; they do not here).
constexpr double kTimeTolerance = 0.5e-9;

class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : x_(seed) {}
  std::uint64_t next() { return (x_ = x_ * 6364136223846793005ull + 1442695040888963407ull) >> 33; }
  double uniform() { return static_cast<double>(next() % (1u << 30)) / double(1u << 30); }  // [0, 1)

 private:
  std::uint64_t x_;
};

enum class Shape { fat_tree, fat_tree_tcp, leaf_spine, torus };

Topology random_topology(Shape shape) {
  NodeSpec node;
  FabricSpec fabric;
  switch (shape) {
    case Shape::fat_tree:
    case Shape::fat_tree_tcp:
      node.accelerators = 1;
      fabric.kind = FabricKind::fat_tree;
      fabric.nodes = 16;
      fabric.fat_tree_k = 4;
      if (shape == Shape::fat_tree_tcp) node.transport = Transport::tcp;  // a per-flow cap on NIC links
      break;
    case Shape::leaf_spine:
      node.accelerators = 2;
      fabric.kind = FabricKind::leaf_spine;
      fabric.nodes = 8;
      fabric.nodes_per_leaf = 2;
      fabric.oversubscription = 3;
      break;
    case Shape::torus:
      node.kind = NodeKind::tpu_board;
      node.accelerators = 4;
      fabric.kind = FabricKind::torus;
      fabric.nodes = 4;
      fabric.dims = {4, 4};
      break;
  }
  return build_cluster(node, fabric);
}

struct Arrival {
  double at;  // seconds
  FlowSpec spec;
};

// A random script of arrivals: bursts at one instant, repeated paths, zero-byte flows and caps.
std::vector<Arrival> random_arrivals(const Topology& topology, Lcg& rng, int count) {
  Routing routing(topology);
  const auto& hosts = topology.accelerators();
  std::vector<Arrival> arrivals;
  double at = 0;
  for (int i = 0; i < count; ++i) {
    if (rng.next() % 3 != 0) at += rng.uniform() * 4e-5;  // else simultaneous with the previous one
    if (!arrivals.empty() && rng.next() % 8 == 0) {
      arrivals.push_back({at, arrivals.back().spec});  // same path and size as the previous one
      continue;
    }
    const auto a = hosts[rng.next() % hosts.size()];
    auto b = hosts[rng.next() % hosts.size()];
    if (b == a) b = hosts[(rng.next() % (hosts.size() - 1) + 1 + (a - hosts[0])) % hosts.size()];
    FlowSpec spec{routing.path(a, b, rng.next()), rng.next() % 16 == 0 ? 0.0 : 1e5 + rng.uniform() * 2e7};
    if (rng.next() % 5 == 0) spec.rate_cap = 1e8 + rng.uniform() * 5e9;
    arrivals.push_back({at, std::move(spec)});
  }
  return arrivals;
}

// The rates a full solve from scratch gives these flows (huge sizes: none completes meanwhile).
std::vector<double> reference_rates(const Topology& topology, const std::vector<const FlowSpec*>& specs) {
  sim::Engine engine;
  FlowNetwork network(engine, topology, MaxMinSolver::full);
  std::vector<FlowId> ids;
  for (const FlowSpec* spec : specs) {
    FlowSpec copy = *spec;
    copy.bytes = 1e15;
    copy.extra_latency_s = 0;
    ids.push_back(network.start(std::move(copy), [] {}));
  }
  engine.run_until(sim::Time::ms(1));  // past every path's latency
  std::vector<double> rates;
  for (FlowId id : ids) rates.push_back(network.rate(id));
  return rates;
}

struct Outcome {
  std::vector<double> done;  // completion instant per arrival
  std::uint64_t refilled = 0;
  std::uint64_t solves = 0;
  int rate_checks = 0;       // arrival instants checked
  std::size_t rates_checked = 0;
  std::size_t most_transferring = 0;
};

// Plays the script under one solver. With `check_rates`, after each arrival instant compares
// every transferring flow's rate with the full solve from scratch.
Outcome play(const Topology& topology, const std::vector<Arrival>& arrivals, MaxMinSolver solver, bool check_rates) {
  sim::Engine engine;
  FlowNetwork network(engine, topology, solver);
  Outcome out;
  out.done.assign(arrivals.size(), -1);
  std::vector<FlowId> ids(arrivals.size());
  struct Context {
    sim::Engine* engine;
    std::vector<double>* done;
  } context{&engine, &out.done};
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    engine.run_until(sim::Time::from_seconds(arrivals[i].at));  // every event up to and at this instant
    if (check_rates && (i == 0 || arrivals[i].at != arrivals[i - 1].at)) {
      std::vector<const FlowSpec*> specs;
      std::vector<double> rates;
      for (std::size_t j = 0; j < i; ++j) {
        if (out.done[j] >= 0 || network.rate(ids[j]) == 0) continue;  // done, or not transferring
        specs.push_back(&arrivals[j].spec);
        rates.push_back(network.rate(ids[j]));
      }
      const std::vector<double> expected = reference_rates(topology, specs);
      for (std::size_t k = 0; k < rates.size(); ++k) {
        EXPECT_NEAR(rates[k], expected[k], kRateTolerance * expected[k]) << "at arrival " << i;
      }
      ++out.rate_checks;
      out.rates_checked += rates.size();
      out.most_transferring = std::max(out.most_transferring, rates.size());
    }
    ids[i] = network.start(arrivals[i].spec, [ctx = &context, i] { (*ctx->done)[i] = ctx->engine->now().seconds(); });
  }
  engine.run();
  EXPECT_EQ(network.active_flows(), 0u);
  out.refilled = network.flows_refilled();
  out.solves = network.solves();
  return out;
}

void expect_same_as_full(Shape shape, std::uint64_t seed, int flows) {
  const Topology topology = random_topology(shape);
  Lcg rng(seed);
  const std::vector<Arrival> arrivals = random_arrivals(topology, rng, flows);
  const Outcome full = play(topology, arrivals, MaxMinSolver::full, false);
  const Outcome incremental = play(topology, arrivals, MaxMinSolver::incremental, true);
  EXPECT_GT(incremental.rate_checks, flows / 2);
  EXPECT_GT(incremental.most_transferring, 20u);  // enough flows at once for rates to interact
  EXPECT_GT(incremental.rates_checked, 1000u);
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    ASSERT_GE(full.done[i], 0) << "flow " << i;
    EXPECT_NEAR(incremental.done[i], full.done[i], kTimeTolerance) << "flow " << i << ", seed " << seed;
  }
}

TEST(IncrementalMaxMin, MatchesFullSolveOnFatTrees) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) expect_same_as_full(Shape::fat_tree, seed, 150);
}

TEST(IncrementalMaxMin, MatchesFullSolveWithTcpFlowCaps) {
  for (std::uint64_t seed = 11; seed <= 14; ++seed) expect_same_as_full(Shape::fat_tree_tcp, seed, 150);
}

TEST(IncrementalMaxMin, MatchesFullSolveOnOversubscribedLeafSpine) {
  for (std::uint64_t seed = 21; seed <= 26; ++seed) expect_same_as_full(Shape::leaf_spine, seed, 150);
}

TEST(IncrementalMaxMin, MatchesFullSolveOnTorus) {
  for (std::uint64_t seed = 31; seed <= 36; ++seed) expect_same_as_full(Shape::torus, seed, 150);
}

// A hold model, as in bench/flow_solver.cpp: each completion starts a new flow at its instant
// (so arrivals and completions meet in one solve). Returns the instants of the completions.
std::vector<double> hold_completions(const Topology& topology, MaxMinSolver solver, int concurrent, int replacements) {
  sim::Engine engine;
  FlowNetwork network(engine, topology, solver);
  Routing routing(topology);
  struct Hold {
    sim::Engine* engine;
    FlowNetwork* network;
    Routing* routing;
    const std::vector<VertexId>* hosts;
    Lcg rng{99};
    int left;
    std::vector<double> done;
    void start_one() {
      const auto a = (*hosts)[rng.next() % hosts->size()];
      auto b = (*hosts)[rng.next() % hosts->size()];
      if (b == a) b = (*hosts)[(rng.next() % (hosts->size() - 1) + 1 + (a - (*hosts)[0])) % hosts->size()];
      network->start({routing->path(a, b, rng.next()), 1e5 + rng.uniform() * 2e7}, [this] {
        done.push_back(engine->now().seconds());
        if (--left >= 0) start_one();
      });
    }
  } hold{&engine, &network, &routing, &topology.accelerators(), Lcg{99}, replacements, {}};
  for (int i = 0; i < concurrent; ++i) hold.start_one();
  engine.run();
  EXPECT_EQ(network.active_flows(), 0u);
  return hold.done;
}

TEST(IncrementalMaxMin, HoldModelMatchesFullSolve) {
  const Topology topology = random_topology(Shape::fat_tree);
  const auto full = hold_completions(topology, MaxMinSolver::full, 100, 400);
  const auto incremental = hold_completions(topology, MaxMinSolver::incremental, 100, 400);
  ASSERT_EQ(full.size(), 500u);  // 100 flows, then 400 started by completions
  ASSERT_EQ(incremental.size(), full.size());
  for (std::size_t i = 0; i < full.size(); ++i) EXPECT_NEAR(incremental[i], full[i], kTimeTolerance) << "completion " << i;
}

TEST(IncrementalMaxMin, ReferenceRatesCheckThePlayedRates) {
  // The check itself: the full solver, played the same way, also matches its from-scratch rates,
  // and a wrong rate would be caught (a flow alone on its path gets the path's bottleneck).
  const Topology topology = random_topology(Shape::leaf_spine);
  Lcg rng(41);
  const auto arrivals = random_arrivals(topology, rng, 60);
  EXPECT_GT(play(topology, arrivals, MaxMinSolver::full, true).rate_checks, 20);
  const std::vector<double> alone = reference_rates(topology, {&arrivals[0].spec});
  ASSERT_EQ(alone.size(), 1u);
  double bottleneck = arrivals[0].spec.rate_cap;
  for (LinkId l : arrivals[0].spec.path) bottleneck = std::min(bottleneck, topology.link(l).achievable);
  EXPECT_DOUBLE_EQ(alone[0], bottleneck);
}

TEST(IncrementalMaxMin, RefillsFewerFlowsThanTheComponent) {
  // Many flows between random hosts of a fat-tree share core links, so every change's connected
  // component is most of the network; the flows whose bottleneck changes are far fewer.
  const Topology topology = random_topology(Shape::fat_tree);
  Lcg rng(51);
  const auto arrivals = random_arrivals(topology, rng, 400);
  const Outcome full = play(topology, arrivals, MaxMinSolver::full, false);
  const Outcome incremental = play(topology, arrivals, MaxMinSolver::incremental, false);
  EXPECT_EQ(incremental.solves, full.solves);
  EXPECT_LT(incremental.refilled * 2, full.refilled);
}

}  // namespace
}  // namespace dlsim::network
