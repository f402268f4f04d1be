// A scenario's sweep section (grid, zip, random) and the sweep journal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>

#include <unistd.h>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/sweep_journal.hpp"
#include "experiment/sweep.hpp"
#include "experiment/sweep_spec.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

const std::string kBase = R"(seed: 3
cluster: {instance: aws/p3.16xlarge, nodes: 1}
workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, iterations: 10}
)";

Scenario load(const std::string& sweep) { return load_scenario_text(kBase + sweep, "s.yaml"); }

std::string value(const std::string& set) { return set.substr(set.find('=') + 1); }

TEST(SweepSection, GridTimesZipTimesSamplesInOrder) {
  const Scenario s = load(R"(sweep:
  grid: {workload.precision: [fp16, fp32], cluster.nodes: [1, 2, 4]}
  zip: {workload.batch.per_device: [16, 32], workload.iterations: [5, 10]}
  random: {samples: 2, keys: {workload.data_parallel.bucket: {uniform: [5MiB, 50MiB]}}}
)");
  const auto v = expand(s.sweep.variants);
  ASSERT_EQ(v.size(), 2u * 3u * 2u * 2u);
  EXPECT_EQ(v[0][0], "workload.precision=fp16");
  EXPECT_EQ(v[0][1], "cluster.nodes=1");
  EXPECT_EQ(v[0][2], "workload.batch.per_device=16");
  EXPECT_EQ(v[0][3], "workload.iterations=5");  // zipped: 16 goes with 5
  EXPECT_EQ(v[2][2], "workload.batch.per_device=32");
  EXPECT_EQ(v[2][3], "workload.iterations=10");
  EXPECT_EQ(v[4][1], "cluster.nodes=2");       // grid: the last grid key after zip x samples
  EXPECT_EQ(v[12][0], "workload.precision=fp32");
  // The same two samples at every grid point and zip position.
  EXPECT_EQ(v[0][4], v[2][4]);
  EXPECT_EQ(v[1][4], v[13][4]);
  EXPECT_NE(v[0][4], v[1][4]);
}

TEST(SweepSection, RandomSamplesFollowTheSeedAndStayInRange) {
  const std::string keys = R"(    keys:
      cluster.nodes: {integer: [2, 5]}
      workload.precision: {choice: [fp16, fp32]}
      workload.data_parallel.bucket: {log_uniform: [1MiB, 64MiB]}
)";
  const auto a = expand(load("sweep:\n  random:\n    samples: 200\n" + keys).sweep.variants);
  const auto b = expand(load("sweep:\n  random:\n    samples: 200\n" + keys).sweep.variants);
  const auto c = expand(load("sweep:\n  random:\n    samples: 200\n    seed: 99\n" + keys).sweep.variants);
  EXPECT_EQ(a, b);  // same seed (the scenario's, 3), same samples
  EXPECT_NE(a, c);
  std::set<std::string> nodes, precisions;
  for (const auto& v : a) {
    nodes.insert(value(v[0]));
    precisions.insert(value(v[1]));
    const double mib = std::stod(value(v[2]));
    EXPECT_GE(mib, 1.0);
    EXPECT_LE(mib, 64.0);
    EXPECT_EQ(value(v[2]).substr(value(v[2]).size() - 3), "MiB");
  }
  // 200 draws of 4 integers and 2 choices: all appear (each misses with probability < 1e-20).
  EXPECT_EQ(nodes, (std::set<std::string>{"2", "3", "4", "5"}));
  EXPECT_EQ(precisions, (std::set<std::string>{"fp16", "fp32"}));
}

TEST(SweepSection, BadSectionsSayWhereAndWhy) {
  const auto where = [](const std::string& sweep) { return test::error_loading(kBase + sweep, "s.yaml"); };
  ConfigError e = where("sweep:\n  zip: {workload.iterations: [1, 2], cluster.nodes: [1, 2, 3]}\n");
  EXPECT_EQ(e.key_path(), "sweep.zip.cluster.nodes");
  EXPECT_NE(std::string(e.what()).find("same length"), std::string::npos);
  e = where("sweep:\n  random: {samples: 3, keys: {cluster.nodes: {normal: [1, 2]}}}\n");
  EXPECT_NE(std::string(e.what()).find("unknown distribution 'normal'"), std::string::npos);
  e = where("sweep:\n  random: {samples: 3, keys: {cluster.nodes: {uniform: [4, 2]}}}\n");
  EXPECT_NE(std::string(e.what()).find("lo <= hi"), std::string::npos);
  e = where("sweep:\n  grid: {cluster.nodes: [1, 2]}\n  zip: {cluster.nodes: [3, 4]}\n");
  EXPECT_NE(std::string(e.what()).find("swept twice"), std::string::npos);
  e = where("sweep:\n  grid: {cluster.nodes: []}\n");
  EXPECT_EQ(e.key_path(), "sweep.grid.cluster.nodes");
  EXPECT_EQ(e.where().line, 5);
}

