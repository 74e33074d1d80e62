// SPDX-License-Identifier: MIT
#include "common/closest_names.hpp"

#include <algorithm>
#include <utility>

namespace gpurent {

std::size_t edit_distance(std::string_view a, std::string_view b)
{
  // Three rows of the optimal string alignment table.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    prev[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known, std::size_t limit)
{
  std::vector<std::pair<std::size_t, std::size_t>> near;  // (distance, index in known)
  for (std::size_t k = 0; k < known.size(); ++k) {
    const std::string& other = known[k];
    if (other == name) {
      continue;
    }
    const std::size_t longer = std::max(name.size(), other.size());
    const std::size_t allowed = std::max<std::size_t>(1, std::min<std::size_t>(3, longer / 3));
    // The distance is at least the difference in length: skip what cannot be near.
    const std::size_t gap = name.size() > other.size() ? name.size() - other.size() : other.size() - name.size();
    if (gap > allowed) {
      continue;
    }
    const std::size_t d = edit_distance(name, other);
    if (d <= allowed) {
      near.emplace_back(d, k);
    }
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, k] : near) {
    if (out.size() >= limit || d > near.front().first) {
      break;  // only the closest: "trian1" is train1, not also train2
    }
    if (std::find(out.begin(), out.end(), known[k]) == out.end()) {
      out.push_back(known[k]);
    }
  }
  return out;
}

std::string did_you_mean(const std::vector<std::string>& names)
{
  if (names.empty()) {
    return {};
  }
  std::string s = "did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    s += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s + "?";
}

}  // namespace gpurent
