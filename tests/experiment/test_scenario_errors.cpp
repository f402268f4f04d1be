// Bad scenarios, one table row each: a valid base scenario with one thing changed, and where
// the loader must report it (file, line, column, key path) and what the message must say.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"

namespace dlsim::experiment {
namespace {

// A valid scenario naming a catalog instance. Line numbers below refer to it.
constexpr const char* kBase = R"(seed: 1
cluster:
  instance: aws/p3.16xlarge
  nodes: 1
workload:
  model: resnet50
  precision: fp16
  batch: {per_device: 64}
  data: {samples: 1281167, epochs: 1}
  data_parallel: {overlap: true, bucket: 25MiB, gradient_precision: fp32}
sweep:
  nodes: [1, 2, 4]
output:
  results: out.h5
)";

// A valid scenario with an inline instance (the figures of aws/p3.16xlarge).
constexpr const char* kInline = R"(seed: 1
cluster:
  instance:
    accelerator: V100-16GB
    accelerators_per_node: 8
    network_bandwidth: 25Gbps
    price: 24.48 USD/h
  nodes: 1
workload:
  model: resnet50
  precision: fp16
  batch: {per_device: 64}
  data: {samples: 1281167, epochs: 1}
)";

struct Case {
  std::string name;
  std::string from;      // text of the base that is replaced; must occur in it
  std::string to;        // its replacement
  std::string key_path;  // expected ConfigError::key_path()
  int line;              // expected where().line (0: the error has no line)
  int column;            // expected where().column; 0: not checked
  std::string message;   // a substring message() must contain
  const char* base = kBase;
  std::vector<std::string> sets = {};
  std::string file = "bad.yaml";
};

