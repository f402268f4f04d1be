// The scenario's `network:` section: the node design defaults from the instance type, overrides
// land in Scenario.network, the fabric per node count, errors located at file, line and key
// path, the resolved YAML, and a training prediction that depends on the fabric.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/network_yaml.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// A collective sweep on `instance` (no training job, so no memory check gets in the way).
std::string collective_on(const std::string& instance, const std::string& network = "") {
  return "cluster:\n  instance: " + instance + "\n  nodes: 2\n" + network +
         "collective:\n  sizes: [1MiB]\n";
}

Scenario load(const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_scenario_text(text, "net.yaml", sets);
}

// ---- defaults from the instance type --------------------------------------------------------

TEST(NetworkDefaults, P4dIsNvswitchWithFourNicsSharingTheNodeBandwidth) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge"));
  EXPECT_EQ(s.network.node.kind, network::NodeKind::nvswitch);
  EXPECT_EQ(s.network.node.accelerators, 8);
  EXPECT_EQ(s.network.node.nics, 4);
  // 400 Gbps node total = 50e9 B/s, over 4 EFA NICs: 12.5e9 B/s (100 Gbps) each.
  EXPECT_DOUBLE_EQ(s.network.node.nic_bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(s.network.node.nic_bandwidth * s.network.node.nics, s.cluster.instance.network_bandwidth);
  // Without a network section: one non-blocking switch, switch links at the NIC figure.
  EXPECT_EQ(s.network.fabric.kind, network::FabricKind::single_switch);
  EXPECT_DOUBLE_EQ(s.network.fabric.link_bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(s.network.fabric.oversubscription, 1.0);
  EXPECT_FALSE(s.network.torus_dims_given);
  EXPECT_EQ(s.network.all_reduce, network::Algorithm::automatic);
}

TEST(NetworkDefaults, P3IsHybridCubeMeshWithTheIntraNodeFigureOverSixLinks) {
  const Scenario s = load(collective_on("aws/p3.16xlarge"));
  EXPECT_EQ(s.network.node.kind, network::NodeKind::hybrid_cube_mesh);
  ASSERT_GT(s.cluster.instance.intra_node_bandwidth, 0);
  // The instance's per-GPU NVLink total spread over the V100's 6 NVLinks.
  EXPECT_DOUBLE_EQ(s.network.node.link_bandwidth, s.cluster.instance.intra_node_bandwidth / 6);
  EXPECT_EQ(s.network.node.nics, 1);
  EXPECT_DOUBLE_EQ(s.network.node.nic_bandwidth, 25e9 / 8);  // 25 Gbps
}

TEST(NetworkDefaults, PcieInstanceIsPcie) {
  const Scenario s = load(collective_on("aws/g4dn.12xlarge"));
  EXPECT_EQ(s.network.node.kind, network::NodeKind::pcie);
  EXPECT_EQ(s.network.node.accelerators, 4);
  EXPECT_DOUBLE_EQ(s.network.node.link_bandwidth, s.cluster.instance.intra_node_bandwidth);
}

TEST(NetworkDefaults, TpuHostIsATpuBoard) {
  const Scenario s = load(collective_on("gcp/tpu-v3-8"));
  EXPECT_EQ(s.network.node.kind, network::NodeKind::tpu_board);
  EXPECT_EQ(s.network.node.accelerators, 4);
}

// node_spec_for is what the loader uses: it must agree with the loaded scenario.
TEST(NetworkDefaults, NodeSpecForMatchesTheLoadedDefault) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge"));
  const network::NodeSpec n = node_spec_for(s.cluster.instance, s.cluster.device);
  EXPECT_EQ(n.kind, s.network.node.kind);
  EXPECT_EQ(n.nics, s.network.node.nics);
  EXPECT_DOUBLE_EQ(n.nic_bandwidth, s.network.node.nic_bandwidth);
  EXPECT_DOUBLE_EQ(n.link_bandwidth, s.network.node.link_bandwidth);
  EXPECT_DOUBLE_EQ(n.pcie_bandwidth, s.network.node.pcie_bandwidth);
}

// ---- overrides --------------------------------------------------------------------------------

TEST(NetworkOverrides, FewerNicsKeepTheNodeTotal) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge"), {"network.node.nics=2"});
  EXPECT_EQ(s.network.node.nics, 2);
  EXPECT_DOUBLE_EQ(s.network.node.nic_bandwidth, 25e9);  // 400 Gbps over 2 NICs
  const Scenario t = load(collective_on("aws/p4d.24xlarge"), {"network.node.nics=2", "network.node.nic_bandwidth=50Gbps"});
  EXPECT_DOUBLE_EQ(t.network.node.nic_bandwidth, 6.25e9);
}

