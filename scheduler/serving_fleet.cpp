// The serving fleet on the event engine (serving_fleet.hpp).
#include "scheduler/serving_fleet.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

#include "sim/engine.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler {
namespace {

enum class ReplicaState { off, starting, ready, draining };

struct Replica {
  explicit Replica(const models::BatchingPolicy& policy) : batcher(policy) {}
  models::ContinuousBatcher batcher;
  ReplicaState state = ReplicaState::off;
  int requests = 0;         // routed to it and not finished
  double on_since = 0;      // when its current cold start began
  int starts = 0;           // cold starts so far: a ready event of an earlier start is stale
  int epoch = 0;            // lives so far (spot): events of an earlier life are stale
  bool noticed = false;     // spot: reclamation notice received, takes no new request
  bool on_spot = false;     // this life runs on spot capacity
  double held_since = -1;   // dynamic batching: when its oldest request not yet in a batch came (-1: none)
  bool wait_armed = false;  // dynamic batching: a start at the end of the wait is scheduled
  int idle_token = 0;       // per-request scaling: bumped at every change, so a stale idle stop does nothing
};

class Fleet {
 public:
  Fleet(const std::vector<ServingRequest>& requests, int replicas, const models::BatchingPolicy& policy,
        const IterationTime& iteration_time, bool keep_samples, const ServingScaling& scaling,
        const ServingDisaggregation& disaggregation, const ServingSpot& spot)
      : requests_(requests),
        iteration_time_(iteration_time),
        keep_samples_(keep_samples),
        scaling_(scaling),
        disaggregation_(disaggregation),
        spot_(spot),
        streams_(spot.seed) {
    const int slots = scaling_.enabled ? scaling_.max_replicas : replicas;
    for (int r = 0; r < slots; ++r) {
      models::BatchingPolicy p = policy;
      if (disaggregation_.enabled) p.role = r < disaggregation_.prefill_replicas ? models::ReplicaRole::prefill : models::ReplicaRole::decode;
      replicas_.emplace_back(p);
    }
    result_.requests.assign(requests.size(), ServedRequest{});
    for (ServedRequest& s : result_.requests) {
      s.first_token_s = std::numeric_limits<double>::quiet_NaN();
      s.finish_s = std::numeric_limits<double>::quiet_NaN();
    }
    last_token_s_.assign(requests.size(), 0);
    generated_before_.assign(requests.size(), 0);
    result_.busy_s.assign(static_cast<std::size_t>(slots), 0);
    result_.iterations.assign(static_cast<std::size_t>(slots), 0);
    result_.kv_blocks = policy.kv_blocks;
    capacity_ = policy.max_sequences;
    // The histogram keep-alive keeps its whole range until the histogram can predict.
    keep_alive_s_ = scaling_.histogram_keep_alive ? scaling_.histogram_range_s : scaling_.keep_alive_s;
    if (scaling_.enabled) result_.scaling.fleet_wait_s.assign(requests.size(), 0);
    const int initial = scaling_.enabled ? scaling_.initial_replicas : replicas;
    for (int r = 0; r < initial; ++r) {
      replicas_[r].state = ReplicaState::ready;
      replicas_[r].on_since = 0;
      replicas_[r].on_spot = spot_.enabled;
      schedule_reclaim(r);
    }
    record_replicas();
  }

  FleetResult run() {
    // Arrivals are scheduled one at a time (the next when one arrives): the queue stays small.
    if (!requests_.empty()) schedule_arrival(0);
    if (per_request()) {
      for (int r = 0; r < static_cast<int>(replicas_.size()); ++r) arm_idle_stop(r);
    }
    if (scaling_.enabled && !per_request()) engine_.schedule_at(sim::Time::from_seconds(scaling_.interval_s), [this] { scale(); });
    engine_.run();
    result_.end_s = std::max(result_.end_s, requests_.empty() ? 0.0 : requests_.back().arrival_s);
    // Replicas still on are billed to the end.
    for (Replica& r : replicas_) {
      if (r.state != ReplicaState::off) bill(r, result_.end_s);
    }
    return std::move(result_);
  }

