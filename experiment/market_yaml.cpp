// Reading the spot market and billing keys (see market_yaml.hpp).
#include "experiment/market_yaml.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "experiment/nearest_name.hpp"

namespace dlsim::experiment {
namespace {

// A file named under `key`, relative to the scenario's folder; it must exist.
std::string file_of(MapReader& r, const std::string& key, const std::string& base_dir, const std::string& what) {
  const std::string p = r.text(key);
  const std::filesystem::path fp(p);
  const std::string full = fp.is_absolute() ? p : (std::filesystem::path(base_dir) / fp).string();
  if (!std::filesystem::exists(full)) r.fail(key, what + " '" + full + "' does not exist");
  return full;
}

// What `read` gives for `path`, read on the first call only; a malformed file fails at `key`.
template <class Value>
const Value& read_once(std::map<std::string, Value>& cache, const std::string& path, Value (*read)(const std::string&), MapReader& r,
                       const std::string& key) {
  auto it = cache.find(path);
  if (it == cache.end()) {
    try {
      it = cache.emplace(path, read(path)).first;
    } catch (const std::runtime_error& e) {
      r.fail(key, e.what());
    }
  }
  return it->second;
}

std::string utc_text(double unix_s) {
  const auto t = std::chrono::sys_seconds(std::chrono::seconds(static_cast<long long>(std::floor(unix_s))));
  const auto day = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::year_month_day ymd(day);
  const std::chrono::hh_mm_ss hms(t - day);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lldZ", int(ymd.year()), unsigned(ymd.month()),
                unsigned(ymd.day()), static_cast<long long>(hms.hours().count()),
                static_cast<long long>(hms.minutes().count()), static_cast<long long>(hms.seconds().count()));
  return buf;
}

// The series of `instance` in `zone`, with the choices in the error when absent.
const scheduler::SpotPriceSeries& find_series(MapReader& r, const std::vector<scheduler::SpotPriceSeries>& all,
                                              const std::string& instance, const std::string& zone) {
  std::vector<std::string> zones, instances;
  for (const auto& s : all) {
    if (s.instance == instance && s.zone == zone) return s;
    if (s.instance == instance) zones.push_back(s.zone);
    if (std::find(instances.begin(), instances.end(), s.instance) == instances.end()) instances.push_back(s.instance);
  }
  if (zones.empty()) {
    r.fail("instance", "the price history has no instance type '" + instance + "'" + did_you_mean(instance, instances));
  }
  std::string list;
  for (const auto& z : zones) list += (list.empty() ? "" : ", ") + z;
  r.fail("zone", "the price history has no " + instance + " prices in zone '" + zone + "' (it has " + list + ")");
}

}  // namespace

void read_pool_market(MapReader& pool, scheduler::PoolSpec& p, const std::string& instance, double on_demand_price,
                      const std::string& base_dir, TraceFiles& files) {
  p.region = pool.optional_text("region").value_or("");
  p.zone = pool.optional_text("zone").value_or("");
  p.fallback = pool.optional_text("fallback").value_or("");
  if (!pool.has("spot_trace")) {
    pool.allow({"spot_trace"});
    return;
  }
  if (p.capacity != scheduler::Capacity::spot) pool.fail("spot_trace", "only spot capacity follows a spot price history (capacity: spot)");
  for (const char* key : {"price", "discount"}) {
    if (pool.has(key)) pool.fail(key, "a pool with a spot_trace pays the history's prices: give max_price under spot_trace instead");
  }
  MapReader r(pool.node("spot_trace"), pool.path_of("spot_trace"), pool.source());
  const std::string path = file_of(r, "file", base_dir, "spot price history");
  const auto& all = read_once(files.prices, path, scheduler::read_aws_spot_prices, r, "file");
  // The AWS name of the pool's instance ("aws/p3.8xlarge" -> "p3.8xlarge") unless given.
  const std::string own = instance.substr(instance.find('/') == std::string::npos ? 0 : instance.find('/') + 1);
  const std::string type = r.optional_text("instance").value_or(own);
  const std::string zone = r.optional_text("zone").value_or(p.zone);
  if (zone.empty()) r.fail_missing("zone", "the availability zone of the prices (e.g. us-east-1c), or the pool's zone");
  p.market.prices = find_series(r, all, type, zone);
  p.market.max_price_per_hour = r.quantity("max_price", Dimension::price_rate, 0, 1e5, on_demand_price);
  // start: a duration into the history, or a UTC time ("2020-01-22T00:00:00Z").
  const YAML::Node start = r.node("start");
  if (start.IsDefined() && !start.IsNull() && start.IsScalar() && scheduler::parse_utc_timestamp(start.Scalar())) {
    const double at = *scheduler::parse_utc_timestamp(start.Scalar());
    if (at < p.market.prices.start_unix_s) {
      r.fail("start", "'" + start.Scalar() + "' is before the price history begins (" + utc_text(p.market.prices.start_unix_s) + ")");
    }
    p.market.start_s = at - p.market.prices.start_unix_s;
  } else {
    p.market.start_s = r.quantity("start", Dimension::duration, 0, 100 * 365 * 86400.0, 0.0);
  }
  p.price_per_node_hour = p.market.price_at(0);  // for reports; nodes are billed at the history's prices
  r.finish();
}

