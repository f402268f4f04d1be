// `dlsim validate --collectives`: a tiny hand-written measured table against a tiny set-up
// folder, the errors it reports, which rows it marks as fit, and located table errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include <unistd.h>

#include "experiment/collective_validation.hpp"
#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {
namespace {

namespace fs = std::filesystem;

// A folder holding one set-up, nccl-vidur-a100-dgx.yaml: one node of 8 A100 on NVSwitch.
struct Folder {
  fs::path dir = fs::temp_directory_path() / ("dlsim-collective-validation-" + std::to_string(::getpid()));
  Folder() {
    fs::create_directories(dir);
    std::ofstream(dir / "nccl-vidur-a100-dgx.yaml") << "cluster:\n  instance: azure/Standard_ND96amsr_A100_v4\n"
                                                       "collective:\n  sizes: [1MiB]\n";
  }
  ~Folder() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

// What the set-up predicts for an all-reduce over the first k GPUs of one node.
double predicted(const Folder& f, int k, double bytes) {
  const Scenario s = load_scenario((f.dir / "nccl-vidur-a100-dgx.yaml").string(),
                                   {"collective.ranks_per_node=" + std::to_string(k),
                                    "collective.sizes=[" + std::to_string(static_cast<long long>(bytes)) + "B]"});
  return run_collectives(s).at(0).time_s;
}

// Send/recv inside a DGX node fits its own overhead below 1 MiB (the rest is held out), and a
// small transfer costs it, not a collective's launch overhead (30 us on Ampere).
TEST(CollectiveValidation, SendRecvInsideANodeFitsItsOwnOverhead) {
  const Folder f;
  const std::string csv = f.write("p2p.csv",
                                  "system,gpu,collective,size_bytes,num_workers,devices_per_node,median_ms,mean_ms\n"
                                  "a100_dgx,A100,send_recv,65536,2,2,0.015,0\n"
                                  "a100_dgx,A100,send_recv,4194304,2,2,0.030,0\n"
                                  "a100_dgx,A100,send_recv,65536,2,1,0.050,0\n");
  const CollectiveValidation v = validate_collectives(read_collective_table(csv), f.dir.string());
  ASSERT_EQ(v.series.size(), 2u);
  for (const CollectiveSeries& s : v.series) {
    if (s.per_node == 2) {
      ASSERT_EQ(s.bytes.size(), 2u);
      EXPECT_TRUE(s.fit[0]);   // one node, below 1 MiB
      EXPECT_FALSE(s.fit[1]);  // 4 MiB: held out
      EXPECT_LT(s.predicted_s[0], 20e-6);
      EXPECT_GT(s.predicted_s[0], 10e-6);
    } else {
      EXPECT_FALSE(s.fit[0]);  // across nodes: held out
    }
  }
}

TEST(CollectiveValidation, ComparesEachRowWithItsSetUpAndMarksTheFitRows) {
  const Folder f;
  const double small = 65536, large = 4 << 20;
  const double t_small = predicted(f, 8, small), t_large = predicted(f, 4, large);
  // Measured: the small 8-GPU row twice the prediction, the large 4-GPU one half of it; rows out
  // of size order, extra columns ignored; one system without a set-up.
  const std::string csv = f.write("t.csv",
                                  "system,gpu,collective,size_bytes,num_workers,devices_per_node,median_ms,mean_ms\n"
                                  "a100_dgx,A100,all_reduce," + std::to_string(static_cast<long long>(large)) + ",4,4," +
                                      std::to_string(0.5 * t_large * 1e3) + ",0\n"
                                  "a100_dgx,A100,all_reduce," + std::to_string(static_cast<long long>(small)) + ",8,8," +
                                      std::to_string(2 * t_small * 1e3) + ",0\n"
                                  "a40_box,A40,send_recv,1024,2,2,0.01,0\n");
  const auto table = read_collective_table(csv);
  ASSERT_EQ(table.size(), 3u);
  const CollectiveValidation v = validate_collectives(table, f.dir.string());
  ASSERT_EQ(v.series.size(), 2u);
  ASSERT_EQ(v.skipped.size(), 1u);
  EXPECT_NE(v.skipped[0].find("a40_box"), std::string::npos);
  for (const CollectiveSeries& s : v.series) {
    ASSERT_EQ(s.bytes.size(), 1u);
    const double error = (s.predicted_s[0] - s.measured_s[0]) / s.measured_s[0];
    if (s.workers == 8) {
      EXPECT_NEAR(error, -0.5, 1e-3);  // predicted half of the doubled measurement
      EXPECT_TRUE(s.fit[0]);           // DGX, one node, below 1 MiB: fits the launch overhead
    } else {
      EXPECT_NEAR(error, 1.0, 1e-3);
      EXPECT_FALSE(s.fit[0]);          // held out
    }
    EXPECT_FALSE(s.choice[0].empty());
  }
  const std::string text = format_collective_validation(v, "text", true);
  EXPECT_NE(text.find("held-out rows"), std::string::npos);
  EXPECT_NE(text.find("+100.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("-50.0%"), std::string::npos) << text;
}

// The floor the report prints: a line through points that lie on one is found exactly, with no
// error; points off any line leave the error a line cannot remove; one size is not enough.
TEST(CollectiveValidation, AffineFloorRecoversALineAndMeasuresWhatNoLineFits) {
  const std::vector<double> bytes{1e6, 4e6, 16e6, 64e6};
  std::vector<double> on_line;
  for (double b : bytes) on_line.push_back(40e-6 + b / 150e9);
  const AffineFit exact = fit_affine(bytes, on_line);
  EXPECT_NEAR(exact.latency_s, 40e-6, 1e-12);
  EXPECT_NEAR(exact.bandwidth, 150e9, 1e-3 * 150e9);
  EXPECT_NEAR(exact.mean_abs_error, 0, 1e-12);
  // Bandwidth rising with size (a ramp): the best line still misses by a few percent.
  const std::vector<double> ramp{1e6 / 20e9, 4e6 / 60e9, 16e6 / 120e9, 64e6 / 150e9};
  const AffineFit bent = fit_affine(bytes, ramp);
  EXPECT_GT(bent.mean_abs_error, 0.01);
  EXPECT_LT(bent.mean_abs_error, 0.5);
  EXPECT_TRUE(std::isnan(fit_affine({1e6}, {1e-5}).mean_abs_error));
  EXPECT_TRUE(std::isnan(fit_affine({1e6, 1e6}, {1e-5, 2e-5}).mean_abs_error));  // one size twice
}

TEST(CollectiveValidation, TableErrorsAreLocated) {
  const Folder f;
  const std::string bad = f.write("bad.csv",
                                  "system,collective,size_bytes,num_workers,devices_per_node,median_ms\n"
                                  "a100_dgx,all_reduce,1024,2,2,0.05\n"
                                  "a100_dgx,all_reduce,1k,2,2,0.05\n");
  try {
    read_collective_table(bad);
    FAIL() << "a bad size was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, bad);
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 21);  // the cell "1k"
    EXPECT_EQ(e.key_path(), "size_bytes");
  }
  const std::string missing = f.write("missing.csv", "system,collective,size_bytes,num_workers,median_ms\n");
  try {
    read_collective_table(missing);
    FAIL() << "a table without devices_per_node was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().line, 1);
    EXPECT_EQ(e.key_path(), "devices_per_node");
  }
  const std::string uneven = f.write("uneven.csv",
                                     "system,collective,size_bytes,num_workers,devices_per_node,median_ms\n"
                                     "a100_dgx,all_reduce,1024,3,2,0.05\n");
  EXPECT_THROW(read_collective_table(uneven), ConfigError);
}

}  // namespace
}  // namespace dlsim::experiment
