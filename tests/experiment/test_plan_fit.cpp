// The memory-driven plan changes: the default micro-batch (the largest that fits) and the
// changes `dlsim check` names for a plan that does not fit.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/plan_fit.hpp"
#include "models/memory_model.hpp"
#include "models/zoo.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

models::ParallelPlan data_parallel(int data, int micro_batch_size, int micro_batches) {
  models::ParallelPlan p;
  p.data = data;
  p.micro_batch_size = micro_batch_size;
  p.micro_batches = micro_batches;
  p.precision = models::Precision::bf16;
  p.gradient_precision = models::Precision::bf16;
  p.optimizer = models::Optimizer::adam;
  return p;
}

TEST(PlanFit, TheDefaultMicroBatchIsTheLargestThatFits) {
  const models::ModelGraph model = models::decoder_model("gpt3-1.3b", 2048);
  const models::ParallelPlan plan = data_parallel(8, 1, 1);
  const double memory = 40 * kGiB;
  const int size = largest_fitting_micro_batch(model, plan, 64, memory);
  ASSERT_GE(size, 1);
  EXPECT_LT(size, 64);             // 64 sequences at once do not fit in 40 GiB
  EXPECT_EQ(64 % size, 0);
  models::ParallelPlan at = data_parallel(8, size, 64 / size);
  EXPECT_LE(models::peak_memory(model, at).total(), memory);
  // The next larger divisor does not fit.
  int larger = size + 1;
  while (64 % larger != 0) ++larger;
  at = data_parallel(8, larger, 64 / larger);
  EXPECT_GT(models::peak_memory(model, at).total(), memory);
  // With memory to spare, the whole batch in one micro-batch.
  EXPECT_EQ(largest_fitting_micro_batch(model, plan, 2, 400 * kGiB), 2);
}

TEST(PlanFit, ChangesComeInThePractitionersOrderWithTheirMemory) {
  const models::ModelGraph model = models::decoder_model("gpt3-1.3b", 2048);
  const models::ParallelPlan plan = data_parallel(8, 8, 1);
  const double needs = models::peak_memory(model, plan).total();
  const double memory = 0.8 * needs;
  const auto fits = changes_that_fit(model, plan, memory);
  ASSERT_FALSE(fits.empty());
  EXPECT_EQ(fits.front().change, "recompute: selective");
  for (const FitChange& f : fits) {
    EXPECT_LE(f.bytes, memory) << f.change;
    EXPECT_LT(f.bytes, needs) << f.change;
  }
  EXPECT_LE(fits.size(), 3u);
  EXPECT_EQ(describe_fits(fits).rfind("; it fits with recompute: selective (", 0), 0u) << describe_fits(fits);
  // Nothing helps when even the weights do not fit.
  EXPECT_TRUE(changes_that_fit(model, plan, 1 * kGiB).empty());
  EXPECT_EQ(describe_fits({}), "");
}

TEST(PlanFit, CheckNamesTheChangesThatMakeARejectedPlanFit) {
  const std::string text =
      "cluster:\n  instance: aws/p4d.24xlarge\nworkload:\n  model: gpt3-6.7b\n  sequence_length: 2048\n  precision: bf16\n"
      "  optimizer: adam\n  batch: {global: 64}\n  iterations: 10\n  plan: {tensor: 8, micro_batch_size: 8}\n";
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "workload.plan");
  EXPECT_NE(e.message().find("does not fit"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("it fits with "), std::string::npos) << e.what();
  // Without micro_batch_size the default picks one that fits: the same plan loads.
  std::string fitted = text;
  fitted.replace(fitted.find(", micro_batch_size: 8"), 21, "");
  const Scenario s = load_scenario_text(fitted, "fit.yaml");
  const models::ParallelPlan p = s.plan_for(1);
  EXPECT_EQ(p.micro_batch_size * p.micro_batches, 64);
  EXPECT_LT(p.micro_batch_size, 64);
  EXPECT_LE(models::peak_memory(s.workload.model, p).total(), s.cluster.device.memory_bytes);
}

}  // namespace
}  // namespace dlsim::experiment
