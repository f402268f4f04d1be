// Cluster scenario input that yaml-cpp used to reject with its own exceptions, or that was
// accepted though wrong (issue 19): each refused with a located ConfigError.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// Two jobs on one pool; line 7 is the first line after it.
const std::string kBase = R"(seed: 3
pools:
  - {name: a, instance: aws/p3.16xlarge, nodes: 2}
jobs:
  - {name: big, gpus: 16, iterations: 1000, iteration_time: 1s}
  - {name: small, submit: 10s, gpus: 1, iterations: 100, iteration_time: 1s}
)";

// The error loading kBase with `extra` appended and the --set arguments applied.
ConfigError error_of(const std::string& extra, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario_text(kBase + extra, "c.yaml", sets, ::testing::TempDir());
  } catch (const ConfigError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ConfigError: " << e.what();
    return ConfigError({}, "<other>", e.what());
  }
  ADD_FAILURE() << "accepted:\n" << kBase + extra;
  return ConfigError({}, "<none>", "<none>");
}

void expect_error(const ConfigError& e, const std::string& key_path, int line, const std::string& message) {
  EXPECT_EQ(e.key_path(), key_path) << e.what();
  EXPECT_EQ(e.where().line, line) << e.what();
  EXPECT_NE(e.message().find(message), std::string::npos) << e.what();
  EXPECT_EQ(e.message().find("yaml-cpp"), std::string::npos) << e.what();
}

// A synthetic trace too large over all its variants (each generates its own) is refused at its
// `jobs` before anything is generated, instead of running out of memory (a fuzzer finding:
// 20,001,281 jobs in each of 10 variants).
TEST(ClusterInputErrors, SyntheticJobsOverAllVariantsAreBounded) {
  const std::string base = "seed: 3\npools:\n  - {name: a, instance: aws/p3.16xlarge, nodes: 2}\n"
                           "trace: {format: synthetic, jobs: 500000}\n";
  try {
    load_scenario_text(base + "variants:\n  - {}\n  - {}\n  - {}\n  - {}\n  - {}\n", "c.yaml");
    ADD_FAILURE() << "2,500,000 jobs over 5 variants accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key_path(), "trace.jobs") << e.what();
    EXPECT_EQ(e.where().line, 4) << e.what();
    EXPECT_NE(e.message().find("more than 2000000 in all"), std::string::npos) << e.what();
  }
  // The same trace in one variant is within the bound.
  EXPECT_NO_THROW(load_scenario_text(base, "c.yaml"));
}

TEST(ClusterInputErrors, OutputScalar) { expect_error(error_of("output: x.h5\n"), "output", 7, "expected a mapping"); }

TEST(ClusterInputErrors, CatalogMapping) {
  expect_error(error_of("catalog: {instance: x}\n"), "catalog", 7, "expected the path of a catalog file");
}

TEST(ClusterInputErrors, ComplexKeys) {
  expect_error(error_of("sweep: {[a]: [1, 2]}\n"), "sweep", 7, "a key must be a name, got a list");
  expect_error(error_of("variants: [{[a]: 1}]\n"), "variants[0]", 7, "a key must be a name");
  expect_error(error_of("sweep: {random: {samples: 2, keys: {[a]: {integer: [1, 2]}}}}\n"), "sweep.random.keys", 7,
               "a key must be a name");
  expect_error(error_of("scheduler: {[a]: 1}\n"), "scheduler", 7, "a key must be a name");
}

TEST(ClusterInputErrors, VariantNameMustBeText) {
  expect_error(error_of("variants: [{name: [a, b]}]\n"), "variants[0].name", 7, "expected a label");
}

TEST(ClusterInputErrors, DuplicateJobNames) {
  expect_error(error_of("", {"jobs[1].name=big"}), "jobs[1].name", 0, "job name 'big' appears twice");
}

TEST(ClusterInputErrors, SyntheticTraceFieldsAreChecked) {
  const std::string trace = "trace: {format: synthetic, jobs: 5, gpus: ";
  expect_error(error_of(trace + "{1: many}}\n"), "trace.gpus.1", 7, "expected a number");
  expect_error(error_of(trace + "{[1]: 1}}\n"), "trace.gpus", 7, "a key must be a name");
  expect_error(error_of(trace + "{1: 0, 8: 0}}\n"), "trace.gpus", 7, "must not all be 0");
  expect_error(error_of("trace: {format: synthetic, jobs: 5, queues: a}\n"), "trace.queues", 7, "expected a list of queue names");
}

class TraceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("dlsim-trace-errors-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "folder.csv");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::vector<std::string> philly(const std::string& path) const {
    return {"jobs=null", "trace.format=philly", "trace.path=" + (dir_ / path).string()};
  }
  std::filesystem::path dir_;
};

TEST_F(TraceFiles, HeaderOnlyTraceIsRefused) {
  std::ofstream(dir_ / "header.csv") << "timestamp,duration,num_gpus,gpu_time,cluster\n";
  expect_error(error_of("", philly("header.csv")), "trace.path", 0, "the trace holds no jobs");
}

TEST_F(TraceFiles, FolderIsRefused) {
  expect_error(error_of("", philly("folder.csv")), "trace.path", 0, "is a folder");
}

// The location was printed twice: "--set ...: trace.path: --set ...: trace.path: trace file ...".
TEST_F(TraceFiles, MissingFileIsLocatedOnce) {
  const ConfigError e = error_of("", philly("missing.csv"));
  expect_error(e, "trace.path", 0, "does not exist");
  EXPECT_EQ(e.message().find("trace.path"), std::string::npos) << e.what();
  EXPECT_EQ(e.message().find("--set"), std::string::npos) << e.what();
}

// A failure mean of decades used to pass validation and then overflow sim::Time in the run:
// draws beyond the horizon never happen.
TEST(ClusterInputErrors, HugeFailureMeanRunsAsNoFailure) {
  const std::string pool = "  - {name: a, instance: aws/p3.16xlarge, nodes: 2}\n";
  std::string text = kBase;
  text.replace(text.find(pool), pool.size(),
               "  - {name: a, instance: aws/p3.16xlarge, nodes: 64, failure: {mean: 36000d}}\n");
  const Results r = run(load_scenario_text(text, "c.yaml"));
  ASSERT_EQ(r.cluster_rows.size(), 1u);
  EXPECT_EQ(r.cluster_rows[0].done, 2);
}

}  // namespace
}  // namespace dlsim::experiment

namespace dlsim::experiment {
namespace {

// Found by the loader's fuzzer (tests/fuzz): a variants key with an invalid UTF-8 byte was
// blamed on a "--set" the user never typed, because the error's location is stored escaped.
TEST(ClusterInputErrors, AVariantKeyWithInvalidBytesIsTheFilesNotASet) {
  const std::string text =
      "pools:\n  - {name: p, instance: aws/p3.16xlarge, nodes: 2}\n"
      "trace: {format: synthetic, jobs: 5, mean_interarrival: 1min, duration_max: 1h}\n"
      "variants:\n  - {name: a, \"pools[0].no\x91" "des\": 0}\n";
  try {
    load_scenario_text(text, "c.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "c.yaml") << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("c.yaml: ", 0), 0u) << e.what();
    EXPECT_NE(e.message().find("unknown key 'no\\x91des'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