// The fabric's switch links default to the NIC figure as overridden, not the instance's.
TEST(NetworkOverrides, FabricLinksFollowTheOverriddenNic) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge"), {"network.node.nic_bandwidth=200Gbps"});
  EXPECT_DOUBLE_EQ(s.network.node.nic_bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(s.network.fabric.link_bandwidth, 25e9);
  const Scenario t = load(collective_on("aws/p4d.24xlarge"),
                          {"network.node.nic_bandwidth=200Gbps", "network.fabric.link_bandwidth=400Gbps"});
  EXPECT_DOUBLE_EQ(t.network.fabric.link_bandwidth, 50e9);
}

TEST(NetworkOverrides, NodeKindAndLinkFiguresCanBeGiven) {
  const Scenario s = load(collective_on("aws/p3.16xlarge",
                                        "network:\n  node: {kind: nvswitch, link_bandwidth: 300GB/s, link_latency: 1us}\n"));
  EXPECT_EQ(s.network.node.kind, network::NodeKind::nvswitch);
  EXPECT_DOUBLE_EQ(s.network.node.link_bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(s.network.node.link_latency_s, 1e-6);
}

TEST(NetworkOverrides, LeafSpineLandsInTheScenarioAndFabricForSetsNodes) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge") + "sweep:\n  nodes: [2, 8]\n",
                          {"network.fabric.kind=leaf-spine", "network.fabric.oversubscription=3",
                           "network.fabric.nodes_per_leaf=4", "network.fabric.spines=2"});
  EXPECT_EQ(s.network.fabric.kind, network::FabricKind::leaf_spine);
  EXPECT_DOUBLE_EQ(s.network.fabric.oversubscription, 3.0);
  EXPECT_EQ(s.network.fabric.nodes_per_leaf, 4);
  EXPECT_EQ(s.network.fabric.spines, 2);
  for (int nodes : {2, 8, 5}) {
    const network::FabricSpec f = s.fabric_for(nodes);
    EXPECT_EQ(f.nodes, nodes);
    EXPECT_EQ(f.kind, network::FabricKind::leaf_spine);
    EXPECT_DOUBLE_EQ(f.oversubscription, 3.0);
    EXPECT_EQ(f.nodes_per_leaf, 4);
  }
}

TEST(NetworkOverrides, AllReduceAlgorithmOfTrainingIsRead) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge"), {"network.collectives.all_reduce=double-binary-tree"});
  EXPECT_EQ(s.network.all_reduce, network::Algorithm::double_binary_tree);
}

int product(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 1, std::multiplies<>()); }

TEST(NetworkTorus, WithoutDimsEachNodeCountGetsATwoDimensionalShapeOfAllChips) {
  const Scenario s = load(collective_on("gcp/tpu-v3-8", "network:\n  fabric: {kind: torus}\n") +
                          "sweep:\n  nodes: [1, 2, 8, 16]\n");
  EXPECT_FALSE(s.network.torus_dims_given);
  for (int nodes : s.node_counts()) {
    const network::FabricSpec f = s.fabric_for(nodes);
    ASSERT_EQ(f.dims.size(), 2u) << nodes << " nodes";
    EXPECT_EQ(product(f.dims), nodes * 4) << nodes << " nodes";
    EXPECT_EQ(f.nodes, nodes);
  }
  // The most square shape: 64 chips -> 8 x 8; 8 chips -> 2 x 4.
  EXPECT_EQ(s.fabric_for(16).dims, (std::vector<int>{8, 8}));
  EXPECT_EQ(s.fabric_for(2).dims, (std::vector<int>{2, 4}));
  EXPECT_EQ(default_torus_dims(12), (std::vector<int>{3, 4}));
  EXPECT_EQ(default_torus_dims(7), (std::vector<int>{1, 7}));
}

TEST(NetworkTorus, GivenDimsAreKept) {
  const Scenario s = load(collective_on("gcp/tpu-v3-8", "network:\n  fabric: {kind: torus, dims: [2, 2, 2]}\n"));
  EXPECT_TRUE(s.network.torus_dims_given);
  EXPECT_EQ(s.fabric_for(2).dims, (std::vector<int>{2, 2, 2}));
}

// ---- errors: file, line, column, key path, message ----------------------------------------

// A valid scenario with a network section; the cases below change one thing in it.
constexpr const char* kBase = R"(seed: 1
cluster:
  instance: aws/p4d.24xlarge
  nodes: 2
network:
  node: {nics: 4}
  fabric: {kind: leaf-spine, nodes_per_leaf: 2, oversubscription: 1}
collective:
  sizes: [1MiB]
sweep:
  nodes: [2, 4]
)";

