// --set key.path=value: overrides change the loaded Scenario, pass the same checks as the file,
// and an error they cause names the --set it came from.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/overrides.hpp"

namespace dlsim::experiment {
namespace {

constexpr const char* kScenario = R"(seed: 1
cluster:
  instance: aws/p3.16xlarge
  nodes: 1
workload:
  model: resnet50
  precision: fp16
  batch: {per_device: 64}
  data: {samples: 1281167, epochs: 1}
sweep:
  nodes: [1, 2, 4]
)";

Scenario load_with(const std::vector<std::string>& sets) { return load_scenario_text(kScenario, "s.yaml", sets); }

// The ConfigError that loading with `sets` throws; fails the test when none is thrown.
ConfigError error_with(const std::vector<std::string>& sets) {
  try {
    load_with(sets);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for --set " << (sets.empty() ? "" : sets.back());
  return ConfigError({}, "<none>", "<none>");
}

TEST(Overrides, WithoutOverridesTheFileDecides) {
  const Scenario s = load_with({});
  EXPECT_EQ(s.cluster.nodes, 1);
  EXPECT_EQ(s.sweep.nodes, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(s.cluster.instance_name, "aws/p3.16xlarge");
}

TEST(Overrides, SetNodes) {
  const Scenario s = load_with({"cluster.nodes=4"});
  EXPECT_EQ(s.cluster.nodes, 4);
}

TEST(Overrides, SetSweepList) {
  const Scenario s = load_with({"sweep.nodes=[2, 8, 16]"});
  EXPECT_EQ(s.sweep.nodes, (std::vector<int>{2, 8, 16}));
  EXPECT_EQ(s.node_counts(), (std::vector<int>{2, 8, 16}));
}

TEST(Overrides, SetOneSweepItem) {
  const Scenario s = load_with({"sweep.nodes[1]=32"});
  EXPECT_EQ(s.sweep.nodes, (std::vector<int>{1, 32, 4}));
}

TEST(Overrides, SetInstanceResolvesTheCatalogEntry) {
  const Scenario s = load_with({"cluster.instance=aws/p3.8xlarge"});
  EXPECT_EQ(s.cluster.instance_name, "aws/p3.8xlarge");
  EXPECT_EQ(s.cluster.instance.accelerators_per_node, 4);
  EXPECT_EQ(s.cluster.device.name, "V100-16GB");
}

TEST(Overrides, CreatesMissingMappings) {
  const Scenario s = load_with({"output.csv=results.csv"});
  EXPECT_EQ(s.output.csv, "results.csv");
  EXPECT_EQ(s.output.results, "");
}

TEST(Overrides, BuildAWholeScenarioFromNothing) {
  const Scenario s = load_scenario_text("", "empty.yaml",
                                        {"cluster.instance=aws/p3.2xlarge", "workload.model=resnet50",
                                         "workload.batch.per_device=32", "workload.iterations=100"});
  EXPECT_EQ(s.cluster.instance.accelerators_per_node, 1);
  EXPECT_EQ(s.workload.batch, 32);
  EXPECT_EQ(s.workload.iterations, 100);
}

TEST(Overrides, ApplyInOrderLastWins) {
  EXPECT_EQ(load_with({"cluster.nodes=2", "cluster.nodes=3"}).cluster.nodes, 3);
  // A bad value replaced by a later one is never validated.
  EXPECT_EQ(load_with({"cluster.nodes=0", "cluster.nodes=5"}).cluster.nodes, 5);
  // A whole list, then one of its items.
  EXPECT_EQ(load_with({"sweep.nodes=[8, 16]", "sweep.nodes[0]=4"}).sweep.nodes, (std::vector<int>{4, 16}));
}

TEST(Overrides, BadValueIsReportedAtTheSet) {
  const ConfigError e = error_with({"cluster.nodes=0"});
  EXPECT_EQ(e.where().file, "--set cluster.nodes=0");
  EXPECT_EQ(e.where().line, 0);
  EXPECT_EQ(e.key_path(), "cluster.nodes");
  EXPECT_NE(e.message().find("out of range"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("--set cluster.nodes=0: cluster.nodes: ", 0), 0u) << e.what();
}

TEST(Overrides, TheLastSetOfAKeyIsTheOneBlamed) {
  const ConfigError e = error_with({"cluster.nodes=5", "cluster.nodes=-1"});
  EXPECT_EQ(e.where().file, "--set cluster.nodes=-1");
  EXPECT_EQ(e.key_path(), "cluster.nodes");
}

TEST(Overrides, BadListItemIsReportedAtTheSet) {
  const ConfigError item = error_with({"sweep.nodes[0]=0"});
  EXPECT_EQ(item.where().file, "--set sweep.nodes[0]=0");
  EXPECT_EQ(item.key_path(), "sweep.nodes[0]");
  // An item of a list set whole is blamed on the --set of the list.
  const ConfigError whole = error_with({"sweep.nodes=[1, 2, 2]"});
  EXPECT_EQ(whole.where().file, "--set sweep.nodes=[1, 2, 2]");
  EXPECT_EQ(whole.key_path(), "sweep.nodes[2]");
  EXPECT_NE(whole.message().find("appears twice"), std::string::npos) << whole.what();
}

TEST(Overrides, ErrorsElsewhereStayInTheFile) {
  // Of two --set, the one that made the bad value is blamed.
  const ConfigError e = error_with({"cluster.nodes=2", "workload.precision=bf16"});
  EXPECT_EQ(e.where().file, "--set workload.precision=bf16");
  EXPECT_EQ(e.key_path(), "workload.precision");
  // A valid --set does not take the blame for a bad value of the file's.
  const std::string bad_file = std::string(kScenario).replace(std::string(kScenario).find("per_device: 64"), 14,
                                                              "per_device: 0");
  try {
    load_scenario_text(bad_file, "s.yaml", {"cluster.nodes=2"});
    FAIL() << "accepted per_device: 0";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.where().file, "s.yaml");
    EXPECT_EQ(error.where().line, 8);
    EXPECT_EQ(error.key_path(), "workload.batch.per_device");
  }
}

TEST(Overrides, APrefixOfAKeyIsNotThatKey) {
  // --set cluster.n=... does not cover cluster.nodes: the bad nodes in the file are the file's.
  const std::string bad_file = std::string(kScenario).replace(std::string(kScenario).find("nodes: 1\n"), 9,
                                                              "nodes: 0\n");
  try {
    load_scenario_text(bad_file, "s.yaml", {"cluster.n=1"});
    FAIL() << "accepted nodes: 0";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "s.yaml");
    EXPECT_EQ(e.where().line, 4);
    EXPECT_EQ(e.key_path(), "cluster.nodes");
  }
}

TEST(Overrides, NewUnknownKeyIsRejected) {
  const ConfigError e = error_with({"cluster.nodez=4"});
  EXPECT_EQ(e.key_path(), "cluster.nodez");
  EXPECT_EQ(e.where().file, "--set cluster.nodez=4");
  EXPECT_NE(e.message().find("unknown key 'nodez'"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("did you mean 'nodes'"), std::string::npos) << e.what();
  const ConfigError top = error_with({"colour=blue"});
  EXPECT_EQ(top.key_path(), "colour");
  EXPECT_NE(top.message().find("unknown key 'colour'"), std::string::npos) << top.what();
}

struct Malformed {
  std::string argument;
  std::string message;  // substring of ConfigError::message()
};

// Each argument is wrong in itself, whatever the scenario: it is refused, and the error
// names the --set.
TEST(Overrides, MalformedArgumentsAreRejected) {
  const std::vector<Malformed> table{
      {"cluster.nodes", "expected key.path=value"},
      {"=5", "expected key.path=value"},
      {"a..b=1", "empty key"},
      {"sweep.nodes[x]=1", "non-negative integer"},
      {"sweep.nodes[-1]=1", "non-negative integer"},
      {"sweep.nodes[1=1", "unclosed '['"},
      {"sweep.nodes[99]=1", "past the end"},
      {"cluster.nodes.x=1", "not a mapping"},
      {"cluster.nodes[0]=1", "not a list"},
      {"cluster.nodes=[1", "not valid YAML"},
  };
  for (const Malformed& m : table) {
    SCOPED_TRACE(m.argument);
    try {
      load_with({m.argument});
      ADD_FAILURE() << "accepted --set " << m.argument;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.where().file.rfind("--set ", 0), 0u) << e.what();
      EXPECT_NE(e.where().file.find(m.argument), std::string::npos) << e.what();
      EXPECT_NE(e.message().find(m.message), std::string::npos) << e.what();
    }
  }
}

// "cluster.nodes." names an empty key below nodes, not nodes itself.
TEST(Overrides, TrailingDotIsRejected) {
  try {
    load_with({"cluster.nodes.=3"});
    ADD_FAILURE() << "accepted --set cluster.nodes.=3";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "--set cluster.nodes.=3");
    EXPECT_NE(e.message().find("empty key"), std::string::npos) << e.what();
  }
}

TEST(Overrides, ParseSetArgumentSplitsAtTheFirstEquals) {
  const Override o = parse_set_argument("output.csv=a=b.csv");
  EXPECT_EQ(o.path, "output.csv");
  EXPECT_EQ(o.value, "a=b.csv");
  EXPECT_THROW(parse_set_argument("no-equals"), ConfigError);
}

TEST(Overrides, InputYamlReflectsTheOverrides) {
  const Scenario s = load_with({"cluster.nodes=7", "sweep.nodes[2]=16"});
  const YAML::Node emitted = YAML::Load(s.input_yaml);
  EXPECT_EQ(emitted["cluster"]["nodes"].as<int>(), 7);
  EXPECT_EQ(emitted["sweep"]["nodes"][2].as<int>(), 16);
  EXPECT_EQ(emitted["workload"]["model"].as<std::string>(), "resnet50");
  // The emitted text is itself a scenario that loads to the same values, with no --set.
  const Scenario again = load_scenario_text(s.input_yaml, "again.yaml");
  EXPECT_EQ(again.cluster.nodes, 7);
  EXPECT_EQ(again.sweep.nodes, (std::vector<int>{1, 2, 16}));
}

}  // namespace
}  // namespace dlsim::experiment
