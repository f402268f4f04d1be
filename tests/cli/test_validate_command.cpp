// `dlsim validate`: the published scenarios run and compare, and docs/validation.md holds what
// the command prints.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

const std::string kPublished = std::string(DLSIM_SOURCE_DIR) + "/scenarios/published";
const std::string kDocs = std::string(DLSIM_SOURCE_DIR) + "/docs/validation.md";
const std::string kBegin = "<!-- dlsim validate --format markdown: begin -->\n";
const std::string kEnd = "<!-- dlsim validate --format markdown: end -->";

std::vector<std::string> table_rows(const std::string& markdown) {
  std::vector<std::string> rows;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line) && !line.empty();) {  // the figures' table ends at a blank line
    if (line.rfind("| ", 0) == 0 && line.rfind("| source |", 0) != 0) rows.push_back(line);
  }
  return rows;
}

// A generated part of docs/validation.md (between two markers).
std::string documented(const std::string& begin_marker, const std::string& end_marker) {
  const std::string docs = slurp(kDocs);
  const auto begin = docs.find(begin_marker);
  const auto end = docs.find(end_marker);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return docs.substr(begin + begin_marker.size(), end - begin - begin_marker.size());
}
std::string documented_table() { return documented(kBegin, kEnd); }

// The quick subset runs in the test suite; each row it prints must be the documented one.
TEST(ValidateCommand, FastSubsetRowsAreTheDocumentedRows) {
  const auto dir = fresh_folder("validate-fast");
  const CommandResult r = run_dlsim(dir, "validate '" + kPublished + "' --fast --format markdown --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::vector<std::string> rows = table_rows(r.out);
  EXPECT_GE(rows.size(), 10u);
  const std::string documented = documented_table();
  ASSERT_FALSE(documented.empty()) << kDocs << " lacks the generated table between its markers";
  for (const std::string& row : rows) {
    EXPECT_NE(documented.find(row + "\n"), std::string::npos)
        << "docs/validation.md does not have this row as dlsim validate prints it (regenerate with "
           "tools/validation-doc.sh):\n"
        << row;
  }
}

// The whole folder: the documented table and overall errors are exactly what the command prints.
TEST(ValidateCommand, FullRunIsWhatTheDocsShow) {
#ifdef DLSIM_SANITIZED
  GTEST_SKIP() << "the whole validation takes minutes in a release build; it runs in the normal (unsanitized) pass";
#endif
  const auto dir = fresh_folder("validate-full");
  const CommandResult r = run_dlsim(dir, "validate '" + kPublished + "' --format markdown --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  if (r.out.find("Skipped, its data is not here") != std::string::npos) {
    // Without the shared data sets every row that ran must still be the documented one; only
    // the overall errors (which include the skipped rows) cannot be compared.
    const std::string documented = documented_table();
    for (const std::string& row : table_rows(r.out)) EXPECT_NE(documented.find(row + "\n"), std::string::npos) << row;
    GTEST_SKIP() << "rows compared; the overall errors not, as a published scenario's data set (../shared/data/traces) "
                    "is absent:\n"
                 << r.out.substr(r.out.find("- Skipped"));
  }
  EXPECT_EQ(documented_table(), r.out) << "regenerate docs/validation.md with tools/validation-doc.sh";
}

// The kernel section: the shipped profiles' held-out errors, exactly as --kernels prints them.
TEST(ValidateCommand, KernelErrorsAreWhatTheDocsShow) {
  const auto dir = fresh_folder("validate-kernels");
  const CommandResult r = run_dlsim(dir, "validate --kernels --format markdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| A100-80GB | "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm fp16, m >= 64"), std::string::npos) << r.out;
  EXPECT_EQ(documented("<!-- dlsim validate --kernels --format markdown: begin -->\n",
                       "<!-- dlsim validate --kernels --format markdown: end -->"),
            r.out)
      << "regenerate docs/validation.md with tools/validation-doc.sh";
  const CommandResult text = run_dlsim(dir, "validate --kernels");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("held out:"), std::string::npos) << text.out;
}

TEST(ValidateCommand, WritesTheReportAsCsvAndRejectsBadUse) {
  const auto dir = fresh_folder("validate-csv");
  const CommandResult r = run_dlsim(dir, "validate '" + kPublished + "' --fast --quiet --csv report.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = slurp(dir / "report.csv");
  ASSERT_EQ(csv.rfind("scenario,source,reference,id,quantity,published,unit,published_low,published_high,predicted,error,explanation", 0), 0u)
      << csv.substr(0, 200);
  // One CSV line per printed row (the text table: a header, then a line per figure, 'why:' lines apart).
  const CommandResult text = run_dlsim(dir, "validate '" + kPublished + "' --fast --quiet");
  std::size_t figures = 0;
  std::istringstream in(text.out);
  std::string line;
  std::getline(in, line);  // header
  // Figures, each with an optional "why:" line, up to the summary.
  while (std::getline(in, line) && line.rfind("measurements", 0) != 0) figures += line.rfind("    why:", 0) != 0;
  std::size_t csv_lines = 0;
  for (char c : csv) csv_lines += c == '\n';
  EXPECT_EQ(csv_lines, figures + 1);

  const CommandResult missing = run_dlsim(dir, "validate no-such-folder");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no-such-folder: not a folder of scenarios"), std::string::npos) << missing.err;
  const CommandResult format = run_dlsim(dir, "validate '" + kPublished + "' --format xml");
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.err.find("--format must be text or markdown"), std::string::npos) << format.err;
}

TEST(ValidateCommand, AFarOffFigureWithoutExplanationFailsTheRun) {
  const auto dir = fresh_folder("validate-unexplained");
  std::filesystem::create_directories(dir / "pub");
  std::ofstream(dir / "pub" / "x.yaml") << R"(seed: 1
cluster: {instance: aws/p3.16xlarge, nodes: 1}
workload: {model: resnet50, precision: fp16, batch: {per_device: 64}, iterations: 10}
validation:
  source: a test
  reference: measured
  checks:
    - {id: far, quantity: throughput, published: 1 images/s, predicted: {column: samples_per_second}}
)";
  const CommandResult r = run_dlsim(dir, "validate pub --quiet");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("x.yaml: far"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("far"), std::string::npos) << "the table is printed before the error";
}

}  // namespace
}  // namespace dlsim::cli_test

namespace dlsim::cli_test {
namespace {

TEST(ValidateCommand, CheckNamesThePublishedFiguresOfAScenario) {
  const auto dir = fresh_folder("validate-check");
  const CommandResult r = run_dlsim(dir, "check '" + kPublished + "/cnn-dle-rn50-dgx1-16gb-fp32.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // That scenario checks 1- and 8-GPU throughput and both 90-epoch times: 4 figures.
  EXPECT_NE(r.out.find(": 4 published figures to compare (NVIDIA DeepLearningExamples"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace dlsim::cli_test
