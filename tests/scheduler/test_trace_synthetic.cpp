// dlsim's trace CSV (exact round trip), the synthetic generator (determinism, shape, validation)
// and the trace summary.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>
#include <sstream>

#include "scheduler/trace.hpp"

namespace dlsim::scheduler {
namespace {

namespace fs = std::filesystem;

class TraceCsv : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("dlsim_trace_csv_") + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string bytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  fs::path dir_;
};

void expect_same_jobs(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].id, b.jobs[i].id);
    EXPECT_EQ(a.jobs[i].submit_s, b.jobs[i].submit_s) << a.jobs[i].id;  // bit-exact, not near
    EXPECT_EQ(a.jobs[i].gpus, b.jobs[i].gpus);
    EXPECT_EQ(a.jobs[i].duration_s, b.jobs[i].duration_s) << a.jobs[i].id;
    EXPECT_EQ(a.jobs[i].queue, b.jobs[i].queue);
    EXPECT_EQ(a.jobs[i].model, b.jobs[i].model);
  }
}

TEST_F(TraceCsv, RoundTripsExactly) {
  Trace trace;
  trace.jobs = {{"a", 0.0, 1, 0.1, "vc,1", "ResNet-50 (batch size 64)"},
                {"b \"quoted\"", 1.0 / 3.0, 8, 1e-300, "", "GPT \"small\", v2"},
                {"c", 1e9 + 0.5, 64, 123456789.123456789, "q", ""}};
  write_dlsim_csv(trace, path("t.csv"));
  EXPECT_FALSE(fs::exists(path("t.csv.tmp")));  // written to a temporary name, then renamed
  const Trace back = read_dlsim_csv(path("t.csv"));
  expect_same_jobs(trace, back);
  write_dlsim_csv(back, path("u.csv"));
  EXPECT_EQ(bytes(path("t.csv")), bytes(path("u.csv")));
  EXPECT_NE(bytes(path("t.csv")).find("\"vc,1\""), std::string::npos);
}

TEST_F(TraceCsv, RoundTripsASyntheticTrace) {
  const Trace trace = synthetic_trace(SyntheticTraceSpec{}, 11);
  write_dlsim_csv(trace, path("s.csv"));
  expect_same_jobs(trace, read_dlsim_csv(path("s.csv")));
}

TEST_F(TraceCsv, SortsBySubmissionThenNaturalIdOrder) {
  std::ofstream(path("order.csv")) << "id,submit_s,gpus,duration_s,queue,model\n"
                                      "b,5,1,1,,\na,5,1,1,,\n10,5,1,1,,\n07,5,1,1,,\n2,5,1,1,,\nz,4,1,1,,\n";
  const Trace trace = read_dlsim_csv(path("order.csv"));
  std::vector<std::string> ids;
  for (const auto& job : trace.jobs) ids.push_back(job.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"z", "2", "07", "10", "a", "b"}));
  EXPECT_EQ(trace.jobs[0].submit_s, 0.0);  // rebased to the first submission
  EXPECT_EQ(trace.jobs[1].submit_s, 1.0);
}

TEST_F(TraceCsv, RejectsWhatItCannotWrite) {
  Trace trace;
  trace.jobs = {{"a", 0.0, 1, 10.0, "line\nbreak", ""}};
  EXPECT_THROW(write_dlsim_csv(trace, path("x.csv")), std::invalid_argument);
  trace.jobs = {{"a", 0.0, 0, 10.0, "", ""}};
  EXPECT_THROW(write_dlsim_csv(trace, path("x.csv")), std::invalid_argument);
  EXPECT_FALSE(fs::exists(path("x.csv")));
}

TEST_F(TraceCsv, SyntheticIsDeterministicPerSeed) {
  SyntheticTraceSpec spec;
  spec.jobs = 2000;
  spec.queues = {"a", "b", "c"};
  spec.queue_assignment = QueueAssignment::random;
  write_dlsim_csv(synthetic_trace(spec, 42), path("a.csv"));
  write_dlsim_csv(synthetic_trace(spec, 42), path("b.csv"));
  write_dlsim_csv(synthetic_trace(spec, 43), path("c.csv"));
  EXPECT_EQ(bytes(path("a.csv")), bytes(path("b.csv")));
  EXPECT_NE(bytes(path("a.csv")), bytes(path("c.csv")));
}

