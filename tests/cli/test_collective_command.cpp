// `dlsim collective` and collective scenarios through `dlsim run`: exit codes, the nccl-tests
// style table, the files written, and errors that point at the fix.
#include <algorithm>
#include <string>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

int count_lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The built-in scenario, narrowed with --set: 2 node counts x 2 sizes, one group: 4 rows.
TEST(CollectiveCommand, BuiltInScenarioWithSetsPrintsTableAndWritesCsv) {
  const auto dir = fresh_folder("collective-builtin");
  const CommandResult r = run_dlsim(dir, "collective --set 'sweep.nodes=[1,2]' --set 'collective.sizes=[1MiB,64MiB]' --csv c.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("busbw(GB/s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("algbw(GB/s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("aws/p4d.24xlarge"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote c.csv"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir / "c.csv"));
  const std::string csv = slurp(dir / "c.csv");
  ASSERT_FALSE(csv.empty());
  EXPECT_EQ(count_lines(csv), 1 + 4) << csv;  // header + 4 data rows
  const std::string header = csv.substr(0, csv.find('\n'));
  for (const char* column : {"nodes", "operation", "algorithm", "size", "busbw", "slowdown"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << " not in " << header;
  }
  // Only the file asked for: the built-in scenario names no HDF5 output.
  EXPECT_FALSE(std::filesystem::exists(dir / "results"));
}

TEST(CollectiveCommand, TrainingScenarioIsRefusedWithAPointerToRun) {
  const auto dir = fresh_folder("collective-training");
  const CommandResult r = run_dlsim(dir, "collective '" + scenario_path("quickstart.yaml") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dlsim run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("quickstart.yaml"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "results"));  // quickstart's output is not written
}

TEST(CollectiveCommand, RunAcceptsACollectiveScenarioAndWritesHdf5) {
  const auto dir = fresh_folder("collective-run");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("contention-spine.yaml") + "' --output x.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("slowdown"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir / "x.h5"));
  const std::string h5 = slurp(dir / "x.h5");
  ASSERT_GE(h5.size(), 8u);
  EXPECT_EQ(h5.substr(0, 8), std::string("\x89HDF\r\n\x1a\n", 8));  // the HDF5 signature
  // --output replaces the scenario's own output.results.
  EXPECT_FALSE(std::filesystem::exists(dir / "results" / "contention-spine.h5"));
}

TEST(CollectiveCommand, MisspeltOperationExitsTwoWithSuggestion) {
  const auto dir = fresh_folder("collective-typo");
  const CommandResult r = run_dlsim(dir, "collective --set collective.operation=all-reduc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'all-reduce'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--set collective.operation=all-reduc"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace dlsim::cli_test
