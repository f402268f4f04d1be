// Continuous batching (models/serving_batcher.hpp): the invariants every iteration keeps, and
// that every request completes with exactly its tokens, through preemptions too.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "models/serving_batcher.hpp"

namespace dlsim::models {
namespace {

struct Request {
  int prompt = 0, output = 0;
};

// Deterministic mixed lengths (a linear congruential sequence).
std::vector<Request> mixed_requests(int n, int max_prompt, int max_output) {
  std::vector<Request> out;
  unsigned x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    const int p = 1 + static_cast<int>((x >> 8) % static_cast<unsigned>(max_prompt));
    x = x * 1103515245u + 12345u;
    const int o = 1 + static_cast<int>((x >> 8) % static_cast<unsigned>(max_output));
    out.push_back({p, o});
  }
  return out;
}

struct Drained {
  std::map<int, int> emitted;       // request -> tokens emitted
  std::map<int, int> first_tokens;  // request -> times reported as first
  std::set<int> finished;
  long long preempted = 0;
  int iterations = 0;
};

// Runs the batcher until idle, checking each iteration against the policy.
Drained drain(ContinuousBatcher& b, const BatchingPolicy& policy) {
  Drained d;
  while (!b.idle()) {
    const ServingBatch batch = b.next_batch();
    EXPECT_GT(batch.tokens(), 0) << "a replica with work formed an empty iteration";
    if (batch.tokens() == 0) break;
    EXPECT_LE(batch.tokens(), policy.max_batch_tokens);
    EXPECT_LE(static_cast<int>(b.running()), policy.max_sequences);
    EXPECT_LE(b.blocks_used(), policy.kv_blocks);
    EXPECT_LE(batch.emitting, batch.decodes + static_cast<int>(batch.prefills.size()));
    if (!policy.chunked_prefill) {
      for (const PrefillChunk& c : batch.prefills) EXPECT_EQ(c.context, 0) << "a prompt was split without chunked prefill";
    }
    const IterationOutcome o = b.complete();
    EXPECT_EQ(static_cast<int>(o.emitted.size()), batch.emitting);
    for (int r : o.emitted) ++d.emitted[r];
    for (int r : o.first_token) ++d.first_tokens[r];
    for (int r : o.finished) EXPECT_TRUE(d.finished.insert(r).second) << "request " << r << " finished twice";
    d.preempted += static_cast<long long>(o.preempted.size());
    if (++d.iterations > 1'000'000) {
      ADD_FAILURE() << "the batcher does not drain";
      break;
    }
  }
  EXPECT_EQ(b.blocks_used(), 0) << "blocks left held after every request finished";
  return d;
}

void expect_every_request_served(const Drained& d, const std::vector<Request>& requests) {
  ASSERT_EQ(d.finished.size(), requests.size());
  for (int i = 0; i < static_cast<int>(requests.size()); ++i) {
    EXPECT_EQ(d.emitted.at(i), requests[i].output) << "request " << i;
    EXPECT_EQ(d.first_tokens.at(i), 1) << "request " << i;
  }
}

TEST(ContinuousBatcher, KeepsTheBudgetTheSequenceLimitAndTheCacheAndServesEveryToken) {
  BatchingPolicy policy;
  policy.max_batch_tokens = 512;
  policy.max_sequences = 16;
  policy.block_tokens = 16;
  policy.kv_blocks = 4000;
  ContinuousBatcher b(policy);
  const std::vector<Request> requests = mixed_requests(200, 900, 60);
  for (int i = 0; i < static_cast<int>(requests.size()); ++i) ASSERT_TRUE(b.enqueue(i, requests[i].prompt, requests[i].output));
  const Drained d = drain(b, policy);
  expect_every_request_served(d, requests);
  EXPECT_EQ(d.preempted, 0);
  // Decodes share iterations: far fewer iterations than tokens.
  long long tokens = 0;
  for (const Request& r : requests) tokens += r.output;
  EXPECT_LT(d.iterations, tokens / 4);
}

TEST(ContinuousBatcher, PreemptsTheNewestWhenTheCacheRunsOutAndRecomputesIt) {
  BatchingPolicy policy;
  policy.max_batch_tokens = 256;
  policy.max_sequences = 64;
  policy.block_tokens = 16;
  policy.kv_blocks = 40;  // 640 tokens: a few sequences at a time, each growing into the others' room
  ContinuousBatcher b(policy);
  const std::vector<Request> requests = mixed_requests(60, 200, 200);
  for (int i = 0; i < static_cast<int>(requests.size()); ++i) ASSERT_TRUE(b.enqueue(i, requests[i].prompt, requests[i].output));
  const Drained d = drain(b, policy);
  EXPECT_GT(d.preempted, 0) << "the cache was meant to run out";
  EXPECT_EQ(b.preemptions(), d.preempted);
  expect_every_request_served(d, requests);
}

// The Orca baselines of the vLLM paper: the same cache and requests as above, reserved whole
// (request) or for the model's longest sequence (max_length) on admission: nothing is ever
// preempted, every token is served, and fewer sequences run at once than with paged blocks.
TEST(ContinuousBatcher, ReservingPoliciesNeverPreemptAndBatchFewerSequences) {
  const std::vector<Request> requests = mixed_requests(60, 200, 200);
  const auto peak_running = [&](KvReservation reservation, Drained& out) {
    BatchingPolicy policy;
    policy.max_batch_tokens = 256;
    policy.max_sequences = 64;
    policy.block_tokens = 16;
    policy.kv_blocks = 40;
    policy.kv_reservation = reservation;
    policy.max_length = 400;  // the longest request here: 200 + 200
    ContinuousBatcher b(policy);
    for (int i = 0; i < static_cast<int>(requests.size()); ++i) EXPECT_TRUE(b.enqueue(i, requests[i].prompt, requests[i].output));
    std::size_t peak = 0;
    Drained d;
    while (!b.idle() && d.iterations < 1'000'000) {
      const ServingBatch batch = b.next_batch();
      if (batch.tokens() == 0) break;
      peak = std::max(peak, b.running());
      if (reservation == KvReservation::max_length) EXPECT_LE(b.running() * 25, static_cast<std::size_t>(policy.kv_blocks));
      const IterationOutcome o = b.complete();
      for (int r : o.emitted) ++d.emitted[r];
      for (int r : o.first_token) ++d.first_tokens[r];
      for (int r : o.finished) d.finished.insert(r);
      d.preempted += static_cast<long long>(o.preempted.size());
      ++d.iterations;
    }
    EXPECT_EQ(b.blocks_used(), 0);
    out = d;
    return peak;
  };
  Drained paged, request, max_length;
  const std::size_t paged_peak = peak_running(KvReservation::paged, paged);
  const std::size_t request_peak = peak_running(KvReservation::request, request);
  const std::size_t max_peak = peak_running(KvReservation::max_length, max_length);
  for (const Drained* d : {&paged, &request, &max_length}) expect_every_request_served(*d, requests);
  EXPECT_GT(paged.preempted, 0);
  EXPECT_EQ(request.preempted, 0);
  EXPECT_EQ(max_length.preempted, 0);
  EXPECT_EQ(max_peak, 1u);  // 400 tokens = 25 of the 40 blocks: one sequence at a time
  EXPECT_GT(request_peak, max_peak);
  EXPECT_GT(paged_peak, request_peak);
  // A request longer than the cache can hold whole is refused by every policy; max_length refuses
  // what cannot hold max_length tokens even when the request itself is short.
  BatchingPolicy small;
  small.kv_blocks = 10;
  small.kv_reservation = KvReservation::max_length;
  small.max_length = 2048;
  ContinuousBatcher refuses(small);
  EXPECT_FALSE(refuses.enqueue(0, 10, 10));
  small.max_length = 0;
  EXPECT_THROW(ContinuousBatcher{small}, std::invalid_argument);
}

TEST(ContinuousBatcher, ChunksLongPromptsAndWithoutChunkingRunsThemWhole) {
  BatchingPolicy policy;
  policy.max_batch_tokens = 100;
  policy.kv_blocks = 1000;
  {
    ContinuousBatcher b(policy);
    ASSERT_TRUE(b.enqueue(0, 250, 3));
    ServingBatch first = b.next_batch();
    ASSERT_EQ(first.prefills.size(), 1u);
    EXPECT_EQ(first.prefills[0].tokens, 100);
    EXPECT_EQ(first.emitting, 0) << "a partial prompt emits no token";
    b.complete();
    const ServingBatch second = b.next_batch();
    ASSERT_EQ(second.prefills.size(), 1u);
    EXPECT_EQ(second.prefills[0].context, 100);
    b.complete();
    const ServingBatch third = b.next_batch();
    EXPECT_EQ(third.prefills[0].tokens, 50);
    EXPECT_EQ(third.emitting, 1) << "the prompt's last chunk emits the first token";
    const IterationOutcome o = b.complete();
    EXPECT_EQ(o.first_token, std::vector<int>{0});
  }
  policy.chunked_prefill = false;
  ContinuousBatcher b(policy);
  EXPECT_FALSE(b.enqueue(0, 101, 1)) << "a prompt over the budget can never run unchunked";
  ASSERT_TRUE(b.enqueue(1, 60, 2));
  ASSERT_TRUE(b.enqueue(2, 60, 2));
  const ServingBatch batch = b.next_batch();
  ASSERT_EQ(batch.prefills.size(), 1u) << "the second prompt waits: the two do not fit one budget";
  EXPECT_EQ(batch.prefills[0].tokens, 60);
  b.complete();
  const ServingBatch next = b.next_batch();
  EXPECT_EQ(next.decodes, 1);
  ASSERT_EQ(next.prefills.size(), 1u);
  EXPECT_EQ(next.tokens(), 61);
}

TEST(ContinuousBatcher, APrefilledRequestDecodesAtOnceAndAPrefillReplicaHandsOnAtTheFirstToken) {
  BatchingPolicy policy;
  policy.block_tokens = 16;
  policy.kv_blocks = 100;
  ContinuousBatcher decode(policy);
  ASSERT_TRUE(decode.enqueue_prefilled(7, 100, 3));
  const ServingBatch b = decode.next_batch();
  EXPECT_TRUE(b.prefills.empty()) << "its prompt is cached already";
  EXPECT_EQ(b.decodes, 1);
  EXPECT_EQ(b.decode_context, 101);
  EXPECT_EQ(decode.blocks_used(), 7) << "blocks for 101 tokens";
  IterationOutcome o = decode.complete();
  EXPECT_TRUE(o.first_token.empty()) << "its first token came from the prefill replica";
  EXPECT_EQ(o.emitted, std::vector<int>{7});
  decode.next_batch();
  o = decode.complete();
  EXPECT_EQ(o.finished, std::vector<int>{7}) << "tokens 2 and 3 of 3";
  EXPECT_THROW(decode.enqueue_prefilled(8, 10, 1), std::invalid_argument);

  policy.role = ReplicaRole::prefill;
  ContinuousBatcher prefill(policy);
  ASSERT_TRUE(prefill.enqueue(1, 50, 10));
  prefill.next_batch();
  o = prefill.complete();
  EXPECT_EQ(o.first_token, std::vector<int>{1});
  EXPECT_EQ(o.finished, std::vector<int>{1}) << "handed on at its first token";
  EXPECT_TRUE(prefill.idle());
  EXPECT_EQ(prefill.blocks_used(), 0);
}

TEST(ContinuousBatcher, StaticBatchingAdmitsOnlyIntoAnEmptyReplicaAndReservesWholeAnswers) {
  BatchingPolicy policy;
  policy.continuous = false;
  policy.max_batch_tokens = 100;
  policy.max_sequences = 3;
  policy.block_tokens = 10;
  policy.kv_blocks = 1000;
  ContinuousBatcher b(policy);
  ASSERT_TRUE(b.enqueue(0, 80, 2));
  ASSERT_TRUE(b.enqueue(1, 80, 5));
  ASSERT_TRUE(b.enqueue(2, 80, 1));
  ASSERT_TRUE(b.enqueue(3, 10, 1));
  ServingBatch first = b.next_batch();
  EXPECT_EQ(b.running(), 3u) << "the batch takes three requests at once, whatever the budget";
  EXPECT_EQ(first.tokens(), 100);
  EXPECT_EQ(b.blocks_used(), 9 + 9 + 9) << "blocks for prompt and answer: 82, 85 and 81 tokens";
  b.complete();
  int iterations = 1;
  while (b.running() > 0) {
    const ServingBatch batch = b.next_batch();
    EXPECT_EQ(b.waiting(), 1u) << "request 3 waits until the whole batch is done";
    b.complete();
    ASSERT_LT(++iterations, 100);
  }
  const ServingBatch next = b.next_batch();
  ASSERT_EQ(next.prefills.size(), 1u);
  EXPECT_EQ(next.prefills[0].tokens, 10);
  b.complete();
  EXPECT_TRUE(b.idle());
  EXPECT_EQ(b.preemptions(), 0);
}

TEST(ContinuousBatcher, EvictsEverythingAndResumesARequestWithItsTokensPrefilledAgain) {
  BatchingPolicy policy;
  policy.block_tokens = 16;
  policy.kv_blocks = 100;
  ContinuousBatcher a(policy);
  ASSERT_TRUE(a.enqueue(0, 40, 10));
  ASSERT_TRUE(a.enqueue(1, 40, 10));
  for (int i = 0; i < 4; ++i) {
    a.next_batch();
    a.complete();
  }
  ASSERT_TRUE(a.enqueue(2, 40, 10));
  a.next_batch();  // an iteration in flight is abandoned too
  const auto evicted = a.evict_all();
  ASSERT_EQ(evicted.size(), 3u);
  EXPECT_EQ(evicted[0].generated, 4) << "a prefill and 3 decodes completed: 4 tokens out (the abandoned iteration's is lost)";
  EXPECT_TRUE(a.idle());
  EXPECT_FALSE(a.in_iteration());
  EXPECT_EQ(a.blocks_used(), 0);
  ContinuousBatcher b(policy);
  ASSERT_TRUE(b.enqueue_resumed(0, 40, 10, evicted[0].generated));
  const ServingBatch batch = b.next_batch();
  ASSERT_EQ(batch.prefills.size(), 1u);
  EXPECT_EQ(batch.prefills[0].tokens, 44) << "the prompt and the 4 tokens out";
  IterationOutcome o = b.complete();
  EXPECT_TRUE(o.first_token.empty());
  EXPECT_EQ(o.emitted, std::vector<int>{0}) << "its 5th token";
  int left = 0;
  while (!b.idle()) {
    b.next_batch();
    left += static_cast<int>(b.complete().emitted.size());
  }
  EXPECT_EQ(left, 5) << "tokens 6 to 10";
}

TEST(ContinuousBatcher, RefusesWhatCanNeverFitAndBadLimits) {
  BatchingPolicy policy;
  policy.block_tokens = 16;
  policy.kv_blocks = 10;  // 160 tokens
  ContinuousBatcher b(policy);
  EXPECT_FALSE(b.enqueue(0, 150, 20)) << "170 tokens in a cache of 160";
  EXPECT_TRUE(b.enqueue(1, 140, 20));
  EXPECT_EQ(b.waiting(), 1u);
  EXPECT_THROW(b.enqueue(2, 0, 1), std::invalid_argument);
  EXPECT_THROW(b.complete(), std::logic_error);
  policy.kv_blocks = 0;
  EXPECT_THROW(ContinuousBatcher{policy}, std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::models
