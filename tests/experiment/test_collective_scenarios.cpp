// Collective scenarios: the shipped contention scenario's slowdown, a bus bandwidth derived by
// hand, size ranges, automatic algorithm choice, the result columns, and the section's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "network/collectives.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// ctest sets DLSIM_SOURCE_DIR (tests/CMakeLists.txt); "" when the binary runs on its own.
std::string source_dir() {
  const char* dir = std::getenv("DLSIM_SOURCE_DIR");
  return dir == nullptr ? "" : dir;
}

std::vector<CollectiveRow> rows_of_size(const Results& r, double bytes) {
  std::vector<CollectiveRow> out;
  for (const CollectiveRow& row : r.collective_rows) {
    if (row.bytes == bytes) out.push_back(row);
  }
  return out;
}

// ---- scenarios/contention-spine.yaml --------------------------------------------------------

// Four p3dn.24xlarge nodes (one 100 Gbps NIC = 12.5e9 B/s each), two per leaf, one spine. Job 0
// runs on nodes 0 and 2, job 1 on nodes 1 and 3, so each job's ring crosses the spine: the 8
// channel flows leaving node 0 (job 0) and node 1 (job 1) all use leaf 0's uplink, and likewise
// back through leaf 1's uplink. The leaf's downlinks total 2 x 12.5e9; its uplink carries that
// over the oversubscription.
//  - oversubscription 2: uplink 12.5e9 = one NIC. Alone, a job's flows get the whole uplink,
//    12.5e9 (its NIC is no tighter); together the two jobs split it, 6.25e9 each, so the
//    bandwidth-bound time doubles: slowdown 2 (the latency part, microseconds against the
//    ~0.17 s of 1 GiB, is not doubled: within 2%).
//  - oversubscription 1: uplink 25e9 carries both jobs at their NICs' full 12.5e9: slowdown 1.
class ContentionSpine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (source_dir().empty()) GTEST_SKIP() << "DLSIM_SOURCE_DIR is not set (run through ctest to find scenarios/)";
  }
  static Results run_with(const std::string& oversubscription) {
    const Scenario s = load_scenario(source_dir() + "/scenarios/contention-spine.yaml",
                                     {"network.fabric.oversubscription=" + oversubscription});
    EXPECT_EQ(s.network.fabric.kind, network::FabricKind::leaf_spine);
    EXPECT_DOUBLE_EQ(s.network.fabric.oversubscription, std::stod(oversubscription));
    return run(s);
  }
};

TEST_F(ContentionSpine, TwoJobsOnAnUplinkOfOneNicRunAtHalfSpeed) {
  const Results r = run_with("2");
  ASSERT_EQ(r.collective_rows.size(), 6u);  // 3 sizes x 2 groups, one node count
  const auto big = rows_of_size(r, kGiB);
  ASSERT_EQ(big.size(), 2u);
  for (const CollectiveRow& row : big) {
    EXPECT_EQ(row.nodes, 4);
    EXPECT_EQ(row.groups, 2);
    EXPECT_EQ(row.ranks, 16);
    EXPECT_EQ(row.algorithm, network::to_string(network::Algorithm::ring));
    EXPECT_NEAR(row.time_s / row.time_alone_s, 2.0, 0.02 * 2.0) << "group " << row.group;
  }
}

TEST_F(ContentionSpine, WithoutOversubscriptionTheJobsDoNotSlowEachOther) {
  const Results r = run_with("1");
  const auto big = rows_of_size(r, kGiB);
  ASSERT_EQ(big.size(), 2u);
  for (const CollectiveRow& row : big) {
    EXPECT_NEAR(row.time_s / row.time_alone_s, 1.0, 0.01) << "group " << row.group;
  }
}

