// ConfigError: bad input, reported where it is: file, line and column (1-based), the key path
// ("cluster.nodes"), the offending value and what is allowed. The CLI maps it to exit code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace dlsim::experiment {

struct SourceLocation {
  std::string file;  // a path, or "--set" for command-line overrides
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

class ConfigError : public std::runtime_error {
 public:
  // The text is made printable: invalid UTF-8 bytes shown as \xNN, and an overlong message or key
  // path (a 10 MB value echoed back) shortened in its middle.
  ConfigError(SourceLocation where, std::string key_path, std::string message);
  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  struct Printable {};  // the text is printable already
  ConfigError(Printable, SourceLocation where, std::string key_path, std::string message);
  SourceLocation where_;
  std::string key_path_;
  std::string message_;
};

}  // namespace dlsim::experiment
