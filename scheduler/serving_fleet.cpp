// The serving fleet on the event engine (serving_fleet.hpp).
#include "scheduler/serving_fleet.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/engine.hpp"

namespace dlsim::scheduler {
namespace {

class Fleet {
 public:
  Fleet(const std::vector<ServingRequest>& requests, int replicas, const models::BatchingPolicy& policy,
        const IterationTime& iteration_time, bool keep_samples)
      : requests_(requests), iteration_time_(iteration_time), keep_samples_(keep_samples) {
    for (int r = 0; r < replicas; ++r) replicas_.emplace_back(policy);
    result_.requests.assign(requests.size(), ServedRequest{});
    for (ServedRequest& s : result_.requests) {
      s.first_token_s = std::numeric_limits<double>::quiet_NaN();
      s.finish_s = std::numeric_limits<double>::quiet_NaN();
    }
    last_token_s_.assign(requests.size(), 0);
    in_replica_.assign(static_cast<std::size_t>(replicas), 0);
    result_.busy_s.assign(static_cast<std::size_t>(replicas), 0);
    result_.iterations.assign(static_cast<std::size_t>(replicas), 0);
    result_.kv_blocks = policy.kv_blocks;
  }

  FleetResult run() {
    // Arrivals are scheduled one at a time (the next when one arrives): the queue stays small.
    if (!requests_.empty()) schedule_arrival(0);
    engine_.run();
    result_.end_s = std::max(result_.end_s, requests_.empty() ? 0.0 : requests_.back().arrival_s);
    return std::move(result_);
  }

 private:
  void schedule_arrival(std::size_t i) {
    engine_.schedule_at(sim::Time::from_seconds(requests_[i].arrival_s), [this, i] {
      arrive(i);
      if (i + 1 < requests_.size()) schedule_arrival(i + 1);
    });
  }

  void arrive(std::size_t i) {
    // The fewest requests in it; among equals, the next after the last one chosen (round robin).
    const int n = static_cast<int>(replicas_.size());
    int best = (last_routed_ + 1) % n;
    for (int k = 1; k < n; ++k) {
      const int r = (last_routed_ + 1 + k) % n;
      if (in_replica_[r] < in_replica_[best]) best = r;
    }
    last_routed_ = best;
    ServedRequest& record = result_.requests[i];
    record.replica = best;
    if (!replicas_[best].enqueue(static_cast<int>(i), requests_[i].prompt_tokens, requests_[i].output_tokens)) {
      record.dropped = true;
      return;
    }
    ++in_replica_[best];
    if (!replicas_[best].in_iteration()) start_iteration(best);
  }

  void start_iteration(int r) {
    models::ContinuousBatcher& b = replicas_[r];
    const models::ServingBatch batch = b.next_batch();
    if (batch.tokens() == 0) return;  // idle until the next arrival
    const double seconds = iteration_time_(batch);
    if (!(seconds > 0) || !std::isfinite(seconds)) {
      throw std::logic_error("serving fleet: an iteration of " + std::to_string(batch.tokens()) + " tokens took " +
                             std::to_string(seconds) + " s");
    }
    result_.busy_s[r] += seconds;
    ++result_.iterations[r];
    result_.kv_block_seconds += static_cast<double>(b.blocks_used()) * seconds;
    if (keep_samples_) {
      result_.samples.push_back({engine_.now().seconds(), r, static_cast<int>(b.running()), static_cast<int>(b.waiting()),
                                 b.blocks_used(), batch.tokens(), seconds});
    }
    engine_.schedule_in(sim::Time::from_seconds(seconds), [this, r] { end_iteration(r); });
  }

  void end_iteration(int r) {
    const double now = engine_.now().seconds();
    const models::IterationOutcome outcome = replicas_[r].complete();
    for (int id : outcome.preempted) ++result_.requests[id].preemptions;
    result_.preemptions += static_cast<std::int64_t>(outcome.preempted.size());
    for (int id : outcome.emitted) {
      ServedRequest& s = result_.requests[id];
      if (std::isnan(s.first_token_s)) {
        s.first_token_s = now;
      } else {
        const double gap = now - last_token_s_[id];
        result_.token_gaps_s.push_back(static_cast<float>(gap));
        s.max_token_gap_s = std::max(s.max_token_gap_s, gap);
      }
      last_token_s_[id] = now;
    }
    for (int id : outcome.finished) {
      result_.requests[id].finish_s = now;
      --in_replica_[r];
    }
    result_.end_s = std::max(result_.end_s, now);
    start_iteration(r);
  }

  const std::vector<ServingRequest>& requests_;
  const IterationTime& iteration_time_;
  bool keep_samples_;
  sim::Engine engine_;
  std::vector<models::ContinuousBatcher> replicas_;
  std::vector<int> in_replica_;
  int last_routed_ = -1;
  std::vector<double> last_token_s_;
  FleetResult result_;
};

}  // namespace

FleetResult simulate_fleet(const std::vector<ServingRequest>& requests, int replicas, const models::BatchingPolicy& policy,
                           const IterationTime& iteration_time, bool keep_samples) {
  if (replicas < 1) throw std::invalid_argument("replicas: must be >= 1");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!(requests[i].arrival_s >= 0) || (i > 0 && requests[i].arrival_s < requests[i - 1].arrival_s)) {
      throw std::invalid_argument("requests must arrive at times >= 0, in order (request " + std::to_string(i) + ")");
    }
  }
  return Fleet(requests, replicas, policy, iteration_time, keep_samples).run();
}

}  // namespace dlsim::scheduler
