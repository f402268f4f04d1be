// `dlsim sweep`: the same store whatever the thread count or MPI rank count, and a sweep killed
// mid-way and resumed loses and repeats nothing.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

// 2 x 2 x 3 = 12 training variants, two node counts each.
const char* const kTrainingSweep = R"(seed: 1
cluster: {instance: aws/p3.16xlarge, nodes: 1}
workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, data: {samples: 1281167, epochs: 1}}
sweep:
  nodes: [1, 4]
  grid:
    workload.precision: [fp16, fp32]
    cluster.instance: [aws/p3.16xlarge, aws/p3dn.24xlarge]
  random:
    samples: 3
    keys: {workload.data_parallel.bucket: {uniform: [5MiB, 50MiB]}}
)";

// 24 cluster variants of a few hundred milliseconds each: long enough to be killed mid-way.
const char* const kClusterSweep = R"(seed: 5
pools: [{name: p, instance: aws/p3.16xlarge, nodes: 16}]
trace: {format: synthetic, jobs: 20000, mean_interarrival: 60s, duration_max: 2d}
sweep:
  grid:
    scheduler.policy: [fifo, sjf, las]
    pools[0].nodes: [8, 12, 16, 24]
  zip:
    seed: [5, 6]
)";

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(SweepCommand, OneAndTwoThreadsWriteTheSameStore) {
  const auto dir = fresh_folder("sweep-threads");
  write(dir / "s.yaml", kTrainingSweep);
  const CommandResult one = run_dlsim(dir, "sweep s.yaml -j 1 --output one.h5");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("swept 12 variants"), std::string::npos) << one.out;
  const CommandResult two = run_dlsim(dir, "sweep s.yaml -j 2 --output two.h5");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(slurp(dir / "one.h5"), slurp(dir / "two.h5"));
  EXPECT_GT(slurp(dir / "one.h5").size(), 10000u);
}

TEST(SweepCommand, QuietPrintsNothingAndACompleteStoreLeavesNoJournal) {
  const auto dir = fresh_folder("sweep-quiet");
  write(dir / "s.yaml", kTrainingSweep);
  const CommandResult quiet = run_dlsim(dir, "sweep s.yaml -j 2 --output q.h5 --quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
  EXPECT_GT(slurp(dir / "q.h5").size(), 10000u);
  EXPECT_FALSE(std::filesystem::exists(dir / "q.h5.journal"));
  const CommandResult loud = run_dlsim(dir, "sweep s.yaml -j 2 --output l.h5");
  ASSERT_EQ(loud.exit_code, 0) << loud.err;
  EXPECT_NE(loud.out.find("wrote l.h5\n"), std::string::npos) << loud.out;
  EXPECT_EQ(loud.out.find("journal"), std::string::npos) << loud.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "l.h5.journal"));
}

TEST(SweepCommand, MpiRanksWriteTheSameStoreAsALocalRun) {
#ifndef DLSIM_MPIEXEC
  GTEST_SKIP() << "dlsim was built without MPI (libopenmpi-dev not found)";
#else
  const auto dir = fresh_folder("sweep-mpi");
  write(dir / "s.yaml", kTrainingSweep);
  ASSERT_EQ(run_dlsim(dir, "sweep s.yaml -j 1 --output local.h5").exit_code, 0);
  // Open MPI refuses root without these (CI runs as root).
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  for (const std::string ranks : {"-n 2", "-n 4 --oversubscribe"}) {
    const std::string command = "cd '" + dir.string() + "' && '" DLSIM_MPIEXEC "' " + ranks + " '" DLSIM_EXECUTABLE
                                "' sweep s.yaml --output mpi.h5 >stdout.txt 2>stderr.txt";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ranks << ": " << slurp(dir / "stderr.txt");
    EXPECT_NE(slurp(dir / "stdout.txt").find("MPI ranks"), std::string::npos) << slurp(dir / "stdout.txt");
    EXPECT_EQ(slurp(dir / "local.h5"), slurp(dir / "mpi.h5")) << ranks;
  }
#endif
}

TEST(SweepCommand, AKilledSweepResumesWithoutLosingOrRepeatingAVariant) {
  const auto dir = fresh_folder("sweep-resume");
  write(dir / "c.yaml", kClusterSweep);
  ASSERT_EQ(run_dlsim(dir, "sweep c.yaml -j 1 --output whole.h5").exit_code, 0);

  // Start the same sweep, wait until its journal holds finished variants, kill it (SIGKILL: no
  // chance to tidy up), then resume.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    std::freopen("/dev/null", "w", stdout);
    ::execl(DLSIM_EXECUTABLE, DLSIM_EXECUTABLE, "sweep", "c.yaml", "-j", "1", "--output", "cut.h5", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto journal = dir / "cut.h5.journal";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((!std::filesystem::exists(journal) || std::filesystem::file_size(journal) <= 28) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a few more variants
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep ended before it could be killed: make its variants longer";

  std::filesystem::copy_file(journal, dir / "cut-journal.copy");  // for the other sweep's resume below
  const CommandResult resumed = run_dlsim(dir, "sweep c.yaml -j 1 --output cut.h5 --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::smatch m;
  const std::string out = resumed.out;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("resumed: (\\d+) finished before, (\\d+) run now"))) << out;
  const int before = std::stoi(m[1]), now = std::stoi(m[2]);
  EXPECT_GE(before, 1);               // finished work was kept...
  EXPECT_LT(before, 24);              // ...the kill came mid-way...
  EXPECT_EQ(before + now, 24);        // ...and only the rest ran again
  EXPECT_EQ(slurp(dir / "cut.h5"), slurp(dir / "whole.h5"));  // nothing lost or twice
  EXPECT_FALSE(std::filesystem::exists(journal));  // the store is complete: the journal is gone
  // A journal of another sweep is refused, not mixed in.
  std::filesystem::copy_file(dir / "cut-journal.copy", journal);
  const CommandResult other = run_dlsim(dir, "sweep c.yaml -j 1 --output cut.h5 --resume --set seed=9");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("journal of another sweep"), std::string::npos) << other.err;
}

TEST(SweepCommand, AScenarioWithoutVariantsOrABadVariantIsABadInput) {
  const auto dir = fresh_folder("sweep-bad");
  const CommandResult none = run_dlsim(dir, "sweep '" + scenario_path("quickstart.yaml") + "' --output x.h5");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("nothing to sweep"), std::string::npos) << none.err;
  write(dir / "s.yaml", std::string(kTrainingSweep) + "  zip: {cluster.nodes: [1, 0]}\n");
  const CommandResult bad = run_dlsim(dir, "sweep s.yaml --output x.h5");
  EXPECT_EQ(bad.exit_code, 2);
  // Variant 3: the first grid point, the second zip position (cluster.nodes=0), the first sample.
  EXPECT_NE(bad.err.find("[in sweep variant 3 (workload.precision=fp16, cluster.instance=aws/p3.16xlarge, cluster.nodes=0"),
            std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.h5"));  // nothing ran, nothing written
  const CommandResult run = run_dlsim(dir, "run s.yaml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("dlsim sweep"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace dlsim::cli_test
