// Cluster jobs described by a model (rate from the models layer), their work as iterations,
// duration, data or tokens, trace model mixes, and the shared fabric from YAML.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "models/zoo.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

const std::string kPool =
    "seed: 4\n"
    "pools:\n"
    "  - {name: a, instance: aws/p3dn.24xlarge, nodes: 4, nodes_per_leaf: 2, oversubscription: 4}\n";

const scheduler::ClusterSpec& spec_of(const Scenario& s) { return s.cluster_sim->variants.at(0).spec; }

ConfigError error_of(const std::string& text) { return test::error_loading(text, "c.yaml"); }

TEST(ClusterModelJobs, AModelJobGetsItsRateFromTheModelsLayerAndItsWorkFromTheData) {
  const Scenario s = load_scenario_text(kPool +
                                            "jobs:\n"
                                            "  - {name: bert, gpus: 16, model: bert-large, batch_per_gpu: 16, precision: fp16,\n"
                                            "     data: {samples: 1000000, epochs: 2}}\n"
                                            "  - {name: gpt, gpus: 8, model: gpt2-medium, batch_per_gpu: 4, precision: fp16, tokens: 1e9}\n",
                                        "c.yaml");
  const auto& pool = spec_of(s).pools[0];
  EXPECT_DOUBLE_EQ(pool.nic_bandwidth, 100e9 / 8);  // the catalog's 100 Gbps
  EXPECT_DOUBLE_EQ(pool.oversubscription, 4);
  const scheduler::JobSpec& bert = spec_of(s).jobs[0];
  // fp32 gradients of every parameter are all-reduced across nodes.
  EXPECT_DOUBLE_EQ(bert.gradient_bytes, models::zoo_model("bert-large").parameters() * 4);
  EXPECT_GT(bert.iteration_s, 0);
  EXPECT_GT(bert.overlap_s, 0);
  EXPECT_LE(bert.overlap_s, bert.iteration_s);
  // 2 epochs of 10^6 samples at 16 x 16 samples per iteration: ceil(2e6 / 256) = 7813.
  EXPECT_EQ(bert.iterations, 7813);
  // 10^9 tokens at 8 GPUs x 4 sequences x 1024 tokens: ceil(1e9 / 32768) = 30518.
  EXPECT_EQ(spec_of(s).jobs[1].iterations, 30518);
  // The same model and batch per GPU on fewer GPUs of one node runs the same per-GPU work.
  const Results r = run(s);
  EXPECT_EQ(r.cluster_rows[0].done, 2);
}

TEST(ClusterModelJobs, ADurationIsWorkAtTheUncontendedSpeedOnTheFewestNodes) {
  const Scenario s = load_scenario_text(kPool +
                                            "jobs:\n"
                                            "  - {name: j, gpus: 16, iteration_time: 1s, gradient_bytes: 12.5GB, overlap: 0.5s,"
                                            " duration: 1h}\n",
                                        "c.yaml");
  // 2 nodes: 12.5 GB per node over 12.5 GB/s = 1 s, 0.5 s hidden: 1.5 s per iteration, 2400 in 1 h.
  EXPECT_EQ(spec_of(s).jobs[0].iterations, 2400);
  const Results r = run(s);
  // Alone, packed on 2 nodes of one leaf: exactly the hour.
  EXPECT_DOUBLE_EQ(r.cluster_rows[0].makespan_s, 3600);
  EXPECT_NEAR(r.cluster_rows[0].comm_gpu_hours, 16 * 2400 * 0.5 / 3600.0, 1e-9);
}

