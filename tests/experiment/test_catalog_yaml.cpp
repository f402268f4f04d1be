// Catalog entries in YAML: a catalog file named by a scenario adds devices and instance types
// (a device may start from a built-in one), and cluster.instance may be an inline mapping.
// Figures arrive in SI units; bad entries are ConfigErrors located in the catalog file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "models/catalog.hpp"
#include "models/input_pipeline.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

// Writes `text` to a file of its own under the test temp dir; returns the path.
std::string write_temp(const std::string& file_name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "dlsim_test_catalog_yaml" /
                                    ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / file_name;
  std::ofstream(path) << text;
  return path.string();
}

// A scenario on `instance` that reads the catalog file at `catalog_path`.
std::string scenario_using(const std::string& catalog_path, const std::string& instance) {
  return "catalog: \"" + catalog_path + "\"\n" +
         "cluster:\n"
         "  instance: " + instance + "\n"
         "  nodes: 2\n"
         "workload:\n"
         "  model: resnet50\n"
         "  precision: fp16\n"
         "  batch: {per_device: 64}\n"
         "  iterations: 10\n";
}

using test::error_loading;

constexpr const char* kFastA100 = R"(devices:
  - name: A100-80GB-fast
    base: A100-80GB
    memory_bandwidth: 3TB/s
instances:
  - name: custom/a100-fast-x8
    accelerator: A100-80GB-fast
    accelerators_per_node: 8
    network_bandwidth: 400Gbps
    intra_node_bandwidth: 300GB/s
    price: 30 USD/h
)";

