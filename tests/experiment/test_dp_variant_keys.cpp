// workload.plan.gradient_compression and workload.plan.parameter_server: the keys reach the plan
// (with the instance's figures where left out), the results carry the new columns, and every
// error is located at the key that decides it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/plan_yaml.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// ResNet-50 on four p3.16xlarge nodes (25 Gbps); the plan's lines follow.
const std::string kScenario =
    "cluster:\n  instance: aws/p3.16xlarge\n  nodes: 4\n"
    "workload:\n  model: resnet50\n  precision: fp16\n  batch: {per_device: 64}\n  iterations: 10\n  plan:\n";

TEST(DataParallelVariantKeys, CompressionReachesThePlanAndTheColumns) {
  const Scenario s = load_scenario_text(kScenario + "    gradient_compression: {method: top-k, ratio: 0.001}\n", "c.yaml");
  const models::ParallelPlan p = s.plan_for(4);
  EXPECT_EQ(p.compression.method, models::CompressionMethod::top_k);
  EXPECT_EQ(p.compression.ratio, 0.001);
  EXPECT_NE(describe_plan(p).find("top-k-0.001"), std::string::npos) << describe_plan(p);
  const Results r = run(s);
  EXPECT_EQ(r.rows.at(0).gradient_compression, "top-k");
  EXPECT_GT(r.rows.at(0).compression_s, 0);
  EXPECT_GT(r.rows.at(0).gradient_wire_bytes, 0);
  EXPECT_NE(r.resolved_yaml.find("method: top-k"), std::string::npos) << r.resolved_yaml;
  const Results plain = run(load_scenario_text(kScenario + "    data: 32\n", "c.yaml"));
  EXPECT_EQ(plain.rows.at(0).gradient_compression, "none");
  EXPECT_EQ(plain.rows.at(0).compression_s, 0);
  EXPECT_LT(r.rows.at(0).gradient_wire_bytes, plain.rows.at(0).gradient_wire_bytes / 10);
  for (const std::string column : {"gradient_compression", "gradient_wire_bytes", "compression_time", "staleness"}) {
    bool found = false;
    for (const TableColumn& c : r.table.columns) found = found || c.name == column;
    EXPECT_TRUE(found) << column;
  }
}

TEST(DataParallelVariantKeys, ParameterServersTakeTheInstanceFiguresWhereLeftOut) {
  const Scenario s = load_scenario_text(
      kScenario + "    parameter_server: {servers: 2, placement: dedicated, synchronous: false, staleness: 3}\n", "ps.yaml");
  const models::ParallelPlan p = s.plan_for(4);
  EXPECT_TRUE(p.parameter_server.enabled);
  EXPECT_EQ(p.parameter_server.servers, 2);
  EXPECT_FALSE(p.parameter_server.synchronous);
  EXPECT_EQ(p.parameter_server.staleness, 3);
  EXPECT_EQ(p.parameter_server.worker_nic, s.cluster.instance.network_bandwidth);
  EXPECT_EQ(p.parameter_server.server_nic, s.cluster.instance.network_bandwidth);
  EXPECT_EQ(p.parameter_server.server_memory_bandwidth, kDefaultServerMemoryBandwidth);
  EXPECT_EQ(p.parameter_server.replicas_per_node, 8);
  EXPECT_NE(describe_plan(p).find("ps2-ded-async3"), std::string::npos) << describe_plan(p);
  const Results r = run(s);
  EXPECT_LE(r.rows.at(0).staleness, 3);
  EXPECT_EQ(r.rows.at(0).optimizer_s, 0);

  const models::ParallelPlan given =
      load_scenario_text(kScenario + "    parameter_server: {servers: 1, server_nic: 100Gbps, server_memory_bandwidth: 200GB/s}\n", "ps.yaml")
          .plan_for(4);
  EXPECT_EQ(given.parameter_server.server_nic, 100e9 / 8);
  EXPECT_EQ(given.parameter_server.server_memory_bandwidth, 200e9);

  // Dedicated servers are billed at their price, beside the four nodes.
  const Results unpriced = run(load_scenario_text(kScenario + "    parameter_server: {servers: 2}\n", "ps.yaml"));
  const Results priced = run(load_scenario_text(kScenario + "    parameter_server: {servers: 2, server_price: 3 USD/h}\n", "ps.yaml"));
  EXPECT_DOUBLE_EQ(priced.rows.at(0).cost_per_hour, unpriced.rows.at(0).cost_per_hour + 6);
  EXPECT_GT(priced.rows.at(0).cost_to_train, unpriced.rows.at(0).cost_to_train);
}

// Each bad edit is rejected at the key that decides it.
TEST(DataParallelVariantKeys, ErrorsAreLocatedAtTheKey) {
  const std::vector<test::KeyErrorCase> cases{
      {"unknown_method", "    gradient_compression: {method: zip}\n", "workload.plan.gradient_compression.method", "zip", "one-bit"},
      {"ratio_without_top_k", "    gradient_compression: {method: int8, ratio: 0.1}\n", "workload.plan.gradient_compression.ratio",
       "0.1", "needs method: top-k"},
      {"ratio_out_of_range", "    gradient_compression: {method: top-k, ratio: 2}\n", "workload.plan.gradient_compression.ratio", "2}",
       "out of range"},
      {"rank_without_powersgd", "    gradient_compression: {method: one-bit, rank: 2}\n", "workload.plan.gradient_compression.rank",
       "2}", "needs method: powersgd"},
      {"rank_zero", "    gradient_compression: {method: powersgd, rank: 0}\n", "workload.plan.gradient_compression.rank", "0}",
       "out of range"},
      {"compression_with_zero", "    zero_stage: 1\n    gradient_compression: {method: int8}\n",
       "workload.plan.gradient_compression.method", "int8", "needs zero_stage: 0"},
      {"unknown_compression_key", "    gradient_compression: {method: int8, bits: 4}\n", "workload.plan.gradient_compression.bits",
       "bits", ""},
      {"unknown_placement", "    parameter_server: {placement: remote}\n", "workload.plan.parameter_server.placement", "remote",
       "colocated"},
      {"staleness_when_synchronous", "    parameter_server: {staleness: 2}\n", "workload.plan.parameter_server.staleness", "2}",
       "needs synchronous: false"},
      {"zero_servers", "    parameter_server: {servers: 0}\n", "workload.plan.parameter_server.servers", "0}", "out of range"},
      {"too_many_colocated", "    parameter_server: {servers: 8, placement: colocated}\n", "workload.plan.parameter_server.servers",
       "8,", "co-located servers need as many worker nodes"},
      {"server_nic_colocated", "    parameter_server: {placement: colocated, server_nic: 10Gbps}\n",
       "workload.plan.parameter_server.server_nic", "10Gbps", "needs placement: dedicated"},
      {"server_with_compression", "    gradient_compression: {method: int8}\n    parameter_server: {servers: 2}\n",
       "workload.plan.gradient_compression", "{method", "parameter servers"},
      {"server_price_colocated", "    parameter_server: {placement: colocated, server_price: 1 USD/h}\n",
       "workload.plan.parameter_server.server_price", "1 USD", "needs placement: dedicated"},
      {"bad_bandwidth_unit", "    parameter_server: {server_nic: 10GiB}\n", "workload.plan.parameter_server.server_nic", "10GiB", ""}};
  for (const test::KeyErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    test::expect_error_at(kScenario + c.edit, c);
  }
}

}  // namespace
}  // namespace dlsim::experiment
