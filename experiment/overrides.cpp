#include "experiment/overrides.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace dlsim::experiment {
namespace {

struct Step {
  std::string key;  // mapping key, or empty for a list index
  long index = -1;
};

[[noreturn]] void bad(const Override& o, const std::string& why) {
  throw ConfigError({"--set " + o.path + "=" + o.value, 0, 0}, o.path, why);
}

std::vector<Step> split_path(const Override& o) {
  std::vector<Step> steps;
  std::size_t i = 0;
  const std::string& p = o.path;
  while (i < p.size()) {
    if (p[i] == '[') {
      const std::size_t close = p.find(']', i);
      long index = -1;
      if (close == std::string::npos) bad(o, "unclosed '[' in key path");
      const auto [end, ec] = std::from_chars(p.data() + i + 1, p.data() + close, index);
      if (ec != std::errc() || end != p.data() + close || index < 0) bad(o, "list index must be a non-negative integer");
      steps.push_back({"", index});
      i = close + 1;
      if (i < p.size() && p[i] == '.') {
        ++i;
        if (i == p.size()) bad(o, "empty key at the end of the key path");
      }
      continue;
    }
    std::size_t end = p.find_first_of(".[", i);
    if (end == std::string::npos) end = p.size();
    if (end == i) bad(o, "empty key in key path");
    steps.push_back({p.substr(i, end - i), -1});
    i = end;
    if (i < p.size() && p[i] == '.') {
      ++i;
      if (i == p.size()) bad(o, "empty key at the end of the key path");
    }
  }
  if (steps.empty()) bad(o, "empty key path");
  return steps;
}

// Keys of which a mapping holds one: an override of one replaces the others, so that
// `--set workload.batch.global=1024` works on a scenario written with batch.per_device.
struct Alternatives {
  const char* parent;
  std::vector<std::string> keys;
};
const Alternatives kAlternatives[] = {{"workload.batch", {"per_device", "global"}}, {"workload", {"iterations", "tokens"}}};

void remove_alternatives(YAML::Node& map, const Override& o, const std::string& key) {
  const std::size_t dot = o.path.rfind('.');
  const std::string parent = dot == std::string::npos ? "" : o.path.substr(0, dot);
  for (const Alternatives& a : kAlternatives) {
    if (parent != a.parent || std::find(a.keys.begin(), a.keys.end(), key) == a.keys.end()) continue;
    for (const std::string& other : a.keys) {
      if (other != key && std::as_const(map)[other].IsDefined()) map.remove(other);
    }
  }
}

}  // namespace

Override parse_set_argument(const std::string& argument) {
  const std::size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError({"--set " + argument, 0, 0}, "", "expected key.path=value, e.g. --set cluster.nodes=8");
  }
  return {argument.substr(0, eq), argument.substr(eq + 1)};
}

void apply_override(YAML::Node& root, const Override& o) {
  YAML::Node value;
  try {
    value = YAML::Load(o.value);
  } catch (const YAML::Exception& e) {
    bad(o, "value is not valid YAML: " + e.msg);
  }
  // "key=" sets an empty string; "key=null" (or ~) sets null, as in a file: the key reads as absent
  // (its default, or no output file), never as the text "null".
  if (!value.IsDefined() || (value.IsNull() && o.value.find_first_not_of(" \t") == std::string::npos)) {
    value = YAML::Node(o.value);
  }
  // A bare "-" is standard output (--csv -), not a YAML list of one null item.
  if (o.value == "-") value = YAML::Node(o.value);
  const std::vector<Step> steps = split_path(o);
  // yaml-cpp nodes are handles: assigning through `current` edits the tree in place.
  YAML::Node current = root;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    const bool last = s + 1 == steps.size();
    if (step.index < 0) {
      if (current.IsScalar() || current.IsSequence()) bad(o, "'" + step.key + "' is below a value that is not a mapping");
      if (last) {
        remove_alternatives(current, o, step.key);
        current[step.key] = value;
        return;
      }
      YAML::Node child = current[step.key];
      if (!child.IsDefined() || child.IsNull()) current[step.key] = YAML::Node(YAML::NodeType::Map);
      current.reset(current[step.key]);
    } else {
      if (!current.IsSequence()) bad(o, "[" + std::to_string(step.index) + "] applied to a value that is not a list");
      if (static_cast<std::size_t>(step.index) >= current.size()) {
        bad(o, "list index " + std::to_string(step.index) + " is past the end (the list has " +
                   std::to_string(current.size()) + " items)");
      }
      if (last) {
        current[step.index] = value;
        return;
      }
      current.reset(current[step.index]);
    }
  }
}

ConfigError located_in_file(const ConfigError& e, const std::vector<Override>& written, const std::vector<Override>& typed,
                            const std::string& file) {
  const auto label = [](const Override& o) { return "--set " + o.path + "=" + o.value; };
  // Compared as ConfigError stores locations: made printable (a key with invalid UTF-8 bytes).
  const auto at = [&e, &label](const Override& o) { return e.where().file == ConfigError({label(o), 0, 0}, "", "").where().file; };
  if (std::any_of(written.begin(), written.end(), at) && std::none_of(typed.begin(), typed.end(), at)) {
    return ConfigError({file, 0, 0}, e.key_path(), e.message());
  }
  return e;
}

}  // namespace dlsim::experiment
