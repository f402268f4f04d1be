// The command line (issue 19): every command answers --help with its own usage and options, takes
// only its own options, and says what was meant by `--set key value`.
#include <string>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

const char* const kScenario =
    "cluster: {instance: aws/p3.8xlarge, nodes: 1}\n"
    "workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, iterations: 10}\n"
    "output: {results: out.h5}\n";

TEST(CommandLine, EveryCommandPrintsItsOwnHelpAndExitsZero) {
  const auto dir = fresh_folder("help");
  // An option only that command takes, which its help must list.
  const std::pair<const char*, const char*> commands[] = {
      {"run", "--quiet"},       {"check", "--set"},      {"collective", "--csv"}, {"catalog", "--help"},
      {"calibrate", "--backend"}, {"kernel", "--gemm"}, {"sweep", "--resume"},   {"validate", "--kernels"},
      {"version", "--help"}};
  for (const auto& [command, option] : commands) {
    for (const std::string flag : {"--help", "-h"}) {
      const CommandResult r = run_dlsim(dir, std::string(command) + " " + flag);
      EXPECT_EQ(r.exit_code, 0) << command << " " << flag << ": " << r.err;
      EXPECT_EQ(r.out.rfind(std::string("usage: dlsim ") + command, 0), 0u) << r.out;
      EXPECT_NE(r.out.find(option), std::string::npos) << command << ":\n" << r.out;
      EXPECT_TRUE(r.err.empty()) << r.err;
    }
  }
  // Options of another command are not listed in a command's help.
  const CommandResult run = run_dlsim(dir, "run --help");
  EXPECT_EQ(run.out.find("--backend"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("--resume"), std::string::npos) << run.out;
  // `dlsim help COMMAND` is the same text.
  EXPECT_EQ(run_dlsim(dir, "help run").out, run.out);
}

TEST(CommandLine, AnOptionOfAnotherCommandIsRefusedNamingIt) {
  const auto dir = fresh_folder("foreign");
  std::ofstream(dir / "s.yaml") << kScenario;
  const std::pair<const char*, const char*> cases[] = {
      {"run s.yaml --quick", "--quick is not an option of run (it is one of calibrate)"},
      {"run s.yaml --resume", "--resume is not an option of run (it is one of sweep)"},
      {"check s.yaml --quiet", "--quiet is not an option of check"},
      {"sweep s.yaml --csv out.csv", "--csv is not an option of sweep (it is one of run, check, collective, plan and validate)"},
      {"validate --set a=1", "--set is not an option of validate"},
      {"kernel --backend cpu", "--backend is not an option of kernel (it is one of calibrate)"},
      {"run s.yaml --qui", "--qui is not an option of run"},  // no guessing from a prefix
      {"run s.yaml t.yaml", "unexpected argument 't.yaml' after the scenario file"},
      {"calibrate s.yaml", "takes no positional argument ('s.yaml')"},
      {"run s.yaml -j 2", "-j is not an option of run (it is one of sweep, plan and validate)"},
  };
  for (const auto& [arguments, message] : cases) {
    const CommandResult r = run_dlsim(dir, arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments;
    EXPECT_NE(r.err.find(message), std::string::npos) << arguments << ":\n" << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;  // where to look
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.h5")) << arguments;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.csv")) << arguments;
  }
}

TEST(CommandLine, SetWithASeparateValueSuggestsKeyEqualsValue) {
  const auto dir = fresh_folder("set-separate");
  std::ofstream(dir / "s.yaml") << kScenario;
  for (const auto& [arguments, message] : {std::pair<std::string, std::string>{"run s.yaml --set cluster.nodes 2",
                                                                                "did you mean --set cluster.nodes=2?"},
                                           {"check s.yaml --set cluster.nodes", "'cluster.nodes' has no '=value'"}}) {
    const CommandResult r = run_dlsim(dir, arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments;
    EXPECT_NE(r.err.find(message), std::string::npos) << arguments << ":\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
}

TEST(CommandLine, OutputAndCsvMistakesNameTheOption) {
  const auto dir = fresh_folder("csv-option");
  std::ofstream(dir / "s.yaml") << kScenario;
  std::filesystem::create_directories(dir / "folder");
  const CommandResult csv = run_dlsim(dir, "run s.yaml --csv folder");
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_EQ(csv.err.rfind("error: --csv folder: output.csv: ", 0), 0u) << csv.err;
  const CommandResult output = run_dlsim(dir, "run s.yaml --output folder");
  EXPECT_EQ(output.exit_code, 2);
  EXPECT_EQ(output.err.rfind("error: --output folder: output.results: ", 0), 0u) << output.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
}

TEST(CommandLine, TheHeaderSaysWhenThePrecisionIsTheDevicesDefault) {
  const auto dir = fresh_folder("default-precision");
  std::string text = kScenario;
  text.erase(text.find("precision: fp16, "), std::string("precision: fp16, ").size());
  std::ofstream(dir / "s.yaml") << text;
  const CommandResult r = run_dlsim(dir, "run s.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(4 x V100-16GB per node), fp16 (default for V100-16GB), seed"), std::string::npos) << r.out;
  std::ofstream(dir / "s.yaml") << kScenario;  // stated: no note
  const CommandResult stated = run_dlsim(dir, "run s.yaml");
  EXPECT_NE(stated.out.find("per node), fp16, seed"), std::string::npos) << stated.out;
}

// Issue 19: a bad value in the file's sweep or variants section is the file's, not a "--set" the
// user never typed; a --set the user typed is still named as such.
TEST(CommandLine, SweepAndVariantsValuesAreNotReportedAsSet) {
  const auto dir = fresh_folder("variant-origin");
  std::ofstream(dir / "s.yaml") << kScenario << "sweep:\n  zip: {cluster.nodes: [1, 0]}\n";
  const CommandResult sweep = run_dlsim(dir, "check s.yaml");
  EXPECT_EQ(sweep.exit_code, 2);
  EXPECT_EQ(sweep.err.rfind("error: s.yaml: cluster.nodes: ", 0), 0u) << sweep.err;
  EXPECT_NE(sweep.err.find("[in sweep variant 1 (cluster.nodes=0)]"), std::string::npos) << sweep.err;
  EXPECT_EQ(sweep.err.find("--set"), std::string::npos) << sweep.err;

  std::ofstream(dir / "v.yaml") << "pools: [{name: p, instance: aws/p3.16xlarge, nodes: 4}]\n"
                                   "jobs: [{name: a, gpus: 8, iteration_time: 1s, iterations: 100}]\n"
                                   "variants:\n  - {name: x, scheduler.policy: fiffo}\n";
  const CommandResult variants = run_dlsim(dir, "check v.yaml");
  EXPECT_EQ(variants.exit_code, 2);
  EXPECT_EQ(variants.err.rfind("error: v.yaml: scheduler.policy: unknown value 'fiffo'", 0), 0u) << variants.err;
  EXPECT_EQ(variants.err.find("--set"), std::string::npos) << variants.err;

  const CommandResult typed = run_dlsim(dir, "check v.yaml --set scheduler.policy=fiffo");
  EXPECT_EQ(typed.exit_code, 2);
  EXPECT_EQ(typed.err.rfind("error: --set scheduler.policy=fiffo: ", 0), 0u) << typed.err;
}

}  // namespace
}  // namespace dlsim::cli_test
