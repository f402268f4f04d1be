#include "experiment/nearest_name.hpp"

#include <algorithm>
#include <cctype>

namespace dlsim::experiment {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const std::size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view wanted, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& name : known) {  // `known` is sorted by callers, so ties are deterministic
    // The distance is at least the difference in length: a name that far off cannot be a typo,
    // and skipping it keeps a huge input (a 10 MB value) from costing length x length work.
    const std::size_t gap = wanted.size() > name.size() ? wanted.size() - name.size() : name.size() - wanted.size();
    if (gap > std::max<std::size_t>(2, std::max(wanted.size(), name.size()) / 3)) continue;
    const std::size_t d = edit_distance(wanted, name);
    if (!best || d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  // A likely typo: at most a third of the longer name differs (at least 2 edits allowed).
  const std::size_t limit = std::max<std::size_t>(2, std::max(wanted.size(), best ? best->size() : 0) / 3);
  if (best && best_distance <= limit) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& known) {
  const auto best = nearest_name(wanted, known);
  return best ? " (did you mean '" + *best + "'?)" : "";
}

}  // namespace dlsim::experiment
