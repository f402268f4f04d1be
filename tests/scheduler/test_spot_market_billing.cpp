// The spot market and billing: price-history billing, reclamation at the crossings of the maximum
// price, no provisioning while the price is above it, fallback pools, reserved commitments,
// egress, and costs by category adding up. Every expected number is worked out by hand in the
// comments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dime_traces.hpp"
#include "scheduler/billing.hpp"
#include "scheduler/cluster_simulation.hpp"
#include "scheduler/spot_market.hpp"
#include "scheduler/spot_trace.hpp"

namespace dlsim::scheduler {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

SpotPriceSeries series(std::vector<SpotPricePoint> points) {
  SpotPriceSeries s;
  s.instance = "test.8x";
  s.zone = "zone-a";
  s.points = std::move(points);
  return s;
}

// A spot pool of `nodes` 8-GPU nodes replaying `prices` with a maximum of 4 USD/h.
PoolSpec market_pool(const std::string& name, int nodes, std::vector<SpotPricePoint> prices, double notice_s) {
  PoolSpec p;
  p.name = name;
  p.nodes = nodes;
  p.capacity = Capacity::spot;
  p.provisioning_s = 0;
  p.notice_s = notice_s;
  p.market.prices = series(std::move(prices));
  p.market.max_price_per_hour = 4.0;
  return p;
}

PoolSpec on_demand_pool(const std::string& name, int nodes, int max_nodes, double price) {
  PoolSpec p;
  p.name = name;
  p.nodes = nodes;
  p.max_nodes = max_nodes;
  p.price_per_node_hour = price;
  p.provisioning_s = 0;
  return p;
}

JobSpec gang(const std::string& name, int gpus, std::int64_t seconds_of_work) {
  JobSpec j;
  j.name = name;
  j.gpus = gpus;
  j.iterations = seconds_of_work;  // one-second iterations
  j.iteration_s = 1.0;
  j.checkpoint.warmup_s = 0;
  return j;
}

// ---- pure arithmetic ----------------------------------------------------------------------

TEST(Egress, PricesByZoneAndRegion) {
  const Location a{"us-east-1", "us-east-1a", false}, b{"us-east-1", "us-east-1b", false};
  const Location west{"us-west-2", "us-west-2a", false}, s3_east{"us-east-1", "", true};
  EXPECT_DOUBLE_EQ(egress_cost(100e9, a, a), 0.0);                   // one zone: free
  EXPECT_DOUBLE_EQ(egress_cost(100e9, a, b), 100 * 0.01 * 2);        // 0.01 out + 0.01 in per GB: 2.00
  EXPECT_DOUBLE_EQ(egress_cost(50e9, a, west), 50 * 0.02);           // once at the source: 1.00
  EXPECT_DOUBLE_EQ(egress_cost(50e9, s3_east, west), 50 * 0.02);     // regional store to another region
  EXPECT_DOUBLE_EQ(egress_cost(100e9, b, s3_east), 0.0);             // S3 in the same region: free
  EXPECT_DOUBLE_EQ(egress_cost(100e9, s3_east, b), 0.0);
  const EgressPrices dear{0.05, 0.09};
  EXPECT_DOUBLE_EQ(egress_cost(100e9, a, b, dear), 100 * 0.05 * 2);  // 10.00
  EXPECT_DOUBLE_EQ(egress_cost(10e9, west, a, dear), 10 * 0.09);     // 0.90
  EXPECT_THROW(egress_cost(-1, a, b), std::invalid_argument);
}

TEST(Billing, PriceHistoryIsIntegratedOverTheTimeHeld) {
  // 1 USD/h until 1800 s, 3 until 5400 s, then 2.
  const SpotPriceSeries s = series({{0, 1.0}, {1800, 3.0}, {5400, 2.0}});
  // Held 3600 s from 900 s: 900 s at 1 and 2700 s at 3 = (900 + 8100) / 3600 = 2.5 USD (the
  // price at the start would give 1.0).
  EXPECT_DOUBLE_EQ(billed_cost(s, 900, 3600), 2.5);
  // Held 10 s from 1790 s is billed the one-minute minimum from 1790: 10 s at 1, 50 s at 3 =
  // 160 / 3600 USD.
  EXPECT_DOUBLE_EQ(billed_cost(s, 1790, 10), 160.0 / 3600);
  // Past the last point the last price holds: 3600 s from 6000 at 2 = 2 USD.
  EXPECT_DOUBLE_EQ(billed_cost(s, 6000, 3600), 2.0);
  EXPECT_DOUBLE_EQ(billed_cost(s, 100, 0), 0.0);
}

TEST(Billing, CommitmentBillsEveryHourOfThePeriod) {
  EXPECT_DOUBLE_EQ(committed_cost(10, 2, 5400), 2 * 10 * 2.0);  // 1.5 h -> 2 whole hours: 40 USD
  EXPECT_DOUBLE_EQ(committed_cost(10, 2, 7200), 40.0);
  EXPECT_DOUBLE_EQ(committed_cost(10, 3, 0), 0.0);
  EXPECT_THROW(committed_cost(10, -1, 5), std::invalid_argument);
}

TEST(SpotMarket, CrossingsOfTheMaximumPrice) {
  SpotMarket m;
  m.prices = series({{0, 2.0}, {100, 5.0}, {200, 6.0}, {300, 2.5}, {400, 4.5}});
  m.max_price_per_hour = 4.0;
  m.start_s = 50;  // simulated 0 is series 50 (price 2.0)
  EXPECT_TRUE(m.open_at(0));
  EXPECT_DOUBLE_EQ(m.next_crossing(0), 50);     // series 100: 5.0 > 4
  EXPECT_FALSE(m.open_at(50));
  EXPECT_DOUBLE_EQ(m.next_crossing(50), 250);   // 200 (6.0) stays above; 300 (2.5) opens
  EXPECT_DOUBLE_EQ(m.next_crossing(250), 350);  // 400: 4.5 closes
  EXPECT_EQ(m.next_crossing(350), kInf);        // the last price holds forever
  m.max_price_per_hour = 5.0;                   // at the maximum is still open
  EXPECT_TRUE(m.open_at(50));
}

// ---- the simulation -----------------------------------------------------------------------

TEST(SpotMarketSimulation, ReclaimedAtTheCrossingAfterTheNoticeAndBilledByTheHistory) {
  ClusterSpec spec;
  // 1 USD/h, above the maximum (5 > 4) from 1000 s to 3000 s.
  spec.pools = {market_pool("spot", 1, {{0, 1.0}, {1000, 5.0}, {3000, 1.0}}, 120)};
  spec.jobs = {gang("j", 8, 2000)};
  const ClusterResult r = simulate_cluster(spec, {});
  const JobResult& j = r.jobs[0];
  // Notice at 1000, node lost at 1120 (no checkpoint: 1120 iterations lost); the replacement
  // waits for the price to fall at 3000, is ready at once, and the job runs 2000 s again.
  EXPECT_EQ(j.state, JobState::done);
  EXPECT_DOUBLE_EQ(j.finish_s, 5000);
  EXPECT_EQ(j.preemptions, 1);
  EXPECT_EQ(j.useful_iterations, 2000);
  EXPECT_EQ(j.computed_iterations, 1120 + 2000);
  EXPECT_DOUBLE_EQ(j.lost_gpu_s, 1120.0 * 8);
  EXPECT_EQ(r.pools[0].reclaimed, 1);
  EXPECT_EQ(r.pools[0].nodes_requested, 2);
  EXPECT_DOUBLE_EQ(r.pools[0].unavailable_s, 2000);
  // Node 1: 1000 s at 1 + 120 s at 5 = 1600; node 2: 2000 s at 1. (1600 + 2000) / 3600 = 1 USD.
  EXPECT_NEAR(r.costs.spot, 1.0, 1e-12);
  EXPECT_NEAR(r.total_cost_usd, 1.0, 1e-12);
  EXPECT_NEAR(r.costs.idle, 0.0, 1e-12);  // the job held both nodes all along
  EXPECT_NEAR(j.costs.spot, 1.0, 1e-12);
}

TEST(SpotMarketSimulation, NoProvisioningWhileThePriceIsAboveTheMaximum) {
  ClusterSpec spec;
  // Above the maximum over [100, 130) and [160, 1000). Replacements take 50 s.
  spec.pools = {market_pool("spot", 1, {{0, 1.0}, {100, 5.0}, {130, 1.0}, {160, 5.0}, {1000, 1.0}}, 10)};
  spec.pools[0].provisioning_s = 50;
  spec.billing.minimum_s = 0;
  spec.jobs = {gang("j", 8, 500)};
  const ClusterResult r = simulate_cluster(spec, {});
  // 100: notice; 110: lost, the replacement waits; 130: requested; 160: the price rises while
  // it boots; 180: ready and reclaimed at once, the next request waits; 1000: requested; 1050:
  // ready, the job starts over and ends at 1550.
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 1550);
  EXPECT_EQ(r.pools[0].nodes_requested, 3);
  EXPECT_EQ(r.pools[0].reclaimed, 2);
  EXPECT_DOUBLE_EQ(r.pools[0].unavailable_s, 30 + 840);
  // Node 1 [0, 110): 100 at 1 + 10 at 5 = 150. Node 2 [130, 180): 30 at 1 + 20 at 5 = 130, all of
  // it provisioning. Node 3 [1000, 1550) at 1 = 550, of which 50 provisioning. (USD-seconds / 3600.)
  EXPECT_NEAR(r.costs.spot, (150 + 130 + 550) / 3600.0, 1e-12);
  EXPECT_NEAR(r.costs.provisioning, (130 + 50) / 3600.0, 1e-12);
  EXPECT_NEAR(r.costs.idle, (130 + 50) / 3600.0, 1e-12);
}

