// FlowNetwork: fluid, flow-level bandwidth sharing on a Topology, driven by the event engine.
//
// A flow moves `bytes` along a path of directed links. After its path latency has elapsed it
// transfers at a rate set by max-min fairness over all active flows (progressive filling:
// repeatedly find the link whose remaining capacity split among its unfixed flows is smallest,
// give those flows that share, remove them; Bertsekas and Gallager, "Data Networks", 6.5.2).
// Links offer their achievable bandwidth (topology.hpp), not their line rate. A flow may also
// carry its own rate cap, and is held to the per-flow cap of every link on its path (a TCP
// socket stream's CPU-bound rate).
//
// Shape (after SimGrid's network models): one solve event at t (however many flows started or
// finished at t) recomputes the rates that can have changed and reschedules the completion
// events of the flows whose rate moved. Completion callbacks run on the engine.
//
// The solve is incremental (a bottleneck-ordered update): a max-min allocation is the feasible
// one in which every flow has a bottleneck, its cap or a saturated link where no flow is faster
// (Bertsekas and Gallager). A solve starts from the arriving flows and the links whose flow sets
// changed, and runs progressive filling over a set of flows that grows as the filling rises:
// every other flow is held at its rate, and joins the set (is refilled) only when it would lose
// its bottleneck, either because a link is about to fix flows of the set at a share below its
// rate, or because, once the filling reaches its rate, its bottleneck link is no longer
// saturated. A flow joins at a level not above its rate, so what was fixed below that level
// stands, and each solve refills about the flows whose rates change (a few hundred of 10,000 on
// a fat-tree, bench/flow_solver.cpp), not the whole connected component. MaxMinSolver::full
// keeps the reference: progressive filling over the whole component of the changed links. Both
// give the same rates up to rounding (the tests compare them within 1e-9 on random cases).
//
// Units: bytes, bytes/s, seconds; sim::Time for instants. Invariants: the sum of rates on a
// link never exceeds its bandwidth (up to rounding), every active flow with a non-empty path
// has a positive rate, a flow's completion time is exact to the nanosecond rounding of the
// engine.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "network/routing.hpp"
#include "network/topology.hpp"
#include "sim/engine.hpp"

namespace dlsim::network {

using FlowId = std::uint32_t;

struct FlowSpec {
  Path path;                        // may be empty (source == destination): latency only
  double bytes = 0;                 // >= 0
  double extra_latency_s = 0;       // added to the path latency (software overheads)
  double rate_cap = std::numeric_limits<double>::infinity();  // bytes/s, > 0
};

// How a change recomputes rates: `incremental` refills only the flows that lose their bottleneck;
// `full` refills the whole connected component of the change (the reference the tests compare
// against). Both give the max-min allocation, equal up to rounding.
enum class MaxMinSolver { incremental, full };

class FlowNetwork {
 public:
  FlowNetwork(sim::Engine& engine, const Topology& topology, MaxMinSolver solver = MaxMinSolver::incremental);

  // Starts a flow at engine.now(); `on_done` runs on the engine when its last byte arrives.
  // A FlowId names an active flow only: once the flow completes, its id is reused.
  FlowId start(FlowSpec spec, std::function<void()> on_done);

  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;
  ~FlowNetwork();

  std::size_t active_flows() const;          // started and not yet completed
  double rate(FlowId id) const;              // bytes/s now (0 while in its latency phase or done)
  double link_load(LinkId link) const;       // sum of the rates of the flows crossing it
  double remaining_bytes(FlowId id) const;   // as of the last solve that recomputed its rate
  std::uint64_t solves() const;              // rate computations so far (one per instant with changes)
  std::uint64_t flows_started() const;
  std::uint64_t flows_refilled() const;      // flows whose rates the solves recomputed, summed over solves

 private:
  struct Impl;  // defined in flow_network.cpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlsim::network
