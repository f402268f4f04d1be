// The serving fleet (scheduler/serving_fleet.hpp): routing, idle replicas, drops, and the
// order of every request's events.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "scheduler/serving_fleet.hpp"

namespace dlsim::scheduler {
namespace {

models::BatchingPolicy policy(std::int64_t blocks = 1000) {
  models::BatchingPolicy p;
  p.max_batch_tokens = 256;
  p.max_sequences = 8;
  p.block_tokens = 16;
  p.kv_blocks = blocks;
  return p;
}

// 1 ms per iteration plus 10 us per token.
double linear_time(const models::ServingBatch& b) { return 1e-3 + 1e-5 * b.tokens(); }

TEST(ServingFleet, EveryRequestCompletesInOrderOfItsEvents) {
  std::vector<ServingRequest> requests;
  for (int i = 0; i < 100; ++i) requests.push_back({0.01 * i, 50 + i, 1 + i % 7});
  const FleetResult r = simulate_fleet(requests, 3, policy(), linear_time, true);
  ASSERT_EQ(r.requests.size(), requests.size());
  std::vector<int> per_replica(3, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ServedRequest& s = r.requests[i];
    ASSERT_FALSE(s.dropped);
    EXPECT_GT(s.first_token_s, requests[i].arrival_s);
    EXPECT_GE(s.finish_s, s.first_token_s);
    if (requests[i].output_tokens == 1) {
      EXPECT_EQ(s.finish_s, s.first_token_s);
    }
    ++per_replica.at(static_cast<std::size_t>(s.replica));
  }
  for (int n : per_replica) EXPECT_GT(n, 20) << "the router spreads the load";
  long long gaps = 0;
  for (const ServingRequest& q : requests) gaps += q.output_tokens - 1;
  EXPECT_EQ(static_cast<long long>(r.token_gaps_s.size()), gaps);
  EXPECT_FALSE(r.samples.empty());
  for (const FleetSample& s : r.samples) EXPECT_LE(s.tokens, 256);
  double busy = 0;
  for (double b : r.busy_s) busy += b;
  EXPECT_LE(busy, 3 * r.end_s);
}

TEST(ServingFleet, AnIdleReplicaAnswersAtOnceAndWhatCannotFitIsDropped) {
  // Alone, a request's first token comes one prefill iteration after it arrives.
  const FleetResult alone = simulate_fleet({{5.0, 100, 2}}, 1, policy(), linear_time);
  EXPECT_NEAR(alone.requests[0].first_token_s, 5.0 + 1e-3 + 1e-5 * 100, 1e-9);
  EXPECT_NEAR(alone.requests[0].finish_s, alone.requests[0].first_token_s + 1e-3 + 1e-5, 1e-9);
  const FleetResult dropped = simulate_fleet({{0, 10, 1}, {0, 500, 10}}, 1, policy(20), linear_time);
  EXPECT_FALSE(dropped.requests[0].dropped);
  EXPECT_TRUE(dropped.requests[1].dropped) << "510 tokens in a cache of 320";
  EXPECT_TRUE(std::isnan(dropped.requests[1].finish_s));
}

ServingScaling autoscaling(int min, int max, int initial, double cold_start) {
  ServingScaling s;
  s.enabled = true;
  s.min_replicas = min;
  s.max_replicas = max;
  s.initial_replicas = initial;
  s.target_per_replica = 4;
  s.interval_s = 10;
  s.keep_alive_s = 60;
  s.cold_start_s = cold_start;
  return s;
}

TEST(ServingFleet, ScalingFromZeroMakesTheFirstRequestPayTheColdStart) {
  const FleetResult r = simulate_fleet({{5.0, 100, 2}, {200.0, 100, 2}}, 0, policy(), linear_time, false, autoscaling(0, 2, 0, 30));
  const double prefill = 1e-3 + 1e-5 * 100;
  EXPECT_NEAR(r.requests[0].first_token_s, 5.0 + 30 + prefill, 1e-6) << "queued through the whole cold start";
  EXPECT_NEAR(r.scaling.fleet_wait_s[0], 30, 1e-6);
  // The replica stops after the keep-alive (60 s, decided every 10 s), so the second request starts it again.
  EXPECT_EQ(r.scaling.cold_starts, 2);
  EXPECT_NEAR(r.scaling.fleet_wait_s[1], 30, 1e-6);
  ASSERT_GE(r.scaling.replicas_over_time.size(), 4u);
  EXPECT_EQ(r.scaling.replicas_over_time.front().second, 0);
  EXPECT_EQ(r.scaling.replicas_over_time[1], (std::pair<double, int>{5.0, 1}));
  EXPECT_EQ(r.scaling.replicas_over_time.back().second, 0) << "scaled back to zero at the end";
  EXPECT_EQ(r.scaling.peak_replicas, 1);
  // Billed from each cold start until it stops: at least the cold start and the keep-alive, twice.
  EXPECT_GE(r.scaling.replica_seconds, 2 * (30 + 60));
  EXPECT_LE(r.scaling.replica_seconds, 2 * (30 + 60 + 2 * 10 + 1));
}

TEST(ServingFleet, ScalesUpUnderABurstAndBackDownAfterTheKeepAlive) {
  std::vector<ServingRequest> burst;
  for (int i = 0; i < 1600; ++i) burst.push_back({0.05 * i, 200, 400});  // 20 per second for 80 s
  const FleetResult r = simulate_fleet(burst, 0, policy(), linear_time, false, autoscaling(1, 4, 1, 20));
  EXPECT_EQ(r.scaling.peak_replicas, 4);
  EXPECT_EQ(r.scaling.cold_starts, 3);
  EXPECT_EQ(r.scaling.replicas_over_time.back().second, 1) << "back to the minimum";
  std::vector<int> per_replica(4, 0);
  for (const ServedRequest& s : r.requests) {
    ASSERT_FALSE(s.dropped);
    ASSERT_FALSE(std::isnan(s.finish_s));
    ++per_replica.at(static_cast<std::size_t>(s.replica));
  }
  for (int n : per_replica) EXPECT_GT(n, 0) << "every started replica served";
  // Without scaling, one replica: slower to drain the burst.
  const FleetResult one = simulate_fleet(burst, 1, policy(), linear_time);
  EXPECT_GT(one.end_s, r.end_s);
  EXPECT_NEAR(one.scaling.replica_seconds, one.end_s, 1e-9) << "a fixed replica is billed for the whole span";
}

TEST(ServingFleet, DisaggregatedReplicasPrefillThenMoveTheCacheToADecodeReplica) {
  std::vector<ServingRequest> requests;
  for (int i = 0; i < 60; ++i) requests.push_back({0.02 * i, 300, i % 5 == 0 ? 1 : 20});
  ServingDisaggregation split;
  split.enabled = true;
  split.prefill_replicas = 1;
  std::vector<std::pair<int, int>> moves;
  split.transfer_s = [&moves](int prompt, int from, int to) {
    moves.emplace_back(from, to);
    return 1e-4 * prompt;  // 30 ms for 300 tokens
  };
  const FleetResult r = simulate_fleet(requests, 3, policy(), linear_time, false, {}, split);
  int handed_on = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ServedRequest& s = r.requests[i];
    ASSERT_FALSE(s.dropped);
    EXPECT_EQ(s.replica, 0) << "prompts run on the prefill replica";
    if (requests[i].output_tokens == 1) {
      EXPECT_EQ(s.decode_replica, -1);
      EXPECT_EQ(s.finish_s, s.first_token_s);
      continue;
    }
    ++handed_on;
    EXPECT_TRUE(s.decode_replica == 1 || s.decode_replica == 2);
    EXPECT_DOUBLE_EQ(s.kv_transfer_s, 0.03);
    EXPECT_GE(s.max_token_gap_s, 0.03) << "the second token waits for the move";
    EXPECT_GT(s.finish_s, s.first_token_s);
  }
  EXPECT_EQ(static_cast<int>(moves.size()), handed_on);
  for (const auto& [from, to] : moves) {
    EXPECT_EQ(from, 0);
    EXPECT_NE(to, 0);
  }
  EXPECT_GT(r.iterations[1], 0);
  EXPECT_GT(r.iterations[2], 0);
  split.prefill_replicas = 3;
  EXPECT_THROW(simulate_fleet(requests, 3, policy(), linear_time, false, {}, split), std::invalid_argument);
}

TEST(ServingFleet, SpotReplicasAreReclaimedAndTheirRequestsResumeElsewhere) {
  std::vector<ServingRequest> requests;
  for (int i = 0; i < 600; ++i) requests.push_back({0.05 * i, 300, 1000});  // answers of about a second
  ServingScaling cold;  // no autoscaling: its cold start serves the replacements
  cold.cold_start_s = 5;
  ServingSpot spot;
  spot.enabled = true;
  spot.reclaim.kind = Hazard::Kind::exponential;
  spot.reclaim.mean_s = 15;
  spot.notice_s = 0.5;
  spot.seed = 11;
  const FleetResult r = simulate_fleet(requests, 2, policy(), linear_time, false, cold, {}, spot);
  EXPECT_GT(r.scaling.reclaims, 2);
  EXPECT_EQ(r.scaling.cold_starts, r.scaling.reclaims) << "each reclaimed replica is replaced";
  int resumed = 0;
  long long gaps = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ServedRequest& s = r.requests[i];
    ASSERT_FALSE(s.dropped);
    ASSERT_FALSE(std::isnan(s.finish_s)) << "request " << i << " never finished";
    resumed += s.reclaims > 0;
    gaps += requests[i].output_tokens - 1;
  }
  EXPECT_GT(resumed, 0);
  EXPECT_EQ(static_cast<long long>(r.token_gaps_s.size()), gaps) << "every token once, through reclamations";
  // The same seed, the same reclamations; another seed, others.
  const FleetResult again = simulate_fleet(requests, 2, policy(), linear_time, false, cold, {}, spot);
  EXPECT_EQ(again.scaling.reclaims, r.scaling.reclaims);
  EXPECT_EQ(again.end_s, r.end_s);
  // With the on-demand fallback a slot is reclaimed at most once: its replacement stays.
  ServingSpot fallback = spot;
  fallback.fallback_on_demand = true;
  const FleetResult fell_back = simulate_fleet(requests, 2, policy(), linear_time, false, cold, {}, fallback);
  EXPECT_GE(fell_back.scaling.reclaims, 1);
  EXPECT_LE(fell_back.scaling.reclaims, 2);
  EXPECT_GT(fell_back.scaling.spot_replica_seconds, 0);
  EXPECT_LT(fell_back.scaling.spot_replica_seconds, fell_back.scaling.replica_seconds);
  EXPECT_NEAR(r.scaling.spot_replica_seconds, r.scaling.replica_seconds, 1e-6) << "without it, every replica is on spot";
  // On-demand replicas are never reclaimed and finish sooner.
  const FleetResult steady = simulate_fleet(requests, 2, policy(), linear_time, false, cold);
  EXPECT_EQ(steady.scaling.reclaims, 0);
  EXPECT_LT(steady.end_s, r.end_s);
}

