// End to end: `dlsim run` on the quick-start scenario, checked through its HDF5 file.
// The checks are relationships that must hold whatever the device figures are, not golden values.
#include <hdf5.h>

#include <cmath>
#include <vector>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

std::vector<double> read_column(hid_t file, const std::string& name) {
  const hid_t dataset = H5Dopen2(file, ("/results/" + name).c_str(), H5P_DEFAULT);
  EXPECT_GE(dataset, 0) << name;
  if (dataset < 0) return {};
  const hid_t space = H5Dget_space(dataset);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  std::vector<double> values(n);
  H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space);
  H5Dclose(dataset);
  return values;
}

std::string read_string_attribute(hid_t owner, const std::string& name) {
  const hid_t attribute = H5Aopen(owner, name.c_str(), H5P_DEFAULT);
  if (attribute < 0) return "<missing>";
  const hid_t type = H5Aget_type(attribute);
  std::string text(H5Tget_size(type), '\0');
  H5Aread(attribute, type, text.data());
  H5Tclose(type);
  H5Aclose(attribute);
  return text.substr(0, text.find('\0'));
}

std::string read_string_dataset(hid_t file, const std::string& name) {
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) return "<missing>";
  const hid_t type = H5Dget_type(dataset);
  std::string text(H5Tget_size(type), '\0');
  H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data());
  H5Tclose(type);
  H5Dclose(dataset);
  return text;
}

class Quickstart : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(fresh_folder("quickstart"));
    result_ = new CommandResult(run_dlsim(*dir_, "run '" + scenario_path("quickstart.yaml") + "' --output out/q.h5 --csv q.csv"));
  }
  static void TearDownTestSuite() {
    delete result_;
    delete dir_;
  }
  static std::filesystem::path* dir_;
  static CommandResult* result_;
};
std::filesystem::path* Quickstart::dir_ = nullptr;
CommandResult* Quickstart::result_ = nullptr;

TEST_F(Quickstart, RunsAndPrintsTheTable) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  EXPECT_NE(result_->out.find("samples/s"), std::string::npos);
  EXPECT_NE(result_->out.find("efficiency"), std::string::npos);
  EXPECT_NE(result_->out.find("wrote out/q.h5"), std::string::npos);
  EXPECT_TRUE(result_->err.empty()) << result_->err;
}

TEST_F(Quickstart, HdfFileHoldsTheTableAndItsProvenance) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  const auto path = *dir_ / "out" / "q.h5";
  ASSERT_TRUE(std::filesystem::exists(path));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(read_string_attribute(file, "format"), "dlsim-results-1");
  EXPECT_FALSE(read_string_attribute(file, "dlsim_version").empty());
  EXPECT_NE(read_string_dataset(file, "/scenario").find("resnet50"), std::string::npos);
  const std::string resolved = read_string_dataset(file, "/scenario_resolved");
  EXPECT_NE(resolved.find("V100-16GB"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("price_usd_per_node_hour: 24.48"), std::string::npos) << resolved;
  uint64_t seed = 0;
  const hid_t seed_attribute = H5Aopen(file, "seed", H5P_DEFAULT);
  H5Aread(seed_attribute, H5T_NATIVE_UINT64, &seed);
  H5Aclose(seed_attribute);
  EXPECT_EQ(seed, 1u);

  const auto nodes = read_column(file, "nodes");
  const auto throughput = read_column(file, "samples_per_second");
  const auto efficiency = read_column(file, "scaling_efficiency");
  const auto epoch_time = read_column(file, "time_per_epoch");
  const auto cost_per_hour = read_column(file, "cost_per_hour");
  const auto cost_per_epoch = read_column(file, "cost_per_epoch");
  H5Fclose(file);

  ASSERT_EQ(nodes, (std::vector<double>{1, 2, 4, 8, 16, 32}));
  ASSERT_EQ(throughput.size(), nodes.size());
  EXPECT_DOUBLE_EQ(efficiency[0], 1.0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    // p3.16xlarge on demand: 24.48 USD/h per node (catalog, AWS price list).
    EXPECT_NEAR(cost_per_hour[i], 24.48 * nodes[i], 1e-9);
    EXPECT_NEAR(cost_per_epoch[i], cost_per_hour[i] * epoch_time[i] / 3600.0, 1e-9 * cost_per_epoch[i]);
    EXPECT_LE(efficiency[i], 1.0 + 1e-12);
    // ImageNet-1k: 1,281,167 images per epoch.
    EXPECT_NEAR(epoch_time[i] * throughput[i], 1281167.0, 1e-6 * 1281167.0);
    if (i > 0) {
      EXPECT_GT(throughput[i], throughput[i - 1]) << "throughput must grow with nodes";
      EXPECT_LE(efficiency[i], efficiency[i - 1]) << "efficiency must not rise with nodes";
    }
  }
  // Communication must cost something between nodes: 32 nodes are not perfectly efficient.
  EXPECT_LT(efficiency.back(), 0.999);
}

TEST_F(Quickstart, CsvHasTheSameColumnsAndRows) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  const std::string csv = slurp(*dir_ / "q.csv");
  EXPECT_EQ(csv.rfind("nodes,accelerators,", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + 6 sweep points
}

TEST_F(Quickstart, NoTemporaryFilesAreLeft) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(*dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST(Determinism, SameScenarioAndSeedGiveIdenticalFiles) {
  // Two runs in two folders with the same arguments: the files must match byte for byte
  // (the HDF5 writer stores no timestamps).
  const std::string args = "run '" + scenario_path("quickstart.yaml") + "' --quiet --output r.h5 --csv r.csv";
  const auto first = fresh_folder("determinism-1");
  const auto second = fresh_folder("determinism-2");
  ASSERT_EQ(run_dlsim(first, args).exit_code, 0);
  ASSERT_EQ(run_dlsim(second, args).exit_code, 0);
  for (const char* name : {"r.csv", "r.h5"}) {
    const std::string a = slurp(first / name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_TRUE(a == slurp(second / name)) << name << " differs between two identical runs";
  }
}

}  // namespace
}  // namespace dlsim::cli_test
