// The spot market and billing keys of cluster scenarios: spot_trace (read once, before the run),
// reclaim: {fit: probe log}, fallback, region/zone, storage_region, the billing map; their errors
// located at their key; the cost columns and the pools table in the files.
#include <gtest/gtest.h>

#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {
namespace {

namespace fs = std::filesystem;

// A folder of this process with a small price history and a probe log.
fs::path data_folder() {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-market-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "prices.csv") << "timestamp_utc,region,availability_zone,instance_type,product_description,spot_price_usd_per_hour\n"
                                       "2020-01-01T00:00:00.000Z,us-east-1,us-east-1c,p2.8xlarge,Linux/UNIX,2.000000\n"
                                       "2020-01-01T01:00:00.000Z,us-east-1,us-east-1c,p2.8xlarge,Linux/UNIX,5.000000\n"
                                       "2020-01-01T02:00:00.000Z,us-east-1,us-east-1c,p2.8xlarge,Linux/UNIX,2.000000\n";
  // i-1: created 10:00, running 10:15, gone at 11:00 -> preempted at the midpoint 10:37:30 (up
  // 2250 s); i-2: created 10:00, still running at 12:00 when the log ends (censored, 7200 s).
  std::ofstream(dir / "probe.out") << "[2020-03-15T10:00:00.000Z] Created instance i-1 with 8 GPU(s) of type k80 in zone us-east-1b\n"
                                      "[2020-03-15T10:00:00.000Z] Created instance i-2 with 8 GPU(s) of type k80 in zone us-east-1b\n"
                                      "[2020-03-15T10:15:00.000Z] Instance i-1 running in zone us-east-1b\n"
                                      "[2020-03-15T11:00:00.000Z] Instance i-1 not running in zone us-east-1b\n"
                                      "[2020-03-15T12:00:00.000Z] Instance i-2 running in zone us-east-1b\n";
  return dir;
}

std::string pools(const std::string& spot_extra, const std::string& od_extra = "") {
  return "pools:\n"
         "  - {name: spot, instance: aws/p2.8xlarge, nodes: 1, capacity: spot, region: us-east-1, zone: us-east-1c" + spot_extra + "}\n"
         "  - {name: od, instance: aws/p2.8xlarge, nodes: 0, autoscale: {max: 2}, region: us-west-2, zone: us-west-2a" + od_extra + "}\n"
         "jobs:\n"
         "  - {name: j, pool: spot, gpus: 8, iterations: 3600, iteration_time: 1s,\n"
         "     checkpoint: {policy: fixed, interval: 10min, size: 10GB}}\n";
}

