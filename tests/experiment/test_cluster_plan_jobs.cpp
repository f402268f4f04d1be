// Cluster jobs with a parallel plan (issue 20): a large model's job is replayed whole on its
// nodes, as a training scenario of the same model, plan and instance type runs it; its work in
// tokens counts its global batch; what cannot be is refused where it is written.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/planner.hpp"
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

TEST(ClusterPlanJobs, APlannedJobRunsTheFastestPlanDlsimPlanFindsForItsNodes) {
  const std::string stated_plan = "plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}";
  const scheduler::JobSpec planned =
      load_scenario_text(test::replaced(kCluster, stated_plan, "plan: planned"), "c.yaml").cluster_sim->variants.at(0).spec.jobs.at(0);
  // The same search as a plan scenario: objective fastest on the job's 4 nodes.
  const std::string search = test::replaced(kTraining, "  " + stated_plan + "\n", "") + "plan: {objective: fastest, nodes: [4]}\n";
  const PlanResults r = search_plans({load_scenario_text(search, "p.yaml")});
  ASSERT_TRUE(r.best);
  const PlanCandidate& best = r.candidates[*r.best];
  EXPECT_EQ(planned.plan, best.label);
  EXPECT_DOUBLE_EQ(planned.iteration_s, best.row.iteration_s);
  // No slower than the plan the other job states.
  const scheduler::JobSpec stated = load_scenario_text(kCluster, "c.yaml").cluster_sim->variants.at(0).spec.jobs.at(0);
  EXPECT_EQ(stated.plan, "d8 t2 p2 m8x1 1f1b");
  EXPECT_LE(planned.iteration_s, stated.iteration_s);
}

TEST(ClusterPlanJobs, APlannedElasticJobIsReplannedAtEachSizeAndRunsAtItsTimes) {
  const std::string text =
      "seed: 3\n"
      "pools:\n"
      "  - {name: train, instance: aws/p4d.24xlarge, nodes: 4}\n"
      "jobs:\n"
      "  - {name: gpt, gpus: 16, model: gpt2-medium, sequence_length: 1024, precision: fp16, optimizer: adam,\n"
      "     global_batch: 32, plan: planned, iterations: 2000, elastic: {min_gpus: 16, max_gpus: 32}}\n";
  const Scenario s = load_scenario_text(text, "c.yaml");
  const scheduler::JobSpec& job = s.cluster_sim->variants.at(0).spec.jobs.at(0);
  ASSERT_EQ(job.sizes.size(), 3u);  // 16, 24 and 32 GPUs: whole nodes
  EXPECT_EQ(job.sizes[0].gpus, 16);
  EXPECT_EQ(job.sizes[2].gpus, 32);
  EXPECT_EQ(job.sizes[0].iteration_s, job.iteration_s);
  // The same job held at 32 GPUs gets the same plan and time as the elastic job's size of 32.
  const std::string fixed = test::replaced(test::replaced(text, "gpus: 16,", "gpus: 32,"), ", elastic: {min_gpus: 16, max_gpus: 32}", "");
  const scheduler::JobSpec held = load_scenario_text(fixed, "c.yaml").cluster_sim->variants.at(0).spec.jobs.at(0);
  EXPECT_EQ(held.plan, job.sizes[2].plan);
  EXPECT_DOUBLE_EQ(held.iteration_s, job.sizes[2].iteration_s);
  EXPECT_NE(job.plan.find("24 GPUs: "), std::string::npos) << job.plan;
  // Alone on the pool it grows to 32 GPUs at once and runs at that size's time, not 16/32 of it.
  EXPECT_LT(job.sizes[2].iteration_s, job.sizes[0].iteration_s);
  const Results r = run(s);
  const auto column = [&](const std::string& name) {
    for (const TableColumn& c : r.jobs_table.columns) {
      if (c.name == name) return c;
    }
    ADD_FAILURE() << "no column " << name;
    return TableColumn{};
  };
  ASSERT_EQ(column("finish").numbers.size(), 1u);
  EXPECT_GE(column("resizes").numbers[0], 1);
  EXPECT_NEAR(column("finish").numbers[0], 2000 * job.sizes[2].iteration_s, 0.01 * 2000 * job.sizes[2].iteration_s);
  EXPECT_EQ(column("plan").texts.at(0), job.plan);
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
      {"plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}", "plan: sometimes", "jobs[0].plan", "planned"},
  });
  // A planned elastic job resizes by whole nodes.
  const std::string text = test::replaced(test::replaced(kCluster, "plan: {tensor: 2, pipeline: 2, micro_batch_size: 1}", "plan: planned"),
                                          "    gpus: 32\n", "    gpus: 32\n    elastic: {min_gpus: 12, max_gpus: 32}\n");
  const ConfigError e = test::error_loading(text);
  EXPECT_EQ(e.key_path(), "jobs[0].elastic") << e.what();
  EXPECT_NE(e.message().find("whole nodes"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace dlsim::experiment
