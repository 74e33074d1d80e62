// SPDX-License-Identifier: MIT
#pragma once
// `gpurent offers --unmapped`: the market catalogue's accelerator names that map to no card
// (data/market/names.json), per cloud: the shipped snapshot's, and a fetched catalogue's when
// given (the catalogue cache passes its files to unmapped_names).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/services.hpp"
#include "providers/market/catalog_csv.hpp"

namespace gpurent {

struct UnmappedListing {
  std::string source;  // "snapshot" or "catalogue"
  std::string date;    // the snapshot's date, or the catalogue's fetch day
  std::vector<market::UnmappedName> names;
};

// The names of these catalogue files that map to no card, in the files' order.
[[nodiscard]] std::vector<market::UnmappedName> unmapped_names(std::span<const market::CatalogFile> files);
// The snapshot's unmapped names (compiled in; nothing is read).
[[nodiscard]] UnmappedListing snapshot_unmapped_listing();
// Whether `cloud` is a cloud key of the shipped snapshot ("nebius", "gcp").
[[nodiscard]] bool is_market_cloud(std::string_view cloud);
// Prints the listings (text, or one JSON document under --json), only `cloud`'s when given.
void print_unmapped(Services& s, std::span<const UnmappedListing> listings, const std::string& cloud);

}  // namespace gpurent