// The slowdown column of the table is what the rows say, row by row.
TEST_F(ContentionSpine, SlowdownColumnIsTimeOverTimeAlone) {
  const Results r = run_with("2");
  const auto column = std::find_if(r.table.columns.begin(), r.table.columns.end(),
                                   [](const TableColumn& c) { return c.name == "slowdown"; });
  ASSERT_NE(column, r.table.columns.end());
  ASSERT_EQ(column->numbers.size(), r.collective_rows.size());
  for (std::size_t i = 0; i < r.collective_rows.size(); ++i) {
    const CollectiveRow& row = r.collective_rows[i];
    EXPECT_DOUBLE_EQ(column->numbers[i], row.time_s / row.time_alone_s);
    EXPECT_GE(column->numbers[i], 1.0 - 1e-9);  // sharing never speeds a group up
  }
}

// ---- a collective scenario written inline ----------------------------------------------------

// Line numbers and columns in the error cases are found in the edited text, not hard-coded.
constexpr const char* kBase = R"(seed: 1
cluster:
  instance: aws/p3dn.24xlarge
collective:
  operation: all-reduce
  algorithm: ring
  sizes: [1GiB]
sweep:
  nodes: [2]
)";

// Ring all-reduce of n = 1 GiB over 2 p3dn.24xlarge nodes (8 x V100 on the NVLink cube-mesh,
// one 100 Gbps EFA NIC) on one switch. Across nodes the ring runs as channels (every ring the
// NVLink search finds inside a node, in every rotation, collectives_plans.cpp ring_channels),
// each over all p = 16 ranks and carrying its share; every channel crosses between the nodes
// twice, 0 -> 1 and back on its closing hop, so each node's single NIC carries 2(p-1)/p * n in
// all per direction. The NIC is the bottleneck at its achievable bandwidth: EFA gets 80% of its
// 12.5e9 B/s line rate (network/link_tech.cpp, NVIDIA/nccl issue 235), 10e9 B/s, far below the
// 120 GB/s of NVLink rings inside a node and the GPUs' PCIe links. So busbw = 10e9 B/s: the
// NCCL protocol at 1 GiB is Simple (full bandwidth) and latency is under 0.1% of the time.
TEST(CollectiveScenario, RingAllReduceBusBandwidthIsTheNicBandwidth) {
  const Scenario s = load_scenario_text(kBase, "c.yaml");
  ASSERT_TRUE(s.collective.has_value());
  ASSERT_EQ(s.network.node.nics, 1);
  ASSERT_DOUBLE_EQ(s.network.node.nic_bandwidth, 12.5e9);
  ASSERT_EQ(s.network.node.nic_tech, network::LinkTech::efa);
  const Results r = run(s);
  ASSERT_EQ(r.collective_rows.size(), 1u);
  const CollectiveRow& row = r.collective_rows[0];
  EXPECT_EQ(row.ranks, 16);
  EXPECT_DOUBLE_EQ(row.bytes, kGiB);
  EXPECT_EQ(row.algorithm, network::to_string(network::Algorithm::ring));
  EXPECT_EQ(row.protocol, network::to_string(network::Protocol::simple));
  EXPECT_NEAR(row.busbw, 0.8 * 12.5e9, 0.01 * 12.5e9);
  EXPECT_NEAR(row.algbw, row.bytes / row.time_s, 1e-9 * row.algbw);
  EXPECT_NEAR(row.busbw, row.algbw * 2.0 * 15 / 16, 1e-9 * row.busbw);
  // One group: alone is the same run.
  EXPECT_DOUBLE_EQ(row.time_alone_s, row.time_s);
}