 private:
  int replicas_on() const {
    int n = 0;
    for (const Replica& r : replicas_) n += r.state != ReplicaState::off;
    return n;
  }
  int replicas_wanted_on() const {  // starting or ready (not draining)
    int n = 0;
    for (const Replica& r : replicas_) n += r.state == ReplicaState::starting || r.state == ReplicaState::ready;
    return n;
  }
  void record_replicas() {
    const int on = replicas_on();
    result_.scaling.peak_replicas = std::max(result_.scaling.peak_replicas, on);
    auto& timeline = result_.scaling.replicas_over_time;
    if (timeline.empty() || timeline.back().second != on) timeline.emplace_back(engine_.now().seconds(), on);
  }

  void schedule_arrival(std::size_t i) {
    engine_.schedule_at(sim::Time::from_seconds(requests_[i].arrival_s), [this, i] {
      ++arrived_;
      ++in_flight_;
      note_arrival_for_idle_times();
      if (per_request()) {
        // A function: the new request takes an idle instance if one is; else it waits for an
        // instance started for it (requests already waiting keep theirs).
        queue_.push_front(i);
        route(queue_, false, -1, 1);
        if (!queue_.empty() && queue_.front() == i) {
          queue_.pop_front();
          queue_.push_back(i);
          start_for_queue();
        }
      } else {
        queue_.push_back(i);
        dispatch();
        if (scaling_.enabled && replicas_wanted_on() == 0) start_replicas(1, spot_.enabled);  // from zero, at once
      }
      if (i + 1 < requests_.size()) schedule_arrival(i + 1);
    });
  }

  // Routes queued requests to ready replicas with room: the fewest requests in it; among equals,
  // the next after the last one chosen (round robin). New requests go to mixed or prefill
  // replicas, prefilled ones (disaggregated) to decode replicas.
  void dispatch() {
    route(queue_, false);
    route(decode_queue_, true);
  }

  // `only` >= 0: to that replica only (a function instance takes the request it was started
  // for); at most `limit` requests.
  void route(std::deque<std::size_t>& queue, bool prefilled, int only = -1, int limit = std::numeric_limits<int>::max()) {
    const int n = static_cast<int>(replicas_.size());
    const models::ReplicaRole wanted = !disaggregation_.enabled ? models::ReplicaRole::mixed
                                       : prefilled              ? models::ReplicaRole::decode
                                                                : models::ReplicaRole::prefill;
    for (int routed = 0; routed < limit && !queue.empty(); ++routed) {
      int best = -1;
      for (int k = 0; k < n; ++k) {
        const int r = (last_routed_ + 1 + k) % n;
        if (only >= 0 && r != only) continue;
        const Replica& x = replicas_[r];
        if (x.state != ReplicaState::ready || x.noticed || x.requests >= capacity_ || x.batcher.policy().role != wanted) continue;
        if (best < 0 || x.requests < replicas_[best].requests) best = r;
      }
      if (best < 0) return;  // no replica ready with room: the requests wait
      last_routed_ = best;
      const std::size_t i = queue.front();
      queue.pop_front();
      ServedRequest& record = result_.requests[i];
      Replica& r = replicas_[best];
      const ServingRequest& q = requests_[i];
      bool taken = false;
      if (prefilled) {
        record.decode_replica = best;
        taken = r.batcher.enqueue_prefilled(static_cast<int>(i), q.prompt_tokens, q.output_tokens);
      } else {
        record.replica = best;
        if (scaling_.enabled) result_.scaling.fleet_wait_s[i] = engine_.now().seconds() - q.arrival_s;
        taken = r.batcher.enqueue_resumed(static_cast<int>(i), q.prompt_tokens, q.output_tokens, generated_before_[i]);
      }
      if (!taken) {
        record.dropped = true;
        ++settled_;
        request_left();
        continue;
      }
      ++r.requests;
      ++r.idle_token;
      if (r.held_since < 0) r.held_since = engine_.now().seconds();
      start_or_wait(best);
    }
  }

  // A request finished or was dropped: when none is left in flight, the function goes idle.
  void request_left() {
    if (--in_flight_ == 0) idle_since_ = engine_.now().seconds();
  }

  bool per_request() const { return scaling_.enabled && scaling_.metric == ScalingMetric::per_request; }

  // Per-request scaling: requests left in the queue that no replica starting now will take get
  // a replica each (`capacity_` of them per replica), within max_replicas.
  long long starting_replicas() const {
    long long n = 0;
    for (const Replica& r : replicas_) n += r.state == ReplicaState::starting;
    return n;
  }

  void start_for_queue() {
    const long long uncovered = static_cast<long long>(queue_.size()) - starting_replicas() * capacity_;
    if (uncovered > 0) start_replicas(static_cast<int>((uncovered + capacity_ - 1) / capacity_), spot_.enabled);
  }