TEST(SpotMarketSimulation, FallbackPoolTakesTheReplacementAndTheJobFinishes) {
  ClusterSpec spec;
  // The price rises above the maximum at 1000 s and never falls back.
  spec.pools = {market_pool("spot", 1, {{0, 1.0}, {1000, 5.0}}, 120), on_demand_pool("od", 0, 1, 10.0)};
  spec.pools[0].fallback = "od";
  spec.pools[0].region = "us-east-1";
  spec.pools[0].zone = "us-east-1c";
  spec.pools[1].region = "us-west-2";
  spec.pools[1].zone = "us-west-2a";
  spec.pools[1].provisioning_s = 100;
  JobSpec j = gang("j", 8, 3000);
  j.pool = "spot";  // the fallback serves jobs that name its pool
  j.checkpoint.policy = CheckpointPolicy::fixed;
  j.checkpoint.interval_s = 1e6;  // only the emergency checkpoint in the notice
  j.checkpoint.size_bytes = 1e9;
  j.checkpoint.write_bandwidth = 1e8;  // 10 s
  j.checkpoint.read_bandwidth = 1e9;   // 1 s
  j.checkpoint.storage_region = "us-east-1";
  spec.jobs = {j};
  SimulationOptions o;
  o.horizon_s = 20000;
  const ClusterResult r = simulate_cluster(spec, o);
  const JobResult& jr = r.jobs[0];
  // 1000: notice, checkpoint of 1000 iterations until 1010; 1120: node lost (110 iterations
  // lost), the replacement goes to "od": ready at 1220, read 1 s, 2000 iterations: done at 3221.
  EXPECT_EQ(jr.state, JobState::done);
  EXPECT_DOUBLE_EQ(jr.finish_s, 3221);
  EXPECT_EQ(jr.checkpoints, 1);
  EXPECT_EQ(jr.useful_iterations, 3000);
  EXPECT_EQ(jr.computed_iterations, 1000 + 110 + 2000);
  EXPECT_EQ(r.pools[1].nodes_requested, 1);
  EXPECT_EQ(r.pools[1].fallback_nodes, 1);
  // Spot [0, 1120): 1000 at 1 + 120 at 5 = 1600/3600. On-demand [1120, 3221): 2101 s at 10.
  EXPECT_NEAR(r.costs.spot, 1600 / 3600.0, 1e-12);
  EXPECT_NEAR(r.costs.on_demand, 2101 * 10 / 3600.0, 1e-12);
  // The write goes to S3 in its own region (free); the read crosses to us-west-2: 1 GB x 0.02.
  EXPECT_NEAR(r.costs.egress, 0.02, 1e-12);
  EXPECT_NEAR(jr.costs.egress, 0.02, 1e-12);
  EXPECT_NEAR(r.pools[1].costs.egress, 0.02, 1e-12);
  EXPECT_NEAR(r.total_cost_usd, 1600 / 3600.0 + 2101 * 10 / 3600.0 + 0.02 + r.costs.storage, 1e-9);

  // Without the fallback the replacement waits for a price that never falls: unfinished.
  spec.pools[0].fallback.clear();
  const ClusterResult alone = simulate_cluster(spec, o);
  EXPECT_EQ(alone.unfinished, 1);
  EXPECT_EQ(alone.jobs[0].useful_iterations, 1000);
  EXPECT_EQ(alone.pools[1].nodes_requested, 0);
}