TEST(SyntheticTrace, HasTheShapeOfTheSpec) {
  SyntheticTraceSpec spec;
  spec.jobs = 20'000;
  const Trace trace = synthetic_trace(spec, 2024);
  ASSERT_EQ(trace.jobs.size(), 20'000u);
  EXPECT_EQ(trace.jobs.front().submit_s, 0.0);
  const TraceSummary s = summarize(trace);
  EXPECT_NEAR(s.duration_median_s, spec.duration_median_s, 0.10 * spec.duration_median_s);
  EXPECT_NEAR(s.duration_mean_s, spec.duration_mean_s, 0.20 * spec.duration_mean_s);
  EXPECT_NEAR(s.arrival_rate_per_s, spec.arrival_rate_per_s, 0.05 * spec.arrival_rate_per_s);
  double total = 0;
  for (double w : spec.gpu_weights) total += w;
  for (std::size_t i = 0; i < spec.gpu_counts.size(); ++i) {
    const auto it = s.job_share_by_gpus.find(spec.gpu_counts[i]);
    const double share = it == s.job_share_by_gpus.end() ? 0.0 : it->second;
    EXPECT_NEAR(share, spec.gpu_weights[i] / total, 0.01) << spec.gpu_counts[i] << " GPUs";
  }
  EXPECT_EQ(trace.jobs[0].queue, "");
}

TEST(SyntheticTrace, CapsDurationsAndAssignsQueues) {
  SyntheticTraceSpec spec;
  spec.jobs = 3000;
  spec.duration_max_s = 3600;
  spec.queues = {"x", "y", "z"};
  const Trace trace = synthetic_trace(spec, 5);
  double longest = 0;
  for (const auto& job : trace.jobs) longest = std::max(longest, job.duration_s);
  EXPECT_EQ(longest, 3600.0);  // about 30% of Philly-like draws exceed an hour
  for (std::size_t i = 0; i < trace.jobs.size(); ++i)
    EXPECT_EQ(trace.jobs[i].queue, spec.queues[i % 3]) << i;  // round robin in submission order
  spec.queue_assignment = QueueAssignment::random;
  const Trace random = synthetic_trace(spec, 5);
  std::set<std::string> seen;
  for (const auto& job : random.jobs) seen.insert(job.queue);
  EXPECT_EQ(seen.size(), 3u);
  // Named streams: the queue draws change nothing else.
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    EXPECT_EQ(trace.jobs[i].submit_s, random.jobs[i].submit_s);
    EXPECT_EQ(trace.jobs[i].duration_s, random.jobs[i].duration_s);
    EXPECT_EQ(trace.jobs[i].gpus, random.jobs[i].gpus);
  }
}

TEST(SyntheticTrace, RejectsBadSpecsNamingTheField) {
  auto expect_field = [](SyntheticTraceSpec spec, const std::string& field) {
    try {
      synthetic_trace(spec, 1);
      ADD_FAILURE() << "no error for " << field;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("SyntheticTraceSpec." + field + " ="), std::string::npos)
          << error.what();
    }
  };
  SyntheticTraceSpec spec;
  spec.jobs = 0;
  expect_field(spec, "jobs");
  spec = {};
  spec.arrival_rate_per_s = -1;
  expect_field(spec, "arrival_rate_per_s");
  spec = {};
  spec.gpu_counts = {1, 0, 4, 8, 16, 32, 64};
  expect_field(spec, "gpu_counts");
  spec = {};
  spec.gpu_weights = {1, 2};
  expect_field(spec, "gpu_weights");
  spec = {};
  spec.gpu_weights.assign(spec.gpu_counts.size(), 0.0);
  expect_field(spec, "gpu_weights");
  spec = {};
  spec.duration_median_s = 0;
  expect_field(spec, "duration_median_s");
  spec = {};
  spec.duration_mean_s = 100;  // below the median: no lognormal has it
  expect_field(spec, "duration_mean_s");
  spec = {};
  spec.duration_max_s = -5;
  expect_field(spec, "duration_max_s");
  EXPECT_NO_THROW(validate(SyntheticTraceSpec{}));
}

TEST(TraceSummary, InterpolatesPercentilesAndSharesGpuTime) {
  Trace trace;
  trace.jobs = {{"0", 0, 1, 10, "", ""}, {"1", 10, 1, 20, "", ""}, {"2", 20, 8, 30, "", ""},
                {"3", 40, 2, 40, "", ""}};
  const TraceSummary s = summarize(trace);
  EXPECT_EQ(s.jobs, 4u);
  EXPECT_DOUBLE_EQ(s.duration_median_s, 25);
  EXPECT_DOUBLE_EQ(s.duration_mean_s, 25);
  EXPECT_DOUBLE_EQ(s.duration_p99_s, 30 + 0.97 * 10);  // rank 2.97 of 0..3
  EXPECT_DOUBLE_EQ(s.gpu_time_s, 10 + 20 + 240 + 80);
  EXPECT_DOUBLE_EQ(s.gpu_time_share_8plus, 240.0 / 350);
  EXPECT_DOUBLE_EQ(s.job_share_by_gpus.at(1), 0.5);
  EXPECT_DOUBLE_EQ(s.arrival_rate_per_s, 3.0 / 40);
  EXPECT_EQ(summarize(Trace{}).jobs, 0u);
}

}  // namespace
}  // namespace dlsim::scheduler
