// Suggestions for misspelt names: the known name nearest to what the user wrote, by
// case-insensitive edit distance, when it is close enough to be a likely typo.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlsim::experiment {

std::size_t edit_distance(std::string_view a, std::string_view b);  // case-insensitive Levenshtein
std::optional<std::string> nearest_name(std::string_view wanted, const std::vector<std::string>& known);
// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& known);

}  // namespace dlsim::experiment
