#include "scheduler/spot_trace.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace dlsim::scheduler {
namespace {

// ---- small parsers (whole field must be consumed) ----

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
}

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Seconds since 1970-01-01 UTC of a proleptic Gregorian date, if the date exists.
std::optional<double> unix_days(int y, int m, int d) {
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month(static_cast<unsigned>(m)),
                                        std::chrono::day(static_cast<unsigned>(d))};
  if (m < 1 || d < 1 || !ymd.ok()) return std::nullopt;
  return 86400.0 * std::chrono::sys_days(ymd).time_since_epoch().count();
}

// "2019-12-20T06:39:10.000Z" (fraction optional) -> seconds since the Unix epoch.
std::optional<double> parse_iso_utc(std::string_view s) {
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
      s.back() != 'Z') {
    return std::nullopt;
  }
  const auto y = parse_int(s.substr(0, 4)), mo = parse_int(s.substr(5, 2)), d = parse_int(s.substr(8, 2));
  const auto h = parse_int(s.substr(11, 2)), mi = parse_int(s.substr(14, 2));
  const auto sec = parse_double(s.substr(17, s.size() - 18));
  if (!y || !mo || !d || !h || !mi || !sec || *h > 23 || *mi > 59 || *sec < 0 || *sec >= 61) return std::nullopt;
  const auto day = unix_days(*y, *mo, *d);
  if (!day) return std::nullopt;
  return *day + 3600.0 * *h + 60.0 * *mi + *sec;
}

// "2/24/2020" (month/day/year) -> seconds since the Unix epoch at 00:00 UTC.
std::optional<double> parse_us_date(std::string_view s) {
  const auto a = s.find('/'), b = s.rfind('/');
  if (a == std::string_view::npos || a == b) return std::nullopt;
  const auto m = parse_int(s.substr(0, a)), d = parse_int(s.substr(a + 1, b - a - 1)), y = parse_int(s.substr(b + 1));
  if (!m || !d || !y) return std::nullopt;
  return unix_days(*y, *m, *d);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

// Reads a text file into lines (a trailing '\r' removed); throws naming the file if unreadable.
std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

// Samples (unix time, price) of one series, in file order -> a series sorted by time, the
// later row winning at equal times.
SpotPriceSeries make_series(std::string instance, std::string zone, std::vector<std::pair<double, double>> samples) {
  std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  SpotPriceSeries series{std::move(instance), std::move(zone), samples.front().first, {}};
  for (const auto& [t, price] : samples) {
    const double rel = t - series.start_unix_s;
    if (!series.points.empty() && series.points.back().t_s == rel) {
      series.points.back().usd_per_hour = price;
    } else {
      series.points.push_back({rel, price});
    }
  }
  return series;
}

}  // namespace

std::optional<double> parse_utc_timestamp(std::string_view text) { return parse_iso_utc(text); }

// ---- price series ----

double SpotPriceSeries::price_at(double t_s) const {
  if (!(t_s >= 0) || points.empty()) {
    throw std::out_of_range("SpotPriceSeries(" + instance + ", " + zone + ")::price_at: t_s = " +
                            std::to_string(t_s) + " is before the first point (t = 0)");
  }
  const auto after = std::upper_bound(points.begin(), points.end(), t_s,
                                      [](double t, const SpotPricePoint& p) { return t < p.t_s; });
  return std::prev(after)->usd_per_hour;
}

double SpotPriceSeries::mean_price(double t0_s, double t1_s) const {
  if (!(t1_s >= t0_s) || !std::isfinite(t1_s)) {
    throw std::invalid_argument("SpotPriceSeries::mean_price: need finite t1_s >= t0_s, got [" +
                                std::to_string(t0_s) + ", " + std::to_string(t1_s) + "]");
  }
  const double first = price_at(t0_s);  // also rejects t0_s < 0
  if (t1_s == t0_s) return first;
  auto it = std::prev(std::upper_bound(points.begin(), points.end(), t0_s,
                                       [](double t, const SpotPricePoint& p) { return t < p.t_s; }));
  double integral = 0, t = t0_s;
  for (; t < t1_s; ++it) {
    const double end = std::next(it) == points.end() ? t1_s : std::min(std::next(it)->t_s, t1_s);
    integral += it->usd_per_hour * (end - t);
    t = end;
  }
  return integral / (t1_s - t0_s);
}