TEST(SpotMarketSimulation, ScaleUpGoesToTheFallbackWhileTheMarketIsClosed) {
  ClusterSpec spec;
  // Closed from the start; the spot pool could grow to one node, the fallback to two.
  spec.pools = {market_pool("spot", 0, {{0, 9.0}}, 120), on_demand_pool("od", 0, 2, 10.0)};
  spec.pools[0].max_nodes = 1;
  spec.pools[0].fallback = "od";
  spec.pools[1].provisioning_s = 60;
  JobSpec j = gang("j", 16, 100);
  j.pool = "spot";
  spec.jobs = {j};
  const ClusterResult r = simulate_cluster(spec, {});
  EXPECT_EQ(r.pools[0].nodes_requested, 0);
  EXPECT_EQ(r.pools[1].nodes_requested, 2);
  EXPECT_EQ(r.pools[1].fallback_nodes, 2);
  EXPECT_DOUBLE_EQ(r.jobs[0].first_start_s, 60);
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 160);
  EXPECT_DOUBLE_EQ(r.pools[0].unavailable_s, 160);
}

TEST(ReservedPool, CommitmentBilledForTheWholeRunAndExtraNodesOnDemand) {
  ClusterSpec spec;
  PoolSpec p = on_demand_pool("res", 2, 3, 5.0);
  p.capacity = Capacity::reserved;
  p.on_demand_price_per_node_hour = 12.0;
  p.idle_timeout_s = 100;
  spec.pools = {p};
  spec.jobs = {gang("a", 16, 1000), gang("b", 8, 500)};
  const ClusterResult r = simulate_cluster(spec, {});
  // a holds both committed nodes 0-1000; b gets a third node (beyond the commitment) at 0, ends
  // at 500, and the idle node is released at 600.
  EXPECT_DOUBLE_EQ(r.makespan_s, 1000);
  // Commitment: 2 nodes x 5 USD/h x 1 whole hour = 10. Extra node: 600 s at 12 = 2.
  EXPECT_NEAR(r.costs.reserved, 10.0, 1e-12);
  EXPECT_NEAR(r.costs.on_demand, 2.0, 1e-12);
  EXPECT_NEAR(r.pools[0].cost_usd, 12.0, 1e-12);
  // Idle: the commitment less its busy time (2 x 1000 s at 5) = 10 - 25/9; the extra node 100 of
  // 600 s idle = 2/6.
  EXPECT_NEAR(r.costs.idle, 10 - 2 * 1000 * 5 / 3600.0 + 2.0 / 6, 1e-12);
  EXPECT_NEAR(r.jobs[0].costs.reserved, 2 * 1000 * 5 / 3600.0, 1e-12);
  EXPECT_NEAR(r.jobs[1].costs.on_demand, 500 * 12 / 3600.0, 1e-12);
  // Every GPU held by jobs when busy: job shares + idle = node time.
  EXPECT_NEAR(r.jobs[0].cost_usd + r.jobs[1].cost_usd + r.costs.idle, r.costs.node_time(), 1e-12);
}

