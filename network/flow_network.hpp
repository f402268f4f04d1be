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
// Shape (after SimGrid's network models): when flows start or finish at time t, only the links
// and flows connected to them through shared links are marked dirty; one solve event at t
// (however many changes happened at t) advances the dirty flows' progress to t, recomputes
// their rates, and reschedules their completion events. Completion callbacks run on the engine.
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

class FlowNetwork {
 public:
  FlowNetwork(sim::Engine& engine, const Topology& topology);

  // Starts a flow at engine.now(); `on_done` runs on the engine when its last byte arrives.
  // A FlowId names an active flow only: once the flow completes, its id is reused.
  FlowId start(FlowSpec spec, std::function<void()> on_done);

  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;
  ~FlowNetwork();

  std::size_t active_flows() const;          // started and not yet completed
  double rate(FlowId id) const;              // bytes/s now (0 while in its latency phase or done)
  double link_load(LinkId link) const;       // sum of the rates of the flows crossing it
  double remaining_bytes(FlowId id) const;   // as of the last solve
  std::uint64_t solves() const;              // rate computations so far (one per instant with changes)
  std::uint64_t flows_started() const;

 private:
  struct Impl;  // defined in flow_network.cpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlsim::network
