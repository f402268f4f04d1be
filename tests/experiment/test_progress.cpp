#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "experiment/load.hpp"
#include "experiment/progress.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {
namespace {

TEST(ProgressFormat, EtaInSecondsMinutesHoursAndDays) {
  EXPECT_EQ(format_eta(0), "0 s");
  EXPECT_EQ(format_eta(42.4), "42 s");
  EXPECT_EQ(format_eta(200), "3 min 20 s");
  EXPECT_EQ(format_eta(3599.6), "1 h 00 min");  // rounds to 3600 s
  EXPECT_EQ(format_eta(2 * 3600 + 5 * 60 + 9), "2 h 05 min");
  EXPECT_EQ(format_eta(3 * 86400 + 4 * 3600 + 59), "3 d 4 h");
  EXPECT_EQ(format_eta(-1), "?");
  EXPECT_EQ(format_eta(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_eta(std::nan("")), "?");
}

TEST(ProgressFormat, RatesWithThreeSignificantFiguresAndUnknownOnes) {
  EXPECT_EQ(format_rate(0.512), "0.512/s");
  EXPECT_EQ(format_rate(12.34), "12.3/s");
  EXPECT_EQ(format_rate(4560.2), "4,560/s");
  EXPECT_EQ(format_rate(12345), "12.3 k/s");
  EXPECT_EQ(format_rate(1.234e6), "1.23 M/s");
  EXPECT_EQ(format_rate(0), "-/s");
  EXPECT_EQ(format_rate(-3), "-/s");
  EXPECT_EQ(format_rate(std::numeric_limits<double>::infinity()), "-/s");
}

TEST(ProgressFormat, CountsAreGroupedIntegersOrOneDecimal) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(12.5), "12.5");
}

TEST(ProgressBar, DisabledWritesNothingAtAll) {
  std::ostringstream out;
  ProgressBar bar(out, "jobs", 100, false);
  for (int i = 0; i <= 100; ++i) bar.update(i);
  bar.finish();
  EXPECT_FALSE(bar.enabled());
  EXPECT_TRUE(out.str().empty()) << out.str();
}

TEST(ProgressBar, EnabledWritesLabelCountsAndOneFinalLine) {
  std::ostringstream out;
  ProgressBar bar(out, "jobs", 1200, true);
  bar.update(300);
  const std::string first = out.str();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), '\r');
  EXPECT_NE(first.find("jobs ["), std::string::npos) << first;
  EXPECT_NE(first.find("300/1,200"), std::string::npos) << first;
  EXPECT_NE(first.find("ETA"), std::string::npos) << first;
  // Within 0.2 s of the first draw, nothing is redrawn.
  bar.update(600);
  EXPECT_EQ(out.str(), first);
  bar.update(1200);
  bar.finish();
  const std::string all = out.str();
  EXPECT_NE(all.find("1,200/1,200"), std::string::npos) << all;
  EXPECT_EQ(all.back(), '\n');
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 1);
  // Finished: later calls draw nothing.
  bar.update(5);
  bar.finish();
  EXPECT_EQ(out.str(), all);
}

TEST(ProgressBar, FinishWithoutAnUpdateWritesNothing) {
  std::ostringstream out;
  ProgressBar bar(out, "variants", 4, true);
  bar.finish();
  EXPECT_TRUE(out.str().empty());
}

TEST(ProgressBar, LineShowsTheBarRateAndTimeRemaining) {
  std::ostringstream out;
  ProgressBar bar(out, "jobs", 1000, true);
  // 250 of 1,000 in 50 s: 5 per second, 750 left take 150 s.
  EXPECT_EQ(bar.line(250, 50), "jobs [######..................] 250/1,000  5.0/s  ETA 2 min 30 s");
  EXPECT_EQ(bar.line(1000, 200), "jobs [########################] 1,000/1,000  5.0/s  done in 3 min 20 s");
  EXPECT_EQ(bar.line(0, 0), "jobs [........................] 0/1,000  -/s  ETA ?");
  EXPECT_TRUE(out.str().empty());  // line() draws nothing
}

// run() reports through its callback: cluster scenarios jobs over all variants, training
// scenarios configurations; the results do not change.
std::vector<std::pair<double, double>> progress_of(const Scenario& s, Results* results) {
  std::vector<std::pair<double, double>> seen;
  *results = run(s, nullptr, [&seen](double done, double total) { seen.emplace_back(done, total); });
  return seen;
}

TEST(RunProgress, ClusterScenarioCountsJobsOverAllVariants) {
  const Scenario s = load_scenario_text(
      "seed: 3\n"
      "pools:\n"
      "  - {name: a, instance: aws/p3.16xlarge, nodes: 2}\n"
      "jobs:\n"
      "  - {name: big, gpus: 16, iterations: 1000, iteration_time: 1s}\n"
      "  - {name: small, submit: 10s, gpus: 1, iterations: 100, iteration_time: 1s}\n"
      "  - {name: tiny, submit: 20s, gpus: 1, iterations: 10, iteration_time: 1s}\n"
      "sweep:\n  pools[0].nodes: [2, 4]\n",
      "c.yaml");
  EXPECT_EQ(progress_total(s), 6);
  EXPECT_EQ(progress_unit(s), "jobs");
  Results with;
  const auto seen = progress_of(s, &with);
  ASSERT_GE(seen.size(), 2u);  // at least the end of each variant
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].first, seen[i - 1].first);
  for (const auto& [done, total] : seen) EXPECT_EQ(total, 6);
  EXPECT_EQ(seen.back().first, 6);
  EXPECT_NE(std::find(seen.begin(), seen.end(), std::make_pair(3.0, 6.0)), seen.end());  // the first variant's end
  const Results without = run(s);
  ASSERT_EQ(with.cluster_rows.size(), 2u);
  for (std::size_t v = 0; v < 2; ++v) {
    EXPECT_EQ(with.cluster_rows[v].makespan_s, without.cluster_rows[v].makespan_s);
    EXPECT_EQ(with.cluster_rows[v].total_cost, without.cluster_rows[v].total_cost);
    EXPECT_EQ(with.cluster_rows[v].events, without.cluster_rows[v].events);
  }
}

TEST(RunProgress, TrainingScenarioCountsConfigurations) {
  const Scenario s = load_scenario_text(
      "seed: 1\n"
      "cluster: {instance: aws/p3.16xlarge, nodes: 1}\n"
      "workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, iterations: 100}\n"
      "sweep: {nodes: [1, 2, 4]}\n",
      "t.yaml");
  EXPECT_EQ(progress_total(s), 3);
  EXPECT_EQ(progress_unit(s), "configurations");
  Results r;
  const auto seen = progress_of(s, &r);
  const std::vector<std::pair<double, double>> expected{{0, 3}, {1, 3}, {2, 3}, {3, 3}};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(r.rows.size(), 3u);
}

}  // namespace
}  // namespace dlsim::experiment