TEST(CatalogYaml, DeviceWithBaseChangesOneFigure) {
  const std::string catalog = write_temp("catalog.yaml", kFastA100);
  const Scenario s = load_scenario_text(scenario_using(catalog, "custom/a100-fast-x8"), "scenario.yaml");
  const models::Catalog builtin = models::Catalog::builtin();
  const models::DeviceSpec& base = *builtin.find_device("A100-80GB");

  EXPECT_EQ(s.cluster.device.name, "A100-80GB-fast");
  EXPECT_DOUBLE_EQ(s.cluster.device.memory_bandwidth, 3e12);
  EXPECT_NE(s.cluster.device.memory_bandwidth, base.memory_bandwidth);
  // Everything the file does not name comes from the base.
  EXPECT_DOUBLE_EQ(s.cluster.device.memory_bytes, base.memory_bytes);
  EXPECT_DOUBLE_EQ(s.cluster.device.peak(models::Precision::fp16), base.peak(models::Precision::fp16));
  EXPECT_DOUBLE_EQ(s.cluster.device.intra_node_link_bandwidth, base.intra_node_link_bandwidth);
  EXPECT_DOUBLE_EQ(s.cluster.profile.matmul_efficiency, builtin.find_profile("A100-80GB")->matmul_efficiency);

  EXPECT_EQ(s.cluster.instance_name, "custom/a100-fast-x8");
  EXPECT_EQ(s.cluster.instance.device, "A100-80GB-fast");
  EXPECT_EQ(s.cluster.instance.accelerators_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster.instance.network_bandwidth, 50e9);  // 400 Gbit/s
  EXPECT_DOUBLE_EQ(s.cluster.instance.intra_node_bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(s.cluster.instance.network_latency_s, 25e-6);  // default
  EXPECT_DOUBLE_EQ(s.cluster.instance.price_per_hour, 30.0);
}

TEST(CatalogYaml, RelativeCatalogPathIsResolvedFromTheScenarioFile) {
  const std::string catalog = write_temp("catalog.yaml", kFastA100);
  const std::string scenario = write_temp("scenario.yaml", scenario_using("catalog.yaml", "custom/a100-fast-x8"));
  EXPECT_DOUBLE_EQ(load_scenario(scenario).cluster.device.memory_bandwidth, 3e12);
  // From text, relative to base_dir.
  const std::string dir = std::filesystem::path(catalog).parent_path().string();
  const Scenario s = load_scenario_text(scenario_using("catalog.yaml", "custom/a100-fast-x8"), "s.yaml", {}, dir);
  EXPECT_EQ(s.cluster.instance.accelerators_per_node, 8);
}

TEST(CatalogYaml, CatalogEntryReplacesABuiltinInstance) {
  const std::string catalog = write_temp("catalog.yaml", R"(instances:
  - name: aws/p3.16xlarge
    accelerator: V100-32GB
    accelerators_per_node: 8
    network_bandwidth: 100Gbps
    price: 1 USD/h
)");
  const Scenario s = load_scenario_text(scenario_using(catalog, "aws/p3.16xlarge"), "scenario.yaml");
  EXPECT_EQ(s.cluster.device.name, "V100-32GB");
  EXPECT_DOUBLE_EQ(s.cluster.instance.price_per_hour, 1.0);
  EXPECT_DOUBLE_EQ(s.cluster.instance.network_bandwidth, 12.5e9);
}

TEST(CatalogYaml, DeviceWithoutBaseNeedsEveryFigure) {
  const std::string good = write_temp("good.yaml", R"(devices:
  - name: MyChip
    peak: {fp32: 50TFLOP/s, fp16: 400TFLOP/s}
    memory: 32GiB
    memory_bandwidth: 1TB/s
instances:
  - name: custom/mychip-x4
    accelerator: MyChip
    accelerators_per_node: 4
    network_bandwidth: 200Gbps
    price: 8 USD/h
)");
  const Scenario s = load_scenario_text(scenario_using(good, "custom/mychip-x4"), "scenario.yaml");
  EXPECT_DOUBLE_EQ(s.cluster.device.peak(models::Precision::fp16), 400e12);
  EXPECT_DOUBLE_EQ(s.cluster.device.peak(models::Precision::bf16), 0.0);
  EXPECT_DOUBLE_EQ(s.cluster.device.memory_bytes, 32.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(s.cluster.device.intra_node_link_bandwidth, 16e9);  // PCIe Gen3 x16 default

  const std::string no_peak = write_temp("no_peak.yaml", R"(devices:
  - name: MyChip
    memory: 32GiB
    memory_bandwidth: 1TB/s
)");
  const ConfigError e = error_loading(scenario_using(no_peak, "aws/p3.16xlarge"));
  EXPECT_EQ(e.where().file, no_peak);
  EXPECT_EQ(e.key_path(), "devices[0].peak");
  EXPECT_EQ(e.where().line, 2);
  EXPECT_EQ(e.where().column, 5);
  EXPECT_NE(e.message().find("missing required key 'peak'"), std::string::npos) << e.what();
}

TEST(CatalogYaml, BadEntriesAreLocatedInTheCatalogFile) {
  const std::string unknown_base = write_temp("unknown_base.yaml", R"(devices:
  - name: Fast
    base: A100-80G
)");
  const ConfigError base = error_loading(scenario_using(unknown_base, "aws/p3.16xlarge"));
  EXPECT_EQ(base.where().file, unknown_base);
  EXPECT_EQ(base.key_path(), "devices[0].base");
  EXPECT_EQ(base.where().line, 3);
  EXPECT_NE(base.message().find("did you mean 'A100-80GB'"), std::string::npos) << base.what();

  const std::string size_unit = write_temp("size_unit.yaml", R"(devices:
  - name: Fast
    base: A100-80GB
    memory_bandwidth: 3TB
)");
  const ConfigError unit = error_loading(scenario_using(size_unit, "aws/p3.16xlarge"));
  EXPECT_EQ(unit.key_path(), "devices[0].memory_bandwidth");
  EXPECT_EQ(unit.where().line, 4);
  EXPECT_EQ(unit.where().column, 23);
  EXPECT_NE(unit.message().find("unknown bandwidth unit 'TB'"), std::string::npos) << unit.what();

  const std::string typo = write_temp("typo.yaml", "device:\n  - name: Fast\n    base: A100-80GB\n");
  const ConfigError key = error_loading(scenario_using(typo, "aws/p3.16xlarge"));
  EXPECT_EQ(key.where().file, typo);
  EXPECT_EQ(key.key_path(), "device");
  EXPECT_EQ(key.where().line, 1);
  EXPECT_NE(key.message().find("did you mean 'devices'"), std::string::npos) << key.what();

  const std::string broken = write_temp("broken.yaml", "devices:\n  - name: [Fast\n");
  const ConfigError yaml = error_loading(scenario_using(broken, "aws/p3.16xlarge"));
  EXPECT_EQ(yaml.where().file, broken);
  EXPECT_GT(yaml.where().line, 1);
  EXPECT_NE(yaml.message().find("invalid YAML"), std::string::npos) << yaml.what();
}

// A catalog path that is a directory cannot be read as a catalog: the scenario's key is blamed,
// as for a missing file.
TEST(CatalogYaml, CatalogPathThatIsADirectoryIsReportedAtTheScenarioKey) {
  const std::string dir = std::filesystem::path(write_temp("unused.yaml", "")).parent_path().string();
  const ConfigError e = error_loading(scenario_using(dir, "aws/p3.16xlarge"));
  EXPECT_EQ(e.where().file, "scenario.yaml");
  EXPECT_EQ(e.key_path(), "catalog");
  EXPECT_EQ(e.where().line, 1);
  EXPECT_NE(e.message().find("cannot read catalog file"), std::string::npos) << e.what();
}

TEST(CatalogYaml, InstanceWithUnknownAcceleratorSuggestsTheNearest) {
  const std::string catalog = write_temp("catalog.yaml", R"(instances:
  - name: custom/x
    accelerator: A100-80G
    accelerators_per_node: 8
    network_bandwidth: 100Gbps
    price: 10 USD/h
)");
  const ConfigError e = error_loading(scenario_using(catalog, "custom/x"));
  EXPECT_EQ(e.where().file, catalog);
  EXPECT_EQ(e.key_path(), "instances[0].accelerator");
  EXPECT_EQ(e.where().line, 3);
  EXPECT_EQ(e.where().column, 18);
  EXPECT_NE(e.message().find("unknown accelerator 'A100-80G'"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("did you mean 'A100-80GB'"), std::string::npos) << e.what();
}

TEST(CatalogYaml, InlineInstanceIsConvertedToSi) {
  const Scenario s = load_scenario_text(R"(cluster:
  instance:
    accelerator: A100-80GB
    accelerators_per_node: 8
    network_bandwidth: 100Gbps
    network_latency: 5us
    intra_node_bandwidth: 300GB/s
    price: "10 USD/h"
  nodes: 2
workload:
  model: resnet50
  precision: bf16
  batch: {per_device: 64}
  iterations: 10
)", "inline.yaml");
  EXPECT_EQ(s.cluster.instance_name, "inline");
  EXPECT_EQ(s.cluster.device.name, "A100-80GB");
  EXPECT_EQ(s.cluster.instance.provider, "custom");
  EXPECT_EQ(s.cluster.instance.accelerators_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster.instance.network_bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(s.cluster.instance.network_latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(s.cluster.instance.intra_node_bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(s.cluster.instance.intra_node_latency_s, 2e-6);  // default
  EXPECT_DOUBLE_EQ(s.cluster.instance.price_per_hour, 10.0);
  EXPECT_EQ(s.cluster.nodes, 2);
}

// An instance's vCPUs are the data loader's default workers and the most its decoding uses.
TEST(CatalogYaml, InlineInstanceVcpusBoundTheLoader) {
  const std::string text = R"(cluster:
  instance:
    accelerator: A100-80GB
    accelerators_per_node: 8
    network_bandwidth: 100Gbps
    price: "10 USD/h"
    vcpus: 32
workload:
  model: resnet50
  precision: bf16
  batch: {per_device: 64}
  iterations: 10
  input: {loader: dali-cpu, workers: 64}
)";
  const Scenario s = load_scenario_text(text, "inline.yaml");
  EXPECT_EQ(s.cluster.instance.vcpus, 32);
  EXPECT_EQ(s.workload.input.workers, 64);
  EXPECT_EQ(s.workload.input.vcpus, 32);
  // 512 images a step on 32 vCPUs at DALI's 171 per vCPU, the 64 workers notwithstanding.
  EXPECT_DOUBLE_EQ(models::with_input(0.1, 512, s.workload.input).input_s, 512.0 / (32 * 171));
  const ConfigError e = error_loading(text.substr(0, text.find("    vcpus")) + "    vcpus: -1\n" + text.substr(text.find("workload:")));
  EXPECT_EQ(e.key_path(), "cluster.instance.vcpus");
}

TEST(CatalogYaml, InlineInstanceRejectsUnknownKeys) {
  const ConfigError e = error_loading(R"(cluster:
  instance:
    accelerator: A100-80GB
    accelerators_per_node: 8
    network_bandwidth: 100Gbps
    price: 10 USD/h
    gpus: 8
workload:
  model: resnet50
  batch: {per_device: 64}
  iterations: 10
)");
  EXPECT_EQ(e.key_path(), "cluster.instance.gpus");
  EXPECT_EQ(e.where().file, "scenario.yaml");
  EXPECT_EQ(e.where().line, 7);
  EXPECT_NE(e.message().find("unknown key 'gpus'"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace dlsim::experiment
