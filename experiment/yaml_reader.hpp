// MapReader: reads one YAML mapping of a scenario with full error reporting. Every key the
// schema knows is declared by reading it (or by allow()); finish() rejects the others with
// the nearest known key. Scalars are parsed here, not by yaml-cpp's conversions, so that every
// failure names file, line, column, key path, the bad value and what is allowed.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/config_error.hpp"
#include "experiment/units.hpp"

namespace dlsim::experiment {

// Where the YAML being read came from: a file, and the --set overrides applied on top of it.
// A value at or under an overridden key path is reported as coming from that --set.
struct Override {
  std::string path;   // "cluster.nodes", "sweep.nodes[2]"
  std::string value;  // the text after '='
};
struct Source {
  std::string file;
  std::vector<Override> overrides;
  SourceLocation locate(const YAML::Node& node, const std::string& key_path) const;
};

class MapReader {
 public:
  // `node` must be a mapping (a missing or null node reads as an empty one when allow_empty).
  MapReader(const YAML::Node& node, std::string path, const Source& source, bool allow_empty = false);

  bool has(const std::string& key) const;
  YAML::Node node(const std::string& key);     // declares the key; invalid node when absent
  std::string path_of(const std::string& key) const;
  const std::string& path() const { return path_; }
  const Source& source() const { return source_; }
  void allow(std::initializer_list<const char*> keys);

  std::string text(const std::string& key);
  std::optional<std::string> optional_text(const std::string& key);
  std::string choice(const std::string& key, const std::vector<std::string>& allowed,
                     std::optional<std::string> fallback = std::nullopt);
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max,
                       std::optional<std::int64_t> fallback = std::nullopt);
  double number(const std::string& key, double min, double max,
                std::optional<double> fallback = std::nullopt);
  double quantity(const std::string& key, Dimension d, double min, double max,
                  std::optional<double> fallback = std::nullopt);
  bool boolean(const std::string& key, std::optional<bool> fallback = std::nullopt);

  // Throws for keys present in the mapping that were never declared.
  void finish() const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void fail_missing(const std::string& key, const std::string& what) const;

 private:
  YAML::Node scalar(const std::string& key);  // present, declared, and a scalar

  YAML::Node map_;
  std::string path_;
  const Source& source_;
  std::vector<std::string> declared_;
};

// The one checked way to look inside YAML a user wrote: yaml-cpp throws its own exceptions
// (no key path, its own wording) for a lookup in a scalar, a complex key or a bad conversion.
// These never throw anything but ConfigError.
//
// node[key] for reading: an undefined node when `node` is not a mapping or has no such key.
YAML::Node child(const YAML::Node& node, const std::string& key);
// A mapping key's text; a list or mapping used as a key ({[a]: 1}) is refused at the key.
std::string key_text(const YAML::Node& key, const std::string& parent_path, const Source& source);
// A scalar's text; anything else is refused with "expected <what>".
std::string scalar_text(const YAML::Node& node, const std::string& path, const Source& source, const std::string& what);

// Scalar parsing shared with list items: throw ConfigError at `node` on failure.
std::int64_t parse_integer(const YAML::Node& node, const std::string& path, const Source& source,
                           std::int64_t min, std::int64_t max);
double parse_number(const YAML::Node& node, const std::string& path, const Source& source, double min, double max);
std::string describe_range(double min, double max);

}  // namespace dlsim::experiment
