#include "network/ring_allreduce.hpp"

#include <algorithm>
#include <stdexcept>

namespace dlsim::network {

double ring_allreduce_closed_form(double bytes, int ranks, const Link& hop) {
  if (ranks <= 1) return 0.0;
  const double p = ranks;
  return 2.0 * (p - 1.0) * (hop.latency_s + bytes / (p * hop.bandwidth));
}

std::vector<Link> ring_over_nodes(int nodes, int per_node, const Link& intra, const Link& inter) {
  if (nodes < 1 || per_node < 1) throw std::invalid_argument("ring_over_nodes: empty ring");
  std::vector<Link> hops;
  hops.reserve(static_cast<std::size_t>(nodes) * per_node);
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < per_node; ++g) {
      const bool leaves_node = (g == per_node - 1) && nodes > 1;
      hops.push_back(leaves_node ? inter : intra);
    }
  }
  return hops;
}

RingAllReduce::RingAllReduce(sim::Engine& engine, std::vector<Link> hops)
    : engine_(engine), hops_(std::move(hops)) {
  if (hops_.empty()) throw std::invalid_argument("RingAllReduce: a ring needs at least one rank");
  for (const Link& l : hops_) {
    if (!(l.bandwidth > 0) || !(l.latency_s >= 0)) {
      throw std::invalid_argument("RingAllReduce: hop bandwidth must be > 0 and latency >= 0");
    }
  }
}

double RingAllReduce::step_time_s(double chunk_bytes) const {
  double slowest = 0.0;
  for (const Link& l : hops_) slowest = std::max(slowest, l.transfer_time(chunk_bytes));
  return slowest;
}

void RingAllReduce::start(double bytes, std::function<void()> on_done) {
  if (busy()) throw std::logic_error("RingAllReduce: an all-reduce is already in progress");
  on_done_ = std::move(on_done);
  const int p = ranks();
  if (p == 1 || bytes <= 0) {
    engine_.schedule_in(sim::Time::zero(), [this] { finish(); });
    return;
  }
  // Every step moves the same chunk over the same hops, so all steps last the same.
  step_duration_ = sim::Time::from_seconds(step_time_s(bytes / p));
  steps_left_ = 2 * (p - 1);
  next_step();
}

void RingAllReduce::next_step() {
  engine_.schedule_in(step_duration_, [this] {
    if (--steps_left_ > 0) {
      next_step();
    } else {
      finish();
    }
  });
}

void RingAllReduce::finish() {
  // Moved out first: the callback may start the next all-reduce, which sets on_done_.
  auto done = std::move(on_done_);
  done();
}

}  // namespace dlsim::network
