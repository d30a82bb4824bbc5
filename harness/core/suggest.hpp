#pragma once
// "Did you mean" for names typed by a person (commands, options, settings): one home for the rule
// of what counts as a near miss.
#include <string>
#include <vector>

namespace accelbench {

// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, when it is a near miss: at most 2 edits, and fewer edits than
// half the word's length (so "ab" never suggests "xy"). Empty when none is.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// "; did you mean 'X'?" for the nearest candidate, else empty.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

} // namespace accelbench