std::optional<scheduler::Hazard> read_fitted_hazard(MapReader& pool, const std::string& key, const std::string& base_dir,
                                                    TraceFiles& files) {
  if (!pool.has(key)) return std::nullopt;
  const YAML::Node node = pool.node(key);
  if (!node.IsMap() || !node["fit"].IsDefined()) return std::nullopt;
  MapReader r(node, pool.path_of(key), pool.source());
  const std::string path = file_of(r, "fit", base_dir, "preemption probe log");
  const auto& lifetimes = read_once(files.lifetimes, path, scheduler::read_instance_lifetimes, r, "fit");
  // Optional filters: the log probes several instance kinds and zones at once.
  const auto zone = r.optional_text("zone");
  const auto gpu = r.optional_text("gpu");
  const std::int64_t gpus = r.integer("gpus", 0, 1024, 0);
  std::vector<scheduler::InstanceLifetime> chosen;
  for (const auto& life : lifetimes) {
    if ((!zone || life.zone == *zone) && (!gpu || life.gpu_type == *gpu) && (gpus == 0 || life.gpus == gpus)) chosen.push_back(life);
  }
  r.finish();
  try {
    return scheduler::fit_exponential_hazard(chosen);
  } catch (const std::invalid_argument& e) {
    r.fail("fit", std::string(e.what()) + " (in '" + path + "' with the zone/gpu/gpus filters given)");
  }
}

void check_fallbacks(const YAML::Node& pools, const Source& source, const std::vector<scheduler::PoolSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& p : specs) names.push_back(p.name);
  const auto index_of = [&](const std::string& name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const int n = static_cast<int>(specs.size());
  for (int i = 0; i < n; ++i) {
    const std::string& fallback = specs[static_cast<std::size_t>(i)].fallback;
    if (fallback.empty()) continue;
    const std::string path = "pools[" + std::to_string(i) + "].fallback";
    const auto fail = [&](const std::string& why) {
      throw ConfigError(source.locate(pools[static_cast<std::size_t>(i)]["fallback"], path), path, why);
    };
    if (fallback == specs[static_cast<std::size_t>(i)].name) fail("a pool cannot be its own fallback ('" + fallback + "')");
    if (index_of(fallback) == n) fail("no pool is named '" + fallback + "'" + did_you_mean(fallback, names));
    std::string chain = specs[static_cast<std::size_t>(i)].name;
    for (int q = index_of(fallback), steps = 0; q < n && steps <= n; q = index_of(specs[static_cast<std::size_t>(q)].fallback), ++steps) {
      chain += " -> " + names[static_cast<std::size_t>(q)];
      if (q == i) fail("fallbacks make a cycle (" + chain + ")");
      if (specs[static_cast<std::size_t>(q)].fallback.empty()) break;
    }
  }
}

void default_storage_regions(scheduler::ClusterSpec& spec) {
  for (auto& j : spec.jobs) {
    if (!j.checkpoint.storage_region.empty()) continue;
    const auto it = std::find_if(spec.pools.begin(), spec.pools.end(), [&](const auto& p) { return p.name == j.pool; });
    j.checkpoint.storage_region = it != spec.pools.end() ? it->region : spec.pools.front().region;
  }
}

void read_billing(MapReader& r, scheduler::ClusterSpec& spec) {
  scheduler::BillingRule& b = spec.billing;
  scheduler::EgressPrices& e = spec.egress;
  b.granularity_s = r.quantity("granularity", Dimension::duration, 1e-3, 86400, b.granularity_s);
  b.minimum_s = r.quantity("minimum", Dimension::duration, 0, 86400, b.minimum_s);
  e.inter_zone_usd_per_gb = r.number("inter_zone_usd_per_gb", 0, 100, e.inter_zone_usd_per_gb);
  e.inter_region_usd_per_gb = r.number("inter_region_usd_per_gb", 0, 100, e.inter_region_usd_per_gb);
  r.finish();
}

}  // namespace dlsim::experiment