  // Per-request scaling: an idle replica stops after its keep-alive unless a request comes first.
  void arm_idle_stop(int r) {
    Replica& x = replicas_[r];
    if (!per_request() || x.state != ReplicaState::ready || x.requests > 0) return;
    const int token = ++x.idle_token;
    engine_.schedule_in(sim::Time::from_seconds(keep_alive_s_), [this, r, token] {
      Replica& y = replicas_[r];
      if (y.idle_token != token || y.state != ReplicaState::ready || y.requests > 0 || y.batcher.in_iteration()) return;
      if (replicas_wanted_on() <= scaling_.min_replicas) return;  // provisioned: stays warm
      y.state = ReplicaState::draining;
      stop_if_drained(r);
    });
  }

  // The hybrid histogram policy's keep-alive window (ServingScaling::histogram_keep_alive).
  double histogram_window() const {
    constexpr std::int64_t kFewest = 10;   // idle times before the histogram is trusted
    const double range = scaling_.histogram_range_s;
    std::int64_t inside = 0;
    for (std::int64_t c : idle_bins_) inside += c;
    if (inside < kFewest || idle_beyond_range_ * 2 >= inside + idle_beyond_range_) return range;
    const double bins = double(idle_bins_.size());
    const double mean = double(inside) / bins;
    double square = 0;
    for (std::int64_t c : idle_bins_) square += (double(c) - mean) * (double(c) - mean);
    if (std::sqrt(square / bins) / mean < 2) return range;  // too flat to predict
    std::int64_t seen = 0;
    for (std::size_t b = 0; b < idle_bins_.size(); ++b) {
      seen += idle_bins_[b];
      if (double(seen) >= 0.99 * double(inside)) return std::min(range, double(b + 1) * kIdleBin_s * 1.1);
    }
    return range;
  }

  // The function's idle times: from the moment no request is in flight to the next arrival.
  void note_arrival_for_idle_times() {
    if (!scaling_.histogram_keep_alive || idle_since_ < 0) return;
    const double idle = engine_.now().seconds() - idle_since_;
    idle_since_ = -1;
    if (idle_bins_.empty()) idle_bins_.assign(static_cast<std::size_t>(std::max(1.0, std::ceil(scaling_.histogram_range_s / kIdleBin_s))), 0);
    const std::size_t bin = static_cast<std::size_t>(idle / kIdleBin_s);
    if (bin < idle_bins_.size()) {
      ++idle_bins_[bin];
    } else {
      ++idle_beyond_range_;
    }
    keep_alive_s_ = histogram_window();  // decided once per new idle time, not at every idle instance
  }

  // Dynamic batching: a replica that is not full waits (max_wait_s) for more requests before it
  // starts an iteration; without a wait, or when full, it starts at once.
  void start_or_wait(int r) {
    Replica& x = replicas_[r];
    if (x.batcher.in_iteration()) return;
    const double wait = x.batcher.policy().max_wait_s;
    if (wait <= 0 || x.requests == 0 || x.requests >= capacity_ || x.held_since < 0) {
      start_iteration(r);
      return;
    }
    // Compared in the engine's ticks: the wake-up below lands exactly on `due`.
    const sim::Time due = sim::Time::from_seconds(x.held_since + wait);
    if (engine_.now() >= due) {
      start_iteration(r);
      return;
    }
    if (x.wait_armed) return;
    x.wait_armed = true;
    const int epoch = x.epoch;
    engine_.schedule_at(due, [this, r, epoch] {
      replicas_[r].wait_armed = false;
      if (replicas_[r].epoch == epoch) start_or_wait(r);
    });
  }

  void start_replicas(int count, bool on_spot) {
    for (int r = 0; r < static_cast<int>(replicas_.size()) && count > 0; ++r) {
      if (replicas_[r].state != ReplicaState::off) continue;
      replicas_[r].on_spot = on_spot;
      replicas_[r].state = ReplicaState::starting;
      replicas_[r].on_since = engine_.now().seconds();
      ++result_.scaling.cold_starts;
      --count;
      const int start = ++replicas_[r].starts;
      engine_.schedule_in(sim::Time::from_seconds(scaling_.cold_start_s), [this, r, start] {
        if (replicas_[r].state != ReplicaState::starting || replicas_[r].starts != start) return;
        replicas_[r].state = ReplicaState::ready;
        if (per_request()) {
          route(queue_, false, r);  // the oldest waiting request, as Lambda binds it to the new instance
        } else {
          dispatch();
        }
        arm_idle_stop(r);  // per-request scaling: nothing waits for it any more
      });
      schedule_reclaim(r);
    }
    record_replicas();
  }