TEST(ServingFleet, ScalesOnTheArrivalRateOrOnTheTimeToFirstToken) {
  std::vector<ServingRequest> burst;
  for (int i = 0; i < 1600; ++i) burst.push_back({0.05 * i, 200, 400});  // 20 per second for 80 s
  ServingScaling rate = autoscaling(1, 8, 1, 20);
  rate.metric = ScalingMetric::rate;
  rate.target_per_replica = 5;  // requests/s one replica takes: 20/s wants 4
  const FleetResult by_rate = simulate_fleet(burst, 0, policy(), linear_time, false, rate);
  EXPECT_EQ(by_rate.scaling.peak_replicas, 4);
  EXPECT_EQ(by_rate.scaling.replicas_over_time.back().second, 1);
  ServingScaling latency = autoscaling(1, 8, 1, 20);
  latency.metric = ScalingMetric::latency;
  latency.target_per_replica = 0.5;  // seconds, p90 of the time to first token
  const FleetResult by_latency = simulate_fleet(burst, 0, policy(), linear_time, false, latency);
  EXPECT_GT(by_latency.scaling.peak_replicas, 2) << "one more per interval while the p90 is over 0.5 s";
  EXPECT_EQ(by_latency.scaling.replicas_over_time.back().second, 1) << "one fewer per keep-alive once idle";
  for (const ServedRequest& x : by_latency.requests) ASSERT_FALSE(std::isnan(x.finish_s));
}

