// workload.evaluation and workload.startup in training scenarios: evaluation passes every N
// epochs and the start-up, both inside time_to_train and billed; the pass timed by the forward
// pass and paced by the input pipeline; located errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// ResNet-50 on one p3.16xlarge (8 V100): 8 x 256 images per step, 4 epochs of 204,800 images
// (exactly 100 steps each).
std::string resnet(const std::string& extra) { return test::resnet_on_one_p3(204800, 4, extra); }

ResultRow run_text(const std::string& text) { return test::first_row(text); }

TEST(EvaluationAndStartup, PassesAndStartUpAddToTheTimeToTrain) {
  const ResultRow plain = run_text(resnet(""));
  EXPECT_EQ(plain.evaluations, 0);
  EXPECT_EQ(plain.startup_s, 0);
  const ResultRow with = run_text(resnet("  startup: 2min\n  evaluation: {every: 2, samples: 20480}\n"));
  EXPECT_EQ(with.evaluations, 2) << "after epochs 2 and 4";
  EXPECT_EQ(with.startup_s, 120);
  EXPECT_EQ(with.iteration_s, plain.iteration_s) << "the step itself is unchanged";
  EXPECT_NEAR(with.time_to_train_s, plain.time_to_train_s + 120 + 2 * with.evaluation_s, 1e-6);
  // Billed per second, rounded up: the start-up and the passes too.
  ASSERT_GT(with.time_to_train_s, 60);
  EXPECT_NEAR(with.cost_to_train, with.cost_per_hour * std::ceil(with.time_to_train_s) / 3600, 1e-9);
  // 20,480 images over 8 GPUs: 10 forward passes of 256 each, cheaper than 10 training steps.
  EXPECT_GT(with.evaluation_s, 0);
  EXPECT_LT(with.evaluation_s, 10 * plain.iteration_s);
  EXPECT_GT(with.evaluation_s, 10 * plain.iteration_s / 5) << "a forward pass is about a third of a step, not less than a fifth";
  // Twice the validation set in whole batches: exactly twice the pass.
  const ResultRow twice = run_text(resnet("  evaluation: {every: 2, samples: 40960}\n"));
  EXPECT_NEAR(twice.evaluation_s, 2 * with.evaluation_s, 1e-12 * with.evaluation_s);
  // A pass as measured is taken as given.
  const ResultRow given = run_text(resnet("  evaluation: {every: 1, time: 30s}\n"));
  EXPECT_EQ(given.evaluations, 4);
  EXPECT_EQ(given.evaluation_s, 30);
  EXPECT_NEAR(given.time_to_train_s, plain.time_to_train_s + 4 * 30, 1e-6);
}

TEST(EvaluationAndStartup, AnInputBoundPassTakesTheLoadersTime) {
  // Two PIL workers load 234 images/s: far slower than 8 V100s evaluate.
  const ResultRow r = run_text(resnet("  input: {loader: pytorch, workers: 2}\n  evaluation: {every: 1, samples: 20480}\n"));
  EXPECT_NEAR(r.evaluation_s, 20480 / (2 * 117.0), 1e-9);
}

TEST(EvaluationAndStartup, BadSettingsAreLocated) {
  const auto key_of = [](const std::string& text) { return test::error_loading(text, "s.yaml").key_path(); };
  EXPECT_EQ(key_of(resnet("  evaluation: {every: 1, samples: 100, time: 1s}\n")), "workload.evaluation.time");
  EXPECT_EQ(key_of(resnet("  evaluation: {every: 1}\n")), "workload.evaluation.samples");
  EXPECT_EQ(key_of(resnet("  evaluation: {every: 0, samples: 100}\n")), "workload.evaluation.every");
  EXPECT_EQ(key_of(resnet("  startup: -1s\n")), "workload.startup");
  EXPECT_EQ(key_of("cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
                   "workload: {model: resnet50, batch: {per_device: 64}, iterations: 10, evaluation: {samples: 100}}\n"),
            "workload.evaluation.every");
  EXPECT_EQ(key_of("cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
                   "workload: {model: gpt3-1.3b, batch: {global: 64}, data: {samples: 6400, epochs: 1},\n"
                   "           plan: {tensor: 2}, evaluation: {samples: 100}}\n"),
            "workload.evaluation.samples");
}

}  // namespace
}  // namespace dlsim::experiment

namespace dlsim::experiment {
namespace {

// The bound of a step that waits for its gradients: BERT-Large on 16 nodes of one V100 and
// 10 Gb/s each, the all-reduce after the backward pass.
TEST(IterationBound, ASlowNetworkBoundsTheStep) {
  const ResultRow r = run_text(
      "cluster: {instance: aws/p3.2xlarge, nodes: 16}\n"
      "workload: {model: bert-large, precision: fp16, batch: {per_device: 8}, iterations: 10, data_parallel: {overlap: false}}\n");
  EXPECT_GT(r.exposed_comm_s, r.compute_s);
  EXPECT_EQ(r.bound, "network");
}

}  // namespace
}  // namespace dlsim::experiment
