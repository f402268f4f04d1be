#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>
#include <vector>
#include <stdexcept>
#include <string>

#include "dime_traces.hpp"
#include "scheduler/spot_trace.hpp"

namespace dlsim::scheduler {
namespace {

namespace fs = std::filesystem;
constexpr double kHour = 3600;

const SpotPriceSeries& find(const std::vector<SpotPriceSeries>& all, const std::string& instance,
                            const std::string& zone) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.instance == instance && s.zone == zone; });
  if (it == all.end()) throw std::runtime_error("no series " + instance + " " + zone);
  return *it;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

void expect_runtime_error_at(const std::function<void()>& f, const std::string& where) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one at " << where;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
}

TEST(SpotPriceSeries, StepSemanticsAndMeanByHand) {
  const SpotPriceSeries s{"p3.2xlarge", "us-east-1a", 0, {{0, 1.0}, {3600, 2.0}, {7200, 4.0}}};
  EXPECT_EQ(s.price_at(0), 1.0);
  EXPECT_EQ(s.price_at(3599.999), 1.0);
  EXPECT_EQ(s.price_at(3600), 2.0);  // a price holds from its own timestamp
  EXPECT_EQ(s.price_at(1e9), 4.0);   // the last price holds forever
  EXPECT_THROW(s.price_at(-1), std::out_of_range);
  // [1800, 9000]: 1800 s at 1, 3600 s at 2, 1800 s at 4 -> 16200 / 7200.
  EXPECT_DOUBLE_EQ(s.mean_price(1800, 9000), 2.25);
  EXPECT_DOUBLE_EQ(s.mean_price(4000, 5000), 2.0);  // inside one step
  EXPECT_DOUBLE_EQ(s.mean_price(3600, 3600), 2.0);
  EXPECT_THROW(s.mean_price(5000, 4000), std::invalid_argument);
  EXPECT_THROW(s.mean_price(-5, 4000), std::out_of_range);
}

TEST(SpotTrace, AwsPriceHistory) {
  REQUIRE_TRACES(dir);
  const auto all = read_aws_spot_prices(dir + "/aws_spot_price_history_p2_p3_2020.csv");
  ASSERT_EQ(all.size(), 98u);  // (p2/p3 type, zone) pairs in six regions
  std::size_t points = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_FALSE(all[i].points.empty());
    EXPECT_EQ(all[i].points.front().t_s, 0.0);
    for (std::size_t j = 1; j < all[i].points.size(); ++j) ASSERT_LT(all[i].points[j - 1].t_s, all[i].points[j].t_s);
    if (i > 0) {
      EXPECT_LT(std::tie(all[i - 1].instance, all[i - 1].zone), std::tie(all[i].instance, all[i].zone));
    }
    points += all[i].points.size();
  }
  EXPECT_EQ(points, 16560u);  // every data row, none duplicated

  // First row of the file: 2019-12-20T06:39:10Z, eu-west-1c, p3.16xlarge, 26.44 (its only record).
  const auto& big = find(all, "p3.16xlarge", "eu-west-1c");
  EXPECT_EQ(big.start_unix_s, 1576823950.0);
  EXPECT_EQ(big.price_at(30 * 86400), 26.44);

  // p3.2xlarge in us-east-1c: 316 records, 0.919 from 2019-12-23T00:45:25Z, 0.9201 from
  // 22,646 s later; the last row of the file (2020-03-23T16:09:42Z) is its last price, 1.0201.
  const auto& s = find(all, "p3.2xlarge", "us-east-1c");
  ASSERT_EQ(s.points.size(), 316u);
  EXPECT_EQ(s.start_unix_s, 1577061925.0);
  EXPECT_EQ(s.price_at(22645), 0.919);
  EXPECT_EQ(s.price_at(22646), 0.9201);
  EXPECT_EQ(s.start_unix_s + s.points.back().t_s, 1584979782.0);
  EXPECT_EQ(s.price_at(s.points.back().t_s + 1e6), 1.0201);

  // Mean over [mid of points 0-1, mid of points 2-3], by hand from the points.
  const auto& p = s.points;
  const double t0 = (p[0].t_s + p[1].t_s) / 2, t1 = (p[2].t_s + p[3].t_s) / 2;
  const double by_hand = (p[0].usd_per_hour * (p[1].t_s - t0) + p[1].usd_per_hour * (p[2].t_s - p[1].t_s) +
                          p[2].usd_per_hour * (t1 - p[2].t_s)) / (t1 - t0);
  EXPECT_NEAR(s.mean_price(t0, t1), by_hand, 1e-12);
  EXPECT_GT(s.mean_price(0, s.points.back().t_s), 0.9);  // p3.2xlarge on-demand is $3.06/h
  EXPECT_LT(s.mean_price(0, s.points.back().t_s), 1.1);
}