TEST(SweepSection, ASingleRunOfAScenarioWithVariantsIsRefused) {
  const Scenario s = load("sweep:\n  grid: {cluster.nodes: [1, 2]}\n");
  try {
    run(s);
    FAIL() << "ran a scenario with sweep.grid";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dlsim sweep"), std::string::npos);
  }
}

TEST(SweepSection, ClusterScenariosKeepTheirOwnSweepBesideTheVariants) {
  const std::string text = R"(pools: [{name: p, instance: aws/p3.16xlarge, nodes: 2}]
jobs: [{name: a, gpus: 8, iterations: 100, iteration_time: 1s}]
sweep:
  scheduler.policy: [fifo, las]
  grid:
    pools[0].nodes: [2, 4]
  random:
    samples: 3
    keys:
      pools[0].price: {uniform: [10 USD/h, 20 USD/h]}
)";
  const Scenario s = load_scenario_text(text, "c.yaml");
  ASSERT_TRUE(s.cluster_sim);
  EXPECT_EQ(s.cluster_sim->variants.size(), 2u);  // fifo, las: inside each run
  const auto variants = expand(s.sweep.variants);
  ASSERT_EQ(variants.size(), 6u);                   // 2 grid points x 3 samples
  SweepSource source;
  source.text = text;
  source.name = "c.yaml";
  const std::vector<Scenario> loaded = load_variants(source, variants);
  for (std::size_t v = 0; v < loaded.size(); ++v) {
    const double price = loaded[v].cluster_sim->variants.front().spec.pools[0].price_per_node_hour;
    EXPECT_GE(price, 10.0);
    EXPECT_LE(price, 20.0);
    EXPECT_EQ(std::to_string(price).substr(0, 4), value(variants[v][1]).substr(0, 4)) << variants[v][1];  // "12.3 USD/h" read as 12.3
    EXPECT_TRUE(loaded[v].sweep.variants.empty());  // a variant is one run
  }
}

Table sample_table() {
  Table t;
  t.columns.push_back({"x", "s", "a time", TableColumn::Type::real, {1.5, std::numeric_limits<double>::quiet_NaN(), -0.0}, {}});
  t.columns.push_back({"n", "", "a count", TableColumn::Type::integer, {1, 2, 3}, {}});
  t.columns.push_back({"name", "", "a name", TableColumn::Type::text, {}, {"a", "", "c\nd"}});
  return t;
}

TEST(SweepJournal, TablesRoundTripBitForBit) {
  const Table t = sample_table();
  const Table back = deserialize_table(serialize_table(t));
  ASSERT_EQ(back.columns.size(), 3u);
  EXPECT_EQ(0, std::memcmp(back.columns[0].numbers.data(), t.columns[0].numbers.data(), 3 * sizeof(double)));
  EXPECT_EQ(back.columns[2].texts, t.columns[2].texts);
  EXPECT_EQ(back.columns[1].type, TableColumn::Type::integer);
  EXPECT_THROW(deserialize_table(serialize_table(t).substr(0, 20)), std::runtime_error);
}

TEST(SweepJournal, ResumeKeepsWholeRecordsDropsATornTailAndRefusesAnotherSweep) {
  const std::string path = ::testing::TempDir() + "/journal-" + std::to_string(::getpid());
  {
    SweepJournal j(path, 42, 10, false);
    j.append(3, sample_table());
    j.append(7, sample_table());
  }
  const auto whole = std::filesystem::file_size(path);
  {
    std::ofstream torn(path, std::ios::binary | std::ios::app);
    torn << "VREC" << std::string(12, '\x01');  // a record cut short by a kill
  }
  {
    SweepJournal j(path, 42, 10, true);
    EXPECT_EQ(j.finished().size(), 2u);
    EXPECT_TRUE(j.finished().count(3) && j.finished().count(7));
    EXPECT_EQ(std::filesystem::file_size(path), whole);  // the torn tail is gone
    j.append(5, sample_table());
  }
  EXPECT_EQ(SweepJournal(path, 42, 10, true).finished().size(), 3u);
  EXPECT_THROW(SweepJournal(path, 43, 10, true), std::runtime_error);  // another sweep
  EXPECT_EQ(SweepJournal(path, 42, 10, false).finished().size(), 0u);  // without resume: afresh
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace dlsim::experiment