  bool all_settled() const { return settled_ == requests_.size(); }

  // Spot: this life's notice and reclamation, drawn when the replica starts.
  void schedule_reclaim(int r) {
    const int epoch = ++replicas_[r].epoch;
    if (!spot_.enabled || !replicas_[r].on_spot) return;
    const double life = sample_time_to_event(spot_.reclaim, 0, streams_.stream("serving.reclaim"));
    if (!std::isfinite(life) || life > 1e9) return;
    const double notice_in = std::max(0.0, life - spot_.notice_s);
    engine_.schedule_in(sim::Time::from_seconds(notice_in), [this, r, epoch] {
      if (replicas_[r].epoch == epoch && replicas_[r].state != ReplicaState::off) replicas_[r].noticed = true;
    });
    engine_.schedule_in(sim::Time::from_seconds(life), [this, r, epoch] { reclaim(r, epoch); });
  }

  void reclaim(int r, int epoch) {
    Replica& x = replicas_[r];
    if (x.epoch != epoch || x.state == ReplicaState::off || all_settled()) return;
    ++result_.scaling.reclaims;
    ++x.epoch;  // its iteration in flight, if any, is lost
    std::vector<models::ContinuousBatcher::Evicted> evicted = x.batcher.evict_all();
    // Back to the front of the queue, in the order the replica held them.
    for (auto it = evicted.rbegin(); it != evicted.rend(); ++it) {
      generated_before_[it->request] = it->generated;
      ++result_.requests[it->request].reclaims;
      queue_.push_front(static_cast<std::size_t>(it->request));
    }
    x.requests = 0;
    x.held_since = -1;
    x.noticed = false;
    x.state = ReplicaState::off;
    bill(x, engine_.now().seconds());
    record_replicas();
    start_replicas(1, !spot_.fallback_on_demand);  // its replacement
    dispatch();
  }

  void stop_if_drained(int r) {
    Replica& x = replicas_[r];
    if (x.state != ReplicaState::draining || x.requests > 0 || x.batcher.in_iteration()) return;
    x.state = ReplicaState::off;
    bill(x, engine_.now().seconds());
    record_replicas();
  }

  void bill(const Replica& x, double until) {
    result_.scaling.replica_seconds += until - x.on_since;
    if (x.on_spot) result_.scaling.spot_replica_seconds += until - x.on_since;
  }

  // The periodic scaling decision.
  void scale() {
    int outstanding = static_cast<int>(queue_.size());
    for (const Replica& r : replicas_) outstanding += r.requests;
    const double now = engine_.now().seconds();
    int on = replicas_wanted_on();
    int wanted = 0;
    switch (scaling_.metric) {
      case ScalingMetric::requests: wanted = static_cast<int>(std::ceil(outstanding / scaling_.target_per_replica)); break;
      case ScalingMetric::rate:
        wanted = static_cast<int>(std::ceil(double(arrived_ - arrived_at_last_tick_) / scaling_.interval_s / scaling_.target_per_replica));
        break;
      case ScalingMetric::latency: {
        wanted = on;
        if (!recent_ttft_.empty()) {
          std::sort(recent_ttft_.begin(), recent_ttft_.end());
          const double p90 = recent_ttft_[static_cast<std::size_t>(0.9 * double(recent_ttft_.size() - 1))];
          if (p90 > scaling_.target_per_replica) wanted = on + 1;
          if (p90 < 0.5 * scaling_.target_per_replica) wanted = on - 1;
        } else if (outstanding == 0) {
          wanted = on - 1;  // nothing served, nothing waiting: one fewer
        }
        break;
      }
      case ScalingMetric::per_request: wanted = on; break;  // not reached: per-request scaling has no periodic decision
    }
    if (outstanding > 0) wanted = std::max(wanted, 1);  // requests waiting never leave the fleet empty
    arrived_at_last_tick_ = arrived_;
    recent_ttft_.clear();
    const int want = std::clamp(wanted, scaling_.min_replicas, scaling_.max_replicas);
    if (want >= on) below_since_ = -1;
    if (want > on) {
      // Draining replicas are taken back first (they are warm), then cold ones start.
      for (Replica& r : replicas_) {
        if (on < want && r.state == ReplicaState::draining) {
          r.state = ReplicaState::ready;
          ++on;
        }
      }
      start_replicas(want - on, spot_.enabled);
      dispatch();
    } else if (want < on) {
      if (below_since_ < 0) below_since_ = now;
      if (now - below_since_ >= scaling_.keep_alive_s) {
        // Stop the surplus, least loaded first (starting replicas have none: they go first).
        for (int k = on - want; k > 0; --k) {
          int pick = -1;
          for (int r = 0; r < static_cast<int>(replicas_.size()); ++r) {
            const ReplicaState st = replicas_[r].state;
            if (st != ReplicaState::ready && st != ReplicaState::starting) continue;
            if (pick < 0 || replicas_[r].requests < replicas_[pick].requests) pick = r;
          }
          if (pick < 0) break;
          replicas_[pick].state = ReplicaState::draining;
          stop_if_drained(pick);
        }
        below_since_ = -1;
      }
    }
    // Keep deciding while requests are still to come or in the fleet.
    if (arrived_ < requests_.size() || outstanding > 0 || replicas_on() > scaling_.min_replicas) {
      engine_.schedule_in(sim::Time::from_seconds(scaling_.interval_s), [this] { scale(); });
    }
  }

