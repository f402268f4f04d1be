#include "experiment/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dlsim::experiment {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // multiply the number by this to get the SI value
};

constexpr double kKi = 1024.0;
constexpr std::array kSizeUnits{
    Unit{"B", 1}, Unit{"KB", 1e3}, Unit{"MB", 1e6}, Unit{"GB", 1e9}, Unit{"TB", 1e12},
    Unit{"PB", 1e15}, Unit{"KiB", kKi}, Unit{"MiB", kKi * kKi}, Unit{"GiB", kKi * kKi * kKi},
    Unit{"TiB", kKi * kKi * kKi * kKi}, Unit{"PiB", kKi * kKi * kKi * kKi * kKi}};
// Network rates are decimal bits per second; memory rates bytes per second.
constexpr std::array kBandwidthUnits{
    Unit{"bps", 1.0 / 8}, Unit{"Kbps", 1e3 / 8}, Unit{"Mbps", 1e6 / 8}, Unit{"Gbps", 1e9 / 8},
    Unit{"Tbps", 1e12 / 8}, Unit{"B/s", 1}, Unit{"KB/s", 1e3}, Unit{"MB/s", 1e6},
    Unit{"GB/s", 1e9}, Unit{"TB/s", 1e12}, Unit{"KiB/s", kKi}, Unit{"MiB/s", kKi * kKi},
    Unit{"GiB/s", kKi * kKi * kKi}};
constexpr std::array kDurationUnits{
    Unit{"ns", 1e-9}, Unit{"us", 1e-6}, Unit{"ms", 1e-3}, Unit{"s", 1}, Unit{"min", 60},
    Unit{"h", 3600}, Unit{"d", 86400}};
constexpr std::array kFlopRateUnits{Unit{"FLOP/s", 1}, Unit{"GFLOP/s", 1e9}, Unit{"TFLOP/s", 1e12},
                                    Unit{"PFLOP/s", 1e15}};
constexpr std::array kPriceUnits{Unit{"USD/h", 1}, Unit{"USD/hour", 1}, Unit{"USD/s", 3600},
                                 Unit{"USD/min", 60}};

template <std::size_t N>
std::string list(const std::array<Unit, N>& units) {
  std::string out;
  for (const Unit& u : units) {
    if (!out.empty()) out += ", ";
    out += u.name;
  }
  return out;
}

template <std::size_t N>
std::optional<double> factor_of(const std::array<Unit, N>& units, std::string_view name) {
  for (const Unit& u : units) {
    if (u.name == name) return u.factor;
  }
  return std::nullopt;
}

std::optional<double> unit_factor(Dimension d, std::string_view name) {
  switch (d) {
    case Dimension::size: return factor_of(kSizeUnits, name);
    case Dimension::bandwidth: return factor_of(kBandwidthUnits, name);
    case Dimension::duration: return factor_of(kDurationUnits, name);
    case Dimension::price_rate: return factor_of(kPriceUnits, name);
    case Dimension::flop_rate: return factor_of(kFlopRateUnits, name);
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string fixed(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::size: return "size";
    case Dimension::bandwidth: return "bandwidth";
    case Dimension::duration: return "duration";
    case Dimension::price_rate: return "price";
    case Dimension::flop_rate: return "compute rate";
  }
  return "quantity";
}

std::string accepted_units(Dimension d) {
  switch (d) {
    case Dimension::size: return list(kSizeUnits);
    case Dimension::bandwidth: return list(kBandwidthUnits);
    case Dimension::duration: return list(kDurationUnits);
    case Dimension::price_rate: return list(kPriceUnits);
    case Dimension::flop_rate: return list(kFlopRateUnits);
  }
  return {};
}

std::optional<double> parse_quantity(std::string_view text, Dimension d, std::string& why) {
  const std::string_view s = trim(text);
  double number = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  const std::string example = d == Dimension::bandwidth ? "25Gbps"
                              : d == Dimension::size      ? "80GiB"
                              : d == Dimension::duration  ? "1.5ms"
                              : d == Dimension::flop_rate ? "312TFLOP/s"
                                                          : "3.06 USD/h";
  if (ec != std::errc() || end == s.data()) {
    why = "expected a " + std::string(dimension_name(d)) + " such as " + example +
          " (a number followed by one of: " + accepted_units(d) + ")";
    return std::nullopt;
  }
  const std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) {
    why = "a " + std::string(dimension_name(d)) + " needs a unit, e.g. " + example +
          " (one of: " + accepted_units(d) + ")";
    return std::nullopt;
  }
  const auto factor = unit_factor(d, unit);
  if (!factor) {
    why = "unknown " + std::string(dimension_name(d)) + " unit '" + std::string(unit) +
          "' (allowed: " + accepted_units(d) + ")";
    return std::nullopt;
  }
  const double value = number * *factor;
  if (!std::isfinite(value)) {
    why = "not a finite " + std::string(dimension_name(d));
    return std::nullopt;
  }
  return value;
}

std::string format_bandwidth(double bytes_per_s) {
  const double bits = bytes_per_s * 8;
  if (bits >= 1e12) return fixed(bits / 1e12) + " Tbps";
  if (bits >= 1e9) return fixed(bits / 1e9) + " Gbps";
  if (bits >= 1e6) return fixed(bits / 1e6) + " Mbps";
  return fixed(bits) + " bps";
}

std::string format_byte_rate(double bytes_per_s) {
  if (bytes_per_s >= 1e12) return fixed(bytes_per_s / 1e12) + " TB/s";
  if (bytes_per_s >= 1e9) return fixed(bytes_per_s / 1e9) + " GB/s";
  return fixed(bytes_per_s / 1e6) + " MB/s";
}

std::string format_size(double bytes) {
  constexpr std::array<std::pair<double, const char*>, 4> steps{
      {{kKi * kKi * kKi * kKi, "TiB"}, {kKi * kKi * kKi, "GiB"}, {kKi * kKi, "MiB"}, {kKi, "KiB"}}};
  for (const auto& [f, name] : steps) {
    if (bytes >= f) return fixed(bytes / f) + " " + name;
  }
  return fixed(bytes) + " B";
}

std::string format_duration(double seconds) {
  if (seconds >= 86400) return fixed(seconds / 86400) + " d";
  if (seconds >= 3600) return fixed(seconds / 3600) + " h";
  if (seconds >= 60) return fixed(seconds / 60) + " min";
  if (seconds >= 1) return fixed(seconds) + " s";
  if (seconds >= 1e-3) return fixed(seconds * 1e3) + " ms";
  if (seconds >= 1e-6 || seconds == 0) return fixed(seconds * 1e6) + " us";
  return fixed(seconds * 1e9) + " ns";
}

std::string format_quantity(double v, Dimension d) {
  switch (d) {
    case Dimension::size: return format_size(v);
    case Dimension::bandwidth: return format_bandwidth(v);
    case Dimension::duration: return format_duration(v);
    case Dimension::price_rate: return fixed(v) + " USD/h";
    case Dimension::flop_rate: return fixed(v / 1e12) + " TFLOP/s";
  }
  return fixed(v);
}

}  // namespace dlsim::experiment

namespace dlsim::experiment {

std::string format_number(double v, const char* format) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace dlsim::experiment