TEST(SpotTrace, AzureDailyPrices) {
  REQUIRE_TRACES(dir);
  const auto east = read_azure_spot_prices(dir + "/azure_spot_cost_us_east.csv", "us-east");
  ASSERT_EQ(east.size(), 12u);
  const auto& nc6 = find(east, "NC6", "us-east");
  EXPECT_EQ(nc6.points.size(), 29u);                // 2/24/2020 to 3/23/2020, one a day
  EXPECT_EQ(nc6.start_unix_s, 1582502400.0);        // 2020-02-24T00:00:00Z
  EXPECT_EQ(nc6.price_at(0), 0.12276);
  EXPECT_EQ(nc6.points.back().t_s, 28 * 86400.0);
  // Only the K80 sizes were offered in us-north-central: empty cells are skipped.
  EXPECT_EQ(read_azure_spot_prices(dir + "/azure_spot_cost_us_north_central.csv", "us-north-central").size(), 4u);
}

TEST(SpotTrace, PreemptionProbeLogs) {
  REQUIRE_TRACES(dir);
  const auto aws = read_instance_lifetimes(dir + "/availability/aws_persistent_2020-03-15.out");
  ASSERT_EQ(aws.size(), 39u);
  EXPECT_EQ(std::count_if(aws.begin(), aws.end(), [](const auto& l) { return l.preempted; }), 32);
  EXPECT_EQ(aws.front().id, "i-0ad196950b57aa7e0");
  EXPECT_EQ(aws.front().gpus, 1);
  EXPECT_EQ(aws.front().gpu_type, "v100");
  EXPECT_EQ(aws.front().zone, "us-east-1b");
  const auto aws_times = read_preemption_times(dir + "/availability/aws_persistent_2020-03-15.out");
  ASSERT_EQ(aws_times.size(), 32u);
  EXPECT_GT(*std::min_element(aws_times.begin(), aws_times.end()), 0);
  // Censored MLE: 371.8 instance-hours up / 32 preemptions.
  EXPECT_NEAR(fit_exponential_hazard(aws).mean_s / kHour, 11.618, 0.01);
  EXPECT_NEAR(fit_exponential_hazard(aws_times).mean_s / kHour, 3.127, 0.01);  // ignoring the censored

  std::vector<InstanceLifetime> gcp;
  for (const char* day : {"2020-03-01", "2020-03-04"}) {
    const auto part = read_instance_lifetimes(dir + "/availability/gcp_persistent_" + day + ".out");
    gcp.insert(gcp.end(), part.begin(), part.end());
  }
  ASSERT_EQ(gcp.size(), 423u + 28u);
  EXPECT_EQ(std::count_if(gcp.begin(), gcp.end(), [](const auto& l) { return l.preempted; }), 417 + 28);
  // GCP stops preemptible VMs after 24 h at the latest: no lifetime exceeds 24 h + one probe interval.
  for (const auto& l : gcp) EXPECT_LT(l.up_s, 24.75 * kHour) << l.id;
  EXPECT_NEAR(fit_exponential_hazard(gcp).mean_s / kHour, 1.48, 0.01);
}

