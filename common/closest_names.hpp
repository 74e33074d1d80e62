// SPDX-License-Identifier: MIT
#pragma once
// PURE: "did you mean" for a name the user mistyped (a server, a group): the known names
// closest to it by edit distance.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

// The Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
// substitutions, and swaps of two neighbouring characters each count 1), byte by byte.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The names in `known` closest to `name`: those at the smallest distance found, if it is within
// max(1, min(3, size/3)) (size: the longer of the two), in the order of `known`; at most
// `limit`, no duplicates, and never `name` itself.
[[nodiscard]] std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known,
                                                     std::size_t limit = 3);

// "did you mean train1?", "did you mean train1 or train2?" (empty when `names` is): the start
// of a not-found error's hint.
[[nodiscard]] std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace gpurent