  // A prefilled request's K and V move to a decode replica: the least loaded one with room when
  // the move starts (it waits in the decode queue until one has room).
  void hand_on(int id, int from) {
    int to = -1;
    for (int r = 0; r < static_cast<int>(replicas_.size()); ++r) {
      const Replica& x = replicas_[r];
      if (x.batcher.policy().role != models::ReplicaRole::decode || x.state != ReplicaState::ready) continue;
      if (to < 0 || x.requests < replicas_[to].requests) to = r;
    }
    const double seconds = to < 0 ? 0.0 : disaggregation_.transfer_s(requests_[id].prompt_tokens, from, to);
    result_.requests[id].kv_transfer_s = seconds;
    engine_.schedule_in(sim::Time::from_seconds(seconds), [this, id] {
      decode_queue_.push_back(static_cast<std::size_t>(id));
      dispatch();
    });
  }

  void start_iteration(int r) {
    models::ContinuousBatcher& b = replicas_[r].batcher;
    const models::ServingBatch batch = b.next_batch();
    replicas_[r].held_since = b.waiting() > 0 ? engine_.now().seconds() : -1;
    if (batch.tokens() == 0) {
      stop_if_drained(r);
      return;  // idle until the next request
    }
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
                                 b.blocks_used(), batch.tokens(), batch.decodes, static_cast<int>(batch.prefills.size()), seconds});
    }
    const int epoch = replicas_[r].epoch;
    engine_.schedule_in(sim::Time::from_seconds(seconds), [this, r, epoch] {
      if (replicas_[r].epoch == epoch) end_iteration(r);
    });
  }

  void end_iteration(int r) {
    const double now = engine_.now().seconds();
    const models::IterationOutcome outcome = replicas_[r].batcher.complete();
    for (int id : outcome.preempted) ++result_.requests[id].preemptions;
    result_.preemptions += static_cast<std::int64_t>(outcome.preempted.size());
    for (int id : outcome.emitted) {
      ServedRequest& s = result_.requests[id];
      if (std::isnan(s.first_token_s)) {
        s.first_token_s = now;
        if (scaling_.enabled && scaling_.metric == ScalingMetric::latency) recent_ttft_.push_back(now - requests_[id].arrival_s);
      } else {
        const double gap = now - last_token_s_[id];
        result_.token_gaps_s.push_back(static_cast<float>(gap));
        s.max_token_gap_s = std::max(s.max_token_gap_s, gap);
      }
      last_token_s_[id] = now;
    }
    const bool hands_on = replicas_[r].batcher.policy().role == models::ReplicaRole::prefill;
    for (int id : outcome.finished) {
      --replicas_[r].requests;
      if (hands_on && requests_[id].output_tokens > 1) {
        hand_on(id, r);
      } else {
        result_.requests[id].finish_s = now;
        ++settled_;
        request_left();
      }
    }
    result_.end_s = std::max(result_.end_s, now);
    start_or_wait(r);
    arm_idle_stop(r);
    // Finished requests made room: queued ones join (this replica's at its next iteration). A
    // function's queued requests each wait for the instance started for them (as Lambda binds a
    // request to the environment it creates): only those beyond the concurrency limit take a
    // freed one.
    if (!outcome.finished.empty() && !(per_request() && starting_replicas() * capacity_ >= static_cast<long long>(queue_.size()))) dispatch();
  }

  const std::vector<ServingRequest>& requests_;
  const IterationTime& iteration_time_;
  bool keep_samples_;
  ServingScaling scaling_;
  sim::Engine engine_;
  std::vector<Replica> replicas_;
  ServingDisaggregation disaggregation_;
  ServingSpot spot_;
  sim::RandomStreams streams_;
  std::size_t settled_ = 0;         // requests finished or dropped
  std::vector<int> generated_before_;  // spot: tokens a request generated before a reclamation
  std::deque<std::size_t> queue_;   // arrived, not yet routed
  std::deque<std::size_t> decode_queue_;  // disaggregated: prefilled, waiting for a decode replica
  std::size_t arrived_ = 0;
  std::size_t arrived_at_last_tick_ = 0;  // scaling on rate: arrivals before the last decision
  std::vector<double> recent_ttft_;       // scaling on latency: first tokens since the last decision
  int last_routed_ = -1;
  int capacity_ = 1;                // requests a replica takes at once (its sequence limit)
  double keep_alive_s_ = 0;         // per-request scaling: how long an idle instance stays warm now
  std::int64_t in_flight_ = 0;      // arrived, not finished nor dropped
  double idle_since_ = -1;          // histogram keep-alive: since when none is in flight (-1: some are)
  static constexpr double kIdleBin_s = 60;  // histogram keep-alive: 1-minute bins
  std::vector<std::int64_t> idle_bins_;   // histogram keep-alive: idle times per minute
  std::int64_t idle_beyond_range_ = 0;    // and those beyond its range
  double below_since_ = -1;         // since when the want has been below the replicas (-1: it is not)
  std::vector<double> last_token_s_;
  FleetResult result_;
};

}  // namespace