// Whole samples (one "token" each, also their last), batched dynamically: at most `batch` per
// iteration, an idle replica waiting `wait` for more.
models::BatchingPolicy dynamic(int batch, double wait) {
  models::BatchingPolicy p;
  p.max_batch_tokens = p.max_sequences = batch;
  p.chunked_prefill = false;
  p.block_tokens = 1;
  p.kv_blocks = 2 * batch;
  p.max_wait_s = wait;
  return p;
}

TEST(ServingFleet, DynamicBatchingWaitsForMoreRequestsUntilTheOldestHasWaitedOrTheBatchIsFull) {
  // Three requests within 4 ms, then four within 3 ms a second later; 10 ms of wait, batches of 4.
  const std::vector<ServingRequest> requests{{0.000, 1, 1}, {0.002, 1, 1}, {0.004, 1, 1},
                                             {1.000, 1, 1}, {1.001, 1, 1}, {1.002, 1, 1}, {1.003, 1, 1}};
  const FleetResult r = simulate_fleet(requests, 1, dynamic(4, 0.010), linear_time, true);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_NEAR(r.samples[0].time_s, 0.010, 1e-9) << "not full: it starts when the first has waited 10 ms";
  EXPECT_EQ(r.samples[0].tokens, 3);
  EXPECT_NEAR(r.samples[1].time_s, 1.003, 1e-9) << "full at the fourth arrival: it starts at once";
  EXPECT_EQ(r.samples[1].tokens, 4);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const double start = i < 3 ? 0.010 : 1.003;
    EXPECT_NEAR(r.requests[i].finish_s, start + linear_time(i < 3 ? models::ServingBatch{{{3, 0}}} : models::ServingBatch{{{4, 0}}}), 1e-9);
    EXPECT_EQ(r.requests[i].finish_s, r.requests[i].first_token_s) << "a sample is answered once";
  }
  // Without a wait, the first request runs alone at once.
  const FleetResult eager = simulate_fleet(requests, 1, dynamic(4, 0), linear_time, true);
  EXPECT_EQ(eager.samples.front().tokens, 1);
  EXPECT_NEAR(eager.samples.front().time_s, 0, 1e-12);
  // Many requests at once: no batch ever holds more than the limit, and all complete.
  std::vector<ServingRequest> flood(100, ServingRequest{0.5, 1, 1});
  const FleetResult full = simulate_fleet(flood, 2, dynamic(8, 0.005), linear_time, true);
  for (const FleetSample& x : full.samples) EXPECT_LE(x.tokens, 8);
  for (const ServedRequest& x : full.requests) EXPECT_FALSE(std::isnan(x.finish_s));
}