struct Case {
  std::string name;
  std::string from;      // text of kBase that is replaced; must occur in it
  std::string to;        // its replacement
  std::string key_path;  // expected ConfigError::key_path()
  std::string at;        // the error is located at the first occurrence of this text in the new
                         // scenario ("" = located at a --set, no line)
  std::string message;   // a substring message() must contain
  std::vector<std::string> sets = {};
  std::string file = "bad.yaml";
};

const std::vector<Case>& cases() {
  static const std::vector<Case> table{
      {"unknown_fabric_kind", "kind: leaf-spine", "kind: leaf_spine", "network.fabric.kind", "leaf_spine",
       "did you mean 'leaf-spine'"},
      {"unknown_node_kind", "{nics: 4}", "{kind: nvlink-mesh}", "network.node.kind", "nvlink-mesh", "allowed: nvswitch"},
      {"odd_fat_tree_k", "{kind: leaf-spine, nodes_per_leaf: 2, oversubscription: 1}", "{kind: fat-tree, k: 5}",
       "network.fabric.k", "5}", "must be even"},
      // dims 4 x 4 = 16 chips fit 2 nodes of 8 but not the sweep's 4 nodes (32 chips): the
      // error is at the fabric and names the node count.
      {"torus_dims_mismatch", "{kind: leaf-spine, nodes_per_leaf: 2, oversubscription: 1}", "{kind: torus, dims: [4, 4]}",
       "network.fabric", "{kind: torus", "for 4 nodes"},
      {"torus_one_dim", "{kind: leaf-spine, nodes_per_leaf: 2, oversubscription: 1}", "{kind: torus, dims: [16]}",
       "network.fabric.dims", "[16]", "expected 2 or 3 torus sizes"},
      {"oversubscription_below_one", "oversubscription: 1", "oversubscription: 0.5", "network.fabric.oversubscription",
       "0.5", "out of range"},
      {"nics_above_accelerators", "{nics: 4}", "{nics: 9}", "network.node.nics", "9}", "out of range"},
      {"nics_zero", "{nics: 4}", "{nics: 0}", "network.node.nics", "0}", "out of range"},
      {"unknown_fabric_key", "oversubscription: 1", "oversubscriptoin: 1", "network.fabric.oversubscriptoin",
       "oversubscriptoin", "did you mean 'oversubscription'"},
      {"unknown_network_key", "  node: {nics: 4}\n", "  node: {nics: 4}\n  fabrik: {}\n", "network.fabrik", "fabrik",
       "did you mean 'fabric'"},
      {"nic_bandwidth_without_unit", "{nics: 4}", "{nic_bandwidth: 100}", "network.node.nic_bandwidth", "100}",
       "needs a unit"},
      {"unknown_all_reduce", "  node: {nics: 4}\n", "  node: {nics: 4}\n  collectives: {all_reduce: rign}\n",
       "network.collectives.all_reduce", "rign", "did you mean 'ring'"},
      // A bad value from --set is reported at the --set.
      {"set_fabric_kind", "", "", "network.fabric.kind", "", "did you mean 'leaf-spine'",
       {"network.fabric.kind=leaf_spine"}, "--set network.fabric.kind=leaf_spine"},
  };
  return table;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class NetworkErrors : public ::testing::TestWithParam<Case> {};

TEST_P(NetworkErrors, ReportsWhereAndWhy) {
  const Case& c = GetParam();
  std::string text = kBase;
  if (!c.from.empty()) {
    const auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << "table error: '" << c.from << "' is not in the base scenario";
    text.replace(at, c.from.size(), c.to);
  }
  int line = 0;
  int column = 0;
  if (!c.at.empty()) {
    std::tie(line, column) = test::position_of(text, c.at);
    ASSERT_GT(line, 0) << "table error: '" << c.at << "' is not in the scenario";
  }
  try {
    load_scenario_text(text, "bad.yaml", c.sets);
    ADD_FAILURE() << "accepted a bad scenario:\n" << text;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, c.file) << e.what();
    EXPECT_EQ(e.key_path(), c.key_path) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    if (column > 0) {
      EXPECT_EQ(e.where().column, column) << e.what();
    }
    EXPECT_NE(e.message().find(c.message), std::string::npos) << "message lacks '" << c.message << "': " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.key_path + ": "), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than ConfigError: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Table, NetworkErrors, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(NetworkErrorsTable, BaseIsValid) {
  const Scenario s = load_scenario_text(kBase, "base.yaml");
  EXPECT_EQ(s.network.fabric.kind, network::FabricKind::leaf_spine);
  EXPECT_EQ(s.network.fabric.nodes_per_leaf, 2);
  EXPECT_EQ(s.node_counts(), (std::vector<int>{2, 4}));
}

// The torus mismatch message says which sweep point fails and how many chips it has.
TEST(NetworkErrorsTable, TorusMismatchNamesTheChipCount) {
  std::string text = kBase;
  const std::string from = "{kind: leaf-spine, nodes_per_leaf: 2, oversubscription: 1}";
  text.replace(text.find(from), from.size(), "{kind: torus, dims: [4, 4]}");
  try {
    load_scenario_text(text, "bad.yaml");
    FAIL() << "accepted dims [4, 4] for 4 nodes of 8 accelerators";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("4 nodes"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("32"), std::string::npos) << e.what();
  }
}

// ---- resolved YAML ------------------------------------------------------------------------------

TEST(NetworkResolved, ResolvedYamlHoldsNodeAndFabric) {
  const Scenario s = load_scenario_text(kBase, "base.yaml");
  const YAML::Node r = YAML::Load(resolved_yaml(s));
  ASSERT_TRUE(r["network"].IsMap()) << resolved_yaml(s);
  EXPECT_EQ(r["network"]["fabric"]["kind"].as<std::string>(), "leaf-spine");
  EXPECT_EQ(r["network"]["node"]["kind"].as<std::string>(), "nvswitch");
  EXPECT_EQ(r["network"]["node"]["nics"].as<int>(), 4);
  EXPECT_DOUBLE_EQ(r["network"]["node"]["nic_bandwidth_bytes_per_s"].as<double>(), 12.5e9);
  EXPECT_EQ(r["network"]["fabric"]["nodes_per_leaf"].as<int>(), 2);
  EXPECT_DOUBLE_EQ(r["network"]["fabric"]["oversubscription"].as<double>(), 1.0);

  const Scenario p3 = load(collective_on("aws/p3.16xlarge", "network:\n  fabric: {kind: torus, dims: [4, 4]}\n"));
  const YAML::Node q = YAML::Load(resolved_yaml(p3));
  EXPECT_EQ(q["network"]["node"]["kind"].as<std::string>(), "hybrid-cube-mesh");
  EXPECT_EQ(q["network"]["fabric"]["kind"].as<std::string>(), "torus");
  EXPECT_EQ(q["network"]["fabric"]["dims"].as<std::vector<int>>(), (std::vector<int>{4, 4}));
}

TEST(NetworkResolved, ResultsCarryTheResolvedNetwork) {
  const Scenario s = load_scenario_text(kBase, "base.yaml", {"sweep.nodes=[2]"});
  const Results results = run(s);
  const YAML::Node r = YAML::Load(results.resolved_yaml);
  EXPECT_EQ(r["network"]["fabric"]["kind"].as<std::string>(), "leaf-spine");
  EXPECT_EQ(r["network"]["node"]["kind"].as<std::string>(), "nvswitch");
}

// ---- the fabric changes the training prediction ---------------------------------------------

// ResNet-50 on 16 p3.16xlarge nodes, two per leaf under one spine. At oversubscription 4 a leaf's
// uplink carries a quarter of its two 25 Gbps NICs (12.5 Gbps), so every ring hop between leaves
// runs at half the NIC rate; the gradient all-reduce takes longer and the last buckets' exposed
// part grows: throughput must drop.
constexpr const char* kTraining = R"(cluster:
  instance: aws/p3.16xlarge
  nodes: 16
network:
  fabric: {kind: leaf-spine, nodes_per_leaf: 2, spines: 1}
workload:
  model: resnet50
  precision: fp16
  batch: {per_device: 256}
  iterations: 100
)";