std::vector<SpotPriceSeries> read_aws_spot_prices(const std::string& path) {
  const auto lines = read_lines(path);
  if (lines.empty()) fail(path, 1, "empty file, expected a CSV header");
  const auto header = split(lines[0], ',');
  auto column = [&](std::string_view name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) fail(path, 1, "header lacks column '" + std::string(name) + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t c_time = column("timestamp_utc"), c_zone = column("availability_zone"),
                    c_type = column("instance_type"), c_price = column("spot_price_usd_per_hour");
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> samples;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto f = split(lines[i], ',');
    if (f.size() != header.size()) {
      fail(path, i + 1, "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    }
    const auto t = parse_iso_utc(f[c_time]);
    if (!t) fail(path, i + 1, "bad timestamp_utc '" + std::string(f[c_time]) + "' (want 2019-12-20T06:39:10.000Z)");
    const auto price = parse_double(f[c_price]);
    if (!price || *price < 0) fail(path, i + 1, "bad spot_price_usd_per_hour '" + std::string(f[c_price]) + "'");
    if (f[c_type].empty() || f[c_zone].empty()) fail(path, i + 1, "empty instance_type or availability_zone");
    samples[{std::string(f[c_type]), std::string(f[c_zone])}].emplace_back(*t, *price);
  }
  std::vector<SpotPriceSeries> out;
  for (auto& [key, s] : samples) out.push_back(make_series(key.first, key.second, std::move(s)));
  return out;
}

std::vector<SpotPriceSeries> read_azure_spot_prices(const std::string& path, const std::string& region) {
  const auto lines = read_lines(path);
  if (lines.empty()) fail(path, 1, "empty file, expected a CSV header");
  const auto header = split(lines[0], ',');
  if (header.size() < 2 || header[0] != "Date") fail(path, 1, "expected header 'Date,<instance>,...'");
  std::map<std::string, std::vector<std::pair<double, double>>> samples;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto f = split(lines[i], ',');
    if (f.size() != header.size()) {
      fail(path, i + 1, "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    }
    const auto day = parse_us_date(f[0]);
    if (!day) fail(path, i + 1, "bad Date '" + std::string(f[0]) + "' (want month/day/year, e.g. 2/24/2020)");
    for (std::size_t c = 1; c < f.size(); ++c) {
      if (f[c].empty()) continue;  // not offered that day
      const auto price = f[c].front() == '$' ? parse_double(f[c].substr(1)) : std::nullopt;
      if (!price || *price < 0) {
        fail(path, i + 1, "bad price '" + std::string(f[c]) + "' for " + std::string(header[c]) + " (want $0.24552)");
      }
      samples[std::string(header[c])].emplace_back(*day, *price);
    }
  }
  std::vector<SpotPriceSeries> out;
  for (auto& [instance, s] : samples) out.push_back(make_series(instance, region, std::move(s)));
  return out;
}

// ---- preemption probe logs ----

std::vector<InstanceLifetime> read_instance_lifetimes(const std::string& path) {
  const auto lines = read_lines(path);
  std::vector<InstanceLifetime> lives;
  std::vector<double> last_running;           // per lifetime: time of the last "running" probe
  std::map<std::string, std::size_t, std::less<>> up;  // id -> index of its open lifetime
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) continue;
    const auto close = line.find("] ");
    const auto t = line.front() == '[' && close != std::string_view::npos ? parse_iso_utc(line.substr(1, close - 1))
                                                                         : std::nullopt;
    if (!t) fail(path, i + 1, "expected '[2020-03-15T10:07:33.000Z] message'");
    const auto w = split(line.substr(close + 2), ' ');
    auto is = [&](std::size_t n, std::initializer_list<std::pair<std::size_t, std::string_view>> fixed) {
      if (w.size() != n) return false;
      return std::all_of(fixed.begin(), fixed.end(), [&](const auto& p) { return w[p.first] == p.second; });
    };
    if (is(12, {{0, "Created"}, {1, "instance"}, {3, "with"}, {5, "GPU(s)"}, {6, "of"}, {7, "type"}, {9, "in"}, {10, "zone"}})) {
      const auto gpus = parse_int(w[4]);
      if (!gpus || *gpus < 0) fail(path, i + 1, "bad GPU count '" + std::string(w[4]) + "'");
      if (up.count(w[2])) fail(path, i + 1, "instance " + std::string(w[2]) + " created again while up");
      up.emplace(std::string(w[2]), lives.size());
      lives.push_back({std::string(w[2]), std::string(w[8]), std::string(w[11]), *gpus, *t, 0, false});
      last_running.push_back(*t);
    } else if (is(6, {{0, "Instance"}, {2, "running"}, {3, "in"}, {4, "zone"}})) {
      if (const auto it = up.find(w[1]); it != up.end()) last_running[it->second] = *t;
    } else if (is(7, {{0, "Instance"}, {2, "not"}, {3, "running"}, {4, "in"}, {5, "zone"}})) {
      if (const auto it = up.find(w[1]); it != up.end()) {  // else: a failed creation, never up
        InstanceLifetime& life = lives[it->second];
        life.up_s = 0.5 * (last_running[it->second] + *t) - life.created_unix_s;
        life.preempted = true;
        up.erase(it);
      }
    } else if (!is(4, {{0, "Instance"}, {2, "creation"}, {3, "failed"}}) &&
               !is(4, {{0, "Successfully"}, {1, "deleted"}, {2, "instance"}}) &&
               !is(9, {{0, "Instance"}, {1, "with"}, {3, "GPU(s)"}, {4, "of"}, {5, "type"}, {7, "creation"}, {8, "failed"}})) {
      fail(path, i + 1, "unrecognised probe message '" + std::string(line.substr(close + 2)) + "'");
    }
  }
  for (const auto& [id, index] : up) lives[index].up_s = last_running[index] - lives[index].created_unix_s;
  return lives;
}

std::vector<double> read_preemption_times(const std::string& path) {
  std::vector<double> times;
  for (const auto& life : read_instance_lifetimes(path)) {
    if (life.preempted) times.push_back(life.up_s);
  }
  return times;
}

Hazard fit_exponential_hazard(const std::vector<InstanceLifetime>& lifetimes) {
  double exposure = 0;
  std::size_t events = 0;
  for (const auto& life : lifetimes) {
    exposure += life.up_s;
    events += life.preempted ? 1 : 0;
  }
  if (events == 0 || !(exposure > 0)) {
    throw std::invalid_argument("fit_exponential_hazard: no preemption among " + std::to_string(lifetimes.size()) +
                                " lifetimes; the mean is unbounded");
  }
  return Hazard{Hazard::Kind::exponential, exposure / static_cast<double>(events)};
}

Hazard fit_exponential_hazard(const std::vector<double>& times_between_preemptions_s) {
  double sum = 0;
  for (double t : times_between_preemptions_s) {
    if (!(t >= 0) || !std::isfinite(t)) {
      throw std::invalid_argument("fit_exponential_hazard: time " + std::to_string(t) + " must be finite and >= 0");
    }
    sum += t;
  }
  if (times_between_preemptions_s.empty() || !(sum > 0)) {
    throw std::invalid_argument("fit_exponential_hazard: need at least one positive time");
  }
  return Hazard{Hazard::Kind::exponential, sum / static_cast<double>(times_between_preemptions_s.size())};
}

}  // namespace dlsim::scheduler
