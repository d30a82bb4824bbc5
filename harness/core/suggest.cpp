#include "harness/core/suggest.hpp"

#include <algorithm>

namespace accelbench {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  // Names longer than this are not typed by hand; comparing them costs time for nothing.
  constexpr size_t k_longest = 200;
  if (word.empty() || word.size() > k_longest)
    return "";
  std::string best;
  size_t best_d = 3;
  for (const auto& c : candidates) {
    if (c.size() > k_longest || c == word)
      continue;
    const size_t d = edit_distance(word, c);
    if (d < best_d && 2 * d < std::max(word.size(), c.size()))
      best_d = d, best = c;
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best = nearest_name(word, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

} // namespace accelbench
