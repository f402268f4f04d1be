#include "experiment/config_error.hpp"

namespace dlsim::experiment {
namespace {

std::string render(const SourceLocation& w, const std::string& path, const std::string& msg) {
  std::string out;
  out.append(w.file.empty() ? "<scenario>" : w.file);
  if (w.line > 0) {
    out.append(":").append(std::to_string(w.line));
    // Line-oriented inputs (CSV tables) locate a row, not a character.
    if (w.column > 0) out.append(":").append(std::to_string(w.column));
  }
  out.append(": ");
  if (!path.empty()) out.append(path).append(": ");
  out.append(msg);
  return out;
}

}  // namespace

ConfigError::ConfigError(SourceLocation where, std::string key_path, std::string message)
    : std::runtime_error(render(where, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

}  // namespace dlsim::experiment