TEST(CollectiveScenario, SizeRangeExpandsByTheFactor) {
  const Scenario s = load_scenario_text(kBase, "c.yaml", {"collective.sizes={from: 1KiB, to: 1MiB, factor: 4}"});
  const std::vector<double> expected{1024, 4096, 16384, 65536, 262144, 1048576};
  EXPECT_EQ(s.collective->sizes, expected);
  const Results r = run(s);
  ASSERT_EQ(r.collective_rows.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(r.collective_rows[i].bytes, expected[i]);
}

TEST(CollectiveScenario, SizeListIsReadInOrder) {
  const Scenario s = load_scenario_text(kBase, "c.yaml", {"collective.sizes=[8B, 1MB, 2KiB]"});
  EXPECT_EQ(s.collective->sizes, (std::vector<double>{8, 1e6, 2048}));
}

// V100s run NCCL: `auto` is NCCL's tuner's choice, reported per size with its protocol. Small
// messages are latency-bound: LL (the lowest-latency protocol), by a tree across nodes; 1 GiB is
// bandwidth-bound: ring with Simple.
TEST(CollectiveScenario, AutoResolvesToNcclsChoiceInTheRows) {
  const Scenario s = load_scenario_text(kBase, "c.yaml",
                                        {"collective.algorithm=auto", "collective.sizes=[1KiB, 1GiB]", "sweep.nodes=[1, 2]"});
  EXPECT_EQ(s.collective->algorithm, network::Algorithm::automatic);
  const Results r = run(s);
  ASSERT_EQ(r.collective_rows.size(), 4u);
  for (const CollectiveRow& row : r.collective_rows) {
    const bool small = row.bytes < 1e6;
    EXPECT_EQ(row.protocol, small ? "ll" : "simple") << row.nodes << " nodes, " << row.bytes << " B";
    const std::string expected = small && row.nodes > 1 ? "double-binary-tree" : "ring";
    EXPECT_EQ(row.algorithm, expected) << row.nodes << " nodes, " << row.bytes << " B";
  }
}

// Without NCCL (network.collectives.library: ideal) `auto` follows dlsim's documented rule.
TEST(CollectiveScenario, IdealLibraryFollowsTheDocumentedRule) {
  const Scenario s = load_scenario_text(kBase, "c.yaml",
                                        {"collective.algorithm=auto", "collective.sizes=[1KiB, 1GiB]", "sweep.nodes=[1, 2]",
                                         "network.collectives.library=ideal"});
  const Results r = run(s);
  ASSERT_EQ(r.collective_rows.size(), 4u);
  for (const CollectiveRow& row : r.collective_rows) {
    EXPECT_EQ(row.protocol, "simple");
    EXPECT_EQ(row.algorithm, network::to_string(network::choose_algorithm(network::CollectiveKind::all_reduce, row.bytes,
                                                                          row.ranks, row.nodes)))
        << row.nodes << " nodes, " << row.bytes << " B";
  }
}

// Halving-doubling all-reduce on any rank count (MPICH's fold, network/collectives_plans.cpp):
// 3 nodes of 8 GPUs give 24 ranks, 2 groups over 3 nodes give groups of 16 and 8 ranks.
TEST(CollectiveScenario, HalvingDoublingRunsOnNonPowerOfTwoGroups) {
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"collective.algorithm=halving-doubling", "sweep.nodes=[2, 3]"},
        std::vector<std::string>{"collective.algorithm=halving-doubling", "sweep.nodes=[3]", "collective.groups=2"}}) {
    const Results r = run(load_scenario_text(kBase, "c.yaml", sets));
    ASSERT_FALSE(r.collective_rows.empty());
    for (const CollectiveRow& row : r.collective_rows) {
      EXPECT_EQ(row.algorithm, network::to_string(network::Algorithm::halving_doubling));
      EXPECT_GT(row.time_s, 0);
      EXPECT_GT(row.busbw, 0);
    }
  }
}

