#include <gtest/gtest.h>

#include <cmath>

#include "experiment/units.hpp"

namespace dlsim::experiment {
namespace {

double parse_ok(const std::string& text, Dimension d) {
  std::string why;
  const auto v = parse_quantity(text, d, why);
  EXPECT_TRUE(v.has_value()) << text << ": " << why;
  return v.value_or(std::nan(""));
}

std::string parse_error(const std::string& text, Dimension d) {
  std::string why;
  const auto v = parse_quantity(text, d, why);
  EXPECT_FALSE(v.has_value()) << text;
  return why;
}

TEST(Units, Bandwidth) {
  EXPECT_DOUBLE_EQ(parse_ok("100Gbps", Dimension::bandwidth), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_ok("25 Gbps", Dimension::bandwidth), 3.125e9);
  EXPECT_DOUBLE_EQ(parse_ok("25GB/s", Dimension::bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_ok("1GiB/s", Dimension::bandwidth), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_ok("800Mbps", Dimension::bandwidth), 100e6);
}

TEST(Units, Size) {
  EXPECT_DOUBLE_EQ(parse_ok("80GiB", Dimension::size), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_ok("16GB", Dimension::size), 16e9);
  EXPECT_DOUBLE_EQ(parse_ok("25MiB", Dimension::size), 25.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_ok("512 B", Dimension::size), 512.0);
}

TEST(Units, Duration) {
  EXPECT_DOUBLE_EQ(parse_ok("1.5ms", Dimension::duration), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_ok("2h", Dimension::duration), 7200.0);
  EXPECT_DOUBLE_EQ(parse_ok("25us", Dimension::duration), 25e-6);
  EXPECT_DOUBLE_EQ(parse_ok("3min", Dimension::duration), 180.0);
  EXPECT_DOUBLE_EQ(parse_ok("1e3 ns", Dimension::duration), 1e-6);
}

TEST(Units, PriceAndFlops) {
  EXPECT_DOUBLE_EQ(parse_ok("3.06 USD/h", Dimension::price_rate), 3.06);
  EXPECT_DOUBLE_EQ(parse_ok("0.01 USD/min", Dimension::price_rate), 0.6);
  EXPECT_DOUBLE_EQ(parse_ok("312TFLOP/s", Dimension::flop_rate), 312e12);
}

TEST(Units, ErrorsSayWhatIsAllowed) {
  EXPECT_NE(parse_error("100", Dimension::bandwidth).find("needs a unit"), std::string::npos);
  EXPECT_NE(parse_error("100 furlongs", Dimension::bandwidth).find("Gbps"), std::string::npos);
  EXPECT_NE(parse_error("fast", Dimension::bandwidth).find("such as 25Gbps"), std::string::npos);
  EXPECT_NE(parse_error("10Gbps", Dimension::size).find("unknown size unit 'Gbps'"), std::string::npos);
  parse_error("nanGbps", Dimension::bandwidth);
  parse_error("infGB", Dimension::size);
  parse_error("1e400GB", Dimension::size);
}

TEST(Units, UnitCaseMatters) {
  // Gb (bits) and GB (bytes) differ by 8: a lower-case unit is not silently accepted.
  parse_error("100gbps", Dimension::bandwidth);
  EXPECT_DOUBLE_EQ(parse_ok("1Gbps", Dimension::bandwidth) * 8, parse_ok("1GB/s", Dimension::bandwidth));
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bandwidth(3.125e9), "25 Gbps");
  EXPECT_EQ(format_byte_rate(2.039e12), "2.039 TB/s");
  EXPECT_EQ(format_byte_rate(900e9), "900 GB/s");
  EXPECT_EQ(format_size(80.0 * 1024 * 1024 * 1024), "80 GiB");
  EXPECT_EQ(format_duration(0.0015), "1.5 ms");
  EXPECT_EQ(format_duration(7200), "2 h");
}

}  // namespace
}  // namespace dlsim::experiment