TEST(ClusterModelJobs, ATraceModelMixGivesEachJobAModelDeterministically) {
  const std::string text = kPool +
                           "trace:\n"
                           "  format: synthetic\n  jobs: 200\n  mean_interarrival: 2min\n  duration_max: 6h\n"
                           "  gpus: {8: 0.5, 16: 0.5}\n"
                           "  models:\n"
                           "    - {model: resnet50, batch_per_gpu: 64, precision: fp16, weight: 1}\n"
                           "    - {model: bert-large, batch_per_gpu: 16, precision: fp16, weight: 1}\n";
  const Scenario a = load_scenario_text(text, "c.yaml");
  const Scenario b = load_scenario_text(text, "c.yaml");
  const std::set<double> grads{models::zoo_model("resnet50").parameters() * 4, models::zoo_model("bert-large").parameters() * 4};
  std::set<double> seen;
  for (std::size_t i = 0; i < spec_of(a).jobs.size(); ++i) {
    const auto& j = spec_of(a).jobs[i];
    EXPECT_TRUE(grads.count(j.gradient_bytes)) << j.name;
    seen.insert(j.gradient_bytes);
    EXPECT_EQ(j.gradient_bytes, spec_of(b).jobs[i].gradient_bytes);
    EXPECT_EQ(j.iterations, spec_of(b).jobs[i].iterations);
  }
  EXPECT_EQ(seen.size(), 2u);  // both models drawn among 200 jobs
  const Results ra = run(a), rb = run(b);
  EXPECT_EQ(ra.cluster_rows[0].mean_jct_s, rb.cluster_rows[0].mean_jct_s);
  EXPECT_EQ(ra.cluster_rows[0].comm_gpu_hours, rb.cluster_rows[0].comm_gpu_hours);
  EXPECT_GT(ra.cluster_rows[0].comm_gpu_hours, 0);  // 16-GPU jobs span 2 nodes
}

TEST(ClusterModelJobs, TopologyAwarePlacementSpendsLessTimeCommunicatingThanSpread) {
  std::string text = kPool +
                     "trace:\n"
                     "  format: synthetic\n  jobs: 150\n  mean_interarrival: 5min\n  duration_max: 6h\n"
                     "  gpus: {4: 0.4, 8: 0.4, 16: 0.2}\n"
                     "  models:\n    - {model: vgg16, batch_per_gpu: 32, precision: fp16}\n"
                     "sweep:\n  scheduler.placement: [spread, topology-aware]\n";
  const Results r = run(load_scenario_text(text, "c.yaml"));
  ASSERT_EQ(r.cluster_rows.size(), 2u);
  // Spread puts even 4-GPU jobs on several nodes: every one of them all-reduces over NICs that
  // others share; topology-aware keeps jobs of up to 8 GPUs inside one node.
  EXPECT_GT(r.cluster_rows[0].comm_gpu_hours, 2 * r.cluster_rows[1].comm_gpu_hours);
  EXPECT_GT(r.cluster_rows[0].mean_jct_s, r.cluster_rows[1].mean_jct_s);
}

