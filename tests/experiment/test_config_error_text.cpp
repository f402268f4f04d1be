// What a ConfigError echoes of the input (issue 19): invalid UTF-8 shown as \xNN (Python decodes
// messages as UTF-8), a huge value shortened in the middle and never cut inside a character, and
// suggestions for a huge name found without length x length work.
#include <gtest/gtest.h>

#include <string>

#include "experiment/config_error.hpp"
#include "experiment/nearest_name.hpp"

namespace dlsim::experiment {
namespace {

// True when `s` is valid UTF-8 (no truncated or stray sequences).
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

TEST(ConfigErrorText, InvalidBytesAreEscapedAndValidTextKept) {
  const ConfigError e({"f.yaml", 1, 2}, "workload.model", std::string("unknown value 'r\xff\xc3' for caf\xc3\xa9"));
  EXPECT_EQ(e.message(), "unknown value 'r\\xff\\xc3' for caf\xc3\xa9");
  EXPECT_EQ(std::string(e.what()), "f.yaml:1:2: workload.model: " + e.message());
  const ConfigError k({"f.yaml", 1, 2}, std::string("a.\xfe"), "unknown key");
  EXPECT_EQ(k.key_path(), "a.\\xfe");
}

TEST(ConfigErrorText, HugeMessageKeepsStartAndEndWithinCharacters) {
  std::string value;
  for (int i = 0; i < 2'000'000; ++i) value += "\xc3\xa9";  // 4 MB of 'é'
  const ConfigError e({"f.yaml", 3, 4}, "workload.model", "unknown value '" + value + "'; allowed: resnet50, vgg16");
  EXPECT_LT(e.message().size(), 2100u);
  EXPECT_EQ(e.message().rfind("unknown value '\xc3\xa9", 0), 0u) << e.message().substr(0, 40);
  EXPECT_NE(e.message().find("bytes left out"), std::string::npos);
  const std::string end = "'; allowed: resnet50, vgg16";
  EXPECT_EQ(e.message().substr(e.message().size() - end.size()), end);
  EXPECT_TRUE(valid_utf8(e.message()));
  EXPECT_TRUE(valid_utf8(e.what()));
}

TEST(ConfigErrorText, ShortMessagesAreUnchanged) {
  const std::string message(2000, 'x');
  EXPECT_EQ(ConfigError({"f", 0, 0}, "", message).message(), message);
}

TEST(NearestNameBound, HugeInputGetsNoSuggestion) {
  const std::string huge(10'000'000, 'r');  // 45-69 s of edit distances before the bound
  EXPECT_FALSE(nearest_name(huge, {"resnet101", "resnet50", "vgg16"}).has_value());
  EXPECT_EQ(did_you_mean("resnet5", {"resnet101", "resnet50", "vgg16"}), " (did you mean 'resnet50'?)");
}

}  // namespace
}  // namespace dlsim::experiment