// Serverless functions: per-request scaling from zero, cold starts of 2 s.
ServingScaling functions(int most, double keep_alive_s) {
  ServingScaling f;
  f.enabled = true;
  f.metric = ScalingMetric::per_request;
  f.min_replicas = f.initial_replicas = 0;
  f.max_replicas = most;
  f.keep_alive_s = keep_alive_s;
  f.cold_start_s = 2;
  return f;
}

TEST(ServingFleet, PerRequestScalingStartsAnInstanceForEveryRequestNoIdleOneTakesAndRecyclesIdleOnes) {
  // Functions: one request per instance; a cold start of 2 s; idle instances recycled after 60 s.
  ServingScaling f = functions(50, 60);
  const std::vector<ServingRequest> requests{{0, 1, 1}, {0, 1, 1}, {0, 1, 1}, {10, 1, 1}, {11, 1, 1}, {200, 1, 1}};
  const FleetResult r = simulate_fleet(requests, 0, dynamic(1, 0), linear_time, false, f);
  const double t = linear_time(models::ServingBatch{{{1, 0}}});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.requests[i].finish_s, 2 + t, 1e-9) << "three at once: three cold starts";
  EXPECT_NEAR(r.requests[3].finish_s, 10 + t, 1e-9) << "a warm instance takes it at once";
  EXPECT_NEAR(r.requests[4].finish_s, 11 + t, 1e-9);
  EXPECT_NEAR(r.requests[5].finish_s, 200 + 2 + t, 1e-9) << "every instance was recycled after 60 s idle";
  EXPECT_EQ(r.scaling.cold_starts, 4);
  EXPECT_EQ(r.scaling.peak_replicas, 3);
  EXPECT_EQ(r.scaling.replicas_over_time.back().second, 0) << "recycled at the end too";
  // Three instances on from 0 until 60 s after their last request (11 s at the latest), the fourth
  // from 200 s for its cold start, request and keep-alive.
  EXPECT_GT(r.scaling.replica_seconds, 3 * 62.0 + 62);
  EXPECT_LT(r.scaling.replica_seconds, 3 * 72.0 + 63);
  // Provisioned instances (min_replicas) stay warm: no cold start at all for one request at a time.
  f.min_replicas = f.initial_replicas = 1;
  const FleetResult warm = simulate_fleet({{0, 1, 1}, {500, 1, 1}}, 0, dynamic(1, 0), linear_time, false, f);
  EXPECT_EQ(warm.scaling.cold_starts, 0);
  EXPECT_NEAR(warm.requests[1].finish_s, 500 + t, 1e-9);
}

