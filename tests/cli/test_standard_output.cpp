// "-" as an output path: the file's content on standard output and the command's own report on
// standard error (experiment/atomic_file.hpp), for one output at a time; refused where a file is
// needed (a sweep's store, which it resumes from; traces, one per configuration).
#include <filesystem>
#include <string>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(StandardOutput, RunSendsTheCsvToStandardOutputAndTheReportToStandardError) {
  const auto dir = fresh_folder("stdout-run");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("quickstart.yaml") + "' --csv -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(starts_with(r.out, "nodes,accelerators,plan,")) << r.out.substr(0, 200);
  EXPECT_EQ(r.out.find("dlsim "), std::string::npos) << "the report must not be mixed into the CSV";
  EXPECT_NE(r.err.find("samples/s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrote the CSV to standard output"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "-"));
  // One CSV line per node count of the quick start (1 to 32 nodes: six), after the header.
  std::size_t lines = 0;
  for (const char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, 7u);
}

TEST(StandardOutput, OneOutputAtATimeAndNeverATraceOrASweepStore) {
  const auto dir = fresh_folder("stdout-refused");
  const CommandResult both = run_dlsim(dir, "run '" + scenario_path("quickstart.yaml") + "' --output - --csv -");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("only one output can go to standard output"), std::string::npos) << both.err;
  EXPECT_TRUE(both.out.empty());
  const CommandResult trace = run_dlsim(dir, "run '" + scenario_path("quickstart.yaml") + "' --set output.trace=-");
  EXPECT_EQ(trace.exit_code, 2);
  EXPECT_NE(trace.err.find("output.trace"), std::string::npos) << trace.err;
  const CommandResult sweep = run_dlsim(dir, "sweep '" + scenario_path("sweep-quickstart.yaml") + "' --output -");
  EXPECT_EQ(sweep.exit_code, 2);
  EXPECT_NE(sweep.err.find("store"), std::string::npos) << sweep.err;
  EXPECT_TRUE(sweep.out.empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "-.journal"));
}

TEST(StandardOutput, ValidateWritesItsCsvToStandardOutput) {
  const auto dir = fresh_folder("stdout-validate");
  const CommandResult r =
      run_dlsim(dir, "validate '" + std::string(DLSIM_SOURCE_DIR) + "/scenarios/published' --only nccl-a100 --csv - --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(starts_with(r.out, "scenario,source,reference,id,")) << r.out.substr(0, 200);
  EXPECT_NE(r.err.find("mean absolute percentage error"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dlsim::cli_test
