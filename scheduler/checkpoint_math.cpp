#include "scheduler/checkpoint_math.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dlsim::scheduler {
namespace {

// Throws std::invalid_argument naming the function, the argument and the rule it breaks.
void require(bool ok, const char* function, const char* argument, double value, const char* rule) {
  if (!ok) {
    throw std::invalid_argument(std::string(function) + ": " + argument + " = " + std::to_string(value) +
                                ": must be " + rule);
  }
}

bool positive_finite(double x) { return x > 0 && std::isfinite(x); }
bool nonnegative_finite(double x) { return x >= 0 && std::isfinite(x); }

void check_interval_args(const char* function, double checkpoint_s, double mtbf_s) {
  require(positive_finite(checkpoint_s), function, "checkpoint_s", checkpoint_s, "finite and > 0");
  require(positive_finite(mtbf_s), function, "mtbf_s", mtbf_s, "finite and > 0");
}

}  // namespace

double young_interval(double checkpoint_s, double mtbf_s) {
  check_interval_args("young_interval", checkpoint_s, mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s);
}

double daly_interval(double checkpoint_s, double mtbf_s) {
  check_interval_args("daly_interval", checkpoint_s, mtbf_s);
  const double delta = checkpoint_s;
  const double m = mtbf_s;
  if (delta >= 2.0 * m) return m;
  const double x = delta / (2.0 * m);  // Daly's eq. 37 in terms of x: (1 + sqrt(x)/3 + x/9)
  return std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta;
}

// Derivation (memoryless failures, rate 1/M). A restart of length R that may itself fail takes
// in expectation Y = E[min(T, R)] / P(T > R) = M (e^{R/M} - 1). A segment of length
// L = tau + delta completes when no failure strikes in L; otherwise it costs the time to the
// failure, a restart and a new try: X = E[min(T, L)] + P(T < L) (Y + X), whence
// X = M e^{R/M} (e^{L/M} - 1). work/tau segments give T = X work/tau.
double expected_completion_time(double work_s, double interval_s, double checkpoint_s, double restart_s,
                                double mtbf_s) {
  const char* f = "expected_completion_time";
  require(nonnegative_finite(work_s), f, "work_s", work_s, "finite and >= 0");
  require(positive_finite(interval_s), f, "interval_s", interval_s, "finite and > 0");
  require(nonnegative_finite(checkpoint_s), f, "checkpoint_s", checkpoint_s, "finite and >= 0");
  require(nonnegative_finite(restart_s), f, "restart_s", restart_s, "finite and >= 0");
  require(mtbf_s > 0, f, "mtbf_s", mtbf_s, "> 0 (+infinity for no failures)");
  const double segments = work_s / interval_s;
  const double segment = interval_s + checkpoint_s;
  if (std::isinf(mtbf_s)) return segments * segment;
  const double m = mtbf_s;
  return m * std::exp(restart_s / m) * std::expm1(segment / m) * segments;
}

double checkpoint_write_time(double bytes, double write_bytes_per_s, double latency_s) {
  const char* f = "checkpoint_write_time";
  require(nonnegative_finite(bytes), f, "bytes", bytes, "finite and >= 0");
  require(positive_finite(write_bytes_per_s), f, "write_bytes_per_s", write_bytes_per_s, "finite and > 0");
  require(nonnegative_finite(latency_s), f, "latency_s", latency_s, "finite and >= 0");
  return bytes / write_bytes_per_s + latency_s;
}

double restart_time(double provisioning_s, double bytes, double read_bytes_per_s, double warmup_s) {
  const char* f = "restart_time";
  require(nonnegative_finite(provisioning_s), f, "provisioning_s", provisioning_s, "finite and >= 0");
  require(nonnegative_finite(bytes), f, "bytes", bytes, "finite and >= 0");
  require(positive_finite(read_bytes_per_s), f, "read_bytes_per_s", read_bytes_per_s, "finite and > 0");
  require(nonnegative_finite(warmup_s), f, "warmup_s", warmup_s, "finite and >= 0");
  return provisioning_s + bytes / read_bytes_per_s + warmup_s;
}

}  // namespace dlsim::scheduler