TEST(CostBreakdown, CategoriesAddUpToTheTotals) {
  ClusterSpec spec;
  PoolSpec reserved = on_demand_pool("res", 1, -1, 4.0);
  reserved.capacity = Capacity::reserved;
  spec.pools = {market_pool("spot", 2, {{0, 1.0}, {3000, 6.0}, {9000, 2.0}}, 120), on_demand_pool("od", 0, 4, 9.0), reserved};
  spec.pools[0].fallback = "od";
  spec.pools[0].zone = "a";
  spec.pools[1].zone = "b";
  spec.pools[2].zone = "c";
  for (int i = 0; i < 6; ++i) {
    JobSpec j = gang("j" + std::to_string(i), i % 2 ? 8 : 4, 2000 + 700 * i);
    j.submit_s = 500.0 * i;
    j.checkpoint.policy = CheckpointPolicy::fixed;
    j.checkpoint.interval_s = 900;
    j.checkpoint.size_bytes = 20e9;
    j.checkpoint.storage_zone = "c";  // a zonal file system: the other zones pay egress
    spec.jobs.push_back(j);
  }
  const ClusterResult r = simulate_cluster(spec, {});
  ASSERT_EQ(r.unfinished, 0);
  double pools = 0, egress = 0, storage = 0;
  for (const PoolResult& p : r.pools) {
    pools += p.cost_usd;
    egress += p.costs.egress;
    EXPECT_NEAR(p.cost_usd, p.costs.node_time(), 1e-9) << p.name;
  }
  for (const JobResult& j : r.jobs) {
    storage += j.costs.storage;
    EXPECT_NEAR(j.cost_usd, j.costs.total(), 1e-9) << j.name;
    EXPECT_EQ(j.useful_iterations, spec.jobs[static_cast<std::size_t>(&j - r.jobs.data())].iterations);
  }
  EXPECT_NEAR(r.costs.node_time(), pools, 1e-9);
  EXPECT_NEAR(r.costs.egress, egress, 1e-12);
  EXPECT_GT(r.costs.egress, 0);
  EXPECT_NEAR(r.costs.storage, storage, 1e-12);
  EXPECT_GT(r.costs.spot, 0);
  EXPECT_GT(r.costs.on_demand, 0);  // the fallback served while the price was above 4
  EXPECT_GT(r.costs.reserved, 0);
  EXPECT_NEAR(r.total_cost_usd, r.costs.on_demand + r.costs.spot + r.costs.reserved + r.costs.storage + r.costs.egress, 1e-9);
  EXPECT_NEAR(r.compute_cost_usd, r.costs.on_demand + r.costs.spot + r.costs.reserved, 1e-9);
  EXPECT_LE(r.costs.provisioning, r.costs.idle + 1e-12);
  EXPECT_LE(r.costs.idle, r.costs.node_time());
}