ConfigError error_of(const std::string& text, const fs::path& dir) {
  try {
    load_scenario_text(text, "m.yaml", {}, dir.string());
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError({"", 0, 0}, "", "");
}

TEST(SpotMarketYaml, TraceReadIntoPlainDataWithDefaults) {
  const fs::path dir = data_folder();
  const std::string text = pools(", spot_trace: {file: prices.csv, max_price: 3 USD/h, start: 2020-01-01T00:30:00Z}, fallback: od");
  const Scenario s = load_scenario_text(text, "m.yaml", {}, dir.string());
  const scheduler::PoolSpec& p = s.cluster_sim->variants[0].spec.pools[0];
  ASSERT_TRUE(p.market.enabled());
  EXPECT_EQ(p.market.prices.instance, "p2.8xlarge");  // the pool's instance without "aws/"
  EXPECT_EQ(p.market.prices.zone, "us-east-1c");      // the pool's zone
  EXPECT_EQ(p.market.prices.points.size(), 3u);
  EXPECT_DOUBLE_EQ(p.market.max_price_per_hour, 3.0);
  EXPECT_DOUBLE_EQ(p.market.start_s, 1800);            // 00:30 after the first point at 00:00
  EXPECT_EQ(p.fallback, "od");
  EXPECT_EQ(p.region, "us-east-1");
  // The checkpoint is stored in the region of the job's pool by default.
  EXPECT_EQ(s.cluster_sim->variants[0].spec.jobs[0].checkpoint.storage_region, "us-east-1");
  // Without max_price: the on-demand price of the catalog (AWS's default maximum), 7.20 USD/h.
  const Scenario d = load_scenario_text(pools(", spot_trace: {file: prices.csv}"), "m.yaml", {}, dir.string());
  EXPECT_DOUBLE_EQ(d.cluster_sim->variants[0].spec.pools[0].market.max_price_per_hour, 7.20);
  // Run: above 3 USD/h from 00:30 to 01:30 of simulated time, the job goes to "od" in us-west-2.
  const Results r = run(s);
  ASSERT_EQ(r.cluster_rows.size(), 1u);
  EXPECT_EQ(r.cluster_rows[0].done, 1);
  EXPECT_EQ(r.cluster_rows[0].fallback_nodes, 1);
  EXPECT_GT(r.cluster_rows[0].costs.egress, 0);  // its checkpoint crossed regions
  EXPECT_NEAR(r.cluster_rows[0].total_cost, r.cluster_rows[0].costs.total(), 1e-9);
  fs::remove_all(dir);
}

TEST(SpotMarketYaml, ReclaimFittedFromAProbeLog) {
  const fs::path dir = data_folder();
  const Scenario s = load_scenario_text(pools(", price: 2 USD/h, reclaim: {fit: probe.out, gpu: k80, zone: us-east-1b}"), "m.yaml", {},
                                        dir.string());
  const scheduler::Hazard& h = s.cluster_sim->variants[0].spec.pools[0].reclaim;
  EXPECT_EQ(h.kind, scheduler::Hazard::Kind::exponential);
  EXPECT_DOUBLE_EQ(h.mean_s, 2250.0 + 7200.0);  // exposure of both / one preemption
  const ConfigError e = error_of(pools(", price: 2 USD/h, reclaim: {fit: probe.out, zone: eu-west-1a}"), dir);
  EXPECT_EQ(e.key_path(), "pools[0].reclaim.fit");
  EXPECT_NE(e.message().find("no preemption"), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(SpotMarketYaml, BillingOverridesAndZones) {
  const fs::path dir = data_folder();
  const Scenario s = load_scenario_text(pools(", price: 2 USD/h") + "billing: {minimum: 0s, inter_zone_usd_per_gb: 0.05}\n", "m.yaml",
                                        {}, dir.string());
  const auto& spec = s.cluster_sim->variants[0].spec;
  EXPECT_DOUBLE_EQ(spec.billing.minimum_s, 0);
  EXPECT_DOUBLE_EQ(spec.egress.inter_zone_usd_per_gb, 0.05);
  EXPECT_DOUBLE_EQ(spec.egress.inter_region_usd_per_gb, 0.02);  // AWS default kept
  const ConfigError e = error_of(pools(", price: 2 USD/h") + "billing: {inter_region: 0.1}\n", dir);
  EXPECT_EQ(e.key_path(), "billing.inter_region");
  fs::remove_all(dir);
}

TEST(SpotMarketYaml, ErrorsNameTheKeyAndWhy) {
  const fs::path dir = data_folder();
  {
    const ConfigError e = error_of(pools(", price: 2 USD/h, fallback: odd"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].fallback");
    EXPECT_NE(e.message().find("no pool is named 'odd' (did you mean 'od'?)"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, 2) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", price: 2 USD/h, fallback: spot"), dir);
    EXPECT_NE(e.message().find("its own fallback"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", price: 2 USD/h, fallback: od", ", fallback: spot"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].fallback");
    EXPECT_NE(e.message().find("cycle (spot -> od -> spot)"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", spot_trace: {file: prices.csv, max_price: 3 GB}"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].spot_trace.max_price");
    EXPECT_NE(e.message().find("USD/h"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", spot_trace: {file: no-such-prices.csv}"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].spot_trace.file");
    EXPECT_NE(e.message().find((dir / "no-such-prices.csv").string() + "' does not exist"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", spot_trace: {file: prices.csv, zone: us-east-1a}"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].spot_trace.zone");
    EXPECT_NE(e.message().find("it has us-east-1c"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", spot_trace: {file: prices.csv, start: 2019-12-31T00:00:00Z}"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].spot_trace.start");
    EXPECT_NE(e.message().find("before the price history begins (2020-01-01T00:00:00Z)"), std::string::npos) << e.what();
  }
  {
    const ConfigError e = error_of(pools(", spot_trace: {file: prices.csv}, price: 2 USD/h"), dir);
    EXPECT_EQ(e.key_path(), "pools[0].price");
  }
  {
    const ConfigError e = error_of(pools(", price: 2 USD/h", ", spot_trace: {file: prices.csv}"), dir);
    EXPECT_EQ(e.key_path(), "pools[1].spot_trace");
    EXPECT_NE(e.message().find("only spot capacity"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(SpotMarketYaml, CostColumnsAndPoolsTableInTheFiles) {
  const fs::path dir = data_folder();
  const Results r = run(load_scenario_text(pools(", spot_trace: {file: prices.csv, max_price: 3 USD/h}, fallback: od"), "m.yaml", {},
                                           dir.string()));
  write_hdf5((dir / "m.h5").string(), r);
  write_csv((dir / "m.csv").string(), r);
  std::ifstream csv(dir / "m.csv");
  std::string header;
  std::getline(csv, header);
  for (const char* column : {"on_demand_cost", "spot_cost", "reserved_cost", "provisioning_cost", "egress_cost", "fallback_nodes",
                             "unavailable_time"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << " not in " << header;
  }
  const hid_t file = H5Fopen((dir / "m.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* object : {"/results/spot_cost", "/jobs/egress_cost", "/pools/pool", "/pools/spot_cost", "/pools/fallback_nodes"}) {
    EXPECT_GT(H5Lexists(file, object, H5P_DEFAULT), 0) << object;
  }
  H5Fclose(file);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dlsim::experiment
