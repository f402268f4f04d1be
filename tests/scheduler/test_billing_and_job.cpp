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

TEST(FixedClusterJob, AddsStartUpAndEvaluationPasses) {
  sim::Engine engine;
  sim::Recorder recorder;
  FixedClusterJob job{4, 10.0, 0.25, 1000, 100, {}};
  job.startup_s = 30;
  job.evaluation_s = 4;
  job.evaluation_every_epochs = 2;  // epochs of 100 iterations: 5 passes, the last after the last epoch
  const JobOutcome out = run_fixed_cluster_job(engine, recorder, job);
  EXPECT_EQ(out.evaluations, 5);
  EXPECT_DOUBLE_EQ(out.time_to_train_s, 30 + 250.0 + 5 * 4);
  EXPECT_DOUBLE_EQ(out.cost_usd, 10.0 * 4 * 300 / 3600);  // start-up and evaluations are billed
  const auto* series = recorder.find_series("iterations_done");
  ASSERT_NE(series, nullptr);
  // 500 iterations are done after the start-up, 125 s of steps and the evaluations at 200 and 400.
  EXPECT_DOUBLE_EQ(series->times[4].seconds(), 30 + 500 * 0.25 + 2 * 4);
  // No evaluation: only the start-up is added.
  sim::Engine engine2;
  sim::Recorder recorder2;
  job.evaluation_every_epochs = 0;
  EXPECT_DOUBLE_EQ(run_fixed_cluster_job(engine2, recorder2, job).time_to_train_s, 30 + 250.0);
  // The work rounds to 950 iterations: the tenth epoch is short, and still ends in a pass.
  sim::Engine engine3;
  sim::Recorder recorder3;
  job.evaluation_every_epochs = 1;
  job.iterations = 950;
  const JobOutcome short_end = run_fixed_cluster_job(engine3, recorder3, job);
  EXPECT_EQ(short_end.evaluations, 10);
  EXPECT_DOUBLE_EQ(short_end.time_to_train_s, 30 + 950 * 0.25 + 10 * 4);
  job.startup_s = -1;
  EXPECT_THROW(run_fixed_cluster_job(engine2, recorder2, job), std::invalid_argument);
}

TEST(FixedClusterJob, TheFirstEpochTakesItsOwnIterationTime) {
  sim::Engine engine;
  sim::Recorder recorder;
  FixedClusterJob job{1, 36.0, 0.25, 1000, 100, {}};
  job.first_epoch_iteration_s = 2.0;  // read from storage, then cached
  const JobOutcome out = run_fixed_cluster_job(engine, recorder, job);
  EXPECT_DOUBLE_EQ(out.time_to_train_s, 100 * 2.0 + 900 * 0.25);
  const auto* series = recorder.find_series("iterations_done");
  ASSERT_NE(series, nullptr);
  EXPECT_DOUBLE_EQ(series->times[0].seconds(), 200.0) << "the first epoch";
  EXPECT_DOUBLE_EQ(series->times[1].seconds(), 225.0) << "the second, cached";
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
