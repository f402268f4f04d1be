// Spot market traces: price histories and preemption probe logs, read once before a run (the
// simulation loop never reads a file). Units: seconds, USD per instance-hour.
//
// Source: the logs published with Narayanan et al., "Analysis and Exploitation of Dynamic Pricing
// in the Public Cloud for ML Training" (DISPA 2020), github.com/stanford-futuredata/
// training_on_a_dime (MIT). Formats, as found in the shared data folder:
//   AWS prices:  CSV header timestamp_utc,region,availability_zone,instance_type,
//                product_description,spot_price_usd_per_hour; timestamps 2019-12-20T06:39:10.000Z.
//                A price holds from its timestamp until the next record of the same series.
//   Azure:       CSV header Date,<instance>,...; one row per day (2/24/2020), cells $0.24552, an
//                empty cell where the instance was not offered.
//   Probe logs:  "[2020-03-15T10:07:33.000Z] <message>", one instance polled every ~10-15 min:
//                Created instance <id> with <n> GPU(s) of type <gpu> in zone <zone>
//                Instance <id> running in zone <zone>      (probe: still up)
//                Instance <id> not running in zone <zone>  (probe: preempted, if it was up)
//                Instance <id> creation failed | Instance with <n> GPU(s) of type <gpu> creation
//                failed | Successfully deleted instance <id>   (no effect on lifetimes)
// Malformed rows throw std::runtime_error naming the file and line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/hazard.hpp"

namespace dlsim::scheduler {

struct SpotPricePoint {
  double t_s;           // seconds since the series' first point (points[0].t_s == 0)
  double usd_per_hour;  // >= 0
};

// One price history. Invariant: points non-empty, t_s strictly increasing from 0.
struct SpotPriceSeries {
  std::string instance, zone;  // AWS: instance type and availability zone; Azure: size and region
  double start_unix_s = 0;     // UTC time of points[0], seconds since 1970-01-01
  std::vector<SpotPricePoint> points;

  // Step function: the price of the last point at or before t_s; the last price holds forever.
  // Throws std::out_of_range for t_s < 0 (before the history starts) or NaN.
  double price_at(double t_s) const;
  // Time-weighted mean of price_at over [t0_s, t1_s]; price_at(t0_s) when t0_s == t1_s.
  // Throws std::out_of_range for t0_s < 0 and std::invalid_argument for t1_s < t0_s.
  double mean_price(double t0_s, double t1_s) const;
};

// "2019-12-20T06:39:10.000Z" (UTC, fraction optional) -> seconds since 1970-01-01; nullopt when
// malformed or not a date.
std::optional<double> parse_utc_timestamp(std::string_view text);

// One series per (instance type, availability zone), sorted by (instance, zone); points sorted by
// time. Two records of a series at the same instant keep the later row of the file.
std::vector<SpotPriceSeries> read_aws_spot_prices(const std::string& path);

// One series per instance column with at least one price, sorted by instance; zone = `region`.
std::vector<SpotPriceSeries> read_azure_spot_prices(const std::string& path, const std::string& region);

// One probed instance, from its creation to its preemption or to the end of the log.
struct InstanceLifetime {
  std::string id, gpu_type, zone;
  int gpus = 0;
  double created_unix_s = 0;
  // preempted: creation to the midpoint between the last "running" probe and the first
  // "not running" one (the preemption happened in between; error <= half a probe interval).
  // Not preempted (right-censored: still up when the log ends): creation to the last "running".
  double up_s = 0;
  bool preempted = false;
};

// Lifetimes in order of creation. Probes of instances never seen created are ignored.
std::vector<InstanceLifetime> read_instance_lifetimes(const std::string& path);

// The up times (creation to preemption, seconds) of the preempted instances of a probe log: the
// sample a preemption hazard describes. Censored instances are left out (see the fit below).
std::vector<double> read_preemption_times(const std::string& path);

// Maximum-likelihood exponential hazard. With right censoring: mean = total up time of all
// instances / number of preemptions (censored instances add exposure, not events); for plain
// times, their mean. Throws std::invalid_argument when there is no preemption to fit.
Hazard fit_exponential_hazard(const std::vector<InstanceLifetime>& lifetimes);
Hazard fit_exponential_hazard(const std::vector<double>& times_between_preemptions_s);

}  // namespace dlsim::scheduler
