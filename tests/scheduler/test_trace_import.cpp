// Trace importers: the public traces of ../shared/data/traces (skipped, visibly, when that folder is
// absent) and small files written here for the formats whose data is not shipped, plus one
// malformed-row test per importer. Published figures come from README.md of the traces folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "scheduler/trace.hpp"

namespace dlsim::scheduler {
namespace {

namespace fs = std::filesystem;

std::string traces_dir() {
  std::vector<fs::path> candidates;
  if (const char* source = std::getenv("DLSIM_SOURCE_DIR"))
    candidates.push_back(fs::path(source) / ".." / "shared" / "data" / "traces");
  candidates.emplace_back("/work/shared/data/traces");
  for (const auto& dir : candidates)
    if (fs::is_directory(dir)) return dir.string();
  return {};
}

#define REQUIRE_TRACE(var, relative)                                                  \
  const std::string dir_ = traces_dir();                                              \
  if (dir_.empty()) GTEST_SKIP() << "shared/data/traces not found: trace test skipped"; \
  const std::string var = dir_ + "/" + (relative);                                    \
  if (!fs::exists(var)) GTEST_SKIP() << var << " not found: trace test skipped"

// A file in a fresh temporary folder, removed with the fixture.
class TempFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("dlsim_trace_") + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path dir_;
};

// Expects `read` to throw std::runtime_error whose message starts with "<path>:<line>:" and holds
// `what`.
void expect_row_error(const std::function<void()>& read, const std::string& path, int line,
                      const std::string& what) {
  try {
    read();
    ADD_FAILURE() << "no error for " << path << ":" << line << " (" << what << ")";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(path + ":" + std::to_string(line) + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

double share_at_most(const TraceSummary& s, int gpus) {
  double share = 0;
  for (const auto& [g, f] : s.job_share_by_gpus)
    if (g <= gpus) share += f;
  return share;
}

TEST(PhillyTrace, MatchesThePublishedShape) {
  REQUIRE_TRACE(path, "philly_pollux/philly.csv");
  const Trace trace = read_philly_csv(path);
  ASSERT_EQ(trace.jobs.size(), 82'247u);  // README: 82,247 jobs; every row has duration > 0
  EXPECT_EQ(trace.skipped.total, 0u);
  const TraceSummary s = summarize(trace);
  EXPECT_NEAR(s.job_share_by_gpus.at(1), 0.932, 0.0005);     // 93.2% single-GPU
  EXPECT_NEAR(share_at_most(s, 8), 0.996, 0.0005);          // 99.6% at most 8 GPUs
  EXPECT_DOUBLE_EQ(s.duration_median_s, 1144);              // median 1,144 s
  EXPECT_NEAR(s.duration_mean_s, 13136, 0.01 * 13136);      // mean 13,136 s
  EXPECT_NEAR(s.duration_p99_s, 254611, 0.01 * 254611);     // p99 254,611 s
  EXPECT_NEAR(s.gpu_time_share_8plus, 0.62, 0.01);          // >= 8 GPUs use 62% of GPU-time
  // The earliest row (line 31568, 2017-09-04 10:30:41) submits at 0; line 2 (2017-10-09 07:01:55)
  // 35 days less 3 h 28 min 46 s later.
  EXPECT_EQ(trace.jobs.front().id, "31568");
  EXPECT_EQ(trace.jobs.front().submit_s, 0.0);
  EXPECT_EQ(trace.jobs.front().gpus, 8);
  EXPECT_EQ(trace.jobs.front().duration_s, 2240194.0);
  EXPECT_EQ(trace.jobs.front().queue, "7f04ca");
  const auto line2 =
      std::find_if(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& j) { return j.id == "2"; });
  ASSERT_NE(line2, trace.jobs.end());
  EXPECT_EQ(line2->submit_s, 35 * 86400.0 - (3 * 3600 + 28 * 60 + 46));
  EXPECT_EQ(line2->duration_s, 66.0);
  EXPECT_EQ(line2->queue, "11cb48");
  EXPECT_TRUE(std::is_sorted(trace.jobs.begin(), trace.jobs.end(),
                             [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; }));
}

TEST(PhillyTrace, ReadsTheWeekSlice) {
  REQUIRE_TRACE(path, "philly_pollux/philly_week_2017-10-02.csv");
  const Trace trace = read_philly_csv(path);
  ASSERT_EQ(trace.jobs.size(), 11'386u);  // rows of philly.csv from 2017-10-02 to 2017-10-08
  EXPECT_LT(trace.jobs.back().submit_s, 7 * 86400.0);
  EXPECT_EQ(trace.jobs.front().id, "2");  // the file is sorted: its first row is the earliest
  EXPECT_EQ(trace.jobs.front().duration_s, 108.0);
}

TEST(TiresiasTrace, Reads60Jobs) {
  REQUIRE_TRACE(path, "tiresias/60_job.csv");
  const Trace trace = read_tiresias_csv(path);
  ASSERT_EQ(trace.jobs.size(), 60u);
  // Row of job 1: "1,8,30,133,vgg11,147,23".
  const TraceJob& job = trace.jobs.at(1);
  EXPECT_EQ(job.id, "1");
  EXPECT_EQ(job.gpus, 8);
  EXPECT_EQ(job.submit_s, 30.0);
  EXPECT_EQ(job.duration_s, 147.0);
  EXPECT_EQ(job.model, "vgg11");
  EXPECT_EQ(trace.jobs.front().submit_s, 0.0);
}

TEST(GavelTrace, ReadsThe7FieldMsrTrace) {
  REQUIRE_TRACE(path, "gavel/msr_seed0_vc2869ce.trace");
  const Trace trace = read_gavel_trace(path);
  ASSERT_EQ(trace.jobs.size(), 533u);
  const auto eight =
      std::count_if(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& j) { return j.gpus == 8; });
  EXPECT_EQ(eight, 379);
  // Line 2: Recommendation (batch size 8192), 557847 steps, arrival 1456 s, scale factor 4.
  const TraceJob& job = trace.jobs.at(1);
  EXPECT_EQ(job.id, "2");
  EXPECT_EQ(job.model, "Recommendation (batch size 8192)");
  EXPECT_EQ(job.gpus, 4);
  EXPECT_EQ(job.submit_s, 1456.0);
  EXPECT_EQ(job.duration_s, 557847.0);  // 1 s per step by default
}

TEST(GavelTrace, ReadsThe10FieldPhysicalTraceWithAStepTime) {
  REQUIRE_TRACE(path, "gavel/physical_cluster_artifact_evaluation.trace");
  GavelOptions options;
  options.seconds_per_step_of = [](std::string_view type, int gpus) {
    return type.rfind("ResNet-50", 0) == 0 ? 0.5 : 0.1 / gpus;
  };
  const Trace trace = read_gavel_trace(path, options);
  ASSERT_EQ(trace.jobs.size(), 15u);
  for (std::size_t i = 0; i < trace.jobs.size(); ++i)  // all arrive at 0: line order
    EXPECT_EQ(trace.jobs[i].id, std::to_string(i + 1));
  EXPECT_EQ(trace.jobs.at(0).model, "ResNet-50 (batch size 64)");
  EXPECT_EQ(trace.jobs.at(0).duration_s, 2931 * 0.5);
  EXPECT_EQ(trace.jobs.at(1).model, "Transformer (batch size 16)");
  EXPECT_EQ(trace.jobs.at(1).gpus, 2);
  EXPECT_DOUBLE_EQ(trace.jobs.at(1).duration_s, 11005 * 0.05);
}

using TraceFiles = TempFiles;

TEST_F(TraceFiles, PhillyRejectsMalformedRows) {
  const std::string header = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  const std::string ok = "2017-10-02 00:00:00,10.0,1,10.0,vc\n";
  auto read = [](const std::string& p) { return [p] { read_philly_csv(p); }; };
  std::string p = write("fields.csv", header + ok + "2017-10-02 00:00:01,10.0,1,vc\n");
  expect_row_error(read(p), p, 3, "4 fields, expected 5");
  p = write("gpus.csv", header + ok + ok + "2017-10-02 00:00:01,10.0,two,10.0,vc\n");
  expect_row_error(read(p), p, 4, "num_gpus \"two\" is not an integer");
  p = write("zero_gpus.csv", header + "2017-10-02 00:00:01,10.0,0,0,vc\n");
  expect_row_error(read(p), p, 2, "num_gpus = 0, expected an integer >= 1");
  p = write("negative.csv", header + "2017-10-02 00:00:01,-5,1,-5,vc\n");
  expect_row_error(read(p), p, 2, "duration = -5 is negative");
  p = write("date.csv", header + "2017-02-29 00:00:01,5,1,5,vc\n");  // 2017 is not a leap year
  expect_row_error(read(p), p, 2, "has no such day");
  p = write("header.csv", "time,duration,num_gpus,gpu_time,cluster\n" + ok);
  expect_row_error(read(p), p, 1, "header lacks column \"timestamp\"");
}

TEST_F(TraceFiles, PhillySkipsZeroDurationsAndCountsThem) {
  const std::string p = write("zero.csv",
                              "timestamp,duration,num_gpus,gpu_time,cluster\r\n"
                              "2017-10-02 00:01:00,10.0,2,20.0,b\r\n"
                              "2017-10-02 00:00:00,0.0,1,0.0,a\r\n"
                              "2016-02-29 23:59:59,7.5,1,7.5,c\r\n");  // leap day, CRLF lines
  const Trace trace = read_philly_csv(p);
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.skipped.total, 1u);
  EXPECT_EQ(trace.skipped.by_reason.at("duration 0"), 1u);
  EXPECT_EQ(trace.skipped.describe(), "1 skipped: 1 duration 0");
  EXPECT_EQ(trace.jobs[0].id, "4");
  EXPECT_EQ(trace.jobs[0].queue, "c");
  // From 2016-02-29 23:59:59: 1 s to 2016-03-01, 365 + 215 days to 2017-10-02, then 60 s.
  EXPECT_EQ(trace.jobs[1].submit_s, 1 + 580 * 86400.0 + 60);
}

TEST_F(TraceFiles, TiresiasRejectsMalformedRows) {
  const std::string header = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
  std::string p = write("submit.csv", header + "0,1,0,10,vgg19,164,30\n1,1,soon,10,vgg19,164,30\n");
  expect_row_error([p] { read_tiresias_csv(p); }, p, 3, "submit_time \"soon\" is not a finite number");
  p = write("dup.csv", header + "0,1,0,10,vgg19,164,30\n0,1,5,10,vgg19,164,30\n");
  expect_row_error([p] { read_tiresias_csv(p); }, p, 3, "job_id \"0\" appears twice");
}

TEST_F(TraceFiles, GavelRejectsMalformedRows) {
  const std::string row7 = "LM (batch size 5)\tpython3 main.py\t--steps\t1\t100\t0.000000\t1\n";
  std::string p = write("fields.trace", row7 + "LM\tcmd\t--steps\t1\t100\t3\t1\t9\n");
  expect_row_error([p] { read_gavel_trace(p); }, p, 2, "8 tab-separated fields, expected 7");
  p = write("layout.trace", "LM\tcmd\t--steps\t1\t100\t3\t1\t9\n");
  expect_row_error([p] { read_gavel_trace(p); }, p, 1, "a Gavel trace row has 7, 9 or 10");
  p = write("scale.trace", row7 + "LM\tcmd\t--steps\t1\t100\t3.000000\t0\n");
  expect_row_error([p] { read_gavel_trace(p); }, p, 2, "scale_factor = 0");
  p = write("steps.trace", row7 + row7 + "LM\tcmd\t--steps\t1\tmany\t3.000000\t1\n");
  expect_row_error([p] { read_gavel_trace(p); }, p, 3, "total_steps \"many\" is not an integer");
  EXPECT_THROW(read_gavel_trace(p, GavelOptions{0.0, {}}), std::invalid_argument);
}

TEST_F(TraceFiles, PaiSumsTaskGpusAndKeepsTerminatedJobs) {
  const std::string jobs = write("pai_job_table.csv",
                                 "j1,i1,alice,Terminated,1000,1600\n"
                                 "j2,i2,bob,Terminated,1100,1200\n"
                                 "j3,i3,bob,Failed,1200,1300\n"
                                 "j4,i4,carol,Terminated,1300,1400\n"   // CPU-only
                                 "j5,i5,carol,Running,1400,\n"
                                 "j6,i6,dave,Terminated,900,950\n");    // no task rows
  const std::string tasks = write("pai_task_table.csv",
                                  "j1,worker,4.0,Terminated,1000,1600,600.0,29.0,100.0,V100\n"
                                  "j1,ps,1.0,Terminated,1000,1600,600.0,29.0,,MISC\n"
                                  "j1,evaluator,1.0,Terminated,1000,1600,600.0,29.0,50.0,T4\n"
                                  "j2,worker,3.0,Terminated,1100,1200,600.0,29.0,25.0,P100\n"
                                  "j3,worker,1.0,Failed,1200,1300,600.0,29.0,100.0,V100\n"
                                  "j4,worker,2.0,Terminated,1300,1400,600.0,29.0,0.0,\n");
  const Trace trace = read_pai_tables(jobs, tasks);
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.jobs[0].id, "j1");
  EXPECT_EQ(trace.jobs[0].gpus, 5);  // 4 * 100% + 0 + ceil(50%)
  EXPECT_EQ(trace.jobs[0].submit_s, 0.0);
  EXPECT_EQ(trace.jobs[0].duration_s, 600.0);
  EXPECT_EQ(trace.jobs[0].queue, "alice");
  EXPECT_EQ(trace.jobs[1].gpus, 1);  // ceil(3 * 25%)
  EXPECT_EQ(trace.jobs[1].submit_s, 100.0);
  EXPECT_EQ(trace.skipped.total, 4u);
  EXPECT_EQ(trace.skipped.by_reason.at("status Failed"), 1u);
  EXPECT_EQ(trace.skipped.by_reason.at("status Running"), 1u);
  EXPECT_EQ(trace.skipped.by_reason.at("no GPU (CPU-only job)"), 1u);
  EXPECT_EQ(trace.skipped.by_reason.at("no task rows"), 1u);
}

TEST_F(TraceFiles, PaiRejectsMalformedRowsNamingTheirTable) {
  const std::string jobs =
      write("jobs.csv", "j1,i1,alice,Terminated,1000,1600\nj2,i2,bob,Terminated,1200,1100\n");
  const std::string tasks = write("tasks.csv", "j1,worker,1.0,Terminated,1000,1600,600.0,29.0,100.0,V100\n");
  expect_row_error([&] { read_pai_tables(jobs, tasks); }, jobs, 2, "end_time 1100 is before start_time 1200");
  const std::string bad_tasks = write("bad_tasks.csv",
                                      "j1,worker,1.0,Terminated,1000,1600,600.0,29.0,100.0,V100\n"
                                      "j2,worker,1.0,Terminated,1000,1600,600.0,29.0,100.0\n");
  expect_row_error([&] { read_pai_tables(jobs, bad_tasks); }, bad_tasks, 2, "9 fields, expected 10");
  const std::string gpu_tasks =
      write("gpu_tasks.csv", "j1,worker,1.0,Terminated,1000,1600,600.0,29.0,lots,V100\n");
  expect_row_error([&] { read_pai_tables(jobs, gpu_tasks); }, gpu_tasks, 1, "plan_gpu \"lots\"");
}

TEST_F(TraceFiles, HeliosReadsTheDocumentedJobLog) {
  // The three example rows of the HeliosData README, a CPU job and a second completed GPU job.
  const std::string p = write("cluster_log.csv",
                              "job_id,user,vc,gpu_num,cpu_num,node_num,state,"
                                  "submit_time,start_time,end_time,duration,queue\n"
                              "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,"
                                  "2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n"
                              "1425512,uVMrF,vchbv,4,16,1,FAILED,"
                                  "2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:45:36,249,0\n"
                              "1425513,uzqls,vcpDC,1,1,1,CANCELLED,"
                                  "2020-06-09 18:41:28,2020-06-09 18:41:28,2020-06-17 14:15:21,675233,0\n"
                              "1425514,uzqls,vcpDC,0,8,1,COMPLETED,"
                                  "2020-06-09 18:42:00,2020-06-09 18:42:00,2020-06-09 18:43:00,60,0\n"
                              "1425515,uXBbc,vcJkd,16,64,2,COMPLETED,"
                                  "2020-06-09 18:50:01,2020-06-09 19:00:01,2020-06-09 20:00:01,3600,600\n");
  const Trace trace = read_helios_csv(p);
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.jobs[0].id, "1425511");
  EXPECT_EQ(trace.jobs[0].queue, "vcJkd");
  EXPECT_EQ(trace.jobs[0].duration_s, 36848.0);
  EXPECT_EQ(trace.jobs[1].gpus, 16);
  EXPECT_EQ(trace.jobs[1].submit_s, 540.0);  // submissions, not starts
  EXPECT_EQ(trace.skipped.total, 3u);
  EXPECT_EQ(trace.skipped.describe(),
            "3 skipped: 1 no GPU (CPU-only job), 1 state CANCELLED, 1 state FAILED");
}

TEST_F(TraceFiles, HeliosRejectsMalformedRows) {
  const std::string header = "job_id,user,vc,gpu_num,state,submit_time,duration\n";
  std::string p = write("negative.csv", header + "1,u,vc,1,COMPLETED,2020-06-09 18:41:01,-3\n");
  expect_row_error([p] { read_helios_csv(p); }, p, 2, "duration = -3 is negative");
  p = write("time.csv", header + "1,u,vc,1,COMPLETED,2020-06-09 18:41:01,3\n2,u,vc,1,COMPLETED,June 9,3\n");
  expect_row_error([p] { read_helios_csv(p); }, p, 3, "submit_time \"June 9\"");
  p = write("header.csv", "job_id,user,vc,gpus,state,submit_time,duration\n");
  expect_row_error([p] { read_helios_csv(p); }, p, 1, "header lacks column \"gpu_num\"");
}

TEST_F(TraceFiles, DlsimRejectsMalformedRows) {
  const std::string header = "id,submit_s,gpus,duration_s,queue,model\n";
  std::string p = write("gpus.csv", header + "a,0,1,10,,\nb,1,two,10,,\n");
  expect_row_error([p] { read_dlsim_csv(p); }, p, 3, "gpus \"two\" is not an integer");
  p = write("zero.csv", header + "a,0,1,0,,\n");
  expect_row_error([p] { read_dlsim_csv(p); }, p, 2, "duration_s = 0");
  p = write("header.csv", "id,submit_s,gpus,duration_s,model,queue\n");
  expect_row_error([p] { read_dlsim_csv(p); }, p, 1, "header must be exactly");
  try {
    read_dlsim_csv("/nonexistent/trace.csv");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), "/nonexistent/trace.csv: cannot open the file");
  }
}

}  // namespace
}  // namespace dlsim::scheduler