const std::vector<Case>& cases() {
  static const std::vector<Case> table{
      // --- malformed YAML: the parser's own position ---
      // yaml-cpp notices the unclosed '[' at the ':' of the next key.
      {"yaml_unclosed_bracket", "  nodes: [1, 2, 4]", "  nodes: [1, 2, 4", "", 13, 7, "invalid YAML"},
      {"yaml_unclosed_brace", "  batch: {per_device: 64}", "  batch: {per_device: 64", "", 9, 7, "invalid YAML"},
      {"yaml_bad_indentation", "  nodes: 1\n", " nodes: 1\n", "", 4, 2, "invalid YAML"},
      {"top_level_list", kBase, "- cluster\n- workload\n", "", 1, 1, "a scenario is a mapping"},
      {"top_level_scalar", kBase, "just some text\n", "", 1, 1, "a scenario is a mapping"},
      {"empty_scenario", kBase, "", "", 1, 1, "the scenario is empty"},
      {"duplicate_key", "  nodes: 1\n", "  nodes: 1\n  nodes: 2\n", "cluster.nodes", 5, 3, "duplicate key 'nodes'"},
      {"duplicate_top_level_key", "  results: out.h5\n", "  results: out.h5\nseed: 2\n", "seed", 15, 1,
       "duplicate key 'seed'"},

      // --- unknown keys, with the nearest known one ---
      {"unknown_top_level_key_clustr", "cluster:", "clustr:", "clustr", 2, 1, "did you mean 'cluster'"},
      {"unknown_top_level_key_outptu", "output:", "outptu:", "outptu", 13, 1, "did you mean 'output'"},
      {"unknown_nested_key_batchsize", "  batch: {per_device: 64}\n", "  batch: {per_device: 64}\n  batchsize: 64\n",
       "workload.batchsize", 9, 3, "unknown key 'batchsize'"},
      {"unknown_key_in_flow_map", "overlap: true", "overlapp: true", "workload.data_parallel.overlapp", 10, 19,
       "did you mean 'overlap'"},

      // --- wrong types ---
      {"nodes_string", "  nodes: 1\n", "  nodes: \"four\"\n", "cluster.nodes", 4, 10, "got 'four'"},
      {"nodes_list", "  nodes: 1\n", "  nodes: [1]\n", "cluster.nodes", 4, 10, "got a list"},
      {"nodes_fraction", "  nodes: 1\n", "  nodes: 2.5\n", "cluster.nodes", 4, 10, "expected an integer"},
      {"per_device_fraction", "{per_device: 64}", "{per_device: 1.5}", "workload.batch.per_device", 8, 23,
       "expected an integer"},
      {"overlap_yes", "overlap: true", "overlap: \"yes\"", "workload.data_parallel.overlap", 10, 28,
       "expected true or false, got 'yes'"},
      {"seed_list", "seed: 1\n", "seed: [1]\n", "seed", 1, 7, "got a list"},

      // --- missing required keys: reported at the mapping that lacks them ---
      {"missing_cluster", "cluster:\n  instance: aws/p3.16xlarge\n  nodes: 1\n", "", "cluster", 1, 1,
       "missing required key 'cluster'"},
      {"missing_workload",
       "workload:\n  model: resnet50\n  precision: fp16\n  batch: {per_device: 64}\n"
       "  data: {samples: 1281167, epochs: 1}\n"
       "  data_parallel: {overlap: true, bucket: 25MiB, gradient_precision: fp32}\n",
       "", "workload", 1, 1, "missing required key 'workload'"},
      {"missing_model", "  model: resnet50\n", "", "workload.model", 6, 3, "missing required key 'model'"},
      {"missing_instance", "  instance: aws/p3.16xlarge\n", "", "cluster.instance", 3, 3,
       "missing required key 'instance'"},
      {"missing_batch", "  batch: {per_device: 64}\n", "", "workload.batch", 6, 3, "missing required key 'batch'"},
      {"missing_work", "  data: {samples: 1281167, epochs: 1}\n", "", "workload.data", 6, 3,
       "missing required key 'data'"},
      // `data` is there; what it lacks (with no iterations) is the number of epochs.
      {"data_without_epochs", "{samples: 1281167, epochs: 1}", "{samples: 1281167}", "workload.data.epochs", 9, 9,
       "epochs"},
      {"missing_samples", "{samples: 1281167, epochs: 1}", "{epochs: 1}", "workload.data.samples", 9, 9,
       "missing required key 'samples'"},

      // --- out of range ---
      {"nodes_zero", "  nodes: 1\n", "  nodes: 0\n", "cluster.nodes", 4, 10, "out of range"},
      {"nodes_negative", "  nodes: 1\n", "  nodes: -3\n", "cluster.nodes", 4, 10, "out of range"},
      {"nodes_huge", "  nodes: 1\n", "  nodes: 1e9\n", "cluster.nodes", 4, 10, "out of range"},
      {"seed_negative", "seed: 1\n", "seed: -1\n", "seed", 1, 7, "out of range"},
      // 2^63: one past the largest seed; as a double it compares equal to the int64 maximum.
      {"seed_past_int64_max", "seed: 1\n", "seed: 9223372036854775808\n", "seed", 1, 7, "out of range"},
      {"per_device_zero", "{per_device: 64}", "{per_device: 0}", "workload.batch.per_device", 8, 23, "out of range"},
      {"epochs_zero", "epochs: 1}", "epochs: 0}", "workload.data.epochs", 9, 36, "out of range"},
      {"iterations_zero", "  data: {samples: 1281167, epochs: 1}\n", "  iterations: 0\n", "workload.iterations", 9,
       15, "out of range"},
      {"sweep_contains_zero", "[1, 2, 4]", "[1, 0, 4]", "sweep.nodes[1]", 12, 14, "out of range"},
      {"sweep_duplicate", "[1, 2, 4]", "[1, 2, 2]", "sweep.nodes[2]", 12, 17, "appears twice"},
      {"sweep_empty", "[1, 2, 4]", "[]", "sweep.nodes", 12, 10, "non-empty list"},

      // --- NaN and infinity ---
      {"epochs_yaml_nan", "epochs: 1}", "epochs: .nan}", "workload.data.epochs", 9, 36, "got '.nan'"},
      {"epochs_plain_nan", "epochs: 1}", "epochs: nan}", "workload.data.epochs", 9, 36, "got 'nan'"},
      {"samples_infinite", "samples: 1281167", "samples: .inf", "workload.data.samples", 9, 19, "got '.inf'"},
      {"nodes_infinite", "  nodes: 1\n", "  nodes: .inf\n", "cluster.nodes", 4, 10, "expected an integer"},
      {"bucket_infinite", "bucket: 25MiB", "bucket: infMiB", "workload.data_parallel.bucket", 10, 42,
       "not a finite size"},

      // --- quantities with units ---
      {"bandwidth_zero", "network_bandwidth: 25Gbps", "network_bandwidth: 0Gbps", "cluster.instance.network_bandwidth",
       6, 24, "out of range", kInline},
      {"bandwidth_negative", "network_bandwidth: 25Gbps", "network_bandwidth: -25Gbps",
       "cluster.instance.network_bandwidth", 6, 24, "out of range", kInline},
      {"bandwidth_absurd", "network_bandwidth: 25Gbps", "network_bandwidth: 1e20Gbps",
       "cluster.instance.network_bandwidth", 6, 24, "out of range", kInline},
      {"bandwidth_without_unit", "network_bandwidth: 25Gbps", "network_bandwidth: 25",
       "cluster.instance.network_bandwidth", 6, 24, "needs a unit", kInline},
      {"bandwidth_size_unit", "network_bandwidth: 25Gbps", "network_bandwidth: 25GB",
       "cluster.instance.network_bandwidth", 6, 24, "unknown bandwidth unit 'GB'", kInline},
      {"bucket_bandwidth_unit", "bucket: 25MiB", "bucket: 25Mbps", "workload.data_parallel.bucket", 10, 42,
       "unknown size unit 'Mbps'"},
      {"zero_accelerators_per_node", "accelerators_per_node: 8", "accelerators_per_node: 0",
       "cluster.instance.accelerators_per_node", 5, 28, "out of range", kInline},
      {"inline_negative_price", "price: 24.48 USD/h", "price: -1 USD/h", "cluster.instance.price", 7, 12,
       "out of range", kInline},
      {"cluster_negative_price", "  nodes: 1\n", "  nodes: 1\n  price: -5 USD/h\n", "cluster.price", 5, 10,
       "out of range"},

      // --- unknown catalog names, with the nearest known one ---
      {"unknown_instance", "aws/p3.16xlarge", "aws/p3.16xlage", "cluster.instance", 3, 13,
       "did you mean 'aws/p3.16xlarge'"},
      {"unknown_accelerator", "accelerator: V100-16GB", "accelerator: V100-16G", "cluster.instance.accelerator", 4, 18,
       "did you mean 'V100-16GB'", kInline},
      {"unknown_model", "model: resnet50", "model: resnet-50", "workload.model", 6, 10, "did you mean 'resnet50'"},
      {"unknown_precision", "precision: fp16", "precision: fp61", "workload.precision", 7, 14,
       "allowed: fp32, tf32, fp16, bf16"},
      {"unknown_optimizer", "  precision: fp16\n", "  precision: fp16\n  optimizer: adamm\n", "workload.optimizer", 8,
       14, "did you mean 'adam'"},
      {"gradient_precision_tf32", "gradient_precision: fp32", "gradient_precision: tf32",
       "workload.data_parallel.gradient_precision", 10, 69, "allowed: fp32, fp16, bf16"},
      {"precision_unsupported_on_device", "precision: fp16", "precision: bf16", "workload.precision", 7, 14,
       "has no bf16 support"},

      // --- inconsistent combinations ---
      {"epochs_and_iterations", "epochs: 1}\n", "epochs: 1}\n  iterations: 1000\n", "workload.iterations", 10, 15,
       "not both"},
      {"both_batch_modes", "{per_device: 64}", "{per_device: 64, global: 512}", "workload.batch", 8, 10,
       "exactly one"},
      {"sequence_length_for_resnet50", "  model: resnet50\n", "  model: resnet50\n  sequence_length: 128\n",
       "workload.sequence_length", 7, 20, "takes no sequence length"},
      // 1000 splits over 8 accelerators (1 node) but not over 16 (sweep point 2 nodes): the
      // value to change is the global batch.
      {"global_batch_indivisible", "{per_device: 64}", "{global: 1000}", "workload.batch.global", 8, 19,
       "does not split evenly over 16 data-parallel replicas"},
      // GPT-3 175B data-parallel on V100-16GB: no micro-batch fits (the default takes the largest
      // that does); with no plan, the value to change is the batch.
      {"model_does_not_fit", "  model: resnet50\n  precision: fp16\n  batch: {per_device: 64}",
       "  model: gpt3-175b\n  precision: fp32\n  batch: {per_device: 4096}", "workload.batch.per_device", 8, 23,
       "does not fit"},
      {"results_equal_csv", "  results: out.h5\n", "  results: out.h5\n  csv: out.h5\n", "output.csv", 15, 8,
       "must differ"},
      // The same file spelt two ways is still the same file.
      {"csv_same_file_as_results", "  results: out.h5\n", "  results: out.h5\n  csv: ./out.h5\n", "output.csv", 15, 8,
       "must differ"},
      {"results_empty", "  results: out.h5\n", "  results: \"\"\n", "output.results", 14, 12,
       "expected a file path"},
      {"catalog_file_missing", "seed: 1\n", "seed: 1\ncatalog: no-such-catalog-dlsim-test.yaml\n", "catalog", 2, 10,
       "cannot read catalog file"},

      // --- shapes yaml-cpp itself would throw on (issue 19): located errors, never yaml-cpp's ---
      {"output_scalar", "output:\n  results: out.h5\n", "output: x.h5\n", "output", 13, 9,
       "expected a mapping of keys to values, got 'x.h5'"},
      {"sweep_grid_complex_key", "  nodes: [1, 2, 4]\n", "  nodes: [1, 2, 4]\n  grid: {[a]: [1]}\n", "sweep.grid", 13, 10,
       "a key must be a name, got a list"},
      {"sweep_random_complex_key", "  nodes: [1, 2, 4]\n",
       "  nodes: [1, 2, 4]\n  random: {samples: 2, keys: {[a]: {integer: [1, 2]}}}\n", "sweep.random.keys", 13, 31,
       "a key must be a name"},
      {"complex_key_in_section", "  nodes: 1\n", "  nodes: 1\n  {a: 1}: 2\n", "cluster", 5, 3, "a key must be a name, got a mapping"},
      // A second document was silently ignored.
      {"second_document", "  results: out.h5\n", "  results: out.h5\n---\nseed: 2\n", "", 16, 1, "a second YAML document"},
      // Output files that are not regular files: refused before anything runs.
      {"results_is_a_folder", "  results: out.h5\n", "  results: .\n", "output.results", 14, 12, "is a folder"},
      {"csv_is_a_device", "  results: out.h5\n", "  results: out.h5\n  csv: /dev/null\n", "output.csv", 15, 8, "is a device"},
      // --set key=null removes the key, as null in the file does: a required key is then missing, at the --set.
      {"set_instance_null", "", "", "cluster.instance", 0, 0, "missing required key 'instance'", kBase, {"cluster.instance=null"},
       "--set cluster.instance=null"},

      // --- a bad value from --set is reported at the --set, not in the file ---
      {"set_nodes_zero", "", "", "cluster.nodes", 0, 0, "out of range", kBase, {"cluster.nodes=0"},
       "--set cluster.nodes=0"},
  };
  return table;
}

