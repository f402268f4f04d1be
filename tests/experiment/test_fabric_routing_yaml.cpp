// network.fabric.routing: each fabric kind's default, an explicit choice, errors located at the
// key, the resolved YAML, and the collective rows' routing columns (what ECMP's hash
// collisions cost against the balanced reference).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "network/routing.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// 16 nodes of 8 A100 with 8 HDR NICs: 128 NIC ports fill a k = 8 fat-tree.
std::string fat_tree(const std::string& fabric_extra = "") {
  return "seed: 1\ncluster: {instance: azure/Standard_ND96amsr_A100_v4}\n"
         "network:\n  fabric: {kind: fat-tree" + fabric_extra + "}\n"
         "collective: {operation: all-reduce, algorithm: ring, sizes: [256MiB]}\n"
         "sweep: {nodes: [16]}\n";
}

TEST(FabricRoutingYaml, DefaultIsTheFabricKinds) {
  const Scenario s = load_scenario_text(fat_tree(), "r.yaml");
  EXPECT_FALSE(s.network.fabric.routing.has_value());
  EXPECT_EQ(s.topology_for(16).routing(), network::RoutingScheme::d_mod_k);
  const Scenario ls = load_scenario_text(fat_tree(), "r.yaml", {"network.fabric.kind=leaf-spine"});
  EXPECT_EQ(ls.topology_for(16).routing(), network::RoutingScheme::ecmp);
}

TEST(FabricRoutingYaml, ExplicitChoiceWins) {
  const Scenario s = load_scenario_text(fat_tree(", routing: ecmp"), "r.yaml");
  ASSERT_TRUE(s.network.fabric.routing.has_value());
  EXPECT_EQ(*s.network.fabric.routing, network::RoutingScheme::ecmp);
  EXPECT_EQ(s.topology_for(16).routing(), network::RoutingScheme::ecmp);
  const Scenario set = load_scenario_text(fat_tree(), "r.yaml", {"network.fabric.routing=ecmp"});
  EXPECT_EQ(set.topology_for(16).routing(), network::RoutingScheme::ecmp);
}

TEST(FabricRoutingYaml, UnknownSchemeIsLocated) {
  const std::string text = fat_tree(", routing: dmodk");
  const ConfigError e = test::error_loading(text, "r.yaml");
  EXPECT_EQ(e.key_path(), "network.fabric.routing");
  EXPECT_EQ(e.where().file, "r.yaml");
  EXPECT_EQ(e.where().line, test::position_of(text, "dmodk").first);
  EXPECT_EQ(e.where().column, test::position_of(text, "dmodk").second);
  EXPECT_NE(e.message().find("d-mod-k"), std::string::npos) << e.what();
}

TEST(FabricRoutingYaml, DModKOnATorusIsLocated) {
  const std::string text =
      "seed: 1\ncluster: {instance: gcp/tpu-v3-8, nodes: 4}\n"
      "network:\n  fabric: {kind: torus, routing: d-mod-k}\n"
      "collective: {operation: all-reduce, algorithm: ring, sizes: [1MiB]}\n";
  const ConfigError e = test::error_loading(text, "t.yaml");
  EXPECT_EQ(e.key_path(), "network.fabric.routing");
  EXPECT_EQ(e.where().line, test::position_of(text, "d-mod-k").first);
  EXPECT_NE(e.message().find("ecmp"), std::string::npos) << e.what();
}

TEST(FabricRoutingYaml, CollectiveRowsReportTheRoutingCost) {
  const Results dmodk = run(load_scenario_text(fat_tree(), "r.yaml"));
  const Results ecmp = run(load_scenario_text(fat_tree(", routing: ecmp"), "r.yaml"));
  ASSERT_EQ(dmodk.collective_rows.size(), 1u);
  ASSERT_EQ(ecmp.collective_rows.size(), 1u);
  const CollectiveRow& d = dmodk.collective_rows[0];
  const CollectiveRow& e = ecmp.collective_rows[0];
  EXPECT_EQ(d.routing, "d-mod-k");
  EXPECT_EQ(e.routing, "ecmp");
  // D-mod-K is as fast as the balanced reference on this full tree; ECMP's collisions cost.
  EXPECT_NEAR(d.time_alone_s / d.time_balanced_s, 1.0, 1e-3);
  EXPECT_EQ(d.shared_link_routes, 1);
  EXPECT_GT(e.time_alone_s / e.time_balanced_s, 1.5);
  EXPECT_GE(e.shared_link_routes, 2);
  EXPECT_FALSE(e.shared_link.empty());
  EXPECT_DOUBLE_EQ(d.time_balanced_s, e.time_balanced_s);  // one reference, whatever the fabric's scheme
  std::vector<std::string> names;
  for (const TableColumn& c : ecmp.table.columns) names.push_back(c.name);
  for (const char* name : {"routing", "time_balanced", "routing_cost", "shared_link", "shared_link_flows"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << "no column " << name;
  }
  // Same scenario and seed: the same numbers, bit for bit.
  const Results again = run(load_scenario_text(fat_tree(", routing: ecmp"), "r.yaml"));
  EXPECT_EQ(again.collective_rows[0].time_s, e.time_s);
  EXPECT_EQ(again.collective_rows[0].time_balanced_s, e.time_balanced_s);
}

}  // namespace
}  // namespace dlsim::experiment
