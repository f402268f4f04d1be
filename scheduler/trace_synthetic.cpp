// Synthetic traces drawn from a published shape (by default Philly's): Poisson arrivals, a
// categorical GPU-count mix and lognormal durations. Every draw comes from a named stream of
// sim::RandomStreams and is transformed here with std::log/std::cos/std::exp only, so a seed gives
// the same trace on every run of the same build.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

#include "scheduler/trace.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& value, const std::string& allowed) {
  throw std::invalid_argument("SyntheticTraceSpec." + field + " = " + value + ": expected " + allowed);
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

bool positive(double x) { return x > 0 && std::isfinite(x); }

// Index drawn with probability weights[i] / sum(weights).
std::size_t pick(const std::vector<double>& cumulative, double u) {
  const double x = u * cumulative.back();
  for (std::size_t i = 0; i < cumulative.size(); ++i)
    if (x < cumulative[i]) return i;
  std::size_t last = cumulative.size() - 1;  // x == total by rounding: the last positive weight
  while (last > 0 && cumulative[last] == cumulative[last - 1]) --last;
  return last;
}

// Standard normal by Box-Muller from two uniforms of [0, 1); 1 - u lies in (0, 1], log is finite.
double standard_normal(sim::RandomStream& stream) {
  const double u1 = 1.0 - stream.uniform();
  const double u2 = stream.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

void validate(const SyntheticTraceSpec& spec) {
  if (spec.jobs < 1) bad("jobs", std::to_string(spec.jobs), "an integer >= 1");
  if (!positive(spec.arrival_rate_per_s))
    bad("arrival_rate_per_s", number(spec.arrival_rate_per_s), "a finite rate > 0 per second");
  if (spec.gpu_counts.empty()) bad("gpu_counts", "[]", "at least one GPU count");
  for (int gpus : spec.gpu_counts)
    if (gpus < 1) bad("gpu_counts", "[... " + std::to_string(gpus) + " ...]", "counts >= 1");
  if (spec.gpu_weights.size() != spec.gpu_counts.size())
    bad("gpu_weights", std::to_string(spec.gpu_weights.size()) + " weights",
        "one weight per GPU count (" + std::to_string(spec.gpu_counts.size()) + ")");
  double total = 0;
  for (double w : spec.gpu_weights) {
    if (!(w >= 0) || !std::isfinite(w))
      bad("gpu_weights", "[... " + number(w) + " ...]", "finite weights >= 0");
    total += w;
  }
  if (!(total > 0)) bad("gpu_weights", "all 0", "at least one weight > 0");
  if (!positive(spec.duration_median_s))
    bad("duration_median_s", number(spec.duration_median_s), "a finite time > 0 seconds");
  if (!positive(spec.duration_mean_s) || spec.duration_mean_s < spec.duration_median_s)
    bad("duration_mean_s", number(spec.duration_mean_s),
        "a finite time >= duration_median_s (" + number(spec.duration_median_s) + "), as a lognormal has");
  if (!(spec.duration_max_s == 0 || positive(spec.duration_max_s)))
    bad("duration_max_s", number(spec.duration_max_s), "0 (no cap) or a finite time > 0");
}

Trace synthetic_trace(const SyntheticTraceSpec& spec, std::uint64_t seed) {
  validate(spec);
  sim::RandomStreams streams(seed);
  auto& arrivals = streams.stream("arrivals");
  auto& gpu_draws = streams.stream("gpus");
  auto& duration_draws = streams.stream("durations");
  auto& queue_draws = streams.stream("queues");

  std::vector<double> cumulative;
  double sum = 0;
  for (double w : spec.gpu_weights) cumulative.push_back(sum += w);
  // Lognormal: median = e^mu, mean = e^(mu + sigma^2 / 2).
  const double mu = std::log(spec.duration_median_s);
  const double sigma = std::sqrt(2.0 * std::log(spec.duration_mean_s / spec.duration_median_s));
  const double mean_gap_s = 1.0 / spec.arrival_rate_per_s;

  Trace trace;
  trace.source = "synthetic:jobs=" + std::to_string(spec.jobs) + ",arrival_rate_per_s=" +
                 number(spec.arrival_rate_per_s) + ",duration_median_s=" + number(spec.duration_median_s) +
                 ",duration_mean_s=" + number(spec.duration_mean_s) +
                 ",duration_max_s=" + number(spec.duration_max_s) + ",seed=" + std::to_string(seed);
  trace.jobs.reserve(static_cast<std::size_t>(spec.jobs));
  double now = 0;
  for (int i = 0; i < spec.jobs; ++i) {
    TraceJob job;
    job.id = std::to_string(i);
    if (i > 0) now += arrivals.exponential(mean_gap_s);
    job.submit_s = now;
    job.gpus = spec.gpu_counts[pick(cumulative, gpu_draws.uniform())];
    job.duration_s = std::exp(mu + sigma * standard_normal(duration_draws));
    if (spec.duration_max_s > 0) job.duration_s = std::min(job.duration_s, spec.duration_max_s);
    if (!positive(job.duration_s))  // only for extreme mean / median ratios without a cap
      throw std::invalid_argument("SyntheticTraceSpec: duration_mean_s / duration_median_s = " +
                                  number(spec.duration_mean_s / spec.duration_median_s) +
                                  " gives durations beyond double range; set duration_max_s");
    if (!spec.queues.empty()) {
      const std::size_t n = spec.queues.size();
      std::size_t q = static_cast<std::size_t>(i) % n;
      if (spec.queue_assignment == QueueAssignment::random)
        q = std::min(n - 1, static_cast<std::size_t>(queue_draws.uniform() * static_cast<double>(n)));
      job.queue = spec.queues[q];
    }
    trace.jobs.push_back(std::move(job));
  }
  trace_detail::finish(trace);  // already in order; keeps the invariant in one place
  return trace;
}

}  // namespace dlsim::scheduler
