// --set key.path=value: overrides applied to the scenario's YAML tree before validation, so
// they pass the same checks, and errors in them name the --set they came from.
#pragma once
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {

// Splits "a.b[2].c=value"; throws ConfigError for a malformed argument.
Override parse_set_argument(const std::string& argument);
// Sets the node at `o.path` in `root` to the YAML value of `o.value`, creating missing keys of
// mappings. Throws ConfigError when the path runs through a scalar or past a list's end.
void apply_override(YAML::Node& root, const Override& o);

// Sweep and variants values are applied as overrides, so an error in one is located at
// "--set key=value" (Source::locate). When the user typed no such --set (it is in `written`, the
// file's own overrides, and not in `typed`), the error is relocated to `file`.
ConfigError located_in_file(const ConfigError& e, const std::vector<Override>& written, const std::vector<Override>& typed,
                            const std::string& file);

}  // namespace dlsim::experiment