TEST(SpotTrace, MalformedRowsNameFileAndLine) {
  const std::string header = "timestamp_utc,region,availability_zone,instance_type,product_description,spot_price_usd_per_hour\n";
  const std::string good = "2019-12-20T06:39:10.000Z,eu-west-1,eu-west-1c,p3.16xlarge,Linux/UNIX,26.44\n";
  const auto bad_price = write_temp("bad_price.csv", header + good + "2019-12-20T06:39:11.000Z,eu-west-1,eu-west-1c,p3.16xlarge,Linux/UNIX,abc\n");
  expect_runtime_error_at([&] { read_aws_spot_prices(bad_price); }, "bad_price.csv:3:");
  const auto bad_time = write_temp("bad_time.csv", header + "2019-13-20T06:39:10.000Z,eu-west-1,eu-west-1c,p3.16xlarge,Linux/UNIX,1\n");
  expect_runtime_error_at([&] { read_aws_spot_prices(bad_time); }, "bad_time.csv:2:");
  const auto short_row = write_temp("short_row.csv", header + good + good + "2019-12-20T06:39:10.000Z,eu-west-1\n");
  expect_runtime_error_at([&] { read_aws_spot_prices(short_row); }, "short_row.csv:4:");
  const auto no_column = write_temp("no_column.csv", "timestamp_utc,zone\n");
  expect_runtime_error_at([&] { read_aws_spot_prices(no_column); }, "no_column.csv:1:");
  expect_runtime_error_at([] { read_aws_spot_prices("/nonexistent/prices.csv"); }, "/nonexistent/prices.csv");
  const auto azure = write_temp("azure.csv", "Date,NC6\n2/24/2020,$0.1\n2/30/2020,$0.1\n");
  expect_runtime_error_at([&] { read_azure_spot_prices(azure, "x"); }, "azure.csv:3:");
  const auto log = write_temp("probe.out",
                              "[2020-03-15T10:07:33.000Z] Created instance a with 1 GPU(s) of type k80 in zone z\n"
                              "[2020-03-15T10:17:33.000Z] Instance a exploded\n");
  expect_runtime_error_at([&] { read_instance_lifetimes(log); }, "probe.out:2:");
}

TEST(SpotTrace, ProbeLifetimesAndCensoredFit) {
  // a: up at 0, seen at 600 s, gone at 1200 s -> preempted at 900 s. b: still up at the end
  // (last seen at 1800 s) -> censored. c never came up. Fit: (900 + 1800) / 1 preemption.
  const auto log = write_temp("probe_ok.out",
                              "[2020-03-15T10:00:00.000Z] Created instance a with 8 GPU(s) of type v100 in zone z1\n"
                              "[2020-03-15T10:00:00.000Z] Created instance b with 1 GPU(s) of type k80 in zone z2\n"
                              "[2020-03-15T10:00:01.000Z] Instance c creation failed\n"
                              "[2020-03-15T10:00:01.000Z] Instance c not running in zone z2\n"
                              "[2020-03-15T10:10:00.000Z] Instance a running in zone z1\n"
                              "[2020-03-15T10:20:00.000Z] Instance a not running in zone z1\n"
                              "[2020-03-15T10:20:01.000Z] Successfully deleted instance a\n"
                              "[2020-03-15T10:30:00.000Z] Instance b running in zone z2\n"
                              "[2020-03-15T10:31:00.000Z] Instance with 8 GPU(s) of type k80 creation failed\n");
  const auto lives = read_instance_lifetimes(log);
  ASSERT_EQ(lives.size(), 2u);
  EXPECT_TRUE(lives[0].preempted);
  EXPECT_DOUBLE_EQ(lives[0].up_s, 900);
  EXPECT_EQ(lives[0].gpus, 8);
  EXPECT_FALSE(lives[1].preempted);
  EXPECT_DOUBLE_EQ(lives[1].up_s, 1800);
  EXPECT_DOUBLE_EQ(fit_exponential_hazard(lives).mean_s, 2700);
  EXPECT_EQ(read_preemption_times(log), std::vector<double>{900});
  EXPECT_DOUBLE_EQ(fit_exponential_hazard(std::vector<double>{1, 2, 6}).mean_s, 3);
  EXPECT_THROW(fit_exponential_hazard(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(fit_exponential_hazard(std::vector<InstanceLifetime>{lives[1]}), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::scheduler
