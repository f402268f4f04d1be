#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "models/pipeline_schedule.hpp"

namespace dlsim::models {
namespace {

ParallelPlan plan_of(PipelineSchedule s, int p, int m, int v = 1) {
  ParallelPlan plan;
  plan.pipeline = p;
  plan.micro_batches = m;
  plan.schedule = s;
  plan.virtual_stages = v;
  return plan;
}

// Every (micro-batch, chunk) runs forward once and backward once, backward after forward.
void expect_complete(const ParallelPlan& plan) {
  for (int r = 0; r < plan.pipeline; ++r) {
    const auto order = pipeline_order(plan, r);
    ASSERT_EQ(order.size(), static_cast<std::size_t>(2 * plan.micro_batches * plan.virtual_stages));
    std::set<std::pair<int, int>> forward_done, backward_done;
    for (const PassId& p : order) {
      const auto key = std::make_pair(p.micro_batch, p.chunk);
      ASSERT_GE(p.micro_batch, 0);
      ASSERT_LT(p.micro_batch, plan.micro_batches);
      if (p.forward) {
        EXPECT_TRUE(forward_done.insert(key).second) << "forward twice on rank " << r;
      } else {
        EXPECT_TRUE(forward_done.count(key)) << "backward before forward on rank " << r;
        EXPECT_TRUE(backward_done.insert(key).second);
      }
    }
    EXPECT_EQ(backward_done.size(), static_cast<std::size_t>(plan.micro_batches * plan.virtual_stages));
  }
}

TEST(PipelineSchedule, EveryPassOnceInAValidOrder) {
  expect_complete(plan_of(PipelineSchedule::gpipe, 4, 8));
  expect_complete(plan_of(PipelineSchedule::one_f_one_b, 4, 8));
  expect_complete(plan_of(PipelineSchedule::one_f_one_b, 8, 3));  // fewer micro-batches than stages
  expect_complete(plan_of(PipelineSchedule::interleaved, 4, 8, 2));
  expect_complete(plan_of(PipelineSchedule::interleaved, 4, 12, 3));
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithPipelineMinusRankForwards) {
  const ParallelPlan plan = plan_of(PipelineSchedule::one_f_one_b, 4, 8);
  for (int r = 0; r < 4; ++r) {
    const auto order = pipeline_order(plan, r);
    int warmup = 0;
    while (order[static_cast<std::size_t>(warmup)].forward) ++warmup;
    EXPECT_EQ(warmup, 4 - r) << "rank " << r;  // p - r - 1 warm-up forwards, then the first steady forward
  }
}

TEST(PipelineSchedule, InFlightMicroBatchesBoundMemory) {
  // GPipe keeps all m; 1F1B at most p - r; interleaved a little more than p on the first rank.
  EXPECT_EQ(peak_in_flight(plan_of(PipelineSchedule::gpipe, 4, 16), 0), 16);
  EXPECT_EQ(peak_in_flight(plan_of(PipelineSchedule::one_f_one_b, 4, 16), 0), 4);
  EXPECT_EQ(peak_in_flight(plan_of(PipelineSchedule::one_f_one_b, 4, 16), 3), 1);
  // Interleaved, rank 0: (p - 1) * 2 + (v - 1) * p + 1 chunk passes of 1/v of the layers each.
  EXPECT_EQ(peak_in_flight(plan_of(PipelineSchedule::interleaved, 4, 16, 2), 0), 3 * 2 + 4 + 1);
}

TEST(PipelineSchedule, InterleavedVisitsChunksInGroupsOfPipelineSize) {
  const auto order = pipeline_order(plan_of(PipelineSchedule::interleaved, 2, 4, 2), 1);
  // Rank 1 of 2 warms up with (v - 1) * p = 2 forwards: micro-batches 0, 1 of chunk 0.
  ASSERT_GE(order.size(), 3u);
  EXPECT_TRUE(order[0].forward && order[0].micro_batch == 0 && order[0].chunk == 0);
  EXPECT_TRUE(order[1].forward && order[1].micro_batch == 1 && order[1].chunk == 0);
  EXPECT_TRUE(order[2].forward && order[2].micro_batch == 0 && order[2].chunk == 1);
}

}  // namespace
}  // namespace dlsim::models