TEST(CollectiveScenario, ResultTableHasTheCollectiveColumns) {
  const Results r = run(load_scenario_text(kBase, "c.yaml", {"collective.sizes=[1MiB, 4MiB]"}));
  std::vector<std::string> names;
  for (const TableColumn& c : r.table.columns) names.push_back(c.name);
  for (const char* name : {"operation", "algorithm", "size", "time", "algbw", "busbw", "time_alone", "slowdown"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << "no column " << name;
  }
  EXPECT_EQ(r.table.rows(), 2u);
  EXPECT_TRUE(r.rows.empty());  // no training rows in a collective scenario
}

// ---- errors ---------------------------------------------------------------------------------

struct Case {
  std::string name;
  std::vector<std::pair<std::string, std::string>> edits;  // (text of kBase, replacement)
  std::string key_path;
  std::string at;       // the error is at the first occurrence of this text in the edited scenario
  std::string message;  // a substring of message()
};

const std::vector<Case>& cases() {
  static const std::vector<Case> table{
      {"groups_above_nodes", {{"  sizes: [1GiB]\n", "  sizes: [1GiB]\n  groups: 3\n"}}, "collective.groups", "3\n",
       "3 groups need at least as many nodes; 2 given"},
      {"workload_and_collective", {{"sweep:\n", "workload:\n  model: resnet50\nsweep:\n"}}, "collective",
       "operation: all-reduce", "not both"},
      {"unknown_operation", {{"operation: all-reduce", "operation: all-reduc"}}, "collective.operation", "all-reduc",
       "did you mean 'all-reduce'"},
      {"size_without_unit", {{"[1GiB]", "[1024]"}}, "collective.sizes[0]", "1024", "needs a unit"},
      {"size_zero", {{"[1GiB]", "[1MiB, 0B]"}}, "collective.sizes[1]", "0B", "from 1B to 10TB"},
      {"sizes_missing", {{"  sizes: [1GiB]\n", ""}}, "collective.sizes", "operation: all-reduce",
       "missing required key 'sizes'"},
      {"range_factor_one", {{"[1GiB]", "{from: 1KiB, to: 1MiB, factor: 1}"}}, "collective.sizes.factor", "1}",
       "out of range"},
      {"tree_for_all_gather", {{"operation: all-reduce", "operation: all-gather"}, {"algorithm: ring", "algorithm: double-binary-tree"}},
       "collective.algorithm", "double-binary-tree", "all-reduce only"},
      {"unknown_collective_key", {{"  sizes: [1GiB]\n", "  sizes: [1GiB]\n  group: 2\n"}}, "collective.group", "group:",
       "did you mean 'groups'"},
  };
  return table;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CollectiveErrors : public ::testing::TestWithParam<Case> {};

TEST_P(CollectiveErrors, ReportsWhereAndWhy) {
  const Case& c = GetParam();
  std::string text = kBase;
  for (const auto& [from, to] : c.edits) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << "table error: '" << from << "' is not in the scenario";
    text.replace(at, from.size(), to);
  }
  const auto [line, column] = test::position_of(text, c.at);
  ASSERT_GT(line, 0) << "table error: '" << c.at << "' is not in the edited scenario";
  try {
    load_scenario_text(text, "bad.yaml");
    ADD_FAILURE() << "accepted a bad scenario:\n" << text;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "bad.yaml") << e.what();
    EXPECT_EQ(e.key_path(), c.key_path) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, column) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << "message lacks '" << c.message << "': " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than ConfigError: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Table, CollectiveErrors, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(CollectiveErrorsTable, BaseIsValid) {
  const Scenario s = load_scenario_text(kBase, "base.yaml");
  ASSERT_TRUE(s.collective.has_value());
  EXPECT_EQ(s.collective->operation, network::CollectiveKind::all_reduce);
  EXPECT_EQ(s.collective->algorithm, network::Algorithm::ring);
  EXPECT_EQ(s.collective->groups, 1);
  EXPECT_EQ(s.node_counts(), (std::vector<int>{2}));
}

// An unknown operation from --set is reported at the --set, with the suggestion.
TEST(CollectiveErrorsTable, BadOperationFromSetNamesTheSet) {
  try {
    load_scenario_text(kBase, "base.yaml", {"collective.operation=all-reduc"});
    FAIL() << "accepted operation all-reduc";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "--set collective.operation=all-reduc");
    EXPECT_NE(e.message().find("did you mean 'all-reduce'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
