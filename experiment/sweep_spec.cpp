#include "experiment/sweep_spec.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>

#include "experiment/config_error.hpp"

namespace dlsim::experiment {
namespace {

std::string flow(const YAML::Node& v) {
  YAML::Emitter e;
  e << YAML::Flow << v;
  return e.c_str();
}

// Reads {key.path: [values], ...} in the order written.
std::vector<SweepAxis> read_lists(const YAML::Node& node, const std::string& path, const Source& source) {
  if (!node.IsMap() || node.size() == 0) {
    throw ConfigError(source.locate(node, path), path, "expected a mapping from key paths to lists of values, e.g. {workload.precision: [fp16, fp32]}");
  }
  std::vector<SweepAxis> axes;
  for (const auto& kv : node) {
    const std::string key = key_text(kv.first, path, source);
    const std::string at = path + "." + key;
    if (!kv.second.IsSequence() || kv.second.size() == 0) throw ConfigError(source.locate(kv.second, at), at, "expected a non-empty list of values");
    SweepAxis axis{key, {}};
    for (const auto& v : kv.second) axis.values.push_back(flow(v));
    axes.push_back(std::move(axis));
  }
  return axes;
}

// "10 GB/s" -> (10, "GB/s"); a plain number -> (x, "").
std::pair<double, std::string> number_and_unit(const YAML::Node& node, const std::string& path, const Source& source) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  std::size_t used = 0;
  double x = std::numeric_limits<double>::quiet_NaN();
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (!std::isfinite(x)) throw ConfigError(source.locate(node, path), path, "expected a number (a unit may follow), got '" + text + "'");
  return {x, text.substr(used)};  // the unit as written, with its space if any ("10 USD/h")
}

RandomAxis read_random_axis(const std::string& key, const YAML::Node& node, const std::string& path, const Source& source) {
  if (!node.IsMap() || node.size() != 1) {
    throw ConfigError(source.locate(node, path), path,
                      "expected one of {uniform: [lo, hi]}, {log_uniform: [lo, hi]}, {integer: [lo, hi]}, {choice: [values]} "
                      "(lo and hi may carry a unit: {uniform: [5MiB, 50MiB]})");
  }
  const std::string kind = key_text(node.begin()->first, path, source);
  const YAML::Node args = node.begin()->second;
  const std::string at = path + "." + kind;
  RandomAxis a;
  a.key = key;
  if (kind == "choice") {
    if (!args.IsSequence() || args.size() == 0) throw ConfigError(source.locate(args, at), at, "expected a non-empty list of values");
    a.kind = RandomAxis::Kind::choice;
    for (const auto& v : args) a.choices.push_back(flow(v));
    return a;
  }
  if (kind != "uniform" && kind != "log_uniform" && kind != "integer") {
    throw ConfigError(source.locate(node, path), path, "unknown distribution '" + kind + "': use uniform, log_uniform, integer or choice");
  }
  if (!args.IsSequence() || args.size() != 2) throw ConfigError(source.locate(args, at), at, "expected [lo, hi]");
  const auto [lo, lo_unit] = number_and_unit(args[0], at + "[0]", source);
  const auto [hi, hi_unit] = number_and_unit(args[1], at + "[1]", source);
  if (lo_unit != hi_unit) throw ConfigError(source.locate(args, at), at, "lo and hi have different units ('" + lo_unit + "', '" + hi_unit + "')");
  if (!(lo <= hi)) throw ConfigError(source.locate(args, at), at, "expected lo <= hi");
  a.lo = lo;
  a.hi = hi;
  a.unit = lo_unit;
  if (kind == "uniform") a.kind = RandomAxis::Kind::uniform;
  if (kind == "log_uniform") {
    if (!(lo > 0)) throw ConfigError(source.locate(args, at), at, "log_uniform needs lo > 0");
    a.kind = RandomAxis::Kind::log_uniform;
  }
  if (kind == "integer") {
    if (lo != std::floor(lo) || hi != std::floor(hi) || !a.unit.empty()) {
      throw ConfigError(source.locate(args, at), at, "integer needs whole numbers without a unit");
    }
    a.kind = RandomAxis::Kind::integer;
  }
  return a;
}

// A uniform double in [0, 1) from 53 random bits: the same on every platform (unlike
// std::uniform_real_distribution, whose algorithm the standard leaves open).
double unit_interval(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::string draw(const RandomAxis& a, std::mt19937_64& rng) {
  const double u = unit_interval(rng);
  char text[64];
  switch (a.kind) {
    case RandomAxis::Kind::choice:
      return a.choices[std::min(a.choices.size() - 1, static_cast<std::size_t>(u * static_cast<double>(a.choices.size())))];
    case RandomAxis::Kind::integer: {
      const double span = a.hi - a.lo + 1;
      std::snprintf(text, sizeof text, "%.0f", a.lo + std::min(span - 1, std::floor(u * span)));
      return text;
    }
    case RandomAxis::Kind::log_uniform:
      std::snprintf(text, sizeof text, "%.17g", std::exp(std::log(a.lo) + u * (std::log(a.hi) - std::log(a.lo))));
      break;
    case RandomAxis::Kind::uniform:
      std::snprintf(text, sizeof text, "%.17g", a.lo + u * (a.hi - a.lo));
      break;
  }
  return std::string(text) + a.unit;
}

}  // namespace

bool is_variant_sweep_key(const std::string& key) { return key == "grid" || key == "zip" || key == "random"; }

VariantSweep read_variant_sweep(const YAML::Node& sweep, const Source& source, std::uint64_t scenario_seed) {
  VariantSweep out;
  out.random_seed = scenario_seed;
  if (!sweep.IsDefined() || sweep.IsNull() || !sweep.IsMap()) return out;
  out.where = source.locate(sweep, "sweep");
  if (const YAML::Node grid = child(sweep, "grid"); grid.IsDefined() && !grid.IsNull()) out.grid = read_lists(grid, "sweep.grid", source);
  if (const YAML::Node zip = child(sweep, "zip"); zip.IsDefined() && !zip.IsNull()) {
    out.zip = read_lists(zip, "sweep.zip", source);
    for (const SweepAxis& a : out.zip) {
      if (a.values.size() != out.zip.front().values.size()) {
        throw ConfigError(source.locate(child(zip, a.key), "sweep.zip." + a.key), "sweep.zip." + a.key,
                          "has " + std::to_string(a.values.size()) + " values; zipped lists must have the same length (" +
                              out.zip.front().key + " has " + std::to_string(out.zip.front().values.size()) + ")");
      }
    }
  }
  if (const YAML::Node random = child(sweep, "random"); random.IsDefined() && !random.IsNull()) {
    MapReader r(random, "sweep.random", source);
    out.samples = static_cast<int>(r.integer("samples", 1, static_cast<std::int64_t>(kMaxSweepVariants)));
    out.random_seed = static_cast<std::uint64_t>(r.integer("seed", 0, std::numeric_limits<std::int64_t>::max(),
                                                           static_cast<std::int64_t>(scenario_seed)));
    const YAML::Node keys = r.node("keys");
    if (!keys.IsMap() || keys.size() == 0) r.fail("keys", "expected a mapping from key paths to distributions, e.g. {cluster.nodes: {integer: [1, 64]}}");
    for (const auto& kv : keys) {
      const std::string key = key_text(kv.first, "sweep.random.keys", source);
      out.random.push_back(read_random_axis(key, kv.second, "sweep.random.keys." + key, source));
    }
    r.finish();
  }
  std::set<std::string> seen;
  for (const auto* axes : {&out.grid, &out.zip}) {
    for (const SweepAxis& a : *axes) {
      if (!seen.insert(a.key).second) throw ConfigError(source.locate(sweep, "sweep"), "sweep", "key " + a.key + " is swept twice");
    }
  }
  for (const RandomAxis& a : out.random) {
    if (!seen.insert(a.key).second) throw ConfigError(source.locate(sweep, "sweep"), "sweep", "key " + a.key + " is swept twice");
  }
  double count = 1;
  for (const SweepAxis& a : out.grid) count *= static_cast<double>(a.values.size());
  if (!out.zip.empty()) count *= static_cast<double>(out.zip.front().values.size());
  if (!out.random.empty()) count *= out.samples;
  if (count > static_cast<double>(kMaxSweepVariants)) {
    throw ConfigError(source.locate(sweep, "sweep"), "sweep", "more than " + std::to_string(kMaxSweepVariants) + " variants");
  }
  return out;
}

std::vector<std::vector<std::string>> expand(const VariantSweep& sweep) {
  std::vector<std::vector<std::string>> out = grid_variants(sweep.grid);
  if (!sweep.zip.empty()) {
    std::vector<std::vector<std::string>> next;
    for (const auto& v : out) {
      for (std::size_t i = 0; i < sweep.zip.front().values.size(); ++i) {
        next.push_back(v);
        for (const SweepAxis& a : sweep.zip) next.back().push_back(a.key + "=" + a.values[i]);
      }
    }
    out = std::move(next);
  }
  if (!sweep.random.empty()) {
    std::mt19937_64 rng(sweep.random_seed);
    std::vector<std::vector<std::string>> samples(static_cast<std::size_t>(sweep.samples));
    for (auto& sample : samples) {
      for (const RandomAxis& a : sweep.random) sample.push_back(a.key + "=" + draw(a, rng));
    }
    std::vector<std::vector<std::string>> next;
    for (const auto& v : out) {
      for (const auto& sample : samples) {
        next.push_back(v);
        next.back().insert(next.back().end(), sample.begin(), sample.end());
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace dlsim::experiment