TEST(ClusterSpecValidation, FallbacksMustNameAnotherPoolWithoutCycles) {
  ClusterSpec spec;
  spec.pools = {on_demand_pool("a", 1, -1, 1), on_demand_pool("b", 1, -1, 1), on_demand_pool("c", 1, -1, 1)};
  const auto message = [&]() -> std::string {
    try {
      validate(spec);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  spec.pools[0].fallback = "nope";
  EXPECT_NE(message().find("names no pool ('nope')"), std::string::npos) << message();
  spec.pools[0].fallback = "a";
  EXPECT_NE(message().find("names the pool itself"), std::string::npos) << message();
  spec.pools[0].fallback = "b";
  spec.pools[1].fallback = "c";
  EXPECT_EQ(message(), "");
  spec.pools[2].fallback = "a";
  EXPECT_NE(message().find("cycle (a -> b -> c -> a)"), std::string::npos) << message();
}

// ---- the real price history ---------------------------------------------------------------

TEST(SpotMarketSimulation, RealHistoryP28xlargeUsEast1c) {
  REQUIRE_TRACES(dir);
  const auto all = read_aws_spot_prices(dir + "/aws_spot_price_history_p2_p3_2020.csv");
  const auto it = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.instance == "p2.8xlarge" && s.zone == "us-east-1c"; });
  ASSERT_NE(it, all.end());
  ClusterSpec spec;
  PoolSpec p = market_pool("spot", 4, {}, 120);
  p.market.prices = *it;
  p.market.max_price_per_hour = 3.0;
  // Simulated 0 = 2020-01-21T00:00:00Z (1579564800 s after 1970), when the price was 2.16.
  p.market.start_s = 1579564800.0 - it->start_unix_s;
  spec.pools = {p};
  spec.jobs = {gang("j", 32, 600000)};
  // The first price above 3.0: 3.0698 at 2020-01-26T01:45:36Z = 5 d + 6336 s = 438336 s; the
  // first at or below it again: 2.9875 at 2020-02-19T16:17:45Z = 29 d + 58665 s = 2564265 s.
  EXPECT_DOUBLE_EQ(spec.pools[0].market.next_crossing(0), 438336);
  EXPECT_DOUBLE_EQ(spec.pools[0].market.next_crossing(438336), 2564265);
  const ClusterResult r = simulate_cluster(spec, {});
  // All 4 nodes are reclaimed 120 s after the rise; the job (no checkpoints) starts over when
  // the price falls and runs its 600000 s.
  EXPECT_EQ(r.pools[0].reclaimed, 4);
  EXPECT_DOUBLE_EQ(r.jobs[0].finish_s, 2564265 + 600000);
  EXPECT_EQ(r.jobs[0].useful_iterations, 600000);
  EXPECT_EQ(r.jobs[0].computed_iterations, 438456 + 600000);
  EXPECT_DOUBLE_EQ(r.pools[0].unavailable_s, 2564265 - 438336);
  // The price rose from 2.16 to 3.07 while the first nodes ran: their bill lies strictly between
  // the two prices times the time held (the price at the start alone would give the lower one).
  const double first_hours = 4 * 438456 / 3600.0, second_hours = 4 * 600000 / 3600.0;
  EXPECT_GT(r.costs.spot, 2.16 * first_hours + 2.16 * second_hours);
  EXPECT_LT(r.costs.spot, 3.0698 * first_hours + 3.0 * second_hours);
}

}  // namespace
}  // namespace dlsim::scheduler
