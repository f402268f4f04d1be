// Quantities with units, as written in scenarios: "100Gbps", "25GB/s", "80GiB", "1.5ms", "2h",
// "3.06 USD/h", "312TFLOP/s". Parsed once, here, into SI values: bytes, bytes/s, seconds,
// USD per hour, FLOP/s.
// A space between number and unit is allowed; unit names are case-sensitive where case
// carries meaning (Gb = gigabits, GB = gigabytes).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace dlsim::experiment {

enum class Dimension { size, bandwidth, duration, price_rate, flop_rate };

struct Quantity {
  double value = 0;  // SI: bytes, bytes/s, seconds, USD/hour
  Dimension dimension = Dimension::size;
};

// Parses `text` as a quantity of `dimension`. On failure returns nullopt and sets `why`
// to a message listing the accepted units.
std::optional<double> parse_quantity(std::string_view text, Dimension dimension, std::string& why);

// The accepted units of a dimension, for error messages ("B, KB, MB, ... GiB").
std::string accepted_units(Dimension dimension);
std::string_view dimension_name(Dimension dimension);

// Formats a value with an SI-ish unit for printing ("25 Gbps", "80 GiB", "1.5 ms").
std::string format_bandwidth(double bytes_per_s);
// Bytes per second in GB/s or TB/s (decimal), as memory bandwidths are quoted: "2.039 TB/s".
std::string format_byte_rate(double bytes_per_s);
std::string format_size(double bytes);
std::string format_duration(double seconds);
// `v` printed with a printf format (e.g. "%.1f"), "-" for NaN (a value that does not apply).
std::string format_number(double v, const char* format);
std::string format_quantity(double value, Dimension dimension);

}  // namespace dlsim::experiment
