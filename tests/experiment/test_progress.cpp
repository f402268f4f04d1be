#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "experiment/progress.hpp"

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

}  // namespace
}  // namespace dlsim::experiment
