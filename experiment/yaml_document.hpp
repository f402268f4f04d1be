// A scenario file's one YAML document, read without yaml-cpp's LoadAll.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

namespace dlsim::experiment {

// The first document of `text` (null when there is none). Throws ConfigError (located in
// `name`) for a second document with content (a trailing '---' alone is fine) and for input on
// which the parser makes no progress. Throws YAML::Exception for invalid YAML, as YAML::Load.
// Why not YAML::LoadAll: Debian's yaml-cpp 0.7 loops for ever on some malformed input (a lone
// ',' where a node belongs: jbeder/yaml-cpp issue 1040, fixed upstream by PR 1319), appending
// empty documents until memory runs out; found by the loader's fuzzer (tests/fuzz).
YAML::Node load_one_document(const std::string& text, const std::string& name);

}  // namespace dlsim::experiment