TEST(ClusterModelJobs, ErrorsSayWhereAndWhy) {
  {
    const ConfigError e = error_of(kPool + "jobs:\n  - {name: j, gpus: 8, model: resnet50, batch_per_gpu: 8,"
                                           " iteration_time: 1s, iterations: 10}\n");
    EXPECT_EQ(e.key_path(), "jobs[0].iteration_time");
  }
  {
    // GPT-3 13B data parallel does not fit in a 32 GB V100 (about 16 bytes per parameter).
    const ConfigError e = error_of(kPool + "jobs:\n  - {name: j, gpus: 8, model: gpt3-13b, batch_per_gpu: 1, iterations: 10}\n");
    EXPECT_EQ(e.key_path(), "jobs[0].model");
    EXPECT_NE(e.message().find("GB"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, 5) << e.what();
  }
  {
    const ConfigError e = error_of(kPool + "jobs:\n  - {name: j, gpus: 8, model: resnet50, batch_per_gpu: 8,"
                                           " iterations: 10, duration: 1h}\n");
    EXPECT_NE(e.message().find("once"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(kPool + "jobs:\n  - {name: j, gpus: 8, model: resnet50, batch_per_gpu: 8, tokens: 1e9}\n");
    EXPECT_EQ(e.key_path(), "jobs[0].tokens");
  }
  {
    const ConfigError e = error_of(kPool + "jobs:\n  - {name: j, gpus: 8, iteration_time: 1s, data: {samples: 10, epochs: 1}}\n");
    EXPECT_EQ(e.key_path(), "jobs[0].data");
  }
  {
    const ConfigError e = error_of(kPool + "jobs:\n  - {name: j, gpus: 8, model: resnet51, batch_per_gpu: 8, iterations: 1}\n");
    EXPECT_EQ(e.key_path(), "jobs[0].model");
  }
  {
    const ConfigError e = error_of(kPool + "trace:\n  format: synthetic\n  jobs: 10\n  models: [{model: resnet50}]\n");
    EXPECT_EQ(e.key_path(), "trace.models[0].batch_per_gpu");
  }
  {
    const ConfigError e = error_of("pools:\n  - {name: a, instance: aws/p3dn.24xlarge, nodes: 1, oversubscription: 0.5}\n"
                                   "jobs:\n  - {name: j, gpus: 1, iteration_time: 1s, iterations: 1}\n");
    EXPECT_EQ(e.key_path(), "pools[0].oversubscription");
  }
}

TEST(ClusterModelJobs, AJobAcrossRegionsSharesTheWanLinkAndPaysEgress) {
  const std::string text =
      "pools:\n"
      "  - {name: east, instance: aws/p3dn.24xlarge, nodes: 1, region: us-east-1, zone: us-east-1a}\n"
      "  - {name: west, instance: aws/p3dn.24xlarge, nodes: 1, region: us-west-2, zone: us-west-2a}\n"
      "wan: {bandwidth: 8Gbps}\n"
      "jobs:\n"
      "  - {name: j, gpus: 16, iteration_time: 1s, gradient_bytes: 1GB, iterations: 100}\n";
  const Scenario s = load_scenario_text(text, "c.yaml");
  EXPECT_DOUBLE_EQ(spec_of(s).wan_bandwidth, 1e9);
  const Results r = run(s);
  // 1 GB each way over the 1 GB/s WAN link per iteration (the NICs are faster): 2 s; 0.02 USD/GB
  // at the source for the two ring edges between the regions: 0.04 USD per iteration.
  EXPECT_DOUBLE_EQ(r.cluster_rows[0].makespan_s, 200);
  EXPECT_NEAR(r.cluster_rows[0].jobs_cost - r.cluster_rows[0].compute_cost, 4.0, 1e-6);
  std::string bad = text;
  bad.replace(bad.find("8Gbps"), 5, "8GB");  // a size, not a bandwidth
  const ConfigError e = error_of(bad);
  EXPECT_EQ(e.key_path(), "wan.bandwidth") << e.what();
}

// fabric.sharing: flow runs the jobs on shared links at flow level; the two p3dn jobs spread over
// both nodes (1 GB each way per iteration over 100 Gbps NICs) start together and stay in
// lockstep, so each of their all-reduces meets the other's: slower than the mean-rate model.
TEST(ClusterModelJobs, FabricSharingFlowIsReadRunAndRefusedWhenMisspelt) {
  const std::string text =
      "pools:\n  - {name: a, instance: aws/p3dn.24xlarge, nodes: 2}\n"
      "scheduler: {placement: spread}\n"
      "jobs:\n"
      "  - {name: x, gpus: 8, iteration_time: 0.1s, gradient_bytes: 1.25GB, iterations: 100}\n"
      "  - {name: y, gpus: 8, iteration_time: 0.1s, gradient_bytes: 1.25GB, iterations: 100}\n";
  const Scenario analytical = load_scenario_text(text, "c.yaml");
  EXPECT_EQ(spec_of(analytical).fabric_sharing, scheduler::FabricSharing::analytical);
  const Scenario flow = load_scenario_text(text + "fabric: {sharing: flow}\n", "c.yaml");
  EXPECT_EQ(spec_of(flow).fabric_sharing, scheduler::FabricSharing::flow);
  const Results a = run(analytical), f = run(flow);
  EXPECT_GT(f.cluster_rows[0].makespan_s, a.cluster_rows[0].makespan_s);
  EXPECT_NE(f.resolved_yaml.find("fabric_sharing: flow"), std::string::npos);
  const ConfigError e = error_of(text + "fabric: {sharing: flows}\n");
  EXPECT_EQ(e.key_path(), "fabric.sharing") << e.what();
  EXPECT_EQ(e.where().line, 7) << e.what();
}

}  // namespace
}  // namespace dlsim::experiment