TEST(NetworkTraining, OversubscribedSpineLowersThroughput) {
  const Scenario full = load_scenario_text(kTraining, "train.yaml", {"network.fabric.oversubscription=1"});
  const Scenario thin = load_scenario_text(kTraining, "train.yaml", {"network.fabric.oversubscription=4"});
  ASSERT_DOUBLE_EQ(thin.network.fabric.oversubscription, 4.0);
  const Results a = run(full);
  const Results b = run(thin);
  ASSERT_EQ(a.rows.size(), 1u);
  ASSERT_EQ(b.rows.size(), 1u);
  EXPECT_EQ(a.rows[0].accelerators, 128);
  EXPECT_LT(b.rows[0].samples_per_s, a.rows[0].samples_per_s);
  EXPECT_GT(b.rows[0].allreduce_s, a.rows[0].allreduce_s);
  EXPECT_GT(b.rows[0].exposed_comm_s, a.rows[0].exposed_comm_s);
  // The kernels do not depend on the network; the SMs its collectives hold while they run beside
  // them do: the slower spine keeps them longer.
  EXPECT_DOUBLE_EQ(b.rows[0].compute_s - b.rows[0].held_sm_s, a.rows[0].compute_s - a.rows[0].held_sm_s);
  EXPECT_GT(b.rows[0].held_sm_s, a.rows[0].held_sm_s);
}

}  // namespace
}  // namespace dlsim::experiment
