// scenarios/spot-market.yaml through the dlsim command: the printed cost breakdown, and the
// relations between its rows (read from the CSV it writes).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace dlsim::cli_test {
namespace {

// The rows of a CSV without quoted commas in numbers: variant -> column -> text.
std::map<std::string, std::map<std::string, std::string>> read_rows(const std::string& text) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) cells.push_back(std::exchange(cell, ""));
      else cell += c;
    }
    cells.push_back(cell);
    lines.push_back(cells);
  }
  std::map<std::string, std::map<std::string, std::string>> rows;
  for (std::size_t r = 1; r < lines.size(); ++r) {
    for (std::size_t c = 0; c < lines[0].size() && c < lines[r].size(); ++c) rows[lines[r][0]][lines[0][c]] = lines[r][c];
  }
  return rows;
}

TEST(SpotMarketScenario, CostBreakdownAndFallbackFinishesNoLater) {
  const std::filesystem::path prices = std::filesystem::path(DLSIM_SOURCE_DIR) / ".." / "shared" / "data" / "traces" /
                                       "spot_aws_gcp_training_on_a_dime" / "aws_spot_price_history_p2_p3_2020.csv";
  if (!std::filesystem::exists(prices)) GTEST_SKIP() << "no spot price history at " << prices << " (../shared/data/traces absent)";
  const auto dir = fresh_folder("spot-market");
  const CommandResult r = run_dlsim(dir, "run '" + scenario_path("spot-market.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cost breakdown (USD)"), std::string::npos) << r.out;
  for (const char* column : {"on-demand", "spot", "reserved", "idle", "provisioning", "storage", "egress", "total", "fallback"}) {
    EXPECT_NE(r.out.find(column), std::string::npos) << column << " missing:\n" << r.out;
  }
  auto rows = read_rows(slurp(dir / "results/spot-market.csv"));
  ASSERT_EQ(rows.size(), 6u);
  const auto num = [&](const std::string& row, const std::string& column) { return std::stod(rows.at(row).at(column)); };
  // Every row finishes its job within the 60-day horizon.
  for (const auto& [name, row] : rows) EXPECT_EQ(row.at("done"), "1") << name;
  // The fallback takes over while the price is above the maximum: no later than waiting for it.
  EXPECT_LE(num("spot, max 3.00 + fallback", "makespan"), num("spot, max 3.00", "makespan"));
  EXPECT_GT(num("spot, max 3.00 + fallback", "fallback_nodes"), 0);
  EXPECT_GT(num("spot, max 3.00 + fallback", "on_demand_cost"), 0);
  EXPECT_GT(num("spot, max 3.00", "unavailable_time"), 20 * 86400.0);  // above 3.00 from Jan 26 to Feb 19
  // The reservation is billed for the whole run: >= 4 nodes x makespan x 7.20 x (1 - 0.30).
  EXPECT_GE(num("reserved", "reserved_cost"), 4 * num("reserved", "makespan") / 3600 * 7.20 * 0.70 - 1e-6);
  // Checkpoints in another region pay egress; in the same region they do not.
  EXPECT_GT(num("spot + fallback, storage in us-west-2", "egress_cost"), 0);
  EXPECT_EQ(num("spot, max 3.00 + fallback", "egress_cost"), 0);
  // Categories add up to the total in every row.
  for (const auto& [name, row] : rows) {
    const double sum = num(name, "on_demand_cost") + num(name, "spot_cost") + num(name, "reserved_cost") + num(name, "storage_cost") +
                       num(name, "egress_cost");
    EXPECT_NEAR(sum, num(name, "total_cost"), 1e-6 * num(name, "total_cost")) << name;
  }
}

}  // namespace
}  // namespace dlsim::cli_test
