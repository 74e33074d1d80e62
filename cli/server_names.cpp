// SPDX-License-Identifier: MIT
#include "cli/server_names.hpp"

#include <vector>

#include "common/closest_names.hpp"

namespace gpurent {

std::string unknown_name_hint(StateStore& store, std::string_view name, std::string_view otherwise)
{
  std::vector<std::string> known;
  if (auto servers = store.list_servers(false)) {
    for (const auto& r : *servers) {
      known.push_back(r.name);
    }
    for (const auto& r : *servers) {
      if (!r.group.empty()) {
        known.push_back(r.group);
      }
    }
  }
  const std::string guess = did_you_mean(closest_names(name, known));
  if (guess.empty()) {
    return std::string(otherwise);
  }
  return otherwise.empty() ? guess : guess + " Otherwise " + std::string(otherwise);
}

}  // namespace gpurent
