// Cluster jobs with a parallel plan (issue 20): a large model's job is replayed whole on its
// nodes, as a training scenario of the same model, plan and instance type runs it; its work in
// tokens counts its global batch; what cannot be is refused where it is written.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

const std::string kCluster =
    "seed: 2\n"
    "pools:\n"
    "  - {name: train, instance: aws/p4d.24xlarge, nodes: 8}\n"
    "jobs:\n"
    "  - name: gpt\n"
    "    gpus: 32\n"
    "    model: gpt3-1.3b\n"
    "    sequence_length: 2048\n"
    "    precision: fp16\n"
    "    optimizer: adam\n"
    "    global_batch: 64\n"
    "    plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}\n"
    "    tokens: 1.31072e9\n";

// The same job as a training scenario on 4 nodes.
const std::string kTraining =
    "cluster: {instance: aws/p4d.24xlarge, nodes: 4}\n"
    "workload:\n"
    "  model: gpt3-1.3b\n"
    "  sequence_length: 2048\n"
    "  precision: fp16\n"
    "  optimizer: adam\n"
    "  batch: {global: 64}\n"
    "  iterations: 10\n"
    "  plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}\n";

TEST(ClusterPlanJobs, AJobWithAPlanRunsAtTheTrainingScenariosIterationTime) {
  const Scenario cluster = load_scenario_text(kCluster, "c.yaml");
  const scheduler::JobSpec& job = cluster.cluster_sim->variants.at(0).spec.jobs.at(0);
  const Results training = run(load_scenario_text(kTraining, "t.yaml"));
  ASSERT_EQ(training.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(job.iteration_s, training.rows[0].iteration_s);
  // Its inter-node traffic is inside that time: nothing more on the shared fabric.
  EXPECT_EQ(job.gradient_bytes, 0);
  EXPECT_EQ(job.overlap_s, 0);
  // 1.31072e9 tokens at 64 sequences x 2048 tokens per iteration: 10,000 iterations.
  EXPECT_EQ(job.iterations, 10000);
  const Results r = run(cluster);
  EXPECT_EQ(r.cluster_rows.at(0).done, 1);
  EXPECT_NEAR(r.cluster_rows.at(0).makespan_s, 10000 * job.iteration_s, 1e-3);
}

TEST(ClusterPlanJobs, WhatAPlanCannotDoIsRefusedWhereItIsWritten) {
  test::expect_replacements_rejected(kCluster, {
      {"    global_batch: 64\n", "", "jobs[0].global_batch", "samples per iteration"},
      {"    global_batch: 64\n", "    global_batch: 64\n    batch_per_gpu: 2\n", "jobs[0].batch_per_gpu", "global_batch"},
      {"plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}", "plan: {tensor: 3}", "jobs[0].plan", "does not divide"},
      {"plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}", "plan: {tensor: 2, pipeline: 2, micro_batch_size: 1, tensr: 2}",
       "jobs[0].plan.tensr", "tensor"},
      {"    gpus: 32\n", "    gpus: 12\n", "jobs[0].plan", "whole nodes"},
      {"    gpus: 32\n", "    gpus: 32\n    elastic: {min_gpus: 16, max_gpus: 32}\n", "jobs[0].plan", "elastic"},
      {"    global_batch: 64\n    plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}\n", "    global_batch: 64\n",
       "jobs[0].global_batch", "only a job with a plan"},
  });
}

}  // namespace
}  // namespace dlsim::experiment
