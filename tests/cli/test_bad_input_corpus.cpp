// The bad-input corpus (tests/data/bad_inputs, written by its generate.py; issue 19): every
// scenario there is wrong in one way. `dlsim run` on each must exit 2 with
// "error: <file>:<line>:<column>: <key.path>: <why>" naming the key the file's header expects,
// and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

const std::filesystem::path kCorpus = std::filesystem::path(DLSIM_SOURCE_DIR) / "tests/data/bad_inputs";

std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kCorpus)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "# expect: workload.plan.tensor" on the first line; "-" for YAML errors, which have no key.
std::string expected_key(const std::string& file) {
  std::ifstream in(kCorpus / file);
  std::string line;
  std::getline(in, line);
  const std::string prefix = "# expect: ";
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : "";
}

std::string escaped(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

class BadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInput, ExitsTwoWithTheKeyAndWritesNothing) {
  const std::string file = GetParam();
  const std::string key = expected_key(file);
  ASSERT_FALSE(key.empty()) << file << " has no '# expect:' header";
  const auto dir = fresh_folder("bad-input");
  std::filesystem::copy_file(kCorpus / file, dir / "s.yaml");
  const CommandResult r = run_dlsim(dir, "run s.yaml");
  EXPECT_EQ(r.exit_code, 2) << file << "\n" << r.err;
  const std::string located = R"(^error: s\.yaml:[1-9][0-9]*:[1-9][0-9]*: )" + (key == "-" ? "" : escaped(key) + ": ");
  EXPECT_TRUE(std::regex_search(r.err, std::regex(located))) << file << ": expected " << key << ", got\n" << r.err;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "s.yaml" || name == "stdout.txt" || name == "stderr.txt") << file << " wrote " << name;
  }
  EXPECT_EQ(r.out, "") << file;
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(corpus_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return name;
                         });

TEST(BadInputCorpus, HasAHundredCasesOverEveryKindOfInput) {
  const auto files = corpus_files();
  EXPECT_GE(files.size(), 100u);
  for (const char* kind : {"yaml-", "key-", "unit-", "range-", "name-", "plan-", "memory-", "trace-", "catalog-", "output-", "sweep-",
                           "serving-"}) {
    EXPECT_TRUE(std::any_of(files.begin(), files.end(), [&](const std::string& f) { return f.find(kind) != std::string::npos; }))
        << "no case of kind " << kind;
  }
}

}  // namespace
}  // namespace dlsim::cli_test
