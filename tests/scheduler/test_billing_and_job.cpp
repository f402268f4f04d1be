#include <gtest/gtest.h>

#include "scheduler/billing.hpp"
#include "scheduler/fixed_cluster_job.hpp"

namespace dlsim::scheduler {
namespace {

TEST(Billing, PerSecondWithOneMinuteMinimum) {
  EXPECT_DOUBLE_EQ(billed_cost(36.0, 1, 3600), 36.0);
  EXPECT_DOUBLE_EQ(billed_cost(36.0, 2, 3600), 72.0);
  EXPECT_DOUBLE_EQ(billed_cost(36.0, 1, 10), 36.0 * 60 / 3600);      // minimum applies
  EXPECT_DOUBLE_EQ(billed_cost(36.0, 1, 60.2), 36.0 * 61 / 3600);    // rounded up to a second
  EXPECT_DOUBLE_EQ(billed_cost(36.0, 1, 0), 0.0);
  EXPECT_DOUBLE_EQ(billed_cost(36.0, 1, 100, BillingRule{3600, 3600}), 36.0);  // hourly billing
}

TEST(Billing, RejectsNegativeOrNonFinite) {
  EXPECT_THROW(billed_cost(-1, 1, 10), std::invalid_argument);
  EXPECT_THROW(billed_cost(1, 1, -10), std::invalid_argument);
  EXPECT_THROW(billed_cost(1, 1, std::nan("")), std::invalid_argument);
}

TEST(FixedClusterJob, TakesIterationsTimesIterationTime) {
  sim::Engine engine;
  sim::Recorder recorder;
  FixedClusterJob job{4, 10.0, 0.25, 1000, 100, {}};
  const JobOutcome out = run_fixed_cluster_job(engine, recorder, job);
  EXPECT_DOUBLE_EQ(out.time_to_train_s, 250.0);
  EXPECT_DOUBLE_EQ(out.cost_usd, 10.0 * 4 * 250 / 3600);
  const auto* series = recorder.find_series("iterations_done");
  ASSERT_NE(series, nullptr);
  ASSERT_EQ(series->values.size(), 10u);  // one point per epoch of 100 iterations
  EXPECT_EQ(series->values.back(), 1000.0);
  EXPECT_DOUBLE_EQ(series->times[4].seconds(), 500 * 0.25);
}

TEST(FixedClusterJob, CapsProgressEvents) {
  sim::Engine engine;
  sim::Recorder recorder;
  FixedClusterJob job{1, 1.0, 1e-3, 10'000'000, 1, {}};
  const JobOutcome out = run_fixed_cluster_job(engine, recorder, job);
  EXPECT_LE(out.progress_points, kMaxProgressEvents);
  EXPECT_NEAR(out.time_to_train_s, 10'000.0, 1e-6);
}

TEST(FixedClusterJob, RejectsRunsBeyondTheTimeRange) {
  sim::Engine engine;
  sim::Recorder recorder;
  FixedClusterJob job{1, 1.0, 1e6, 1'000'000'000'000, 0, {}};
  EXPECT_THROW(run_fixed_cluster_job(engine, recorder, job), std::out_of_range);
  EXPECT_EQ(engine.pending_count(), 0u);
}

}  // namespace
}  // namespace dlsim::scheduler
