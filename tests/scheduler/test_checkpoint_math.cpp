#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "scheduler/checkpoint_math.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler {
namespace {

constexpr double kHour = 3600, kDay = 86400;

TEST(CheckpointMath, YoungAndDalyHandComputed) {
  // delta = 60 s, M = 24 h: sqrt(2 * 60 * 86400) = sqrt(10,368,000).
  EXPECT_NEAR(young_interval(60, kDay), 3219.9378876, 1e-6);
  // x = 60 / 172800: 3219.9378876 * (1 + sqrt(x)/3 + x/9) - 60.
  EXPECT_NEAR(daly_interval(60, kDay), 3180.0621136, 1e-6);
}

TEST(CheckpointMath, DalyMatchesThePapersFigures) {
  // Daly (2006), figs. 3-5, delta = 5 min: M = 24 h -> 117 min, 6 h -> 57 min, 15 min -> 9.1 min.
  EXPECT_NEAR(daly_interval(300, 24 * kHour) / 60, 117, 0.5);
  EXPECT_NEAR(daly_interval(300, 6 * kHour) / 60, 57, 0.5);
  EXPECT_NEAR(daly_interval(300, 15 * 60) / 60, 9.1, 0.05);
}

TEST(CheckpointMath, DalyTendsToYoungAsDeltaOverMVanishes) {
  double previous = 1;
  for (double ratio : {1e-2, 1e-4, 1e-6, 1e-8}) {
    const double gap = std::abs(daly_interval(ratio * kDay, kDay) / young_interval(ratio * kDay, kDay) - 1);
    EXPECT_LT(gap, previous) << ratio;
    EXPECT_LT(gap, std::sqrt(ratio)) << ratio;  // leading term (2/3) sqrt(delta / (2M))
    previous = gap;
  }
  EXPECT_LT(previous, 1e-4);
}

TEST(CheckpointMath, DalyIsMWhenDeltaAtLeastTwiceM) {
  EXPECT_DOUBLE_EQ(daly_interval(200, 100), 100);
  EXPECT_DOUBLE_EQ(daly_interval(5000, 100), 100);
  EXPECT_LT(daly_interval(199, 100), 100);  // below the threshold the formula applies
}

TEST(CheckpointMath, ExpectedTimeIsMinimizedNearDaly) {
  struct Case {
    double delta, mtbf, restart;
  };
  for (const Case c : {Case{60, kDay, 600}, Case{300, 6 * kHour, 600}, Case{300, kHour, 120},
                       Case{600, kHour, 300}}) {
    const double daly = daly_interval(c.delta, c.mtbf);
    // Scan tau on a log grid over [daly / 4, 4 daly] that does not contain daly itself.
    double best_tau = 0, best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 4000; ++i) {
      const double tau = daly * std::pow(4.0, -1 + 2 * (i + 0.37) / 4000);
      const double t = expected_completion_time(100 * kDay, tau, c.delta, c.restart, c.mtbf);
      if (t < best) best = t, best_tau = tau;
    }
    EXPECT_NEAR(best_tau / daly, 1.0, 0.05) << "delta " << c.delta << " M " << c.mtbf;
    // A clear minimum: halving or doubling the interval costs time.
    EXPECT_GT(expected_completion_time(100 * kDay, daly / 2, c.delta, c.restart, c.mtbf), best);
    EXPECT_GT(expected_completion_time(100 * kDay, daly * 2, c.delta, c.restart, c.mtbf), best);
  }
}

TEST(CheckpointMath, ExpectedTimeWithoutFailures) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(expected_completion_time(36000, 3600, 60, 600, inf), 36000 + 10 * 60);
  EXPECT_NEAR(expected_completion_time(36000, 3600, 60, 600, 1e12) / 36600, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(expected_completion_time(0, 3600, 60, 600, kHour), 0);
}

// Simulates the model the formula describes: failures (exponential, mean M) may strike during
// work, checkpoint writes and restarts; a failure loses the current segment and costs a restart.
double simulate_completion(double work, double tau, double delta, double restart, double m,
                           sim::RandomStream& stream) {
  double t = 0;
  const int segments = static_cast<int>(std::lround(work / tau));
  for (int s = 0; s < segments; ++s) {
    for (;;) {
      const double fail = stream.exponential(m);
      if (fail >= tau + delta) {
        t += tau + delta;
        break;
      }
      t += fail;
      for (;;) {  // restart until one completes
        const double f = stream.exponential(m);
        if (f >= restart) {
          t += restart;
          break;
        }
        t += f;
      }
    }
  }
  return t;
}

TEST(CheckpointMath, ExpectedTimeMatchesMonteCarlo) {
  const double delta = 60, restart = 120, m = kHour;
  const double tau = daly_interval(delta, m);
  const double work = 20 * tau;
  const double formula = expected_completion_time(work, tau, delta, restart, m);
  ASSERT_GT(formula, 1.1 * work * (tau + delta) / tau);  // failures matter at these numbers
  sim::RandomStreams streams(2024);
  auto& stream = streams.stream("failures");
  const int runs = 20000;
  double sum = 0;
  for (int r = 0; r < runs; ++r) sum += simulate_completion(work, tau, delta, restart, m, stream);
  EXPECT_NEAR(sum / runs / formula, 1.0, 0.02) << "simulated " << sum / runs << " formula " << formula;
}

TEST(CheckpointMath, WriteAndRestartTimes) {
  // 80 GB at 2 GB/s plus 5 s commit; 2 min provisioning + 80 GB at 4 GB/s + 30 s warm-up.
  EXPECT_DOUBLE_EQ(checkpoint_write_time(80e9, 2e9, 5), 45);
  EXPECT_DOUBLE_EQ(restart_time(120, 80e9, 4e9, 30), 170);
  EXPECT_DOUBLE_EQ(checkpoint_write_time(0, 1e9), 0);
}

TEST(CheckpointMath, RejectsBadArguments) {
  EXPECT_THROW(young_interval(0, kDay), std::invalid_argument);
  EXPECT_THROW(daly_interval(60, -1), std::invalid_argument);
  EXPECT_THROW(daly_interval(std::nan(""), kDay), std::invalid_argument);
  EXPECT_THROW(expected_completion_time(100, 0, 60, 60, kDay), std::invalid_argument);
  EXPECT_THROW(expected_completion_time(-1, 10, 60, 60, kDay), std::invalid_argument);
  EXPECT_THROW(expected_completion_time(100, 10, 60, 60, 0), std::invalid_argument);
  EXPECT_THROW(checkpoint_write_time(1e9, 0), std::invalid_argument);
  EXPECT_THROW(restart_time(-5, 1e9, 1e9), std::invalid_argument);
  try {
    young_interval(60, 0);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mtbf_s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::scheduler