FleetResult simulate_fleet(const std::vector<ServingRequest>& requests, int replicas, const models::BatchingPolicy& policy,
                           const IterationTime& iteration_time, bool keep_samples, const ServingScaling& scaling,
                           const ServingDisaggregation& disaggregation, const ServingSpot& spot) {
  if (!scaling.enabled && replicas < 1) throw std::invalid_argument("replicas: must be >= 1");
  if (scaling.enabled) {
    if (scaling.max_replicas < 1 || scaling.min_replicas < 0 || scaling.min_replicas > scaling.max_replicas ||
        scaling.initial_replicas < scaling.min_replicas || scaling.initial_replicas > scaling.max_replicas) {
      throw std::invalid_argument("scaling: need 0 <= min_replicas <= initial <= max_replicas, max_replicas >= 1");
    }
    if (!(scaling.target_per_replica > 0) || !(scaling.interval_s > 0) || !(scaling.keep_alive_s >= 0) ||
        !(scaling.cold_start_s >= 0)) {
      throw std::invalid_argument("scaling: target, interval > 0; keep-alive and cold start >= 0");
    }
    if (scaling.histogram_keep_alive && !(scaling.histogram_range_s >= 60)) {
      throw std::invalid_argument("scaling: a keep-alive histogram spans at least one 1-minute bin");
    }
  }
  if (disaggregation.enabled) {
    const int n = scaling.enabled ? scaling.max_replicas : replicas;
    if (scaling.enabled) throw std::invalid_argument("disaggregated prefill and decode: not with autoscaling (yet)");
    if (disaggregation.prefill_replicas < 1 || disaggregation.prefill_replicas >= n) {
      throw std::invalid_argument("disaggregated prefill and decode need >= 1 replica of each kind");
    }
    if (!disaggregation.transfer_s) throw std::invalid_argument("disaggregated prefill and decode need a KV transfer time");
    if (spot.enabled) throw std::invalid_argument("disaggregated prefill and decode: not on spot replicas (yet)");
  }
  if (spot.enabled) validate(spot.reclaim);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!(requests[i].arrival_s >= 0) || (i > 0 && requests[i].arrival_s < requests[i - 1].arrival_s)) {
      throw std::invalid_argument("requests must arrive at times >= 0, in order (request " + std::to_string(i) + ")");
    }
  }
  return Fleet(requests, replicas, policy, iteration_time, keep_samples, scaling, disaggregation, spot).run();
}

}  // namespace dlsim::scheduler
