// Ring all-reduce (Patarasuk and Yuan, 2009; the algorithm of NCCL's ring and Horovod):
// p ranks in a ring, the message cut into p chunks; p-1 reduce-scatter steps then p-1
// all-gather steps. In each step every rank sends one chunk (bytes/p) to its successor over
// its own hop, all hops at once, so a step lasts as long as its slowest hop.
//
// RingAllReduce replays those 2(p-1) steps as events on the engine. The closed form below is
// the textbook alpha-beta cost of the same algorithm on identical hops, used to cross-check.
// Contention between rings and other traffic is not modelled here; the flow-level network
// (issue 3) replaces the per-hop times with shared-bandwidth flows.
#pragma once
#include <functional>
#include <vector>

#include "network/link.hpp"
#include "sim/engine.hpp"

namespace dlsim::network {

// 2 (p - 1) (alpha + n / (p beta)): n bytes per rank, p ranks, hop latency alpha, bandwidth beta.
double ring_allreduce_closed_form(double bytes, int ranks, const Link& hop);

// The hops of a ring over `nodes` nodes of `per_node` accelerators, visiting the accelerators
// of a node in turn: hops inside a node use `intra`, the hop leaving each node uses `inter`
// (the node's NIC). With one node the ring closes inside it.
std::vector<Link> ring_over_nodes(int nodes, int per_node, const Link& intra, const Link& inter);

class RingAllReduce {
 public:
  // hops[i] connects rank i to rank (i + 1) % p; at least one hop (p = hops.size()).
  RingAllReduce(sim::Engine& engine, std::vector<Link> hops);

  int ranks() const { return static_cast<int>(hops_.size()); }
  // Duration of one step moving `chunk_bytes` on every hop: the slowest hop's transfer time.
  double step_time_s(double chunk_bytes) const;
  // Starts an all-reduce of `bytes` per rank at now(); calls on_done when the last step ends.
  // One operation at a time: starting while busy throws std::logic_error.
  void start(double bytes, std::function<void()> on_done);
  bool busy() const { return steps_left_ > 0; }

 private:
  void next_step();
  void finish();

  sim::Engine& engine_;
  std::vector<Link> hops_;
  sim::Time step_duration_;
  int steps_left_ = 0;
  std::function<void()> on_done_;
};

}  // namespace dlsim::network
