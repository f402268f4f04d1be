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
    if (requests[i].output_tokens == 1) EXPECT_EQ(s.finish_s, s.first_token_s);
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

TEST(ServingFleet, RefusesRequestsOutOfOrder) {
  EXPECT_THROW(simulate_fleet({{1.0, 1, 1}, {0.5, 1, 1}}, 1, policy(), linear_time), std::invalid_argument);
  EXPECT_THROW(simulate_fleet({{0, 1, 1}}, 0, policy(), linear_time), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::scheduler