// gtest prints a parameter that fails; the row's name says which one.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string apply(const Case& c) {
  std::string text = c.base;
  if (c.from.empty()) return text;
  const auto at = text.find(c.from);
  if (at == std::string::npos) return {};
  return text.replace(at, c.from.size(), c.to);
}

// What ConfigError::what() must start with: "file:line:col: key.path: ".
std::string expected_prefix(const Case& c, int column) {
  std::string out = c.file;
  if (c.line > 0) out += ":" + std::to_string(c.line) + ":" + std::to_string(column);
  out += ": ";
  if (!c.key_path.empty()) out += c.key_path + ": ";
  return out;
}

class ScenarioErrors : public ::testing::TestWithParam<Case> {};

TEST_P(ScenarioErrors, ReportsWhereAndWhy) {
  const Case& c = GetParam();
  ASSERT_TRUE(c.from.empty() || std::string(c.base).find(c.from) != std::string::npos)
      << "table error: '" << c.from << "' is not in the base scenario";
  const std::string text = apply(c);
  try {
    load_scenario_text(text, "bad.yaml", c.sets);
    ADD_FAILURE() << "accepted a bad scenario:\n" << text;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, c.file) << e.what();
    EXPECT_EQ(e.key_path(), c.key_path) << e.what();
    EXPECT_EQ(e.where().line, c.line) << e.what();
    if (c.column > 0) {
      EXPECT_EQ(e.where().column, c.column) << e.what();
    }
    EXPECT_NE(e.message().find(c.message), std::string::npos)
        << "message lacks '" << c.message << "': " << e.what();
    const std::string prefix = expected_prefix(c, c.column > 0 ? c.column : e.where().column);
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << "what() = " << e.what() << "\nexpected prefix " << prefix;
    EXPECT_EQ(std::string(e.what()), prefix + e.message());
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than ConfigError: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ScenarioErrors, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(ScenarioErrorsTable, HasEnoughCases) { EXPECT_GE(cases().size(), 30u); }

// The bases the table edits load as they are, so each row's error comes from its one change.
TEST(ScenarioErrorsTable, BasesAreValid) {
  const Scenario a = load_scenario_text(kBase, "base.yaml");
  EXPECT_EQ(a.cluster.instance_name, "aws/p3.16xlarge");
  EXPECT_EQ(a.node_counts(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(a.workload.batch, 64);
  EXPECT_EQ(a.output.results, "out.h5");
  const Scenario b = load_scenario_text(kInline, "base.yaml");
  EXPECT_EQ(b.cluster.instance_name, "inline");
  EXPECT_EQ(b.cluster.instance.accelerators_per_node, 8);
  EXPECT_EQ(b.cluster.device.name, "V100-16GB");
}

// "--set output.trace=null" means no trace, as `trace: null` in the file; it wrote a file named "null".
TEST(ScenarioErrorsTable, SetNullRemovesAnOutput) {
  EXPECT_EQ(load_scenario_text(kBase, "base.yaml", {"output.results=null"}).output.results, "");
  EXPECT_EQ(load_scenario_text(kBase, "base.yaml", {"output.trace=~"}).output.trace, "");
  EXPECT_EQ(load_scenario_text(kBase, "base.yaml", {"output.trace=t.json"}).output.trace, "t.json");
}

// A trailing '---' with nothing after it is not a second document.
TEST(ScenarioErrorsTable, TrailingDocumentMarkerIsAccepted) {
  EXPECT_EQ(load_scenario_text(std::string(kBase) + "---\n", "base.yaml").output.results, "out.h5");
}

// Integers are read exactly: a seed above 2^53 is not rounded through a double.
TEST(ScenarioErrorsTable, LargeSeedIsReadExactly) {
  std::string text = kBase;
  text.replace(0, 7, "seed: 9007199254740993");
  EXPECT_EQ(load_scenario_text(text, "base.yaml").seed, std::uint64_t{9007199254740993});
  text = kBase;
  text.replace(0, 7, "seed: 9223372036854775807");
  EXPECT_EQ(load_scenario_text(text, "base.yaml").seed, std::uint64_t{9223372036854775807});
}

TEST(ScenarioErrorsFile, MissingScenarioFileNamesThePath) {
  const std::string path = ::testing::TempDir() + "dlsim-no-such-scenario/missing.yaml";
  try {
    load_scenario(path);
    FAIL() << "loaded a file that does not exist";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_EQ(e.where().line, 0);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("cannot read"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
