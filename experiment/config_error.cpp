#include "experiment/config_error.hpp"

#include <algorithm>
#include <vector>

namespace dlsim::experiment {
namespace {

constexpr std::size_t kMaxMessageBytes = 2000;  // what a person reads; the start and the end are kept
constexpr std::size_t kMaxKeyPathBytes = 300;

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned min = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  unsigned code = c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// Input echoed in a message may hold any bytes: invalid UTF-8 is shown as \xNN (terminals and
// Python, which decodes messages as UTF-8, get valid text), and a message longer than `limit`
// keeps its start and its end (a 10 MB name is not repeated), cut between characters.
std::string printable(const std::string& text, std::size_t limit) {
  std::string out;
  std::vector<std::size_t> starts;  // where each character starts in `out`
  for (std::size_t i = 0; i < text.size();) {
    starts.push_back(out.size());
    if (const std::size_t n = utf8_length(text, i); n > 0) {
      out.append(text, i, n);
      i += n;
    } else {
      static const char* const kHex = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(text[i++]);
      out.append("\\x").push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (out.size() <= limit) return out;
  // The first character starting after the head's budget, and the first of the tail.
  const std::size_t head = *std::lower_bound(starts.begin(), starts.end(), limit * 2 / 3);
  const std::size_t tail = *std::lower_bound(starts.begin(), starts.end(), out.size() - limit / 3);
  return out.substr(0, head) + " [... " + std::to_string(tail - head) + " bytes left out ...] " + out.substr(tail);
}

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
    : ConfigError(Printable{}, SourceLocation{printable(where.file, kMaxMessageBytes), where.line, where.column},
                  printable(key_path, kMaxKeyPathBytes), printable(message, kMaxMessageBytes)) {}

ConfigError::ConfigError(Printable, SourceLocation where, std::string key_path, std::string message)
    : std::runtime_error(render(where, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

}  // namespace dlsim::experiment
