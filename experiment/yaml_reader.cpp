#include "experiment/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "experiment/nearest_name.hpp"

namespace dlsim::experiment {
namespace {

std::string quoted(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

std::optional<double> to_double(const std::string& s) {
  double v = 0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace

std::string describe_range(double min, double max) {
  return "a number from " + number_text(min) + " to " + number_text(max);
}

SourceLocation Source::locate(const YAML::Node& node, const std::string& key_path) const {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string& p = it->path;
    const bool under = key_path == p || (key_path.size() > p.size() && key_path.compare(0, p.size(), p) == 0 &&
                                         (key_path[p.size()] == '.' || key_path[p.size()] == '['));
    if (under) return {"--set " + p + "=" + it->value, 0, 0};
  }
  if (!node.IsDefined()) return {file, 0, 0};
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

YAML::Node child(const YAML::Node& node, const std::string& key) {
  if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node n = node[key];  // const lookup: never inserts
  return n.IsDefined() ? n : YAML::Node(YAML::NodeType::Undefined);
}

std::string key_text(const YAML::Node& key, const std::string& parent_path, const Source& source) {
  if (key.IsScalar()) return key.Scalar();
  throw ConfigError(source.locate(key, parent_path), parent_path,
                    "a key must be a name, got " + quoted(key) + " used as a key");
}

std::string scalar_text(const YAML::Node& node, const std::string& path, const Source& source, const std::string& what) {
  if (!node.IsScalar()) throw ConfigError(source.locate(node, path), path, "expected " + what + ", got " + quoted(node));
  return node.Scalar();
}

double parse_number(const YAML::Node& node, const std::string& path, const Source& source, double min, double max) {
  const std::string text = scalar_text(node, path, source, describe_range(min, max));
  const auto v = to_double(text);
  if (!v) throw ConfigError(source.locate(node, path), path, "expected " + describe_range(min, max) + ", got '" + text + "'");
  if (*v < min || *v > max) {
    throw ConfigError(source.locate(node, path), path, "value '" + text + "' is out of range: expected " + describe_range(min, max));
  }
  return *v;
}

// Integers are read exactly: digits through from_chars, never through a double, except for
// exponent forms ("300e9"), which must be whole and exactly representable (below 2^53).
std::int64_t parse_integer(const YAML::Node& node, const std::string& path, const Source& source,
                           std::int64_t min, std::int64_t max) {
  const std::string allowed = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  const auto fail = [&](const std::string& why) { throw ConfigError(source.locate(node, path), path, why); };
  if (!node.IsScalar()) fail("expected " + allowed + ", got " + quoted(node));
  const std::string& text = node.Scalar();
  const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (end == last && ec == std::errc::result_out_of_range) fail("value " + quoted(node) + " is out of range: expected " + allowed);
  if (end != last || ec != std::errc()) {
    constexpr double kExact = 9007199254740992.0;  // 2^53
    const auto v = to_double(text);
    if (!v || *v != std::floor(*v)) fail("expected " + allowed + ", got " + quoted(node));
    if (std::fabs(*v) >= kExact) fail("value " + quoted(node) + " is out of range: expected " + allowed);
    value = static_cast<std::int64_t>(*v);
  }
  if (value < min || value > max) fail("value " + quoted(node) + " is out of range: expected " + allowed);
  return value;
}

MapReader::MapReader(const YAML::Node& node, std::string path, const Source& source, bool allow_empty)
    : map_(node), path_(std::move(path)), source_(source) {
  if ((!node.IsDefined() || node.IsNull()) && allow_empty) {
    map_ = YAML::Node(YAML::NodeType::Map);
    return;
  }
  if (!node.IsMap()) {
    throw ConfigError(source_.locate(node, path_), path_, "expected a mapping of keys to values, got " + quoted(node));
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = key_text(kv.first, path_, source_);
    if (!seen.insert(key).second) {
      throw ConfigError(source_.locate(kv.first, path_of(key)), path_of(key), "duplicate key '" + key + "'");
    }
  }
}

std::string MapReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool MapReader::has(const std::string& key) const {
  const YAML::Node n = map_[key];
  return n.IsDefined() && !n.IsNull();
}

void MapReader::allow(std::initializer_list<const char*> keys) {
  for (const char* k : keys) declared_.emplace_back(k);
}

YAML::Node MapReader::node(const std::string& key) {
  declared_.push_back(key);
  return map_[key];
}

void MapReader::fail(const std::string& key, const std::string& message) const {
  const YAML::Node n = map_[key];
  throw ConfigError(source_.locate(n.IsDefined() ? n : map_, path_of(key)), path_of(key), message);
}

void MapReader::fail_missing(const std::string& key, const std::string& what) const {
  // A required key is often missing because it is misspelt: report the misspelling instead.
  for (const auto& kv : map_) {
    const std::string present = kv.first.Scalar();
    if (std::find(declared_.begin(), declared_.end(), present) != declared_.end()) continue;
    if (nearest_name(present, {key})) {
      throw ConfigError(source_.locate(kv.first, path_of(present)), path_of(present),
                        "unknown key '" + present + "' (did you mean '" + key + "'?)");
    }
  }
  // Located at the mapping, or at the --set that removed the key (key=null).
  throw ConfigError(source_.locate(map_, path_of(key)), path_of(key), "missing required key '" + key + "': " + what);
}

YAML::Node MapReader::scalar(const std::string& key) {
  YAML::Node n = node(key);
  if (!n.IsScalar()) fail(key, "expected a single value, got " + quoted(n));
  return n;
}

std::string MapReader::text(const std::string& key) {
  if (!has(key)) fail_missing(key, "a name or text");
  return scalar(key).Scalar();
}

std::optional<std::string> MapReader::optional_text(const std::string& key) {
  declared_.push_back(key);
  if (!has(key)) return std::nullopt;
  return scalar(key).Scalar();
}

std::string MapReader::choice(const std::string& key, const std::vector<std::string>& allowed,
                              std::optional<std::string> fallback) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  if (!has(key)) {
    declared_.push_back(key);
    if (fallback) return *fallback;
    fail_missing(key, "one of " + list);
  }
  const std::string v = scalar(key).Scalar();
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    fail(key, "unknown value '" + v + "'" + did_you_mean(v, allowed) + "; allowed: " + list);
  }
  return v;
}

std::int64_t MapReader::integer(const std::string& key, std::int64_t min, std::int64_t max,
                                std::optional<std::int64_t> fallback) {
  if (!has(key)) {
    declared_.push_back(key);
    if (fallback) return *fallback;
    fail_missing(key, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return parse_integer(node(key), path_of(key), source_, min, max);
}

double MapReader::number(const std::string& key, double min, double max, std::optional<double> fallback) {
  if (!has(key)) {
    declared_.push_back(key);
    if (fallback) return *fallback;
    fail_missing(key, describe_range(min, max));
  }
  return parse_number(scalar(key), path_of(key), source_, min, max);
}

double MapReader::quantity(const std::string& key, Dimension d, double min, double max,
                           std::optional<double> fallback) {
  if (!has(key)) {
    declared_.push_back(key);
    if (fallback) return *fallback;
    fail_missing(key, "a " + std::string(dimension_name(d)) + " with a unit (" + accepted_units(d) + ")");
  }
  const YAML::Node n = scalar(key);
  std::string why;
  const auto v = parse_quantity(n.Scalar(), d, why);
  if (!v) fail(key, "bad value '" + n.Scalar() + "': " + why);
  if (*v < min || *v > max) {
    fail(key, "value '" + n.Scalar() + "' is out of range for a " + std::string(dimension_name(d)) +
                  ": allowed from " + format_quantity(min, d) + " to " + format_quantity(max, d));
  }
  return *v;
}

bool MapReader::boolean(const std::string& key, std::optional<bool> fallback) {
  if (!has(key)) {
    declared_.push_back(key);
    if (fallback) return *fallback;
    fail_missing(key, "true or false");
  }
  const std::string v = scalar(key).Scalar();
  if (v == "true") return true;
  if (v == "false") return false;
  fail(key, "expected true or false, got '" + v + "'");
}

void MapReader::finish() const {
  std::vector<std::string> known = declared_;
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());
  for (const auto& kv : map_) {
    const std::string key = kv.first.Scalar();
    if (std::binary_search(known.begin(), known.end(), key)) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw ConfigError(source_.locate(kv.first, path_of(key)), path_of(key),
                      "unknown key '" + key + "'" + did_you_mean(key, known) + "; allowed keys here: " + list);
  }
}

}  // namespace dlsim::experiment