TEST(ServingFleet, AHistogramKeepAliveLearnsTheFunctionsIdleTimes) {
  ServingScaling f = functions(10, 5 * 60);
  // A request every 10 minutes for 4 hours, then one after a 3-hour pause.
  std::vector<ServingRequest> requests;
  for (int i = 0; i < 24; ++i) requests.push_back({600.0 * i, 1, 1});
  requests.push_back({600.0 * 23 + 3 * 3600, 1, 1});
  // A fixed 5-minute keep-alive recycles the instance between every two requests.
  const FleetResult fixed = simulate_fleet(requests, 0, dynamic(1, 0), linear_time, false, f);
  EXPECT_EQ(fixed.scaling.cold_starts, 25);
  // The histogram keeps it for its whole range (4 h) until 10 idle times are in, then for the
  // 10-minute bin's end plus 10% (11 min): warm every 10 minutes, recycled in the 3-hour pause.
  f.histogram_keep_alive = true;
  const FleetResult learned = simulate_fleet(requests, 0, dynamic(1, 0), linear_time, false, f);
  EXPECT_EQ(learned.scaling.cold_starts, 2);
  EXPECT_NEAR(learned.requests.back().finish_s - requests.back().arrival_s, 2 + linear_time(models::ServingBatch{{{1, 0}}}), 1e-9);
  // The first instance stops 11 minutes after the last 10-minute request, not 4 hours after.
  ASSERT_GE(learned.scaling.replicas_over_time.size(), 3u);
  EXPECT_NEAR(learned.scaling.replicas_over_time[2].first, 600.0 * 23 + 11 * 60, 0.01);
  EXPECT_EQ(learned.scaling.replicas_over_time[2].second, 0);
  // Idle times all beyond the range: the histogram never predicts, the whole range is kept.
  f.histogram_range_s = 300;
  const FleetResult beyond = simulate_fleet(requests, 0, dynamic(1, 0), linear_time, false, f);
  EXPECT_EQ(beyond.scaling.cold_starts, 25) << "a 5-minute range: every 10-minute gap is beyond it";
}

TEST(ServingFleet, RefusesRequestsOutOfOrder) {
  EXPECT_THROW(simulate_fleet({{1.0, 1, 1}, {0.5, 1, 1}}, 1, policy(), linear_time), std::invalid_argument);
  EXPECT_THROW(simulate_fleet({{0, 1, 1}}, 0, policy(), linear_time), std::invalid_argument);
  EXPECT_THROW(simulate_fleet({{0, 1, 1}}, 0, policy(), linear_time, false, autoscaling(3, 2, 2, 0)), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::scheduler
